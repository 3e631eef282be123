//! `interviewer import`: every transcript format, bad files refused whole, re-import a no-op,
//! the engine's choice kept beside the interviewer's question, and `analyze` over imported and
//! live sessions together.

use std::path::{Path, PathBuf};

use crate::common;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(name)
}

use common::import;

fn session_count(db: &Path) -> usize {
    if !db.exists() {
        return 0;
    }
    let out = common::run_binary(&[db], &["sessions", "list"]);
    common::succeeded(&out)
        .lines()
        .filter(|l| l.contains("oat_milk"))
        .count()
}

fn export_json(db: &Path, session: &str) -> serde_json::Value {
    let out = common::run_binary(&[db], &["export", session, "--format", "json"]);
    serde_json::from_str(&common::succeeded(&out)).unwrap()
}

/// The interviewer's and the respondent's utterances of an export, in order.
fn said(json: &serde_json::Value, speaker: &str) -> Vec<String> {
    json["utterances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["speaker"] == speaker)
        .map(|u| u["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_format_imports_the_same_interview() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("import.db");
    for (file, format, interviewer, how) in [
        ("sarah.txt", "text", "Sarah", "asks the most questions"),
        ("sarah.vtt", "WebVTT", "Sarah", "asks the most questions"),
        ("sarah.srt", "SRT", "Sarah", "asks the most questions"),
        ("qa.txt", "text", "Q", "its label says so"),
        ("speakers.txt", "text", "Sarah", "asks the most questions"),
    ] {
        let out = import(&db, &[fixture(file).to_str().unwrap()]);
        let stdout = common::succeeded(&out);
        assert!(
            stdout.contains(&format!(
                "(6 answers, {format}; interviewer \"{interviewer}\": {how}"
            )),
            "{file}: {stdout}"
        );
        let json = export_json(&db, "latest");
        let questions = said(&json, "interviewer");
        let answers = said(&json, "respondent");
        assert_eq!(answers.len(), 6, "{file}");
        assert_eq!(
            questions.first().unwrap(),
            "Thanks for joining. To start, what comes to mind when you think about the milk you buy?",
            "{file}"
        );
        // Lines of one speaker are one turn; the closing remark is the last utterance.
        assert_eq!(
            answers[1],
            "Because my morning latte feels like a little treat when the foam holds. It sounds \
             silly but it sets the tone.",
            "{file}"
        );
        assert_eq!(
            questions.last().unwrap(),
            "That's everything I wanted to ask. Thank you!"
        );
        assert_eq!(questions.len(), 7, "{file}");
        let session = &json["session"];
        assert_eq!(session["status"], "finished", "{file}");
        assert_eq!(session["termination_reason"], "transcript ended");
        assert_eq!(session["imported"]["format"], format);
        // Cue times are kept per utterance, numbered as the session numbers its turns.
        let times = session["imported"]["cue_times"].as_array().unwrap();
        match file {
            "sarah.vtt" => {
                assert_eq!(times.len(), 13, "{times:?}");
                assert_eq!(
                    times[0],
                    serde_json::json!({"turn": 0, "speaker": "interviewer", "start": 5.0, "end": 11.5})
                );
                // Answer 2 is two cues of Tom's: from the first's start to the second's end.
                assert_eq!(
                    times[3],
                    serde_json::json!({"turn": 2, "speaker": "respondent", "start": 29.0, "end": 40.0})
                );
                assert_eq!(
                    times[12],
                    serde_json::json!({"turn": 6, "speaker": "interviewer", "start": 100.0, "end": 103.0})
                );
            }
            "qa.txt" => assert!(times.is_empty(), "{times:?}"),
            _ => assert_eq!(times.len(), 13, "{file}: {times:?}"),
        }
        assert_eq!(session["imported"]["complete"], true);
        // Every answer ran through the pipeline, and each turn keeps the engine's own choice
        // and question beside the interviewer's.
        let turns = json["turns"].as_array().unwrap();
        assert_eq!(turns.len(), 6, "{file}");
        for (i, turn) in turns.iter().enumerate() {
            let override_ = &turn["override"];
            let result = &turn["turn_result"];
            let engine_question = result["next_question"].as_str().unwrap();
            assert!(!result["strategy_selected"].as_str().unwrap().is_empty());
            if i + 1 < turns.len() {
                assert_eq!(override_["edited"], true, "{file} turn {}", i + 1);
                assert_eq!(override_["question"], questions[i + 1].as_str());
                assert_eq!(override_["replaced"]["question"], engine_question);
            }
        }
        let nodes = json["graph"]["nodes"].as_array().map_or(0, Vec::len);
        assert!(nodes >= 10, "{file}: {nodes} nodes");
    }
    // Times: how long each side spoke (the last file has start times only: a turn lasts until
    // the next begins).
    let json = export_json(&db, "latest");
    let imported = &json["session"]["imported"];
    assert_eq!(imported["interviewer_seconds"], 27.0, "{imported}");
    assert_eq!(imported["respondent_seconds"], 68.0, "{imported}");
    assert_eq!(imported["respondent_words"], 103);
    let md = common::run_binary(&[&db], &["export", "latest", "--format", "md"]);
    let md = common::succeeded(&md);
    assert!(md.contains("- Imported from `"), "{md}");
    assert!(md.contains("*The engine:* `"), "{md}");
    let list = common::succeeded(&common::run_binary(&[&db], &["sessions", "list"]));
    assert_eq!(list.matches("imported").count(), 5, "{list}");
}

#[test]
fn the_same_file_imports_once_and_replace_imports_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("again.db");
    let file = fixture("sarah.vtt");
    let first = common::succeeded(&import(&db, &[file.to_str().unwrap()]));
    let id = first.split("session ").nth(1).unwrap()[..36].to_owned();
    let again = common::succeeded(&import(&db, &[file.to_str().unwrap()]));
    assert!(
        again.contains(&format!("already imported as session {id}")),
        "{again}"
    );
    assert!(again.contains("0 imported, 1 already imported"), "{again}");
    assert_eq!(session_count(&db), 1);
    // A copy under another name is the same content.
    let copy = dir.path().join("copy.vtt");
    std::fs::copy(&file, &copy).unwrap();
    let out = common::succeeded(&import(&db, &[copy.to_str().unwrap()]));
    assert!(out.contains("already imported"), "{out}");
    let replaced = common::succeeded(&import(&db, &["--replace", file.to_str().unwrap()]));
    assert!(
        replaced.contains(&format!("replacing session {id}")),
        "{replaced}"
    );
    assert_eq!(session_count(&db), 1);
    let gone = common::run_binary(&[&db], &["export", &id, "--format", "json"]);
    assert!(!gone.status.success());
}

/// Each bad file is an error naming the file (and the line where there is one), and nothing of
/// it is stored; good files beside it are imported.
#[test]
fn bad_transcripts_are_refused_whole_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.db");
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            write(
                "prose.txt",
                b"We talked about oat milk for an hour.\nIt went well.\n",
            ),
            "prose.txt: no speaker labels found",
        ),
        (
            write(
                "monologue.txt",
                b"Tom: I like oat milk.\nTom: It froths.\nTom: That is all.\n",
            ),
            "monologue.txt: only one speaker (Tom)",
        ),
        (
            write("audio.txt", b"RIFF\x24\0\0\0WAVEfmt \x10\0\0\0\x01\0"),
            "audio.txt: a binary file, not a text transcript",
        ),
        (
            write("latin1.txt", b"Q: Caf\xe9?\nA: Oui.\n"),
            "latin1.txt: line 1: not UTF-8 text",
        ),
        (
            write(
                "respondent_first.txt",
                b"A: I always buy oat milk.\nQ: Why?\nA: It froths.\n",
            ),
            "respondent_first.txt: line 1: the respondent (A) speaks before the interviewer",
        ),
        (
            write(
                "bad_cue.vtt",
                b"WEBVTT\n\n00:00:01.000 --> soon\n<v Sarah>Hello?\n",
            ),
            "bad_cue.vtt: line 3: cannot read the cue times",
        ),
        (
            write(
                "three.txt",
                b"Sarah: Why?\nTom: Taste.\nAnn: Price.\nSarah: Why?\nTom: Habit.\nAnn: Froth.\n",
            ),
            "three.txt: 3 speakers (Sarah, Tom, Ann); name the respondent with --respondent",
        ),
    ];
    let big = dir.path().join("huge.txt");
    let line = "Q: Why does that matter to you?\nA: It just does, I suppose.\n";
    std::fs::write(&big, line.repeat(6 * 1024 * 1024 / line.len())).unwrap();
    let good = fixture("qa.txt");
    let mut args: Vec<&str> = cases.iter().map(|(p, _)| p.to_str().unwrap()).collect();
    args.push(big.to_str().unwrap());
    args.push(good.to_str().unwrap());
    let out = import(&db, &args);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (_, expected) in &cases {
        assert!(stderr.contains(expected), "{expected}\n{stderr}");
    }
    assert!(stderr.contains("huge.txt: 6291"), "{stderr}");
    assert!(
        stderr.contains("8 of 9 files were not imported"),
        "{stderr}"
    );
    // Only the good file became a session.
    assert_eq!(session_count(&db), 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 imported, 0 already imported, 8 failed"),
        "{stdout}"
    );

    // Naming the respondent imports the three-speaker file, leaving the third out.
    let three = dir.path().join("three.txt");
    let out = import(
        &db,
        &[
            "--interviewer",
            "sarah",
            "--respondent",
            "Tom",
            three.to_str().unwrap(),
        ],
    );
    let stdout = common::succeeded(&out);
    assert!(
        stdout.contains("interviewer \"Sarah\": set with --interviewer; respondent \"Tom\"; 2 turns of other speakers left out"),
        "{stdout}"
    );
    let out = import(&db, &["--interviewer", "Bob", three.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "--interviewer \"Bob\" is not a speaker here; the speakers are Sarah, Tom, Ann"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A session exported as JSON imports again as the same conversation; `analyze` reads imported
/// and live sessions of the concept together.
#[test]
fn a_json_export_imports_and_analyze_mixes_imported_and_live_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mixed.db");
    common::live_oat_milk_interview(&db, dir.path());
    let exported = dir.path().join("live.json");
    let json = common::succeeded(&common::run_binary(
        &[&db],
        &["export", "latest", "--format", "json"],
    ));
    std::fs::write(&exported, &json).unwrap();
    let live_json: serde_json::Value = serde_json::from_str(&json).unwrap();

    let out = import(
        &db,
        &[
            exported.to_str().unwrap(),
            fixture("sarah.txt").to_str().unwrap(),
        ],
    );
    let stdout = common::succeeded(&out);
    assert!(
        stdout.contains("JSON export; interviewer \"interviewer\": its label says so"),
        "{stdout}"
    );
    assert!(stdout.contains("2 imported"), "{stdout}");
    let imported_id = stdout
        .lines()
        .find(|l| l.contains("live.json"))
        .and_then(|l| l.split("session ").nth(1))
        .map(|s| s[..36].to_owned())
        .unwrap();
    let imported = export_json(&db, &imported_id);
    assert_eq!(
        said(&imported, "respondent"),
        said(&live_json, "respondent")
    );
    // The live session's last question was asked, so it is kept as the closing utterance.
    assert_eq!(
        said(&imported, "interviewer"),
        said(&live_json, "interviewer")
    );

    let analysis = common::succeeded(&common::run_binary(
        &[&db],
        &["analyze", "--concept", "oat_milk"],
    ));
    assert!(analysis.contains("3 interviews"), "{analysis}");
    assert!(analysis.contains("1 live, 2 imported"), "{analysis}");
    assert!(analysis.contains("calm"), "{analysis}");
}

/// An import killed part-way leaves nothing in the database: the session is built in a staging
/// file and lands in one transaction.
#[test]
fn an_import_killed_part_way_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let file = fixture("sarah.txt");
    let out = common::import_with(
        &db,
        &[file.to_str().unwrap()],
        &[("INTERVIEWER_CRASH_AT", "graph_update:after")],
    );
    assert!(!out.status.success());
    assert_eq!(session_count(&db), 0);
    // The staging file is beside the database, not in it.
    let staging = dir.path().join("crash.db.import");
    assert!(staging.read_dir().unwrap().next().is_some());
    // The same file imports afterwards, as new.
    let stdout = common::succeeded(&import(&db, &[file.to_str().unwrap()]));
    assert!(
        stdout.contains("1 imported, 0 already imported"),
        "{stdout}"
    );
    assert_eq!(session_count(&db), 1);
    // And replay works on an imported session like on any other.
    let replay = common::run_binary(&[&db], &["replay", "latest", "--format", "json"]);
    common::succeeded(&replay);
}
