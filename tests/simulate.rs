//! Simulated interviews end to end: a seeded scripted simulation is reproducible (and survives a
//! crash), seeds change the respondent's choices, the respondent never sees the engine's
//! internals, fatigue shortens answers, and a matrix runs every combination and resumes.
//!
//! The command-line tests run the `interviewer` binary with the scripted respondent fixture
//! `assets/examples/oat_milk_respondent_script.yaml`; the others call the library.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::float_cmp
)]

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use interviewer::config::Persona;
use interviewer::embed::{Embedder, HashEmbedder};
use interviewer::llm::{
    LlmError, LlmProvider, LlmRequest, LlmResponse, LlmRouter, Role, ScriptedProvider,
};
use interviewer::pipeline::{InterviewSpec, PipelineSettings, Services};
use interviewer::prompts::AnswerLength;
use interviewer::simulate::{
    PersonaRespondent, SimulationSpec, expected_target_words, fatigue_level, run_one, session_id,
};
use interviewer::store::{SessionStatus, Store, StoreOps};

fn script() -> PathBuf {
    common::example("oat_milk_respondent_script.yaml")
}

/// Runs `simulate` on the oat milk concept with the scripted respondent and interviewer.
pub(crate) fn simulate(db: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let script = script();
    let mut all = vec![
        "--script",
        script.to_str().unwrap(),
        "simulate",
        "--concept",
        "oat_milk",
    ];
    all.extend_from_slice(args);
    common::run_binary_with(&[db], &all, envs)
}

fn ok(out: &Output) -> String {
    common::succeeded(out)
}

/// The summary's `session` line.
fn session_of(summary: &str) -> String {
    summary
        .lines()
        .find_map(|l| l.strip_prefix("session"))
        .map(|v| v.trim().to_owned())
        .unwrap()
}

/// A session's contents without ids and timestamps: what a reproducible run must repeat.
#[derive(Debug, PartialEq)]
struct Contents {
    utterances: Vec<(u32, String, String)>,
    strategies: Vec<(u32, String, Option<String>)>,
    nodes: Vec<(String, String, u32, i8)>,
    edges: Vec<(String, String, String, u32)>,
    usage: Vec<(u32, String, u64, u64)>,
}

fn contents(db: &Path, id: &str) -> Contents {
    let store = Store::open(db).unwrap();
    let nodes = store.nodes(id).unwrap();
    let slots = store.slots(id).unwrap();
    // A focus is a surface node or, with canonical slots, a slot.
    let label = |node_id: &str| {
        nodes
            .iter()
            .find(|n| n.id == node_id)
            .map(|n| n.label.clone())
            .or_else(|| {
                slots
                    .iter()
                    .find(|s| s.id == node_id)
                    .map(|s| format!("slot {}", s.slot_name))
            })
            .unwrap_or_else(|| panic!("{node_id} is neither a node nor a slot"))
    };
    Contents {
        utterances: store
            .utterances(id)
            .unwrap()
            .into_iter()
            .map(|u| (u.turn, format!("{:?}", u.speaker), u.text))
            .collect(),
        strategies: store
            .scoring_history(id)
            .unwrap()
            .into_iter()
            .map(|s| (s.turn, s.strategy, s.focus_node_id.map(|f| label(&f))))
            .collect(),
        nodes: nodes
            .iter()
            .map(|n| (n.label.clone(), n.node_type.clone(), n.turn, n.stance))
            .collect(),
        edges: store
            .edges(id)
            .unwrap()
            .into_iter()
            .map(|e| {
                (
                    label(&e.source_node_id),
                    label(&e.target_node_id),
                    e.edge_type,
                    e.turn,
                )
            })
            .collect(),
        usage: store
            .llm_usage(id)
            .unwrap()
            .into_iter()
            .map(|r| {
                (
                    r.usage.turn,
                    r.usage.role,
                    r.usage.tokens_in,
                    r.usage.tokens_out,
                )
            })
            .collect(),
    }
}

/// The JSON export without its documented wall-clock fields (`created_at`, `updated_at`,
/// `recorded_at`, `latency_ms`), which are the only things two identical runs may differ in.
fn json_without_clock(path: &Path) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for key in ["created_at", "updated_at", "recorded_at", "latency_ms"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    strip(&mut doc);
    doc
}

const ONE_RUN: [&str; 6] = ["--persona", "fatiguing", "--turns", "8", "--seed", "7"];

#[test]
fn a_seeded_simulation_is_reproducible() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, seed: &str| {
        let db = tmp.path().join(format!("{name}.db"));
        let out_dir = tmp.path().join(name);
        let mut args = ONE_RUN.to_vec();
        args[5] = seed;
        args.extend(["--out", out_dir.to_str().unwrap()]);
        let summary = ok(&simulate(&db, &args, &[]));
        (db, out_dir, summary)
    };
    let (db_a, out_a, summary_a) = run("a", "7");
    let (db_b, out_b, summary_b) = run("b", "7");

    assert_eq!(
        summary_a, summary_b,
        "the printed summary is byte for byte the same"
    );
    let id = session_of(&summary_a);
    assert!(id.starts_with("sim-"), "{summary_a}");
    assert!(
        summary_a.contains("status            finished"),
        "{summary_a}"
    );
    let a = contents(&db_a, &id);
    assert_eq!(a, contents(&db_b, &id));
    assert!(
        a.nodes.len() >= 3,
        "the scripted story builds a graph: {a:?}"
    );
    let respondent_calls = a.usage.iter().filter(|u| u.1 == "respondent").count();
    let turns = a.strategies.len();
    assert_eq!(
        respondent_calls, turns,
        "one respondent call per answered turn"
    );

    // Ids are minted from the (seed-derived) session id, so every export but the JSON is the
    // same file byte for byte, and the JSON differs only in its wall-clock fields.
    let mut files: Vec<String> = std::fs::read_dir(&out_a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for name in &files {
        let (fa, fb) = (out_a.join(name), out_b.join(name));
        if Path::new(name).extension().is_some_and(|e| e == "json") {
            assert_eq!(json_without_clock(&fa), json_without_clock(&fb), "{name}");
        } else {
            assert_eq!(
                std::fs::read(&fa).unwrap(),
                std::fs::read(&fb).unwrap(),
                "{name}"
            );
        }
    }

    // Another seed makes other choices, under another session id.
    let (db_c, _, summary_c) = run("c", "8");
    let other = session_of(&summary_c);
    assert_ne!(other, id);
    let c = contents(&db_c, &other);
    let answers = |c: &Contents| -> Vec<String> {
        c.utterances
            .iter()
            .filter(|u| u.1 == "Respondent")
            .map(|u| u.2.clone())
            .collect()
    };
    assert_ne!(answers(&a), answers(&c));
}

#[test]
fn an_interrupted_simulation_resumes_to_the_same_session() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole.db");
    let first = simulate(&whole, &ONE_RUN, &[]);
    let summary = ok(&first);
    let id = session_of(&summary);
    // Stderr is not a terminal here: no bar, a plain line per turn instead.
    let stderr = String::from_utf8_lossy(&first.stderr);
    let turn_lines: Vec<&str> = stderr.lines().filter(|l| l.contains(": turn ")).collect();
    assert!(
        turn_lines
            .first()
            .is_some_and(|l| l.contains(": turn 1/") && l.contains(" nodes · ")),
        "{stderr}"
    );
    assert!(turn_lines.len() >= 2, "{stderr}");

    // Crash right after turn 1's extraction is committed, then run the same command again.
    let crashed = tmp.path().join("crashed.db");
    let out = simulate(
        &crashed,
        &ONE_RUN,
        &[("INTERVIEWER_CRASH_AT", "extraction:after")],
    );
    assert!(!out.status.success(), "the crash switch aborts the process");
    let resumed = ok(&simulate(&crashed, &ONE_RUN, &[]));
    assert_eq!(resumed, summary);
    let (w, r) = (contents(&whole, &id), contents(&crashed, &id));
    assert_eq!(w.utterances, r.utterances);
    assert_eq!(w.strategies, r.strategies);
    assert_eq!(w.nodes, r.nodes);
    assert_eq!(w.edges, r.edges);

    // Once finished, the same command runs nothing and prints the same summary.
    let log = tmp.path().join("requests.jsonl");
    let again = simulate(
        &crashed,
        &ONE_RUN,
        &[("INTERVIEWER_SCRIPT_LOG", log.to_str().unwrap())],
    );
    assert_eq!(ok(&again), summary);
    assert!(String::from_utf8_lossy(&again.stderr).contains("had already finished"));
    assert!(!log.exists(), "no model call was made");
}

/// Number of respondent rules of the fixture that fail the call (the engine-internals traps).
fn trap_rules() -> usize {
    let text = std::fs::read_to_string(script()).unwrap();
    let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let rules = doc["respondent"].as_array().unwrap();
    let traps = rules
        .iter()
        .take_while(|r| r.get("error").is_some())
        .count();
    assert!(traps > 10, "the fixture starts with its traps");
    assert!(rules[traps..].iter().all(|r| r.get("error").is_none()));
    traps
}

#[test]
fn the_scripted_respondent_never_matches_an_internals_trap() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("requests.jsonl");
    let summary = ok(&simulate(
        &tmp.path().join("s.db"),
        &["--persona", "hedging", "--turns", "6", "--seed", "3"],
        &[("INTERVIEWER_SCRIPT_LOG", log.to_str().unwrap())],
    ));
    let traps = trap_rules();
    let entries: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let respondent: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e["role"] == "respondent")
        .collect();
    let turns: u64 = summary
        .lines()
        .find_map(|l| l.strip_prefix("turns"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(respondent.len() as u64, turns);
    for e in respondent {
        let rule = usize::try_from(e["rule"].as_u64().unwrap()).unwrap();
        assert!(
            rule >= traps,
            "respondent request matched trap rule {rule}: {e}"
        );
    }
}

/// Records every request before the scripted provider answers it.
struct RecordingProvider {
    inner: ScriptedProvider,
    seen: Mutex<Vec<LlmRequest>>,
}

impl LlmProvider for RecordingProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        self.seen.lock().unwrap().push(request.clone());
        self.inner.complete(request)
    }
}

fn spec(persona: &str, methodology: &str, turns: u32, seed: u64) -> SimulationSpec {
    let dir = common::config();
    SimulationSpec {
        interview: InterviewSpec {
            methodology: dir
                .methodology(methodology, &interviewer::signals::Catalog)
                .unwrap(),
            concept: dir.concept("oat_milk").unwrap(),
            rubrics: dir.rubrics().unwrap(),
            max_turns: turns,
            understanding: interviewer::domain::Understanding::Llm,
        },
        persona: dir.persona(persona).unwrap(),
        seed,
    }
}

/// Whole words (letters, digits, `_`, `.`) of a text, lower-cased.
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn the_respondent_sees_the_conversation_and_nothing_of_the_engine() {
    for methodology in ["means_end_chain", "jobs_to_be_done"] {
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("s.db");
        let provider = Arc::new(RecordingProvider {
            inner: ScriptedProvider::load(&script()).unwrap(),
            seen: Mutex::new(Vec::new()),
        });
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());
        let services = Services {
            llm: Arc::new(LlmRouter::single(
                &(Arc::clone(&provider) as Arc<dyn LlmProvider>),
            )),
            embedder,
            settings: PipelineSettings::default(),
        };
        let spec = spec("verbose_tangential", methodology, 6, 11);
        let id = session_id(&spec, &services.settings);
        let report = run_one(&db, &spec, &services, &id, |_| {}).unwrap();
        assert!(report.summary.finished, "{:?}", report.summary);

        let store = Store::open(&db).unwrap();
        let node_ids: Vec<String> = store
            .nodes(&id)
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect();
        assert!(!node_ids.is_empty());
        let m = &spec.interview.methodology;
        let mut forbidden: BTreeSet<String> = m.strategies.iter().map(|s| s.name.clone()).collect();
        forbidden.extend(m.ontology.nodes.iter().map(|n| n.name.clone()));
        forbidden.extend(
            m.ontology
                .edges
                .iter()
                .filter(|e| e.name.contains('_'))
                .map(|e| e.name.clone()),
        );
        forbidden.extend(
            interviewer::signals::catalog::SIGNALS
                .iter()
                .map(|s| s.name.to_owned()),
        );
        forbidden.extend(
            [
                "strategy",
                "signal",
                "signals",
                "graph",
                "node",
                "nodes",
                "focus",
                "saturation",
            ]
            .map(str::to_owned),
        );

        let seen = provider.seen.lock().unwrap();
        let respondent: Vec<&LlmRequest> =
            seen.iter().filter(|r| r.role == Role::Respondent).collect();
        assert_eq!(respondent.len(), report.summary.turns as usize);
        let utterances = store.utterances(&id).unwrap();
        for request in &respondent {
            let text = format!("{}\n{}", request.system, request.user);
            let leaked: Vec<String> = words(&text).intersection(&forbidden).cloned().collect();
            assert!(leaked.is_empty(), "{methodology}: {leaked:?} in\n{text}");
            for id in &node_ids {
                assert!(!text.contains(id.as_str()), "node id {id} in\n{text}");
            }
            assert!(text.contains("Profile: Verbose storyteller"));
            // Everything said before this answer is in view, the question last.
            let before: Vec<_> = utterances
                .iter()
                .filter(|u| u.turn < request.turn)
                .collect();
            for u in &before {
                let first_words: String = u.text.split(' ').take(6).collect::<Vec<_>>().join(" ");
                assert!(
                    text.contains(&first_words),
                    "missing {first_words:?} in\n{text}"
                );
            }
            let question = before.last().unwrap();
            assert!(
                request.user.contains(&format!(
                    "Interviewer: {}\n\n## Your next answer",
                    question.text
                )),
                "{}",
                request.user
            );
        }
    }
}

fn persona(id: &str) -> Persona {
    common::config().persona(id).unwrap()
}

#[test]
fn seeds_decide_the_length_choices() {
    let p = persona("hedging");
    let lengths = |seed: u64| -> Vec<AnswerLength> {
        let r = PersonaRespondent::new(p.clone(), "oat milk", seed);
        (1..=12).map(|turn| r.plan(turn).length).collect()
    };
    assert_eq!(
        lengths(1),
        lengths(1),
        "a seed always makes the same choices"
    );
    assert_ne!(lengths(1), lengths(2), "another seed makes other choices");
    // Over many seeds every class of the persona's distribution comes up.
    let classes: BTreeSet<AnswerLength> = (0..40).flat_map(lengths).collect();
    assert_eq!(classes.len(), 4, "{classes:?}");
    // A persona that only ever gives one kind of answer leaves the seed nothing to vary.
    let mut fixed = p.clone();
    fixed.response_patterns.detailed = 0.0;
    fixed.response_patterns.medium = 1.0;
    fixed.response_patterns.brief = 0.0;
    fixed.response_patterns.acknowledgment = 0.0;
    for seed in 0..20 {
        let r = PersonaRespondent::new(fixed.clone(), "oat milk", seed);
        assert!((1..=12).all(|t| r.plan(t).length == AnswerLength::Medium));
    }
}

#[test]
fn fatigue_shortens_targets_over_turns() {
    let p = persona("fatiguing");
    let start = p.fatigue.unwrap().start_turn;
    let expected: Vec<f64> = (1..=20).map(|t| expected_target_words(&p, t)).collect();
    for t in 1..start {
        assert_eq!(
            expected[t as usize - 1],
            expected[0],
            "rested before turn {start}"
        );
    }
    for t in start..20 {
        let (now, next) = (expected[t as usize - 1], expected[t as usize]);
        if fatigue_level(&p, t) < 1.0 {
            assert!(next < now, "turn {}: {next} vs {now}", t + 1);
        } else {
            assert_eq!(next, now, "fully tired from turn {t} on");
        }
    }
    assert!(expected[19] < expected[0] / 3.0, "{expected:?}");

    // The seeded plans follow: over many seeds, late answers are much shorter than early ones.
    let mean = |turns: std::ops::RangeInclusive<u32>| -> f64 {
        let mut total = 0.0;
        let mut n = 0.0;
        for seed in 0..200 {
            let r = PersonaRespondent::new(p.clone(), "oat milk", seed);
            for t in turns.clone() {
                total += f64::from(r.plan(t).target_words);
                n += 1.0;
            }
        }
        total / n
    };
    let (early, late) = (mean(1..=5), mean(14..=18));
    assert!(late < early / 2.0, "early {early}, late {late}");

    // A persona without fatigue keeps its lengths.
    let steady = persona("cooperative");
    assert_eq!(
        expected_target_words(&steady, 1),
        expected_target_words(&steady, 20)
    );
}

const MATRIX: [&str; 10] = [
    "--matrix",
    "personas=cooperative,brief",
    "methodologies=means_end_chain,jobs_to_be_done",
    "--turns",
    "5",
    "--seed",
    "3",
    "--jobs",
    "2",
    "--out",
];

#[test]
fn a_matrix_runs_every_combination_and_skips_finished_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("m.db");
    let out_dir = tmp.path().join("out");
    let log = tmp.path().join("requests.jsonl");
    let mut args = MATRIX.to_vec();
    args.push(out_dir.to_str().unwrap());
    let envs = [("INTERVIEWER_SCRIPT_LOG", log.to_str().unwrap())];
    let table = ok(&simulate(&db, &args, &envs));

    let store = Store::open(&db).unwrap();
    let sessions = store.list_sessions().unwrap();
    assert_eq!(sessions.len(), 4);
    let mut rows = Vec::new();
    for persona in ["cooperative", "brief"] {
        for methodology in ["means_end_chain", "jobs_to_be_done"] {
            let row = table
                .lines()
                .find(|l| l.starts_with(persona) && l.contains(methodology))
                .unwrap_or_else(|| panic!("no row for {persona} × {methodology}:\n{table}"));
            let id = row.split_whitespace().last().unwrap().to_owned();
            let session = store.get_session(&id).unwrap().unwrap();
            assert_eq!(session.methodology, methodology);
            assert_eq!(session.concept, "oat_milk");
            assert_eq!(session.status, SessionStatus::Finished, "{row}");
            assert!(
                out_dir
                    .join(format!("{persona}__{methodology}"))
                    .join("transcript.md")
                    .is_file()
            );
            rows.push(row.to_owned());
        }
    }
    assert!(table.starts_with("persona"), "{table}");
    // Personas are the outer loop, in the order given.
    let first_cooperative = table.find("cooperative  means").unwrap();
    assert!(first_cooperative < table.find("brief        means").unwrap());

    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("matrix-manifest.json")).unwrap(),
    )
    .unwrap();
    let runs = manifest["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r["status"] == "finished"), "{manifest}");

    // Running it again skips every finished run: no model call, the same table.
    let calls = std::fs::read_to_string(&log).unwrap().lines().count();
    let again = simulate(&db, &args, &envs);
    assert_eq!(ok(&again), table);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().lines().count(),
        calls,
        "a re-run makes no model call"
    );
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(
        stderr.matches("finished earlier, skipped").count(),
        4,
        "{stderr}"
    );
    assert_eq!(Store::open(&db).unwrap().list_sessions().unwrap().len(), 4);

    the_study_reads_the_table_back(&db, &table, &rows);
}

/// `analyze --personas` reads the matrix's table back from the stored sessions, whatever order
/// they ran in: the same rows (`rows`: the matrix's lines for its four sessions), as CSV too.
fn the_study_reads_the_table_back(db: &Path, table: &str, rows: &[String]) {
    // The study reads the same table back from the stored sessions, whatever order they ran in.
    let analysed = ok(&common::run_binary_with(
        &[db],
        &["analyze", "--all", "--personas"],
        &[],
    ));
    for row in rows {
        assert!(
            analysed.lines().any(|l| l == row),
            "{row}\nnot in\n{analysed}"
        );
    }
    let mut sorted_matrix: Vec<&str> = table.lines().collect();
    let mut sorted_analysed: Vec<&str> = analysed.lines().collect();
    sorted_matrix.sort_unstable();
    sorted_analysed.sort_unstable();
    assert_eq!(sorted_analysed, sorted_matrix);
    let csv = ok(&common::run_binary_with(
        &[db],
        &[
            "analyze",
            "--concept",
            "oat_milk",
            "--personas",
            "--format",
            "csv",
        ],
        &[],
    ));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[0].starts_with("persona,methodology,concept,session,seed"));
    assert!(
        lines[1].starts_with("brief,jobs_to_be_done,oat_milk,"),
        "{csv}"
    );
    assert!(
        lines[4].starts_with("cooperative,means_end_chain,oat_milk,"),
        "{csv}"
    );
    let graph =
        common::run_binary_with(&[db], &["analyze", "--all", "--personas", "-f", "dot"], &[]);
    assert_eq!(graph.status.code(), Some(2), "{graph:?}");
}

#[test]
fn a_matrix_resumes_an_interrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("m.db");
    let args = [
        "--matrix",
        "personas=brief",
        "methodologies=means_end_chain,jobs_to_be_done",
        "--turns",
        "4",
        "--jobs",
        "1",
    ];
    // The first cell crashes inside its first turn; the manifest says it was running.
    let out = simulate(
        &db,
        &args,
        &[("INTERVIEWER_CRASH_AT", "graph_update:before")],
    );
    assert!(!out.status.success());
    let manifests: Vec<PathBuf> = std::fs::read_dir(tmp.path().join("simulations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(manifests.len(), 1, "the manifest lives beside the database");
    let text = std::fs::read_to_string(&manifests[0]).unwrap();
    assert!(text.contains("\"running\""), "{text}");

    let table = ok(&simulate(&db, &args, &[]));
    assert_eq!(table.lines().filter(|l| l.starts_with("brief")).count(), 2);
    let text = std::fs::read_to_string(&manifests[0]).unwrap();
    assert_eq!(text.matches("\"finished\"").count(), 2, "{text}");
    let store = Store::open(&db).unwrap();
    assert!(
        store
            .list_sessions()
            .unwrap()
            .iter()
            .all(|s| s.status == SessionStatus::Finished)
    );
}

#[test]
fn bad_arguments_fail_with_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("x.db");
    for (args, expected) in [
        (
            vec!["--watch", "--matrix", "personas=brief"],
            "cannot be used with",
        ),
        (
            vec!["--matrix", "brief,hedging"],
            "--matrix: 'brief,hedging' is not KEY=A,B",
        ),
        (
            vec![
                "--matrix",
                "personas=brief",
                "methodologies=x",
                "-m",
                "means_end_chain",
            ],
            "not both",
        ),
        (vec!["--persona", "nobody"], "no persona named 'nobody'"),
    ] {
        let out = simulate(&db, &args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn a_persona_from_a_file_deflects_as_configured() {
    let tmp = tempfile::tempdir().unwrap();
    let persona = tmp.path().join("evasive.yaml");
    std::fs::write(
        &persona,
        "id: evasive\nname: \"Evasive\"\ntraits: [\"guarded\"]\nspeech_pattern: Short and vague.\n\
         response_patterns:\n  medium: 1.0\ndeflection_patterns: [\"Next question, please.\"]\n\
         deflection_rate: 1.0\n",
    )
    .unwrap();
    let db = tmp.path().join("e.db");
    let summary = ok(&simulate(
        &db,
        &["--persona", persona.to_str().unwrap(), "--turns", "3"],
        &[],
    ));
    assert!(summary.contains("persona           evasive"), "{summary}");
    let store = Store::open(&db).unwrap();
    let answers: Vec<String> = store
        .utterances(&session_of(&summary))
        .unwrap()
        .into_iter()
        .filter(|u| u.speaker == interviewer::domain::Speaker::Respondent)
        .map(|u| u.text)
        .collect();
    assert!(!answers.is_empty());
    for answer in &answers {
        // The fixture's deflection, at most cut to the planned length.
        assert!(answer.starts_with("Hard to say, really."), "{answer}");
    }
    assert!(
        summary.contains("nodes             0"),
        "deflections say nothing: {summary}"
    );
}
