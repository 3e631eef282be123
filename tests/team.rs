//! The team database against a real PostgreSQL server: each test starts its own in a temporary
//! directory (`initdb` + `pg_ctl` from the distribution's packages, password authentication on
//! a free loopback port) and stops it when done. Without the server binaries the tests say
//! SKIP and pass; there is no mock database.
//!
//! The study is the one `study` builds: six scripted interviews of the oat milk concept in two
//! database files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{run_binary, run_binary_with, succeeded};
use crate::study::{analyze, assert_matrix_matches_exports, study};

/// The superuser the test servers are made with, and its password.
const USER: &str = "team";
const PASSWORD: &str = "s3cret-Pw";

/// A PostgreSQL server of one test, stopped (immediately) when dropped.
struct Server {
    bin: PathBuf,
    /// Holds the data directory, the socket and the log; removed after the server stops.
    dir: tempfile::TempDir,
    port: u16,
    /// Run the server's programs as this user (`postgres` refuses to run as root).
    run_as: Option<String>,
}

impl Server {
    /// Starts a server with `settings` (`-c` options), or `None` after a loud SKIP when the
    /// binaries are not installed.
    fn start(settings: &[(&str, &str)]) -> Option<Self> {
        let Some(bin) = server_binaries() else {
            eprintln!(
                "SKIP: no PostgreSQL server binaries (initdb, pg_ctl) in `pg_config --bindir` \
                 or /usr/lib/postgresql/*/bin; install the postgresql package to run the team \
                 database tests"
            );
            return None;
        };
        let run_as = is_root().then(|| "postgres".to_owned());
        let dir = tempfile::Builder::new()
            .prefix("interviewer-pg-")
            .tempdir()
            .unwrap();
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if let Some(user) = &run_as {
            succeeded(
                &Command::new("chown")
                    .arg("-R")
                    .arg(user)
                    .arg(dir.path())
                    .output()
                    .unwrap(),
            );
        }
        let port = free_port();
        let server = Self {
            bin,
            dir,
            port,
            run_as,
        };
        let data = server.dir.path().join("data");
        let initdb = server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                USER,
                "--pwfile",
                pwfile.to_str().unwrap(),
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                "--no-sync",
                "--locale=C",
                "-E",
                "UTF8",
            ],
        );
        assert!(initdb.status.success(), "initdb: {}", text(&initdb));
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -F",
            server.dir.path().display()
        );
        for (key, value) in settings {
            options.push_str(&format!(" -c {key}={value}"));
        }
        let log = server.dir.path().join("log");
        let started = server.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        assert!(
            started.status.success(),
            "pg_ctl start: {}\n{}",
            text(&started),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(server)
    }

    /// Runs one of the server's programs (as `postgres` when we are root).
    fn run(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bin.join(program);
        let mut command = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        };
        command
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap()
    }

    /// A URL of database `db` for the test user, without a password.
    fn url(&self, db: &str) -> String {
        format!("postgresql://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// Makes an empty database.
    fn create_database(&self, db: &str) {
        let port = self.port.to_string();
        let socket = self.dir.path().to_str().unwrap().to_owned();
        let out = self.run("createdb", &["-h", &socket, "-p", &port, "-U", USER, db]);
        assert!(out.status.success(), "createdb: {}", text(&out));
    }

    /// The rows of a query, each as its columns' text joined by `|`.
    fn query(&self, db: &str, sql: &str) -> Vec<String> {
        let port = self.port.to_string();
        let socket = self.dir.path().to_str().unwrap().to_owned();
        let out = self.run(
            "psql",
            &[
                "-h", &socket, "-p", &port, "-U", USER, "-d", db, "-XAtc", sql,
            ],
        );
        assert!(out.status.success(), "psql {sql}: {}", text(&out));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
    }
}

/// The directory with `initdb` and `pg_ctl`: `pg_config --bindir`, else the newest
/// `/usr/lib/postgresql/*/bin`.
fn server_binaries() -> Option<PathBuf> {
    let has = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let from_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(dir) = from_config.filter(|d| has(d)) {
        return Some(dir);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|d| has(d))
        .collect();
    dirs.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
    });
    dirs.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A loopback port nothing listens on (just now).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The environment of a run that gets its password from `PGPASSWORD` only.
fn with_password() -> Vec<(&'static str, &'static str)> {
    vec![
        ("PGPASSWORD", PASSWORD),
        ("PGPASSFILE", "/nonexistent/pgpass"),
        ("PGSSLMODE", ""),
    ]
}

fn sync(db: &Path, url: &str, interviewer: &str, envs: &[(&str, &str)]) -> Output {
    run_binary_with(
        &[db],
        &["sync", "--to", url, "--interviewer", interviewer],
        envs,
    )
}

/// Every row of the team tables with its transaction id: equal before and after a run when
/// the run wrote nothing.
fn snapshot(server: &Server, db: &str) -> Vec<String> {
    let mut rows = Vec::new();
    for table in ["sessions", "items", "members", "links"] {
        rows.extend(server.query(
            db,
            &format!("SELECT '{table}', xmin::text, t::text FROM interviewer.{table} t ORDER BY 3"),
        ));
    }
    rows
}

#[test]
fn two_interviewers_sync_at_once_and_the_team_analysis_equals_the_files() {
    let (a, b) = study();
    let Some(server) = Server::start(&[]) else {
        return;
    };
    server.create_database("study");
    let url = server.url("study");
    // One pusher has its password in PGPASSWORD, the other in a private password file.
    let pgpass = server.dir.path().join("pgpass");
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{}:study:{USER}:{PASSWORD}\n", server.port),
    )
    .unwrap();
    set_mode(&pgpass, 0o600);
    let pgpass_env = [
        ("PGPASSWORD", ""),
        ("PGPASSFILE", pgpass.to_str().unwrap()),
        ("PGSSLMODE", ""),
    ];
    let (first, second) = std::thread::scope(|s| {
        let first = s.spawn(|| sync(a, &url, "ana", &with_password()));
        let second = s.spawn(|| sync(b, &url, "bo", &pgpass_env));
        (first.join().unwrap(), second.join().unwrap())
    });
    for out in [&first, &second] {
        let said = succeeded(out);
        assert!(said.starts_with("pushed 3 sessions to "), "{said}");
        assert!(said.contains("; 0 up to date"), "{said}");
    }
    assert!(succeeded(&first).contains(" as ana from "));
    assert_eq!(
        server.query("study", "SELECT max(version) FROM interviewer.migrations"),
        ["2"]
    );

    assert_team_analysis_is_the_files(&url, a, b);
    assert_team_list_names_who_and_where(&url);

    // Syncing again writes nothing and says so.
    let before = snapshot(&server, "study");
    let again = succeeded(&sync(a, &url, "ana", &with_password()));
    assert_eq!(
        again.trim(),
        format!("nothing to push to {url}: 3 sessions up to date")
    );
    assert_eq!(snapshot(&server, "study"), before);
    // No secret or setting of the laptop is in the team database.
    let dump = server.query(
        "study",
        "SELECT string_agg(t::text, ' ') FROM interviewer.sessions t",
    );
    assert!(!dump.concat().contains("api_key"), "{dump:?}");
}

/// A simulation study pushed to the team database gives the persona × methodology table the
/// file gives, and only simulated sessions are in it.
#[test]
fn the_persona_table_reads_the_same_from_the_team_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("sim.db");
    succeeded(&crate::simulate::simulate(
        &db,
        &[
            "--matrix",
            "personas=cooperative,brief",
            "methodologies=means_end_chain,jobs_to_be_done",
            "--turns",
            "3",
            "--seed",
            "5",
        ],
        &[],
    ));
    let Some(server) = Server::start(&[]) else {
        return;
    };
    server.create_database("sims");
    let url = server.url("sims");
    let said = succeeded(&sync(&db, &url, "ana", &with_password()));
    assert!(said.starts_with("pushed 4 sessions to "), "{said}");
    let table = |dbs: &[&Path], from: &[&str], format: &str| {
        let mut args = vec!["analyze", "--all", "--personas", "--format", format];
        args.extend_from_slice(from);
        succeeded(&run_binary_with(dbs, &args, &with_password()))
    };
    for format in ["md", "csv", "json"] {
        let from_file = table(&[&db], &[], format);
        assert_eq!(table(&[], &["--from", &url], format), from_file, "{format}");
    }
    let csv = table(&[], &["--from", &url], "csv");
    assert_eq!(csv.lines().count(), 5, "{csv}");
    // The demo study's interviews are people's: the team has no persona row for them.
    let (a, _) = study();
    succeeded(&sync(a, &url, "bo", &with_password()));
    assert_eq!(table(&[], &["--from", &url], "csv"), csv);
}

/// `analyze --from` the team database prints what `analyze --db a --db b` prints, and its
/// implication matrix is the one the sessions' exports give.
fn assert_team_analysis_is_the_files(url: &str, a: &Path, b: &Path) {
    // The team's analysis is the files' analysis, byte for byte.
    let team = |format: &str| {
        let out = run_binary_with(
            &[],
            &[
                "analyze",
                "--from",
                url,
                "--concept",
                "oat_milk",
                "--format",
                format,
            ],
            &with_password(),
        );
        succeeded(&out)
    };
    let files = |format: &str| analyze(&[a, b], &["--concept", "oat_milk", "--format", format]);
    assert_eq!(team("csv"), files("csv"));
    assert_eq!(team("md"), files("md"));
    let from_team: Value = serde_json::from_str(&team("json")).unwrap();
    assert_matrix_matches_exports(&from_team);
    let mut from_files: Value = serde_json::from_str(&files("json")).unwrap();
    let mut sources = Vec::new();
    for (session, team_session) in from_files["sessions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .zip(from_team["sessions"].as_array().unwrap())
    {
        sources.push(team_session["source"].as_str().unwrap().to_owned());
        session["source"] = team_session["source"].clone();
    }
    assert_eq!(from_team, from_files, "only the sources differ");
    assert!(
        sources.iter().all(
            |s| s.starts_with(&format!("{url} (ana@")) || s.starts_with(&format!("{url} (bo@"))
        ),
        "{sources:?}"
    );
}

/// The team's session list says who pushed each session from where.
fn assert_team_list_names_who_and_where(url: &str) {
    // The team's session list says who pushed each session from where.
    let list = succeeded(&run_binary_with(
        &[],
        &["sessions", "list", "--from", url],
        &with_password(),
    ));
    assert!(list.starts_with("id "), "{list}");
    assert!(
        list.lines().next().unwrap().contains("interviewer"),
        "{list}"
    );
    assert_eq!(list.lines().count(), 7, "{list}");
    assert_eq!(
        list.lines().filter(|l| l.contains(" ana ")).count(),
        3,
        "{list}"
    );
    assert_eq!(
        list.lines().filter(|l| l.contains(" bo ")).count(),
        3,
        "{list}"
    );
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap();
    assert!(list.contains(host.trim()), "{list}");
}

#[test]
fn a_sync_killed_mid_way_finishes_on_the_next_run_without_duplicates() {
    let (a, _) = study();
    let Some(server) = Server::start(&[]) else {
        return;
    };
    server.create_database("resume");
    let url = server.url("resume");
    let crash = |at: &str| {
        let mut envs = with_password();
        envs.push(("INTERVIEWER_SYNC_CRASH_AT", at));
        let out = sync(a, &url, "ana", &envs);
        assert!(
            !out.status.success(),
            "the crash switch did not stop the sync: {}",
            text(&out)
        );
    };
    let count = || server.query("resume", "SELECT count(*) FROM interviewer.sessions");
    // Killed inside the second session's transaction: only the first is there.
    crash("2:before");
    assert_eq!(count(), ["1"]);
    // Killed right after committing the next one: two whole sessions.
    crash("1:after");
    assert_eq!(count(), ["2"]);
    let said = succeeded(&sync(a, &url, "ana", &with_password()));
    assert!(said.starts_with("pushed 1 session to "), "{said}");
    assert!(said.contains("; 2 up to date"), "{said}");
    let team = succeeded(&run_binary_with(
        &[],
        &["analyze", "--from", &url, "--all", "--format", "csv"],
        &with_password(),
    ));
    assert_eq!(team, analyze(&[a], &["--all", "--format", "csv"]));
    let per_session = server.query(
        "resume",
        "SELECT count(*) FROM interviewer.items GROUP BY session_id \
         HAVING count(*) <> count(DISTINCT key)",
    );
    assert!(per_session.is_empty(), "an item twice: {per_session:?}");
}

/// A team URL, the environment to sync with, the exit code and what stderr must say.
type Case<'a> = (String, Vec<(&'a str, &'a str)>, i32, &'a [&'a str]);

#[test]
fn connection_failures_name_the_place_and_what_failed_and_never_the_password() {
    let (a, _) = study();
    let Some(server) = Server::start(&[]) else {
        return;
    };
    server.create_database("errors");
    let port = server.port;
    let closed = free_port();
    let no_password = [
        ("PGPASSWORD", ""),
        ("PGPASSFILE", "/nonexistent/pgpass"),
        ("PGSSLMODE", ""),
    ];
    let cases: [Case; 6] = [
        (
            format!("postgresql://{USER}@127.0.0.1:{closed}/errors"),
            with_password(),
            1,
            &[
                "cannot reach the PostgreSQL server",
                &format!("127.0.0.1:{closed}"),
                "refused",
            ],
        ),
        (
            format!("postgresql://{USER}:wrong-Pw@127.0.0.1:{port}/errors"),
            with_password(),
            1,
            &[
                "refused the login",
                "as user team",
                "password authentication failed",
            ],
        ),
        (
            server.url("errors"),
            no_password.to_vec(),
            1,
            &["refused the login", "none was given", "PGPASSWORD"],
        ),
        (
            server.url("nope"),
            with_password(),
            1,
            &["has no database nope", "does not exist"],
        ),
        (
            format!("{}?sslmode=require", server.url("errors")),
            with_password(),
            1,
            &[
                "TLS with the PostgreSQL server",
                "server does not support TLS",
            ],
        ),
        (
            format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:notaport/errors"),
            with_password(),
            2,
            &[
                "bad team database URL",
                "postgresql://team:***@127.0.0.1:notaport/errors",
            ],
        ),
    ];
    for (url, envs, code, says) in cases {
        let out = sync(a, &url, "ana", &envs);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{url}: {}", text(&out));
        for part in says {
            assert!(stderr.contains(part), "{url}: no {part:?} in {stderr}");
        }
        assert!(
            !stderr.contains(PASSWORD) && !stderr.contains("wrong-Pw"),
            "{stderr}"
        );
    }
    assert_an_open_password_file_is_ignored(&server, a);
    // Reading a database nobody synced to says how to set it up.
    let out = run_binary_with(
        &[],
        &["analyze", "--from", &server.url("errors"), "--all"],
        &with_password(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no interviewer tables yet"));
    // `sync` reads one database file, and names a session that is not in it.
    let out = run_binary(
        &[a],
        &["sync", "--to", &server.url("errors"), "--sessions", "nope"],
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no session nope"),
        "{}",
        text(&out)
    );
}

#[test]
fn tls_is_used_when_the_server_offers_it() {
    let (a, _) = study();
    if Command::new("openssl").arg("version").output().is_err() {
        eprintln!("SKIP: no openssl to make the test server's certificate");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("server.crt"), dir.path().join("server.key"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
        ])
        .arg("/CN=localhost")
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made));
    set_mode(&key, 0o600);
    if is_root() {
        succeeded(
            &Command::new("chown")
                .arg("postgres")
                .arg(&key)
                .arg(&cert)
                .output()
                .unwrap(),
        );
        set_mode(dir.path(), 0o755);
    }
    let Some(server) = Server::start(&[
        ("ssl", "on"),
        ("ssl_cert_file", cert.to_str().unwrap()),
        ("ssl_key_file", key.to_str().unwrap()),
        ("log_connections", "on"),
    ]) else {
        return;
    };
    server.create_database("tls");
    let url = server.url("tls");
    let said = succeeded(&sync(
        a,
        &format!("{url}?sslmode=require"),
        "ana",
        &with_password(),
    ));
    assert!(said.starts_with("pushed 3 sessions"), "{said}");
    // The server saw the connection encrypted.
    let log = std::fs::read_to_string(server.dir.path().join("log")).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("database=tls") && l.contains("SSL enabled")),
        "{log}"
    );
    // verify-full checks the certificate: a self-signed one is refused.
    let out = sync(
        a,
        &format!("{url}?sslmode=verify-full"),
        "ana",
        &with_password(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr.contains("TLS with the PostgreSQL server"),
        "{stderr}"
    );
    // The default (prefer) uses TLS too, and finds everything pushed.
    let again = succeeded(&sync(a, &url, "ana", &with_password()));
    assert!(again.contains("3 sessions up to date"), "{again}");
}

/// A password file others may read is ignored, as libpq ignores it.
fn assert_an_open_password_file_is_ignored(server: &Server, a: &Path) {
    let pgpass = server.dir.path().join("open-pgpass");
    std::fs::write(&pgpass, format!("*:*:*:*:{PASSWORD}\n")).unwrap();
    set_mode(&pgpass, 0o644);
    let out = sync(
        a,
        &server.url("errors"),
        "ana",
        &[("PGPASSWORD", ""), ("PGPASSFILE", pgpass.to_str().unwrap())],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(stderr.contains("group or world access"), "{stderr}");
    assert!(stderr.contains("none was given"), "{stderr}");
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// An imported interview is an ordinary session to `sync`: pushed once, and the team's
/// analysis of it is the file's, imported sessions counted as such.
#[test]
fn an_imported_interview_syncs_like_any_other() {
    let Some(server) = Server::start(&[]) else {
        return;
    };
    server.create_database("imports");
    let url = server.url("imports");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("imported.db");
    let transcript =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts/sarah.vtt");
    succeeded(&crate::common::import(&db, &[transcript.to_str().unwrap()]));
    let said = succeeded(&sync(&db, &url, "ana", &with_password()));
    assert!(said.starts_with("pushed 1 session"), "{said}");
    let team = succeeded(&run_binary_with(
        &[],
        &[
            "analyze",
            "--from",
            &url,
            "--concept",
            "oat_milk",
            "--format",
            "md",
        ],
        &with_password(),
    ));
    let file = analyze(&[&db], &["--concept", "oat_milk", "--format", "md"]);
    assert_eq!(team, file);
    assert!(
        team.contains("1 interviews (1 finished; 0 live, 1 imported)"),
        "{team}"
    );
}
