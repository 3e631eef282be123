//! The stricter check a small model's question passes: whether it is a question *to this
//! respondent about this interview*, not only a safe and whole one.
//!
//! The embedded 135M model writes grammatical-looking questions that pass [`check_question`]
//! (`super::check_question`) and still make no sense in the interview: narration about "the
//! person's response", a remark about "this question", a question about a sandwich when the
//! respondent spoke of frothing milk, or "Are you tell me what a froth is?". A hosted model does
//! not need this check (it may rightly ask an open "What else comes to mind?"); a small one
//! gets it, and a question that fails it is asked once more and then replaced by the
//! strategy's template, like any failing question.
//!
//! The rules, in order: the question speaks to the respondent (`you`, `your`); it does not talk
//! about the interview itself (`the person`, `the respondent`, `this question`, `I'd like to ask
//! you`, …); it has no "are you" + bare verb (`Are you tell me`), no word glued from fragments
//! (`trying-to-expl`), no alternatives left to pick (`used/seen/hear`, `and/or`), no final
//! preposition with nothing to refer back to (`… when he spends quality time with?`)
//! and is not two questions spliced by a comma (`Are you thinking of oat milk, how does that
//! change your decision?`); what it quotes, the respondent said or a concept is called (no misspelt
//! "frogs well" for "froths well"); it shares a content word with what the interview is
//! about (the topic, the concepts' labels and the answer); and once the respondent has
//! answered, one of those words is not the topic's own ("Are you interested in exploring the
//! world of oat milk?" takes up nothing that was said). Words match on a common stem of at
//! least [`MIN_STEM`] letters (`froth` ~ `froths` ~ `frothing`).
//!
//! Pure and total.

use super::check::DANGLING_WORDS;

/// Letters two words must share from their start to count as one content word.
const MIN_STEM: usize = 4;

/// Phrases by which a small model narrates the interview instead of taking part in it.
const NARRATION: &[&str] = &[
    "the person",
    "a person's",
    "the respondent",
    "the interviewee",
    "the interviewer",
    "this question",
    "the question",
    "your question",
    "a question",
    "the answer",
    "their response",
    "the response",
    "the topic",
    "a topic",
    "ready to ask",
    // Asking whether the interview may begin, which it already has ("Are you ready to talk
    // about your experience starting a new job remotely?", seen after a second answer).
    "ready to talk",
    "ready to share",
    "ready to start",
    "ready to begin",
    "interviewer",
    "you asked me",
    // The model answering as the respondent, or telling the respondent what to ask.
    "ask me",
    "you can ask",
    // The model taking the respondent for the one who asks.
    "are you asking",
    "were you asking",
    "you're asking",
    "you are asking",
    // The model talking about its own asking, or offering the respondent to learn more.
    "like to ask you",
    "want to ask you",
    "going to ask you",
    "want to know more",
    "like to know more",
    // The model telling the respondent what they want to know.
    "you want to know",
    // The method's own words, leaked from the prompt ("Are you looking at a ladder with the
    // phrase "come to me with problems" in it?", seen in a live laddering interview).
    "a ladder",
    "the ladder",
    "rung",
    "the phrase",
    "a phrase",
    // The model asking the respondent for a question, or answering for them ("What's a good
    // question to ask when trying to make the most of your morning, you might say?", seen in
    // a live jobs interview).
    "question to ask",
    "questions to ask",
    "you might say",
];

/// Verbs that follow "are you" only in a broken sentence (`Are you tell me …`).
const BARE_VERBS: &[&str] = &[
    "tell", "think", "talk", "say", "describe", "mean", "know", "like", "want", "feel", "use",
    "see", "explain", "remember", "prefer", "choose", "find", "ask",
];

/// Adverbs that may stand between "are you" and what follows ("Are you still …").
const LINKING_ADVERBS: &[&str] = &[
    "just", "really", "still", "also", "ever", "actually", "only",
];

/// Verbs whose base form is also an adjective that may follow "are you" ("Are you open to
/// …?").
const ADJECTIVE_VERBS: &[&str] = &[
    "open", "free", "clear", "close", "calm", "content", "ready", "clean", "warm", "cool", "busy",
    "right", "wrong", "sure", "set", "done", "through",
];

/// A verb in its base form ("tell", "look"), which follows "are you" only in a broken sentence
/// ("Are you look at …?").
fn is_bare_verb(word: &str) -> bool {
    BARE_VERBS.contains(&word)
        || (crate::srl::is_known_verb(word)
            && crate::srl::verb_lemma(word) == word
            && !word.ends_with("ing")
            && !word.ends_with("ed")
            && !ADJECTIVE_VERBS.contains(&word))
}

/// First-person words. An interviewer's question uses them only in a request to the
/// respondent ([`REQUEST_VERBS`] + "me"); anywhere else the model speaks as itself or as the
/// respondent ("your partner and me do ourselves").
const FIRST_PERSON: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'd",
    "i'll",
    "me",
    "my",
    "mine",
    "myself",
    "we",
    "we're",
    "we've",
    "us",
    "our",
    "ours",
    "ourselves",
];
/// Verbs after which "me" is the interviewer asking for something: "tell me", "walk me
/// through", "give me an example".
const REQUEST_VERBS: &[&str] = &["tell", "walk", "help", "show", "give", "let", "remind"];
/// Words that open a yes/no question.
const AUXILIARIES: &[&str] = &[
    "am", "are", "is", "was", "were", "do", "does", "did", "can", "could", "would", "will", "have",
    "has", "had", "should", "shall", "may", "might",
];

/// Words that open a wh-question.
const WH_WORDS: &[&str] = &["how", "what", "why", "which", "who", "where", "when"];

/// Short or function words that say nothing about the topic.
const STOPWORDS: &[&str] = &[
    "about",
    "after",
    "again",
    "also",
    "always",
    "another",
    "being",
    "been",
    "before",
    "could",
    "does",
    "doing",
    "done",
    "each",
    "even",
    "ever",
    "every",
    "from",
    "have",
    "having",
    "here",
    "into",
    "just",
    "like",
    "make",
    "makes",
    "many",
    "more",
    "most",
    "much",
    "never",
    "only",
    "other",
    "over",
    "really",
    "same",
    "should",
    "some",
    "something",
    "such",
    "than",
    "that",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "think",
    "this",
    "those",
    "through",
    "very",
    "want",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "would",
    "your",
    "yours",
    "yourself",
    "you're",
    "you've",
    "well",
    "good",
    "know",
    "tell",
    "better",
    "best",
    "looking",
    "favorite",
    "favourite",
    "great",
    "nice",
];

/// Openings of a question that asks for agreement: "Are you sure that \"decent mum for an
/// hour\" had been done well?" (seen in a live jobs interview).
const LEADING: &[&str] = &[
    "are you sure",
    "do you agree",
    "would you agree",
    "wouldn't you agree",
    "don't you think",
    "wouldn't you say",
    "isn't it true",
    "is it true",
];

/// Why a small model's question does not belong in the interview.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelevanceProblem {
    /// No `you` or `your`: the question is not put to the respondent.
    #[error("is not put to the respondent (no 'you' or 'your')")]
    NotAddressed,
    /// The question talks about the interview (`the person's response`, `this question`).
    #[error("talks about the interview ('{phrase}') instead of asking")]
    Narration { phrase: String },
    /// A question that asks the respondent to confirm what the interviewer puts to them
    /// ("Are you sure that …", "Don't you think …"), which a researcher never asks.
    #[error("asks the respondent to confirm instead of to tell ('{opening}')")]
    Leading { opening: String },
    /// "Are you" with a bare verb, or a word glued from fragments.
    #[error("is not a sentence ('{words}')")]
    Broken { words: String },
    /// A first-person word outside a request to the respondent ("tell me", "walk me
    /// through"): the model speaking as itself or as the respondent.
    #[error("speaks as itself or as the respondent ('{words}')")]
    FirstPerson { words: String },
    /// A yes/no question with a wh-question after a comma: two questions in one sentence.
    #[error("is two questions spliced by a comma ('{words}')")]
    Spliced { words: String },
    /// A quoted phrase that is not the respondent's or a concept's (a misspelt label).
    #[error("quotes '{quote}', which the respondent did not say")]
    Misquoted { quote: String },
    /// No content word in common with the topic, the graph's labels or the answer.
    #[error("shares no word with the topic, the concepts so far or the answer")]
    OffTopic,
    /// Once the respondent has answered, a question whose only link to the interview is the
    /// topic's own words ("Are you interested in exploring the world of oat milk?"): it takes
    /// up nothing the respondent said.
    #[error("names only the topic, nothing the respondent said")]
    OnlyTheTopic,
    /// A thing named that appears nowhere in what the model was given, the answers or the
    /// concepts ("How do you feel afterwards after a promotion?" when no one spoke of one).
    #[error("brings in '{word}', which nobody said")]
    Unheard { word: String },
}

/// What a small model's question may refer to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anchors<'a> {
    /// What the respondent said (a quote must come from here or from `about`).
    pub said: &'a [&'a str],
    /// What the interview is about: the topic and the concepts' labels. Empty skips the topic
    /// and quote rules.
    pub about: &'a [&'a str],
    /// The topic alone (also in `about`). Once `said` holds an answer, a question must share a
    /// word with it or with a concept's label other than the topic's words.
    pub topic: &'a str,
    /// What the model was given (its system and user prompt). A noun of the question must
    /// come from here, from `said` or `about`, or be one of an interviewer's own
    /// ([`INTERVIEW_NOUNS`]). Empty skips the rule.
    pub prompt: &'a str,
}

/// Nouns any interviewer may use without the respondent having said them.
const INTERVIEW_NOUNS: &[&str] = &[
    "time",
    "times",
    "moment",
    "moments",
    "day",
    "days",
    "week",
    "way",
    "ways",
    "thing",
    "things",
    "experience",
    "experiences",
    "situation",
    "example",
    "reason",
    "reasons",
    "difference",
    "life",
    "people",
    "person",
    "someone",
    "something",
    "anything",
    "everything",
    "feeling",
    "feelings",
    "part",
    "kind",
    "sort",
    "side",
    "idea",
    "point",
    "mind",
    "sense",
    "place",
    "instance",
    "occasion",
    "story",
    "start",
    "end",
    "result",
    "change",
    "changes",
    "others",
    "help",
    "matter",
    "question",
    "today",
    "lot",
    "bit",
    "future",
    "past",
];

/// Checks a small model's `question` against what the interview is about.
pub fn check_small_model_question(
    question: &str,
    anchors: Anchors<'_>,
) -> Result<(), RelevanceProblem> {
    let lower = question.to_lowercase();
    let words = words_of(&lower);
    if !words
        .iter()
        .any(|w| matches!(w.as_str(), "you" | "your" | "yours" | "yourself" | "you're"))
    {
        return Err(RelevanceProblem::NotAddressed);
    }
    if let Some(problem) = talk_about_the_interview(&lower) {
        return Err(problem);
    }
    // Also with an adverb between ("Are you just ask about …?", seen in a tmux run).
    let plain = words.windows(3).find_map(|w| match w {
        [are, you, verb] if are == "are" && you == "you" && is_bare_verb(verb) => {
            Some(format!("are you {verb}"))
        }
        _ => None,
    });
    let adverbial = || {
        words.windows(4).find_map(|w| match w {
            [are, you, adverb, verb]
                if are == "are"
                    && you == "you"
                    && LINKING_ADVERBS.contains(&adverb.as_str())
                    && is_bare_verb(verb) =>
            {
                Some(format!("are you {adverb} {verb}"))
            }
            _ => None,
        })
    };
    if let Some(verb) = plain.or_else(adverbial) {
        return Err(RelevanceProblem::Broken { words: verb });
    }
    // "Are you asked yourself why …": a participle and "yourself" after "are you" is a broken
    // "have you asked yourself".
    if let Some(verb) = words.windows(4).find_map(|w| match w {
        [are, you, verb, yourself]
            if are == "are" && you == "you" && verb.ends_with("ed") && yourself == "yourself" =>
        {
            Some(format!("are you {verb} yourself"))
        }
        _ => None,
    }) {
        return Err(RelevanceProblem::Broken { words: verb });
    }
    if let Some(words) = broken_form(&lower, &words) {
        return Err(RelevanceProblem::Broken { words });
    }
    if let Some(words) = condition_without_question(&lower) {
        return Err(RelevanceProblem::Broken { words });
    }
    if let Some(words) = spliced(&lower, &words) {
        return Err(RelevanceProblem::Spliced { words });
    }
    if let Some(words) = first_person(&lower) {
        return Err(RelevanceProblem::FirstPerson { words });
    }
    if anchors.about.is_empty() {
        return Ok(());
    }
    let about: Vec<String> = anchors.about.iter().map(|a| a.to_lowercase()).collect();
    let said: Vec<String> = anchors.said.iter().map(|a| a.to_lowercase()).collect();
    if let Some(quote) = quotes(&lower)
        .into_iter()
        .find(|q| cut_short(q) || !about.iter().chain(&said).any(|a| contains_phrase(a, q)))
    {
        return Err(RelevanceProblem::Misquoted { quote });
    }
    let anchor_words: Vec<String> = about
        .iter()
        .chain(&said)
        .flat_map(|a| words_of(a))
        .filter(|w| is_content(w))
        .collect();
    let on_topic = words
        .iter()
        .filter(|w| is_content(w))
        .any(|w| anchor_words.iter().any(|a| same_stem(w, a)));
    if !on_topic {
        return Err(RelevanceProblem::OffTopic);
    }
    if !(said.is_empty() || takes_up_more_than_the_topic(&words, anchors.topic, &said, &about)) {
        return Err(RelevanceProblem::OnlyTheTopic);
    }
    match unheard_noun(question, &anchor_words, anchors.prompt) {
        Some(word) => Err(RelevanceProblem::Unheard { word }),
        None => Ok(()),
    }
}

/// The first noun of `question` (read by the offline tagger) that shares no stem with an
/// anchor word or a word of `prompt` and is not one of [`INTERVIEW_NOUNS`]. None without a
/// prompt.
fn unheard_noun(question: &str, anchor_words: &[String], prompt: &str) -> Option<String> {
    if prompt.trim().is_empty() {
        return None;
    }
    let given: Vec<String> = words_of(&prompt.to_lowercase())
        .into_iter()
        .filter(|w| is_content(w))
        .collect();
    crate::srl::tag_words(question)
        .into_iter()
        .filter(|w| w.class == crate::srl::WordClass::Noun)
        .map(|w| w.norm)
        .find(|w| {
            is_content(w)
                && w.chars().all(char::is_alphabetic)
                && !INTERVIEW_NOUNS.contains(&w.as_str())
                && !anchor_words.iter().chain(&given).any(|a| {
                    a == w || a.trim_end_matches('s') == w.trim_end_matches('s') || same_stem(w, a)
                })
        })
}

/// Narration of the interview ("the person's response", also spoken loosely: "Are you just
/// askin' about …", with its dropped "g" restored and the adverbs that may come between "are
/// you" and its verb left out) or a request to confirm ("Are you sure that …").
fn talk_about_the_interview(lower: &str) -> Option<RelevanceProblem> {
    let plain_speech: String = lower
        .split_whitespace()
        .filter(|w| !LINKING_ADVERBS.contains(w))
        .map(|w| match w.strip_suffix("in'") {
            Some(stem) if stem.len() > 2 => format!("{stem}ing"),
            _ => w.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(phrase) = NARRATION
        .iter()
        .find(|p| contains_phrase(lower, p) || contains_phrase(&plain_speech, p))
    {
        return Some(RelevanceProblem::Narration {
            phrase: (*phrase).to_owned(),
        });
    }
    LEADING
        .iter()
        .find(|o| lower.trim_start().starts_with(*o))
        .map(|opening| RelevanceProblem::Leading {
            opening: (*opening).to_owned(),
        })
}

/// "If you are trying to achieve something that is not just about coffee, butaboutllying?"
/// (seen in a live jobs interview): a question that opens on a condition ("If …", "When …,")
/// must ask something after it. The words after the condition's comma, when they open with no
/// question word or auxiliary (an "and" or "so" before one is fine), are returned. "When did
/// it last happen?" asks from its first word and is left alone.
fn condition_without_question(lower: &str) -> Option<String> {
    let mut words = lower.split_whitespace();
    let first = words.next()?;
    let second = words.next().unwrap_or_default();
    if !matches!(
        first,
        "if" | "when" | "once" | "after" | "before" | "whenever"
    ) || ASKING.contains(&second)
    {
        return None;
    }
    let (_, rest) = lower.split_once(',')?;
    let asks = rest
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        .find(|w| !matches!(*w, "and" | "so" | "then" | "but" | ""))
        .is_some_and(|w| ASKING.contains(&w));
    (!asks).then(|| rest.trim().to_owned())
}

/// Words that open a question: question words and auxiliaries.
const ASKING: &[&str] = &[
    "what", "how", "why", "who", "whom", "whose", "where", "when", "which", "would", "could",
    "can", "do", "does", "did", "is", "are", "was", "were", "will", "have", "has", "had", "should",
    "might", "may", "tell", "walk", "describe", "in",
];

/// Whether a content word of the question other than the topic's own words is also in the
/// answer (`said`) or in a concept's label (`about` less the topic). True without a topic.
fn takes_up_more_than_the_topic(
    question: &[String],
    topic: &str,
    said: &[String],
    about: &[String],
) -> bool {
    let topic = topic.to_lowercase();
    if topic.is_empty() {
        return true;
    }
    let topic_words: Vec<String> = words_of(&topic)
        .into_iter()
        .filter(|w| is_content(w))
        .collect();
    let beyond_topic = |w: &String| is_content(w) && !topic_words.iter().any(|t| same_stem(w, t));
    let mentioned: Vec<String> = said
        .iter()
        .chain(about.iter().filter(|a| **a != topic))
        .flat_map(|a| words_of(a))
        .filter(beyond_topic)
        .collect();
    question
        .iter()
        .filter(|w| beyond_topic(w))
        .any(|w| mentioned.iter().any(|m| same_stem(w, m)))
}

/// A form no sentence has: a word glued from fragments (`trying-to-expl`), alternatives left
/// for the reader to pick (`used/seen/hear`), or a final preposition with nothing to refer
/// back to. Returns the words at fault.
fn broken_form(lower: &str, words: &[String]) -> Option<String> {
    if let Some(glued) = lower
        .split_whitespace()
        .find(|w| w.matches('-').count() >= 2)
    {
        return Some(glued.to_owned());
    }
    if let Some(slashed) = lower.split_whitespace().find(|w| {
        w.split('/')
            .filter(|p| p.chars().any(char::is_alphabetic))
            .count()
            >= 2
    }) {
        return Some(
            slashed
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_owned(),
        );
    }
    dangling_preposition(words).or_else(|| why_without_judgement(words))
}

/// Words that say how something matters in "Why is … to you?".
const JUDGEMENTS: &[&str] = &[
    "important",
    "significant",
    "valuable",
    "meaningful",
    "special",
    "useful",
    "essential",
    "crucial",
    "necessary",
    "relevant",
    "appealing",
    "worth",
    "precious",
    "dear",
];

/// "Why is being nicer to you?" (seen in a live laddering interview): a why-question that
/// ends "to you" without saying how the thing matters ("important") is missing its point.
fn why_without_judgement(words: &[String]) -> Option<String> {
    let opens = matches!(
        words,
        [why, is, ..] if why == "why" && matches!(is.as_str(), "is" | "are" | "was")
    );
    let ends = matches!(words, [.., to, you] if to == "to" && you == "you");
    let judged = words.iter().any(|w| JUDGEMENTS.contains(&w.as_str()));
    (opens && ends && !judged).then(|| "why is … to you".to_owned())
}

/// Prepositions a question may end on when something earlier is their object.
const STRANDABLE: &[&str] = &[
    "with", "to", "for", "about", "at", "of", "on", "in", "from", "into", "by",
];

/// Words that can be the object a final preposition refers back to ("What are you worried
/// about?", "Is there anything you'd change it for?").
const GAP_HOSTS: &[&str] = &[
    "what",
    "who",
    "whom",
    "which",
    "whose",
    "anything",
    "something",
    "everything",
    "nothing",
    "anyone",
    "someone",
    "everyone",
    "anybody",
    "somebody",
    "thing",
    "things",
    "one",
    "ones",
    "people",
    "person",
    "place",
    "places",
];

/// The question ends on a preposition that nothing in it can be the object of ("Why is your
/// relationship better when you spend time with?"): a sentence cut short.
fn dangling_preposition(words: &[String]) -> Option<String> {
    let last = words.last()?;
    let hosted = words.iter().any(|w| GAP_HOSTS.contains(&w.as_str()));
    (STRANDABLE.contains(&last.as_str()) && !hosted).then(|| format!("{last}?"))
}

/// The start of a wh-question after a comma (`, how does`) in a question that opens like a
/// yes/no one (`Are you …`). A sentence that opens otherwise may go on with a wh-question
/// (`When you choose oat milk, what matters most?`).
fn spliced(lower: &str, words: &[String]) -> Option<String> {
    let opening = words.first()?;
    if !AUXILIARIES.contains(&opening.as_str()) {
        return None;
    }
    lower
        .split(',')
        .skip(1)
        .find_map(|clause| match words_of(clause).as_slice() {
            [wh, verb, ..]
                if WH_WORDS.contains(&wh.as_str()) && AUXILIARIES.contains(&verb.as_str()) =>
            {
                Some(format!(", {wh} {verb}"))
            }
            _ => None,
        })
}

/// Lowercase words: runs of letters and apostrophes.
fn words_of(lower: &str) -> Vec<String> {
    lower
        .split(|c: char| !(c.is_alphabetic() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The first first-person word outside quotes (what the respondent said may be quoted) that
/// is not "me" after a request verb, with the word before it.
fn first_person(lower: &str) -> Option<String> {
    let outside: String = lower
        .split(['"', '\u{201c}', '\u{201d}'])
        .step_by(2)
        .collect::<Vec<_>>()
        .join(" ");
    let words = words_of(&outside);
    let mut previous: Option<&String> = None;
    for word in &words {
        let requested =
            word == "me" && previous.is_some_and(|p| REQUEST_VERBS.contains(&p.as_str()));
        if FIRST_PERSON.contains(&word.as_str()) && !requested {
            return Some(previous.map_or_else(|| word.clone(), |p| format!("{p} {word}")));
        }
        previous = Some(word);
    }
    None
}

/// Words a quoted phrase never ends on besides the [`DANGLING_WORDS`] of a whole question: a
/// question may end on a preposition ("Who do you talk to?"), a quoted concept may not ("being
/// the kind of parent I want to", cut from "… I want to be").
const QUOTE_DANGLING: &[&str] = &[
    "to", "of", "with", "for", "from", "in", "at", "on", "by", "that", "which", "who", "his",
    "her", "if", "when",
];

/// Whether a quote stops on a word that needs what was cut after it.
fn cut_short(quote: &str) -> bool {
    words_of(quote).last().is_some_and(|w| {
        DANGLING_WORDS.contains(&w.as_str()) || QUOTE_DANGLING.contains(&w.as_str())
    })
}

/// The phrases between double quotes (straight or curly), trimmed, without empty ones.
fn quotes(lower: &str) -> Vec<String> {
    lower
        .split(['"', '\u{201c}', '\u{201d}'])
        .skip(1)
        .step_by(2)
        .map(|q| {
            q.trim()
                .trim_end_matches([',', '.', '?', '!'])
                .trim()
                .to_owned()
        })
        .filter(|q| !q.is_empty())
        .collect()
}

fn is_content(word: &str) -> bool {
    word.chars().count() >= MIN_STEM && !STOPWORDS.contains(&word)
}

/// Whether two content words share their first [`MIN_STEM`] letters and one is a prefix of
/// the other once a plural or verb ending is set aside (`froth`/`froths`, `cream`/`creamy`).
fn same_stem(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let stem: String = short
        .trim_end_matches("ing")
        .trim_end_matches("ed")
        .trim_end_matches('s')
        .trim_end_matches('y')
        .trim_end_matches('e')
        .to_owned();
    stem.chars().count() >= MIN_STEM && long.starts_with(&stem)
}

/// `phrase` as whole words in `text`.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text.get(..at).and_then(|t| t.chars().next_back());
        let after = text.get(at + phrase.len()..).and_then(|t| t.chars().next());
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ABOUT: &[&str] = &[
        "oat milk as an alternative to dairy milk",
        "froths well",
        "latte",
    ];
    const SAID: &[&str] = &["I switched to oat milk because it froths really well in my latte."];
    const ANCHORS: Anchors<'static> = Anchors {
        said: SAID,
        about: ABOUT,
        topic: "oat milk as an alternative to dairy milk",
        prompt: "",
    };

    type Expected = fn(&RelevanceProblem) -> bool;

    #[test]
    fn a_quote_is_a_whole_phrase_of_a_label_or_of_the_answer() {
        let about = ["oat milk", "being the kind of parent I want to be"];
        let said = ["When I'm calm I'm more patient, and that's the kind of parent I want to be."];
        let anchors = Anchors {
            said: &said,
            about: &about,
            topic: "oat milk",
            prompt: "",
        };
        let check = |q: &str| check_small_model_question(q, anchors);
        // A tmux run on the local model: the label quoted without its last word.
        let cut = check("Why is \"being the kind of parent I want to\" important to you?");
        assert!(
            matches!(&cut, Err(RelevanceProblem::Misquoted { quote })
                if quote == "being the kind of parent i want to"),
            "{cut:?}"
        );
        // Part of a word is no quote of it.
        let part = check("Why does \"ore patient\" matter to you?");
        assert!(
            matches!(&part, Err(RelevanceProblem::Misquoted { quote }) if quote == "ore patient"),
            "{part:?}"
        );
        assert_eq!(
            check("Why is \"being the kind of parent I want to be\" important to you?"),
            Ok(())
        );
        assert_eq!(check("What does being \"more patient\" give you?"), Ok(()));
    }

    #[test]
    fn questions_of_the_embedded_model_that_made_no_sense_fail() {
        let cases: &[(&str, Expected)] = &[
            (
                "What a delightful question to ask, and the person's response is an excellent \
                 example of how they haventated-yet?",
                |p| matches!(p, RelevanceProblem::NotAddressed),
            ),
            (
                "Looking to make a statement that will leave the person with nothing but their \
                 imagination?",
                |p| matches!(p, RelevanceProblem::NotAddressed),
            ),
            (
                "What would you say to a person who says, \"I'm going to make a sandwich with \
                 the bun\"?",
                |p| matches!(p, RelevanceProblem::Misquoted { .. }),
            ),
            ("What would you make a sandwich with at home?", |p| {
                matches!(p, RelevanceProblem::OffTopic)
            }),
            (
                "Are you looking for a better way to make your favorite snack?",
                |p| matches!(p, RelevanceProblem::OffTopic),
            ),
            (
                "You're a friendly interviewer, and you asked me to tell you about oat milk?",
                |p| matches!(p, RelevanceProblem::Narration { .. }),
            ),
            (
                "Do you think oat milk was trying-to-expl it?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "trying-to-expl"),
            ),
            (
                "Are you tell me what a froth is?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "are you tell"),
            ),
            (
                "Are you just ask about \"not feeling left out\" when it comes to your mates?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "are you just ask"),
            ),
            (
                "Are you asked yourself why \"almost twice what cow milk costs\" is so important to you?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "are you asked yourself"),
            ),
            (
                "How would you describe the question you were just asked about oat milk?",
                |p| matches!(p, RelevanceProblem::Narration { .. }),
            ),
            (
                "Are you ready to talk about your experience with oat milk in your latte?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "ready to talk"),
            ),
            (
                "In the world of food, there is one thing that has changed in my life?",
                |p| matches!(p, RelevanceProblem::NotAddressed),
            ),
            (
                "Why do you need to understand that \"frogs well\" is not just a habit?",
                |p| matches!(p, RelevanceProblem::Misquoted { quote } if quote == "frogs well"),
            ),
            (
                "Are you ready to ask about the climate and why it matters?",
                |p| matches!(p, RelevanceProblem::Narration { .. }),
            ),
            (
                "Are you ask about oat milk as an alternative to dairy milk in general?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "are you ask"),
            ),
            (
                "Are you thinking of oat milk as an alternative to dairy milk, how does that \
                 change your decision?",
                |p| matches!(p, RelevanceProblem::Spliced { words } if words == ", how does"),
            ),
            (
                "Is it the froth in your latte, what do you think?",
                |p| matches!(p, RelevanceProblem::Spliced { words } if words == ", what do"),
            ),
            (
                "Are you just ask me about the climate?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "ask me"),
            ),
            (
                "You can ask about the climate, but it's more than just a little bit, you have \
                 to understand/see?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "you can ask"),
            ),
        ];
        for (question, expected) in cases {
            let problem = check_small_model_question(question, ANCHORS).unwrap_err();
            assert!(expected(&problem), "{question}: {problem}");
        }
    }

    /// Seen in a live laddering interview on the embedded model (wireless headphones).
    #[test]
    fn the_methods_words_and_a_why_without_its_point_fail() {
        let leaked = "Are you looking at a ladder with the phrase \"froths really well\" in it?";
        let problem = check_small_model_question(leaked, ANCHORS).unwrap_err();
        assert!(
            matches!(&problem, RelevanceProblem::Narration { phrase } if phrase == "a ladder"),
            "{problem}"
        );
        let pointless = "Why is being frothy to you?";
        let problem = check_small_model_question(pointless, ANCHORS).unwrap_err();
        assert!(
            matches!(problem, RelevanceProblem::Broken { .. }),
            "{problem}"
        );
        let meta = "What's a good question to ask when trying to make the most of your \
                    froth, you might say?";
        let problem = check_small_model_question(meta, ANCHORS).unwrap_err();
        assert!(
            matches!(&problem, RelevanceProblem::Narration { phrase } if phrase == "question to ask"),
            "{problem}"
        );
        // The same questions with their point, and a why-question put otherwise, pass.
        for question in [
            "Why is the froth important to you?",
            "Why is the froth so valuable to you?",
            "Why does the froth matter to you?",
            "What does the froth in your latte give you?",
        ] {
            check_small_model_question(question, ANCHORS)
                .unwrap_or_else(|p| panic!("{question}: {p}"));
        }
    }

    /// Seen in live interviews on the embedded model after the rules above.
    #[test]
    fn role_confusion_alternatives_and_first_person_fail() {
        let cases: &[(&str, Expected)] = &[
            (
                "If you want to know more about oat milk, I'd like to ask you if you've ever \
                 used/seen/hear?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "like to ask you"),
            ),
            (
                "Have you ever used/seen oat milk in a latte?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "used/seen"),
            ),
            (
                "Why do you think a father's relationship with his children is improved when \
                 he spends quality time with?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "with?"),
            ),
            (
                "Are you asking about oat milk as an alternative to dairy milk in general?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "are you asking"),
            ),
            (
                "Why is it that when you want to start the day right, your partner and me do \
                 ourselves?",
                |p| matches!(p, RelevanceProblem::FirstPerson { words } if words == "and me"),
            ),
            (
                "Why do I like oat milk in your latte?",
                |p| matches!(p, RelevanceProblem::FirstPerson { words } if words == "do i"),
            ),
            (
                "Do you buy oat milk for taste and/or froth?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "and/or"),
            ),
            // From the `local_llm` bench's run of the shipped answers.
            (
                "Are you look at a recent example of \"froths well\" in a business context?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "are you look"),
            ),
            (
                "You want to know what happens when you care about the froth, but don't have a \
                 personal connection?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "you want to know"),
            ),
        ];
        for (question, expected) in cases {
            let problem = check_small_model_question(question, ANCHORS).unwrap_err();
            assert!(expected(&problem), "{question}: {problem}");
        }
    }

    /// Seen in a live interview after a laddering answer ("I want to be the kind of person
    /// others can count on"): a closed question about the topic in general.
    #[test]
    fn a_thing_no_one_spoke_of_is_refused() {
        // The terminal app on the local model, in a remote onboarding incident: "How do you
        // feel afterwards after a promotion?" when no one had spoken of a promotion.
        let said = ["It made me feel like an afterthought. I read the handbook, page by page."];
        let about = ["starting a new job remotely", "feel like an afterthought"];
        let prompt = "Strategy: probe_outcome. Ask how the incident ended, what it cost the \
                      respondent in time, money or plans, how they felt afterwards.";
        let anchors = Anchors {
            said: &said,
            about: &about,
            topic: about[0],
            prompt,
        };
        assert_eq!(
            check_small_model_question("How do you feel afterwards after a promotion?", anchors),
            Err(RelevanceProblem::Unheard {
                word: "promotion".to_owned()
            })
        );
        for question in [
            // A short word shares no stem of four letters: it is matched whole.
            "How did you feel about the pages of the handbook?",
            "What did feeling like an afterthought cost you in time or plans?",
            "Can you tell me about a moment when you felt like an afterthought?",
        ] {
            assert_eq!(
                check_small_model_question(question, anchors),
                Ok(()),
                "{question}"
            );
        }
        // Without the prompt the rule is not applied.
        let bare = Anchors {
            prompt: "",
            ..anchors
        };
        assert_eq!(
            check_small_model_question("How do you feel afterwards after a promotion?", bare),
            Ok(())
        );
    }

    #[test]
    fn a_question_about_the_topic_alone_fails_once_the_respondent_has_answered() {
        let said = ["I want to be the kind of person others can count on."];
        let about = ["oat milk as an alternative to dairy milk", "calmer manager"];
        let anchors = Anchors {
            said: &said,
            about: &about,
            topic: about[0],
            prompt: "",
        };
        for question in [
            "Are you interested in exploring the world of oat milk?",
            "What do you think about oat milk as an alternative?",
        ] {
            assert_eq!(
                check_small_model_question(question, anchors),
                Err(RelevanceProblem::OnlyTheTopic),
                "{question}"
            );
        }
        for question in [
            "Why does being someone others can count on matter to you?",
            "How does oat milk make you a calmer manager?",
        ] {
            assert_eq!(
                check_small_model_question(question, anchors),
                Ok(()),
                "{question}"
            );
        }
        // Before any answer, the topic is all a question can take up.
        let opening = Anchors {
            said: &[],
            ..anchors
        };
        assert_eq!(
            check_small_model_question("What comes to your mind about oat milk?", opening),
            Ok(())
        );
    }

    #[test]
    fn questions_a_researcher_would_not_ask_fail() {
        // Seen in a live jobs interview on the embedded model.
        let cases: &[(&str, Expected)] = &[
            (
                "Are you sure that \"latte\" had been done well?",
                |p| matches!(p, RelevanceProblem::Leading { opening } if opening == "are you sure"),
            ),
            (
                "Are you just askin' about \"froths well\" when it comes to your own life?",
                |p| matches!(p, RelevanceProblem::Narration { phrase } if phrase == "are you asking"),
            ),
            (
                "If you are trying to achieve something that is not just about oat milk, \
                 butaboutllying?",
                |p| matches!(p, RelevanceProblem::Broken { words } if words == "butaboutllying?"),
            ),
            ("Don't you think oat milk froths well in your latte?", |p| {
                matches!(p, RelevanceProblem::Leading { .. })
            }),
        ];
        for (question, expected) in cases {
            let problem = check_small_model_question(question, ANCHORS).unwrap_err();
            assert!(expected(&problem), "{question}: {problem:?}");
        }
    }

    #[test]
    fn questions_on_the_interview_pass() {
        for question in [
            "Why does the way it froths matter to you in the morning?",
            "What do you like about oat milk in your latte?",
            "How does your latte taste with dairy instead?",
            "When did you first switch away from dairy?",
            "You mentioned \u{201c}froths well\u{201d}. Why does that matter to you?",
            "When you choose oat milk for your latte, what matters most?",
            "Do you buy oat milk for the froth, or for the taste of your latte?",
            "Could you walk me through your last latte with oat milk?",
            "Can you tell me what the froth does for you?",
            "You said \"froths really well in my latte\". Why does that matter to you?",
            "Are you open to trying a different latte?",
            "Are you still switching your latte to oat milk?",
            "What do you mix your oat milk latte with?",
            "Is there anything about your latte you would change the oat milk for?",
            "If your latte froths well, what does that make possible for you?",
            "When did your latte last froth well, and what exactly did you do?",
            "If your oat milk stopped frothing, could you walk me through what you would do?",
        ] {
            assert_eq!(
                check_small_model_question(question, ANCHORS),
                Ok(()),
                "{question}"
            );
        }
    }

    #[test]
    fn without_anchors_only_the_form_is_checked() {
        assert_eq!(
            check_small_model_question("What matters most to you here?", Anchors::default()),
            Ok(())
        );
        assert!(check_small_model_question("What matters most to you here?", ANCHORS).is_err());
    }

    #[test]
    fn any_text_gives_an_answer() {
        for text in [
            "",
            "?",
            "你好吗?",
            "'''",
            "you",
            "are you",
            "the person you",
        ] {
            let _ = check_small_model_question(text, ANCHORS);
        }
    }
}
