//! A study: the analysis across interviews of one methodology (`interviewer analyze`).
//!
//! Each interview ends as its own graph; a researcher's deliverable is what the interviews say
//! together. This module reads the chosen sessions ([`load`]), merges what they said into
//! codes across sessions ([`codes`]), counts links between codes once per respondent
//! ([`links`]: the implication matrix of laddering analysis, the map of links at or above a
//! cutoff, the dominant chains) and renders the report ([`render`]).
//!
//! Everything here is pure over the loaded sessions and deterministic: the same sessions give
//! the same report byte for byte, whichever file or order they came from.

pub mod codes;
pub mod links;
pub mod load;
pub mod render;

use std::collections::BTreeMap;

use serde::Serialize;

pub use codes::{Code, CodeMember, Quote};
pub use links::{Chain, CutoffShare, Link};
pub use load::{Selection, StudyError, StudySession, load};
pub use render::{Format, render};

/// The whole analysis of a study.
#[derive(Debug, Clone, Serialize)]
pub struct Study {
    pub methodology: String,
    /// Concepts the sessions interviewed about.
    pub concepts: Vec<String>,
    /// Sessions analysed, in id order.
    pub sessions: Vec<SessionSummary>,
    /// Cosine similarity at or above which two items of one node type are one code.
    pub threshold: f32,
    /// Codes, ranked by node type level, then respondents, then name.
    pub codes: Vec<Code>,
    /// Every pair of codes linked by at least one respondent, directly or indirectly.
    pub links: Vec<Link>,
    /// Respondents a link needs to be on the map: as asked, or by default from the number of
    /// respondents ([`links::default_cutoff`]) but never above the most any link has, so the
    /// default map is never empty while any link was made.
    pub cutoff: u32,
    /// Share of links and of link mentions each cutoff keeps.
    pub cutoff_shares: Vec<CutoffShare>,
    /// Paths through the map from a code nothing leads to, to one that leads nowhere, ranked by
    /// the respondents who made every link of the path.
    pub chains: Vec<Chain>,
    /// Pairs of codes raised by the same respondents, most shared first.
    pub co_occurrence: Vec<CoOccurrence>,
    /// How often each strategy was selected, over all sessions.
    pub strategies: BTreeMap<String, u32>,
    /// Why the interviews ended.
    pub terminations: BTreeMap<String, u32>,
}

/// One analysed session.
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub concept: String,
    /// The database file it was read from.
    pub source: String,
    pub finished: bool,
    /// Imported from a transcript rather than conducted by the app.
    pub imported: bool,
    pub turns: u32,
    /// Codes the session raised.
    pub codes: u32,
    /// Share of the study's codes the session raised.
    pub coverage: f64,
}

/// Two codes raised by the same respondents.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CoOccurrence {
    pub a: String,
    pub b: String,
    pub respondents: u32,
}

/// How many co-occurring pairs a study lists.
const CO_OCCURRENCE_LIMIT: usize = 15;

/// Analyses `sessions` (all of `methodology`): codes, links, the map at `cutoff` (a default
/// from the number of respondents when `None`) and the tables.
pub fn analyse(
    sessions: &[StudySession],
    methodology: &crate::config::Methodology,
    cutoff: Option<u32>,
) -> Study {
    let threshold = methodology.thresholds.canonical_similarity_threshold;
    let codes = codes::build(sessions, methodology, threshold);
    let respondents = u32::try_from(sessions.len()).unwrap_or(u32::MAX);
    let graph = links::count(sessions, &codes);
    let most = graph.links.iter().map(|l| l.direct).max().unwrap_or(1);
    let cutoff = cutoff.unwrap_or_else(|| links::default_cutoff(respondents).min(most.max(1)));
    let cutoff_shares = links::cutoff_shares(&graph.links, respondents);
    let chains = links::chains(&graph, &codes, cutoff);
    let total = codes.len().max(1) as f64;
    let summaries = sessions
        .iter()
        .map(|s| {
            let raised = codes.iter().filter(|c| c.sessions.contains(&s.id)).count();
            SessionSummary {
                id: s.id.clone(),
                concept: s.concept.clone(),
                source: s.source.clone(),
                finished: s.finished,
                imported: s.imported,
                turns: s.turns,
                codes: u32::try_from(raised).unwrap_or(u32::MAX),
                coverage: raised as f64 / total,
            }
        })
        .collect();
    let mut strategies = BTreeMap::new();
    let mut terminations = BTreeMap::new();
    for s in sessions {
        for strategy in &s.strategies {
            *strategies.entry(strategy.clone()).or_insert(0) += 1;
        }
        let reason = s
            .termination
            .clone()
            .unwrap_or_else(|| "(unfinished)".to_owned());
        *terminations.entry(reason).or_insert(0) += 1;
    }
    let mut concepts: Vec<String> = sessions.iter().map(|s| s.concept.clone()).collect();
    concepts.sort();
    concepts.dedup();
    Study {
        methodology: methodology.method.name.clone(),
        concepts,
        sessions: summaries,
        threshold,
        co_occurrence: co_occurrence(&codes),
        links: graph.links,
        cutoff,
        cutoff_shares,
        chains,
        codes,
        strategies,
        terminations,
    }
}

/// Pairs of codes raised by two or more of the same respondents, most shared first.
fn co_occurrence(codes: &[Code]) -> Vec<CoOccurrence> {
    let mut pairs = Vec::new();
    for (i, a) in codes.iter().enumerate() {
        for b in codes.iter().skip(i + 1) {
            let shared = a.sessions.intersection(&b.sessions).count();
            if shared >= 2 {
                pairs.push(CoOccurrence {
                    a: a.id.clone(),
                    b: b.id.clone(),
                    respondents: u32::try_from(shared).unwrap_or(u32::MAX),
                });
            }
        }
    }
    pairs.sort_by(|x, y| {
        y.respondents
            .cmp(&x.respondents)
            .then_with(|| x.a.cmp(&y.a))
            .then_with(|| x.b.cmp(&y.b))
    });
    pairs.truncate(CO_OCCURRENCE_LIMIT);
    pairs
}
