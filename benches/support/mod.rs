//! What the benchmarks share: a scripted 50-turn oat milk interview whose extraction adds
//! three chained concepts a turn, percentile reporting, and reading a child process (the real
//! binary): its output line by line and its resident memory.

#![allow(
    dead_code,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::unwrap_used
)]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Lines};
use std::process::ChildStdout;
use std::time::Duration;

/// Turns the script covers.
pub const TURNS: u32 = 50;
/// The means-end chain's node types, attribute up to terminal value.
pub const TYPES: [&str; 5] = [
    "attribute",
    "functional_consequence",
    "psychosocial_consequence",
    "instrumental_value",
    "terminal_value",
];
const WORDS: [&str; 20] = [
    "creamy", "price", "froth", "coffee", "morning", "health", "planet", "taste", "sweet", "calm",
    "energy", "family", "habit", "carton", "barista", "budget", "comfort", "routine", "friends",
    "label",
];

/// The three concept labels of `turn`.
pub fn labels(turn: u32) -> Vec<String> {
    let t = turn as usize;
    (0..3)
        .map(|k| {
            format!(
                "{} {} {turn}",
                WORDS[(t + k) % WORDS.len()],
                WORDS[(t * 7 + k) % WORDS.len()]
            )
        })
        .collect()
}

/// The answer of `turn`: it says the turn's three labels, so the scripted quotes are in it
/// (the extraction screen drops quotes that are not).
pub fn answer(turn: u32) -> String {
    let l = labels(turn);
    format!(
        "Turn {turn}: I like it because of the {}, and when I think of the {} I feel calm, so the {} \
         matters to me.",
        l[0], l[1], l[2]
    )
}

/// Three new concepts a turn, chained up the ladder and linked to the previous turn.
pub fn script() -> String {
    let mut s = String::from("extraction:\n");
    for turn in 1..=TURNS {
        let t = turn as usize;
        let labels = labels(turn);
        let concepts: Vec<serde_json::Value> = labels
            .iter()
            .enumerate()
            .map(|(k, l)| serde_json::json!({"label": l, "node_type": TYPES[(t + k) % 3], "confidence": 0.9, "stance": 1, "source_quote": l}))
            .collect();
        let mut rels = vec![];
        for k in 0..2 {
            let (a, b) = ((t + k) % 3, (t + k + 1) % 3);
            if b > a {
                rels.push(serde_json::json!({"source": labels[k], "target": labels[k + 1], "edge_type": "leads_to", "confidence": 0.8}));
            }
        }
        let reply = serde_json::json!({"concepts": concepts, "relationships": rels}).to_string();
        let _ = writeln!(
            s,
            "  - turn: {turn}\n    reply: {}",
            serde_json::to_string(&reply).unwrap()
        );
    }
    let scores = serde_json::json!({
        "response_depth": {"score": 4, "rationale": "r"}, "specificity": {"score": 3, "rationale": "r"},
        "certainty": {"score": 3, "rationale": "r"}, "valence": {"score": 3, "rationale": "r"},
        "engagement": {"score": 4, "rationale": "r"}, "intellectual_engagement": {"score": 3, "rationale": "r"}
    })
    .to_string();
    let _ = writeln!(
        s,
        "signal_scoring:\n  - reply: {}",
        serde_json::to_string(&scores).unwrap()
    );
    // Each label proposes the slot named after its first word, so later turns' proposals merge
    // into earlier slots and promote them, as paraphrases do in a real interview.
    s.push_str("slot_discovery:\n");
    for turn in 1..=TURNS {
        let t = turn as usize;
        let slots: Vec<serde_json::Value> = TYPES[..3]
            .iter()
            .flat_map(|node_type| {
                (0..3)
                    .filter(move |k| TYPES[(t + k) % 3] == *node_type)
                    .map(move |k| {
                        let word = WORDS[(t + k) % WORDS.len()];
                        let label = format!("{word} {} {turn}", WORDS[(t * 7 + k) % WORDS.len()]);
                        serde_json::json!({"slot_name": word, "description": format!("Everything about {word}"), "node_type": node_type, "surface_labels": [label]})
                    })
            })
            .collect();
        let reply = serde_json::json!({ "slots": slots }).to_string();
        let _ = writeln!(
            s,
            "  - turn: {turn}\n    reply: {}",
            serde_json::to_string(&reply).unwrap()
        );
    }
    // A different question every turn: the question check refuses a repeated one.
    s.push_str("question_generation:\n");
    for turn in 0..=TURNS {
        let _ = writeln!(
            s,
            "  - turn: {turn}\n    reply: \"What else matters to you about the {}?\"",
            labels(turn.max(1))[0]
        );
    }
    s
}

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub fn report(name: &str, times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    println!(
        "  {name:<12} p50 {:>7.2} ms   p95 {:>7.2} ms",
        percentile(&sorted, 0.5).as_secs_f64() * 1e3,
        percentile(&sorted, 0.95).as_secs_f64() * 1e3
    );
}

/// A `kB` field of `/proc/PID/status` (Linux), e.g. `VmRSS:`.
pub fn status_kib(pid: u32, field: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))
}

/// A child's standard output, a line at a time.
pub struct ChildLines(Lines<BufReader<ChildStdout>>);

impl ChildLines {
    pub fn new(stdout: ChildStdout) -> Self {
        Self(BufReader::new(stdout).lines())
    }

    /// The next line; an error when the child stopped printing.
    pub fn next_line(&mut self) -> Result<String, String> {
        self.0
            .next()
            .ok_or("interviewer stopped early")?
            .map_err(|e| e.to_string())
    }
}
