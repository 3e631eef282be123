//! The team database: the interviews of several interviewers meeting in one PostgreSQL
//! database (`interviewer sync --to`, `analyze --from`, `sessions list --from`).
//!
//! The laptop's `SQLite` file stays the live store; this module never drives an interview.
//! `sync` copies finished and unfinished sessions up; the analysis reads them back.
//!
//! # What is stored
//!
//! Not the whole session: the rows an analysis needs, which is exactly what
//! [`crate::study::StudySession::from_data`] keeps of a session. `interviewer.sessions` holds
//! one row per session (concept, methodology, status, termination, completed turns, the
//! strategy of each turn, the interviewer and machine that pushed it, the watermark);
//! `items` its codes-to-be (a canonical slot, or a surface node no slot holds: key, node
//! type, name, embedding as the bytes of its `f32`s), `members` each item's labels with the
//! turn and the respondent's words, and `links` the item pairs the respondent linked. Each
//! child row has its position, so a session reads back in the order it was written and
//! `analyze --from` prints byte for byte what `analyze --db` prints for the same sessions
//! (only the JSON's `source` differs: the team URL and who pushed it). Plain rows rather than
//! a JSON document keep the data queryable with SQL and floats exact. No settings, keys,
//! prompts or model replies leave the laptop: they are not part of a study.
//!
//! # Concurrency and resuming
//!
//! Migrations are versioned in `interviewer.migrations` and applied under an advisory lock
//! ([`schema`]). Each session is pushed in its own transaction; whether the team already has
//! it is decided by a per-session watermark ([`push`]), compared again inside the upsert, so
//! interrupted, repeated and simultaneous syncs leave each session once, as its newest copy.
//!
//! # Connecting
//!
//! [`Target`] reads the URL, `PGPASSWORD`, `~/.pgpass` (`PGPASSFILE`) and `sslmode`;
//! failures are [`TeamError`]s naming host, port, database and user, never the password.

mod connect;
mod error;
mod pgpass;
mod push;
mod read;
mod schema;
mod tls;

pub use connect::{Target, TeamDb, redact};
pub use error::{Place, TeamError};
pub use push::{LocalFile, Origin, Pushed, ROWS_VERSION, Watermark};
pub use read::TeamSession;

impl TeamDb {
    /// Creates or migrates the team schema (see [`schema`]); the versions applied now.
    pub async fn migrate(&mut self) -> Result<Vec<i32>, TeamError> {
        schema::migrate(&mut self.client, &self.at).await
    }
}
