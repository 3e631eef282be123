//! Typing cues a researcher reads off the wording before meaning: who acts, what the clause
//! opens with, and a few words that mark a level of the ladder or a part of a story.
//!
//! `MiniLM` similarity alone types short phrases poorly (a phrase is nearer to an example that
//! shares its nouns than to one at the same level), so a cue first narrows the types a phrase
//! may take, and similarity decides among them:
//! - means-end chains: "being a …" or "kind of person" is a way of being, "care about", "live
//!   for", self-respect or achievement an end in itself, a feeling or how others see the
//!   respondent a psychosocial consequence; a phrase with no verb a property, any other verb
//!   phrase a practical consequence;
//! - critical incidents: "should", "next time" a lesson; a feeling a reaction; a reason the
//!   respondent gives about others ("because the app hadn't updated") an attribution, about
//!   themselves the context; a loss or "in the end" an outcome; in an answer to "Why do you
//!   think that happened?", anything else an attribution; the respondent's own verb an
//!   action, another actor's an event;
//! - jobs to be done: "has to", "something I could" a criterion; a feeling to reach or avoid
//!   the emotional job, being seen by others the social job; a struggle a pain point; a
//!   solution used, tried or switched to a competing solution; a time, place or "when" the
//!   context; "need to", "trying to" the functional job.
//!
//! # Limits
//!
//! The cue words are English and few; a phrase with none is left to similarity alone. Who acts
//! is read from the last pronoun before the phrase in its clause, so "he gave me a refund"
//! counts as another's event even where the researcher sees an action taken for the
//! respondent, and an unresolved "it" is someone else.

use crate::srl::{self, TaggedWord, Tense, WordClass};

use super::lexicon;

/// Who the clause of a phrase is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Actor {
    /// "I", "we".
    Speaker,
    /// "me", "us": the respondent undergoes what the clause says ("lets me focus").
    Experiencer,
    /// A third person or a named thing ("the van pulled out", "they told us").
    Other,
    /// No subject before the phrase.
    Unknown,
}

/// What typing reads around one phrase.
#[derive(Debug)]
pub(super) struct Cue {
    /// Words of the clause before the phrase, from the connective or break that opens it.
    lead: Vec<String>,
    /// Words of the phrase's quote.
    words: Vec<String>,
    /// What the phrase is made of.
    made_of: Makeup,
    /// The lemma of the phrase's main verb: its first word ("rolled it back" → "roll") or the
    /// first verb after its subject ("helpline reset the charger" → "reset"), past "tried
    /// to" ("colleague tried to fix it" → "fix").
    leading_verb: Option<String>,
    /// The phrase is the subject of "matters (more) to me", "means everything to me": the
    /// respondent says it is what they value.
    valued: bool,
    actor: Actor,
    /// The phrase lies in the answer's last sentence.
    last_sentence: bool,
    /// The phrase lies in the answer's first sentence.
    first_sentence: bool,
    /// The tense of the phrase's clause, when a verb marks one.
    tense: Option<Tense>,
    /// The tense of a verb right after the phrase, of which it is the subject ("my own father
    /// | was there").
    tense_after: Option<Tense>,
    /// How the phrase's sentence opens.
    opening: Opening,
    telling: Telling,
    marks: Marks,
}

/// How the whole answer tells what it tells.
#[derive(Debug, Clone, Copy)]
struct Telling {
    /// Most of the answer's finite verbs are past: a story is being told.
    narrated: bool,
    /// The question asked why something happened ("Why do you think that happened?").
    asked_why: bool,
}

/// How the sentence of a phrase opens.
#[derive(Debug, Clone, Copy)]
struct Opening {
    /// On how things are since ("Now I …", "These days …").
    since: bool,
    /// On naming the worst of it ("The worst bit was …", "The problem is …"): what it goes on
    /// to say is the struggle.
    worst: bool,
    /// On the respondent's guess ("I think nobody checks them, the operator …"): each clause
    /// of it is part of the guess.
    guessed: bool,
}

impl Opening {
    /// How sentence `sentence` of `words` opens, after the words that open a sentence
    /// without saying anything ("And now I …", "Honestly, I think …").
    fn of(words: &[TaggedWord], sentence: usize) -> Self {
        let all = sentence_words(words, sentence);
        let opening = after_openers(&all);
        Self {
            since: opens_on_since(opening),
            worst: opens_on_worst(opening),
            guessed: opens_on_guess(opening),
        }
    }
}

/// What a phrase is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Makeup {
    /// It has a verb; `object` when something comes after it: what was done is done to or
    /// with something ("grabbed a flat white", "listed it in bundles"), not only how ("slept
    /// badly").
    Verbal { object: bool },
    /// Every word is part of a name ("Minor Figures"): a brand, a product or a place.
    Name,
    /// Nouns and their modifiers.
    Nominal,
}

impl Makeup {
    fn of(inside: &[&TaggedWord]) -> Self {
        if let Some(verb) = inside.iter().position(|w| w.class == WordClass::Verb) {
            let object = inside.iter().skip(verb + 1).any(|w| {
                matches!(
                    w.class,
                    WordClass::Noun | WordClass::Number | WordClass::Pronoun
                )
            });
            Self::Verbal { object }
        } else if !inside.is_empty() && inside.iter().all(|w| w.name) {
            Self::Name
        } else {
            Self::Nominal
        }
    }
}

/// How the phrase's own clause reads.
#[derive(Debug)]
struct Marks {
    /// "was/were …-ing": the background of a story, not one of its steps.
    progressive: bool,
    /// The phrase or the words right before it deny something ("no clean scrubs", "can't
    /// hear a thing").
    negated: bool,
    /// The phrase names someone else as its object ("see my girlfriend", "present with her").
    person: bool,
}

impl Marks {
    /// `people_before`: the answer names someone before the phrase, whom a "them" in it may
    /// stand for ("charge them once a week" is about the headphones).
    fn read(lead: &[&TaggedWord], inside: &[&TaggedWord], people_before: bool) -> Self {
        let clause: Vec<&TaggedWord> = lead.iter().chain(inside).copied().collect();
        let progressive = clause.windows(2).any(|pair| match pair {
            [a, b] => {
                matches!(a.norm.as_str(), "was" | "were")
                    && b.class == WordClass::Verb
                    && b.norm.ends_with("ing")
            }
            _ => false,
        });
        // "no" denies only before the phrase: inside, it is often a criterion's quantity ("no
        // offers in the title").
        let denial = |w: &TaggedWord| {
            w.class == WordClass::Negation || matches!(w.norm.as_str(), "nothing" | "nobody")
        };
        let negated = inside.iter().take(2).any(|w| denial(w))
            || lead
                .iter()
                .rev()
                .take(2)
                .any(|w| denial(w) || matches!(w.norm.as_str(), "no" | "without"));
        // After a determiner (a possessive or an article) or a preposition, not a compound
        // ("password manager") or the phrase's subject.
        let person = inside.iter().enumerate().skip(1).any(|(k, w)| {
            let object =
                matches!(w.norm.as_str(), "her" | "him") || (w.norm == "them" && people_before);
            let after = k
                .checked_sub(1)
                .and_then(|b| inside.get(b))
                .is_some_and(|b| matches!(b.class, WordClass::Determiner | WordClass::Preposition));
            let other =
                srl::is_person_word(&w.norm) && !matches!(w.norm.as_str(), "me" | "us" | "you");
            object || (after && other)
        });
        Self {
            progressive,
            negated,
            person,
        }
    }
}

/// A word for a person ("my kids", "colleagues", "she") comes before byte `start`.
fn people_before(words: &[TaggedWord], start: usize) -> bool {
    words.iter().take_while(|w| w.end <= start).any(|w| {
        let other = !matches!(w.norm.as_str(), "me" | "us" | "you" | "them");
        (srl::is_person_word(&w.norm) && other) || matches!(w.norm.as_str(), "he" | "she")
    })
}

/// Questions that ask why something happened: what the respondent answers is their account
/// of the cause ("Why do you think the wrong strength got through?").
const WHY_IT_HAPPENED: [&str; 8] = [
    "why do you think",
    "why did",
    "why was",
    "why were",
    "how come",
    "what caused",
    "what went wrong",
    "whose fault",
];

/// Whether `question` asks why something happened.
pub(super) fn asks_why_it_happened(question: &str) -> bool {
    let q = question.to_lowercase();
    WHY_IT_HAPPENED.iter().any(|cue| q.contains(cue))
}

/// Openings that turn from what was asked to something beside it ("Another thing is the
/// price", "Besides, it keeps for a week").
const TURNS_AWAY: [&[&str]; 7] = [
    &["another", "thing"],
    &["besides"],
    &["apart", "from"],
    &["other", "than", "that"],
    &["on", "top", "of", "that"],
    &["as", "for"],
    &["plus"],
];

/// The answer's first sentence is about something other than what was asked: it opens with a
/// turn away ("Another thing …", "Besides, …"), or it says the product is or has something
/// else as well ("It's also better for the climate", "They have a nice carton too"). Such an
/// answer is no reason for the probed concept, and its rung owes nothing to it.
pub(super) fn changes_subject(words: &[TaggedWord]) -> bool {
    let first = sentence_words(words, 0);
    if TURNS_AWAY.iter().any(|t| first.starts_with(t)) {
        return true;
    }
    let product = first
        .first()
        .is_some_and(|w| matches!(*w, "it" | "they" | "this" | "these"));
    let states = first
        .get(1)
        .is_some_and(|w| matches!(srl::verb_lemma(w).as_str(), "be" | "have"));
    let also = first.get(2) == Some(&"also")
        || first.last() == Some(&"too")
        || first.ends_with(&["as", "well"]);
    product && states && also
}

/// Most of the finite verbs of `words` are past: the respondent is telling what happened.
/// Read once per answer and given to every [`Cue::read`] of it.
pub(super) fn narrated(words: &[TaggedWord]) -> bool {
    let (mut past, mut present) = (0, 0);
    for w in words {
        if matches!(w.class, WordClass::Verb | WordClass::Auxiliary) {
            match srl::tense_of(&w.norm) {
                Some(Tense::Past) => past += 1,
                Some(Tense::Present) => present += 1,
                None => {}
            }
        }
    }
    past >= 2 && past > present
}

/// Most words a clause's opening is read back over.
const LEAD_WORDS: usize = 8;
/// Words after a phrase read for "matters to me".
const VALUED_WORDS: usize = 5;

impl Cue {
    /// The same cue, read as part of an answer to a question that asked why something
    /// happened.
    pub(super) fn answering_why(mut self, asked: bool) -> Self {
        self.telling.asked_why = asked;
        self
    }

    /// The cue of the phrase quoted by bytes `start..end` of the answer `words` were tagged
    /// from; `narrated` is [`narrated`] of the whole answer.
    pub(super) fn read(words: &[TaggedWord], narrated: bool, start: usize, end: usize) -> Self {
        let inside: Vec<&TaggedWord> = words
            .iter()
            .filter(|w| w.start >= start && w.end <= end)
            .collect();
        let first = words.iter().position(|w| w.start >= start);
        let sentence = inside.first().map_or(0, |w| w.sentence);
        // The clause before the phrase, and for who acts, the clause before a coordinating
        // "and" too: "I panicked and | unplugged the cable" shares its subject.
        let mut lead: Vec<&TaggedWord> = Vec::new();
        let mut reach: Vec<&TaggedWord> = Vec::new();
        // Only a phrase that opens on its verb shares the subject before "and".
        let shares_subject = inside.first().is_some_and(|w| w.class == WordClass::Verb);
        let mut closed = false;
        if let Some(first) = first {
            for w in words.get(..first).unwrap_or_default().iter().rev() {
                if w.sentence != sentence || w.clause_break || reach.len() >= LEAD_WORDS {
                    break;
                }
                reach.push(w);
                if !closed {
                    lead.push(w);
                }
                match w.class {
                    WordClass::Subordinator => break,
                    WordClass::Conjunction if !shares_subject => break,
                    WordClass::Conjunction => closed = true,
                    _ => {}
                }
            }
        }
        lead.reverse();
        reach.reverse();
        let own_subject = inside.first().is_some_and(|w| w.class == WordClass::Noun)
            && inside
                .iter()
                .skip(1)
                .any(|w| matches!(w.class, WordClass::Verb | WordClass::Auxiliary));
        let actor = if own_subject {
            Actor::Other
        } else {
            // The nearest pronoun or noun before the phrase is who the clause is about.
            // A noun counts only with a verb after it: one right before the phrase belongs to
            // its noun group ("two | electric heaters").
            let mut verb_seen = false;
            reach
                .iter()
                .rev()
                .find_map(|w| match (w.norm.as_str(), w.class) {
                    ("i" | "we", _) => Some(Actor::Speaker),
                    ("me" | "us" | "myself", _) => Some(Actor::Experiencer),
                    (_, WordClass::Verb | WordClass::Auxiliary) => {
                        verb_seen = true;
                        None
                    }
                    (_, WordClass::Noun) if verb_seen => Some(Actor::Other),
                    (
                        "he" | "she" | "they" | "it" | "nobody" | "someone" | "everyone" | "him"
                        | "her" | "them",
                        _,
                    ) => Some(Actor::Other),
                    _ => None,
                })
                .unwrap_or(Actor::Unknown)
        };
        let after: Vec<&str> = words
            .iter()
            .filter(|w| w.start >= end && w.sentence == sentence)
            .take(VALUED_WORDS)
            .map(|w| w.norm.as_str())
            .collect();
        let valued = after.first().is_some_and(|w| {
            let lemma = srl::verb_lemma(w);
            lexicon::is_value_verb(&lemma) || lemma == "mean"
        }) && after
            .windows(2)
            .any(|p| p == ["to", "me"] || p == ["to", "us"]);
        let last = words.last().map_or(0, |w| w.sentence);
        let clause: Vec<&TaggedWord> = lead.iter().chain(&inside).copied().collect();
        let tense = clause_tense(&clause, lead.len());
        let tense_after = tense_after(words, sentence, end);
        Self {
            lead: lead.iter().map(|w| w.norm.clone()).collect(),
            words: inside.iter().map(|w| w.norm.clone()).collect(),
            made_of: Makeup::of(&inside),
            leading_verb: main_verb(&inside),
            valued,
            actor,
            last_sentence: sentence == last,
            first_sentence: sentence == words.first().map_or(0, |w| w.sentence),
            tense,
            tense_after,
            opening: Opening::of(words, sentence),
            telling: Telling {
                narrated,
                asked_why: false,
            },
            marks: Marks::read(&lead, &inside, people_before(words, start)),
        }
    }

    /// The phrase's clause tells what was, not how things are: its tense is past and its
    /// sentence does not open on how things are since ("My own father was physically there",
    /// not "Now I'm back in my book group").
    pub(super) fn told_in_past(&self) -> bool {
        self.tense.or(self.tense_after) == Some(Tense::Past) && !self.opening.since
    }

    /// The phrase has a verb.
    fn verbal(&self) -> bool {
        matches!(self.made_of, Makeup::Verbal { .. })
    }

    /// The phrase's verb does something to or with something.
    fn has_object(&self) -> bool {
        self.made_of == Makeup::Verbal { object: true }
    }

    /// A word of the phrase, or a part of a hyphenated one ("self-respect"), is in `list`.
    fn says(&self, list: &str) -> bool {
        any_listed(&self.words, list)
    }

    fn opens(&self, list: &str) -> bool {
        self.lead.iter().any(|w| listed(list, w))
    }

    /// The phrase's clause is advice: it opens on a verb in its plain form with no subject
    /// ("Ask for the total price", "don't cancel pet insurance", "so always get it in a
    /// text"), or says what the respondent would do ("I'd ask for the total price", not "I'd
    /// been waiting").
    fn advises(&self) -> bool {
        const BEFORE: &str = "so and but then just always never do don't n't not please";
        // Verbs whose plain form is also their past participle: "I'd put a wash on" is
        // what the respondent had done.
        const SAME_AS_PARTICIPLE: &str = "put set cut hit let shut hurt cost quit read run come";
        let lead: Vec<&str> = self.lead.iter().map(String::as_str).collect();
        let (rest, would) = match lead.as_slice() {
            ["i" | "we", "'d" | "would", rest @ ..] => (rest, true),
            all => (all, false),
        };
        if !rest.iter().all(|w| listed(BEFORE, w)) {
            return false;
        }
        let mut words = self.words.iter().peekable();
        let denied = words.peek().is_some_and(|w| listed("not n't never", w));
        let first = words.find(|w| !listed("not n't never always just do", w));
        first.is_some_and(|w| {
            let lemma = srl::verb_lemma(w);
            let verb = match self.leading_verb.as_deref() {
                Some(v) => v == lemma,
                // "don't cancel pet insurance": the verb after the denial.
                None => denied && srl::is_known_verb(w),
            };
            lemma == *w
                && verb
                && !matches!(lemma.as_str(), "be" | "have" | "do")
                && !(would && listed(SAME_AS_PARTICIPLE, w))
        })
    }

    /// Lead and phrase contain `phrase` as consecutive words.
    fn has(&self, phrase: &str) -> bool {
        let all: Vec<&str> = self
            .lead
            .iter()
            .chain(&self.words)
            .map(String::as_str)
            .collect();
        let parts: Vec<&str> = phrase.split_whitespace().collect();
        !parts.is_empty() && all.windows(parts.len()).any(|w| w == parts.as_slice())
    }

    fn feeling(&self) -> bool {
        self.says(FEELINGS)
            || self
                .words
                .iter()
                .find(|w| !listed("not n't never", w))
                .is_some_and(|w| listed(FEEL_VERBS, w))
            || self.opens(FEEL_VERBS)
    }

    /// The respondent is in the clause ("I", "me", "we", "us"): what it says happens to them.
    fn respondent(&self) -> bool {
        matches!(self.actor, Actor::Speaker | Actor::Experiencer)
    }

    /// A description of the respondent after "I'm", "to be" ("I'm much more patient").
    fn state_of_respondent(&self) -> bool {
        let copula = self
            .lead
            .iter()
            .rev()
            .take(3)
            .any(|w| matches!(w.as_str(), "am" | "'m" | "be" | "was" | "were" | "are"));
        copula && self.actor == Actor::Speaker
    }

    /// The phrase says the respondent got somewhere: "arrived", "landed", "got to the port",
    /// "pulled into the services", "got home".
    fn arrives(&self) -> bool {
        let Some(verb) = self.leading_verb.as_deref() else {
            return false;
        };
        let onward = |w: &String| listed("to into there home in back", w);
        match verb {
            "arrive" | "land" | "reach" => true,
            "get" | "pull" => self
                .words
                .iter()
                .skip_while(|w| srl::verb_lemma(w) != verb)
                .nth(1)
                .is_some_and(onward),
            _ => false,
        }
    }

    /// "kept timing out", "keeps asking": something that goes on happening. What is kept
    /// somewhere ("kept everything in a notes file") is not.
    fn keeps_on(&self) -> bool {
        self.words.windows(2).any(|w| match w {
            [keep, next] => {
                listed("keep keeps kept keeping", keep)
                    && next.ends_with("ing")
                    && !lexicon::is_empty_word(next)
            }
            _ => false,
        })
    }

    /// "I'd gone back full-time", "my youngest went back to uni": a return to work or study
    /// changes the circumstances a job arises in. A return to something used before ("went
    /// back to the old bank") is not one.
    fn returns_to_a_life_domain(&self) -> bool {
        let returns = self.words.windows(2).any(|w| match w {
            [verb, back] => {
                back == "back" && listed("go goes went gone going come came coming", verb)
            }
            _ => false,
        });
        returns && self.says(LIFE_DOMAINS)
    }

    fn negative(&self) -> bool {
        self.words.iter().any(|w| lexicon::is_negative(w))
            || (self.opening.worst && !self.says(SETTINGS))
            || self.says(STRUGGLES)
            || self.keeps_on()
            || self.has("run out")
            || self.has("ran out")
            || lexicon::eats_time(&self.words)
    }
}

/// The words of sentence `sentence` of the answer, punctuation left out.
fn sentence_words(words: &[TaggedWord], sentence: usize) -> Vec<&str> {
    words
        .iter()
        .filter(|w| w.sentence == sentence && w.norm.chars().any(char::is_alphanumeric))
        .map(|w| w.norm.as_str())
        .collect()
}

/// A sentence opening on how things are since: "Now I …", "Nowadays …", "These days …",
/// "Since then …".
fn opens_on_since(opening: &[&str]) -> bool {
    matches!(
        opening,
        ["now" | "nowadays", ..] | ["these", "days", ..] | ["since", "then", ..]
    )
}

/// A sentence opening on a guess: one of [`CONJECTURES`].
fn opens_on_guess(opening: &[&str]) -> bool {
    CONJECTURES.iter().any(|c| {
        let parts: Vec<&str> = c.split_whitespace().collect();
        opening.starts_with(&parts)
    })
}

/// `words` after the words that open a sentence without saying anything ("and", "but",
/// "honestly", "so").
fn after_openers<'a, 'w>(words: &'a [&'w str]) -> &'a [&'w str] {
    let mut rest = words;
    while let [first, tail @ ..] = rest
        && listed("and but honestly so", first)
    {
        rest = tail;
    }
    rest
}

/// A sentence opening on naming the worst of something: "The worst bit was …", "The hardest
/// part is …", "The problem was …", "Trouble is …".
fn opens_on_worst(opening: &[&str]) -> bool {
    let rest = match opening {
        ["the", tail @ ..] => tail,
        _ => opening,
    };
    match rest {
        ["worst" | "hardest", ..] => true,
        [head, ..] => listed("problem trouble", head),
        [] => false,
    }
}

/// The tense of a verb within [`SUBJECT_VERB_REACH`] words after byte `end` in sentence
/// `sentence`, in the phrase's clause: the verb the phrase is the subject of.
fn tense_after(words: &[TaggedWord], sentence: usize, end: usize) -> Option<Tense> {
    words
        .iter()
        .filter(|w| w.start >= end && w.sentence == sentence)
        .take(SUBJECT_VERB_REACH)
        .take_while(|w| !w.clause_break)
        .find(|w| matches!(w.class, WordClass::Verb | WordClass::Auxiliary))
        .and_then(|w| srl::tense_of(&w.norm))
}

/// Most words after a phrase to its verb, when the phrase is the verb's subject ("my own father
/// | was", "the kids | had").
const SUBJECT_VERB_REACH: usize = 2;

/// The tense of a clause (`clause[..phrase_at]` is the lead before the phrase): the phrase's
/// first verb that marks one, else the lead's nearest. A past form after "have" is a perfect
/// (present); a base form right after its subject is present ("people leave their bottles").
fn clause_tense(clause: &[&TaggedWord], phrase_at: usize) -> Option<Tense> {
    let at = |k: usize| -> Option<Tense> {
        let w = clause.get(k)?;
        if !matches!(w.class, WordClass::Verb | WordClass::Auxiliary) {
            return None;
        }
        let before = (0..k)
            .rev()
            .filter_map(|b| clause.get(b))
            .find(|b| b.class != WordClass::Adverb);
        let perfect = before.is_some_and(|b| matches!(b.norm.as_str(), "have" | "has" | "'ve"));
        match srl::tense_of(&w.norm) {
            Some(Tense::Past) if perfect => Some(Tense::Present),
            Some(t) => Some(t),
            None => {
                let after_subject = before.is_some_and(|b| match b.class {
                    WordClass::Noun => true,
                    WordClass::Pronoun => matches!(
                        b.norm.as_str(),
                        "i" | "we" | "you" | "they" | "people" | "everyone" | "nobody"
                    ),
                    _ => false,
                });
                (w.class == WordClass::Verb
                    && srl::is_known_verb(&w.norm)
                    && srl::verb_lemma(&w.norm) == w.norm
                    && !srl::base_is_past(&w.norm)
                    && after_subject)
                    .then_some(Tense::Present)
            }
        }
    };
    // With no verb the lexicon knows, a habit or "now" places the clause in the present ("I
    // always climb down now").
    let habitual = || {
        clause
            .iter()
            .any(|w| matches!(w.norm.as_str(), "now" | "always" | "nowadays" | "anymore"))
            .then_some(Tense::Present)
    };
    (phrase_at..clause.len())
        .find_map(at)
        .or_else(|| (0..phrase_at).rev().find_map(at))
        .or_else(habitual)
}

const FEELINGS: &str = "proud guilty confident anxious stressed relaxed calm calmer mood \
    embarrassed happy happier sad lonely invisible panicked panic furious angry livid shocked \
    stunned relieved scared terrified confused frustrated gutted sank blank maddening \
    nervous worried worry worrying jittery ashamed awkward presentable difficult sane insane \
    connected isolated annoyed irritated panicking upset patience guilt stress anxiety shame \
    fear dread overwhelmed relax awake resentful exhausted knackered shattered drained miserable \
    bored";
/// Verbs that open a feeling ("feel proud", "felt invisible").
const FEEL_VERBS: &str = "feel feels felt feeling";
/// Words of a struggle in getting something done.
const STRUGGLES: &str = "took nobody stranger broke broken fees charging hassle forgot forgotten \
    guilty judge waste wasted slow expensive nightmare pointless never late queue queuing \
    queueing stuck";
/// Words with which a respondent offers their reading of why something happened.
const CONJECTURES: [&str; 8] = [
    "i think",
    "i reckon",
    "i suppose",
    "i guess",
    "probably",
    "clearly",
    "must have",
    "obviously",
];

/// Verbs that hand over to the verb after "to": "tried to fix it" is a fixing.
const ATTEMPTS: &str = "try manage attempt";

/// See [`Cue::leading_verb`]. A word of any class other than a noun group's before the first
/// verb means the phrase does not open on its subject or its verb.
fn main_verb(inside: &[&TaggedWord]) -> Option<String> {
    let first = inside.iter().position(|w| w.class == WordClass::Verb)?;
    let subject = inside.iter().take(first).all(|w| {
        matches!(
            w.class,
            WordClass::Noun | WordClass::Determiner | WordClass::Adjective | WordClass::Number
        ) || w.norm == "away"
    });
    if !subject {
        return None;
    }
    let lemma = srl::verb_lemma(&inside.get(first)?.norm);
    if listed(ATTEMPTS, &lemma)
        && let [to, next, ..] = inside.get(first + 1..).unwrap_or_default()
        && to.norm == "to"
    {
        return Some(srl::verb_lemma(&next.norm));
    }
    Some(lemma)
}

/// Words of what a story came to.
/// Verbs of dealing with a situation: calling for help, putting things right, finding
/// another way.
const RESPONSES: &str = "cancel refund rebook fix sort replace reset restart roll ring call \
    phone email text contact bring drive find book arrange swap switch clear refresh \
    reinstall complain escalate rebook queue pull";

const LOSSES: &str = "missed lost cost failed resit contract fined never bill charged quid pounds";
/// Words of an end in itself.
const ENDS: &str = "respect respecting achieved achievement accomplishment planet freedom \
    security happiness community family dignity integrity fulfilment fulfillment legacy peace \
    harmony contentment";
/// Verbs of using, trying or switching to a solution.
const HIRING: &str = "use used using tried try switched moved ordered ordering bought went \
    hired grab grabbed instead rather";
/// Words of a time, place or occasion.
const SETTINGS: &str = "monday tuesday wednesday thursday friday saturday sunday weekend \
    morning evening night commute train bus shifts minute office o'clock";
/// Words of the parts of life a respondent returns to or leaves: work and study.
const LIFE_DOMAINS: &str = "work full-time part-time office job uni university school college \
    nursery";
/// Words of being seen by others.
const SEEN: &str = "look seen impress thought";

fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// The words name an end in itself ("freedom", "self-respect"): "It's freedom, really" says
/// what the respondent's life comes to, not what the product is.
pub(super) fn names_an_end(words: &[String]) -> bool {
    any_listed(words, ENDS)
}

/// One of `words`, or a part of a hyphenated one ("self-respect"), is in `list`.
fn any_listed(words: &[String], list: &str) -> bool {
    words
        .iter()
        .any(|w| listed(list, w) || (w.contains('-') && w.split('-').any(|p| listed(list, p))))
}

/// The node types a cue allows, most likely first; empty when no cue applies. Only types of
/// the shipped ontologies are named: a methodology without them gets no cue.
pub(super) fn candidates(cue: &Cue, has: impl Fn(&str) -> bool) -> Vec<&'static str> {
    if has("terminal_value") {
        ladder(cue)
    } else if has("incident_event") {
        incident(cue)
    } else if has("functional_job") {
        job(cue)
    } else {
        Vec::new()
    }
}

/// Verbs whose object is a product the respondent uses, owns or chose.
const PRODUCT_VERBS: &str = "use uses used using buy buys bought own owns owned pick picks \
    picked choose chose chosen wear wears wore prefer prefers preferred had take takes took";

/// Whether the ontology has a type for the scene a story or a job happens in ("on the 6:50
/// bus", "at the services"). A means-end chain has none: where the respondent uses the product
/// is an occasion, not a rung, so a scene phrase there is no concept.
pub(super) fn has_scene_type(has: impl Fn(&str) -> bool) -> bool {
    !has("terminal_value")
}

/// Whether the ontology has a type for what the respondent sets aside ("rather than the
/// supermarket one", "instead of doom-scrolling"): the competing solution of a job, the
/// contrast pole of a construct. A ladder has none (researchers code "a calm mum instead of a
/// shouty one" as the calm mum only, and a probe about "shouty" asks the respondent to climb
/// from what they rejected), nor does an incident, where the path not taken belongs to the
/// action's own label ("owning it instead of bluffing").
pub(super) fn has_foil_type(has: impl Fn(&str) -> bool) -> bool {
    has("competing_solution") || has("construct_pole")
}

/// The phrase starting at byte `start` is what the respondent sets aside: it follows "instead
/// of", "rather than" or "as opposed to", with at most an article, possessive or "being"
/// between ("instead of a shouty one", "rather than being polite").
pub(super) fn is_foil(words: &[TaggedWord], start: usize) -> bool {
    let before: Vec<&str> = sentence_before(words, start)
        .iter()
        .map(|w| w.norm.as_str())
        .collect();
    let mut rest = before.as_slice();
    while let [head @ .., last] = rest
        && FOIL_OPENERS.contains(last)
    {
        rest = head;
    }
    FOIL_MARKERS.iter().any(|m| rest.ends_with(m))
}

/// The words of the sentence before byte `start`.
fn sentence_before(words: &[TaggedWord], start: usize) -> Vec<&TaggedWord> {
    let before = words.iter().take_while(|w| w.end <= start);
    let sentence = before.clone().last().map(|w| w.sentence);
    before.filter(|w| Some(w.sentence) == sentence).collect()
}

/// The phrase starting at byte `start` says what the respondent would be or do without it:
/// "otherwise" and a subject come before it ("otherwise I'm checking my phone every five
/// minutes", "otherwise I'd just be scrolling"), or it is the second of two such things
/// ("otherwise I'm shouty and rushing everyone out the door"). Researchers code it denied.
pub(super) fn is_counterfactual(words: &[TaggedWord], start: usize) -> bool {
    let before = sentence_before(words, start);
    let norms: Vec<&str> = before.iter().map(|w| w.norm.as_str()).collect();
    let mut clause = norms.as_slice();
    for _ in 0..5 {
        match clause {
            [.., "otherwise"] => return true,
            [head @ .., last] if COUNTERFACTUAL_SUBJECT.contains(last) => clause = head,
            _ => break,
        }
    }
    matches!(norms.as_slice(), ["otherwise", .., "and"])
        && !norms.iter().any(|w| matches!(*w, "," | "but"))
}

/// The phrase starting at byte `start` is said in a sentence whose clause so far puts it in
/// the conditional ("I'd be the shouty mum again, rushing everyone out the door", "we would
/// just order pizza"), with no "but" or "now" turning back to how things are.
pub(super) fn is_conditional(words: &[TaggedWord], start: usize) -> bool {
    let before = sentence_before(words, start);
    let Some(at) = before
        .iter()
        .rposition(|w| matches!(w.norm.as_str(), "'d" | "would"))
    else {
        return false;
    };
    // "I'd like to be that kind of person": a wish, not what would happen.
    let wish = before
        .get(at + 1)
        .is_some_and(|w| matches!(w.norm.as_str(), "like" | "love" | "prefer" | "rather"));
    !wish
        && !before
            .iter()
            .skip(at)
            .any(|w| matches!(w.norm.as_str(), "but" | "now" | "because" | "since"))
}

/// Words between "otherwise" and what the respondent would be or do.
const COUNTERFACTUAL_SUBJECT: [&str; 12] = [
    "i", "we", "am", "are", "'d", "would", "be", "was", "were", "end", "up", "just",
];

/// Words that set aside what follows.
const FOIL_MARKERS: [&[&str]; 3] = [
    &["instead", "of"],
    &["rather", "than"],
    &["as", "opposed", "to"],
];
/// Words that may stand between a foil marker and the foil.
const FOIL_OPENERS: [&str; 9] = [
    "a", "an", "the", "my", "our", "their", "just", "being", "some",
];

fn ladder(cue: &Cue) -> Vec<&'static str> {
    // "I usually get the Minor Figures one": the product by its name.
    if cue.made_of == Makeup::Name {
        return vec!["attribute"];
    }
    // "the kind of person others can count on", "be the kind of teacher they can rely on".
    // "that's the kind of parent I want to be".
    let kind_of_someone = cue.has("kind of")
        && (cue.opens("be being")
            || cue.says("be being")
            || cue.says("parent mum dad mother father"));
    if cue.has("kind of person") || kind_of_someone || cue.says("person professional model") {
        return vec!["instrumental_value"];
    }
    if cue.says(ENDS) || cue.has("live for") || cue.has("care about") {
        return vec!["terminal_value"];
    }
    // "Looking after them matters more to me than any promotion".
    if cue.valued {
        return vec!["instrumental_value", "terminal_value"];
    }
    if cue.feeling() || cue.has("in front of") || cue.says("sleep") {
        return vec!["psychosocial_consequence"];
    }
    if cue.words.first().is_some_and(|w| w == "being") {
        return vec!["instrumental_value", "terminal_value"];
    }
    // "staying active", "keeping her safe": a way of living or of caring for others.
    let first = cue.words.first().map(String::as_str);
    if first == Some("staying") || (first == Some("keeping") && cue.marks.person) {
        return vec!["instrumental_value"];
    }
    // "not snapping at them", "hand it down to my kids": how the respondent stands with others
    // (a past event, "we lost our mum last year", is something that happened, not an outcome).
    if cue.marks.person && cue.verbal() && cue.respondent() && cue.tense != Some(Tense::Past) {
        return vec!["psychosocial_consequence"];
    }
    // "I'd be snappier with the kids": a worse state is what the respondent avoids, not a
    // way of being they hold to.
    if cue.state_of_respondent() && !cue.verbal() && cue.negative() && !cue.marks.negated {
        return vec!["psychosocial_consequence"];
    }
    if cue.state_of_respondent() && !cue.verbal() {
        return vec!["instrumental_value", "psychosocial_consequence"];
    }
    if cue.respondent() && cue.verbal() {
        return vec!["functional_consequence"];
    }
    // "I use my over-ear ones", "I had a cheap pair before": what the respondent uses, owns
    // or chose is a product, whose words are its properties.
    // "I don't need the noise cancelling": a wanted thing named with "the" is a feature.
    let wanted_feature = matches!(
        cue.lead.as_slice(),
        [.., verb, the] if the == "the" && listed("need needs want wants like likes love loves", verb)
    );
    // "I usually get the barista oat milk": what the respondent habitually gets is bought.
    let habitual_get = cue.lead.windows(2).any(|pair| match pair {
        [how, get] => {
            listed("usually always normally generally mostly", how) && listed("get gets got", get)
        }
        _ => false,
    });
    if cue.actor == Actor::Speaker
        && !cue.verbal()
        && (cue.opens(PRODUCT_VERBS) || wanted_feature || habitual_get)
    {
        return vec!["attribute"];
    }
    // "I've got more patience", "less stress": a change in what the respondent has is a
    // consequence; a value is not counted out in more or less.
    let more_or_less = cue
        .words
        .first()
        .is_some_and(|w| matches!(w.as_str(), "more" | "less" | "fewer"));
    if cue.respondent() && more_or_less && !cue.verbal() {
        return vec!["psychosocial_consequence", "functional_consequence"];
    }
    if cue.respondent() {
        // What the respondent gets is no property of the product.
        return vec![
            "functional_consequence",
            "psychosocial_consequence",
            "instrumental_value",
            "terminal_value",
        ];
    }
    if !cue.verbal() {
        return vec!["attribute"];
    }
    vec!["functional_consequence", "attribute"]
}

fn incident(cue: &Cue) -> Vec<&'static str> {
    if cue.has("next time")
        || cue.has("should")
        || cue.opens("lesson learned advice")
        || cue.advises()
    {
        return vec!["lesson"];
    }
    if cue.feeling() || cue.has("know what to say") {
        return vec!["reaction"];
    }
    if cue.opens("because since problem fault reason blame") {
        return if cue.actor == Actor::Speaker {
            vec!["incident_context"]
        } else {
            vec!["attribution"]
        };
    }
    let ending = cue.opens("so end since now") || cue.has("had to");
    // "We got home a day late": getting somewhere, told last, is how it ended; told first
    // ("pulled into the services at 9pm", "got to the port at six"), it sets the scene.
    let arrives = cue.arrives() && cue.respondent() && !cue.marks.negated;
    if cue.says(LOSSES) || (cue.last_sentence && (ending || arrives)) {
        return vec!["outcome"];
    }
    if arrives && cue.first_sentence {
        return vec!["incident_context"];
    }
    // "I was putting them in her pill organiser": the scene the story happens in.
    if cue.marks.progressive {
        return vec!["incident_context"];
    }
    // "My manager was on holiday", "the company was mostly in Singapore": where someone was,
    // with no event in it, is the situation.
    let be_at = |k: usize| {
        cue.words
            .get(k)
            .is_some_and(|w| listed("was were is are", w))
    };
    let whereabouts = !cue.verbal()
        && (0..cue.words.len()).any(|k| {
            let after = |n: usize| cue.words.get(k + n).map_or("", String::as_str);
            be_at(k)
                && (srl::is_preposition(after(1))
                    || (listed("mostly still already all", after(1))
                        && srl::is_preposition(after(2))))
        });
    if whereabouts && !cue.opening.since {
        return vec!["incident_context"];
    }
    // In a story told in the past, the present speaks of how things are since ("I check every
    // box now") or of how things are in general, which explains what happened ("the app
    // doesn't print them", "people leave their bottles on the mats").
    // "Now I check two sites before I leave": a sentence opening on how things are since
    // speaks of that too, whatever the rest of the answer tells.
    let since = cue.opening.since && cue.tense != Some(Tense::Past);
    if (cue.telling.narrated && cue.tense == Some(Tense::Present)) || since {
        return if cue.actor == Actor::Speaker {
            vec!["outcome"]
        } else {
            vec!["attribution"]
        };
    }
    // "Why do you think …?": what the respondent then tells, of anyone, is why it happened.
    // So is what they guess of someone else's part ("I think the driver was just rushing",
    // "the app clearly wasn't built for …").
    let guessed = (cue.opening.guessed || CONJECTURES.iter().any(|c| cue.has(c)))
        && cue.actor != Actor::Speaker;
    if cue.telling.asked_why || guessed {
        return vec!["attribution"];
    }
    // "They cancelled the card", "he rolled it back", "a woman found us seats": what anyone
    // did to deal with the situation is an action taken in response to it.
    let responds = cue
        .leading_verb
        .as_ref()
        .is_some_and(|v| listed(RESPONSES, v));
    if responds && !cue.negative() {
        return vec!["action_taken"];
    }
    match cue.actor {
        Actor::Speaker => vec!["action_taken"],
        Actor::Other | Actor::Experiencer => vec!["incident_event"],
        Actor::Unknown if cue.verbal() => vec!["incident_event", "action_taken"],
        Actor::Unknown => vec!["incident_event", "incident_context"],
    }
}

fn job(cue: &Cue) -> Vec<&'static str> {
    // "I don't care about fancy milk": what does not count in choosing is a criterion too.
    let indifferent = cue.marks.negated && (cue.has("care about") || cue.has("bothered about"));
    // "instant is grim but it does the job": what a solution is judged on.
    let judged = [
        "does the job",
        "did the job",
        "does the trick",
        "did the trick",
    ]
    .iter()
    .any(|p| cue.has(p));
    if cue.has("has to")
        || cue.has("have to fit")
        || cue.has("something i could")
        || indifferent
        || judged
    {
        return vec!["hiring_criterion"];
    }
    // "I'm a better partner and a better dad": who the respondent is to others.
    let role = |w: &String| srl::is_person_word(w) && !srl::is_object_pronoun(w) && w != "you";
    // The role itself, not someone the respondent is with ("the only one with kids").
    let is_a_role = cue.words.windows(2).any(|pair| match pair {
        [before, who] => role(who) && !srl::is_preposition(before),
        _ => false,
    });
    if cue.state_of_respondent() && is_a_role {
        return vec!["social_job"];
    }
    // "paying three fifty every day": what it costs the respondent is a struggle.
    let paying = cue
        .leading_verb
        .as_deref()
        .is_some_and(|v| matches!(v, "pay" | "spend" | "fork"))
        && cue
            .words
            .iter()
            .any(|w| w.chars().any(|c| c.is_ascii_digit()) || srl::is_number_word(w));
    // What they would rather pay, or are happy to, is the solution chosen.
    if paying && !cue.opens("rather happy willing glad") {
        return vec!["pain_point"];
    }
    if cue.has("look like") || cue.has("the one") || cue.says(SEEN) && !cue.negative() {
        return vec!["social_job"];
    }
    let scene = cue
        .lead
        .first()
        .is_some_and(|w| listed("when whenever while during", w));
    // "I'd just come off four nights in a row": what had just happened sets the scene.
    let just_before = cue.lead.ends_with(&["'d".to_owned(), "just".to_owned()])
        || cue.lead.ends_with(&["had".to_owned(), "just".to_owned()]);
    // "when I was in Japan I couldn't even order food": what the respondent could not do, told
    // as the scene, is still the struggle ("when I'm late for work" stays the scene).
    if (scene || just_before || cue.returns_to_a_life_domain()) && !cue.marks.negated {
        return vec!["job_context"];
    }
    // "Otherwise I go stir crazy": what happens without the solution. "I had to ring them
    // and apologise": what the respondent was made to do.
    if cue.opens("otherwise") || cue.lead.ends_with(&["had".to_owned(), "to".to_owned()]) {
        return vec!["pain_point"];
    }
    // "no clean scrubs", "can't hear a thing": a lack stated as fact is a struggle; one the
    // respondent wants ("don't want to feel that panic") is a job.
    let wished = cue.opens("want wanted avoid stop without")
        || cue.lead.last().is_some_and(|w| w == "to")
        || cue.has("not having to")
        || cue.has("not have to");
    // "I want them to remember family dinners": what the respondent wants for someone else is
    // how they want to relate to them.
    let for_others = cue.lead.windows(3).any(|w| match w {
        [want, who, to] => {
            listed("want wanted need", want) && listed("him her them", who) && to == "to"
        }
        _ => false,
    });
    if for_others && cue.verbal() {
        return vec!["social_job"];
    }
    // A feeling the respondent wants, or wants to be rid of, is the emotional job ("not feel
    // guilty at my desk").
    if (cue.marks.negated || wished) && cue.feeling() {
        return vec!["emotional_job"];
    }
    if (cue.negative() || (cue.marks.negated && !wished)) && !cue.has("have to feel") {
        return vec!["pain_point"];
    }
    if cue.feeling() || cue.says("relax peace") {
        return vec!["emotional_job"];
    }
    if cue.says(HIRING) || cue.opens(HIRING) {
        return vec!["competing_solution"];
    }
    // "properly see my girlfriend", "be present with her": how the respondent relates to
    // someone else.
    if cue.marks.person && cue.verbal() && cue.actor != Actor::Other {
        return vec!["social_job"];
    }
    if cue.says("never back target") {
        return vec!["desired_outcome"];
    }
    let setting = cue.words.first().is_some_and(|w| listed("on at during", w));
    if cue.says(SETTINGS) || setting {
        return vec!["job_context"];
    }
    if cue.opens("need needed trying want") || cue.has("to get") {
        return vec!["functional_job"];
    }
    // What the respondent did ("booked the pickup on the app", "listed it in bundles") is how
    // they got the job done; what they need doing is the job.
    // "So I set up the board": in a story told in the past, a verb that marks no tense is past.
    // What the respondent did to nothing ("slept badly") used no solution.
    if cue.verbal() && cue.actor == Actor::Speaker {
        let past = cue.tense == Some(Tense::Past) || (cue.tense.is_none() && cue.telling.narrated);
        return if !(past || cue.marks.progressive) {
            vec!["functional_job"]
        } else if cue.has_object() {
            vec!["competing_solution"]
        } else {
            Vec::new()
        };
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srl;

    /// The cue types of the phrase quoted by `phrase` in `answer`, for an ontology holding
    /// the types of `methodology`.
    fn types_of(answer: &str, phrase: &str, methodology: &str) -> Vec<&'static str> {
        let words = srl::tag_words(answer);
        let start = answer.find(phrase).unwrap();
        let cue = Cue::read(&words, narrated(&words), start, start + phrase.len());
        let m = crate::config::shipped_methodology(methodology);
        candidates(&cue, |t| m.node_type(t).is_some())
    }

    /// What the cue of one phrase must give.
    enum Want {
        /// Exactly this type.
        Is(&'static str),
        /// Anything but this type alone.
        Not(&'static str),
        /// No type is cued.
        Nothing,
    }
    use Want::{Is, Not, Nothing};

    /// Every `(answer, phrase, want)` of `cases` read for `methodology`; the failures are
    /// reported together.
    fn check(methodology: &str, cases: &[(&str, &str, Want)]) {
        let failures: Vec<String> = cases
            .iter()
            .filter_map(|(answer, phrase, want)| {
                let got = types_of(answer, phrase, methodology);
                let ok = match want {
                    Is(t) => got == [*t],
                    Not(t) => got != [*t],
                    Nothing => got.is_empty(),
                };
                (!ok).then(|| format!("{phrase:?} in {answer:?}: got {got:?}"))
            })
            .collect();
        assert!(failures.is_empty(), "{methodology}: {failures:#?}");
    }

    #[test]
    fn what_matters_to_the_respondent_is_a_value() {
        // Seen in a tmux run: this was a practical consequence.
        assert_eq!(
            types_of(
                "Looking after them matters more to me than any promotion.",
                "Looking after them",
                "means_end_chain"
            ),
            ["instrumental_value", "terminal_value"]
        );
        // What matters to someone else is not the respondent's value.
        assert!(
            !types_of(
                "Looking after them matters more to him.",
                "Looking after them",
                "means_end_chain"
            )
            .contains(&"terminal_value")
        );
    }

    #[test]
    fn what_keeps_the_respondent_awake_or_weighs_on_them_is_felt() {
        for (answer, phrase) in [
            (
                "It means I'm not lying awake at night.",
                "not lying awake at night",
            ),
            (
                "I'm not carrying the guilt home with me.",
                "not carrying the guilt home",
            ),
            ("I can finally relax at dinner.", "relax at dinner"),
        ] {
            assert_eq!(
                types_of(answer, phrase, "means_end_chain"),
                ["psychosocial_consequence"],
                "{answer}"
            );
        }
    }

    #[test]
    fn more_or_less_of_something_is_a_consequence() {
        // Seen in a headless run: "more patience" typed a value lifted the answer to "why does
        // that matter" above the consequences it named.
        assert_eq!(
            types_of(
                "If I start the day in a good mood I've got more patience.",
                "more patience",
                "means_end_chain"
            ),
            ["psychosocial_consequence"]
        );
        assert_eq!(
            types_of(
                "Since the move I've got more time in the evenings.",
                "more time in the evenings",
                "means_end_chain"
            ),
            ["psychosocial_consequence", "functional_consequence"]
        );
    }

    #[test]
    fn ladder_levels_follow_what_the_phrase_is_about() {
        check(
            "means_end_chain",
            &[
                (
                    "It makes me feel proud of myself.",
                    "feel proud of myself",
                    Is("psychosocial_consequence"),
                ),
                (
                    "It's about respecting myself.",
                    "respecting myself",
                    Is("terminal_value"),
                ),
                (
                    "I don't want to be that kind of person.",
                    "kind of person",
                    Is("instrumental_value"),
                ),
                // Seen in a tmux run: typed an attribute.
                (
                    "I want to be the kind of teacher they can rely on.",
                    "kind of teacher they can rely on",
                    Is("instrumental_value"),
                ),
                (
                    "Honestly it's about self-respect.",
                    "self-respect",
                    Is("terminal_value"),
                ),
                (
                    "It lets me focus on my code.",
                    "focus on my code",
                    Not("attribute"),
                ),
                (
                    "The noise cancelling is good.",
                    "noise cancelling",
                    Is("attribute"),
                ),
                // Seen in a tmux run: a brand was typed a psychosocial consequence.
                (
                    "I usually get the Minor Figures one.",
                    "Minor Figures",
                    Is("attribute"),
                ),
            ],
        );
    }

    #[test]
    fn tense_sets_the_scene_and_explains_a_story() {
        let story = "I got home and I was putting them in her pill organiser when I noticed \
            the boxes were different. I jumped down and landed on a bottle. People leave their \
            bottles on the mats. I always climb down now.";
        check(
            "critical_incident",
            &[
                (
                    story,
                    "putting them in her pill organiser",
                    Is("incident_context"),
                ),
                (story, "leave their bottles on the mats", Is("attribution")),
                (story, "climb down", Is("outcome")),
                // Told in the present throughout, the present is the story itself.
                (
                    "So I go to the desk and the man says no. He shrugs.",
                    "shrugs",
                    Not("attribution"),
                ),
            ],
        );
    }

    #[test]
    fn a_lack_is_a_struggle_and_others_make_a_job_social() {
        check(
            "jobs_to_be_done",
            &[
                (
                    "By Thursday I had no clean scrubs.",
                    "clean scrubs",
                    Is("pain_point"),
                ),
                (
                    "I can't hear a thing from her room.",
                    "hear a thing",
                    Is("pain_point"),
                ),
                (
                    "On Saturdays I want to properly see my girlfriend.",
                    "see my girlfriend",
                    Is("social_job"),
                ),
                (
                    "I don't want to feel guilty at my desk.",
                    "feel guilty at my desk",
                    Is("emotional_job"),
                ),
                // A compound is not a person: "password manager".
                (
                    "I set up the password manager.",
                    "set up the password manager",
                    Not("social_job"),
                ),
            ],
        );
    }

    #[test]
    fn what_the_respondent_habitually_gets_or_takes_is_a_product() {
        // A live oat milk interview: "barista oat milk" was typed a practical consequence and
        // "cafe" became the next question's focus.
        check(
            "means_end_chain",
            &[
                (
                    "I usually get the barista oat milk from the corner shop.",
                    "barista oat milk",
                    Is("attribute"),
                ),
                (
                    "Out I just take whatever the cafe has.",
                    "cafe",
                    Is("attribute"),
                ),
                (
                    "Then I get a proper night's sleep.",
                    "proper night's sleep",
                    Not("attribute"),
                ),
            ],
        );
    }

    #[test]
    fn caring_for_others_is_a_value_and_how_we_treat_them_a_consequence() {
        check(
            "means_end_chain",
            &[
                (
                    "It's all about keeping her safe.",
                    "keeping her safe",
                    Is("instrumental_value"),
                ),
                // Seen in a tmux run: typed an attribute.
                (
                    "Seeing my mates regularly keeps me sane.",
                    "keeps me sane",
                    Is("psychosocial_consequence"),
                ),
                (
                    "It keeps me staying active.",
                    "staying active",
                    Is("instrumental_value"),
                ),
                (
                    "So I'm not snapping at them when I get in.",
                    "snapping at them",
                    Is("psychosocial_consequence"),
                ),
                // Seen in a tmux run: a bereavement was typed as an outcome of the product
                // and probed.
                (
                    "We lost our mum last year.",
                    "lost our mum",
                    Not("psychosocial_consequence"),
                ),
            ],
        );
    }

    #[test]
    fn getting_somewhere_opens_or_ends_a_story() {
        check(
            "critical_incident",
            &[
                (
                    "I pulled into the services at 9pm. Two chargers had tape over them. I rang \
                     the helpline.",
                    "pulled into the services at 9pm",
                    Is("incident_context"),
                ),
                (
                    "The flight was cancelled. They put us on a coach. We got home a day late.",
                    "got home a day late",
                    Is("outcome"),
                ),
                (
                    "The flight was cancelled. We got to the desk at ten. It was chaos.",
                    "got to the desk at ten",
                    Is("action_taken"),
                ),
            ],
        );
    }

    #[test]
    fn story_parts_follow_who_acts() {
        check(
            "critical_incident",
            &[
                // A live onboarding story: where people were is the situation, not an event
                // to ask "what led up to" about; a judgement is not a whereabouts.
                (
                    "My manager was on holiday and the IT person was in a different time zone.",
                    "IT person was in a different time zone",
                    Is("incident_context"),
                ),
                (
                    "The company was mostly in Singapore, so they had all logged off.",
                    "company was mostly in Singapore",
                    Is("incident_context"),
                ),
                (
                    "The dentist said the drilling was totally unnecessary.",
                    "drilling was totally unnecessary",
                    Not("incident_context"),
                ),
                (
                    "I panicked and unplugged the cable.",
                    "unplugged the cable",
                    Is("action_taken"),
                ),
                (
                    "The boiler broke in January.",
                    "boiler broke in January",
                    Is("incident_event"),
                ),
                // Someone else's step to put things right is an action too; their failure
                // to, and a noun that spells like such a verb, are not.
                (
                    "The site went down. Then he rolled it back. We were up by two.",
                    "rolled it back",
                    Is("action_taken"),
                ),
                (
                    "The site went down. The guy next door brought a charger over.",
                    "guy next door brought a charger over",
                    Is("action_taken"),
                ),
                (
                    "The screen froze. A colleague tried to fix it.",
                    "colleague tried to fix it",
                    Is("action_taken"),
                ),
                // The respondent's guess at someone else's part explains the story.
                (
                    "The parcel never came. I think the driver was just rushing.",
                    "driver was just rushing",
                    Is("attribution"),
                ),
                // A sentence that opens on a guess is a guess in each of its clauses.
                (
                    "I think nobody is responsible, the operator doesn't check them.",
                    "operator doesn't check them",
                    Is("attribution"),
                ),
                (
                    "The operator doesn't check them.",
                    "operator doesn't check them",
                    Not("attribution"),
                ),
                (
                    "The screen froze. A colleague tried to help.",
                    "colleague tried to help",
                    Is("incident_event"),
                ),
                (
                    "The bank wouldn't refund it.",
                    "n't refund it",
                    Is("incident_event"),
                ),
                (
                    "The booking didn't include the insurance.",
                    "booking didn't include the insurance",
                    Is("incident_event"),
                ),
                (
                    "I was late because the app hadn't updated.",
                    "app hadn't updated",
                    Is("attribution"),
                ),
                (
                    "Next time I'd put everything in writing.",
                    "put everything in writing",
                    Is("lesson"),
                ),
                (
                    "It broke, so I missed the wedding dinner.",
                    "missed the wedding dinner",
                    Is("outcome"),
                ),
                // How things are since, in an answer told wholly in the present.
                (
                    "Now I never let it drop below half, and I check two sites before I leave.",
                    "check two sites",
                    Is("outcome"),
                ),
                (
                    "I check two sites before I leave.",
                    "check two sites",
                    Is("action_taken"),
                ),
            ],
        );
    }

    #[test]
    fn a_story_ends_in_what_it_cost_and_what_the_respondent_would_tell_others() {
        check(
            "critical_incident",
            &[
                // Development round 6: advice, and what the respondent would do.
                (
                    "Don't cancel pet insurance to save a few quid.",
                    "n't cancel pet insurance",
                    Is("lesson"),
                ),
                (
                    "But if it did happen, I'd ask for the total price before they set off.",
                    "ask for the total price",
                    Is("lesson"),
                ),
                // What it cost is how it turned out.
                (
                    "They made him sick. The bill was three hundred and eighty pounds.",
                    "three hundred and eighty pounds",
                    Is("outcome"),
                ),
                (
                    "I'd put a wash on and gone out to the big Tesco.",
                    "put a wash on",
                    Not("lesson"),
                ),
            ],
        );
    }

    #[test]
    fn job_struggles_are_what_befell_the_respondent() {
        check(
            "jobs_to_be_done",
            &[
                // What the respondent had to do, or forgot, is a struggle; what they kept
                // somewhere is not.
                (
                    "A deliverable got missed and I had to ring them and apologise.",
                    "ring them and apologise",
                    Is("pain_point"),
                ),
                (
                    "Then in October I forgot the football pickup completely.",
                    "forgot the football pickup",
                    Is("pain_point"),
                ),
                (
                    "Before that I kept everything in a notes file.",
                    "kept everything in a notes file",
                    Not("pain_point"),
                ),
                // A resentment felt, a queue stood in: struggles, not the scene.
                (
                    "By Sunday night I was resentful all weekend.",
                    "resentful all weekend",
                    Is("pain_point"),
                ),
                (
                    "Then it's a trip to the depot, Saturday morning, forty-minute queue.",
                    "forty-minute queue",
                    Is("pain_point"),
                ),
            ],
        );
    }

    /// From a live jobs interview on coffee: "not feel foggy" was probed as a struggle ("What
    /// have you tried so far to get around that?"), "slept badly" coded as a competing
    /// solution and "jittery" as a job.
    #[test]
    fn a_state_wished_away_is_a_job_and_what_befell_no_solution() {
        check(
            "jobs_to_be_done",
            &[
                (
                    "I'd walk into the meeting room and not feel foggy.",
                    "not feel foggy",
                    Is("emotional_job"),
                ),
                (
                    "I'd slept badly because the baby was up twice, so I grabbed a flat white.",
                    "slept badly",
                    Not("competing_solution"),
                ),
                (
                    "I'd slept badly because the baby was up twice, so I grabbed a flat white.",
                    "grabbed a flat white",
                    Is("competing_solution"),
                ),
                (
                    "Some days I have an energy drink but that makes me jittery.",
                    "jittery",
                    Is("pain_point"),
                ),
                // Who the respondent is to others; what does not count in choosing; what it
                // costs them, unless they would rather pay it.
                (
                    "I'm a better partner and a better dad when I've had that time.",
                    "better partner and a better dad",
                    Is("social_job"),
                ),
                (
                    "I'm the only one with kids in the team.",
                    "only one with kids",
                    Not("social_job"),
                ),
                (
                    "Sometimes I just have instant, which is grim but it does the job.",
                    "does the job",
                    Is("hiring_criterion"),
                ),
                (
                    "It has to be hot. I don't care about fancy milk.",
                    "care about fancy milk",
                    Is("hiring_criterion"),
                ),
                (
                    "I'm paying three fifty every day and it's still rushed.",
                    "paying three fifty every day",
                    Is("pain_point"),
                ),
                (
                    "Honestly I'd rather pay the eighteen quid.",
                    "pay the eighteen quid",
                    Not("pain_point"),
                ),
            ],
        );
    }

    #[test]
    fn job_parts_follow_their_markers() {
        check(
            "jobs_to_be_done",
            &[
                (
                    "The containers have to fit in my bag.",
                    "fit in my bag",
                    Is("hiring_criterion"),
                ),
                (
                    "So I moved to an app-only bank.",
                    "moved to an app-only bank",
                    Is("competing_solution"),
                ),
                (
                    "Mainly on the commute.",
                    "on the commute",
                    Is("job_context"),
                ),
                // A struggle told as the scene is the struggle.
                (
                    "When I was in Japan I couldn't even order food.",
                    "n't even order food",
                    Is("pain_point"),
                ),
                (
                    "We ended up shouting at each other.",
                    "ended up shouting",
                    Is("pain_point"),
                ),
                // "set" marks no tense; the story around it is told in the past.
                (
                    "A deliverable got missed and I had to apologise. So I set up the board.",
                    "set up the board",
                    Is("competing_solution"),
                ),
                (
                    "I set up the board every Monday.",
                    "set up the board",
                    Is("functional_job"),
                ),
                // A return to work or study sets the scene; to a solution, it does not.
                (
                    "Last spring I'd gone back full-time after the redundancy.",
                    "gone back full-time",
                    Is("job_context"),
                ),
                (
                    "It was the week after my youngest went back to uni.",
                    "youngest went back to uni",
                    Is("job_context"),
                ),
                (
                    "So I went back to the old bank.",
                    "went back to the old bank",
                    Not("job_context"),
                ),
                (
                    "I want them to remember family dinners.",
                    "remember family dinners",
                    Is("social_job"),
                ),
                (
                    "I want to remember family dinners.",
                    "remember family dinners",
                    Not("social_job"),
                ),
                // What the answer names as the worst of it is the struggle; a time in that
                // sentence is still the scene.
                (
                    "The worst bit was six o'clock, standing in front of the fridge.",
                    "standing in front of the fridge",
                    Is("pain_point"),
                ),
                (
                    "The worst bit was six o'clock, standing in front of the fridge.",
                    "six o'clock",
                    Is("job_context"),
                ),
                (
                    "I was standing in front of the fridge at six o'clock.",
                    "standing in front of the fridge",
                    Not("pain_point"),
                ),
            ],
        );
        check("repertory_grid", &[("Honestly.", "Honestly", Nothing)]);
    }

    #[test]
    fn what_is_said_in_the_conditional() {
        let answer = "Honestly I'd be the shouty mum again, rushing everyone out the door. \
            But now we have breakfast together.";
        let words = srl::tag_words(answer);
        let at = |phrase: &str| is_conditional(&words, answer.find(phrase).unwrap());
        assert!(at("shouty mum"));
        assert!(at("rushing"));
        assert!(!at("have breakfast"), "a new sentence turns back to now");
        // Asked what would be different without being patient, a live interview had coded
        // "I'd like to be that kind of person" as "not being the kind of person".
        let answer = "I'd like to be that kind of person, even over a phone line.";
        let words = srl::tag_words(answer);
        assert!(!is_conditional(
            &words,
            answer.find("kind of person").unwrap()
        ));
    }

    #[test]
    fn what_the_respondent_would_be_otherwise_is_counterfactual() {
        let answer = "It helps. Otherwise I'd just be checking my phone, and I'm calm now.";
        let words = srl::tag_words(answer);
        let at = |phrase: &str| is_counterfactual(&words, answer.find(phrase).unwrap());
        assert!(at("checking my phone"));
        assert!(!at("calm now"));
        let answer = "Otherwise I'm shouty and rushing everyone out the door.";
        let words = srl::tag_words(answer);
        assert!(is_counterfactual(&words, answer.find("rushing").unwrap()));
        assert!(!at("helps"));
    }

    #[test]
    fn an_answer_to_why_it_happened_is_an_attribution() {
        let answer = "Partly me, I didn't look before I jumped. But people leave their bottles \
                      on the mats. I always climb down now. They should have staff on the floor.";
        let m = crate::config::shipped_methodology("critical_incident");
        let words = srl::tag_words(answer);
        let read = |phrase: &str, asked: bool| {
            let start = answer.find(phrase).unwrap();
            let cue = Cue::read(&words, narrated(&words), start, start + phrase.len())
                .answering_why(asked);
            candidates(&cue, |t| m.node_type(t).is_some())
        };
        assert!(asks_why_it_happened(
            "Why do you think you landed on the bottle?"
        ));
        assert!(!asks_why_it_happened("What happened next?"));
        for phrase in [
            "didn't look before I jumped",
            "leave their bottles on the mats",
        ] {
            assert_eq!(read(phrase, true), ["attribution"], "{phrase}");
        }
        // Unasked, the respondent's own step is an action; asked or not, a lesson stays one.
        assert_eq!(read("didn't look before I jumped", false), ["action_taken"]);
        assert_eq!(read("should have staff on the floor", true), ["lesson"]);
    }
}
