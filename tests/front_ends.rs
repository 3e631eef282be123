//! The three front ends run one session driver: the same interview through the terminal app's
//! session task (keyboard commands), the headless `interview` command (an answers file) and
//! `simulate` (a persona) stores the same session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;
use crate::crash_resume::snapshot;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use interviewer::domain::Speaker;
use interviewer::pipeline::{Event, Interview, PipelineSettings};
use interviewer::session::{self, Command as SessionCommand};
use interviewer::store::{Store, StoreOps};

fn binary(db: &Path, args: &[&str]) -> Output {
    let out = common::run_binary(&[db], args);
    common::succeeded(&out);
    out
}

fn headless(db: &Path, script: &Path, answers: &Path, turns: &str) {
    binary(
        db,
        &[
            "--script",
            script.to_str().unwrap(),
            "interview",
            "--concept",
            "oat_milk",
            "--max-turns",
            turns,
            "--answers",
            answers.to_str().unwrap(),
        ],
    );
}

#[test]
fn the_app_and_the_headless_command_store_the_same_session() {
    let tmp = tempfile::tempdir().unwrap();
    let script = common::example("oat_milk_script.yaml");
    let cli_db = tmp.path().join("cli.db");
    headless(
        &cli_db,
        &script,
        &common::example("oat_milk_answers.txt"),
        "11",
    );

    // The terminal app's session task, with the app's default settings, fed by "keyboard".
    let app_db = tmp.path().join("app.db");
    let services = interviewer::pipeline::Services {
        settings: PipelineSettings::default(),
        ..common::services_with(&script)
    };
    let interview = Interview::create(
        Store::open(&app_db).unwrap(),
        common::spec(11),
        services,
        None,
    )
    .unwrap();
    let (mut events, control) = session::spawn(interview).unwrap().into_parts();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for answer in common::answers() {
            control
                .commands
                .send(SessionCommand::Answer(answer))
                .await
                .unwrap();
        }
        loop {
            let event = tokio::time::timeout(Duration::from_secs(120), events.next())
                .await
                .expect("the session finishes")
                .expect("the session is running");
            match event.pipeline() {
                Some(Event::Finished { .. }) => break,
                Some(Event::TurnFailed { error, .. }) => panic!("{error}"),
                _ => {}
            }
        }
    });
    control.shutdown();
    assert_eq!(snapshot(&app_db), snapshot(&cli_db));
}

#[test]
fn a_simulation_stores_what_the_headless_command_stores_for_its_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let script = common::example("oat_milk_respondent_script.yaml");
    let sim_db = tmp.path().join("sim.db");
    binary(
        &sim_db,
        &[
            "--script",
            script.to_str().unwrap(),
            "simulate",
            "--concept",
            "oat_milk",
            "--persona",
            "cooperative",
            "--turns",
            "8",
            "--seed",
            "3",
        ],
    );
    // The persona's answers, replayed through the headless command.
    let store = Store::open(&sim_db).unwrap();
    let id = store.list_sessions().unwrap()[0].id.clone();
    let answers: Vec<String> = store
        .utterances(&id)
        .unwrap()
        .into_iter()
        .filter(|u| u.speaker == Speaker::Respondent)
        .map(|u| u.text.replace("\n\n", "\n"))
        .collect();
    assert!(!answers.is_empty());
    let file = tmp.path().join("answers.txt");
    std::fs::write(&file, answers.join("\n\n")).unwrap();
    let cli_db = tmp.path().join("cli.db");
    headless(&cli_db, &script, &file, "8");
    assert_eq!(snapshot(&sim_db), snapshot(&cli_db));
}
