//! Splitting sentences into clauses for the frame pass.
//!
//! Boundaries: discourse connectives (except prepositional ones such as "due to", which stay
//! inside their clause as a modifier); semicolons, colons, dashes, brackets and quotation
//! marks; subordinators and relative pronouns; a comma or "and"/"or" before a new subject and
//! verb (or before a bare verb, whose subject is then shared); a subject pronoun after a clause
//! that has its verb ("When I'm tired I drink"); and the point after "think"/"know"/… where a
//! complement clause without "that" begins. A relative clause ends where a second finite verb
//! resumes the main clause.

use std::ops::Range;

use super::RelationKind;
use super::chunk;
use super::discourse::MarkerSpan;
use super::lexicon;
use super::tagger::Tag;
use super::token::Doc;
use super::words;

/// What opened a clause; decides where a missing subject comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Opener {
    Start,
    /// A discourse connective (its tokens and kind).
    Connective {
        marker: Range<usize>,
        kind: RelationKind,
    },
    /// "and"/"or"/"but" or a comma; `shared_subject` when a verb follows directly.
    Coord {
        shared_subject: bool,
    },
    /// A complement clause of the previous clause's verb ("I think [it's cheaper]").
    Complement,
    /// A relative clause; its antecedent fills a missing subject or object.
    Relative {
        antecedent: Option<Range<usize>>,
    },
    /// The main clause resuming after a relative clause ("The app that I use [shows …]").
    Resume {
        subject: Option<Range<usize>>,
    },
    Punct,
}

/// A clause: a token range within one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Clause {
    pub range: Range<usize>,
    pub opener: Opener,
    /// Part of a direct question ("What do you mean?"): no frames, since inverted word order
    /// would mislabel them and a question to the interviewer states nothing.
    pub question: bool,
}

/// Splits every sentence of `doc` into clauses.
pub(super) fn split(doc: &Doc<'_>, markers: &[MarkerSpan]) -> Vec<Clause> {
    let mut out = Vec::new();
    let mut markers = markers.iter().filter(|m| !m.inline).peekable();
    for sentence in &doc.sentences {
        let first = out.len();
        let mut start = sentence.start;
        let mut opener = Opener::Start;
        let mut i = sentence.start;
        // Whether `start..i` holds a verb; kept as we go so no scan looks back.
        let mut verb_seen = false;
        while i < sentence.end {
            while markers.peek().is_some_and(|m| m.range.start < i) {
                markers.next();
            }
            let marker = markers.next_if(|m| m.range.start == i);
            if let Some(next) = cut(doc, sentence, marker, start..i, &opener, verb_seen) {
                push(doc, &mut out, start..i, opener);
                opener = next.opener;
                start = next.start;
                i = next.start.max(i + 1);
                verb_seen = next.verb_seen;
            } else {
                verb_seen |= matches!(doc.tag(i), Tag::Verb | Tag::Aux);
                i += 1;
            }
        }
        push(doc, &mut out, start..sentence.end, opener);
        let question = is_question(doc, sentence);
        for clause in out.iter_mut().skip(first) {
            clause.question = question;
        }
    }
    out
}

/// Where the next clause starts after a cut, and what opened it.
struct Cut {
    start: usize,
    opener: Opener,
    /// The new clause already has its verb (a resumed main clause starts at it).
    verb_seen: bool,
}

/// Whether the clause `so_far` ends at `so_far.end`: at a connective, where a relative
/// clause gives way to its main clause, or at a [`boundary`].
fn cut(
    doc: &Doc<'_>,
    sentence: &Range<usize>,
    marker: Option<&MarkerSpan>,
    so_far: Range<usize>,
    opener: &Opener,
    verb_seen: bool,
) -> Option<Cut> {
    let i = so_far.end;
    if let Some(m) = marker {
        return Some(Cut {
            start: m.range.end.max(i + 1),
            opener: Opener::Connective {
                marker: m.range.clone(),
                kind: m.kind,
            },
            verb_seen: false,
        });
    }
    if let Opener::Relative { antecedent } = opener
        && resumes_main_clause(doc, so_far.start, i)
    {
        return Some(Cut {
            start: i,
            opener: Opener::Resume {
                subject: antecedent.clone(),
            },
            verb_seen: true,
        });
    }
    // "When you drop a steak in | the pan doesn't go cold": a "when" or "if" clause that has
    // its verb ends before a noun group with an auxiliary of its own.
    if let Opener::Connective {
        kind: RelationKind::Temporal | RelationKind::Condition,
        ..
    } = opener
        && verb_seen
        && chunk::subject_after_object(doc, i, sentence.end)
    {
        return Some(Cut {
            start: i,
            opener: Opener::Punct,
            verb_seen: false,
        });
    }
    boundary(doc, sentence, so_far, verb_seen).map(|(skip, opener)| Cut {
        start: i + skip,
        opener,
        verb_seen: false,
    })
}

/// Keeps clauses with at least one word.
fn push(doc: &Doc<'_>, out: &mut Vec<Clause>, range: Range<usize>, opener: Opener) {
    if doc.trim(range.clone()).is_some() {
        out.push(Clause {
            range,
            opener,
            question: false,
        });
    }
}

/// A sentence ending in "?" that opens with an auxiliary or a wh-word.
fn is_question(doc: &Doc<'_>, sentence: &Range<usize>) -> bool {
    let ends_with_mark = sentence
        .clone()
        .rev()
        .find(|&k| doc.tag(k) != Tag::Punct || doc.norm(k) == "?")
        .is_some_and(|k| doc.norm(k) == "?");
    let first = sentence.clone().find(|&k| doc.tag(k) != Tag::Punct);
    ends_with_mark
        && first.is_some_and(|k| {
            let w = doc.norm(k);
            lexicon::is_aux(w)
                || matches!(
                    w,
                    "what" | "why" | "how" | "where" | "when" | "who" | "which"
                )
        })
}

/// A finite verb at `i` after the relative clause `start..i` already has its verb: the
/// relative clause ended and the main clause's verb follows.
fn resumes_main_clause(doc: &Doc<'_>, start: usize, i: usize) -> bool {
    let finite = match doc.tag(i) {
        Tag::Aux => true,
        Tag::Verb => lexicon::verb(doc.norm(i)).is_none_or(|r| r.form.finite()),
        _ => false,
    };
    finite
        && i > start
        && !matches!(
            doc.tag(i - 1),
            Tag::Aux | Tag::Neg | Tag::Inf | Tag::Adv | Tag::Sconj | Tag::Pron
        )
        && (start..i).any(|k| matches!(doc.tag(k), Tag::Verb | Tag::Aux))
}

/// Whether a clause boundary falls at the end of `so_far` (the current clause until now): how
/// many tokens to drop there and the next clause's opener.
fn boundary(
    doc: &Doc<'_>,
    sentence: &Range<usize>,
    so_far: Range<usize>,
    verb_seen: bool,
) -> Option<(usize, Opener)> {
    let i = so_far.end;
    let end = sentence.end;
    let norm = doc.norm(i);
    let after_saying = i > sentence.start
        && doc.tag(i - 1) == Tag::Verb
        && words::takes_clause(&lexicon::lemma(doc.norm(i - 1)));
    // "I guess [I just like the taste]": a complement clause without "that", unless the verb
    // is a relative clause's ("the kind of manager I wish [I'd had]").
    if after_saying
        && chunk::starts_clause(doc, i, end)
        && !chunk::in_contact_relative_at(doc, i, sentence.start, end)
    {
        return Some((0, Opener::Complement));
    }
    match doc.tag(i) {
        // Direct speech: 'she said "try Oatly"'.
        Tag::Punct if matches!(norm, "\"" | "\u{201c}" | "\u{201d}") => {
            let opener = if after_saying {
                Opener::Complement
            } else {
                Opener::Punct
            };
            Some((1, opener))
        }
        Tag::Punct if matches!(norm, ";" | ":" | "(" | ")" | "-" | "\u{2013}" | "\u{2014}") => {
            Some((1, Opener::Punct))
        }
        Tag::Punct | Tag::Conj if norm == "," || doc.tag(i) == Tag::Conj => {
            coordination(doc, i, end, verb_seen)
        }
        Tag::Sconj if i > sentence.start => Some(subordinate(doc, so_far)),
        // "shows [which chargers are available]": an embedded question as complement.
        Tag::Det if matches!(norm, "which" | "what") && doc.tag(i.wrapping_sub(1)) == Tag::Verb => {
            Some((0, Opener::Complement))
        }
        // "When I'm calm the kids talk to me": after a description, a noun group with its
        // own verb starts a new clause.
        Tag::Det
            if verb_seen
                && i > sentence.start
                && chunk::after_description(doc, i)
                && chunk::starts_clause(doc, i, end) =>
        {
            Some((0, Opener::Punct))
        }
        // A subject pronoun after a clause that already has its verb starts a new clause
        // ("When I'm tired I drink coffee").
        Tag::Pron
            if words::is_nominative(norm)
                && verb_seen
                && chunk::starts_verb_group(doc, i + 1, end)
                && !chunk::in_contact_relative_at(doc, i, sentence.start, end) =>
        {
            Some((0, Opener::Punct))
        }
        _ => None,
    }
}

/// A comma or "and"/"or" at `i` joins clauses when a subject and verb, or a bare verb (whose
/// subject is then shared), follow it, and the clause so far has its verb.
fn coordination(doc: &Doc<'_>, i: usize, end: usize, verb_seen: bool) -> Option<(usize, Opener)> {
    if !verb_seen {
        // "My wife and I share the car": coordinated subjects, not clauses.
        return None;
    }
    // ", otherwise it's not worth it": an adverb of the clause may come before its subject.
    let opening_adverb = doc.tag(i + 1) == Tag::Adv && words::opens_clause_adverb(doc.norm(i + 1));
    let shared_subject = if chunk::starts_clause(doc, i + 1, end)
        || (opening_adverb && chunk::starts_clause(doc, i + 2, end))
    {
        false
    } else if chunk::starts_verb_group(doc, i + 1, end) {
        true
    } else {
        return None;
    };
    Some((1, Opener::Coord { shared_subject }))
}

/// A subordinator or wh-word at the end of `so_far` opens a relative or complement clause.
fn subordinate(doc: &Doc<'_>, so_far: Range<usize>) -> (usize, Opener) {
    let i = so_far.end;
    let norm = doc.norm(i);
    let before = i.saturating_sub(1);
    let after_comma = doc.norm(before) == ",";
    let antecedent = if matches!(norm, "that" | "which" | "who" | "whom")
        && matches!(doc.tag(before), Tag::Noun | Tag::Pron | Tag::Num)
    {
        Some(chunk::np_before(doc, i, so_far.start))
    } else if norm == "which" && after_comma {
        // ", which is annoying": the antecedent is the clause before the comma.
        Some(doc.trim(so_far.start..before))
    } else if matches!(norm, "who" | "whom") && after_comma {
        // "a buddy, who showed us around": the noun phrase before the comma.
        Some(chunk::np_before(doc, before, so_far.start))
    } else {
        None
    };
    match antecedent {
        Some(antecedent) => (1, Opener::Relative { antecedent }),
        // A wh-word belongs to the complement it opens ("how it works"); "that" does not.
        None => (usize::from(norm == "that"), Opener::Complement),
    }
}
