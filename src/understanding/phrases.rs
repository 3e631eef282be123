//! Candidate concept phrases of one answer, in the respondent's words, read off the SRL frames
//! and the tagged words.
//!
//! Per predicate frame (verbs of saying and thinking are skipped: "I think" frames the clause
//! after it, which has frames of its own):
//! - a content subject ("the creamy texture", not "it") is a phrase of its own;
//! - "be" yields its description ("it's so creamy" → "creamy"); a content subject with a one-
//!   or two-word description reads as one attribute ("the price is a bit high" → "high price");
//! - light verbs ("have", "like", "buy", …) yield their object ("has a smooth mouthfeel" →
//!   "smooth mouthfeel");
//! - linking verbs keep the verb ("feel less guilty", "tastes better"), with their subject
//!   when it has content ("my coffee feel like a treat" → "coffee feel like a treat");
//! - causative verbs ("makes", "helps", "lets") yield nothing themselves: the verb they govern
//!   has its own frame, and the link from the subject to it is recorded as a [`CausalPair`];
//! - any other verb yields verb + objects + manner, direction and place
//!   ("froths really well" → "froths well", "waste less").
//!
//! Words that no frame covers (fragments such as "The creamy texture again, really." or
//! "not watery like almond milk") are chunked into noun and adjective phrases. Labels are
//! normalised per the naming conventions: lowercase, leading determiners and possessives
//! dropped, hedges and intensifiers dropped, auxiliaries dropped except "being", negation
//! kept, comparison tails ("… than dairy", "… like almond milk") cut, at most
//! [`MAX_LABEL_WORDS`] words. The quote is always the answer's bytes from the phrase's first
//! to its last word, so it is an exact substring.

use std::ops::Range;

use crate::srl::{ArgRole, Argument, Span, SrlAnalysis, SrlFrame, TaggedWord, WordClass};

use super::lexicon;

/// Longest label in words: the naming conventions ask for 2–5; one more keeps a verb phrase
/// with its object and context ("do my bit for the planet").
pub(super) const MAX_LABEL_WORDS: usize = 6;

/// Where a phrase came from; decides its confidence and how links pick it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// The content subject of a frame.
    Subject,
    /// A frame's predicate phrase, description or object.
    Predicate,
    /// A noun or adjective phrase outside every frame.
    Fragment,
}

/// One candidate concept.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Phrase {
    pub label: String,
    /// Byte range of the quote in the answer.
    pub start: usize,
    pub end: usize,
    pub origin: Origin,
    /// Normalised words of the label, for stance.
    pub words: Vec<String>,
}

/// "The subject's phrase brings about the result's phrase", from a causative verb; indices
/// into the phrase list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CausalPair {
    pub cause: usize,
    pub effect: usize,
}

/// The phrases of an answer, in text order, and the causative links between them.
#[derive(Debug, Default)]
pub(super) struct Phrases {
    pub list: Vec<Phrase>,
    pub causal: Vec<CausalPair>,
}

/// Reads the candidate phrases of `answer` from its tagged `words` and SRL `analysis`.
pub(super) fn find(answer: &str, words: &[TaggedWord], analysis: &SrlAnalysis) -> Phrases {
    let reader = Reader { answer, words };
    let mut out = Phrases::default();
    let mut covered = vec![false; words.len()];
    // Phrase index of each frame's main phrase, for causative links.
    let mut main_of: Vec<Option<usize>> = vec![None; analysis.srl_frames.len()];
    let mut subject_of: Vec<Option<usize>> = vec![None; analysis.srl_frames.len()];
    for (fi, frame) in analysis.srl_frames.iter().enumerate() {
        if reader.is_comparison(frame) {
            // "not watery like almond milk": no verb at all; the words stay for fragments.
            continue;
        }
        reader.mark(&mut covered, frame);
        if lexicon::is_filler_verb(&frame.lemma) {
            continue;
        }
        let read = reader.frame(frame);
        if let Some(p) = read.setting {
            push(&mut out.list, p);
        }
        if let (Some(p), Some(slot)) = (read.subject, subject_of.get_mut(fi)) {
            *slot = Some(push(&mut out.list, p));
        }
        if let (Some(p), Some(slot)) = (read.main, main_of.get_mut(fi)) {
            *slot = Some(push(&mut out.list, p));
        }
    }
    link_causatives(analysis, &main_of, &subject_of, &mut out.causal);
    for p in reader.fragments(&covered) {
        push(&mut out.list, p);
    }
    order(&mut out);
    out
}

/// Adds `phrase` unless one with the same label exists; returns the index of the phrase with
/// that label.
fn push(list: &mut Vec<Phrase>, phrase: Phrase) -> usize {
    if let Some(i) = list.iter().position(|p| p.label == phrase.label) {
        return i;
    }
    list.push(phrase);
    list.len() - 1
}

/// A causative frame with a content subject links that subject to the main phrase of the
/// frame it governs (the next frame whose predicate lies inside its arguments), or to its own
/// object phrase when it governs none.
fn link_causatives(
    analysis: &SrlAnalysis,
    main_of: &[Option<usize>],
    subject_of: &[Option<usize>],
    causal: &mut Vec<CausalPair>,
) {
    for (fi, frame) in analysis.srl_frames.iter().enumerate() {
        if !lexicon::is_causative_verb(&frame.lemma) {
            continue;
        }
        let Some(cause) = subject_of.get(fi).copied().flatten() else {
            continue;
        };
        let reach = frame
            .arguments
            .iter()
            .filter(|a| a.span.start >= frame.predicate.end)
            .map(|a| a.span.end)
            .max()
            .unwrap_or(frame.predicate.end);
        let governed = analysis
            .srl_frames
            .iter()
            .enumerate()
            .skip(fi + 1)
            .find(|(_, f)| f.predicate.start >= frame.predicate.end && f.predicate.end <= reach)
            .and_then(|(gi, _)| main_of.get(gi).copied().flatten());
        let effect = governed.or_else(|| main_of.get(fi).copied().flatten());
        if let Some(effect) = effect.filter(|e| *e != cause) {
            causal.push(CausalPair { cause, effect });
        }
    }
}

/// Sorts phrases by position, remapping the causal pairs.
fn order(phrases: &mut Phrases) {
    let mut indexed: Vec<(usize, Phrase)> = phrases.list.drain(..).enumerate().collect();
    indexed.sort_by_key(|(_, p)| (p.start, p.end));
    let mut new_index = vec![0; indexed.len()];
    for (new, (old, _)) in indexed.iter().enumerate() {
        if let Some(slot) = new_index.get_mut(*old) {
            *slot = new;
        }
    }
    phrases.list = indexed.into_iter().map(|(_, p)| p).collect();
    for pair in &mut phrases.causal {
        pair.cause = new_index.get(pair.cause).copied().unwrap_or(pair.cause);
        pair.effect = new_index.get(pair.effect).copied().unwrap_or(pair.effect);
    }
}

/// What one frame yields.
struct FramePhrases {
    subject: Option<Phrase>,
    main: Option<Phrase>,
    /// A time or place phrase before the verb that sets the scene ("on school days").
    setting: Option<Phrase>,
}

struct Reader<'a> {
    answer: &'a str,
    words: &'a [TaggedWord],
}

impl Reader<'_> {
    /// Word indices inside a byte span.
    fn range(&self, span: &Span) -> Range<usize> {
        let start = self
            .words
            .iter()
            .position(|w| w.start >= span.start)
            .unwrap_or(self.words.len());
        let end = self
            .words
            .iter()
            .rposition(|w| w.end <= span.end)
            .map_or(start, |i| (i + 1).max(start));
        start..end
    }

    fn word(&self, i: usize) -> Option<&TaggedWord> {
        self.words.get(i)
    }

    fn mark(&self, covered: &mut [bool], frame: &SrlFrame) {
        let spans =
            std::iter::once(&frame.predicate).chain(frame.arguments.iter().map(|a| &a.span));
        for span in spans {
            for i in self.range(span) {
                if let Some(c) = covered.get_mut(i) {
                    *c = true;
                }
            }
        }
    }

    fn frame(&self, frame: &SrlFrame) -> FramePhrases {
        let predicate = self.range(&frame.predicate);
        let subject = self.subject(frame);
        let mut after: Vec<(ArgRole, Range<usize>)> = frame
            .arguments
            .iter()
            .filter(|a| a.span.start >= frame.predicate.end && a.role != ArgRole::Neg)
            .map(|a| (a.role, self.range(&a.span)))
            .collect();
        after.sort_by_key(|(_, r)| r.start);
        let lemma = frame.lemma.as_str();
        let subject_phrase = || {
            subject
                .clone()
                .and_then(|r| self.phrase(&[r], Origin::Subject))
        };
        if lexicon::is_value_verb(lemma) {
            // "Family matters most to me": the subject is what matters.
            return FramePhrases {
                setting: None,
                subject: None,
                main: subject
                    .clone()
                    .and_then(|r| self.phrase(&[r], Origin::Predicate)),
            };
        }
        if lemma == "be" {
            let mut read = self.copular(subject, &after);
            read.setting = self.setting(frame);
            return read;
        }
        if lexicon::is_causative_verb(lemma) && !lexicon::is_content_causative(lemma) {
            // The verb it governs has a frame of its own; only a plain object is a phrase here.
            let object = self
                .core_object(&after)
                .filter(|r| !self.has_class(r.clone(), &[WordClass::Verb]));
            return FramePhrases {
                setting: None,
                subject: subject_phrase(),
                main: object.and_then(|r| self.phrase(&[r], Origin::Predicate)),
            };
        }
        if lexicon::is_light_verb(lemma) {
            let object = self
                .core_object(&after)
                .or_else(|| after.first().map(|(_, r)| r.clone()))
                .filter(|r| !self.is_infinitive(r) && self.has_content(r.clone()));
            return FramePhrases {
                setting: None,
                subject: subject_phrase(),
                main: object.and_then(|r| self.phrase(&[r], Origin::Predicate)),
            };
        }
        let mut parts: Vec<Range<usize>> = Vec::new();
        let linking = lexicon::is_linking_verb(lemma);
        let joined_subject = linking && subject.is_some();
        if joined_subject && let Some(s) = subject.clone() {
            parts.push(s);
        }
        if frame.negated {
            parts.extend(
                frame
                    .arguments
                    .iter()
                    .filter(|a| a.role == ArgRole::Neg && a.span.end <= frame.predicate.start)
                    .map(|a| self.range(&a.span)),
            );
        }
        let predicate = self.with_degree(predicate);
        let tail = self.contiguous(&after, predicate.end, linking);
        parts.push(predicate);
        parts.extend(tail);
        parts.sort_by_key(|r| r.start);
        let main = self
            .phrase(&parts, Origin::Predicate)
            .filter(|p| p.words.len() >= 2);
        FramePhrases {
            setting: self.setting(frame),
            subject: if joined_subject {
                None
            } else {
                subject_phrase()
            },
            main,
        }
    }

    /// "like" right after an adjective is a comparison the tagger read as a verb.
    fn is_comparison(&self, frame: &SrlFrame) -> bool {
        let predicate = self.range(&frame.predicate);
        frame.lemma == "like"
            && predicate
                .start
                .checked_sub(1)
                .and_then(|i| self.word(i))
                .is_some_and(|w| w.class == WordClass::Adjective)
    }

    /// A time or place phrase before the verb with a noun of substance ("on school days",
    /// "at the services"), as the scene of the event.
    fn setting(&self, frame: &SrlFrame) -> Option<Phrase> {
        let arg = frame.arguments.iter().find(|a| {
            matches!(a.role, ArgRole::Tmp | ArgRole::Loc) && a.span.end <= frame.predicate.start
        })?;
        let range = self.range(&arg.span);
        let has_noun = range.clone().filter_map(|i| self.word(i)).any(|w| {
            matches!(w.class, WordClass::Noun | WordClass::Number)
                && !lexicon::is_empty_word(&w.norm)
        });
        has_noun
            .then(|| self.phrase(&[range], Origin::Subject))
            .flatten()
    }

    /// The frame's subject when it is a noun phrase with content ("the creamy texture", not
    /// "it", not a clause): its agent or patient before the verb, or a phrase the parser gave
    /// another role before the verb ("Family matters").
    fn subject(&self, frame: &SrlFrame) -> Option<Range<usize>> {
        let before: Vec<&Argument> = frame
            .arguments
            .iter()
            .filter(|a| a.span.end <= frame.predicate.start)
            .collect();
        if let Some(core) = before
            .iter()
            .find(|a| matches!(a.role, ArgRole::Arg0 | ArgRole::Arg1))
        {
            let range = self.range(&core.span);
            let nominal = !self.has_class(range.clone(), &[WordClass::Verb, WordClass::Auxiliary]);
            return (nominal && self.has_content(range.clone())).then_some(range);
        }
        // The tagger reads a sentence-initial noun before an intransitive verb as a manner
        // adverb ("Family matters"): one word that is no hedge or intensifier is the subject.
        let manner = before.iter().find(|a| a.role == ArgRole::Mnr)?;
        let range = self.range(&manner.span);
        let word = self.word(range.start).filter(|_| range.len() == 1)?;
        let plain = !lexicon::is_intensifier(&word.norm)
            && !lexicon::is_hedge(&word.norm)
            && !lexicon::is_empty_word(&word.norm);
        plain.then_some(range)
    }

    /// The predicate extended over degree words right after it ("waste less", "froths
    /// better"), which the parser leaves out of every argument.
    fn with_degree(&self, predicate: Range<usize>) -> Range<usize> {
        let mut end = predicate.end;
        while self
            .word(end)
            .is_some_and(|w| lexicon::is_degree_word(&w.norm))
        {
            end += 1;
        }
        predicate.start..end
    }

    /// The arguments after a verb that belong in its label: objects, descriptions, manner,
    /// direction and place, a "for" purpose or duration, and a time phrase right after the verb
    /// ("start the day"); in text order, stopping at the first gap with a clause break. A
    /// linking verb takes whatever comes first ("feel in control of my day").
    fn contiguous(
        &self,
        after: &[(ArgRole, Range<usize>)],
        from: usize,
        linking: bool,
    ) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut end = from;
        for (i, (role, range)) in after.iter().enumerate() {
            let starts_with = |word: &str| self.word(range.start).is_some_and(|w| w.norm == word);
            let wanted = match role {
                ArgRole::Arg1 | ArgRole::Arg2 | ArgRole::Mnr | ArgRole::Dir | ArgRole::Loc => true,
                ArgRole::Prp | ArgRole::Tmp if starts_with("for") => true,
                ArgRole::Tmp => range.start == from && starts_with("the"),
                _ => false,
            } || (linking && i == 0);
            if !wanted || !self.joined(end, range.start) {
                break;
            }
            out.push(range.clone());
            end = range.end;
        }
        out
    }

    /// At most two words lie between word `end` and word `start`, none a clause break or a
    /// conjunction.
    fn joined(&self, end: usize, start: usize) -> bool {
        let gap = end.min(start)..start;
        gap.len() <= 2
            && gap.filter_map(|i| self.word(i)).all(|w| {
                !w.clause_break
                    && !matches!(w.class, WordClass::Conjunction | WordClass::Subordinator)
            })
    }

    fn has_class(&self, range: Range<usize>, classes: &[WordClass]) -> bool {
        range
            .filter_map(|i| self.word(i))
            .any(|w| classes.contains(&w.class))
    }

    /// "be": the description with what follows it, joined with a content subject when both
    /// are one or two words ("the price is a bit high" → "high price").
    fn copular(
        &self,
        subject: Option<Range<usize>>,
        after: &[(ArgRole, Range<usize>)],
    ) -> FramePhrases {
        let first = after
            .iter()
            .position(|(role, _)| *role == ArgRole::Arg2)
            .unwrap_or(0);
        let rest = after.get(first..).unwrap_or_default();
        let mut description: Vec<Range<usize>> = Vec::new();
        let mut end = None;
        for (_, next) in rest {
            if end.is_some_and(|e| !self.joined(e, next.start)) {
                break;
            }
            description.push(next.clone());
            end = Some(next.end);
        }
        let subject_phrase = subject
            .clone()
            .and_then(|s| self.phrase(&[s], Origin::Subject));
        let described = self.phrase(&description, Origin::Predicate);
        if let (Some(s), Some(d), Some(sp)) = (&subject, &described, &subject_phrase) {
            let adjectival = d.words.first().is_some_and(|first| {
                self.words
                    .iter()
                    .any(|t| t.norm == *first && t.class == WordClass::Adjective)
            });
            if adjectival && d.words.len() <= 2 && sp.words.len() <= 2 {
                let mut words = d.words.clone();
                words.extend(sp.words.iter().cloned());
                return FramePhrases {
                    setting: None,
                    subject: None,
                    main: Some(Phrase {
                        label: words.join(" "),
                        start: self.word(s.start).map_or(d.start, |w| w.start),
                        end: d.end.max(sp.end),
                        origin: Origin::Predicate,
                        words,
                    }),
                };
            }
        }
        FramePhrases {
            setting: None,
            subject: subject_phrase,
            main: described,
        }
    }

    /// The first object or description after the verb.
    fn core_object(&self, after: &[(ArgRole, Range<usize>)]) -> Option<Range<usize>> {
        after
            .iter()
            .find(|(role, _)| *role == ArgRole::Arg1)
            .or_else(|| after.iter().find(|(role, _)| *role == ArgRole::Arg2))
            .map(|(_, r)| r.clone())
            .filter(|r| self.has_content(r.clone()))
    }

    fn is_infinitive(&self, range: &Range<usize>) -> bool {
        self.word(range.start).is_some_and(|w| {
            w.class == WordClass::Infinitive || (w.norm == "to" && range.len() > 1)
        })
    }

    /// A noun, adjective, number or verb that is not an empty word.
    fn has_content(&self, range: Range<usize>) -> bool {
        range.filter_map(|i| self.word(i)).any(|w| {
            matches!(
                w.class,
                WordClass::Noun | WordClass::Adjective | WordClass::Number | WordClass::Verb
            ) && !lexicon::is_empty_word(&w.norm)
        })
    }

    /// The phrase made of the words of `parts` (ranges in text order), normalised.
    fn phrase(&self, parts: &[Range<usize>], origin: Origin) -> Option<Phrase> {
        let mut indices: Vec<usize> = parts.iter().flat_map(Clone::clone).collect();
        indices.sort_unstable();
        indices.dedup();
        let kept = self.label_words(&indices);
        let first = *kept.first()?;
        let last = *kept.last()?;
        let words: Vec<String> = kept
            .iter()
            .filter_map(|&i| self.word(i))
            .map(|w| w.norm.clone())
            .collect();
        if !worth_a_concept(&words) {
            return None;
        }
        let start = self.word(first)?.start;
        let end = self.word(last)?.end;
        self.answer.get(start..end)?;
        Some(Phrase {
            label: words.join(" "),
            start,
            end,
            origin,
            words,
        })
    }

    /// The indices of `indices` that belong in a label, cut to [`MAX_LABEL_WORDS`].
    fn label_words(&self, indices: &[usize]) -> Vec<usize> {
        let mut kept: Vec<usize> = Vec::new();
        let mut previous: Option<&TaggedWord> = None;
        for &i in indices {
            let Some(w) = self.word(i) else { continue };
            let comparison_tail = matches!(w.norm.as_str(), "than" | "like" | "unlike")
                && previous
                    .is_some_and(|p| matches!(p.class, WordClass::Adjective | WordClass::Adverb));
            if comparison_tail {
                break;
            }
            let hedge_noun = matches!(w.norm.as_str(), "bit" | "little" | "lot")
                && previous.is_some_and(|p| p.norm == "a")
                && self
                    .word(i + 1)
                    .is_some_and(|n| matches!(n.class, WordClass::Adjective | WordClass::Adverb));
            previous = Some(w);
            if hedge_noun {
                continue;
            }
            if keeps(w, kept.is_empty()) {
                kept.push(i);
            }
        }
        kept.truncate(MAX_LABEL_WORDS);
        while let Some(&last) = kept.last() {
            let dangling = self.word(last).is_none_or(|w| {
                matches!(
                    w.class,
                    WordClass::Preposition
                        | WordClass::Determiner
                        | WordClass::Conjunction
                        | WordClass::Infinitive
                        | WordClass::Subordinator
                ) || w.norm == "not"
            });
            if !dangling {
                break;
            }
            kept.pop();
        }
        kept
    }

    /// Noun and adjective phrases among the words no frame covers, cut at clause breaks; a
    /// preposition continues a phrase that has content when a noun phrase follows it ("part
    /// of being a good parent"). A phrase right after "like", "than", "unlike" or "as" is the
    /// standard of a comparison ("like almond milk"), not a concept.
    fn fragments(&self, covered: &[bool]) -> Vec<Phrase> {
        let mut out = Vec::new();
        let mut run: Vec<usize> = Vec::new();
        for (i, w) in self.words.iter().enumerate() {
            let free = !covered.get(i).copied().unwrap_or(true);
            let continues = run
                .last()
                .and_then(|&l| self.word(l))
                .is_some_and(|l| l.sentence == w.sentence);
            let joins = free && (self.nominal(w) || (continues && self.bridges(i)));
            if joins && (continues || run.is_empty()) {
                run.push(i);
                continue;
            }
            self.flush(&mut run, &mut out);
            if free && self.nominal(w) {
                run.push(i);
            }
        }
        self.flush(&mut run, &mut out);
        out.retain(|p| {
            // "not sure" and "no idea" are answers about knowing, not concepts.
            !lexicon::UNSURE_PHRASES.contains(&p.label.as_str())
                && !matches!(p.label.as_str(), "sure" | "idea")
        });
        out
    }

    fn nominal(&self, w: &TaggedWord) -> bool {
        matches!(
            w.class,
            WordClass::Noun
                | WordClass::Adjective
                | WordClass::Number
                | WordClass::Determiner
                | WordClass::Negation
        ) || (w.class == WordClass::Adverb && lexicon::is_intensifier(&w.norm))
            || w.norm == "being"
    }

    /// Word `i` is a preposition (or "being") between content and a following noun phrase.
    fn bridges(&self, i: usize) -> bool {
        let Some(w) = self.word(i) else {
            return false;
        };
        let next_nominal = self.word(i + 1).is_some_and(|n| {
            matches!(
                n.class,
                WordClass::Determiner | WordClass::Adjective | WordClass::Noun | WordClass::Number
            ) || n.norm == "being"
        });
        w.class == WordClass::Preposition && !w.clause_break && next_nominal
    }

    fn flush(&self, run: &mut Vec<usize>, out: &mut Vec<Phrase>) {
        let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
            return;
        };
        run.clear();
        let standard = first
            .checked_sub(1)
            .and_then(|p| self.word(p))
            .is_some_and(|p| matches!(p.norm.as_str(), "like" | "than" | "unlike" | "as"));
        if standard {
            return;
        }
        if let Some(p) = self.phrase(&[first..last + 1], Origin::Fragment) {
            out.push(p);
        }
    }
}

/// Whether word `w` belongs in a label; `at_start` when no word has been kept yet.
fn keeps(w: &TaggedWord, at_start: bool) -> bool {
    let norm = w.norm.as_str();
    match w.class {
        WordClass::Punctuation | WordClass::Subordinator => false,
        WordClass::Negation => true,
        WordClass::Auxiliary => norm == "being",
        WordClass::Pronoun => !at_start && matches!(norm, "me" | "us" | "them" | "myself"),
        WordClass::Determiner => {
            norm == "no" || (!at_start && !matches!(norm, "this" | "that" | "these" | "those"))
        }
        WordClass::Conjunction | WordClass::Infinitive | WordClass::Preposition => !at_start,
        WordClass::Adverb => !lexicon::is_intensifier(norm) && !lexicon::is_hedge(norm),
        WordClass::Adjective
        | WordClass::Verb
        | WordClass::Noun
        | WordClass::Number
        | WordClass::Particle => {
            !lexicon::is_intensifier(norm) && !lexicon::is_hedge(norm) && norm != "'s"
        }
    }
}

/// Words too generic to stand as a concept on their own ("main thing", "whole way").
const GENERIC_MODIFIERS: &str = "main whole same other only real first last certain \
    particular more most much many few little big";

/// A label carries content: at least one word that is neither empty nor a generic modifier.
fn worth_a_concept(words: &[String]) -> bool {
    words.iter().any(|w| {
        w.chars().any(char::is_alphanumeric)
            && !lexicon::is_empty_word(w)
            && !GENERIC_MODIFIERS.split_whitespace().any(|g| g == w)
            && !matches!(
                w.as_str(),
                "not" | "no" | "never" | "a" | "an" | "the" | "of" | "to" | "and" | "or" | "being"
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srl;

    fn phrases(answer: &str) -> Phrases {
        find(answer, &srl::tag_words(answer), &srl::analyze(answer))
    }

    fn labels(answer: &str) -> Vec<String> {
        phrases(answer).list.into_iter().map(|p| p.label).collect()
    }

    #[test]
    fn quotes_are_exact_substrings() {
        let answer = "I switched to oat milk about a year ago because it's so creamy. It froths \
                      really well in my morning latte.";
        for p in phrases(answer).list {
            assert!(answer.get(p.start..p.end).is_some(), "{p:?}");
            assert!(!p.label.is_empty());
        }
    }

    #[test]
    fn copular_descriptions_drop_intensifiers() {
        let l = labels("It's so creamy.");
        assert_eq!(l, ["creamy"]);
    }

    #[test]
    fn light_verbs_yield_their_objects() {
        let l = labels("It has a smooth mouthfeel.");
        assert_eq!(l, ["smooth mouthfeel"]);
    }

    #[test]
    fn fragments_outside_frames_become_phrases() {
        let l = labels("The creamy texture again, really.");
        assert_eq!(l, ["creamy texture"]);
        assert!(labels("Not sure.").is_empty());
    }

    #[test]
    fn fillers_and_pronoun_objects_yield_nothing() {
        assert!(
            labels("I just like it.").is_empty(),
            "{:?}",
            labels("I just like it.")
        );
        assert!(labels("I think so.").is_empty());
    }
}
