//! Links between codes, counted the way laddering analysis counts them (Reynolds & Gutman's
//! implication matrix): a respondent who linked code A to code B directly counts once for the
//! direct link, however often they said it; one who reached B from A only through other codes
//! counts once for the indirect link. The map (the Hierarchical Value Map in means-end chain
//! research) keeps the links at least `cutoff` respondents made directly, and the dominant
//! chains are its paths ranked by the respondents who made every link of the path.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::codes::Code;
use super::load::StudySession;

/// One pair of codes with its counts.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Link {
    pub from: String,
    pub to: String,
    /// Respondents who linked them directly.
    pub direct: u32,
    /// Respondents who linked them only through other codes.
    pub indirect: u32,
    /// The sessions of the direct links.
    pub direct_sessions: BTreeSet<String>,
}

/// What one cutoff keeps of the direct links.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CutoffShare {
    pub cutoff: u32,
    /// Links with at least `cutoff` direct respondents.
    pub links: u32,
    /// Their share of all directly made links.
    pub share_of_links: f64,
    /// Their share of all direct mentions (a link made by three respondents is three).
    pub share_of_mentions: f64,
}

/// A path through the map.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Chain {
    /// Code ids, from the lowest rung up.
    pub codes: Vec<String>,
    /// Respondents who made every link of the path directly.
    pub respondents: u32,
}

/// The counted links, with each session's own direct links by code.
pub struct Counted {
    pub links: Vec<Link>,
    direct_by_session: BTreeMap<String, BTreeSet<(String, String)>>,
}

/// How many chains a study lists, and how many paths it looks at to find them.
const CHAIN_LIMIT: usize = 10;
const PATH_LIMIT: usize = 5_000;

/// Counts every session's links between codes.
pub fn count(sessions: &[StudySession], codes: &[Code]) -> Counted {
    let mut code_of: HashMap<(&str, &str), &str> = HashMap::new();
    for code in codes {
        for member in &code.members {
            code_of.insert((member.session.as_str(), member.key.as_str()), &code.id);
        }
    }
    let mut direct: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut indirect: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut direct_by_session = BTreeMap::new();
    for session in sessions {
        let id = session.id.as_str();
        let own: BTreeSet<(String, String)> = session
            .links
            .iter()
            .filter_map(|(a, b)| {
                let from = code_of.get(&(id, a.as_str()))?;
                let to = code_of.get(&(id, b.as_str()))?;
                (from != to).then(|| ((*from).to_owned(), (*to).to_owned()))
            })
            .collect();
        for pair in &own {
            direct
                .entry(pair.clone())
                .or_default()
                .insert(session.id.clone());
        }
        for pair in reachable(&own) {
            if !own.contains(&pair) {
                indirect.entry(pair).or_default().insert(session.id.clone());
            }
        }
        direct_by_session.insert(session.id.clone(), own);
    }
    let pairs: BTreeSet<&(String, String)> = direct.keys().chain(indirect.keys()).collect();
    let count = |set: Option<&BTreeSet<String>>| {
        set.map_or(0, |s| u32::try_from(s.len()).unwrap_or(u32::MAX))
    };
    let mut links: Vec<Link> = pairs
        .into_iter()
        .map(|(from, to)| {
            let key = (from.clone(), to.clone());
            Link {
                from: from.clone(),
                to: to.clone(),
                direct: count(direct.get(&key)),
                indirect: count(indirect.get(&key)),
                direct_sessions: direct.get(&key).cloned().unwrap_or_default(),
            }
        })
        .collect();
    let rank: HashMap<&str, usize> = codes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let position = |id: &str| rank.get(id).copied().unwrap_or(usize::MAX);
    links.sort_by_key(|l| (position(&l.from), position(&l.to)));
    Counted {
        links,
        direct_by_session,
    }
}

/// Every pair `(a, c)` with a path from `a` to `c` of one or more links (no pair `(a, a)`).
fn reachable(links: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in links {
        next.entry(a).or_default().push(b);
    }
    let mut out = BTreeSet::new();
    for start in next.keys() {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack: Vec<&str> = next.get(start).cloned().unwrap_or_default();
        while let Some(node) = stack.pop() {
            if !seen.insert(node) {
                continue;
            }
            if node != *start {
                out.insert(((*start).to_owned(), node.to_owned()));
            }
            stack.extend(next.get(node).into_iter().flatten().copied());
        }
    }
    out
}

/// The cutoff a study uses unless told: 1 for up to 3 respondents, 2 up to 10, then about a
/// fifth of the respondents (laddering studies of 20–40 respondents commonly draw the map at
/// 3–5).
pub fn default_cutoff(respondents: u32) -> u32 {
    match respondents {
        0..=3 => 1,
        4..=10 => 2,
        n => n.div_ceil(5),
    }
}

/// What each cutoff from 1 up to the most respondents of any link keeps.
pub fn cutoff_shares(links: &[Link], respondents: u32) -> Vec<CutoffShare> {
    let made: Vec<u32> = links.iter().map(|l| l.direct).filter(|d| *d > 0).collect();
    let total_links = made.len().max(1) as f64;
    let total_mentions = f64::from(made.iter().sum::<u32>().max(1));
    let top = made
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .min(respondents.max(1));
    (1..=top)
        .map(|cutoff| {
            let kept: Vec<u32> = made.iter().copied().filter(|d| *d >= cutoff).collect();
            CutoffShare {
                cutoff,
                links: u32::try_from(kept.len()).unwrap_or(u32::MAX),
                share_of_links: kept.len() as f64 / total_links,
                share_of_mentions: f64::from(kept.iter().sum::<u32>()) / total_mentions,
            }
        })
        .collect()
}

/// The map's paths from a code no kept link leads to, to one that leads nowhere, ranked by
/// the respondents who made every link of the path directly, then by length. A path that no
/// one respondent made end to end (its links come from different people) is not a chain.
pub fn chains(counted: &Counted, codes: &[Code], cutoff: u32) -> Vec<Chain> {
    let kept: Vec<&Link> = counted
        .links
        .iter()
        .filter(|l| l.direct >= cutoff.max(1))
        .collect();
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut has_incoming: BTreeSet<&str> = BTreeSet::new();
    for link in &kept {
        next.entry(&link.from).or_default().push(&link.to);
        has_incoming.insert(&link.to);
    }
    let order: HashMap<&str, usize> = codes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let mut starts: Vec<&str> = next
        .keys()
        .copied()
        .filter(|c| !has_incoming.contains(c))
        .collect();
    starts.sort_by_key(|c| order.get(c).copied().unwrap_or(usize::MAX));
    let mut paths: Vec<Vec<&str>> = Vec::new();
    for start in starts {
        walk(&next, vec![start], &mut paths);
    }
    let mut chains: Vec<Chain> = paths
        .into_iter()
        .filter(|p| p.len() >= 2)
        .map(|path| {
            let links: Vec<(String, String)> = path
                .windows(2)
                .filter_map(|w| match w {
                    [a, b] => Some(((*a).to_owned(), (*b).to_owned())),
                    _ => None,
                })
                .collect();
            let respondents = counted
                .direct_by_session
                .values()
                .filter(|own| links.iter().all(|l| own.contains(l)))
                .count();
            Chain {
                codes: path.iter().map(|c| (*c).to_owned()).collect(),
                respondents: u32::try_from(respondents).unwrap_or(u32::MAX),
            }
        })
        .filter(|chain| chain.respondents > 0)
        .collect();
    let position = |chain: &Chain| -> Vec<usize> {
        chain
            .codes
            .iter()
            .map(|c| order.get(c.as_str()).copied().unwrap_or(usize::MAX))
            .collect()
    };
    chains.sort_by(|a, b| {
        b.respondents
            .cmp(&a.respondents)
            .then_with(|| b.codes.len().cmp(&a.codes.len()))
            .then_with(|| position(a).cmp(&position(b)))
    });
    chains.truncate(CHAIN_LIMIT);
    chains
}

/// Extends `path` along every kept link that does not revisit a code, collecting the paths
/// that can go no further (at most [`PATH_LIMIT`] of them).
fn walk<'a>(
    next: &BTreeMap<&'a str, Vec<&'a str>>,
    path: Vec<&'a str>,
    out: &mut Vec<Vec<&'a str>>,
) {
    if out.len() >= PATH_LIMIT {
        return;
    }
    let Some(last) = path.last().copied() else {
        return;
    };
    let onward: Vec<&str> = next
        .get(last)
        .into_iter()
        .flatten()
        .copied()
        .filter(|c| !path.contains(c))
        .collect();
    if onward.is_empty() {
        out.push(path);
        return;
    }
    for code in onward {
        let mut longer = path.clone();
        longer.push(code);
        walk(next, longer, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> BTreeSet<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn reachability_follows_paths_and_survives_cycles() {
        let got = reachable(&set(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "e")]));
        let want = set(&[
            ("a", "b"),
            ("a", "c"),
            ("b", "c"),
            ("b", "a"),
            ("c", "a"),
            ("c", "b"),
            ("d", "e"),
        ]);
        assert_eq!(got, want);
    }

    #[test]
    fn the_default_cutoff_grows_with_the_study() {
        assert_eq!(
            [1, 3, 4, 10, 11, 20, 40].map(default_cutoff),
            [1, 1, 2, 2, 3, 4, 8]
        );
    }

    #[test]
    fn cutoff_shares_count_links_and_mentions() {
        let link = |direct| Link {
            from: "a".into(),
            to: "b".into(),
            direct,
            indirect: 0,
            direct_sessions: BTreeSet::new(),
        };
        let shares = cutoff_shares(&[link(3), link(1), link(0), link(2)], 5);
        assert_eq!(shares.len(), 3);
        assert_eq!(shares[0].links, 3);
        assert!((shares[1].share_of_links - 2.0 / 3.0).abs() < 1e-9);
        assert!((shares[2].share_of_mentions - 0.5).abs() < 1e-9);
    }
}
