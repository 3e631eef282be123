//! Where the team database is ([`Target`], from a `postgresql://` URL and the environment)
//! and the connection to it ([`TeamDb`]).
//!
//! Credentials come only from the URL and the environment, in libpq's order: a password in the
//! URL, else `PGPASSWORD`, else the password file (`PGPASSFILE` or `~/.pgpass`, see
//! [`super::pgpass`]). A user missing from the URL is `PGUSER`, else the OS user; a missing
//! database is named after the user; `sslmode` in the URL (else `PGSSLMODE`) picks TLS (see
//! [`super::tls`]). The password is never part of a message: errors name the [`Place`].

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::Client;
use tokio_postgres::config::Host;

use super::error::{Place, TeamError};
use super::pgpass;
use super::tls::{self, TlsMode};

/// The port PostgreSQL listens on unless told otherwise.
const DEFAULT_PORT: u16 = 5432;

/// How long to wait for the server to answer before saying it cannot be reached: long enough
/// for a slow VPN, short enough that a wrong host does not look like a hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A team database to connect to.
#[derive(Debug, Clone)]
pub struct Target {
    config: tokio_postgres::Config,
    tls: TlsMode,
    at: Place,
    /// Things to tell the user before connecting (a password file that was ignored).
    pub warnings: Vec<String>,
}

impl Target {
    /// Reads `url` (`postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…]`) and fills in the
    /// user, database and password from the environment as libpq does.
    pub fn parse(url: &str) -> Result<Self, TeamError> {
        let shown = redact(url);
        let bad = |reason: String| TeamError::BadUrl {
            url: shown.clone(),
            reason,
        };
        if !(url.starts_with("postgresql://") || url.starts_with("postgres://")) {
            return Err(bad("it does not start with postgresql://".to_owned()));
        }
        let (rest, sslmode) = take_sslmode(url);
        let sslmode = sslmode.or_else(|| std::env::var("PGSSLMODE").ok().filter(|m| !m.is_empty()));
        let tls = sslmode
            .as_deref()
            .map_or(Ok(TlsMode::default()), TlsMode::parse)
            .map_err(&bad)?;
        let mut config =
            tokio_postgres::Config::from_str(&rest).map_err(|e| bad(super::error::describe(&e)))?;
        let host = match config.get_hosts() {
            [] => return Err(bad("it names no host".to_owned())),
            [Host::Tcp(name)] => name.clone(),
            // libpq looks a socket directory up in the password file as `localhost`.
            #[cfg(unix)]
            [Host::Unix(_)] => "localhost".to_owned(),
            _ => return Err(bad("several hosts are not supported; name one".to_owned())),
        };
        let port = match config.get_ports() {
            [] => DEFAULT_PORT,
            [one] => *one,
            _ => return Err(bad("several ports are not supported; name one".to_owned())),
        };
        let user = match config.get_user() {
            Some(user) => user.to_owned(),
            None => default_user().map_err(&bad)?,
        };
        let dbname = config.get_dbname().unwrap_or(&user).to_owned();
        config.user(&user).dbname(&dbname).ssl_mode(tls.ssl_mode());
        if config.get_ports().is_empty() {
            // `port` adds to the list (one port per host): only when the URL gave none.
            config.port(port);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("interviewer");
        }
        let at = Place {
            host,
            port,
            dbname,
            user,
        };
        let mut warnings = Vec::new();
        if config.get_password().is_none() {
            if let Some(password) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
                config.password(password);
            } else if let Some(path) = pgpass::path() {
                let found = pgpass::lookup(&path, &at);
                warnings.extend(found.warning);
                if let Some(password) = found.password {
                    config.password(password);
                }
            }
        }
        Ok(Self {
            config,
            tls,
            at,
            warnings,
        })
    }

    /// The server, database and user (what messages name).
    pub fn place(&self) -> &Place {
        &self.at
    }

    /// The database as a URL without credentials: `postgresql://USER@HOST:PORT/DB`.
    pub fn display_url(&self) -> String {
        let host = if self.at.host.contains(':') {
            format!("[{}]", self.at.host)
        } else {
            self.at.host.clone()
        };
        format!(
            "postgresql://{}@{}:{}/{}",
            self.at.user, host, self.at.port, self.at.dbname
        )
    }

    /// Connects, with TLS as `sslmode` says, and runs the connection on the current tokio
    /// runtime until the returned handle is dropped.
    pub async fn connect(&self) -> Result<TeamDb, TeamError> {
        let connector = tls::connector(self.tls).map_err(|reason| TeamError::Tls {
            at: Box::new(self.at.clone()),
            reason,
        })?;
        let (client, connection) = self
            .config
            .connect(connector)
            .await
            .map_err(|e| TeamError::connecting(&self.at, &e))?;
        tokio::spawn(async move {
            // Ends when the client is dropped; a broken connection also fails the next query,
            // which reports it with its context.
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "team database connection ended");
            }
        });
        Ok(TeamDb {
            client,
            at: self.at.clone(),
            url: self.display_url(),
        })
    }
}

/// An open connection to the team database.
pub struct TeamDb {
    pub(super) client: Client,
    pub(super) at: Place,
    /// [`Target::display_url`], the `source` of the sessions read from here.
    pub(super) url: String,
}

impl TeamDb {
    /// The server, database and user.
    pub fn place(&self) -> &Place {
        &self.at
    }

    /// The database as a URL without credentials.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// `PGUSER`, else the OS user.
fn default_user() -> Result<String, String> {
    if let Some(user) = std::env::var("PGUSER").ok().filter(|u| !u.is_empty()) {
        return Ok(user);
    }
    whoami::username().map_err(|e| format!("it names no user and the OS user is unknown ({e})"))
}

/// The URL without its `sslmode` parameter (tokio-postgres knows fewer modes than libpq), and
/// that parameter's value.
fn take_sslmode(url: &str) -> (String, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_owned(), None);
    };
    let mut mode = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| match pair.split_once('=') {
            Some(("sslmode", value)) => {
                mode = Some(value.to_owned());
                false
            }
            _ => true,
        })
        .collect();
    if kept.is_empty() {
        (base.to_owned(), mode)
    } else {
        (format!("{base}?{}", kept.join("&")), mode)
    }
}

/// `url` with any password in it replaced by `***`, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = match userinfo.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => userinfo.to_owned(),
    };
    format!("{scheme}://{user}@{host}{path}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_password_in_the_url_is_never_shown() {
        assert_eq!(
            redact("postgresql://ana:s3cr3t@db.example:5433/study?sslmode=require"),
            "postgresql://ana:***@db.example:5433/study?sslmode=require"
        );
        assert_eq!(redact("postgresql://ana@h/db"), "postgresql://ana@h/db");
        assert_eq!(redact("postgresql://h/db"), "postgresql://h/db");
        let err = Target::parse("postgresql://ana:s3cr3t@h/db?sslmode=sometimes").unwrap_err();
        let message = err.to_string();
        assert!(!message.contains("s3cr3t"), "{message}");
        assert!(message.contains("unknown sslmode 'sometimes'"), "{message}");
    }

    #[test]
    fn a_url_gives_host_port_database_user_and_password() {
        let target =
            Target::parse("postgresql://ana:pw@db.example:5433/study?sslmode=disable").unwrap();
        assert_eq!(
            target.place(),
            &Place {
                host: "db.example".into(),
                port: 5433,
                dbname: "study".into(),
                user: "ana".into()
            }
        );
        assert_eq!(target.tls, TlsMode::Disable);
        assert_eq!(target.config.get_ports(), [5433]);
        assert_eq!(target.config.get_password(), Some(&b"pw"[..]));
        assert_eq!(
            target.display_url(),
            "postgresql://ana@db.example:5433/study"
        );
        let defaults = Target::parse("postgres://bo@h").unwrap();
        assert_eq!(defaults.place().port, 5432);
        assert_eq!(defaults.place().dbname, "bo");
        assert_eq!(defaults.tls, TlsMode::default());
    }

    #[test]
    fn unusable_urls_say_why() {
        for (url, says) in [
            ("mysql://ana@h/db", "does not start with postgresql://"),
            ("postgresql://ana@h:notaport/db", "bad team database URL"),
            ("postgresql://ana@a,b/db", "several hosts"),
            ("postgresql://ana@h/db?sslmode=verify-ca", "not supported"),
        ] {
            let message = Target::parse(url).unwrap_err().to_string();
            assert!(message.contains(says), "{url}: {message}");
        }
    }

    #[test]
    fn sslmode_is_taken_out_of_the_query_and_other_parameters_stay() {
        assert_eq!(
            take_sslmode("postgresql://h/db?sslmode=require&application_name=x"),
            (
                "postgresql://h/db?application_name=x".to_owned(),
                Some("require".to_owned())
            )
        );
        assert_eq!(
            take_sslmode("postgresql://h/db?sslmode=disable"),
            ("postgresql://h/db".to_owned(), Some("disable".to_owned()))
        );
        assert_eq!(
            take_sslmode("postgresql://h/db"),
            ("postgresql://h/db".to_owned(), None)
        );
    }
}
