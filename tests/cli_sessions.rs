//! `interviewer sessions` against a database chosen with `--db`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

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
    assert_eq!(sessions(&db), format!("no sessions in {}\n", db.display()));
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
