//! Discourse connectives and the two spans each one links.
//!
//! Connectives come from a fixed lexicon, matched on whole tokens (so "so" never matches inside
//! "also"), longest entry first, then filtered by small guards for the ambiguous ones ("so
//! good", "I think so", "since 2019", "once a week"). Argument spans follow the connective's
//! class:
//!
//! - subordinating ("because", "if", "when"): `arg2` is the clause it introduces, `arg1` the
//!   main clause, before it or, for a sentence-initial connective, after the comma;
//! - coordinating ("but", "so"): `arg1` before, `arg2` after;
//! - adverbial ("however", "that's why", "also"): sentence-initial, `arg1` is the previous
//!   sentence;
//! - prepositional ("due to", "despite"): `arg2` is the phrase up to the next comma.
//!
//! When the first argument lies outside the answer (a lone "Because it's cheaper." replying to
//! the interviewer's question), `arg1` is an empty span at the connective.

mod connectives;

use std::ops::Range;

use super::chunk;
use super::tagger::Tag;
use super::token::Doc;
use super::words;
use super::{DiscourseRelation, RelationKind, Span};
use connectives::Class::{Adverbial, Coord, Prep, Sub};
use connectives::{Marker, after_break, is_initial, markers};

/// A connective that produced a relation, as the clause and frame passes need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MarkerSpan {
    pub range: Range<usize>,
    pub kind: RelationKind,
    /// Prepositional ("due to the price"): stays inside its clause as a modifier instead of
    /// opening a new clause.
    pub inline: bool,
}

/// Finds the discourse relations of `doc`, at most `limit`, and the connectives that produced
/// them (clause boundaries and cause modifiers for the frame pass).
pub(super) fn find(doc: &Doc<'_>, limit: usize) -> (Vec<DiscourseRelation>, Vec<MarkerSpan>) {
    let mut relations = Vec::new();
    let mut used = Vec::new();
    for (index, sentence) in doc.sentences.iter().enumerate() {
        let previous = index
            .checked_sub(1)
            .and_then(|p| doc.sentences.get(p))
            .and_then(|p| doc.arg_span(p.clone()));
        let markers = markers(doc, sentence);
        let linker = Linker {
            doc,
            sentence: sentence.clone(),
            previous,
            markers: &markers,
        };
        for (relation, marker) in linker.link() {
            if relations.len() >= limit {
                return (relations, used);
            }
            relations.push(relation);
            used.push(MarkerSpan {
                range: marker.range.clone(),
                kind: marker.kind,
                inline: marker.class == Prep,
            });
        }
    }
    (relations, used)
}

/// The two arguments of one connective, as found.
struct Args {
    arg1: Option<Span>,
    arg2: Option<Span>,
    /// A missing `arg1` may lie before this sentence (or before the answer).
    outside: bool,
    /// The connective sits inside its clause, so the next connective's `arg1` still starts
    /// where this one's clause did.
    inside_clause: bool,
}

impl Args {
    fn outside(arg1: Option<Span>, arg2: Option<Span>) -> Self {
        Self {
            arg1,
            arg2,
            outside: true,
            inside_clause: false,
        }
    }
}

/// Lays out the arguments of one sentence's connectives.
struct Linker<'d, 't> {
    doc: &'d Doc<'t>,
    sentence: Range<usize>,
    previous: Option<Span>,
    markers: &'d [Marker],
}

impl Linker<'_, '_> {
    fn link(&self) -> Vec<(DiscourseRelation, &Marker)> {
        let breaks = self.clause_breaks();
        let mut out = Vec::new();
        let mut segment_start = self.sentence.start;
        for (k, m) in self.markers.iter().enumerate() {
            // Prepositional connectives sit inside a clause, so they end no argument.
            let next_marker = self
                .markers
                .iter()
                .skip(k + 1)
                .find(|n| n.class != Prep)
                .map_or(self.sentence.end, |n| n.range.start);
            let next_break = breaks.iter().copied().find(|&b| b >= m.range.end);
            let arg2_end = next_break.map_or(next_marker, |b| b.min(next_marker));
            let prev_break = breaks.iter().copied().rfind(|&b| b < m.range.start);
            let arg1_start = prev_break.map_or(segment_start, |b| segment_start.max(b + 1));
            // ", so when the kids get home I'm not snapping": a coordinator right before a
            // subordinate clause opens it as a sentence would, and leads to its main clause.
            let opens_sub = |c: &Marker, n: Option<&Marker>| {
                c.class == Coord
                    && n.is_some_and(|n| n.class == Sub && n.range.start == c.range.end)
            };
            let after_coord = k
                .checked_sub(1)
                .and_then(|p| self.markers.get(p))
                .is_some_and(|p| opens_sub(p, Some(m)));
            let initial = after_coord || is_initial(self.doc, &self.sentence, m.range.start);
            let leads_sub = !initial && opens_sub(m, self.markers.get(k + 1));
            let args = match (m.class, initial) {
                (Prep, _) => self.prepositional(m, arg1_start, arg2_end),
                (Coord, false) if leads_sub => {
                    let sub_end = self.markers.get(k + 1).map_or(m.range.end, |n| n.range.end);
                    let main = self
                        .main_clause_split(sub_end)
                        .map(|(_, main_start)| main_start..self.main_end(&breaks, main_start));
                    // Without a main clause to find, the subordinate clause and all after it.
                    let rest_end = self
                        .markers
                        .iter()
                        .skip(k + 2)
                        .find(|n| n.class != Prep)
                        .map_or(self.sentence.end, |n| n.range.start)
                        .min(
                            breaks
                                .iter()
                                .copied()
                                .find(|&b| b >= sub_end)
                                .unwrap_or(self.sentence.end),
                        );
                    let arg2 = main
                        .and_then(|r| self.doc.arg_span(r))
                        .or_else(|| self.doc.arg_span(sub_end..rest_end));
                    Args::outside(self.doc.arg_span(arg1_start..m.range.start), arg2)
                }
                (Sub, true) => match self.main_clause_split(m.range.end) {
                    Some((arg2_split, main_start)) => {
                        segment_start = main_start;
                        let main_end = self.main_end(&breaks, main_start);
                        Args::outside(
                            self.doc.arg_span(main_start..main_end),
                            self.doc.arg_span(m.range.end..arg2_split),
                        )
                    }
                    None => Args::outside(None, self.doc.arg_span(m.range.end..arg2_end)),
                },
                (Coord | Adverbial, true) => {
                    Args::outside(None, self.doc.arg_span(m.range.end..arg2_end))
                }
                (Adverbial, false) if !after_break(self.doc, &self.sentence, m.range.start) => {
                    self.around(m, &breaks, arg1_start, arg2_end)
                }
                (_, false) => Args::outside(
                    self.doc.arg_span(arg1_start..m.range.start),
                    self.doc.arg_span(m.range.end..arg2_end),
                ),
            };
            let keeps_segment = args.inside_clause || (initial && m.class == Sub);
            if !keeps_segment {
                segment_start = m.range.end;
            }
            if let Some(relation) = self.relation(m, args) {
                out.push((relation, m));
            }
        }
        out
    }

    /// Arguments of a prepositional connective: `arg2` is its noun phrase ("due to [the
    /// price]"), `arg1` the clause before it, or after the phrase when the connective leads
    /// ("Due to the price, [I stopped]").
    fn prepositional(&self, m: &Marker, arg1_start: usize, clause_end: usize) -> Args {
        let phrase_end = chunk::coordinated_np_end(self.doc, m.range.end, clause_end)
            .unwrap_or_else(|| self.comma_before(m.range.end, clause_end));
        let arg1 = self
            .doc
            .arg_span(arg1_start..m.range.start)
            .or_else(|| self.doc.arg_span(phrase_end..clause_end));
        Args {
            arg1,
            arg2: self.doc.arg_span(m.range.end..phrase_end),
            outside: true,
            inside_clause: true,
        }
    }

    /// Arguments of an adverbial inside its clause ("I also drink tea", "It's pricey
    /// though"): `arg2` is that clause (without a trailing marker), `arg1` the clause before
    /// it in the sentence, or else the previous sentence.
    fn around(&self, m: &Marker, breaks: &[usize], clause_start: usize, clause_end: usize) -> Args {
        let before = breaks
            .iter()
            .copied()
            .rfind(|&b| b < m.range.start)
            .and_then(|b| {
                let from = breaks
                    .iter()
                    .copied()
                    .rfind(|&p| p < b)
                    .map_or(self.sentence.start, |p| p + 1);
                self.doc.arg_span(from..b)
            });
        let trailing = self.doc.trim(m.range.end..clause_end).is_none();
        let end = if trailing { m.range.start } else { clause_end };
        Args {
            arg1: before.or_else(|| self.previous.clone()),
            arg2: self.doc.arg_span(clause_start..end),
            // With nothing before it, "at first" or "then" inside a clause is just an adverb.
            outside: false,
            inside_clause: true,
        }
    }

    /// Tokens where a new clause starts inside the sentence: "and"/"or" before a subject and
    /// verb, and semicolons.
    fn clause_breaks(&self) -> Vec<usize> {
        let mut verb_seen = false;
        let mut out = Vec::new();
        for k in self.sentence.clone() {
            let n = self.doc.norm(k);
            let coordinates_clauses = matches!(n, "and" | "or")
                && verb_seen
                && chunk::starts_clause(self.doc, k + 1, self.sentence.end);
            if n == ";" || coordinates_clauses {
                out.push(k);
            }
            verb_seen |= matches!(self.doc.tag(k), Tag::Verb | Tag::Aux);
        }
        out
    }

    /// Builds the relation. A missing `arg1` is the previous sentence or, failing that, an
    /// empty span at the marker (the first argument is outside the answer); additions and
    /// clause-internal adverbials need a real `arg1`.
    fn relation(&self, m: &Marker, args: Args) -> Option<DiscourseRelation> {
        let marker = self.doc.raw_span(m.range.clone())?;
        let second = args.arg2?;
        let first = match args.arg1 {
            Some(span) => span,
            None if !args.outside => return None,
            None => match self.previous.clone() {
                Some(previous) => previous,
                None if m.kind == RelationKind::Addition => return None,
                None => Span::new(self.doc.text, marker.start, marker.start)?,
            },
        };
        Some(DiscourseRelation {
            kind: m.kind,
            marker,
            arg1: first,
            arg2: second,
        })
    }

    /// Where a main clause starting at token `main_start` ends: at the next marker or clause
    /// break, or the sentence end.
    fn main_end(&self, breaks: &[usize], main_start: usize) -> usize {
        self.next_marker_from(main_start).min(
            breaks
                .iter()
                .copied()
                .find(|&b| b >= main_start)
                .unwrap_or(self.sentence.end),
        )
    }

    /// Start of the first marker at or after token `from`, or the sentence end.
    fn next_marker_from(&self, from: usize) -> usize {
        self.markers
            .iter()
            .map(|m| m.range.start)
            .find(|&s| s >= from)
            .unwrap_or(self.sentence.end)
    }

    /// The first comma in `from..limit`, or `limit`.
    fn comma_before(&self, from: usize, limit: usize) -> usize {
        (from..limit)
            .find(|&k| self.doc.norm(k) == ",")
            .unwrap_or(limit)
    }

    /// Where a sentence-initial subordinate clause ends and the main clause starts: at a
    /// subject pronoun followed by a verb after the subordinate clause's own verb ("When I'm
    /// tired I drink coffee") or a noun group after a description ("When I'm calm the kids
    /// talk to me") or after its object ("When you drop a steak in the pan doesn't go cold"),
    /// or else at the first comma; whichever comes first, since the
    /// comma may close the main clause instead ("When it tastes good I enjoy the start to the
    /// day, and …").
    fn main_clause_split(&self, from: usize) -> Option<(usize, usize)> {
        let end = self.sentence.end;
        let comma = (from..end).find(|&k| self.doc.norm(k) == ",");
        let comma_limit = comma.unwrap_or(end);
        let pronoun = (from..comma_limit)
            .find(|&k| matches!(self.doc.tag(k), Tag::Verb | Tag::Aux))
            .and_then(|first_verb| {
                (first_verb + 1..comma_limit).find(|&k| {
                    let pronoun = self.doc.tag(k) == Tag::Pron
                        && words::is_subject_capable(self.doc.norm(k))
                        && matches!(self.doc.tag(k + 1), Tag::Verb | Tag::Aux | Tag::Adv)
                        && !matches!(self.doc.tag(k.wrapping_sub(1)), Tag::Prep | Tag::Inf);
                    // "When I'm calm the kids talk to me": a noun group with its own verb.
                    let noun_group = self.doc.tag(k) == Tag::Det
                        && chunk::after_description(self.doc, k)
                        && chunk::starts_clause(self.doc, k, comma_limit);
                    pronoun || noun_group || chunk::subject_after_object(self.doc, k, comma_limit)
                })
            });
        match (pronoun, comma) {
            (Some(k), _) => Some((k, k)),
            (None, Some(c)) => Some((c, c + 1)),
            (None, None) => None,
        }
    }
}
