//! Codes: what several respondents said, merged across sessions by the rule a session uses
//! for its own canonical slots: the same node type, and a cosine similarity of the embeddings
//! at or above the methodology's canonical threshold. An item without an embedding (or with
//! one of another size) joins a code only by the same label, case and spacing aside.
//!
//! Items are taken in a fixed order (node type, session id, name), each joining the code whose
//! centroid it is closest to, so the result does not depend on which file a session came from.
//! A code is named after its most central item: the one most similar, on average, to the
//! code's other items.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::load::{Item, StudySession};
use crate::config::Methodology;
use crate::graph::similarity::cosine;

/// One code of the study.
#[derive(Debug, Clone, Serialize)]
pub struct Code {
    /// `c1`, `c2`, … in report order.
    pub id: String,
    pub name: String,
    pub node_type: String,
    /// The node type's ontology level.
    pub level: u32,
    /// Sessions that raised it.
    pub sessions: BTreeSet<String>,
    /// Its items, by session.
    pub members: Vec<CodeMember>,
}

impl Code {
    /// Respondents who raised it.
    pub fn respondents(&self) -> u32 {
        u32::try_from(self.sessions.len()).unwrap_or(u32::MAX)
    }
}

/// One session's item in a code.
#[derive(Debug, Clone, Serialize)]
pub struct CodeMember {
    pub session: String,
    /// The slot or node id in that session.
    pub key: String,
    pub name: String,
    pub labels: Vec<String>,
    pub quotes: Vec<Quote>,
}

/// What the respondent said, and when.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Quote {
    pub turn: u32,
    pub text: String,
}

/// A code while items join it.
struct Forming<'a> {
    node_type: &'a str,
    items: Vec<(&'a str, &'a Item)>,
    /// Sum of the unit embeddings of its items that have one.
    sum: Vec<f32>,
}

impl Forming<'_> {
    /// How close `item` is to this code: the centroid's cosine, or 1 for an item whose label
    /// one of the code's items has (0 otherwise) when the embeddings cannot say.
    fn similarity(&self, item: &Item) -> f32 {
        match &item.embedding {
            Some(e) if !self.sum.is_empty() && e.len() == self.sum.len() => cosine(e, &self.sum),
            _ => {
                let key = normalise(&item.name);
                if self.items.iter().any(|(_, i)| normalise(&i.name) == key) {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}

/// Merges the sessions' items into codes, ranked for the report.
pub fn build(sessions: &[StudySession], methodology: &Methodology, threshold: f32) -> Vec<Code> {
    let mut items: Vec<(&str, &Item)> = sessions
        .iter()
        .flat_map(|s| s.items.iter().map(move |i| (s.id.as_str(), i)))
        .collect();
    items.sort_by(|(sa, a), (sb, b)| {
        (a.node_type.as_str(), *sa, a.name.as_str(), a.key.as_str()).cmp(&(
            b.node_type.as_str(),
            *sb,
            b.name.as_str(),
            b.key.as_str(),
        ))
    });
    let mut forming: Vec<Forming<'_>> = Vec::new();
    for (session, item) in items {
        let best = forming
            .iter()
            .enumerate()
            .filter(|(_, c)| c.node_type == item.node_type)
            .map(|(i, c)| (i, c.similarity(item)))
            .filter(|(_, s)| *s >= threshold)
            .max_by(|(_, a), (_, b)| a.total_cmp(b))
            .map(|(i, _)| i);
        let index = best.unwrap_or_else(|| {
            forming.push(Forming {
                node_type: &item.node_type,
                items: Vec::new(),
                sum: Vec::new(),
            });
            forming.len() - 1
        });
        let Some(code) = forming.get_mut(index) else {
            continue;
        };
        if let Some(e) = item.embedding.as_deref().and_then(unit) {
            if code.sum.is_empty() {
                code.sum = vec![0.0; e.len()];
            }
            if code.sum.len() == e.len() {
                for (s, x) in code.sum.iter_mut().zip(&e) {
                    *s += x;
                }
            }
        }
        code.items.push((session, item));
    }
    let levels: BTreeMap<&str, u32> = methodology
        .ontology
        .nodes
        .iter()
        .map(|t| (t.name.as_str(), t.level))
        .collect();
    let mut codes: Vec<Code> = forming
        .into_iter()
        .map(|c| finish(&c, levels.get(c.node_type).copied().unwrap_or(0)))
        .collect();
    codes.sort_by(|a, b| {
        a.level
            .cmp(&b.level)
            .then_with(|| a.node_type.cmp(&b.node_type))
            .then_with(|| b.respondents().cmp(&a.respondents()))
            .then_with(|| a.name.cmp(&b.name))
    });
    for (i, code) in codes.iter_mut().enumerate() {
        code.id = format!("c{}", i + 1);
    }
    codes
}

/// A formed code with its name, sessions and members.
fn finish(forming: &Forming<'_>, level: u32) -> Code {
    let members: Vec<CodeMember> = forming
        .items
        .iter()
        .map(|(session, item)| CodeMember {
            session: (*session).to_owned(),
            key: item.key.clone(),
            name: item.name.clone(),
            labels: item.members.iter().map(|(l, _, _)| l.clone()).collect(),
            quotes: item
                .members
                .iter()
                .filter(|(_, _, q)| !q.trim().is_empty())
                .map(|(_, turn, q)| Quote {
                    turn: *turn,
                    text: q.clone(),
                })
                .collect(),
        })
        .collect();
    Code {
        id: String::new(),
        name: central_name(&forming.items),
        node_type: forming.node_type.to_owned(),
        level,
        sessions: members.iter().map(|m| m.session.clone()).collect(),
        members,
    }
}

/// The name of the item most similar on average to the others (the first such by name); when
/// no item has an embedding, the name most items share.
fn central_name(items: &[(&str, &Item)]) -> String {
    let score = |item: &Item| -> f32 {
        let Some(e) = item.embedding.as_deref() else {
            let key = normalise(&item.name);
            return items
                .iter()
                .filter(|(_, other)| normalise(&other.name) == key)
                .count() as f32;
        };
        items
            .iter()
            .filter_map(|(_, other)| other.embedding.as_deref())
            .filter(|o| o.len() == e.len())
            .map(|o| cosine(e, o))
            .sum()
    };
    // Items with an embedding are compared by it; labels decide only when none has one.
    let embedded = items.iter().any(|(_, i)| i.embedding.is_some());
    let mut best: Option<(f32, &str)> = None;
    for (_, item) in items
        .iter()
        .filter(|(_, i)| !embedded || i.embedding.is_some())
    {
        let s = score(item);
        let better = match best {
            None => true,
            Some((bs, name)) => s > bs + 1e-6 || ((s - bs).abs() <= 1e-6 && *item.name < *name),
        };
        if better {
            best = Some((s, &item.name));
        }
    }
    best.map(|(_, name)| name.to_owned()).unwrap_or_default()
}

/// `v` scaled to length 1 (`None` for a zero vector).
fn unit(v: &[f32]) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 0.0).then(|| v.iter().map(|x| x / norm).collect())
}

/// A label for comparison: lower case, single spaces, no surrounding punctuation.
fn normalise(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| c.is_ascii_punctuation())
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(key: &str, node_type: &str, name: &str, embedding: Option<Vec<f32>>) -> Item {
        Item {
            key: key.into(),
            node_type: node_type.into(),
            name: name.into(),
            embedding,
            members: vec![(name.into(), 1, format!("I said {name}"))],
        }
    }

    fn session(id: &str, items: Vec<Item>) -> StudySession {
        StudySession {
            id: id.into(),
            concept: "c".into(),
            methodology: "m".into(),
            source: "s".into(),
            finished: true,
            imported: false,
            termination: None,
            turns: 1,
            strategies: Vec::new(),
            items,
            links: Vec::new(),
        }
    }

    fn methodology() -> Methodology {
        let yaml = "method: {name: m}\nontology:\n  nodes:\n    - {name: attribute, level: 1}\n    - {name: value, level: 3}\nstrategies: []\n";
        crate::config::yaml::parse(std::path::Path::new("m.yaml"), yaml).unwrap()
    }

    #[test]
    fn similar_items_of_one_type_merge_across_sessions_and_others_do_not() {
        let sessions = [
            session(
                "s1",
                vec![
                    item("a", "attribute", "creamy", Some(vec![1.0, 0.1, 0.0])),
                    item("b", "value", "creamy", Some(vec![1.0, 0.1, 0.0])),
                ],
            ),
            session(
                "s2",
                vec![
                    item("c", "attribute", "smooth", Some(vec![0.9, 0.2, 0.0])),
                    item("d", "attribute", "cheap", Some(vec![0.0, 0.0, 1.0])),
                    item("e", "attribute", "Creamy ", None),
                ],
            ),
        ];
        let codes = build(&sessions, &methodology(), 0.6);
        let summary: Vec<(String, &str, u32, usize)> = codes
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.node_type.as_str(),
                    c.respondents(),
                    c.members.len(),
                )
            })
            .collect();
        // "creamy" and "smooth" (cosine 0.98) merge; "Creamy " has no embedding and joins only
        // by its label, which the first attribute code has; "cheap" stays alone; the value of
        // the same name is another type. Attributes (level 1) come before values (level 3).
        assert_eq!(
            summary,
            vec![
                ("creamy".to_owned(), "attribute", 2, 3),
                ("cheap".to_owned(), "attribute", 1, 1),
                ("creamy".to_owned(), "value", 1, 1),
            ]
        );
        assert_eq!(
            codes.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["c1", "c2", "c3"]
        );
    }
}
