//! Reading a study's sessions from one or more `SQLite` files: which sessions (by id, by
//! concept or all), finished only unless asked otherwise, all of one methodology.
//!
//! The team database ([`crate::team`]) reads its sessions through the same [`Selection`] and
//! [`complete`], and stores exactly what [`StudySession::from_data`] keeps, so an analysis is
//! the same from either store.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::export::SessionData;
use crate::store::{SessionStatus, Store, StoreOps};

/// Which sessions a study takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These ids (full ids), wherever they are.
    Ids(Vec<String>),
    /// Every session of this concept.
    Concept(String),
    /// Every session.
    All,
}

/// Why a study could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("no database at {}", .0.display())]
    MissingDatabase(PathBuf),
    #[error("{}: {source}", path.display())]
    Store {
        path: PathBuf,
        #[source]
        source: crate::store::StoreError,
    },
    #[error("{}: session {id}: {message}", path.display())]
    Session {
        path: PathBuf,
        id: String,
        message: String,
    },
    #[error("session {0} is in none of the databases")]
    UnknownSession(String),
    #[error("{0}")]
    Empty(String),
    #[error(
        "the sessions use {0}; a study analyses one methodology: choose sessions with --concept \
         or --sessions"
    )]
    MixedMethodologies(String),
}

/// One interview as the study reads it.
#[derive(Debug, Clone)]
pub struct StudySession {
    pub id: String,
    pub concept: String,
    pub methodology: String,
    /// The database file, as given.
    pub source: String,
    pub finished: bool,
    /// Imported from a transcript (`interviewer import`), not conducted by the app.
    pub imported: bool,
    pub termination: Option<String>,
    /// Completed turns.
    pub turns: u32,
    /// The strategy selected at each completed turn.
    pub strategies: Vec<String>,
    /// Concepts still standing (superseded ones left out).
    pub items: Vec<Item>,
    /// `(from, to)` item keys of each link the respondent made (a `revises` edge is a
    /// correction, not a link).
    pub links: Vec<(String, String)>,
}

/// What one session said once: a canonical slot with its members, or a surface node that no
/// slot holds.
#[derive(Debug, Clone)]
pub struct Item {
    /// The slot id, or the node id.
    pub key: String,
    pub node_type: String,
    /// The slot's name, or the node's label.
    pub name: String,
    /// The slot's embedding, or the node's.
    pub embedding: Option<Vec<f32>>,
    /// Member labels with the turn and the respondent's words each came from.
    pub members: Vec<(String, u32, String)>,
}

/// Edge type that replaces an earlier statement rather than linking two.
const REVISES: &str = "revises";

/// Reads the sessions `selection` names from `databases`; unfinished ones only with
/// `unfinished`. A session found in two files is read from the first.
pub fn load(
    databases: &[PathBuf],
    selection: &Selection,
    unfinished: bool,
) -> Result<Vec<StudySession>, StudyError> {
    let mut found: BTreeMap<String, StudySession> = BTreeMap::new();
    gather(databases, selection, unfinished, &mut found)?;
    complete(found, selection, unfinished)
}

/// Adds the sessions `selection` names from `databases` to `found` (by id), leaving those
/// already there: the first store that has a session is the one it is read from.
pub fn gather(
    databases: &[PathBuf],
    selection: &Selection,
    unfinished: bool,
    found: &mut BTreeMap<String, StudySession>,
) -> Result<(), StudyError> {
    for path in databases {
        if !path.is_file() {
            return Err(StudyError::MissingDatabase(path.clone()));
        }
        let store = Store::open_read_only(path).map_err(|source| StudyError::Store {
            path: path.clone(),
            source,
        })?;
        let listed = store.list_sessions().map_err(|source| StudyError::Store {
            path: path.clone(),
            source,
        })?;
        for summary in listed {
            let done = summary.status == SessionStatus::Finished;
            if !selection.takes(&summary.id, &summary.concept, done, unfinished)
                || found.contains_key(&summary.id)
            {
                continue;
            }
            let source = path.display().to_string();
            let session = StudySession::read(&store, &summary.id, source, done).map_err(|e| {
                StudyError::Session {
                    path: path.clone(),
                    id: summary.id.clone(),
                    message: e.to_string(),
                }
            })?;
            found.insert(summary.id.clone(), session);
        }
    }
    Ok(())
}

impl Selection {
    /// Whether a session with this id and concept, finished or not, is one the study takes.
    pub fn takes(&self, id: &str, concept: &str, finished: bool, unfinished: bool) -> bool {
        let chosen = match self {
            Self::Ids(ids) => ids.iter().any(|i| i == id),
            Self::Concept(wanted) => concept == wanted,
            Self::All => true,
        };
        chosen && (finished || unfinished)
    }
}

/// The study's sessions from those found (by id), in id order: an error when an id asked for
/// is missing, nothing matched, or the sessions mix methodologies. Every store's reader ends
/// here, so a study is the same whichever store its sessions came from.
pub fn complete(
    found: BTreeMap<String, StudySession>,
    selection: &Selection,
    unfinished: bool,
) -> Result<Vec<StudySession>, StudyError> {
    if let Selection::Ids(ids) = selection
        && let Some(missing) = ids.iter().find(|id| !found.contains_key(*id))
    {
        return Err(StudyError::UnknownSession(missing.clone()));
    }
    let sessions: Vec<StudySession> = found.into_values().collect();
    check_methodology(&sessions, unfinished)?;
    Ok(sessions)
}

/// One methodology across all sessions, and at least one session.
fn check_methodology(sessions: &[StudySession], unfinished: bool) -> Result<(), StudyError> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in sessions {
        *counts.entry(s.methodology.as_str()).or_default() += 1;
    }
    match counts.len() {
        0 => Err(StudyError::Empty(if unfinished {
            "no session matches".to_owned()
        } else {
            "no finished session matches (--unfinished takes unfinished ones too)".to_owned()
        })),
        1 => Ok(()),
        _ => Err(StudyError::MixedMethodologies(
            counts
                .iter()
                .map(|(m, n)| format!("{m} ({n})"))
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

impl StudySession {
    /// A loaded session reduced to what a study counts; `source` says where it was read from.
    pub fn from_data(data: &SessionData, source: String, finished: bool) -> Self {
        // The strategy each completed turn's question was asked with: a researcher's
        // regeneration counts as theirs, as the decision rows record it.
        let strategies = data
            .turns
            .iter()
            .map(|t| {
                t.question_override
                    .as_ref()
                    .and_then(|o| o.get("strategy"))
                    .and_then(serde_json::Value::as_str)
                    .map_or_else(|| t.result.strategy_selected.clone(), str::to_owned)
            })
            .collect();
        reduce(
            &Parts {
                session: &data.session,
                nodes: &data.nodes,
                edges: &data.edges,
                slots: &data.slots,
                mappings: &data.mappings,
                strategies,
                imported: data.import.is_some(),
            },
            source,
            finished,
        )
    }

    /// Reads what a study keeps of session `id` straight from the store: the graph and the
    /// decision rows, not the turns' checkpoints (which hold every node's scores and are most
    /// of a database's size), so a study of many sessions reads fast. The same as
    /// [`StudySession::from_data`] on the loaded session.
    pub fn read(
        store: &Store,
        id: &str,
        source: String,
        finished: bool,
    ) -> Result<Self, crate::store::StoreError> {
        let session = store
            .get_session(id)?
            .ok_or_else(|| crate::store::StoreError::NotFound {
                what: "session",
                id: id.to_owned(),
            })?;
        let (nodes, edges) = (store.nodes(id)?, store.edges(id)?);
        let (slots, mappings) = (store.slots(id)?, store.mappings(id)?);
        let strategies = store.recent_strategies(id, u32::MAX)?;
        let imported = store.import_of(id)?.is_some();
        Ok(reduce(
            &Parts {
                session: &session,
                nodes: &nodes,
                edges: &edges,
                slots: &slots,
                mappings: &mappings,
                strategies,
                imported,
            },
            source,
            finished,
        ))
    }
}

/// What a study reads of a session.
struct Parts<'a> {
    session: &'a crate::store::SessionRecord,
    nodes: &'a [crate::graph::records::KgNode],
    edges: &'a [crate::graph::records::KgEdge],
    slots: &'a [crate::graph::records::CanonicalSlot],
    mappings: &'a [crate::graph::records::SlotMapping],
    strategies: Vec<String>,
    imported: bool,
}

/// [`StudySession::from_data`]: items by slot (or by node when no slot holds it), their
/// members in node order, and the links between items.
fn reduce(data: &Parts<'_>, source: String, finished: bool) -> StudySession {
    let slot_of: HashMap<&str, &str> = data
        .mappings
        .iter()
        .map(|m| (m.surface_node_id.as_str(), m.canonical_slot_id.as_str()))
        .collect();
    let slots: HashMap<&str, _> = data.slots.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut items: Vec<Item> = Vec::new();
    let mut item_of: HashMap<&str, String> = HashMap::new();
    for node in data.nodes.iter().filter(|n| n.superseded_by.is_none()) {
        let slot = slot_of
            .get(node.id.as_str())
            .and_then(|id| slots.get(id).copied());
        let (key, name, embedding) = match slot {
            Some(s) => (s.id.clone(), s.slot_name.clone(), s.embedding.clone()),
            None => (node.id.clone(), node.label.clone(), node.embedding.clone()),
        };
        item_of.insert(node.id.as_str(), key.clone());
        let member = (node.label.clone(), node.turn, node.source_quote.clone());
        match items.iter_mut().find(|i| i.key == key) {
            Some(item) => item.members.push(member),
            None => items.push(Item {
                key,
                node_type: node.node_type.clone(),
                name,
                embedding,
                members: vec![member],
            }),
        }
    }
    let mut links: Vec<(String, String)> = data
        .edges
        .iter()
        .filter(|e| e.edge_type != REVISES)
        .filter_map(|e| {
            let from = item_of.get(e.source_node_id.as_str())?;
            let to = item_of.get(e.target_node_id.as_str())?;
            (from != to).then(|| (from.clone(), to.clone()))
        })
        .collect();
    links.sort();
    links.dedup();
    StudySession {
        id: data.session.id.clone(),
        concept: data.session.concept.clone(),
        methodology: data.session.methodology.clone(),
        source,
        finished,
        imported: data.imported,
        termination: data.session.termination_reason.clone(),
        turns: u32::try_from(data.strategies.len()).unwrap_or(u32::MAX),
        strategies: data.strategies.clone(),
        items,
        links,
    }
}
