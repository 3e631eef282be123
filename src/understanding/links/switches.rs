//! "We tried a rota with the kids, which lasted about a fortnight. So in the end we got Marta
//! in": of two things of one kind in an answer, the one the respondent left behind (what they
//! used to do, tried, or did before) gives way to the one they turned to. The ontology names
//! the edge: a type permitted between two concepts of the same type whose name or description
//! speaks of choosing one "instead of" the other or of switching (jobs to be done's
//! `hired_instead_of`). The edge points from the one now used to the one left.

use crate::config::{EdgeType, Methodology};

use super::{Link, Node};

/// Confidence of a switch read from words of the past ("used to", "tried") around one of two
/// alternatives: the order is the respondent's, the choice between them is inferred.
const SWITCH_CONFIDENCE: f64 = 0.55;

/// Words before an alternative, in its sentence, that mark it as left behind.
const LEFT_CUES: [&str; 12] = [
    "used to",
    "tried",
    "before that",
    "before then",
    "before the",
    "normally",
    "could've",
    "could have",
    "at first",
    "rather than",
    "instead of",
    "previously",
];

/// The ontology's switch edge and the node type it joins.
fn switch_edge(methodology: &Methodology) -> Option<(&EdgeType, &str)> {
    methodology.ontology.edges.iter().find_map(|e| {
        let text = format!("{} {}", e.name.replace('_', " "), e.description).to_lowercase();
        let speaks = text.contains("instead of") || text.contains("switched");
        let same = e
            .permitted_connections
            .iter()
            .find(|(s, t)| s == t && s != "*")
            .map(|(s, _)| s.as_str());
        same.filter(|_| speaks).map(|t| (e, t))
    })
}

/// Words before an alternative, in its sentence, that mark it as the one turned to.
/// ("then" is left out: "and then it's a trip to the depot" tells what followed.)
const TURN_CUES: [&str; 7] = [
    "so",
    "now",
    "in the end",
    "this time",
    "switched",
    "these days",
    "eventually",
];

/// Words between a cue and the alternative it marks, at most ("used to keep everything in").
const CUE_REACH: usize = 4;

/// The words of `answer`'s clause before byte `start` (back to the sentence's start or a
/// comma), lowercase.
fn clause_before(answer: &str, start: usize) -> Vec<String> {
    let before = answer.get(..start).unwrap_or_default();
    let from = before.rfind(['.', '?', '!', ';', ',']).map_or(0, |i| i + 1);
    before
        .get(from..)
        .unwrap_or_default()
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The alternative at byte `start` is marked as the one turned to, and not by a "so" that
/// opens the answer ("So there's four of us on the same estate" only takes the floor).
fn turned_to(answer: &str, start: usize) -> bool {
    let before = answer.get(..start).unwrap_or_default();
    let opening_so =
        before.trim_start().to_lowercase().starts_with("so ") && !before.contains(['.', '?', '!']);
    !opening_so && cued(answer, start, &TURN_CUES)
}

/// One of `cues` ends at most [`CUE_REACH`] words before byte `start`, in its clause.
fn cued(answer: &str, start: usize, cues: &[&str]) -> bool {
    let words = clause_before(answer, start);
    cues.iter().any(|cue| {
        let cue: Vec<&str> = cue.split(' ').collect();
        let tail = words
            .get(words.len().saturating_sub(CUE_REACH + cue.len())..)
            .unwrap_or_default();
        tail.windows(cue.len()).any(|w| w.iter().eq(cue.iter()))
    })
}

/// Links from the alternative turned to, to each alternative left behind: the nearest one not
/// left, after it in the answer if there is one, else before it.
pub(super) fn find(methodology: &Methodology, nodes: &[Node<'_>], answer: &str) -> Vec<Link> {
    let Some((edge, kind)) = switch_edge(methodology) else {
        return Vec::new();
    };
    // (node, byte start) of the alternatives left behind and of those turned to.
    let (mut left, mut turned) = (Vec::new(), Vec::new());
    for (i, n) in nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.type_name == kind)
    {
        let start = n.phrase.start;
        if cued(answer, start, &LEFT_CUES) {
            left.push((i, start));
        } else if turned_to(answer, start) {
            turned.push((i, start));
        }
    }
    left.iter()
        .filter_map(|&(target, at)| {
            let (source, _) = turned
                .iter()
                .min_by_key(|(_, s)| (*s < at, s.abs_diff(at)))?;
            Some(Link {
                source: *source,
                target,
                edge_type: edge.name.clone(),
                confidence: SWITCH_CONFIDENCE,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::shipped_methodology as methodology;
    use crate::understanding::phrases::{Origin, Phrase, Shape};

    fn phrase(answer: &str, quote: &str) -> Phrase {
        let start = answer.find(quote).unwrap();
        Phrase {
            label: quote.to_owned(),
            start,
            end: start + quote.len(),
            origin: Origin::Predicate,
            shape: Shape::Verbal,
            words: quote.split(' ').map(str::to_owned).collect(),
            affect: 0,
            of_product: false,
        }
    }

    /// (source, target, edge) of the switches found among `quotes`, typed `types`.
    fn switches(name: &str, answer: &str, quotes: &[(&str, &str)]) -> Vec<(String, String)> {
        let m = methodology(name);
        let phrases: Vec<Phrase> = quotes.iter().map(|(q, _)| phrase(answer, q)).collect();
        let nodes: Vec<Node<'_>> = phrases
            .iter()
            .zip(quotes)
            .map(|(p, (_, t))| Node {
                phrase: p,
                type_name: t,
                level: 1,
            })
            .collect();
        find(&m, &nodes, answer)
            .into_iter()
            .map(|l| {
                assert_eq!(l.edge_type, "hired_instead_of");
                (quotes[l.source].0.to_owned(), quotes[l.target].0.to_owned())
            })
            .collect()
    }

    #[test]
    fn what_was_left_gives_way_to_what_the_respondent_turned_to() {
        // Development round 3: the password manager replaced the notes file, told after it.
        let answer = "IT took two hours to sort it, so that afternoon I set up the password \
            manager. Before that I kept everything in a notes file on my phone.";
        let found = switches(
            "jobs_to_be_done",
            answer,
            &[
                ("set up the password manager", "competing_solution"),
                ("kept everything in a notes file", "competing_solution"),
            ],
        );
        assert_eq!(
            found,
            [(
                "set up the password manager".to_owned(),
                "kept everything in a notes file".to_owned()
            )]
        );
        let answer = "We tried a rota with the kids, which lasted about a fortnight. So in the \
            end we got a cleaner in.";
        let quotes = [
            ("a rota with the kids", "competing_solution"),
            ("got a cleaner in", "competing_solution"),
        ];
        assert_eq!(
            switches("jobs_to_be_done", answer, &quotes),
            [(
                "got a cleaner in".to_owned(),
                "a rota with the kids".to_owned()
            )]
        );
        // Nothing marks a turn: "and then it's a trip to the depot" tells what followed.
        let answer = "Before the lockers you'd get one of those cards, and then it's a trip to \
            the depot.";
        let quotes = [
            ("one of those cards", "competing_solution"),
            ("a trip to the depot", "competing_solution"),
        ];
        assert!(switches("jobs_to_be_done", answer, &quotes).is_empty());
        // An ontology without a switch edge links nothing.
        let answer = "I used to buy dairy. So now I buy oat milk.";
        let quotes = [("buy dairy", "attribute"), ("buy oat milk", "attribute")];
        assert!(switches("means_end_chain", answer, &quotes).is_empty());
    }
}
