//! Exports of a real scripted 10-turn interview: the JSON's turn results equal the live ones,
//! the CSV equals the JSON's score decomposition number for number (and its original layout
//! equals ours row for row), the `GraphML` is well-formed
//! XML with its declared keys, the DOT is accepted by Graphviz when it is installed, and the
//! reproducible formats carry no wall-clock data.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::too_many_lines,
    clippy::float_cmp
)]

use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use interviewer::domain::SignalValue;
use interviewer::export::{self, CsvLayout, ExportError, ExportFormat, ExportOptions};
use interviewer::pipeline::{EventSink, Interview, Pending, TurnResult};
use interviewer::store::Store;
use serde_json::Value;

const SESSION: &str = "export-e2e";

struct Fixture {
    _dir: tempfile::TempDir,
    db: PathBuf,
    live: Vec<TurnResult>,
}

/// One scripted interview shared by every test of this file.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("i.db");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let live = runtime.block_on(async {
            let mut interview = Interview::create(
                Store::open(&db).unwrap(),
                common::spec(11),
                common::services(),
                Some(SESSION.to_owned()),
            )
            .unwrap();
            let events = EventSink::none();
            interview.opening(&events).await.unwrap();
            let mut results = Vec::new();
            for answer in common::answers() {
                match interview.pending().unwrap() {
                    Pending::Answer { .. } => {
                        results.push(interview.answer(&answer, &events).await.unwrap());
                    }
                    Pending::Finished { .. } => break,
                    other => panic!("unexpected pending state {other:?}"),
                }
            }
            results
        });
        assert_eq!(live.len(), 10);
        Fixture {
            _dir: dir,
            db,
            live,
        }
    })
}

fn export_text(format: ExportFormat, canonical: bool) -> String {
    let store = Store::open(&fixture().db).unwrap();
    let mut out = Vec::new();
    let options = ExportOptions::default().canonical(canonical);
    export::write(&store, SESSION, format, &options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn exported_json() -> Value {
    serde_json::from_str::<Value>(&export_text(ExportFormat::Json, false)).unwrap()
}

fn without_latency(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("latency_ms");
    v
}

#[test]
fn json_turn_results_equal_the_live_ones_bit_for_bit() {
    let doc = exported_json();
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["config"]["concept_id"], "oat_milk");
    assert_eq!(doc["config"]["methodology"], "means_end_chain");
    let turns = doc["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 10);
    for (exported, live) in turns.iter().zip(&fixture().live) {
        let want = without_latency(serde_json::to_value(live).unwrap());
        let got = without_latency(exported["turn_result"].clone());
        assert!(
            got == want,
            "turn {} differs from the pipeline's result",
            live.turn_number
        );
        assert!(exported["turn_result"]["latency_ms"].is_u64());
        assert!(exported["phase"].is_string());
        assert!(
            exported["llm_scores"].is_object(),
            "{}",
            exported["llm_scores"]
        );
    }
    // Focus tracing, utterances, both graphs and usage are all there.
    assert_eq!(doc["focus_tracing"].as_array().unwrap().len(), 10);
    assert_eq!(doc["focus_tracing"][0]["node_id"], "");
    assert_eq!(doc["utterances"].as_array().unwrap().len(), 21);
    assert_eq!(doc["graph"]["nodes"].as_array().unwrap().len(), 13);
    assert!(doc["graph"]["nodes"][0].get("embedding").is_none());
    assert!(
        !doc["canonical_graph"]["slots"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        doc["canonical_graph"]["slots"][0]
            .get("embedding")
            .is_none()
    );
    let usage = &doc["llm_usage"];
    let calls = usage["calls"].as_array().unwrap().len() as u64;
    assert_eq!(usage["totals"]["calls"], calls);
    let by_role: u64 = usage["by_role"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(by_role, calls);
    // The scripted provider has no prices: unknown, not zero.
    assert!(usage["totals"]["cost_usd"].is_null());
    assert_eq!(usage["totals"]["unpriced_calls"], calls);
}

/// A CSV float, parsed exactly.
fn num(s: &str) -> f64 {
    s.parse::<f64>()
        .unwrap_or_else(|e| panic!("'{s}' is not a float: {e}"))
}

fn json_num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn every_json_candidate_is_in_the_csv_with_equal_numbers() {
    let doc = exported_json();
    let csv_text = export_text(ExportFormat::Csv, false);
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        header,
        [
            "turn",
            "stage",
            "strategy",
            "node_id",
            "node_label",
            "signal",
            "value",
            "weight",
            "contribution",
            "base",
            "multiplier",
            "bonus",
            "final",
            "rank",
            "selected"
        ]
    );
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // Rows grouped by candidate: (turn, stage, strategy, node_id).
    let mut rows: BTreeMap<(u64, String, String, String), Vec<csv::StringRecord>> = BTreeMap::new();
    let mut total_rows = 0;
    for record in reader.records() {
        let record = record.unwrap();
        let key = (
            record[col("turn")].parse().unwrap(),
            record[col("stage")].to_owned(),
            record[col("strategy")].to_owned(),
            record[col("node_id")].to_owned(),
        );
        rows.entry(key).or_default().push(record);
        total_rows += 1;
    }

    let mut expected_rows = 0;
    let mut candidates = 0;
    let mut labelled_nodes = 0;
    for turn in doc["turns"].as_array().unwrap() {
        let t = turn["turn"].as_u64().unwrap();
        for c in turn["turn_result"]["score_decomposition"]
            .as_array()
            .unwrap()
        {
            candidates += 1;
            let node_id = c["node_id"].as_str().unwrap();
            let stage = if node_id.is_empty() { "1" } else { "2" };
            let key = (
                t,
                stage.to_owned(),
                c["strategy"].as_str().unwrap().to_owned(),
                node_id.to_owned(),
            );
            let group = rows
                .get(&key)
                .unwrap_or_else(|| panic!("candidate {key:?} is missing from the CSV"));
            let contributions = c["signal_contributions"].as_array().unwrap();
            expected_rows += contributions.len().max(1);
            assert_eq!(group.len(), contributions.len().max(1), "{key:?}");
            let base = json_num(&c["base_score"]);
            for row in group {
                assert_eq!(num(&row[col("base")]).to_bits(), base.to_bits(), "{key:?}");
                for (column, field) in [
                    ("multiplier", "phase_multiplier"),
                    ("bonus", "phase_bonus"),
                    ("final", "final_score"),
                ] {
                    assert_eq!(
                        num(&row[col(column)]).to_bits(),
                        json_num(&c[field]).to_bits(),
                        "{key:?} {column}"
                    );
                }
                assert_eq!(row[col("rank")], c["rank"].to_string());
                assert_eq!(row[col("selected")], c["selected"].to_string());
                if !node_id.is_empty() && !row[col("node_label")].is_empty() {
                    labelled_nodes += 1;
                }
            }
            if contributions.is_empty() {
                assert_eq!(&group[0][col("signal")], "");
                assert_eq!(&group[0][col("contribution")], "");
                continue;
            }
            let mut sum = 0.0;
            for (row, s) in group.iter().zip(contributions) {
                assert_eq!(&row[col("signal")], s["name"].as_str().unwrap());
                let value = match &s["value"] {
                    Value::Bool(b) => b.to_string(),
                    Value::String(c) => c.clone(),
                    n => {
                        assert_eq!(
                            num(&row[col("value")]).to_bits(),
                            json_num(n).to_bits(),
                            "{key:?} value"
                        );
                        row[col("value")].to_owned()
                    }
                };
                assert_eq!(row[col("value")], value);
                assert_eq!(
                    num(&row[col("weight")]).to_bits(),
                    json_num(&s["weight"]).to_bits()
                );
                let contribution = num(&row[col("contribution")]);
                assert_eq!(
                    contribution.to_bits(),
                    json_num(&s["contribution"]).to_bits()
                );
                sum += contribution;
            }
            assert_eq!(
                sum.to_bits(),
                base.to_bits(),
                "{key:?}: contributions sum to the base score"
            );
        }
    }
    assert_eq!(total_rows, expected_rows, "no row without a candidate");
    assert!(
        candidates > 10 * 7,
        "stage 1 and 2 candidates of every turn ({candidates})"
    );
    assert!(labelled_nodes > 0, "node candidates carry their labels");
}

/// The header and the records of a CSV text.
fn read_csv(text: &str) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let records = reader.records().map(Result::unwrap).collect();
    (header, records)
}

fn csv_text(data: &export::SessionData, layout: CsvLayout) -> String {
    let mut out = Vec::new();
    let options = ExportOptions::default().csv_layout(layout);
    export::render(data, ExportFormat::Csv, &options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

const ORIGINAL_COLUMNS: [&str; 14] = [
    "turn_number",
    "phase",
    "strategy",
    "node_id",
    "signal_name",
    "signal_value",
    "signal_weight",
    "weighted_contribution",
    "phase_multiplier",
    "phase_bonus",
    "base_score",
    "final_score",
    "rank",
    "selected",
];

/// Checks that `original` holds `ours`'s rows in the original columns: the same number of
/// rows, and row by row the same turn, strategy, node, signal, value, weight, contribution,
/// base, multiplier, bonus, final, rank and selected, printed alike (so the numbers are equal
/// bit for bit). A row of ours with an empty signal is `(no signals fired)` with contribution
/// 0 and empty value and weight. Returns the (turn, phase) of every original row.
fn check_original_against_ours(ours: &str, original: &str) -> Vec<(u32, String)> {
    let (our_header, our_rows) = read_csv(ours);
    let (header, rows) = read_csv(original);
    assert_eq!(header, ORIGINAL_COLUMNS, "exactly the original's columns");
    assert_eq!(rows.len(), our_rows.len(), "one row per row of ours");
    let ours_at = |row: &csv::StringRecord, name: &str| {
        row[our_header.iter().position(|h| h == name).unwrap()].to_owned()
    };
    let at = |row: &csv::StringRecord, name: &str| {
        row[ORIGINAL_COLUMNS.iter().position(|h| *h == name).unwrap()].to_owned()
    };
    let mut phases = Vec::new();
    for (i, (mine, theirs)) in our_rows.iter().zip(&rows).enumerate() {
        assert_eq!(theirs.len(), 14, "row {i}");
        for (column, our_column) in [
            ("turn_number", "turn"),
            ("strategy", "strategy"),
            ("node_id", "node_id"),
            ("base_score", "base"),
            ("phase_multiplier", "multiplier"),
            ("phase_bonus", "bonus"),
            ("final_score", "final"),
            ("rank", "rank"),
            ("selected", "selected"),
        ] {
            assert_eq!(
                at(theirs, column),
                ours_at(mine, our_column),
                "row {i} {column}"
            );
        }
        // Stage-1 rows have no node, as in ours.
        assert_eq!(
            at(theirs, "node_id").is_empty(),
            ours_at(mine, "stage") == "1",
            "row {i}"
        );
        if ours_at(mine, "signal").is_empty() {
            assert_eq!(at(theirs, "signal_name"), "(no signals fired)", "row {i}");
            assert_eq!(at(theirs, "weighted_contribution"), "0", "row {i}");
            assert_eq!(at(theirs, "signal_value"), "", "row {i}");
            assert_eq!(at(theirs, "signal_weight"), "", "row {i}");
        } else {
            for (column, our_column) in [
                ("signal_name", "signal"),
                ("signal_value", "value"),
                ("signal_weight", "weight"),
                ("weighted_contribution", "contribution"),
            ] {
                assert_eq!(
                    at(theirs, column),
                    ours_at(mine, our_column),
                    "row {i} {column}"
                );
            }
        }
        phases.push((
            at(theirs, "turn_number").parse().unwrap(),
            at(theirs, "phase"),
        ));
    }
    phases
}

/// The phase a live turn's signals hold, as the original layout prints it.
fn live_phase(result: &TurnResult) -> String {
    match result.signals.get("meta.interview.phase") {
        Some(SignalValue::Category(c)) => c.clone(),
        None => "unknown".to_owned(),
        other => panic!("meta.interview.phase is {other:?}"),
    }
}

#[test]
fn the_original_csv_layout_holds_our_rows_in_its_columns() {
    let store = Store::open(&fixture().db).unwrap();
    let data = export::SessionData::load(&store, SESSION).unwrap();
    let ours = csv_text(&data, CsvLayout::Ours);
    assert_eq!(
        ours,
        export_text(ExportFormat::Csv, false),
        "ours is the default"
    );
    let original = csv_text(&data, CsvLayout::Original);
    let phases = check_original_against_ours(&ours, &original);
    assert!(phases.len() > 10 * 7, "{} rows", phases.len());
    // The phase column is the turn's `meta.interview.phase` signal.
    let by_turn: HashMap<u32, String> = fixture()
        .live
        .iter()
        .map(|r| (r.turn_number, live_phase(r)))
        .collect();
    for (turn, phase) in &phases {
        assert_eq!(Some(phase), by_turn.get(turn), "turn {turn}");
    }
    let seen: HashSet<&str> = phases.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(
        seen,
        HashSet::from(["early", "mid", "late"]),
        "a 10-turn interview passes through every phase"
    );
}

/// The two rows the scripted interview may not produce: a candidate without contributions,
/// and a turn whose signals lack the phase.
#[test]
fn the_original_csv_layout_marks_silent_candidates_and_unknown_phases() {
    let store = Store::open(&fixture().db).unwrap();
    let mut data = export::SessionData::load(&store, SESSION).unwrap();
    let first = &mut data.turns[0].result;
    first.signals.remove("meta.interview.phase");
    first.score_decomposition[0].signal_contributions.clear();
    let node = first
        .score_decomposition
        .iter_mut()
        .find(|c| !c.node_id.is_empty());
    let node_id = node.map(|c| {
        c.signal_contributions.clear();
        c.node_id.clone()
    });
    let ours = csv_text(&data, CsvLayout::Ours);
    let original = csv_text(&data, CsvLayout::Original);
    let phases = check_original_against_ours(&ours, &original);
    assert!(
        phases
            .iter()
            .all(|(turn, phase)| (*turn == 1) == (phase == "unknown"))
    );
    let (_, rows) = read_csv(&original);
    let silent: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| &r[4] == "(no signals fired)")
        .collect();
    let strategy = &data.turns[0].result.score_decomposition[0].strategy;
    assert!(
        silent
            .iter()
            .any(|r| &r[0] == "1" && &r[2] == strategy && r[3].is_empty() && &r[7] == "0"),
        "{silent:?}"
    );
    if let Some(node_id) = node_id {
        assert!(silent.iter().any(|r| r[3] == node_id), "{silent:?}");
    }
}

#[test]
fn a_csv_layout_needs_the_csv_format() {
    let store = Store::open(&fixture().db).unwrap();
    let mut out = Vec::new();
    let err = export::write(
        &store,
        SESSION,
        ExportFormat::Json,
        &ExportOptions::default().csv_layout(CsvLayout::Original),
        &mut out,
    )
    .unwrap_err();
    assert!(matches!(err, ExportError::CsvLayoutNotCsv("json")), "{err}");
    assert!(err.to_string().contains("--csv-layout"), "{err}");
    assert!(out.is_empty());

    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_interviewer"))
            .arg("--db")
            .arg(&fixture().db)
            .arg("export")
            .arg(SESSION)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    // Naming any layout, the default included, with another format is a usage error.
    for layout in ["original", "ours"] {
        let out = cli(&["--csv-layout", layout, "--format", "json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{layout}: {stderr}");
        assert!(
            stderr.contains("--csv-layout applies to the csv format, not json"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    let out = cli(&["--csv-layout", "original", "-f", "csv"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(read_csv(&text).0, ORIGINAL_COLUMNS);
    let out = cli(&["-f", "csv"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        export_text(ExportFormat::Csv, false),
        "ours without --csv-layout"
    );
    let out = cli(&["--csv-layout", "theirs", "-f", "csv"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A parsed XML event of the small checker below.
#[derive(Debug)]
enum Xml {
    Start(String, HashMap<String, String>),
    End,
}

/// A deliberately strict XML 1.0 well-formedness check for what the exporter writes: one
/// root, balanced tags, quoted unique attributes, only the five named or numeric character
/// references, no markup characters in text. Returns start and end tags in order.
fn parse_xml(text: &str) -> Result<Vec<Xml>, String> {
    let mut events = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = text
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .ok_or("missing XML declaration")?;
    let check_text = |t: &str| -> Result<(), String> {
        if t.contains('>') && t.contains("]]>") {
            return Err("']]>' in text".into());
        }
        let mut parts = t.split('&');
        parts.next();
        for part in parts {
            let (entity, _) = part.split_once(';').ok_or(format!("bare '&' in {t:?}"))?;
            let ok = matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos")
                || entity
                    .strip_prefix('#')
                    .is_some_and(|n| n.parse::<u32>().is_ok());
            if !ok {
                return Err(format!("unknown reference &{entity};"));
            }
        }
        if t.chars()
            .any(|c| (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}')
        {
            return Err(format!("forbidden character in {t:?}"));
        }
        Ok(())
    };
    while !rest.is_empty() {
        let lt = rest.find('<').unwrap_or(rest.len());
        let (content, tail) = rest.split_at(lt);
        if stack.is_empty() && !content.trim().is_empty() {
            return Err(format!("text outside the root: {content:?}"));
        }
        check_text(content)?;
        if tail.is_empty() {
            break;
        }
        let gt = tail.find('>').ok_or("unterminated tag")?;
        let tag = &tail[1..gt];
        rest = &tail[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack
                .pop()
                .ok_or(format!("</{name}> without a start tag"))?;
            if open != name {
                return Err(format!("</{name}> closes <{open}>"));
            }
            events.push(Xml::End);
            continue;
        }
        let (body, empty) = match tag.strip_suffix('/') {
            Some(body) => (body, true),
            None => (tag, false),
        };
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = &body[..name_end];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
        {
            return Err(format!("bad element name {name:?}"));
        }
        let mut attrs = HashMap::new();
        let mut a = body[name_end..].trim_start();
        while !a.is_empty() {
            let eq = a
                .find('=')
                .ok_or(format!("attribute without value in <{name}>"))?;
            let key = a[..eq].trim();
            let quote = a[eq + 1..].chars().next().ok_or("missing quote")?;
            if quote != '"' && quote != '\'' {
                return Err(format!("unquoted attribute {key} in <{name}>"));
            }
            let value_start = eq + 2;
            let close = a[value_start..]
                .find(quote)
                .ok_or(format!("unterminated attribute {key}"))?;
            let value = &a[value_start..value_start + close];
            if value.contains('<') {
                return Err(format!("'<' in attribute {key}"));
            }
            check_text(value)?;
            if attrs.insert(key.to_owned(), value.to_owned()).is_some() {
                return Err(format!("duplicate attribute {key} in <{name}>"));
            }
            a = a[value_start + close + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        events.push(Xml::Start(name.to_owned(), attrs));
        if empty {
            events.push(Xml::End);
        } else {
            stack.push(name.to_owned());
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed elements {stack:?}"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(events)
}

/// Checks a `GraphML` export: declared keys with the documented names and types, every `data`
/// using a declared key of its scope, every edge between declared nodes, and a type, level and
/// label on every node.
fn check_graphml(text: &str, node_keys: &[(&str, &str)], edge_keys: &[(&str, &str)]) {
    let events = parse_xml(text).unwrap_or_else(|e| panic!("not well-formed: {e}"));
    let mut keys: HashMap<String, (String, String, String)> = HashMap::new();
    let mut nodes = HashSet::new();
    let mut edges = Vec::new();
    let mut scope = Vec::new();
    let mut data_per_key: HashMap<String, usize> = HashMap::new();
    for event in &events {
        match event {
            Xml::Start(name, attrs) => {
                match name.as_str() {
                    "graphml" => {
                        assert_eq!(attrs["xmlns"], "http://graphml.graphdrawing.org/xmlns");
                    }
                    "key" => {
                        keys.insert(
                            attrs["id"].clone(),
                            (
                                attrs["for"].clone(),
                                attrs["attr.name"].clone(),
                                attrs["attr.type"].clone(),
                            ),
                        );
                    }
                    "graph" => assert_eq!(attrs["edgedefault"], "directed"),
                    "node" => {
                        assert!(nodes.insert(attrs["id"].clone()), "duplicate node id");
                    }
                    "edge" => edges.push((attrs["source"].clone(), attrs["target"].clone())),
                    "data" => {
                        let key = &attrs["key"];
                        let (for_scope, _, _) = keys
                            .get(key)
                            .unwrap_or_else(|| panic!("undeclared key {key}"));
                        assert_eq!(Some(for_scope), scope.last(), "key {key} used out of scope");
                        *data_per_key.entry(key.clone()).or_default() += 1;
                    }
                    "desc" => {}
                    other => panic!("unexpected element <{other}>"),
                }
                scope.push(name.clone());
            }
            Xml::End => {
                scope.pop();
            }
        }
    }
    for (scope, wanted) in [("node", node_keys), ("edge", edge_keys)] {
        for (name, kind) in wanted {
            let found = keys
                .values()
                .find(|(f, n, _)| f == scope && n == name)
                .unwrap_or_else(|| panic!("no {scope} key {name}"));
            assert_eq!(found.2, *kind, "{scope} key {name}");
        }
    }
    assert!(!nodes.is_empty());
    for (s, t) in &edges {
        assert!(nodes.contains(s) && nodes.contains(t), "edge {s} -> {t}");
    }
    // Every node carries its type and its level (means-end chain gives every type one).
    for key in ["n_node_type", "n_level", "n_label"] {
        assert_eq!(data_per_key.get(key), Some(&nodes.len()), "{key}");
    }
}

#[test]
fn graphml_is_well_formed_with_the_documented_keys() {
    check_graphml(
        &export_text(ExportFormat::Graphml, false),
        &[
            ("label", "string"),
            ("node_type", "string"),
            ("level", "int"),
            ("confidence", "double"),
            ("stance", "int"),
            ("turn", "int"),
            ("source_utterance_ids", "string"),
            ("source_quote", "string"),
            ("canonical_slot_id", "string"),
            ("superseded_by", "string"),
            ("superseded", "boolean"),
        ],
        &[
            ("edge_type", "string"),
            ("confidence", "double"),
            ("turn", "int"),
            ("source_utterance_ids", "string"),
        ],
    );
    check_graphml(
        &export_text(ExportFormat::Graphml, true),
        &[
            ("label", "string"),
            ("node_type", "string"),
            ("level", "int"),
            ("description", "string"),
            ("status", "string"),
            ("support_count", "int"),
            ("first_seen_turn", "int"),
            ("promoted_turn", "int"),
            ("surface_node_ids", "string"),
        ],
        &[
            ("edge_type", "string"),
            ("support_count", "int"),
            ("surface_edge_ids", "string"),
        ],
    );
}

#[test]
fn the_xml_checker_rejects_what_it_should() {
    let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    for bad in [
        "<a><b></a></b>",
        "<a x=1/>",
        "<a>&nbsp;</a>",
        "<a>x & y</a>",
        "<a/><b/>",
        "<a x=\"1\" x=\"2\"/>",
        "<a>\u{1}</a>",
        "<a>",
    ] {
        assert!(parse_xml(&format!("{head}{bad}")).is_err(), "{bad}");
    }
    assert!(parse_xml(&format!("{head}<a x='&lt;'>&#10;<b/></a>\n")).is_ok());
}

fn which_dot() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("dot"))
            .find(|p| p.is_file())
    })
}

#[test]
fn dot_is_accepted_by_graphviz_when_installed() {
    let tmp = tempfile::tempdir().unwrap();
    for canonical in [false, true] {
        let text = export_text(ExportFormat::Dot, canonical);
        // Structure that holds with or without Graphviz: one digraph, quoted ids, every
        // statement terminated.
        assert!(text.starts_with("digraph \""), "{text}");
        assert!(text.ends_with("}\n"));
        for line in text.lines().skip(1).filter(|l| *l != "}") {
            assert!(line.starts_with("  ") && line.ends_with("];"), "{line}");
        }
        let path = tmp.path().join(format!("g{canonical}.dot"));
        std::fs::write(&path, &text).unwrap();
        let Some(dot) = which_dot() else {
            eprintln!("note: Graphviz `dot` is not installed; skipping the render check");
            continue;
        };
        let out = std::process::Command::new(dot)
            .arg("-Tsvg")
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "dot rejected the export: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn mermaid_ids_are_sanitised_and_every_edge_joins_declared_nodes() {
    let text = export_text(ExportFormat::Mermaid, false);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("flowchart BT"));
    let mut declared = HashSet::new();
    let mut edges = 0;
    for line in lines {
        let line = line.trim_start();
        if line.starts_with("%%") || line.starts_with("classDef ") || line.starts_with("class ") {
            continue;
        }
        if let Some((id, rest)) = line.split_once("[\"") {
            assert!(id.starts_with('n') && id[1..].chars().all(|c| c.is_ascii_digit()));
            assert!(rest.ends_with("\"]") && !rest[..rest.len() - 2].contains('"'));
            declared.insert(id.to_owned());
            continue;
        }
        let (from, rest) = line.split_once(" -->|").unwrap_or_else(|| panic!("{line}"));
        let (label, to) = rest.split_once("| ").unwrap();
        assert!(
            label
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        );
        assert!(declared.contains(from) && declared.contains(to), "{line}");
        edges += 1;
    }
    assert_eq!(declared.len(), 13);
    assert_eq!(edges, 8);
}

#[test]
fn the_transcript_shows_every_turn_with_strategy_and_focus() {
    let md = export_text(ExportFormat::Md, false);
    assert!(md.starts_with("# Interview: "));
    assert!(md.contains("## Opening question"));
    for result in &fixture().live {
        let turn = result.turn_number;
        let section = md
            .split(&format!("## Turn {turn}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("turn {turn} missing"));
        let section = section.split("\n## ").next().unwrap();
        let strategy = &result.strategy_selected;
        assert!(
            section.contains(&format!("*Strategy:* `{strategy}`")),
            "{section}"
        );
        let focus = result.focus.as_ref().map_or("none", |f| f.label.as_str());
        assert!(section.contains(&format!("*Focus:* {focus}")), "{section}");
    }
    assert!(md.contains("*The interview ends: Closing strategy selected.*"));
}

/// An RFC 3339 date-time anywhere in the text (what wall-clock fields look like).
fn has_timestamp(text: &str) -> bool {
    text.as_bytes().windows(11).any(|w| {
        w[..4].iter().all(u8::is_ascii_digit)
            && w[4] == b'-'
            && w[5..7].iter().all(u8::is_ascii_digit)
            && w[7] == b'-'
            && w[8..10].iter().all(u8::is_ascii_digit)
            && w[10] == b'T'
    })
}

#[test]
fn reproducible_formats_carry_no_wall_clock_and_write_all_writes_every_file() {
    assert!(has_timestamp("at 2025-02-27T14:32:01Z"));
    for format in [
        ExportFormat::Csv,
        ExportFormat::Graphml,
        ExportFormat::Dot,
        ExportFormat::Mermaid,
        ExportFormat::Md,
    ] {
        for canonical in [false, true] {
            if canonical && !format.is_graph() {
                continue;
            }
            let text = export_text(format, canonical);
            assert!(!has_timestamp(&text), "{format:?} holds a timestamp");
        }
    }
    let store = Store::open(&fixture().db).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let files = export::write_all(&store, SESSION, &out).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "session.json",
            "scoring.csv",
            "transcript.md",
            "surface.graphml",
            "surface.dot",
            "surface.mmd",
            "canonical.graphml",
            "canonical.dot",
            "canonical.mmd"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("scoring.csv")).unwrap(),
        export_text(ExportFormat::Csv, false)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("canonical.dot")).unwrap(),
        export_text(ExportFormat::Dot, true)
    );
    // Nothing but the nine files (no temporary files left behind).
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 9);
    // Writing again replaces the files in place.
    assert_eq!(export::write_all(&store, SESSION, &out).unwrap(), files);
}

#[test]
fn unknown_sessions_and_misplaced_options_are_errors() {
    let store = Store::open(&fixture().db).unwrap();
    let mut out = Vec::new();
    let err = export::write(
        &store,
        "nope",
        ExportFormat::Json,
        &ExportOptions::default(),
        &mut out,
    )
    .unwrap_err();
    assert!(matches!(err, ExportError::UnknownSession(ref id) if id == "nope"));
    let err = export::write(
        &store,
        SESSION,
        ExportFormat::Csv,
        &ExportOptions::default().canonical(true),
        &mut out,
    )
    .unwrap_err();
    assert!(err.to_string().contains("--canonical"), "{err}");
    assert!(out.is_empty());
    let err = export::write_file(
        &store,
        SESSION,
        ExportFormat::Csv,
        &ExportOptions::default(),
        Path::new("/nonexistent-dir/x.csv"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent-dir"), "{err}");
}

#[tokio::test]
async fn a_researcher_override_is_reported_beside_the_engine_choice() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let mut interview = Interview::create(
        Store::open(&db).unwrap(),
        common::spec(11),
        common::services(),
        Some("override".to_owned()),
    )
    .unwrap();
    let events = EventSink::none();
    let answers = common::answers();
    interview.opening(&events).await.unwrap();
    interview.answer(&answers[0], &events).await.unwrap();
    let second = interview.answer(&answers[1], &events).await.unwrap();
    let strategy = if second.strategy_selected == "deepen" {
        "clarify"
    } else {
        "deepen"
    };
    let question = interview.regenerate(strategy, None, &events).await.unwrap();
    drop(interview);

    let store = Store::open(&db).unwrap();
    let mut out = Vec::new();
    let options = ExportOptions::default();
    export::write(&store, "override", ExportFormat::Json, &options, &mut out).unwrap();
    let doc: Value = serde_json::from_str::<Value>(std::str::from_utf8(&out).unwrap()).unwrap();
    let turn = &doc["turns"][1];
    assert!(doc["turns"][0]["override"].is_null());
    // The engine's result stays as the pipeline produced it; the override sits beside it.
    let want = without_latency(serde_json::to_value(&second).unwrap());
    assert!(without_latency(turn["turn_result"].clone()) == want);
    let o = &turn["override"];
    assert_eq!(o["strategy"], strategy);
    assert_eq!(o["question"], question.as_str());
    assert_eq!(o["replaced"]["strategy"], second.strategy_selected.as_str());
    let ranking = o["score_decomposition"].as_array().unwrap();
    assert!(
        ranking
            .iter()
            .any(|c| c["strategy"] == strategy && c["selected"] == true && c["node_id"] == ""),
        "the override's ranking marks its strategy selected"
    );
    assert_eq!(doc["focus_tracing"][1]["overridden"], true);

    let mut out = Vec::new();
    export::write(&store, "override", ExportFormat::Md, &options, &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains(&format!(
            "*Strategy:* `{strategy}` (researcher override; the engine chose `{}`)",
            second.strategy_selected
        )),
        "{md}"
    );
    let plain: String = question
        .chars()
        .take_while(|c| !"\\`*_[]<>#|".contains(*c))
        .collect();
    assert!(md.contains(&plain), "the asked question is shown");
}

#[tokio::test]
async fn an_interrupted_turn_is_left_out_until_it_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("i.db");
    let broken = tmp.path().join("broken.yaml");
    let script = std::fs::read_to_string(common::example("oat_milk_script.yaml")).unwrap();
    std::fs::write(
        &broken,
        script.replacen(
            "extraction:\n",
            "extraction:\n  - turn: 2\n    error: timeout\n",
            1,
        ),
    )
    .unwrap();
    let mut interview = Interview::create(
        Store::open(&db).unwrap(),
        common::spec(11),
        common::services_with(&broken),
        Some("cut".to_owned()),
    )
    .unwrap();
    let events = EventSink::none();
    let answers = common::answers();
    interview.opening(&events).await.unwrap();
    interview.answer(&answers[0], &events).await.unwrap();
    assert!(interview.answer(&answers[1], &events).await.is_err());
    drop(interview);

    let store = Store::open(&db).unwrap();
    let data = export::SessionData::load(&store, "cut").unwrap();
    assert_eq!(data.turns.len(), 1, "only the completed turn");
    let mut out = Vec::new();
    export::render(&data, ExportFormat::Md, &ExportOptions::default(), &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    let turn_two = md.split("## Turn 2\n").nth(1).unwrap();
    assert!(turn_two.contains("*This turn did not complete.*"), "{md}");
    let mut out = Vec::new();
    export::render(
        &data,
        ExportFormat::Csv,
        &ExportOptions::default(),
        &mut out,
    )
    .unwrap();
    let csv = String::from_utf8(out).unwrap();
    assert!(csv.lines().skip(1).all(|l| l.starts_with("1,")));
}

/// Exports hold what respondents said: files are created 0600 and folders 0700 whatever the
/// umask (here the usual 022), and a failed export names the file asked for.
#[test]
#[cfg(unix)]
fn export_files_are_private_and_errors_name_the_target() {
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let store = Store::open(&fixture().db).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("study/run");
    let files = export::write_all(&store, SESSION, &out).unwrap();
    for file in &files {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    assert_eq!(mode(&out), 0o700);
    assert_eq!(mode(&tmp.path().join("study")), 0o700);
    let single = tmp.path().join("t.md");
    std::fs::write(&single, "older, world-readable").unwrap();
    std::fs::set_permissions(&single, std::fs::Permissions::from_mode(0o644)).unwrap();
    export::write_file(
        &store,
        SESSION,
        ExportFormat::Md,
        &ExportOptions::default(),
        &single,
    )
    .unwrap();
    assert_eq!(mode(&single), 0o600, "a replaced export is private too");
    let missing = tmp.path().join("no/such/dir/t.md");
    let err = export::write_file(
        &store,
        SESSION,
        ExportFormat::Md,
        &ExportOptions::default(),
        &missing,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("no/such/dir/t.md") && !err.contains(".t.md."),
        "{err}"
    );
}
