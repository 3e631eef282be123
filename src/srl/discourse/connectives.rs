//! The connective lexicon and the guards that decide whether a match is a connective here.
//!
//! Matching is on whole tokens, longest entry first, so "so" never matches inside "also" and
//! "so that" wins over "so". The guards reject the ambiguous readings: "so good", "I think
//! so", "once a week", "a while", "know if", "nothing but"; and they pick the reading of
//! "since" (temporal before a time, a noun phrase or a perfect main clause; causal otherwise).

use std::ops::Range;

use crate::srl::RelationKind;
use crate::srl::chunk;
use crate::srl::lexicon;
use crate::srl::tagger::{Tag, is_clause_punct};
use crate::srl::token::{Doc, Shape};
use crate::srl::words;

/// How a connective's arguments are laid out around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Sub,
    Coord,
    Adverbial,
    Prep,
}

struct Connective {
    words: &'static [&'static str],
    kind: RelationKind,
    class: Class,
}

const fn entry(words: &'static [&'static str], kind: RelationKind, class: Class) -> Connective {
    Connective { words, kind, class }
}

use Class::{Adverbial, Coord, Prep, Sub};
use RelationKind as K;

/// The connective lexicon, longest entries first so multi-word connectives win.
const CONNECTIVES: &[Connective] = &[
    entry(&["on", "the", "other", "hand"], K::Contrast, Adverbial),
    entry(&["at", "the", "same", "time"], K::Temporal, Adverbial),
    entry(&["so", "that", "'s", "why"], K::Result, Adverbial),
    entry(&["and", "that", "'s", "why"], K::Result, Adverbial),
    entry(&["that", "'s", "the", "reason"], K::Result, Adverbial),
    entry(&["on", "top", "of", "that"], K::Addition, Adverbial),
    entry(&["as", "a", "result", "of"], K::Causal, Prep),
    entry(&["as", "a", "result"], K::Result, Adverbial),
    entry(&["as", "a", "consequence"], K::Result, Adverbial),
    entry(&["that", "'s", "why"], K::Result, Adverbial),
    entry(&["that", "is", "why"], K::Result, Adverbial),
    entry(&["that", "was", "why"], K::Result, Adverbial),
    entry(&["this", "is", "why"], K::Result, Adverbial),
    entry(&["this", "'s", "why"], K::Result, Adverbial),
    entry(&["which", "is", "why"], K::Result, Adverbial),
    entry(&["because", "of", "that"], K::Result, Adverbial),
    entry(&["because", "of", "this"], K::Result, Adverbial),
    entry(&["for", "that", "reason"], K::Result, Adverbial),
    entry(&["for", "this", "reason"], K::Result, Adverbial),
    entry(&["what", "'s", "more"], K::Addition, Adverbial),
    // "…, and that gives me peace of mind": a result, not a mere addition.
    entry(&["and", "that", "gives"], K::Result, Coord),
    entry(&["on", "the", "contrary"], K::Contrast, Adverbial),
    entry(&["in", "order", "to"], K::Purpose, Sub),
    entry(&["so", "as", "to"], K::Purpose, Sub),
    entry(&["as", "long", "as"], K::Condition, Sub),
    entry(&["as", "soon", "as"], K::Temporal, Sub),
    entry(&["by", "the", "time"], K::Temporal, Sub),
    entry(&["in", "spite", "of"], K::Concession, Prep),
    entry(&["so", "that"], K::Purpose, Sub),
    entry(&["even", "though"], K::Concession, Sub),
    entry(&["even", "if"], K::Concession, Sub),
    entry(&["even", "so"], K::Concession, Adverbial),
    entry(&["because", "of"], K::Causal, Prep),
    entry(&["due", "to"], K::Causal, Prep),
    entry(&["thanks", "to"], K::Causal, Prep),
    entry(&["owing", "to"], K::Causal, Prep),
    entry(&["instead", "of"], K::Contrast, Prep),
    entry(&["rather", "than"], K::Contrast, Prep),
    entry(&["in", "case"], K::Condition, Sub),
    entry(&["only", "if"], K::Condition, Sub),
    entry(&["provided", "that"], K::Condition, Sub),
    entry(&["providing", "that"], K::Condition, Sub),
    entry(&["assuming", "that"], K::Condition, Sub),
    entry(&["given", "that"], K::Causal, Sub),
    entry(&["now", "that"], K::Causal, Sub),
    entry(&["seeing", "as"], K::Causal, Sub),
    entry(&["and", "then"], K::Temporal, Coord),
    entry(&["and", "also"], K::Addition, Coord),
    entry(&["and", "so"], K::Result, Coord),
    entry(&["after", "that"], K::Temporal, Adverbial),
    entry(&["before", "that"], K::Temporal, Adverbial),
    entry(&["since", "then"], K::Temporal, Adverbial),
    entry(&["later", "on"], K::Temporal, Adverbial),
    entry(&["at", "first"], K::Temporal, Adverbial),
    entry(&["in", "addition"], K::Addition, Adverbial),
    entry(&["in", "contrast"], K::Contrast, Adverbial),
    entry(&["by", "contrast"], K::Contrast, Adverbial),
    entry(&["which", "means"], K::Result, Adverbial),
    // A consequence said with a causal verb ("it froths well, which makes my mornings calmer";
    // "which gives me energy", "and that gives me peace of mind"). "That makes" is left out:
    // "that makes sense" is no result.
    entry(&["which", "makes"], K::Result, Adverbial),
    entry(&["which", "gives"], K::Result, Adverbial),
    entry(&["that", "gives"], K::Result, Adverbial),
    entry(&["that", "means"], K::Result, Adverbial),
    entry(&["every", "time"], K::Temporal, Sub),
    entry(&["each", "time"], K::Temporal, Sub),
    entry(&["because"], K::Causal, Sub),
    entry(&["cuz"], K::Causal, Sub),
    entry(&["cos"], K::Causal, Sub),
    entry(&["coz"], K::Causal, Sub),
    entry(&["since"], K::Causal, Sub),
    entry(&["so"], K::Result, Coord),
    entry(&["therefore"], K::Result, Adverbial),
    entry(&["thus"], K::Result, Adverbial),
    entry(&["hence"], K::Result, Adverbial),
    entry(&["consequently"], K::Result, Adverbial),
    entry(&["when"], K::Temporal, Sub),
    entry(&["whenever"], K::Temporal, Sub),
    entry(&["before"], K::Temporal, Sub),
    entry(&["after"], K::Temporal, Sub),
    entry(&["while"], K::Temporal, Sub),
    entry(&["whilst"], K::Temporal, Sub),
    entry(&["until"], K::Temporal, Sub),
    entry(&["till"], K::Temporal, Sub),
    entry(&["once"], K::Temporal, Sub),
    entry(&["then"], K::Temporal, Adverbial),
    entry(&["meanwhile"], K::Temporal, Adverbial),
    entry(&["afterwards"], K::Temporal, Adverbial),
    entry(&["afterward"], K::Temporal, Adverbial),
    entry(&["but"], K::Contrast, Coord),
    entry(&["however"], K::Contrast, Adverbial),
    entry(&["whereas"], K::Contrast, Sub),
    entry(&["yet"], K::Contrast, Coord),
    entry(&["instead"], K::Contrast, Adverbial),
    entry(&["although"], K::Concession, Sub),
    entry(&["though"], K::Concession, Sub),
    entry(&["despite"], K::Concession, Prep),
    entry(&["nevertheless"], K::Concession, Adverbial),
    entry(&["nonetheless"], K::Concession, Adverbial),
    entry(&["if"], K::Condition, Sub),
    entry(&["unless"], K::Condition, Sub),
    entry(&["also"], K::Addition, Adverbial),
    entry(&["besides"], K::Addition, Adverbial),
    entry(&["moreover"], K::Addition, Adverbial),
    entry(&["furthermore"], K::Addition, Adverbial),
    entry(&["additionally"], K::Addition, Adverbial),
    entry(&["plus"], K::Addition, Adverbial),
    entry(&["to"], K::Purpose, Sub),
    entry(&["as"], K::Causal, Sub),
];

/// A matched connective: its tokens and how it reads here.
#[derive(Debug, Clone)]
pub(super) struct Marker {
    pub range: Range<usize>,
    pub kind: RelationKind,
    pub class: Class,
}

/// The connectives of one sentence, left to right, without overlaps.
pub(super) fn markers(doc: &Doc<'_>, sentence: &Range<usize>) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut i = sentence.start;
    while i < sentence.end {
        let found = CONNECTIVES.iter().find_map(|c| {
            let end = i + c.words.len();
            let matches = end <= sentence.end
                && c.words
                    .iter()
                    .enumerate()
                    .all(|(k, w)| doc.norm(i + k) == *w);
            matches
                .then(|| resolve(doc, sentence, i..end, c))
                .flatten()
                .map(|(kind, class)| Marker {
                    range: i..end,
                    kind,
                    class,
                })
        });
        match found {
            Some(marker) => {
                i = marker.range.end;
                out.push(marker);
            }
            None => i += 1,
        }
    }
    out
}

/// Only fillers ("and", "well", "yeah", punctuation) stand before token `i` in its sentence.
pub(super) fn is_initial(doc: &Doc<'_>, sentence: &Range<usize>, i: usize) -> bool {
    // A handful of fillers at most, so a run of "so so so …" is not scanned quadratically.
    i.saturating_sub(sentence.start) <= 6
        && (sentence.start..i).all(|k| {
            doc.tag(k) == Tag::Punct
                || matches!(
                    doc.norm(k),
                    "and"
                        | "well"
                        | "yeah"
                        | "yes"
                        | "no"
                        | "oh"
                        | "um"
                        | "uh"
                        | "ok"
                        | "okay"
                        | "honestly"
                        | "basically"
                        | "but"
                        | "so"
                )
        })
}

/// The token before `i` is a clause break: punctuation or "and"/"but".
pub(super) fn after_break(doc: &Doc<'_>, sentence: &Range<usize>, i: usize) -> bool {
    i.checked_sub(1)
        .filter(|p| *p >= sentence.start)
        .is_some_and(|p| is_clause_punct(doc.norm(p)) || matches!(doc.norm(p), "and" | "but"))
}

/// Where a candidate connective stands: its neighbours and the rest of the sentence.
struct Site<'d> {
    start: usize,
    prev: &'d str,
    next: &'d str,
    next_tag: Tag,
    initial: bool,
    /// From the token after the connective to the sentence end.
    after: Range<usize>,
}

/// Applies the guards for ambiguous connectives; `None` rejects the match.
fn resolve(
    doc: &Doc<'_>,
    sentence: &Range<usize>,
    range: Range<usize>,
    c: &Connective,
) -> Option<(RelationKind, Class)> {
    let after = range.end..sentence.end;
    let words_follow = after
        .clone()
        .any(|k| doc.tokens.get(k).is_some_and(|t| t.shape != Shape::Punct));
    if !words_follow {
        // "It's pricey though.": a trailing "though" concedes to the sentence it ends.
        return (c.words == ["though"]).then_some((K::Concession, Adverbial));
    }
    let site = Site {
        start: range.start,
        prev: range
            .start
            .checked_sub(1)
            .filter(|p| *p >= sentence.start)
            .map_or("", |p| doc.norm(p)),
        next: doc.norm(range.end),
        next_tag: doc.tag(range.end),
        initial: is_initial(doc, sentence, range.start),
        after,
    };
    match c.words {
        ["since"] => Some((
            since_kind(doc, sentence, site.after.clone()),
            temporal_class(doc, site.after),
        )),
        ["before" | "after" | "until" | "till"] => {
            // "looking after ourselves": caring for someone, no time.
            let cares = c.words == ["after"] && lexicon::lemma(site.prev) == "look";
            let accepted = site.next != "all"
                && !cares
                && !matches!(doc.tag(site.start.wrapping_sub(1)), Tag::Det | Tag::Num)
                && !words::is_time_noun(site.prev);
            accepted.then(|| (K::Temporal, temporal_class(doc, site.after)))
        }
        _ => accepts(doc, sentence, &site, c.words).then_some((c.kind, c.class)),
    }
}

/// The guards that accept or reject a connective without changing its reading.
fn accepts(doc: &Doc<'_>, sentence: &Range<usize>, site: &Site<'_>, words: &[&str]) -> bool {
    let Site {
        start,
        prev,
        next,
        next_tag,
        initial,
        ..
    } = *site;
    match words {
        ["so"] => so_is_connective(prev, next, next_tag, initial),
        ["then"] => {
            (initial || is_clause_punct(prev))
                && !(sentence.start..start).any(|k| doc.norm(k) == "if")
        }
        ["once"] | ["every" | "each", "time"] => {
            next_tag != Tag::Num
                && (words::is_subject_capable(next) || words::is_determiner(next))
                && !matches!(next, "a" | "an" | "every" | "per")
        }
        ["while" | "whilst"] => !matches!(prev, "a" | "for"),
        ["if"] => !matches!(prev, "as") && !asks_whether(&lexicon::lemma(prev)),
        ["but"] => !matches!(prev, "nothing" | "anything" | "all" | "everything"),
        ["yet"] => {
            (initial || matches!(next_tag, Tag::Pron | Tag::Det | Tag::Punct))
                && doc.tag(start.wrapping_sub(1)) != Tag::Neg
        }
        // "To save money, …" is a purpose; "to be honest" and "to tell the truth" are not.
        ["to"] => initial && doc.tag(start) == Tag::Inf && !matches!(next, "be" | "tell"),
        ["as"] => as_is_causal(doc, prev, site.after.clone()),
        ["plus" | "besides"] => initial || after_break(doc, sentence, start),
        _ => true,
    }
}

/// "so" links clauses, unless it intensifies ("so good") or stands for a clause ("I think so").
fn so_is_connective(prev: &str, next: &str, next_tag: Tag, initial: bool) -> bool {
    let stands_for_clause = matches!(
        prev,
        "think"
            | "guess"
            | "hope"
            | "believe"
            | "suppose"
            | "say"
            | "said"
            | "do"
            | "did"
            | "does"
            | "or"
            | "not"
            | "if"
            | "ever"
            | "just"
            | "even"
    );
    let intensifier = matches!(next_tag, Tag::Adj | Tag::Adv | Tag::Num)
        || matches!(next, "much" | "many" | "far" | "long" | "little" | "few");
    let clause_or_pause = initial
        || next_tag == Tag::Punct
        || matches!(
            next_tag,
            Tag::Pron | Tag::Det | Tag::Noun | Tag::Aux | Tag::Verb | Tag::Sconj
        );
    !stands_for_clause && !intensifier && clause_or_pause
}

/// "as" is causal before a clause ("as it is organic"), except in comparisons ("as good as")
/// and comments ("as I said").
fn as_is_causal(doc: &Doc<'_>, prev: &str, after: Range<usize>) -> bool {
    let first_verb = after
        .clone()
        .take(6)
        .find(|&k| matches!(doc.tag(k), Tag::Verb | Tag::Aux));
    let comment = first_verb.is_some_and(|k| {
        matches!(
            lexicon::lemma(doc.norm(k)).as_str(),
            "say" | "mention" | "know" | "expect" | "see" | "mean" | "guess" | "suppose" | "tell"
        )
    });
    !matches!(prev, "as" | "such" | "same" | "just" | "so")
        && doc.tag(after.start) != Tag::Adj
        && opens_clause(doc, after)
        && !comment
}

/// Verbs after which "if" means "whether" ("I don't know if it's worth it").
fn asks_whether(lemma: &str) -> bool {
    matches!(
        lemma,
        "know" | "wonder" | "see" | "ask" | "check" | "sure" | "decide" | "tell" | "doubt"
    )
}

/// "since" is temporal before a time ("since 2019", "since last year"), a bare noun phrase
/// ("since the pandemic"), or a clause when the rest of the sentence is in the perfect ("I've
/// used it since I moved"); causal otherwise ("since it's cheaper, I buy it").
fn since_kind(doc: &Doc<'_>, sentence: &Range<usize>, after: Range<usize>) -> RelationKind {
    let next = doc.norm(after.start);
    if doc.tag(after.start) == Tag::Num
        || words::is_time_noun(next)
        || matches!(next, "then" | "last" | "ever")
        || doc.norm(after.start.wrapping_sub(2)) == "ever"
    {
        return K::Temporal;
    }
    let clause_end = clause_end(doc, after.clone());
    let has_verb = opens_clause(doc, after.clone());
    let perfect = sentence
        .clone()
        .filter(|k| !(after.start..clause_end).contains(k))
        .any(|k| {
            lexicon::is_have(doc.norm(k))
                && doc.tag(k) == Tag::Aux
                && (k + 1..sentence.end)
                    .find(|&v| !matches!(doc.tag(v), Tag::Adv | Tag::Neg))
                    .is_some_and(|v| lexicon::is_participle(doc.norm(v)))
        });
    if !has_verb || perfect {
        K::Temporal
    } else {
        K::Causal
    }
}

/// The end of the phrase or clause starting `range`: the first clause punctuation.
fn clause_end(doc: &Doc<'_>, range: Range<usize>) -> usize {
    let end = range.end;
    range
        .into_iter()
        .find(|&k| is_clause_punct(doc.norm(k)))
        .unwrap_or(end)
}

/// Temporal prepositions used as connectives keep the subordinating layout before a clause
/// ("before I started", "after reading reviews") but read as an inline phrase before a noun
/// phrase ("until Wednesday", "since 2019").
fn temporal_class(doc: &Doc<'_>, after: Range<usize>) -> Class {
    if opens_clause(doc, after) { Sub } else { Prep }
}

/// A clause (or a gerund) starts at `after.start`.
fn opens_clause(doc: &Doc<'_>, after: Range<usize>) -> bool {
    matches!(doc.tag(after.start), Tag::Verb | Tag::Aux)
        || chunk::starts_clause(doc, after.start, after.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_connectives_come_first() {
        let lengths: Vec<usize> = CONNECTIVES.iter().map(|c| c.words.len()).collect();
        assert!(lengths.windows(2).all(|w| w[0] >= w[1]), "{lengths:?}");
    }
}
