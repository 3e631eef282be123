//! The tagged words of an answer, for callers that chunk phrases of their own (offline
//! extraction builds concept labels from them).
//!
//! The same tokeniser and tagger that [`crate::srl::analyze`] uses, with the same retagging of
//! prepositional connectives ("due to"), so a word's class here agrees with the frames of the
//! analysis of the same text. The internal tag set stays private; [`WordClass`] is its public
//! mirror.

use super::lexicon::Form;
use super::tagger::Tag;
use super::token::{Doc, Shape};
use super::{MAX_INPUT_CHARS, MAX_RELATIONS, discourse, lexicon, tagger, words};

/// A coarse part of speech: just enough to chunk noun and verb phrases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WordClass {
    Pronoun,
    Determiner,
    /// be, have, do and modals.
    Auxiliary,
    /// "not", "n't", "never".
    Negation,
    Preposition,
    /// "to" before a verb.
    Infinitive,
    Conjunction,
    /// Subordinators, wh-words, relative and complementiser "that".
    Subordinator,
    Adverb,
    Adjective,
    Verb,
    Noun,
    /// Numbers and currency or percent signs.
    Number,
    /// A particle after a verb ("pick up").
    Particle,
    Punctuation,
}

impl From<Tag> for WordClass {
    fn from(tag: Tag) -> Self {
        match tag {
            Tag::Pron => Self::Pronoun,
            Tag::Det => Self::Determiner,
            Tag::Aux => Self::Auxiliary,
            Tag::Neg => Self::Negation,
            Tag::Prep => Self::Preposition,
            Tag::Inf => Self::Infinitive,
            Tag::Conj => Self::Conjunction,
            Tag::Sconj => Self::Subordinator,
            Tag::Adv => Self::Adverb,
            Tag::Adj => Self::Adjective,
            Tag::Verb => Self::Verb,
            Tag::Noun => Self::Noun,
            Tag::Num => Self::Number,
            Tag::Part => Self::Particle,
            Tag::Punct => Self::Punctuation,
        }
    }
}

/// One word of the input: its byte range, normalised spelling, class and sentence.
///
/// Invariant: `start..end` lies on character boundaries of the analysed text. A contraction
/// is two words ("don't" → "do" + "not"), each with its own part of the original bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedWord {
    pub start: usize,
    pub end: usize,
    /// Lowercase, apostrophes straightened, contractions expanded where unambiguous.
    pub norm: String,
    pub class: WordClass,
    /// Index of the sentence the word belongs to, counting from 0.
    pub sentence: usize,
    /// Punctuation that may separate clauses ("," ";" ":" "-" brackets).
    pub clause_break: bool,
    /// Capitalised inside its sentence (not its first word, not "I"): part of a name.
    pub name: bool,
}

/// Tags the words of `text` (its first [`MAX_INPUT_CHARS`] characters), in order.
pub fn tag_words(text: &str) -> Vec<TaggedWord> {
    let text = match text.char_indices().nth(MAX_INPUT_CHARS) {
        Some((cut, _)) => text.get(..cut).unwrap_or_default(),
        None => text,
    };
    let mut doc = Doc::new(text);
    let (_, markers) = discourse::find(&doc, MAX_RELATIONS);
    for marker in markers.iter().filter(|m| m.inline) {
        doc.retag(marker.range.clone(), Tag::Prep);
    }
    let mut out = Vec::with_capacity(doc.tokens.len());
    for (sentence, range) in doc.sentences.iter().enumerate() {
        for i in range.clone() {
            let Some(token) = doc.tokens.get(i) else {
                continue;
            };
            out.push(TaggedWord {
                start: token.start,
                end: token.end,
                norm: token.norm.clone(),
                class: doc.tag(i).into(),
                sentence,
                clause_break: token.shape == Shape::Punct && tagger::is_clause_punct(&token.norm),
                name: token.capitalised
                    && i != range.start
                    && !matches!(doc.tag(i), Tag::Pron | Tag::Aux),
            });
        }
    }
    out
}

/// The dictionary form of a verb ("bought" → "buy", "froths" → "froth"); a best guess from
/// suffixes for verbs outside the lexicon.
pub fn verb_lemma(word: &str) -> String {
    lexicon::lemma(&word.to_lowercase())
}

/// Whether `word` is a form of a verb in the lexicon ("froths", "saves", "seen"), whatever
/// its part of speech in a given sentence.
pub fn is_known_verb(word: &str) -> bool {
    lexicon::verb(&word.to_lowercase()).is_some()
}

/// Whether `word` is a form of "be" or "have" that carries a tense ("was", "has").
pub fn is_finite_be_or_have(word: &str) -> bool {
    lexicon::is_finite_be_or_have(&word.to_lowercase())
}

/// Whether `word`'s base form is also its past ("set", "put", "cut"), so that it marks no
/// tense on its own ("So I set up the board").
pub fn base_is_past(word: &str) -> bool {
    lexicon::base_is_past(&word.to_lowercase())
}

/// Whether `word` is an object pronoun that stands right after a verb ("me", "us", "him",
/// "them").
pub fn is_object_pronoun(word: &str) -> bool {
    words::is_object_pronoun(&word.to_lowercase())
}

/// Whether `word` is a reflexive pronoun of a person ("myself", "ourselves").
pub fn is_reflexive(word: &str) -> bool {
    words::is_reflexive(&word.to_lowercase())
}

/// Whether `word` is a preposition ("with", "for").
pub fn is_preposition(word: &str) -> bool {
    words::is_preposition(&word.to_lowercase())
}

/// Whether `word` is a number spelled out ("three", "fifty").
pub fn is_number_word(word: &str) -> bool {
    words::is_number_word(&word.to_lowercase())
}

/// Whether `word` names a person or people ("partner", "kids", "them").
pub fn is_person_word(word: &str) -> bool {
    words::is_person_noun(&word.to_lowercase())
}

/// The time a finite verb form or auxiliary places its clause in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tense {
    Past,
    Present,
}

/// The tense `word` marks on its own: a past form (or a form shared by past and participle,
/// "used", which after "have" is a perfect instead) or "was", "had", "did" is past; a
/// third-person form or "is", "has", "does", "can", "will" is present. Base forms, participles
/// and "-ing" forms mark none ("leave" may be an infinitive).
pub fn tense_of(word: &str) -> Option<Tense> {
    let w = word.to_lowercase();
    match w.as_str() {
        "was" | "were" | "had" | "did" | "could" => Some(Tense::Past),
        "is" | "are" | "am" | "'s" | "'re" | "'m" | "does" | "has" | "can" | "will" | "'ll" => {
            Some(Tense::Present)
        }
        _ => match lexicon::verb(&w)?.form {
            Form::Past | Form::PastOrParticiple => Some(Tense::Past),
            Form::Third => Some(Tense::Present),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_slice_the_text_and_carry_classes() {
        let text = "It's so creamy, and it froths well.";
        let words = tag_words(text);
        for w in &words {
            assert!(text.get(w.start..w.end).is_some(), "{w:?}");
        }
        let class = |norm: &str| words.iter().find(|w| w.norm == norm).map(|w| w.class);
        assert_eq!(class("creamy"), Some(WordClass::Adjective));
        assert_eq!(class("froths"), Some(WordClass::Verb));
        assert_eq!(class("it"), Some(WordClass::Pronoun));
        assert!(words.iter().any(|w| w.norm == "," && w.clause_break));
    }

    #[test]
    fn sentences_are_numbered() {
        let words = tag_words("I like it. It is cheap.");
        assert_eq!(words.first().map(|w| w.sentence), Some(0));
        assert_eq!(words.last().map(|w| w.sentence), Some(1));
    }

    #[test]
    fn prepositional_connectives_are_prepositions() {
        let words = tag_words("I stopped due to the price.");
        let due = words.iter().find(|w| w.norm == "due");
        assert_eq!(due.map(|w| w.class), Some(WordClass::Preposition));
    }

    #[test]
    fn clock_times_are_one_number() {
        let words = tag_words("I missed the 8:10 train.");
        assert!(
            words
                .iter()
                .any(|w| w.norm == "8:10" && w.class == WordClass::Number)
        );
    }

    #[test]
    fn known_verbs_in_any_form() {
        assert!(is_known_verb("Saves"));
        assert!(is_known_verb("seen"));
        assert!(!is_known_verb("texture"));
    }

    #[test]
    fn lemmas_of_regular_and_irregular_verbs() {
        assert_eq!(verb_lemma("bought"), "buy");
        assert_eq!(verb_lemma("Froths"), "froth");
    }
}
