//! `interviewer sessions` and `interviewer export` against a database chosen with `--db`:
//! listing, a session's summary, exports to stdout and files, deletion with its confirmation
//! rules, and the exit codes of unknown sessions and databases.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use interviewer::domain::SessionState;
use interviewer::store::{NewSession, Store, StoreOps};

fn sessions(db: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("--db")
        .arg(db)
        .arg("sessions")
        .output()
        .expect("run interviewer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn lists_sessions_of_the_chosen_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nested").join("work.db");
    assert_eq!(
        sessions(&db),
        format!(
            "no sessions: there is no database at {} yet\n",
            db.display()
        )
    );
    assert!(!db.exists(), "listing never creates a database");
    let store = Store::open(&db).unwrap();
    let state = SessionState {
        turn_count: 3,
        ..SessionState::default()
    };
    let new = NewSession {
        id: "s-1".into(),
        methodology: "means_end_chain".into(),
        concept: "oat_milk".into(),
        max_turns: 10,
        state,
    };
    store.create_session(&new).unwrap();
    drop(store);
    let out = sessions(&db);
    let row = out.lines().nth(1).unwrap();
    assert!(row.starts_with("s-1 "), "{out}");
    assert!(
        row.contains("oat_milk")
            && row.contains("means_end_chain")
            && row.contains(" 3 ")
            && row.contains("active"),
        "{out}"
    );
}

/// Runs `interviewer --db DB ARGS…` with stdin closed (not a terminal).
fn cli(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run interviewer")
}

/// A finished 10-turn scripted interview in `dir`; returns the database and the session id.
fn scripted_session(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let db = dir.join("i.db");
    let out = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("--db")
        .arg(&db)
        .arg("--config-dir")
        .arg(manifest.join("config"))
        .args(["interview", "--concept", "oat_milk", "--max-turns", "11"])
        .arg("--answers")
        .arg(manifest.join("assets/examples/oat_milk_answers.txt"))
        .arg("--script")
        .arg(manifest.join("assets/examples/oat_milk_script.yaml"))
        .env("INTERVIEWER_CACHE_DIR", manifest.join("target/test-cache"))
        .env_remove("INTERVIEWER_CRASH_AT")
        .output()
        .expect("run interviewer");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let id = stderr
        .strip_prefix("session ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session id in {stderr}"))
        .to_owned();
    (db, id)
}

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn show_export_and_delete_a_scripted_session() {
    let dir = tempfile::tempdir().unwrap();
    let (db, id) = scripted_session(dir.path());
    let audit = dir.path().join("audit").join(format!("{id}.jsonl"));
    assert!(
        audit.is_file(),
        "the headless interview writes its audit trail"
    );

    // `sessions` with and without `list`.
    let listed = text(&cli(&db, &["sessions"])).0;
    assert_eq!(listed, text(&cli(&db, &["sessions", "list"])).0);
    assert!(
        listed.contains(&id) && listed.contains("finished"),
        "{listed}"
    );

    let out = cli(&db, &["sessions", "show", &id]);
    let (show, err) = text(&out);
    assert!(out.status.success(), "{err}");
    for want in [
        &format!("session      {id}") as &str,
        "concept      oat_milk",
        "methodology  means_end_chain",
        "status       finished (Closing strategy selected)",
        "turns        10 of 11",
        "graph        13 nodes (0 superseded), 8 edges",
        "last strategies",
        "turn  10  validate_outcome → no node",
        "LLM usage by role",
        "LLM usage by turn",
    ] {
        assert!(show.contains(want), "missing {want:?} in\n{show}");
    }
    // Every role line and the totals: calls, tokens, and an unknown (not zero) cost.
    for role in [
        "extraction",
        "question_generation",
        "signal_scoring",
        "slot_discovery",
    ] {
        let line = show
            .lines()
            .find(|l| l.trim_start().starts_with(role))
            .unwrap_or_else(|| panic!("no {role} line in\n{show}"));
        assert!(line.ends_with("unknown"), "{line}");
    }
    let total = show
        .lines()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap();
    let numbers: Vec<u64> = total
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 3, "{total}");
    assert!(numbers.iter().all(|n| *n > 0), "{total}");
    assert!(!show.contains("0.000000"), "an unknown price is not free");

    // Export: stdout, an atomic file, and the usage errors.
    let out = cli(&db, &["export", &id, "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["session"]["id"], id.as_str());
    let csv_path = dir.path().join("out").join("scores.csv");
    std::fs::create_dir_all(csv_path.parent().unwrap()).unwrap();
    let out = cli(
        &db,
        &["export", &id, "-f", "csv", "-o", csv_path.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(out.stdout.is_empty());
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert!(csv.starts_with("turn,stage,strategy,node_id,node_label,signal,"));
    assert_eq!(
        std::fs::read_dir(csv_path.parent().unwrap())
            .unwrap()
            .count(),
        1,
        "no temporary file left"
    );
    let out = cli(&db, &["export", &id, "-f", "dot", "--canonical"]);
    assert!(text(&out).0.starts_with("digraph \"canonical\""));
    let out = cli(&db, &["export", &id, "-f", "csv", "--canonical"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--canonical"));
    let out = cli(&db, &["export", "no-such-session", "-f", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("'no-such-session': no session in"));

    // Delete: refused without a terminal, done with --yes, then gone everywhere.
    let out = cli(&db, &["sessions", "delete", &id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--yes"), "{}", text(&out).1);
    assert!(audit.is_file());
    let out = cli(&db, &["sessions", "delete", &id, "--yes"]);
    let (done, err) = text(&out);
    assert!(out.status.success(), "{err}");
    assert!(done.contains(&format!("deleted session {id}")), "{done}");
    assert!(!audit.exists(), "the audit trail goes with the session");
    assert!(!text(&cli(&db, &["sessions"])).0.contains(&id));
    let out = cli(&db, &["sessions", "show", &id]);
    assert_eq!(out.status.code(), Some(2));
    let out = cli(&db, &["sessions", "delete", &id, "--yes"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn show_and_export_refuse_a_missing_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("absent.db");
    for args in [
        &["sessions", "show", "x"][..],
        &["sessions", "delete", "x", "--yes"],
        &["export", "x", "--format", "json"],
    ] {
        let out = cli(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out).1.contains("no database at"), "{args:?}");
    }
    assert!(!db.exists(), "reading never creates a database");
}

/// Two stored sessions whose ids share a prefix, and a third; returns the database.
fn three_sessions(dir: &std::path::Path) -> std::path::PathBuf {
    let db = dir.join("three.db");
    let store = Store::open(&db).unwrap();
    for id in ["ab12-first", "ab34-second", "cd56-third"] {
        store
            .create_session(&NewSession {
                id: id.into(),
                methodology: "means_end_chain".into(),
                concept: "oat_milk".into(),
                max_turns: 10,
                state: SessionState::default(),
            })
            .unwrap();
    }
    db
}

#[test]
fn latest_and_unique_id_prefixes_name_a_session_and_ambiguity_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = three_sessions(dir.path());
    // The last created is the most recently active.
    for (typed, id) in [
        ("latest", "cd56-third"),
        ("ab1", "ab12-first"),
        ("cd", "cd56-third"),
        ("ab34-second", "ab34-second"),
    ] {
        let out = cli(&db, &["sessions", "show", typed]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{typed}: {stderr}");
        assert!(stdout.contains(id), "{typed}: {stdout}");
        let out = cli(&db, &["export", typed, "--format", "json"]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{typed}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["session"]["id"], id, "{typed}");
    }
    let out = cli(&db, &["sessions", "show", "ab"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out).1;
    assert!(
        stderr.contains("'ab' is ambiguous: 2 sessions")
            && stderr.contains("ab12-first")
            && stderr.contains("ab34-second"),
        "{stderr}"
    );
    // The error names what the user typed, where they typed it.
    let out = cli(
        &db,
        &[
            "interview",
            "--resume",
            "nope",
            "--provider",
            "none",
            "--answers",
            "-",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out).1;
    assert!(
        stderr.contains("--resume 'nope': no session in"),
        "{stderr}"
    );
    let out = cli(&db, &["sessions", "delete", "nope", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out).1;
    assert!(stderr.contains("'nope': no session in"), "{stderr}");
    let out = cli(&db, &["sessions", "delete", "ab3", "--yes"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(text(&out).0.contains("deleted session ab34-second"));
    // With one `ab` session left, `ab` is no longer ambiguous.
    let out = cli(&db, &["sessions", "show", "ab"]);
    assert!(text(&out).0.contains("ab12-first"), "{}", text(&out).1);
}

/// Runs `interviewer --db DB ARGS…` as a user who may not write `db` or its folder. As root
/// (who may write anything) it runs in a user namespace of its own, as `nobody`.
fn cli_without_write_access(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    let mut cmd = if root {
        let mut cmd = Command::new("unshare");
        cmd.arg("--user").arg(env!("CARGO_BIN_EXE_interviewer"));
        cmd
    } else {
        Command::new(env!("CARGO_BIN_EXE_interviewer"))
    };
    cmd.arg("--db")
        .arg(db)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run interviewer")
}

#[test]
fn a_database_in_a_read_only_folder_can_be_listed_shown_and_exported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("shared");
    std::fs::create_dir(&folder).unwrap();
    let db = three_sessions(&folder);
    // What an interviewer leaves behind after closing cleanly: no -wal or -shm files.
    let leftovers: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    let before = std::fs::read(&db).unwrap();
    let set = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    set(&db, 0o444);
    set(&folder, 0o555);
    set(dir.path(), 0o755);
    let outs = [
        cli_without_write_access(&db, &["sessions"]),
        cli_without_write_access(&db, &["sessions", "show", "ab1"]),
        cli_without_write_access(&db, &["export", "latest", "--format", "json"]),
    ];
    set(&folder, 0o755);
    set(&db, 0o644);
    for out in &outs {
        let (stdout, stderr) = text(out);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stdout.contains("ab12-first") || stdout.contains("cd56-third"),
            "{stdout}"
        );
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "reading wrote nothing");
}
