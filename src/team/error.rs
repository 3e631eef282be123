//! [`TeamError`]: why the team database could not be reached, read or written, naming the
//! server, database and user (never the password) and what failed.

use std::fmt;

/// Where a connection went: what every connection error names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub host: String,
    pub port: u16,
    pub dbname: String,
    pub user: String,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "database {} as user {} on {}:{}",
            self.dbname, self.user, self.host, self.port
        )
    }
}

/// A failure of the team database.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// The `postgresql://` URL cannot be used; the URL is shown without its password.
    #[error("bad team database URL {url}: {reason} (expected postgresql://USER@HOST[:PORT]/DB)")]
    BadUrl { url: String, reason: String },
    /// Nothing answered at the host and port (refused, unknown host, timed out).
    #[error("cannot reach the PostgreSQL server for {at}: {reason}")]
    Unreachable { at: Box<Place>, reason: String },
    /// The server refused the user's credentials, or asked for a password there was none of.
    #[error("PostgreSQL refused the login to {at}: {reason}")]
    Auth { at: Box<Place>, reason: String },
    /// The server has no such database.
    #[error("PostgreSQL has no {at}: {reason}")]
    NoDatabase { at: Box<Place>, reason: String },
    /// TLS could not be set up: the server does not offer it (`sslmode=require`) or the
    /// handshake failed.
    #[error("TLS with the PostgreSQL server for {at} failed: {reason}")]
    Tls { at: Box<Place>, reason: String },
    /// Any other failure while connecting.
    #[error("cannot connect to {at}: {reason}")]
    Connect { at: Box<Place>, reason: String },
    /// A statement failed once connected; `what` says which step.
    #[error("team database {at}: {what}: {reason}")]
    Query {
        at: Box<Place>,
        what: String,
        reason: String,
    },
    /// The team schema is missing, or at a version this program does not know.
    #[error("team database {at}: {reason}")]
    Schema { at: Box<Place>, reason: String },
    /// A stored row does not read back as a session.
    #[error("team database {at}: session {id}: {reason}")]
    Row {
        at: Box<Place>,
        id: String,
        reason: String,
    },
    /// The local `SQLite` file could not be read.
    #[error("{path}: {reason}")]
    Local { path: String, reason: String },
}

impl TeamError {
    /// A failed statement at `at`, with the server's own message, detail and hint when it sent
    /// them.
    pub(crate) fn query(at: &Place, what: impl Into<String>, e: &tokio_postgres::Error) -> Self {
        Self::Query {
            at: Box::new(at.clone()),
            what: what.into(),
            reason: describe(e),
        }
    }

    /// Sorts a failed connection by what went wrong, reading the error tokio-postgres gave.
    pub(crate) fn connecting(at: &Place, e: &tokio_postgres::Error) -> Self {
        let at = Box::new(at.clone());
        if let Some(db) = e.as_db_error() {
            let reason = describe(e);
            let code = db.code().code();
            return if code.starts_with("28") {
                Self::Auth { at, reason }
            } else if code == "3D000" {
                Self::NoDatabase { at, reason }
            } else {
                Self::Connect { at, reason }
            };
        }
        let reason = describe(e);
        let top = e.to_string();
        // tokio-postgres has no public error kind; its messages for these kinds are fixed.
        if top.starts_with("error performing TLS handshake") {
            Self::Tls { at, reason }
        } else if top.starts_with("error connecting to server")
            || top.starts_with("timeout waiting for server")
        {
            Self::Unreachable { at, reason }
        } else if reason.contains("password missing") {
            Self::Auth {
                at,
                reason: "the server asks for a password and none was given (put it in \
                         PGPASSWORD or ~/.pgpass, or in the URL)"
                    .to_owned(),
            }
        } else if top.starts_with("authentication error") {
            Self::Auth { at, reason }
        } else {
            Self::Connect { at, reason }
        }
    }
}

/// The error and its causes in one line; a server error as its severity, message, detail and
/// hint.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{}: {}", db.severity(), db.message());
        if let Some(detail) = db.detail() {
            text.push_str(&format!(" ({detail})"));
        }
        if let Some(hint) = db.hint() {
            text.push_str(&format!("; hint: {hint}"));
        }
        return text;
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_names_database_user_host_and_port() {
        let at = Place {
            host: "db.example".into(),
            port: 5433,
            dbname: "study".into(),
            user: "ana".into(),
        };
        assert_eq!(
            at.to_string(),
            "database study as user ana on db.example:5433"
        );
    }
}
