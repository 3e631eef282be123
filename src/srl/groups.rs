//! Verb groups: an auxiliary chain and the main verb it ends in.
//!
//! "have been drinking" is one group whose main verb is "drinking"; "is" alone is a group
//! whose main verb is the copula. Semi-modals ("have to", "used to", "going to", "be able
//! to") join the group of the verb they govern, so "I have to charge it" has one frame,
//! `charge`.

use std::ops::Range;

use super::lexicon;
use super::tagger::Tag;
use super::token::Doc;

/// Whether a group can carry its own subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Finite,
    /// Opens with "to".
    Infinitive,
    /// An "-ing" verb with no auxiliary ("stopped drinking dairy").
    Gerund,
}

/// One verb group inside a clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Group {
    /// First token: an auxiliary, the verb, or the "to" of an infinitive.
    pub start: usize,
    /// One past the main verb, its particle, or a negator after a lone auxiliary.
    pub end: usize,
    pub main: usize,
    pub particle: Option<usize>,
    pub negators: Vec<usize>,
    /// Adverbs between auxiliaries and the main verb ("have always used").
    pub adverbs: Vec<usize>,
    pub form: Form,
    pub passive: bool,
    /// A lone auxiliary is the main verb: copula "be", possessive "have", "do", or a modal.
    pub aux_main: bool,
    pub lemma: String,
}

/// The verb groups of `range`, left to right.
pub(super) fn find(doc: &Doc<'_>, range: Range<usize>) -> Vec<Group> {
    let mut out = Vec::new();
    let mut i = range.start;
    while i < range.end {
        let opens = match doc.tag(i) {
            Tag::Aux | Tag::Verb => true,
            // "to (really) go", "to not lose myself": an adverb or a denial may split it.
            Tag::Inf => (i + 1..range.end)
                .find(|&k| !matches!(doc.tag(k), Tag::Adv | Tag::Neg))
                .is_some_and(|k| matches!(doc.tag(k), Tag::Aux | Tag::Verb)),
            _ => false,
        };
        if opens {
            let group = run(doc, i, range.end);
            i = group.end.max(i + 1);
            out.push(group);
        } else {
            i += 1;
        }
    }
    out
}

/// Auxiliaries, negators, adverbs and the main verb collected from `from`.
#[derive(Default)]
struct Run {
    auxes: Vec<usize>,
    negators: Vec<usize>,
    adverbs: Vec<usize>,
    verb: Option<usize>,
    end: usize,
}

fn collect(doc: &Doc<'_>, from: usize, limit: usize, run: &mut Run) {
    let mut k = from;
    while k < limit {
        match doc.tag(k) {
            Tag::Aux => run.auxes.push(k),
            Tag::Neg => run.negators.push(k),
            Tag::Adv => run.adverbs.push(k),
            Tag::Verb => {
                run.verb = Some(k);
                k += 1;
                break;
            }
            _ => break,
        }
        k += 1;
    }
    run.end = k;
}

fn run(doc: &Doc<'_>, start: usize, limit: usize) -> Group {
    let infinitive = doc.tag(start) == Tag::Inf;
    let mut run = Run::default();
    collect(doc, start + usize::from(infinitive), limit, &mut run);
    if let Some(to) = semi_modal_to(doc, &run, limit) {
        run.verb = None;
        collect(doc, to + 1, limit, &mut run);
    }
    let main = run
        .verb
        .or_else(|| run.auxes.last().copied())
        .unwrap_or(start);
    run.adverbs.retain(|&a| a < main);
    let last_neg = run.negators.iter().copied().filter(|&n| n > main).max();
    let mut end = last_neg.map_or(main, |n| n.max(main)) + 1;
    let particle = (doc.tag(end) == Tag::Part && end < limit).then_some(end);
    if particle.is_some() {
        end += 1;
    }
    let aux_main = run.verb.is_none();
    let norm = doc.norm(main);
    let lemma = match (aux_main, particle) {
        (true, _) => aux_lemma(norm),
        (false, None) => lexicon::lemma(norm),
        (false, Some(p)) => format!("{} {}", lexicon::lemma(norm), doc.norm(p)),
    };
    let passive = !aux_main && lemma != "be" && is_passive(doc, &run, norm);
    let form = if infinitive {
        Form::Infinitive
    } else if norm.ends_with("ing")
        && if aux_main {
            // "Being patient makes me …", "having the app": a lone "-ing" auxiliary.
            run.auxes.len() == 1
        } else {
            run.auxes.is_empty()
        }
    {
        Form::Gerund
    } else {
        Form::Finite
    };
    Group {
        start,
        end,
        main,
        particle,
        negators: run.negators,
        adverbs: run.adverbs,
        form,
        passive,
        aux_main,
        lemma,
    }
}

/// A participle right after a form of "be" ("was charged", "has been told").
fn is_passive(doc: &Doc<'_>, run: &Run, main: &str) -> bool {
    let after_be = run
        .auxes
        .last()
        .is_some_and(|&a| lexicon::is_be(doc.norm(a)));
    let participle =
        lexicon::is_participle(main) || (lexicon::verb(main).is_none() && main.ends_with("ed"));
    after_be && participle
}

/// The "to" of a semi-modal ("have to", "used to", "going to", "be able to") when a verb
/// follows it, so the run continues to that verb.
fn semi_modal_to(doc: &Doc<'_>, run: &Run, limit: usize) -> Option<usize> {
    let last = run.verb.or_else(|| run.auxes.last().copied())?;
    let n = doc.norm(last);
    let semi = match doc.tag(last) {
        Tag::Aux => lexicon::is_have(n) || n == "ought",
        Tag::Verb => {
            matches!(n, "used" | "got")
                || (n == "going"
                    && run
                        .auxes
                        .last()
                        .is_some_and(|&a| lexicon::is_be(doc.norm(a))))
        }
        _ => false,
    };
    let to = if lexicon::is_be(n) && doc.norm(last + 1) == "able" {
        last + 2
    } else if semi {
        last + 1
    } else {
        return None;
    };
    let verb_follows = (to + 1..limit)
        .find(|&k| doc.tag(k) != Tag::Adv)
        .is_some_and(|k| matches!(doc.tag(k), Tag::Verb | Tag::Aux));
    (to < limit && doc.tag(to) == Tag::Inf && verb_follows).then_some(to)
}

/// The lemma of an auxiliary standing as the main verb.
fn aux_lemma(norm: &str) -> String {
    if lexicon::is_be(norm) {
        "be"
    } else if lexicon::is_have(norm) {
        "have"
    } else if lexicon::is_do(norm) {
        "do"
    } else {
        norm
    }
    .to_string()
}
