//! The password file (`~/.pgpass`, or the file `PGPASSFILE` names), read as libpq reads it.
//!
//! Each line is `host:port:database:user:password`; a field of just `*` matches anything,
//! `\:` and `\\` stand for a colon and a backslash, lines starting with `#` are comments, and
//! the first matching line wins. A file that its group or others may read is ignored with a
//! warning, as libpq does, since it may have leaked. Nothing here writes the file.

use std::path::{Path, PathBuf};

use super::error::Place;

/// The environment variable naming another password file.
pub const PGPASSFILE_ENV: &str = "PGPASSFILE";

/// One of a line's first four fields.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    /// An unescaped `*`.
    Any,
    Exactly(String),
}

impl Field {
    fn matches(&self, value: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Exactly(text) => text == value,
        }
    }
}

/// One usable line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    host: Field,
    port: Field,
    dbname: Field,
    user: Field,
    password: String,
}

/// What looking in the password file found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Lookup {
    pub password: Option<String>,
    /// Why the file was not used (say it to the user), when it was not.
    pub warning: Option<String>,
}

/// The password file's path: `PGPASSFILE`, else `.pgpass` in the home directory.
pub fn path() -> Option<PathBuf> {
    match std::env::var_os(PGPASSFILE_ENV) {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => dirs::home_dir().map(|home| home.join(".pgpass")),
    }
}

/// The password for `at` from the file at `path`, if the file exists, is private and has a
/// matching line. `host` is the name the URL gave (`localhost` for a socket directory).
pub fn lookup(path: &Path, at: &Place) -> Lookup {
    let Ok(meta) = std::fs::metadata(path) else {
        return Lookup::default();
    };
    if !meta.is_file() {
        return Lookup {
            password: None,
            warning: Some(format!(
                "password file {} is not a plain file; ignored",
                path.display()
            )),
        };
    }
    if let Some(warning) = too_open(path, &meta) {
        return Lookup {
            password: None,
            warning: Some(warning),
        };
    }
    match std::fs::read_to_string(path) {
        Ok(text) => Lookup {
            password: find(&text, at),
            warning: None,
        },
        Err(e) => Lookup {
            password: None,
            warning: Some(format!(
                "cannot read password file {}: {e}; ignored",
                path.display()
            )),
        },
    }
}

#[cfg(unix)]
fn too_open(path: &Path, meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!(
            "password file {} has group or world access (mode {:o}); ignored: permissions should \
             be u=rw (0600) or less",
            path.display(),
            mode & 0o777
        )
    })
}

#[cfg(not(unix))]
fn too_open(_: &Path, _: &std::fs::Metadata) -> Option<String> {
    None
}

/// The password of the first line of `text` that matches `at`.
fn find(text: &str, at: &Place) -> Option<String> {
    let port = at.port.to_string();
    text.lines()
        .filter_map(entry)
        .find(|e| {
            e.host.matches(&at.host)
                && e.port.matches(&port)
                && e.dbname.matches(&at.dbname)
                && e.user.matches(&at.user)
        })
        .map(|e| e.password)
}

/// A line's five fields, or `None` for a comment, a blank line or one with fewer fields.
fn entry(line: &str) -> Option<Entry> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.starts_with('#') || line.trim().is_empty() {
        return None;
    }
    let mut fields = split(line).into_iter();
    let mut next = || fields.next();
    let (host, port, dbname, user, password) = (next()?, next()?, next()?, next()?, next()?);
    Some(Entry {
        host: host.0,
        port: port.0,
        dbname: dbname.0,
        user: user.0,
        password: password.1,
    })
}

/// Fields split at unescaped colons: each as a match pattern and as unescaped text.
fn split(line: &str) -> Vec<(Field, String)> {
    let mut fields = Vec::new();
    let mut text = String::new();
    let mut escaped_any = false;
    let mut chars = line.chars();
    let finish = |text: &mut String, escaped: bool| {
        let field = if text == "*" && !escaped {
            Field::Any
        } else {
            Field::Exactly(text.clone())
        };
        (field, std::mem::take(text))
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                escaped_any = true;
                if let Some(next) = chars.next() {
                    text.push(next);
                }
            }
            ':' => {
                fields.push(finish(&mut text, escaped_any));
                escaped_any = false;
            }
            other => text.push(other),
        }
    }
    fields.push(finish(&mut text, escaped_any));
    fields
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn place(host: &str, port: u16, dbname: &str, user: &str) -> Place {
        Place {
            host: host.into(),
            port,
            dbname: dbname.into(),
            user: user.into(),
        }
    }

    #[test]
    fn the_first_matching_line_wins_and_stars_match_anything() {
        let text = "# team server\n\
                    db.example:5432:study:ana:first\n\
                    db.example:*:*:ana:second\n\
                    *:*:*:*:fallback\n";
        let at = |host, port, db, user| find(text, &place(host, port, db, user));
        assert_eq!(
            at("db.example", 5432, "study", "ana").as_deref(),
            Some("first")
        );
        assert_eq!(
            at("db.example", 6543, "other", "ana").as_deref(),
            Some("second")
        );
        assert_eq!(
            at("elsewhere", 5432, "study", "bo").as_deref(),
            Some("fallback")
        );
        assert_eq!(
            find(
                "db.example:5432:study:ana:x\n",
                &place("h", 5432, "study", "ana")
            ),
            None
        );
    }

    #[test]
    fn escaped_colons_and_backslashes_are_literal_and_an_escaped_star_is_a_star() {
        let text = "fe80\\:\\:1:5432:db:u:pa\\:ss\\\\word\n\\*:5432:db:u:star\n";
        assert_eq!(
            find(text, &place("fe80::1", 5432, "db", "u")).as_deref(),
            Some("pa:ss\\word")
        );
        assert_eq!(
            find(text, &place("*", 5432, "db", "u")).as_deref(),
            Some("star")
        );
        assert_eq!(find(text, &place("other", 5432, "db", "u")), None);
    }

    #[test]
    fn short_lines_comments_and_crlf_are_handled() {
        let text = "h:5432:db\r\n#h:5432:db:u:commented\r\nh:5432:db:u:pw\r\n";
        assert_eq!(
            find(text, &place("h", 5432, "db", "u")).as_deref(),
            Some("pw")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_read_is_ignored_with_a_warning() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:secret\n").unwrap();
        let at = place("h", 5432, "db", "u");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = lookup(&file, &at);
        assert_eq!(open.password, None);
        assert!(open.warning.unwrap().contains("group or world access"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            lookup(&file, &at),
            Lookup {
                password: Some("secret".into()),
                warning: None
            }
        );
        assert_eq!(lookup(&dir.path().join("none"), &at), Lookup::default());
    }
}
