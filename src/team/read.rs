//! Reading the team database: the session list (`sessions list --from`) and a study's
//! sessions (`analyze --from`), rebuilt as the very [`StudySession`]s the local file gives.

use std::collections::{BTreeMap, HashMap};

use tokio_postgres::Row;

use super::connect::TeamDb;
use super::error::TeamError;
use super::push::embedding_from_bytes;
use super::schema;
use crate::study::load::Item;
use crate::study::{Selection, StudySession};

/// One line of the team's session list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamSession {
    pub id: String,
    pub concept: String,
    pub methodology: String,
    pub turns: u32,
    /// `active`, `finished` or `failed` (an active session whose last turn failed).
    pub status: String,
    pub interviewer: String,
    pub machine: String,
    /// When the session last changed on its machine.
    pub updated_at: String,
    /// When it was last pushed (UTC).
    pub synced_at: String,
}

/// The session columns both readers take, in this order.
const SESSION_COLUMNS: &str = "id, concept, methodology, turns, status, failure IS NOT NULL, \
     interviewer, machine, local_updated_at, \
     to_char(synced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), termination, \
     strategies";

impl TeamDb {
    /// Fails unless the team schema is there at this program's version.
    pub async fn check_schema(&self) -> Result<(), TeamError> {
        schema::check(&self.client, &self.at).await
    }

    /// Every session in the team database, most recently changed first.
    pub async fn sessions(&self) -> Result<Vec<TeamSession>, TeamError> {
        self.check_schema().await?;
        let rows = self
            .client
            .query(
                &format!(
                    "SELECT {SESSION_COLUMNS} FROM interviewer.sessions \
                     ORDER BY local_updated_at COLLATE \"C\" DESC, id COLLATE \"C\""
                ),
                &[],
            )
            .await
            .map_err(|e| TeamError::query(&self.at, "listing sessions", &e))?;
        rows.iter().map(|row| self.summary(row)).collect()
    }

    /// The sessions `selection` names (unfinished ones only with `unfinished`), by id, read as a
    /// study reads them; `found` (sessions already read from local files) are left as they are.
    pub async fn study_sessions(
        &self,
        selection: &Selection,
        unfinished: bool,
        found: &mut BTreeMap<String, StudySession>,
    ) -> Result<(), TeamError> {
        self.check_schema().await?;
        let fail = |e: tokio_postgres::Error| TeamError::query(&self.at, "reading sessions", &e);
        let rows = self
            .client
            .query(
                &format!("SELECT {SESSION_COLUMNS} FROM interviewer.sessions"),
                &[],
            )
            .await
            .map_err(fail)?;
        let mut chosen: BTreeMap<String, StudySession> = BTreeMap::new();
        for row in &rows {
            let summary = self.summary(row)?;
            let finished = summary.status == "finished";
            if found.contains_key(&summary.id)
                || !selection.takes(&summary.id, &summary.concept, finished, unfinished)
            {
                continue;
            }
            let column = |e| self.row_error(&summary.id, &e);
            let turns = summary.turns;
            chosen.insert(
                summary.id.clone(),
                StudySession {
                    source: format!("{} ({}@{})", self.url, summary.interviewer, summary.machine),
                    termination: row.try_get(10).map_err(column)?,
                    strategies: row.try_get(11).map_err(column)?,
                    id: summary.id,
                    concept: summary.concept,
                    methodology: summary.methodology,
                    // Only an imported session ends with the transcript.
                    imported: row
                        .try_get::<_, Option<String>>(10)
                        .ok()
                        .flatten()
                        .as_deref()
                        == Some(crate::pipeline::TRANSCRIPT_ENDED),
                    finished,
                    turns,
                    items: Vec::new(),
                    links: Vec::new(),
                },
            );
        }
        let ids: Vec<String> = chosen.keys().cloned().collect();
        self.fill_items(&ids, &mut chosen).await?;
        self.fill_links(&ids, &mut chosen).await?;
        found.extend(chosen);
        Ok(())
    }

    /// The persona table rows (JSON, as `sync` stored them) of the simulated sessions
    /// `selection` names (unfinished ones only with `unfinished`), by session id.
    pub async fn simulations(
        &self,
        selection: &Selection,
        unfinished: bool,
    ) -> Result<BTreeMap<String, String>, TeamError> {
        self.check_schema().await?;
        let fail =
            |e: tokio_postgres::Error| TeamError::query(&self.at, "reading simulated sessions", &e);
        let rows = self
            .client
            .query(
                "SELECT id, concept, status, simulation::text FROM interviewer.sessions \
                 WHERE simulation IS NOT NULL",
                &[],
            )
            .await
            .map_err(fail)?;
        let mut chosen = BTreeMap::new();
        for row in &rows {
            let id: String = row.try_get(0).map_err(fail)?;
            let concept: String = row.try_get(1).map_err(fail)?;
            let status: String = row.try_get(2).map_err(fail)?;
            if selection.takes(&id, &concept, status == "finished", unfinished) {
                chosen.insert(id, row.try_get(3).map_err(fail)?);
            }
        }
        Ok(chosen)
    }

    /// The items and their members of the sessions `ids`, in their stored order.
    async fn fill_items(
        &self,
        ids: &[String],
        sessions: &mut BTreeMap<String, StudySession>,
    ) -> Result<(), TeamError> {
        let fail = |e: tokio_postgres::Error| TeamError::query(&self.at, "reading items", &e);
        let items = self
            .client
            .query(
                "SELECT session_id, position, key, node_type, name, embedding \
                 FROM interviewer.items WHERE session_id = ANY($1) \
                 ORDER BY session_id, position",
                &[&ids],
            )
            .await
            .map_err(fail)?;
        let mut positions: HashMap<(String, i32), usize> = HashMap::new();
        for row in &items {
            let id: String = row.try_get(0).map_err(fail)?;
            let column = |e| self.row_error(&id, &e);
            let bytes: Option<Vec<u8>> = row.try_get(5).map_err(column)?;
            let embedding = match bytes {
                Some(b) => Some(embedding_from_bytes(&b).ok_or_else(|| TeamError::Row {
                    at: Box::new(self.at.clone()),
                    id: id.clone(),
                    reason: format!("an embedding of {} bytes", b.len()),
                })?),
                None => None,
            };
            let item = Item {
                key: row.try_get(2).map_err(column)?,
                node_type: row.try_get(3).map_err(column)?,
                name: row.try_get(4).map_err(column)?,
                embedding,
                members: Vec::new(),
            };
            let position: i32 = row.try_get(1).map_err(column)?;
            if let Some(session) = sessions.get_mut(&id) {
                positions.insert((id.clone(), position), session.items.len());
                session.items.push(item);
            }
        }
        let members = self
            .client
            .query(
                "SELECT session_id, item, label, turn, quote FROM interviewer.members \
                 WHERE session_id = ANY($1) ORDER BY session_id, item, position",
                &[&ids],
            )
            .await
            .map_err(fail)?;
        for row in &members {
            let id: String = row.try_get(0).map_err(fail)?;
            let column = |e| self.row_error(&id, &e);
            let item: i32 = row.try_get(1).map_err(column)?;
            let turn: i32 = row.try_get(3).map_err(column)?;
            let member = (
                row.try_get(2).map_err(column)?,
                u32::try_from(turn).unwrap_or(0),
                row.try_get(4).map_err(column)?,
            );
            let slot = positions.get(&(id.clone(), item)).copied();
            if let Some(target) = sessions
                .get_mut(&id)
                .zip(slot)
                .and_then(|(s, index)| s.items.get_mut(index))
            {
                target.members.push(member);
            }
        }
        Ok(())
    }

    /// The links of the sessions `ids`, in their stored order.
    async fn fill_links(
        &self,
        ids: &[String],
        sessions: &mut BTreeMap<String, StudySession>,
    ) -> Result<(), TeamError> {
        let fail = |e: tokio_postgres::Error| TeamError::query(&self.at, "reading links", &e);
        let links = self
            .client
            .query(
                "SELECT session_id, from_key, to_key FROM interviewer.links \
                 WHERE session_id = ANY($1) ORDER BY session_id, position",
                &[&ids],
            )
            .await
            .map_err(fail)?;
        for row in &links {
            let id: String = row.try_get(0).map_err(fail)?;
            let column = |e| self.row_error(&id, &e);
            let link = (
                row.try_get(1).map_err(column)?,
                row.try_get(2).map_err(column)?,
            );
            if let Some(session) = sessions.get_mut(&id) {
                session.links.push(link);
            }
        }
        Ok(())
    }

    fn summary(&self, row: &Row) -> Result<TeamSession, TeamError> {
        let id: String = row
            .try_get(0)
            .map_err(|e| TeamError::query(&self.at, "reading a session id", &e))?;
        let column = |e| self.row_error(&id, &e);
        let turns: i32 = row.try_get(3).map_err(column)?;
        let status: String = row.try_get(4).map_err(column)?;
        let failed: bool = row.try_get(5).map_err(column)?;
        Ok(TeamSession {
            concept: row.try_get(1).map_err(column)?,
            methodology: row.try_get(2).map_err(column)?,
            turns: u32::try_from(turns).unwrap_or(0),
            status: if failed && status == "active" {
                "failed".to_owned()
            } else {
                status
            },
            interviewer: row.try_get(6).map_err(column)?,
            machine: row.try_get(7).map_err(column)?,
            updated_at: row.try_get(8).map_err(column)?,
            synced_at: row.try_get(9).map_err(column)?,
            id,
        })
    }

    fn row_error(&self, id: &str, e: &tokio_postgres::Error) -> TeamError {
        TeamError::Row {
            at: Box::new(self.at.clone()),
            id: id.to_owned(),
            reason: super::error::describe(e),
        }
    }
}
