//! Tagging words the verb lexicon knows, and words no list knows, by their position: verbs
//! after subjects and auxiliaries, nouns after determiners and prepositions.

use super::{Ctx, Tag};
use crate::srl::lexicon::{self, Form};
use crate::srl::token::Shape;
use crate::srl::words;

impl Ctx<'_> {
    /// A word the verb lexicon knows: verb in a verb position, noun elsewhere.
    pub(super) fn verb_or_noun(&self, form: Form) -> Tag {
        let Some(p) = self.prev_skipping(|t| t == Tag::Adv) else {
            return self.clause_initial(form);
        };
        if form.finite() && self.after_gerund_subject() {
            return Tag::Verb;
        }
        let catenative = || words::is_catenative(&lexicon::lemma(self.norm_at(p)));
        match self.tag_at(p) {
            Tag::Prep if form == Form::Ing => Tag::Verb,
            // "one less thing to worry about | keeps me calmer": after a stranded preposition,
            // a finite verb with an object pronoun after it starts the main clause.
            Tag::Prep
                if form.finite()
                    && (words::is_object_pronoun(self.next_norm())
                        || self.next_norm() == "you") =>
            {
                Tag::Verb
            }
            Tag::Pron if self.is_subject_at(p) || form == Form::Ing => Tag::Verb,
            // "the rest of it went really well": a past tense after an object pronoun, in a
            // clause with no verb yet, is that clause's verb.
            Tag::Pron if form == Form::Past && !self.has_verb => Tag::Verb,
            // "Running is what keeps me sane": a free relative's verb; "what let me be calm":
            // a past that spells like its base, known by the object after it.
            Tag::Pron
                if matches!(self.norm_at(p), "what" | "whatever")
                    && (form.finite()
                        || (form == Form::Base && words::is_object_pronoun(self.next_norm()))) =>
            {
                Tag::Verb
            }
            Tag::Pron | Tag::Noun if form == Form::Base && self.after_causative_object(p) => {
                Tag::Verb
            }
            Tag::Verb if form == Form::Ing && catenative() => Tag::Verb,
            Tag::Verb
                if form.finite()
                    && (self.ends_relative_clause() || self.ends_contact_relative(p)) =>
            {
                Tag::Verb
            }
            Tag::Sconj if matches!(self.norm_at(p), "who" | "which" | "that") => Tag::Verb,
            Tag::Inf => Tag::Verb,
            // "feeling left out", "got stuck": a participle after a verb of feeling or
            // becoming is the state the subject ended up in.
            Tag::Verb
                if form.participial()
                    && words::takes_participle(&lexicon::lemma(self.norm_at(p))) =>
            {
                Tag::Adj
            }
            Tag::Det | Tag::Adj | Tag::Num | Tag::Prep | Tag::Pron | Tag::Verb => Tag::Noun,
            Tag::Aux => self.after_aux(p, form),
            Tag::Neg => match self.prev_skipping(|t| matches!(t, Tag::Adv | Tag::Neg)) {
                Some(a) if self.tag_at(a) == Tag::Aux => self.after_aux(a, form),
                _ => Tag::Verb,
            },
            Tag::Noun => self.after_noun(p, form),
            Tag::Conj | Tag::Punct | Tag::Sconj | Tag::Part | Tag::Adv => self.clause_initial(form),
        }
    }

    /// The clause so far is a gerund phrase and its complements ("Being patient with my kids",
    /// "Staying calm"): a finite verb now is the clause's verb, with the gerund phrase as its
    /// subject ("… makes me feel like a good parent", "… helps me be a better mum"), where
    /// after an adjective or a noun it would otherwise read as a noun.
    pub(super) fn after_gerund_subject(&self) -> bool {
        let start = (self.sentence.start..self.i)
            .rev()
            .find(|&k| match self.tag_at(k) {
                Tag::Conj | Tag::Sconj => true,
                Tag::Punct => super::is_clause_punct(self.norm_at(k)),
                _ => false,
            })
            .map_or(self.sentence.start, |k| k + 1);
        let gerund = self.norm_at(start).ends_with("ing")
            && matches!(self.tag_at(start), Tag::Verb | Tag::Aux | Tag::Noun);
        gerund
            && start + 1 < self.i
            && (start + 1..self.i).all(|k| {
                matches!(
                    self.tag_at(k),
                    Tag::Adj | Tag::Noun | Tag::Det | Tag::Prep | Tag::Pron | Tag::Adv | Tag::Num
                )
            })
    }

    /// A relative clause ("that I use") has its verb, so a second finite verb belongs to
    /// the main clause ("The app that I use shows …").
    pub(super) fn ends_relative_clause(&self) -> bool {
        let relative = (self.sentence.start..self.i).rev().find(|&k| {
            self.tag_at(k) == Tag::Sconj && matches!(self.norm_at(k), "that" | "which" | "who")
        });
        relative.is_some_and(|r| {
            r > self.sentence.start
                && matches!(self.tag_at(r - 1), Tag::Noun | Tag::Pron)
                && (r + 1..self.i).any(|k| self.tag_at(k) == Tag::Verb)
                && !(r + 1..self.i).any(|k| matches!(self.tag_at(k), Tag::Conj | Tag::Sconj))
        })
    }

    /// The verb at `p` ends a relative clause without "that" after a gerund or a verb
    /// ("Being someone people can trust | matters"): a noun or indefinite pronoun, a subject,
    /// auxiliaries, then the verb with no object. A finite verb now is the main clause's.
    pub(super) fn ends_contact_relative(&self, p: usize) -> bool {
        let mut k = p;
        while k > self.sentence.start
            && matches!(self.tag_at(k - 1), Tag::Aux | Tag::Neg | Tag::Adv)
        {
            k -= 1;
        }
        let Some(subject) = k.checked_sub(1).filter(|s| *s > self.sentence.start) else {
            return false;
        };
        let subject_fits = match self.tag_at(subject) {
            Tag::Pron => words::is_relative_subject(self.norm_at(subject)),
            Tag::Noun => true,
            _ => false,
        };
        let head = subject - 1;
        let head_fits = match self.tag_at(head) {
            Tag::Noun => true,
            Tag::Pron => crate::srl::chunk::is_indefinite(self.norm_at(head)),
            _ => false,
        };
        let verb_before =
            (self.sentence.start..head).any(|v| matches!(self.tag_at(v), Tag::Verb | Tag::Aux));
        subject_fits && head_fits && verb_before
    }

    /// The object at `p` follows "make"/"let"/"help"/…, so a base verb after it is a bare
    /// infinitive ("it made me feel bloated").
    pub(super) fn after_causative_object(&self, p: usize) -> bool {
        // "makes the first coffee of the day feel": an "of" phrase stays inside the object.
        let before = (self.sentence.start..=p).rev().take(8).find(|&k| {
            !matches!(
                self.tag_at(k),
                Tag::Noun | Tag::Adj | Tag::Det | Tag::Num | Tag::Pron
            ) && self.norm_at(k) != "of"
        });
        before.is_some_and(|k| {
            self.tag_at(k) == Tag::Verb && words::is_causative(&lexicon::lemma(self.norm_at(k)))
        })
    }

    /// After an auxiliary: do and modals take a base verb, be takes "-ing" or a participle,
    /// have takes a participle; anything else is a noun ("I have work").
    pub(super) fn after_aux(&self, p: usize, form: Form) -> Tag {
        let a = self.norm_at(p);
        // "set", "put", "cut": one spelling for base, past and participle.
        let participle = form.participial() || lexicon::is_participle(self.norm_at(self.i));
        let verb = if lexicon::is_do(a) || lexicon::is_modal(a) {
            form == Form::Base || (a == "'d" && form.participial())
        } else if lexicon::is_be(a) {
            if participle && self.speakers_state(p) {
                return Tag::Adj;
            }
            form == Form::Ing || participle
        } else {
            participle || form == Form::Past
        };
        if verb { Tag::Verb } else { Tag::Noun }
    }

    /// "I was exhausted, my dad was getting wound up", "I was gobsmacked.": a regular
    /// participle that ends its clause after "I/we" and "be" is how the speaker was, not
    /// something done to them. `p` is the form of "be".
    fn speakers_state(&self, p: usize) -> bool {
        let word = self.norm_at(self.i);
        let ends = matches!(self.next_norm(), "" | "," | "." | "!" | ";" | "and" | "but");
        let speaker = p
            .checked_sub(1)
            .is_some_and(|s| matches!(self.norm_at(s), "i" | "we"));
        word.ends_with("ed") && ends && speaker
    }

    /// After a noun in a clause without a verb, an inflected form is the verb ("the battery
    /// died"); a base form only after a plural ("my kids love it").
    pub(super) fn after_noun(&self, p: usize, form: Form) -> Tag {
        let noun = self.norm_at(p);
        let plural = noun.ends_with('s') && !noun.ends_with("ss") && !noun.ends_with("'s");
        let next_is_verb = lexicon::is_aux(self.next_norm())
            || lexicon::verb(self.next_norm()).is_some_and(|r| r.form.finite());
        let first_verb =
            !self.has_verb && !next_is_verb && (form.finite() || (form == Form::Base && plural));
        // "the charger that I use every day works": the main clause resumes. "When I'm calm
        // the kids talk to me": after a description, a noun group and a finite verb are a
        // new clause, whether or not a comma marks it.
        let resumes = self.has_verb
            && ((form.finite() && self.ends_relative_clause())
                || ((form.finite() || (form == Form::Base && plural))
                    && self.subject_after_description(p)));
        // "oat milk depending on the price": a participle clause after the object.
        let next = self.next_norm();
        let participle_clause = form == Form::Ing
            && (words::is_preposition(next)
                || words::is_determiner(next)
                || words::is_pronoun(next));
        // "the boxes kept arriving", "a box let me skip weeks": a verb that takes an "-ing"
        // verb, or an object pronoun, right after it is the clause's verb, whatever came
        // before.
        let word = self.norm_at(self.i);
        let takes_next = (words::is_catenative(&lexicon::lemma(word))
            && next.ends_with("ing")
            && lexicon::verb(next).is_some())
            || (form != Form::Ing
                && words::is_object_pronoun(next)
                && !matches!(next, "her" | "it"));
        if first_verb || resumes || participle_clause || takes_next {
            Tag::Verb
        } else {
            Tag::Noun
        }
    }

    /// The noun at `p` heads a noun group that opens with a determiner right after an
    /// adjective ("calm | the kids").
    fn subject_after_description(&self, p: usize) -> bool {
        let mut k = p;
        while k > self.sentence.start && matches!(self.tag_at(k - 1), Tag::Noun | Tag::Adj) {
            k -= 1;
        }
        // "calm | the kids", "froths properly | my morning flat white": a description or a
        // manner adverb closes the clause before.
        // "when I plugged in | the screen just said payment error": a phrasal verb's particle
        // with nothing after it but a noun group and a finite verb ends its clause too.
        let particle = |at: usize| {
            matches!(
                self.norm_at(at),
                "in" | "up" | "out" | "off" | "down" | "back" | "over"
            ) && at > self.sentence.start
                && self.tag_at(at - 1) == Tag::Verb
        };
        k > self.sentence.start + 1
            && self.tag_at(k - 1) == Tag::Det
            && (self.tag_at(k - 2) == Tag::Adj
                || particle(k - 2)
                || (self.tag_at(k - 2) == Tag::Adv
                    && self.norm_at(k - 2).ends_with("ly")
                    && k > self.sentence.start + 2
                    && self.tag_at(k - 3) == Tag::Verb))
    }

    /// Nothing of the clause follows the current word: the sentence ends, a clause breaks, or
    /// a coordinator starts the next one.
    fn closes_clause(&self) -> bool {
        self.ends_here() || matches!(self.next_norm(), "and" | "or" | "but")
    }

    /// The sentence ends or punctuation follows the current word.
    fn ends_here(&self) -> bool {
        self.next_norm().is_empty()
            || self
                .tokens
                .get(self.i + 1)
                .is_some_and(|t| t.shape == Shape::Punct)
    }

    /// The previous word is a noun of time or a person ("hours", "the kids"), which a
    /// participle describes ("spent hours googling", "the kids arguing").
    fn after_time_or_person(&self) -> bool {
        self.prev().is_some_and(|p| {
            let n = self.norm_at(p);
            self.tag_at(p) == Tag::Pron || words::is_time_noun(n) || words::is_person_noun(n)
        })
    }

    /// At a clause start a verb-capable word is a gerund or noun subject when a verb follows
    /// ("Charging takes ages", "Work is busy"), otherwise a verb.
    pub(super) fn clause_initial(&self, form: Form) -> Tag {
        let next = self.next_norm();
        let verb_follows =
            lexicon::is_aux(next) || lexicon::verb(next).is_some_and(|r| r.form.finite());
        let nothing_follows = self.ends_here() || matches!(next, "and" | "or");
        if verb_follows || (nothing_follows && form == Form::Base) {
            Tag::Noun
        } else {
            Tag::Verb
        }
    }

    /// A word neither list knows.
    pub(super) fn unknown(&self, w: &str, capitalised: bool) -> Tag {
        let chars = w.chars().count();
        let verb_slot = self.verb_slot();
        // A capitalised word inside a sentence is a name ("Oatly"), whatever its suffix.
        if capitalised && self.i > self.sentence.start && !verb_slot {
            return Tag::Noun;
        }
        if words::is_ly_adjective(w) {
            return Tag::Adj;
        }
        if w.ends_with("ly") && chars > 4 && !words::is_ly_noun(w) {
            return Tag::Adv;
        }
        // "level-headed", "open-minded", "self-employed": a compound in "-ed" describes; a
        // prefix before the hyphen ("re-used", "co-signed") keeps the verb.
        let compound_participle = w.ends_with("ed")
            && w.split_once('-').is_some_and(|(first, _)| {
                !matches!(
                    first,
                    "re" | "co" | "pre" | "un" | "de" | "mis" | "dis" | "over"
                )
            });
        if compound_participle {
            return Tag::Adj;
        }
        let be = self
            .prev_skipping(|t| t == Tag::Adv)
            .filter(|&p| self.tag_at(p) == Tag::Aux && lexicon::is_be(self.norm_at(p)));
        if be.is_some_and(|p| self.speakers_state(p)) {
            return Tag::Adj;
        }
        if verb_slot {
            return Tag::Verb;
        }
        let after_be_or_have = self
            .prev_skipping(|t| matches!(t, Tag::Adv | Tag::Neg))
            .filter(|&p| self.tag_at(p) == Tag::Aux)
            .is_some_and(|p| {
                let a = self.norm_at(p);
                lexicon::is_be(a) || lexicon::is_have(a)
            });
        if after_be_or_have && (w.ends_with("ing") || w.ends_with("ed")) && chars > 4 {
            return Tag::Verb;
        }
        // "instead of collapsing on the sofa": a gerund after a preposition with a phrase of
        // its own after it, as for known verbs ("charge you for overstaying," stays a noun).
        let after_preposition = self
            .prev_skipping(|t| t == Tag::Adv)
            .is_some_and(|p| self.tag_at(p) == Tag::Prep);
        let next = self.next_norm();
        let own_phrase =
            words::is_preposition(next) || words::is_determiner(next) || words::is_particle(next);
        if after_preposition
            && own_phrase
            && w.ends_with("ing")
            && chars > 5
            && !words::is_time_noun(w)
            && !w.ends_with("thing")
        {
            return Tag::Verb;
        }
        // "… and pulled into a services", "annoyed but also relieved": a past form after a
        // conjunction continues the verbs before it.
        let after_conjunction = self
            .prev_skipping(|t| matches!(t, Tag::Adv | Tag::Neg))
            .is_some_and(|p| self.tag_at(p) == Tag::Conj);
        let verb_before = (self.sentence.start..self.i).any(|k| self.tag_at(k) == Tag::Verb);
        if after_conjunction && verb_before && w.ends_with("ed") && chars > 4 {
            return Tag::Verb;
        }
        let after_object = self
            .prev()
            .is_some_and(|p| matches!(self.tag_at(p), Tag::Noun | Tag::Pron));
        if self.has_verb && after_object && w.ends_with("ing") && chars > 4 {
            // "spent hours googling": a gerund after the object. With no object of its own
            // after a noun that is neither a time nor a person, it is the head of a compound
            // instead ("I don't need the noise cancelling at home", "we do the meal planning").
            let no_object = self.closes_clause() || words::is_preposition(self.next_norm());
            return if no_object && !self.after_time_or_person() {
                Tag::Noun
            } else {
                Tag::Verb
            };
        }
        let adjectival = [
            "ous", "ful", "less", "ive", "able", "ible", "ic", "ish", "est",
        ]
        .iter()
        .any(|s| w.ends_with(s));
        // "a lot of plastic for one person": after "of" or a determiner, a word that ends
        // its group (a preposition, a break or the end after it) is the noun itself.
        let heads_group = self
            .prev()
            .is_some_and(|p| self.tag_at(p) == Tag::Det || self.norm_at(p) == "of")
            && (words::is_preposition(next)
                || next.is_empty()
                || self
                    .tokens
                    .get(self.i + 1)
                    .is_some_and(|t| t.shape == Shape::Punct));
        if adjectival && chars > 4 && !words::is_suffix_noun(w) && !heads_group {
            Tag::Adj
        } else {
            Tag::Noun
        }
    }
}
