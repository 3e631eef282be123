//! `interviewer check` on the shipped config and on broken files, through the real binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::process::Command;

use crate::common;

fn check(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_interviewer"))
        .arg("check")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run interviewer");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn shipped_config_passes() {
    let (code, out) = check(&[]);
    assert_eq!(code, 0, "{out}");
    for needle in [
        "methodologies/means_end_chain.yaml",
        "methodologies/jobs_to_be_done.yaml",
        "methodologies/critical_incident.yaml",
        "prompts/signals.md  6 rubrics",
    ] {
        assert!(out.contains(needle), "missing {needle} in:\n{out}");
    }
    let summary = out.lines().last().unwrap_or_default();
    assert!(summary.ends_with(", 0 failed"), "{summary}");
    let files: usize = summary.split_whitespace().next().unwrap().parse().unwrap();
    assert!(
        files >= 14,
        "expected ≥ 14 files: 3 methodologies, 4 concepts, 6 personas, rubrics: {summary}"
    );
}

#[test]
fn every_problem_of_a_broken_methodology_is_reported_with_path() {
    let (code, out) = check(&["tests/fixtures/invalid/many_problems.yaml"]);
    assert_eq!(code, 2);
    let f = "tests/fixtures/invalid/many_problems.yaml";
    let expected = [
        "ontology.edges[0].permitted_connections[0]: target 'consequence' is not a node type",
        "signals.graph[1]: unknown signal 'graph.depth_of_field'",
        "signals.vibes: unknown pool 'vibes'",
        "strategies[0].node_binding: 'sometimes' is not a node_binding",
        "strategies[0].focus_mode: 'sideways' is not a focus_mode",
        "strategies[0].signal_weights.llm.engagment.high: unknown signal 'llm.engagment.high' (did you mean 'llm.engagement'?)",
        "strategies[0].signal_weights.graph.node_count.high: 'graph.node_count' is a count",
        "strategies[0].signal_weights.llm.response_depth.profound: 'profound' is not a qualifier",
        "strategies[1].name: duplicate strategy name 'deepen'",
        "strategies[1].signal_weights.graph.chain_completion: 'graph.chain_completion' has several outputs",
        "phases.early.signal_weights.explore: 'explore' is not a strategy",
        "phases.early.phase_bonuses.synthesize: 'synthesize' is not a strategy",
        "phases.overtime: phase must be early, mid or late",
    ];
    for e in expected {
        assert!(
            out.contains(&format!("{f}: {e}")),
            "missing '{e}' in:\n{out}"
        );
    }
}

#[test]
fn each_failure_mode_names_file_path_and_reason() {
    let cases = [
        (
            "wrong_type.yaml",
            "ontology.nodes[0].level: invalid type: string \"one\"",
        ),
        ("unknown_key.yaml", "unknown field `colour`"),
        (
            "persona_bad_distribution.yaml",
            "response_patterns: probabilities sum to 1.1, not 1",
        ),
        (
            "concept_no_objective.yaml",
            "objective: an objective is required",
        ),
        ("syntax.yaml", "line 3 column 9"),
    ];
    for (file, needle) in cases {
        let path = format!("tests/fixtures/invalid/{file}");
        let (code, out) = check(&[&path]);
        assert_eq!(code, 2, "{file}");
        assert!(out.contains(&format!("FAIL  {path}")), "{out}");
        assert!(
            out.contains(needle),
            "{file}: missing '{needle}' in:\n{out}"
        );
    }
}

#[test]
fn a_seed_schema_methodology_from_elsewhere_loads_unchanged() {
    let (code, out) = check(&["tests/fixtures/valid/seed_style.yaml"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("methodology 'seed_style': 3 node types, 3 strategies"),
        "{out}"
    );
}

#[test]
fn missing_path_is_a_usage_error() {
    let (code, _) = check(&["tests/fixtures/nope.yaml"]);
    assert_eq!(code, 2);
}

/// The ids the seeds and the original system use resolve to shipped files: concepts
/// `oat_milk_v2`, `coffee_jtbd_v2`, `headphones_mec`, and the nine personas they name.
#[test]
fn the_seeds_and_the_originals_ids_resolve() {
    let dir = common::config();
    for (id, expected) in [
        ("oat_milk_v2", "oat_milk"),
        ("coffee_jtbd_v2", "coffee_jtbd"),
        ("headphones_mec", "headphones"),
    ] {
        assert_eq!(dir.concept(id).unwrap().id, expected, "{id}");
    }
    for (id, expected) in [
        ("skeptical_analyst", "skeptical"),
        ("baseline_cooperative", "cooperative"),
        ("brief_responder", "brief"),
        ("fatiguing_responder", "fatiguing"),
        ("uncertain_hedger", "hedging"),
        ("verbose_tangential", "verbose_tangential"),
        ("emotionally_reactive", "emotionally_reactive"),
        ("retrospective_rationalizer", "retrospective_rationalizer"),
        ("single_topic_fixator", "single_topic_fixator"),
    ] {
        assert_eq!(dir.persona(id).unwrap().id, expected, "{id}");
    }
    let missing = dir.persona("no_such_persona").unwrap_err().to_string();
    assert!(missing.contains("no_such_persona"), "{missing}");
}

/// A config tree laid out as the original system's, in `tree`: the shipped methodologies, the
/// seeds' and the original's concept and persona ids, `signals.md` at the root with
/// `emotional_valence` and calibration examples, and a methodology written in the original's
/// style.
fn original_tree(tree: &std::path::Path) {
    let ours = std::path::Path::new(common::MANIFEST).join("config");
    for sub in ["methodologies", "concepts", "personas"] {
        std::fs::create_dir_all(tree.join(sub)).unwrap();
    }
    for entry in std::fs::read_dir(ours.join("methodologies")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(
            &path,
            tree.join("methodologies").join(path.file_name().unwrap()),
        )
        .unwrap();
    }
    let renamed = |kind: &str, ours_id: &str, theirs: &str| {
        let text = std::fs::read_to_string(ours.join(kind).join(format!("{ours_id}.yaml")))
            .unwrap()
            .replacen(&format!("id: {ours_id}\n"), &format!("id: {theirs}\n"), 1);
        assert!(
            text.starts_with(&format!("id: {theirs}\n")),
            "{kind}/{ours_id}"
        );
        std::fs::write(tree.join(kind).join(format!("{theirs}.yaml")), text).unwrap();
    };
    for (ours_id, theirs) in [
        ("oat_milk", "oat_milk_v2"),
        ("coffee_jtbd", "coffee_jtbd_v2"),
        ("headphones", "headphones_mec"),
    ] {
        renamed("concepts", ours_id, theirs);
    }
    for (ours_id, theirs) in [
        ("skeptical", "skeptical_analyst"),
        ("cooperative", "baseline_cooperative"),
        ("brief", "brief_responder"),
        ("fatiguing", "fatiguing_responder"),
        ("hedging", "uncertain_hedger"),
        ("verbose_tangential", "verbose_tangential"),
        ("emotionally_reactive", "emotionally_reactive"),
        ("retrospective_rationalizer", "retrospective_rationalizer"),
        ("single_topic_fixator", "single_topic_fixator"),
    ] {
        renamed("personas", ours_id, theirs);
    }
    // The original's rubric file: `emotional_valence`, and a calibration example under each
    // scale, indented like the scale lines.
    let mut rubrics = String::new();
    for line in std::fs::read_to_string(ours.join("prompts/signals.md"))
        .unwrap()
        .lines()
    {
        if let Some(rest) = line.strip_prefix("valence:") {
            rubrics.push_str(&format!("emotional_valence:{rest}\n"));
        } else {
            rubrics.push_str(line);
            rubrics.push('\n');
        }
        if line.starts_with("    5 = ") {
            rubrics.push_str(
                "    Calibration example: \"It froths well\" → 2; a story of one morning → 4.\n",
            );
        }
    }
    assert!(rubrics.contains("emotional_valence:"));
    std::fs::write(tree.join("signals.md"), rubrics).unwrap();
    // The original's files list only global signals and weigh node signals and the response
    // trend without listing them: those still count (no `note:`).
    std::fs::write(
        tree.join("methodologies/laddering.yaml"),
        "method:\n  name: laddering\n  version: \"3.0\"\n  goal: \"Ladder from attributes to values\"\n\
         ontology:\n  nodes:\n    - {name: attribute, level: 1, terminal: false, examples: [\"creamy\"]}\n\
         \x20   - {name: value, level: 2, terminal: true}\n  edges:\n\
         \x20   - {name: leads_to, permitted_connections: [[attribute, value]]}\n\
         signals:\n  graph: [graph.node_count, graph.max_depth]\n\
         \x20 llm: [llm.response_depth, llm.engagement]\n\
         \x20 temporal: [temporal.strategy_repetition_count, technique.node.strategy_repetition]\n\
         \x20 meta: [meta.interview.phase]\n\
         strategies:\n  - name: deepen\n    description: \"Ask why it matters\"\n    signal_weights:\n\
         \x20     llm.response_depth.low: 0.8\n      llm.global_response_trend.shallowing: 0.4\n\
         \x20     graph.node.exhaustion_score.low: 1.0\n      graph.node.focus_streak.low: 0.5\n\
         \x20 - name: reflect\n    node_binding: none\n    signal_weights:\n\
         \x20     graph.max_depth: 0.7\n      meta.node.opportunity.probe_deeper: 0.6\n\
         phases:\n  early:\n    description: \"Initial exploration\"\n    signal_weights: {deepen: 1.2}\n",
    )
    .unwrap();
    // The node weights of the original's `jobs_to_be_done_v2.yaml`: its categories of
    // novelty (high/medium), focus count (none/medium/high) and canonical novelty
    // (new/confirming/orphan).
    std::fs::write(
        tree.join("methodologies/laddering_v2.yaml"),
        "method:\n  name: laddering_v2\n  version: \"2.1\"\n  goal: \"Ladder with the node categories\"\n\
         ontology:\n  nodes:\n    - {name: attribute, level: 0}\n    - {name: value, level: 1, terminal: true}\n\
         \x20 edges:\n    - {name: leads_to, description: \"Source leads to target\"}\n\
         signals:\n  graph: [graph.node_count, graph.orphan_count, graph.max_depth]\n\
         \x20 llm: [llm.response_depth, llm.valence, llm.engagement]\n\
         strategies:\n  - name: dig_motivation\n    description: \"Why does it matter\"\n    signal_weights:\n\
         \x20     llm.valence.high: 0.4\n      graph.node.exhaustion_score.low: 0.3\n\
         \x20     graph.node.focus_streak.low: 0.5\n      graph.node.focus_streak.medium: -0.4\n\
         \x20     graph.node.focus_streak.high: -0.8\n      graph.node.novelty.high: 0.2\n\
         \x20     graph.node.novelty.medium: 0.1\n      graph.node.focus_count.high: -0.6\n\
         \x20     graph.node.focus_count.medium: -0.3\n      graph.node.focus_count.none: 0.3\n\
         \x20     graph.node.canonical_novelty.new: 0.5\n      graph.node.canonical_novelty.orphan: 0.3\n\
         \x20     graph.node.canonical_novelty.confirming: 0.2\n\
         \x20 - name: validate_outcome\n    generates_closing_question: true\n    focus_mode: summary\n\
         \x20   signal_weights:\n      meta.interview.phase.early: -3.0\n      meta.interview.phase.mid: -3.0\n\
         \x20     graph.node.novelty.high: 0.1\n",
    )
    .unwrap();
}

/// A script for the three answers of the test below: extraction replies for the two-level
/// ladder, and signal-scoring replies in the original system's shape (bare integer scores and
/// the tone rubric under its key, `emotional_valence`).
fn original_scoring_script(path: &std::path::Path, turns: u32) {
    let concept = |label: &str, ty: &str, quote: &str| {
        format!(
            "{{\"label\": \"{label}\", \"node_type\": \"{ty}\", \"confidence\": 0.9, \
             \"stance\": 1, \"source_quote\": \"{quote}\"}}"
        )
    };
    let extraction = [
        (vec![concept("froths well", "attribute", "froths well")], ""),
        (
            vec![
                concept("calmer mornings", "attribute", "my mornings calmer"),
                concept("good mood", "value", "start the day in a good mood"),
            ],
            "{\"source\": \"calmer mornings\", \"target\": \"good mood\", \
             \"edge_type\": \"leads_to\", \"confidence\": 0.8}",
        ),
        (
            vec![concept(
                "patient with my kids",
                "value",
                "more patient with my kids",
            )],
            "",
        ),
    ];
    let mut script = String::from("extraction:\n");
    for (turn, (concepts, links)) in (1..=turns).zip(extraction) {
        script.push_str(&format!(
            "  - turn: {turn}\n    reply: '{{\"concepts\": [{}], \"relationships\": [{links}]}}'\n",
            concepts.join(", ")
        ));
    }
    script.push_str(
        "slot_discovery:\n  - reply: '{\"slots\": []}'\n\
         question_generation:\n  - turn: 0\n    reply: \"What do you like about oat milk?\"\n\
         \x20 - reply: \"Why does that matter to you?\"\n",
    );
    script.push_str("signal_scoring:\n");
    for turn in 1..=turns {
        script.push_str(&format!(
            "  - turn: {turn}\n    reply: '{{\"response_depth\": {{\"score\": 4, \"rationale\": \"reasons\"}}, \
             \"specificity\": {{\"score\": 3, \"rationale\": \"some\"}}, \"certainty\": 4, \
             \"emotional_valence\": {{\"score\": 5, \"rationale\": \"warm\"}}, \
             \"engagement\": {{\"score\": 4, \"rationale\": \"keen\"}}, \
             \"intellectual_engagement\": {{\"score\": 3, \"rationale\": \"some\"}}}}'\n"
        ));
    }
    std::fs::write(path, script).unwrap();
}

/// A config tree laid out as the original system's: `methodologies/`, `concepts/` and
/// `personas/` under the seeds' and the original's ids, and `signals.md` at the root with the
/// tone rubric named `emotional_valence` and calibration examples under each scale. `check
/// --config-dir` passes on it, and an interview runs from it.
#[test]
fn a_config_tree_in_the_originals_layout_checks_and_interviews() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("original");
    original_tree(&tree);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_interviewer"))
            .arg("--config-dir")
            .arg(&tree)
            .arg("--db")
            .arg(tmp.path().join("i.db"))
            .args(args)
            .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
            .env_remove("INTERVIEWER_SCRIPT")
            .output()
            .unwrap()
    };
    let checked = run(&["check"]);
    let text = String::from_utf8_lossy(&checked.stdout).to_string();
    assert!(
        checked.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(text.contains("20 file(s) checked, 0 failed"), "{text}");
    assert!(!text.contains("note:"), "{text}");
    assert!(text.contains("signals.md"), "{text}");

    let answers = tmp.path().join("answers.txt");
    std::fs::write(
        &answers,
        "I buy it because it froths well for my latte.\n\nIt makes my mornings calmer, so I start the day in a good mood.\n\nThat matters because I am more patient with my kids.\n",
    )
    .unwrap();
    let interviewed = run(&[
        "interview",
        "--provider",
        "none",
        "--concept",
        "oat_milk_v2",
        "--max-turns",
        "3",
        "--answers",
        answers.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        interviewed.status.success(),
        "{}",
        String::from_utf8_lossy(&interviewed.stderr)
    );
    let out = String::from_utf8_lossy(&interviewed.stdout);
    assert!(
        out.contains("\"llm.valence\""),
        "the tone rubric is scored: {out}"
    );

    // The laddering file that weighs the original's node categories, interviewed with
    // signal-scoring replies in the original's shape (`emotional_valence`): every turn reads
    // them, and the decomposition shows the categories at work.
    let script = tmp.path().join("original_scoring.yaml");
    original_scoring_script(&script, 3);
    let interviewed = run(&[
        "interview",
        "--script",
        script.to_str().unwrap(),
        "--understanding",
        "llm",
        "--concept",
        "oat_milk_v2",
        "--methodology",
        "laddering_v2",
        "--max-turns",
        "3",
        "--answers",
        answers.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        interviewed.status.success(),
        "{}",
        String::from_utf8_lossy(&interviewed.stderr)
    );
    let turns: Vec<serde_json::Value> = String::from_utf8_lossy(&interviewed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(turns.len(), 3);
    for t in &turns {
        assert_eq!(t["signals"]["llm.valence"], 1.0, "emotional_valence 5: {t}");
    }
    let last = &turns[2];
    let weighed: Vec<&str> = last["score_decomposition"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["node_id"].as_str().unwrap().is_empty())
        .flat_map(|c| c["signal_contributions"].as_array().unwrap())
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for key in [
        "graph.node.novelty.high",
        "graph.node.focus_count.none",
        "graph.node.canonical_novelty.orphan",
    ] {
        assert!(weighed.contains(&key), "{key} not in {weighed:?}");
    }
}
