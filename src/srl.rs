//! Semantic-role and discourse hints for the extraction prompt (turn pipeline stage 2.5, seed
//! 000 Path 15).
//!
//! [`analyze`] reads one respondent answer and returns what the extraction LLM can lean on when
//! it proposes relationships:
//!
//! - **discourse relations**: a connective ("because", "so", "although", "if", …) and the two
//!   spans it links, e.g. `causal (because): "I buy oat milk" <- "it tastes better"`;
//! - **predicate frames**: who did what to whom, with `PropBank`-style labels (`ARG0` agent,
//!   `ARG1` patient or theme, `ARG2` recipient, beneficiary or description, `ARGM-*`
//!   modifiers), e.g. `buy: ARG0=I, ARG1=oat milk`.
//!
//! [`SrlAnalysis::hints`] renders both as compact prompt text. [`tag_words`] exposes the tagged
//! words underneath, for offline extraction that chunks phrases of its own.
//!
//! # Method
//!
//! The seed uses a statistical parser (spaCy); no such model runs offline in this crate, so this
//! is a deterministic rule-based shallow parser: split sentences; tokenise with byte offsets,
//! splitting contractions ("don't" → "do" + "n't"); tag parts of speech from a closed-class
//! lexicon, a few hundred verbs with their irregular forms, suffix rules and word position;
//! match discourse connectives from a fixed lexicon (longest first, on whole words); cut
//! clauses at connectives, conjunctions and complementisers; then read roles off word order
//! (subject before the verb, objects after it, prepositional phrases labelled by preposition,
//! head word and verb class).
//!
//! # Role conventions
//!
//! - The subject is `ARG0`, except where it undergoes the event, where it is `ARG1`: passives
//!   ("I was charged twice"), copular and linking verbs with a description ("it is cheap", "it
//!   tastes better"; the description is `ARG2`), and unaccusative verbs with a non-personal
//!   subject and no object ("the battery died"). "There is X" has `ARG1` = X. A passive that
//!   keeps an object makes its subject the recipient `ARG2` ("I wasn't given a laptop").
//! - The first object is `ARG1`. A recipient or beneficiary is `ARG2`: "give it to my
//!   sister", "bought him a coffee", "for my kids", the hearer of "tell"/"ask"/"show".
//! - "I want to save money": `want` has `ARG1` = "to save money", and `save` gets its own frame
//!   with the inherited `ARG0` = "I"; in "I want my kids to eat" the object is the `ARG0` of
//!   `eat`. Other to-infinitives, and "so that"/"in order to" clauses, are `ARGM-PRP`.
//! - "think", "know", "show", … take the clause after them as `ARG1`.
//! - Modifiers: `ARGM-TMP`, `ARGM-LOC`, `ARGM-MNR`, `ARGM-DIR` ("from dairy to oat milk" after
//!   verbs of motion or change), `ARGM-CAU` ("due to the price"), `ARGM-NEG` ("not", "n't",
//!   "never"). As in `PropBank`, a phrase's span includes its preposition ("at work").
//! - Auxiliaries and semi-modals ("have been", "used to", "have to") are not frames; the
//!   predicate is the verb they lead to. Direct questions ("What do you mean?") get no frames.
//!
//! # Limits
//!
//! English only, and heuristic: noun/verb ambiguity ("work", "charge"), phrase attachment,
//! long-distance dependencies, questions and ungrammatical fragments are decided by simple
//! rules and are sometimes wrong. The output is a hint for the LLM, never ground truth, and
//! an empty analysis is always a valid result. Only the first [`MAX_INPUT_CHARS`] characters
//! are read and at most [`MAX_FRAMES`] frames and [`MAX_RELATIONS`] relations are returned,
//! so the cost stays linear in the input. Pure: no I/O, no model files, never panics.

mod chunk;
mod clauses;
mod discourse;
mod frames;
mod groups;
mod hints;
mod lexicon;
mod roles;
mod tagged;
mod tagger;
mod token;
mod words;

use serde::{Deserialize, Serialize};

pub use tagged::{
    TaggedWord, Tense, WordClass, base_is_past, is_finite_be_or_have, is_known_verb,
    is_number_word, is_object_pronoun, is_person_word, is_preposition, is_reflexive, tag_words,
    tense_of, verb_lemma,
};

/// Characters of an answer that are analysed; a spoken answer is rarely over 2,000, and the
/// cap keeps a pasted essay from costing more than a few milliseconds.
pub const MAX_INPUT_CHARS: usize = 5_000;
/// Most frames returned; more would crowd the extraction prompt without adding much.
pub const MAX_FRAMES: usize = 64;
/// Most discourse relations returned, for the same reason.
pub const MAX_RELATIONS: usize = 64;

/// How frames and relations are derived, stated in every [`SrlAnalysis`].
pub const METHOD: &str = "rule-based shallow parse (closed-class and verb lexicons, suffix and \
    word-order heuristics, connective lexicon); English only; heuristic hints, not a trained \
    SRL model";

/// A piece of the input: byte offsets on character boundaries, and the text between them.
///
/// Invariant: `text == input[start..end]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

impl Span {
    /// The span `start..end` of `input`, or `None` when that is not a valid character range.
    pub fn new(input: &str, start: usize, end: usize) -> Option<Self> {
        let text = input.get(start..end)?;
        Some(Self {
            start,
            end,
            text: text.to_string(),
        })
    }
}

/// What a discourse connective says about its two arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RelationKind {
    /// `arg2` is the cause or reason of `arg1` ("because", "since", "due to").
    Causal,
    /// `arg2` is the result of `arg1` ("so", "therefore", "that's why", "as a result").
    Result,
    /// Ordered or overlapping in time ("when", "before", "after", "since 2019").
    Temporal,
    /// `arg1` and `arg2` are opposed ("but", "however", "whereas", "instead").
    Contrast,
    /// `arg1` holds despite `arg2` ("although", "even though", "despite").
    Concession,
    /// `arg1` holds if `arg2` does ("if", "unless", "as long as").
    Condition,
    /// `arg2` is what `arg1` is for ("so that", "in order to").
    Purpose,
    /// `arg2` adds to `arg1` ("also", "moreover", "besides").
    Addition,
}

impl RelationKind {
    /// The lowercase name used in hints and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Causal => "causal",
            Self::Result => "result",
            Self::Temporal => "temporal",
            Self::Contrast => "contrast",
            Self::Concession => "concession",
            Self::Condition => "condition",
            Self::Purpose => "purpose",
            Self::Addition => "addition",
        }
    }
}

/// A connective and the two spans it relates.
///
/// `arg1` is the main or earlier clause, `arg2` the clause (or phrase) the connective
/// introduces. A sentence-initial adverbial ("However, …") has the previous sentence as
/// `arg1`. An empty `arg1` (zero-width, at the marker) means the first argument is outside
/// the answer, typically the interviewer's question ("Because it's cheaper.").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscourseRelation {
    pub kind: RelationKind,
    pub marker: Span,
    pub arg1: Span,
    pub arg2: Span,
}

impl DiscourseRelation {
    /// Whether `arg1` lies outside the analysed text.
    pub fn arg1_unstated(&self) -> bool {
        self.arg1.text.is_empty()
    }
}

/// The role of an argument, named as in `PropBank`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArgRole {
    /// Agent: who does it.
    #[serde(rename = "ARG0")]
    Arg0,
    /// Patient or theme: what it is done to; the subject of a copula or passive.
    #[serde(rename = "ARG1")]
    Arg1,
    /// Recipient, beneficiary, or the description after a copula.
    #[serde(rename = "ARG2")]
    Arg2,
    #[serde(rename = "ARGM-LOC")]
    Loc,
    #[serde(rename = "ARGM-TMP")]
    Tmp,
    #[serde(rename = "ARGM-MNR")]
    Mnr,
    #[serde(rename = "ARGM-PRP")]
    Prp,
    #[serde(rename = "ARGM-CAU")]
    Cau,
    /// Direction or change of state: "switched from dairy to oat milk".
    #[serde(rename = "ARGM-DIR")]
    Dir,
    #[serde(rename = "ARGM-NEG")]
    Neg,
}

impl ArgRole {
    /// The label used in hints and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Arg0 => "ARG0",
            Self::Arg1 => "ARG1",
            Self::Arg2 => "ARG2",
            Self::Loc => "ARGM-LOC",
            Self::Tmp => "ARGM-TMP",
            Self::Mnr => "ARGM-MNR",
            Self::Prp => "ARGM-PRP",
            Self::Cau => "ARGM-CAU",
            Self::Dir => "ARGM-DIR",
            Self::Neg => "ARGM-NEG",
        }
    }

    /// Sort key: numbered arguments first, in order, then modifiers.
    fn core_rank(self) -> u8 {
        match self {
            Self::Arg0 => 0,
            Self::Arg1 => 1,
            Self::Arg2 => 2,
            _ => 3,
        }
    }
}

/// One labelled argument of a predicate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Argument {
    pub role: ArgRole,
    pub span: Span,
}

/// A predicate and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SrlFrame {
    /// The main verb as written (with its particle: "gave up").
    pub predicate: Span,
    /// Dictionary form: "bought" → "buy", "'s" → "be", "gave up" → "give up".
    pub lemma: String,
    /// "not", "n't" or "never" negates the predicate.
    pub negated: bool,
    /// Numbered arguments first, then modifiers in text order.
    pub arguments: Vec<Argument>,
}

/// Everything stage 2.5 produces for one answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SrlAnalysis {
    pub discourse_relations: Vec<DiscourseRelation>,
    pub srl_frames: Vec<SrlFrame>,
    /// One line on how the frames were derived ([`METHOD`]).
    pub method: String,
}

impl Default for SrlAnalysis {
    fn default() -> Self {
        Self {
            discourse_relations: Vec::new(),
            srl_frames: Vec::new(),
            method: METHOD.to_string(),
        }
    }
}

impl SrlAnalysis {
    pub fn discourse_count(&self) -> usize {
        self.discourse_relations.len()
    }

    pub fn frame_count(&self) -> usize {
        self.srl_frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.discourse_relations.is_empty() && self.srl_frames.is_empty()
    }
}

/// Analyses one answer: discourse relations and predicate frames, in text order.
pub fn analyze(text: &str) -> SrlAnalysis {
    let text = match text.char_indices().nth(MAX_INPUT_CHARS) {
        Some((cut, _)) => text.get(..cut).unwrap_or_default(),
        None => text,
    };
    let mut doc = token::Doc::new(text);
    let (discourse_relations, markers) = discourse::find(&doc, MAX_RELATIONS);
    for marker in markers.iter().filter(|m| m.inline) {
        doc.retag(marker.range.clone(), tagger::Tag::Prep);
    }
    let clauses = clauses::split(&doc, &markers);
    let srl_frames = frames::build(&doc, &clauses, &markers, MAX_FRAMES);
    SrlAnalysis {
        discourse_relations,
        srl_frames,
        method: METHOD.to_string(),
    }
}

#[cfg(test)]
mod tests;
