//! The team schema and its versioned migrations.
//!
//! Everything lives in the `interviewer` schema. `interviewer.migrations` records each applied
//! version; [`migrate`] applies the missing ones in one transaction holding a
//! transaction-scoped advisory lock, so two interviewers whose first `sync` starts at the same
//! moment take turns: the second waits, then finds the tables made and applies nothing. The
//! schema and the migrations table are made only when missing, so a user without the right to
//! create them can still sync into a database an administrator set up. Readers
//! (`analyze --from`, `sessions list --from`) only [`check`] the version and change nothing.

use tokio_postgres::Client;

use super::error::{Place, TeamError};

/// Advisory lock key that serialises migrations. Any constant works as long as other
/// applications sharing the server do not use it; this one spells "intvwr" in ASCII.
const MIGRATION_LOCK: i64 = 0x696e_7476_7772;

/// The migrations in order: version, what it adds, its SQL.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "sessions with their study items, members and links",
        "CREATE TABLE interviewer.sessions (
         id text PRIMARY KEY,
         concept text NOT NULL,
         methodology text NOT NULL,
         status text NOT NULL CHECK (status IN ('active', 'finished')),
         failure text,
         termination text,
         turns integer NOT NULL CHECK (turns >= 0),
         strategies text[] NOT NULL,
         local_updated_at text NOT NULL,
         rows_version integer NOT NULL,
         interviewer text NOT NULL,
         machine text NOT NULL,
         first_synced_at timestamptz NOT NULL DEFAULT now(),
         synced_at timestamptz NOT NULL DEFAULT now()
     );
     CREATE INDEX sessions_concept ON interviewer.sessions (concept);
     CREATE TABLE interviewer.items (
         session_id text NOT NULL REFERENCES interviewer.sessions (id) ON DELETE CASCADE,
         position integer NOT NULL,
         key text NOT NULL,
         node_type text NOT NULL,
         name text NOT NULL,
         embedding bytea,
         PRIMARY KEY (session_id, position)
     );
     CREATE TABLE interviewer.members (
         session_id text NOT NULL,
         item integer NOT NULL,
         position integer NOT NULL,
         label text NOT NULL,
         turn integer NOT NULL,
         quote text NOT NULL,
         PRIMARY KEY (session_id, item, position),
         FOREIGN KEY (session_id, item)
             REFERENCES interviewer.items (session_id, position) ON DELETE CASCADE
     );
     CREATE TABLE interviewer.links (
         session_id text NOT NULL REFERENCES interviewer.sessions (id) ON DELETE CASCADE,
         position integer NOT NULL,
         from_key text NOT NULL,
         to_key text NOT NULL,
         PRIMARY KEY (session_id, position)
     );",
    ),
    (
        2,
        "the persona table row of a simulated session",
        "ALTER TABLE interviewer.sessions ADD COLUMN simulation jsonb;",
    ),
];

/// The schema version this program writes and reads.
pub fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.0)
}

/// Brings the schema up to [`latest`]; returns the versions applied now (none when another
/// process or an earlier sync already did).
pub async fn migrate(client: &mut Client, at: &Place) -> Result<Vec<i32>, TeamError> {
    let fail = |what: &str| {
        let what = format!("migrating the schema: {what}");
        move |e: tokio_postgres::Error| TeamError::query(at, what, &e)
    };
    let tx = client.transaction().await.map_err(fail("begin"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(fail("waiting for the migration lock"))?;
    let row = tx
        .query_one(
            "SELECT to_regnamespace('interviewer') IS NOT NULL, \
                    to_regclass('interviewer.migrations') IS NOT NULL",
            &[],
        )
        .await
        .map_err(fail("looking for the schema"))?;
    let has_schema: bool = row.try_get(0).map_err(fail("looking for the schema"))?;
    let has_table: bool = row.try_get(1).map_err(fail("looking for the schema"))?;
    if !has_schema {
        tx.batch_execute("CREATE SCHEMA interviewer")
            .await
            .map_err(fail("creating schema interviewer"))?;
    }
    if !has_table {
        tx.batch_execute(
            "CREATE TABLE interviewer.migrations (
                 version integer PRIMARY KEY,
                 name text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now()
             )",
        )
        .await
        .map_err(fail("creating interviewer.migrations"))?;
    }
    let current = version(&tx, at).await?;
    newer_than_known(current, at)?;
    let mut applied = Vec::new();
    for (number, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        let step = format!("version {number} ({name})");
        tx.batch_execute(sql).await.map_err(fail(&step))?;
        tx.execute(
            "INSERT INTO interviewer.migrations (version, name) VALUES ($1, $2)",
            &[number, name],
        )
        .await
        .map_err(fail(&step))?;
        applied.push(*number);
    }
    tx.commit().await.map_err(fail("commit"))?;
    Ok(applied)
}

/// Fails unless the schema is at exactly [`latest`], saying what to do when it is not.
pub async fn check(client: &Client, at: &Place) -> Result<(), TeamError> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('interviewer.migrations') IS NOT NULL",
            &[],
        )
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| TeamError::query(at, "looking for the schema", &e))?;
    if !exists {
        return Err(TeamError::Schema {
            at: Box::new(at.clone()),
            reason: "it has no interviewer tables yet (`interviewer sync --to URL` makes them)"
                .to_owned(),
        });
    }
    let current = version(client, at).await?;
    newer_than_known(current, at)?;
    if current < latest() {
        return Err(TeamError::Schema {
            at: Box::new(at.clone()),
            reason: format!(
                "its schema is at version {current}, older than this program's {}; run \
                 `interviewer sync --to URL` once to migrate it",
                latest()
            ),
        });
    }
    Ok(())
}

async fn version(
    client: &impl tokio_postgres::GenericClient,
    at: &Place,
) -> Result<i32, TeamError> {
    client
        .query_one(
            "SELECT coalesce(max(version), 0) FROM interviewer.migrations",
            &[],
        )
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|e| TeamError::query(at, "reading the schema version", &e))
}

fn newer_than_known(current: i32, at: &Place) -> Result<(), TeamError> {
    if current > latest() {
        return Err(TeamError::Schema {
            at: Box::new(at.clone()),
            reason: format!(
                "its schema is at version {current}, written by a newer interviewer than this \
                 one (which knows up to {}); update interviewer",
                latest()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_one_up_without_gaps() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(migration.0).ok(), Some(index + 1));
        }
        assert_eq!(usize::try_from(latest()).ok(), Some(MIGRATIONS.len()));
    }
}
