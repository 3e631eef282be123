//! Relationships between the concepts of one answer, from its discourse connectives and
//! causative verbs, directed by the ontology's levels and typed by what it permits.
//!
//! A connective of the causal, result, purpose, condition or temporal kind links the concept of
//! each of its two arguments nearest the connective; a causative verb ("X makes Y", "X helps
//! me Y") links its subject to what it brings about. Causal links point from the lower-level
//! concept to the higher-level one ("I buy it because it's creamy": the attribute "creamy"
//! leads to whatever it explains), and between concepts of one level from cause to effect;
//! when the ontology permits only the cause-to-effect direction (a `pain_point` that
//! `motivates` a `competing_solution` of a lower level), that direction is used. Temporal
//! links keep the order of events.
//!
//! Of the edge types that permit the pair (wildcard-only types such as `revises` are never
//! inferred), one whose description quotes the connective wins ("because" for `caused`, "when"
//! for `triggers`); a causal connective never yields a pure sequence edge (`preceded`, whose
//! description speaks of what "happened before"), and a temporal one prefers it. Contrast,
//! concession and addition link nothing.
//!
//! Where the parser relates nothing, the words between two neighbouring concepts can: "so"
//! before a clause, "because" inside the sentence, "that means" or "which lets me", a pointing
//! "that" right before the second concept, "then" or "after that", and in a story a bare "and"
//! (sequence edges only). "after" followed by a span of time ("after about an hour they …")
//! orders the rest later, not first.
//!
//! Of two alternatives of one kind, the one the respondent used to use or tried gives way to
//! the one they turned to "so", "now" or "in the end" (see `switches`).

use crate::config::{EdgeType, Methodology};
use crate::srl::{DiscourseRelation, RelationKind, Span, SrlAnalysis};

use super::phrases::{CausalPair, Phrase};

mod switches;

/// Confidence of a link stated by a connective ("because", "so", "which means").
const CONNECTIVE_CONFIDENCE: f64 = 0.75;
/// Confidence of a link read from a causative verb ("makes", "helps"): the verb's subject is
/// sometimes only the occasion, not the cause.
const CAUSATIVE_CONFIDENCE: f64 = 0.65;
/// Confidence of a temporal link: order is stated, the relation between the events is not.
const TEMPORAL_CONFIDENCE: f64 = 0.6;
/// Confidence of a link from a probed concept to the answer: the question, not the
/// respondent, names the concept being explained.
pub(super) const PROBE_CONFIDENCE: f64 = 0.6;

/// A typed concept as links see it.
#[derive(Debug, Clone)]
pub(super) struct Node<'a> {
    pub phrase: &'a Phrase,
    pub type_name: &'a str,
    pub level: u32,
}

/// One inferred relationship, between indices of the node list.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Link {
    pub source: usize,
    pub target: usize,
    pub edge_type: String,
    pub confidence: f64,
}

/// The links of one answer.
pub(super) fn find(
    methodology: &Methodology,
    analysis: &SrlAnalysis,
    nodes: &[Node<'_>],
    causal: &[CausalPair],
    answer: &str,
) -> Vec<Link> {
    let mut links: Vec<Link> = Vec::new();
    for relation in &analysis.discourse_relations {
        let Some(kind) = LinkKind::of(relation) else {
            continue;
        };
        let arg1 = main_clause(analysis, relation);
        let (Some(a1), Some(a2)) = (
            nearest(nodes, arg1, &relation.marker),
            nearest(nodes, &relation.arg2, &relation.marker),
        ) else {
            continue;
        };
        let (cause, effect) = kind.natural(a1, a2);
        let marker = relation.marker.text.to_lowercase();
        if let Some(link) = decide(methodology, nodes, (cause, effect), &kind, &marker) {
            add(&mut links, link);
        }
    }
    for pair in causal {
        let kind = LinkKind::Causative;
        if let Some(link) = decide(methodology, nodes, (pair.cause, pair.effect), &kind, "") {
            add(&mut links, link);
        }
    }
    let gaps = gap_cues(nodes, answer);
    for gap in &gaps {
        let (i, next) = (gap.first, gap.first + 1);
        let linked = links
            .iter()
            .any(|l| (l.source == i && l.target == next) || (l.source == next && l.target == i));
        if linked {
            continue;
        }
        let pair = gap.kind.natural(i, next);
        if let Some(mut link) = decide(methodology, nodes, pair, &gap.kind, gap.marker) {
            link.confidence = GAP_CONFIDENCE;
            let target = link.target;
            add(&mut links, link);
            if gap.opens_sentence && pair == (i, next) {
                for j in listed_before(methodology, nodes, &gaps, &links, i) {
                    if let Some(mut link) = decide(methodology, nodes, (j, target), &gap.kind, "") {
                        link.confidence = GAP_CONFIDENCE;
                        add(&mut links, link);
                    }
                }
            }
        }
    }
    for link in switches::find(methodology, nodes, answer) {
        let linked = links.iter().any(|l| {
            (l.source == link.source && l.target == link.target)
                || (l.source == link.target && l.target == link.source)
        });
        if !linked {
            add(&mut links, link);
        }
    }
    links
}

/// "No contract. No credit check. Top up when I want. Means there's never a surprise bill": a
/// sentence that opens on what the ones before bring about follows from each property listed
/// before it, not only the last. The concepts of the bottom rung just before `last`, back to
/// the first with a cue of its own between it and the next or already linked onward; `last`
/// must be on the bottom rung too. Only on a ladder ([`climbs`](super::extract::climbs)): in a
/// story or a job, things listed are parts of a scene, not causes.
fn listed_before(
    methodology: &Methodology,
    nodes: &[Node<'_>],
    gaps: &[GapCue],
    links: &[Link],
    last: usize,
) -> Vec<usize> {
    let bottom = methodology.level_range().0;
    let on_bottom = |k: usize| nodes.get(k).is_some_and(|n| n.level == bottom);
    if !super::extract::climbs(methodology) || !on_bottom(last) {
        return Vec::new();
    }
    (0..last)
        .rev()
        .take_while(|&j| {
            on_bottom(j)
                && !gaps.iter().any(|g| g.first == j)
                && !links.iter().any(|l| l.source == j)
        })
        .collect()
}

/// What the words between two neighbouring concepts say of how they relate.
struct GapCue {
    /// Index of the first concept of the pair.
    first: usize,
    kind: LinkKind,
    marker: &'static str,
    /// The cue word opens the second concept's sentence ("… Means I actually brush").
    opens_sentence: bool,
}

/// Confidence of a link read from the words between two neighbouring concepts, which the
/// parser did not relate.
const GAP_CONFIDENCE: f64 = 0.55;

/// Words between two neighbouring concepts that state how they relate, when the parser found
/// no relation: "so" before a new clause, a verb of bringing about ("that means", "which
/// lets me"), "part of", "because", or narration ("and then", "after that", "and"). Yields the index of
/// the first concept of each pair, the kind of link and the marker.
///
/// Gets wrong: "and" is read as narration only where the ontology has a sequence edge for the
/// pair, so two events merely listed become a sequence; a concept left out between the two
/// makes the link skip it.
fn gap_cues(nodes: &[Node<'_>], answer: &str) -> Vec<GapCue> {
    let mut out = Vec::new();
    for (i, pair) in nodes.windows(2).enumerate() {
        let [a, b] = pair else { continue };
        if b.phrase.start < a.phrase.end {
            continue;
        }
        let gap = answer
            .get(a.phrase.end..b.phrase.start)
            .unwrap_or_default()
            .to_lowercase();
        let words: Vec<&str> = gap
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .filter(|w| !w.is_empty())
            .collect();
        if words.len() > GAP_WORDS {
            continue;
        }
        // Words before the last sentence break: the next sentence starts at this index.
        let break_at = gap.rfind(['.', '?', '!']).map(|at| {
            gap.get(..at)
                .unwrap_or_default()
                .split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .filter(|w| !w.is_empty())
                .count()
        });
        if let Some((kind, marker)) = gap_cue(&words, break_at) {
            out.push(GapCue {
                first: i,
                kind,
                marker,
                opens_sentence: break_at == Some(0),
            });
        }
    }
    out
}

/// Most words between two concepts for a gap cue to relate them.
const GAP_WORDS: usize = 10;

/// The cue of one gap's words; `break_at` is the index of the word that opens a new sentence
/// in it, if one does.
fn gap_cue(words: &[&str], break_at: Option<usize>) -> Option<(LinkKind, &'static str)> {
    let sentence_break = break_at.is_some();
    let has = |w: &str| words.contains(&w);
    // "so" before a clause, not "so" as a degree word right before the concept ("so quiet"),
    // and in the second concept's sentence: "bloating, so I switched. It's pricey" relates
    // the switch, not the price.
    // "so when the kids get home …" leads to the clause after the "when" clause, not to it.
    let result_so = words.iter().rposition(|w| *w == "so").is_some_and(|at| {
        words.get(at + 1).is_some_and(|next| {
            !matches!(
                *next,
                "when" | "whenever" | "if" | "once" | "while" | "before" | "after" | "because"
            )
        }) && at >= break_at.unwrap_or(0)
    });
    // A "because" that opens the next sentence explains that sentence's own clause.
    if !sentence_break && (has("because") || has("cause")) {
        let then = words
            .windows(2)
            .any(|pair| matches!(pair, ["because" | "cause", "then"]));
        let kind = if then {
            LinkKind::Consequence
        } else {
            LinkKind::Reason
        };
        return Some((kind, "because"));
    }
    if result_so {
        return Some((LinkKind::Consequence, "so"));
    }
    // "It gives me …" after a full stop is said of the topic; "that means", "which lets me"
    // point back at what was just said.
    let bringing = [
        "means",
        "meant",
        "lets",
        "let",
        "makes",
        "made",
        "helps",
        "helped",
        "keeps",
        "gives",
        "therefore",
        "why",
    ];
    // "Means I actually brush properly": a verb that opens its sentence has the previous
    // sentence for its subject.
    let pointed = |at: usize| {
        !sentence_break
            || break_at == Some(at)
            || at
                .checked_sub(1)
                .and_then(|p| words.get(p))
                .is_some_and(|p| matches!(*p, "that" | "this" | "which" | "that's"))
    };
    if let Some(verb) = bringing
        .iter()
        .find(|v| words.iter().position(|w| w == *v).is_some_and(pointed))
    {
        return Some((LinkKind::Causative, verb));
    }
    // "Being patient is part of being a good parent": the part serves the whole.
    if !sentence_break && words.windows(2).any(|w| w == ["part", "of"]) {
        return Some((LinkKind::Causative, "part of"));
    }
    // "…, and that money goes into …", ". That cost about …": a pointing subject right before
    // the concept makes it what the previous one brought about.
    // So does one followed by what it is ("rain or not, that's what keeps my head straight",
    // "which is what I want for her", "for me that's about being a decent employer").
    let mut pointing = words;
    while let [head @ .., last] = pointing
        && matches!(*last, "what" | "about" | "is" | "all")
    {
        pointing = head;
    }
    if pointing
        .last()
        .is_some_and(|w| matches!(*w, "that" | "this" | "which" | "that's"))
    {
        return Some((LinkKind::Causative, ""));
    }
    // "I'll finish by four, and then I can log off": what "then" makes possible follows
    // from it.
    if !sentence_break && let [.., "then", "i" | "we" | "you", "can" | "could"] = words {
        return Some((LinkKind::Consequence, "so"));
    }
    // "the pan doesn't go cold, and you get a proper crust": what one gets after "and" is
    // what the clause before brought, in that direction whatever the types' levels.
    let got = words
        .windows(3)
        .any(|w| matches!(w, ["and", "i" | "we" | "you", "get" | "got"]));
    if !sentence_break && got {
        return Some((LinkKind::Causative, ""));
    }
    let sequence = ["then", "after", "afterwards", "eventually", "later"];
    if let Some(m) = sequence.iter().find(|m| has(m)) {
        return Some((LinkKind::Sequence { arg2_first: false }, m));
    }
    // A bare "and" in one sentence is narration, for sequence edges only (no marker quoted).
    (!sentence_break && has("and")).then_some((LinkKind::Sequence { arg2_first: false }, ""))
}

/// The first argument of `relation`, or, when that is itself the subordinate clause of a
/// temporal or conditional relation ("It keeps for a week once it's open, so I waste less"),
/// the clause that one depends on: what the respondent presents as the cause.
fn main_clause<'a>(analysis: &'a SrlAnalysis, relation: &'a DiscourseRelation) -> &'a Span {
    let arg1 = &relation.arg1;
    analysis
        .discourse_relations
        .iter()
        .filter(|r| matches!(r.kind, RelationKind::Temporal | RelationKind::Condition))
        .find(|r| {
            !r.arg1_unstated()
                && r.arg2.start <= arg1.start
                && arg1.end <= r.arg2.end
                && r != &relation
        })
        .map_or(arg1, |r| &r.arg1)
}

fn add(links: &mut Vec<Link>, link: Link) {
    let duplicate = links.iter().any(|l| {
        l.source == link.source && l.target == link.target && l.edge_type == link.edge_type
    });
    if !duplicate {
        links.push(link);
    }
}

/// "after about an hour they put us on …", "after that": a span of time or a pointer after
/// "after" says when the rest happened, so the rest comes later, not first.
fn opens_with_a_span(text: &str) -> bool {
    let first = text
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .map(str::to_lowercase)
        .unwrap_or_default();
    matches!(
        first.as_str(),
        "that" | "this" | "about" | "a" | "an" | "some"
    ) || super::lexicon::is_number_word(&first)
}

/// How a relation links its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LinkKind {
    /// `arg2` brings about `arg1` ("because", "if").
    Reason,
    /// `arg1` brings about `arg2` ("so", "which means", "so that").
    Consequence,
    /// Events in order; `true` when `arg2` happened first ("after", "when").
    Sequence { arg2_first: bool },
    /// A causative verb's subject brings about its object.
    Causative,
}

impl LinkKind {
    fn of(relation: &DiscourseRelation) -> Option<Self> {
        match relation.kind {
            // "they die halfway through my commute because then I'm stuck with the noise": a
            // "because then" gives what follows, not the cause.
            RelationKind::Causal
                if relation
                    .arg2
                    .text
                    .trim_start()
                    .to_lowercase()
                    .starts_with("then ") =>
            {
                Some(Self::Consequence)
            }
            RelationKind::Causal | RelationKind::Condition => Some(Self::Reason),
            RelationKind::Result | RelationKind::Purpose => Some(Self::Consequence),
            RelationKind::Temporal => {
                let marker = relation.marker.text.to_lowercase();
                let arg2_first = matches!(
                    marker.as_str(),
                    "after" | "once" | "when" | "whenever" | "since" | "as soon as"
                ) && !(marker == "after"
                    && opens_with_a_span(&relation.arg2.text));
                Some(Self::Sequence { arg2_first })
            }
            RelationKind::Contrast | RelationKind::Concession | RelationKind::Addition => None,
        }
    }

    /// (cause or earlier, effect or later) of the two arguments' nodes.
    fn natural(&self, a1: usize, a2: usize) -> (usize, usize) {
        match self {
            Self::Reason | Self::Sequence { arg2_first: true } => (a2, a1),
            Self::Consequence | Self::Causative | Self::Sequence { arg2_first: false } => (a1, a2),
        }
    }

    fn confidence(&self) -> f64 {
        match self {
            Self::Reason | Self::Consequence => CONNECTIVE_CONFIDENCE,
            Self::Causative => CAUSATIVE_CONFIDENCE,
            Self::Sequence { .. } => TEMPORAL_CONFIDENCE,
        }
    }
}

/// The node whose phrase overlaps `arg` and lies nearest the connective.
/// An argument with no concept of its own that opens with "that", "this", "it" or "which"
/// ("that matters to me because …") stands for the concept just before it.
fn nearest(nodes: &[Node<'_>], arg: &Span, marker: &Span) -> Option<usize> {
    if arg.text.is_empty() {
        return None;
    }
    let inside = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.phrase.start < arg.end && n.phrase.end > arg.start)
        .min_by_key(|(_, n)| {
            if n.phrase.end <= marker.start {
                marker.start - n.phrase.end
            } else {
                n.phrase.start.saturating_sub(marker.end)
            }
        })
        .map(|(i, _)| i);
    inside.or_else(|| {
        let first = arg
            .text
            .split(|c: char| !c.is_alphanumeric())
            .find(|w| !w.is_empty())?
            .to_lowercase();
        if !super::phrases::ANAPHORS.contains(&first.as_str()) {
            return None;
        }
        nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.phrase.end <= arg.start)
            .max_by_key(|(_, n)| n.phrase.end)
            .map(|(i, _)| i)
    })
}

/// Direction and edge type for a (cause, effect) pair, if the ontology permits one.
fn decide(
    methodology: &Methodology,
    nodes: &[Node<'_>],
    (cause, effect): (usize, usize),
    kind: &LinkKind,
    marker: &str,
) -> Option<Link> {
    if cause == effect {
        return None;
    }
    // "When my latte tastes that good I enjoy …": a "when" or "once" the ontology has no
    // sequence edge for states a condition, and links as one.
    if let LinkKind::Sequence { arg2_first: true } = kind
        && matches!(marker, "when" | "whenever" | "once" | "as soon as")
    {
        let sequence = decide_once(methodology, nodes, (cause, effect), kind, marker);
        return sequence.or_else(|| {
            decide_once(
                methodology,
                nodes,
                (cause, effect),
                &LinkKind::Reason,
                marker,
            )
        });
    }
    decide_once(methodology, nodes, (cause, effect), kind, marker)
}

/// [`decide`] for one kind of link.
fn decide_once(
    methodology: &Methodology,
    nodes: &[Node<'_>],
    (cause, effect): (usize, usize),
    kind: &LinkKind,
    marker: &str,
) -> Option<Link> {
    let (c, e) = (nodes.get(cause)?, nodes.get(effect)?);
    // A causative verb states its direction ("X makes me Y"); only a connective between two
    // clauses leaves it to the ontology's levels.
    let directions = match kind {
        LinkKind::Sequence { .. } | LinkKind::Causative => vec![(cause, effect)],
        _ if c.level > e.level => vec![(effect, cause), (cause, effect)],
        _ => vec![(cause, effect)],
    };
    directions.into_iter().find_map(|(s, t)| {
        let (source, target) = (nodes.get(s)?, nodes.get(t)?);
        let edge = choose_edge(
            methodology,
            source.type_name,
            target.type_name,
            kind,
            marker,
        )?;
        Some(Link {
            source: s,
            target: t,
            edge_type: edge.name.clone(),
            confidence: kind.confidence(),
        })
    })
}

/// The best permitted, non-wildcard edge type from `source` to `target` for this kind of link.
fn choose_edge<'m>(
    methodology: &'m Methodology,
    source: &str,
    target: &str,
    kind: &LinkKind,
    marker: &str,
) -> Option<&'m EdgeType> {
    let temporal = matches!(kind, LinkKind::Sequence { .. });
    methodology
        .ontology
        .edges
        .iter()
        .filter(|e| {
            e.permitted_connections
                .iter()
                .any(|(s, t)| s == source && t == target)
        })
        .filter_map(|e| {
            let description = e.description.to_lowercase();
            let quoted = !marker.is_empty() && mentions(&description, marker);
            let sequence = description.contains("happened before");
            let score = match (temporal, sequence) {
                (false, true) => return None,
                (true, false) if !quoted => return None,
                (true, true) => 1,
                _ => 0,
            } + if quoted { 2 } else { 0 };
            Some((e, score))
        })
        // Ties keep ontology order: `max_by_key` returns the last maximum, so compare reversed.
        .rev()
        .max_by_key(|(_, score)| *score)
        .map(|(e, _)| e)
}

/// The edge type a reason link from `source` to `target` would get ("because").
pub(super) fn reason_edge(methodology: &Methodology, source: &str, target: &str) -> Option<String> {
    choose_edge(methodology, source, target, &LinkKind::Reason, "because").map(|e| e.name.clone())
}

/// The edge type a link from `source` to the event that followed it, `target`, would get
/// ("and then").
pub(super) fn sequence_edge(
    methodology: &Methodology,
    source: &str,
    target: &str,
) -> Option<String> {
    let kind = LinkKind::Sequence { arg2_first: false };
    choose_edge(methodology, source, target, &kind, "then").map(|e| e.name.clone())
}

/// `text` contains `phrase` as whole words.
pub(super) fn mentions(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text.get(..at).and_then(|s| s.chars().next_back());
        let after = text.get(at + phrase.len()..).and_then(|s| s.chars().next());
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigDir;

    fn methodology(name: &str) -> Methodology {
        ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .methodology(name, &crate::signals::Catalog)
            .unwrap()
    }

    #[test]
    fn edge_choice_follows_the_connective_and_the_permitted_pairs() {
        let cit = methodology("critical_incident");
        let pick = |s: &str, t: &str, kind: &LinkKind, marker: &str| {
            choose_edge(&cit, s, t, kind, marker).map(|e| e.name.clone())
        };
        let reason = LinkKind::Reason;
        let then = LinkKind::Sequence { arg2_first: false };
        assert_eq!(
            pick("incident_context", "incident_event", &reason, "because").as_deref(),
            Some("caused")
        );
        assert_eq!(
            pick("incident_context", "incident_event", &then, "then").as_deref(),
            Some("preceded")
        );
        assert_eq!(
            pick("incident_event", "outcome", &LinkKind::Consequence, "so").as_deref(),
            Some("resulted_in"),
            "never a sequence edge for a causal connective"
        );
        assert_eq!(pick("lesson", "incident_context", &reason, "because"), None);
        let jtbd = methodology("jobs_to_be_done");
        let when = LinkKind::Sequence { arg2_first: true };
        assert_eq!(
            choose_edge(&jtbd, "job_context", "functional_job", &when, "when")
                .map(|e| e.name.as_str()),
            Some("triggers")
        );
        let mec = methodology("means_end_chain");
        assert_eq!(
            choose_edge(&mec, "attribute", "terminal_value", &reason, "because")
                .map(|e| e.name.as_str()),
            Some("leads_to")
        );
        assert!(
            choose_edge(&mec, "terminal_value", "attribute", &reason, "because").is_none(),
            "revises (wildcard only) is never inferred"
        );
    }

    #[test]
    fn words_between_neighbours_state_the_relation() {
        // `stop`: the gap opens a new sentence (at its first word).
        let kind = |words: &[&str], stop: bool| gap_cue(words, stop.then_some(0)).map(|(k, _)| k);
        assert_eq!(kind(&["so", "i"], false), Some(LinkKind::Consequence));
        assert_eq!(kind(&["it's", "so"], false), None, "a degree word");
        assert_eq!(kind(&["because", "the"], false), Some(LinkKind::Reason));
        // "they die halfway through my commute because then I'm stuck": what follows.
        assert_eq!(
            kind(&["because", "then", "i'm"], false),
            Some(LinkKind::Consequence)
        );
        assert_eq!(
            kind(&["because", "we", "had", "a"], true),
            None,
            "a 'because' opening the next sentence explains that sentence"
        );
        assert_eq!(
            kind(&["and", "that", "means", "i"], false),
            Some(LinkKind::Causative)
        );
        assert_eq!(
            kind(&["it", "gives", "me", "a"], true),
            None,
            "said of the topic"
        );
        assert_eq!(kind(&["that"], true), Some(LinkKind::Causative));
        assert_eq!(
            kind(&["means", "i", "actually"], true),
            Some(LinkKind::Causative),
            "a verb opening its sentence has the previous one for its subject"
        );
        assert_eq!(
            kind(&["and", "then"], false),
            Some(LinkKind::Sequence { arg2_first: false })
        );
        assert_eq!(kind(&["and", "i"], true), None);
        // Seen in a tmux run: "bloating, so I switched about two years ago. It's pricey"
        // linked the price to the bloating.
        let across = [
            "so", "i", "switched", "about", "two", "years", "ago", "it's",
        ];
        assert_eq!(gap_cue(&across, Some(7)), None);
        assert_eq!(
            gap_cue(&["so", "it's"], Some(0)).map(|(k, _)| k),
            Some(LinkKind::Consequence),
            "a 'so' opening the second concept's sentence"
        );
        // Seen in development round 4: "An hour on the hills every morning, rain or not,
        // that's what keeps my head straight" related nothing.
        assert_eq!(
            kind(&["rain", "or", "not", "that's", "what"], false),
            Some(LinkKind::Causative)
        );
        assert_eq!(
            kind(&["for", "me", "that's", "about"], true),
            Some(LinkKind::Causative)
        );
        assert_eq!(kind(&["what", "i"], false), None);
        // Development round 6: "I'll finish by four, and then I can log off".
        assert_eq!(
            gap_cue(&["and", "then", "i", "can"], None).map(|(k, _)| k),
            Some(LinkKind::Consequence)
        );
        assert_eq!(
            gap_cue(&["on", "you", "and", "you", "get", "a"], None).map(|(k, _)| k),
            Some(LinkKind::Causative)
        );
        assert_eq!(
            gap_cue(&["and", "you", "get", "a"], Some(1)).map(|(k, _)| k),
            None,
            "not across a sentence break"
        );
        assert_eq!(
            gap_cue(&["and", "then", "i"], None).map(|(k, _)| k),
            Some(LinkKind::Sequence { arg2_first: false })
        );
        assert_eq!(
            kind(&["so", "when", "the"], false),
            None,
            "'so' before a 'when' clause leads past it"
        );
        assert!(opens_with_a_span("about an hour they put us on"));
        assert!(!opens_with_a_span("the call I messaged my manager"));
    }

    #[test]
    fn whole_word_mentions() {
        assert!(mentions("(\"because\", \"so\")", "so"));
        assert!(!mentions("also", "so"));
        assert!(mentions("when x happens", "when"));
    }
}
