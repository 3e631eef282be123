//! `interviewer analyze` on a real study: the six shipped respondents of the oat milk demo
//! study, interviewed headless with no model (`--provider none`, offline understanding with
//! the real `MiniLM`), three into each of two database files.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{self, run_binary, succeeded};

/// The two database files of the study, made once for every test here and in `team` (in
/// cargo's scratch directory for integration tests, emptied first).
pub(crate) fn study() -> &'static (PathBuf, PathBuf) {
    static STUDY: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    STUDY.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("study");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.sqlite");
        let b = dir.join("b.sqlite");
        for respondent in 1..=6 {
            let db = if respondent <= 3 { &a } else { &b };
            let answers = common::example(&format!("study/respondent_{respondent}.txt"));
            succeeded(&run_binary(
                &[db],
                &[
                    "interview",
                    "--provider",
                    "none",
                    "--concept",
                    "oat_milk",
                    "--max-turns",
                    "6",
                    "--answers",
                    answers.to_str().unwrap(),
                ],
            ));
        }
        (a, b)
    })
}

pub(crate) fn analyze(dbs: &[&Path], args: &[&str]) -> String {
    let mut all = vec!["analyze"];
    all.extend_from_slice(args);
    succeeded(&run_binary(dbs, &all))
}

#[test]
fn the_report_is_the_same_whichever_file_order_and_each_run() {
    let (a, b) = study();
    let csv = analyze(&[a, b], &["--concept", "oat_milk", "--format", "csv"]);
    assert_eq!(
        csv,
        analyze(&[b, a], &["--concept", "oat_milk", "--format", "csv"])
    );
    let md = analyze(&[a, b], &["--concept", "oat_milk"]);
    assert_eq!(md, analyze(&[a, b], &["--concept", "oat_milk"]));
    for section in [
        "# Study: oat_milk (means_end_chain)",
        "6 interviews (6 finished)",
        "## Codes",
        "## Implication matrix",
        "```mermaid\nflowchart BT",
        "## Dominant chains",
        "## Quotes by code",
    ] {
        assert!(md.contains(section), "no {section:?} in\n{md}");
    }
    // The map in GraphML has the codes and links the Mermaid map has.
    let mermaid = analyze(&[a, b], &["--concept", "oat_milk", "--format", "mermaid"]);
    let graphml = analyze(&[a, b], &["--concept", "oat_milk", "--format", "graphml"]);
    assert!(graphml.starts_with("<?xml"), "{graphml}");
    assert_eq!(
        graphml.matches("<node id=").count(),
        mermaid.lines().filter(|l| l.contains("[\"")).count()
    );
    assert_eq!(
        graphml.matches("<edge id=").count(),
        mermaid.matches("-->").count()
    );
    assert!(graphml.matches("<edge id=").count() >= 1, "{graphml}");
    // Codes that several respondents share are found across the two files.
    let shared = csv
        .lines()
        .filter(|l| l.starts_with("code,"))
        .filter(|l| l.split(',').nth(5).unwrap().parse::<u32>().unwrap() >= 3)
        .count();
    assert!(shared >= 2, "{csv}");
    // Selecting the sessions by id gives the same study as by concept.
    let json: Value =
        serde_json::from_str(&analyze(&[a, b], &["--all", "--format", "json"])).unwrap();
    let ids: Vec<&str> = json["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 6);
    assert_eq!(
        csv,
        analyze(&[a, b], &["--sessions", &ids.join(","), "--format", "csv"])
    );
}

/// The implication matrix recounted from the sessions' own JSON exports: every session's
/// surface edges mapped to codes through the analysis' members, each respondent counted once
/// per pair, directly or (only) through other codes.
#[test]
fn the_implication_matrix_matches_a_count_from_the_session_exports() {
    let (a, b) = study();
    let analysis: Value = serde_json::from_str(&analyze(
        &[a, b],
        &["--concept", "oat_milk", "--format", "json"],
    ))
    .unwrap();
    assert_matrix_matches_exports(&analysis);
}

/// The JSON export of a session of the study, from whichever of its two files holds it.
fn export(id: &str) -> Value {
    let (a, b) = study();
    let out = run_binary(&[a], &["export", id, "--format", "json"]);
    let text = if out.status.success() {
        String::from_utf8(out.stdout).unwrap()
    } else {
        succeeded(&run_binary(&[b], &["export", id, "--format", "json"]))
    };
    serde_json::from_str(&text).unwrap()
}

/// Asserts that an analysis of the study (as JSON, read from any store) has the implication
/// matrix that [`export`]s of its sessions give when counted independently.
pub(crate) fn assert_matrix_matches_exports(analysis: &Value) {
    let mut code_of: HashMap<(String, String), String> = HashMap::new();
    for code in analysis["codes"].as_array().unwrap() {
        for member in code["members"].as_array().unwrap() {
            code_of.insert(
                (
                    member["session"].as_str().unwrap().to_owned(),
                    member["key"].as_str().unwrap().to_owned(),
                ),
                code["id"].as_str().unwrap().to_owned(),
            );
        }
    }
    let mut direct: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut indirect: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for session in analysis["sessions"].as_array().unwrap() {
        let id = session["id"].as_str().unwrap();
        let own = code_links(&export(id), id, &code_of);
        for pair in &own {
            direct
                .entry(pair.clone())
                .or_default()
                .insert(id.to_owned());
        }
        let reach = closure(&own);
        for pair in reach.difference(&own) {
            indirect
                .entry(pair.clone())
                .or_default()
                .insert(id.to_owned());
        }
    }
    let counted: BTreeMap<(String, String), (u64, u64)> = analysis["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                (
                    l["from"].as_str().unwrap().to_owned(),
                    l["to"].as_str().unwrap().to_owned(),
                ),
                (
                    l["direct"].as_u64().unwrap(),
                    l["indirect"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let pairs: BTreeSet<&(String, String)> = direct.keys().chain(indirect.keys()).collect();
    let expected: BTreeMap<(String, String), (u64, u64)> = pairs
        .into_iter()
        .map(|pair| {
            let n = |m: &BTreeMap<(String, String), BTreeSet<String>>| {
                m.get(pair).map_or(0, |s| s.len() as u64)
            };
            (pair.clone(), (n(&direct), n(&indirect)))
        })
        .collect();
    assert!(!expected.is_empty(), "the study made no link at all");
    assert_eq!(counted, expected);
}

/// A session's links between codes, from its export: surface edges between nodes still
/// standing (a `revises` edge is a correction), each end mapped to its slot if any, then to
/// the analysis' code.
fn code_links(
    export: &Value,
    id: &str,
    code_of: &HashMap<(String, String), String>,
) -> BTreeSet<(String, String)> {
    let live: BTreeSet<&str> = export["graph"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["superseded_by"].is_null())
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    let slot: HashMap<&str, &str> = export["canonical_graph"]["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["surface_node_id"].as_str().unwrap(),
                m["canonical_slot_id"].as_str().unwrap(),
            )
        })
        .collect();
    let code = |node: &str| {
        let key = slot.get(node).copied().unwrap_or(node);
        code_of
            .get(&(id.to_owned(), key.to_owned()))
            .cloned()
            .unwrap()
    };
    let mut own = BTreeSet::new();
    for edge in export["graph"]["edges"].as_array().unwrap() {
        let (from, to) = (
            edge["source_node_id"].as_str().unwrap(),
            edge["target_node_id"].as_str().unwrap(),
        );
        if edge["edge_type"] == "revises" || !live.contains(from) || !live.contains(to) {
            continue;
        }
        let (from, to) = (code(from), code(to));
        if from != to {
            own.insert((from, to));
        }
    }
    own
}

/// Every pair joined by a path of one or more links, by extending paths until nothing is new.
fn closure(links: &BTreeSet<(String, String)>) -> BTreeSet<(String, String)> {
    let mut reach = links.clone();
    loop {
        let more: BTreeSet<(String, String)> = reach
            .iter()
            .flat_map(|(x, y)| {
                reach
                    .iter()
                    .filter(move |(y2, _)| y2 == y)
                    .map(move |(_, z)| (x.clone(), z.clone()))
            })
            .filter(|(x, z)| x != z)
            .collect();
        let before = reach.len();
        reach.extend(more);
        if reach.len() == before {
            return reach;
        }
    }
}

#[test]
fn mistakes_in_what_to_analyse_are_usage_errors() {
    let (a, _) = study();
    let missing = Path::new("/nonexistent/study.sqlite");
    let cases: [(Vec<&Path>, Vec<&str>, &str); 5] = [
        (vec![a], vec!["analyze"], "say which sessions"),
        (vec![a, missing], vec!["analyze", "--all"], "no database at"),
        (
            vec![a],
            vec!["analyze", "--sessions", "no-such-session"],
            "session no-such-session is in none",
        ),
        (
            vec![a],
            vec!["analyze", "--concept", "headphones"],
            "no finished session matches",
        ),
        (
            vec![a],
            vec!["analyze", "--all", "--personas"],
            "none of the chosen sessions was run by `simulate`",
        ),
    ];
    for (dbs, args, says) in cases {
        let out = run_binary(&dbs, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // Only `analyze` reads several databases.
    let out = run_binary(&[a, a], &["sessions"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only `analyze`"));
}

/// Words a code a researcher keeps is never named after alone, nor ends with: function words,
/// connectives, verbs of judging, bare evaluative and time words.
const NOT_A_CODE: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "so",
    "because",
    "which",
    "that",
    "this",
    "it",
    "means",
    "mean",
    "matters",
    "matter",
    "is",
    "are",
    "was",
    "to",
    "of",
    "for",
    "with",
    "in",
    "on",
    "at",
    "me",
    "my",
    "i",
    "important",
    "good",
    "great",
    "nice",
    "day",
    "time",
    "thing",
    "things",
    "really",
    "just",
    "also",
    "helps",
    "makes",
    "gives",
    "keeps",
    "lets",
    "puts",
    "annoys",
    "love",
    "like",
    "feels",
    "one",
];

/// `analyze` over offline interviews of the shipped answers (the demo interview's ten and the
/// six study respondents'): every code is a concept phrase, not a function word, connective or
/// fragment ending in one.
#[test]
fn offline_codes_are_concept_phrases() {
    let (a, b) = study();
    let tmp = tempfile::tempdir().unwrap();
    let shipped = tmp.path().join("shipped.sqlite");
    succeeded(&run_binary(
        &[&shipped],
        &[
            "interview",
            "--provider",
            "none",
            "--concept",
            "oat_milk",
            "--max-turns",
            "11",
            "--answers",
            common::example("oat_milk_answers.txt").to_str().unwrap(),
        ],
    ));
    let report: Value = serde_json::from_str(&analyze(
        &[a, b, &shipped],
        &["--concept", "oat_milk", "--unfinished", "--format", "json"],
    ))
    .unwrap();
    let codes = report["codes"].as_array().unwrap();
    assert!(codes.len() >= 10, "{} codes", codes.len());
    let mut bad = Vec::new();
    for code in codes {
        let name = code["name"].as_str().unwrap();
        let words: Vec<&str> = name.split('_').filter(|w| !w.is_empty()).collect();
        let first = words.first().copied().unwrap_or_default();
        let last = words.last().copied().unwrap_or_default();
        let content = words.iter().filter(|w| !NOT_A_CODE.contains(w)).count();
        if content == 0 || NOT_A_CODE.contains(&last) || ["and", "or", "but"].contains(&first) {
            bad.push(name.to_owned());
        }
    }
    println!(
        "codes: {:?}",
        codes
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect::<Vec<_>>()
    );
    assert!(bad.is_empty(), "codes a researcher would not keep: {bad:?}");
}
