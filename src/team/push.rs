//! `sync`: pushing sessions from a local `SQLite` file into the team database.
//!
//! Each session is pushed in its own transaction, so a sync killed half-way leaves whole
//! sessions or nothing of one, and the next sync carries on. A session's [`Watermark`]
//! (completed turns, status, the local file's last-update time and the version of the rows a
//! study keeps) says whether the team already has it: sessions whose watermark the team
//! holds are not even read from the file, and a copy older than the team's (a stale file on a
//! second machine) never replaces a newer one. The upsert itself carries the same comparison,
//! so two pushers of one session at once settle on the newer copy: the row lock taken by
//! `INSERT … ON CONFLICT` makes the second wait for the first to commit.

use std::collections::HashMap;
use std::path::Path;

use tokio_postgres::Transaction;

use super::connect::TeamDb;
use super::error::TeamError;
use crate::export::SessionData;
use crate::store::{SessionStatus, SessionSummary, Store, StoreOps};
use crate::study::{Selection, StudySession};

/// Version of the study rows a session is kept as (items, members, links): a program that
/// reduces sessions differently bumps it, and its next sync replaces the older rows.
pub const ROWS_VERSION: i32 = 1;

/// Who pushed a session, and from which machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub interviewer: String,
    pub machine: String,
}

impl Origin {
    /// `interviewer`, else the OS user, on this machine's host name.
    pub fn here(interviewer: Option<&str>) -> Self {
        let unknown = |_| "unknown".to_owned();
        Self {
            interviewer: interviewer
                .map_or_else(|| whoami::username().unwrap_or_else(unknown), str::to_owned),
            machine: whoami::hostname().unwrap_or_else(unknown),
        }
    }
}

/// What decides whether the team already has a session: compared as a tuple, turns first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Watermark {
    pub turns: i32,
    /// The local file's `updated_at` (RFC 3339 UTC with milliseconds: sorts as time).
    pub updated_at: String,
    pub rows_version: i32,
    pub status: String,
}

impl Watermark {
    /// The watermark of the local copy of a session.
    pub fn of(summary: &SessionSummary) -> Self {
        Self {
            turns: i32::try_from(summary.turns).unwrap_or(i32::MAX),
            updated_at: summary.updated_at.clone(),
            rows_version: ROWS_VERSION,
            status: summary.status.as_str().to_owned(),
        }
    }
}

/// What happened to one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Written (new to the team, or newer than its copy).
    Written,
    /// The team has this very copy.
    UpToDate,
    /// The team has a newer copy (pushed from elsewhere); it was kept.
    TeamNewer,
}

/// The sessions of a local file that a sync looks at, and the file they are read from.
pub struct LocalFile {
    store: Store,
    path: String,
    pub sessions: Vec<SessionSummary>,
}

impl LocalFile {
    /// Opens `path` read-only and lists the sessions `selection` names, finished or not. A
    /// session id asked for that the file does not hold is an error.
    pub fn open(path: &Path, selection: &Selection) -> Result<Self, TeamError> {
        let shown = path.display().to_string();
        let local = |reason: String| TeamError::Local {
            path: shown.clone(),
            reason,
        };
        if !path.is_file() {
            return Err(local("there is no database file here".to_owned()));
        }
        let store = Store::open_read_only(path).map_err(|e| local(e.to_string()))?;
        let sessions: Vec<SessionSummary> = store
            .list_sessions()
            .map_err(|e| local(e.to_string()))?
            .into_iter()
            .filter(|s| selection.takes(&s.id, &s.concept, true, true))
            .collect();
        if let Selection::Ids(ids) = selection
            && let Some(missing) = ids.iter().find(|id| !sessions.iter().any(|s| &s.id == *id))
        {
            return Err(local(format!("no session {missing}")));
        }
        Ok(Self {
            store,
            path: shown,
            sessions,
        })
    }

    /// Reads one session as a study keeps it.
    fn study(&self, summary: &SessionSummary) -> Result<StudySession, TeamError> {
        let data = SessionData::load(&self.store, &summary.id).map_err(|e| TeamError::Local {
            path: self.path.clone(),
            reason: format!("session {}: {e}", summary.id),
        })?;
        let finished = summary.status == SessionStatus::Finished;
        Ok(StudySession::from_data(&data, self.path.clone(), finished))
    }

    /// The local file, read-only.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The file's path as given.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl TeamDb {
    /// Every session's watermark in the team database, by id.
    pub async fn watermarks(&self) -> Result<HashMap<String, Watermark>, TeamError> {
        let rows = self
            .client
            .query(
                "SELECT id, turns, local_updated_at, rows_version, status \
                 FROM interviewer.sessions",
                &[],
            )
            .await
            .map_err(|e| TeamError::query(&self.at, "reading what the team has", &e))?;
        rows.iter()
            .map(|row| {
                let mark = Watermark {
                    turns: row.try_get(1)?,
                    updated_at: row.try_get(2)?,
                    rows_version: row.try_get(3)?,
                    status: row.try_get(4)?,
                };
                Ok((row.try_get(0)?, mark))
            })
            .collect::<Result<_, tokio_postgres::Error>>()
            .map_err(|e| TeamError::query(&self.at, "reading what the team has", &e))
    }

    /// Pushes one session of `file` unless `team` (its watermark in the team database, if any)
    /// shows the team has it or a newer copy. `simulation` is the persona table's row of a
    /// simulated session, as JSON. `before_commit` runs inside the transaction just before it
    /// commits (the sync's crash switch for tests).
    pub async fn push(
        &mut self,
        file: &LocalFile,
        summary: &SessionSummary,
        team: Option<&Watermark>,
        origin: &Origin,
        simulation: Option<&str>,
        before_commit: impl FnOnce(),
    ) -> Result<Pushed, TeamError> {
        let local = Watermark::of(summary);
        match team {
            Some(mark) if *mark == local => return Ok(Pushed::UpToDate),
            Some(mark) if *mark > local => return Ok(Pushed::TeamNewer),
            _ => {}
        }
        let study = file.study(summary)?;
        let place = self.at.clone();
        let at = &place;
        let fail = |what: &str| {
            let what = format!("pushing session {}: {what}", summary.id);
            move |e: tokio_postgres::Error| TeamError::query(at, what, &e)
        };
        let tx = self.client.transaction().await.map_err(fail("begin"))?;
        if !upsert(&tx, summary, &study, &local, origin, simulation)
            .await
            .map_err(fail("the session row"))?
        {
            // Another pusher committed this or a newer copy since the watermarks were read.
            let now = watermark_in(&tx, &summary.id)
                .await
                .map_err(fail("recheck"))?;
            return Ok(if now.is_some_and(|m| m > local) {
                Pushed::TeamNewer
            } else {
                Pushed::UpToDate
            });
        }
        replace_rows(&tx, &study)
            .await
            .map_err(fail("the study rows"))?;
        before_commit();
        tx.commit().await.map_err(fail("commit"))?;
        Ok(Pushed::Written)
    }
}

/// Inserts the session row, or updates it when this copy is newer than the team's; whether it
/// wrote.
async fn upsert(
    tx: &Transaction<'_>,
    summary: &SessionSummary,
    study: &StudySession,
    mark: &Watermark,
    origin: &Origin,
    simulation: Option<&str>,
) -> Result<bool, tokio_postgres::Error> {
    let failure = summary
        .failure
        .as_ref()
        .map(crate::store::TurnFailure::describe);
    let rows = tx
        .query(
            "INSERT INTO interviewer.sessions AS s (id, concept, methodology, status, failure, \
                 termination, turns, strategies, local_updated_at, rows_version, interviewer, \
                 machine, simulation) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
                 CAST($13::text AS jsonb)) \
             ON CONFLICT (id) DO UPDATE SET concept = EXCLUDED.concept, \
                 methodology = EXCLUDED.methodology, status = EXCLUDED.status, \
                 failure = EXCLUDED.failure, termination = EXCLUDED.termination, \
                 turns = EXCLUDED.turns, strategies = EXCLUDED.strategies, \
                 local_updated_at = EXCLUDED.local_updated_at, \
                 rows_version = EXCLUDED.rows_version, interviewer = EXCLUDED.interviewer, \
                 machine = EXCLUDED.machine, simulation = EXCLUDED.simulation, \
                 synced_at = now() \
             WHERE (EXCLUDED.turns, EXCLUDED.local_updated_at COLLATE \"C\", \
                    EXCLUDED.rows_version, EXCLUDED.status COLLATE \"C\") \
                 > (s.turns, s.local_updated_at COLLATE \"C\", s.rows_version, \
                    s.status COLLATE \"C\") \
             RETURNING id",
            &[
                &study.id,
                &study.concept,
                &study.methodology,
                &mark.status,
                &failure,
                &study.termination,
                &mark.turns,
                &study.strategies,
                &mark.updated_at,
                &mark.rows_version,
                &origin.interviewer,
                &origin.machine,
                &simulation,
            ],
        )
        .await?;
    Ok(!rows.is_empty())
}

/// The team's watermark of one session, read inside the pushing transaction.
async fn watermark_in(
    tx: &Transaction<'_>,
    id: &str,
) -> Result<Option<Watermark>, tokio_postgres::Error> {
    let Some(row) = tx
        .query_opt(
            "SELECT turns, local_updated_at, rows_version, status \
             FROM interviewer.sessions WHERE id = $1",
            &[&id],
        )
        .await?
    else {
        return Ok(None);
    };
    Ok(Some(Watermark {
        turns: row.try_get(0)?,
        updated_at: row.try_get(1)?,
        rows_version: row.try_get(2)?,
        status: row.try_get(3)?,
    }))
}

/// Replaces the session's items (with their members) and links by `study`'s, keeping order:
/// one statement per table, the rows passed as arrays.
async fn replace_rows(
    tx: &Transaction<'_>,
    study: &StudySession,
) -> Result<(), tokio_postgres::Error> {
    let id = &study.id;
    // Members go with their items (ON DELETE CASCADE).
    tx.execute("DELETE FROM interviewer.items WHERE session_id = $1", &[id])
        .await?;
    tx.execute("DELETE FROM interviewer.links WHERE session_id = $1", &[id])
        .await?;
    let positions: Vec<i32> = (0..).take(study.items.len()).collect();
    let keys: Vec<&str> = study.items.iter().map(|i| i.key.as_str()).collect();
    let types: Vec<&str> = study.items.iter().map(|i| i.node_type.as_str()).collect();
    let names: Vec<&str> = study.items.iter().map(|i| i.name.as_str()).collect();
    let embeddings: Vec<Option<Vec<u8>>> = study
        .items
        .iter()
        .map(|i| i.embedding.as_deref().map(embedding_bytes))
        .collect();
    tx.execute(
        "INSERT INTO interviewer.items (session_id, position, key, node_type, name, embedding) \
         SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::text[], $5::text[], \
                                  $6::bytea[])",
        &[id, &positions, &keys, &types, &names, &embeddings],
    )
    .await?;
    let mut members = Members::default();
    for (item, it) in (0_i32..).zip(&study.items) {
        for (position, (label, turn, quote)) in (0_i32..).zip(&it.members) {
            members.item.push(item);
            members.position.push(position);
            members.label.push(label);
            members.turn.push(i32::try_from(*turn).unwrap_or(i32::MAX));
            members.quote.push(quote);
        }
    }
    tx.execute(
        "INSERT INTO interviewer.members (session_id, item, position, label, turn, quote) \
         SELECT $1, * FROM unnest($2::integer[], $3::integer[], $4::text[], $5::integer[], \
                                  $6::text[])",
        &[
            id,
            &members.item,
            &members.position,
            &members.label,
            &members.turn,
            &members.quote,
        ],
    )
    .await?;
    let positions: Vec<i32> = (0..).take(study.links.len()).collect();
    let from: Vec<&str> = study.links.iter().map(|l| l.0.as_str()).collect();
    let to: Vec<&str> = study.links.iter().map(|l| l.1.as_str()).collect();
    tx.execute(
        "INSERT INTO interviewer.links (session_id, position, from_key, to_key) \
         SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::text[])",
        &[id, &positions, &from, &to],
    )
    .await?;
    Ok(())
}

/// The members of a session's items as columns.
#[derive(Default)]
struct Members<'a> {
    item: Vec<i32>,
    position: Vec<i32>,
    label: Vec<&'a str>,
    turn: Vec<i32>,
    quote: Vec<&'a str>,
}

/// An embedding as the bytes of its `f32`s, little-endian (as the local file keeps it): exact,
/// unlike a decimal rendering.
pub fn embedding_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// [`embedding_bytes`] read back; `None` when the length is not a whole number of `f32`s.
pub fn embedding_from_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    bytes
        .chunks_exact(4)
        .map(|c| <[u8; 4]>::try_from(c).ok().map(f32::from_le_bytes))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn embeddings_survive_the_bytes_exactly() {
        let vector = vec![0.1_f32, -3.402_823_5e38, f32::MIN_POSITIVE, 1.0 / 3.0];
        let back = embedding_from_bytes(&embedding_bytes(&vector)).unwrap();
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            vector.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(embedding_from_bytes(&[1, 2, 3]), None);
    }

    #[test]
    fn watermarks_order_by_turns_then_update_time() {
        let mark = |turns, at: &str| Watermark {
            turns,
            updated_at: at.to_owned(),
            rows_version: ROWS_VERSION,
            status: "active".to_owned(),
        };
        assert!(mark(3, "2026-01-01T00:00:00.000Z") > mark(2, "2026-12-01T00:00:00.000Z"));
        assert!(mark(3, "2026-01-02T00:00:00.000Z") > mark(3, "2026-01-01T23:59:59.999Z"));
    }
}
