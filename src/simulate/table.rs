//! The comparison table of a matrix run: one row per simulated session, plain text with aligned
//! columns (text left, numbers right) so it reads in a terminal and pastes into a README.

use super::summary::{RunSummary, format_cost};

/// Column headers and whether the column holds numbers (right-aligned).
const COLUMNS: [(&str, bool); 14] = [
    ("persona", false),
    ("methodology", false),
    ("turns", true),
    ("nodes", true),
    ("edges", true),
    ("e/n", true),
    ("depth", true),
    ("chains", true),
    ("slots", true),
    ("unmapped", true),
    ("ended by", false),
    ("tokens", true),
    ("cost", true),
    ("session", false),
];

/// The table of `runs`, in the order given, with a legend of the abbreviated headers.
pub fn comparison_table(runs: &[RunSummary]) -> String {
    let rows: Vec<[String; 14]> = runs.iter().map(row).collect();
    let mut widths: [usize; 14] = COLUMNS.map(|(h, _)| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let header: [String; 14] = COLUMNS.map(|(h, _)| h.to_owned());
    let rule: [String; 14] = widths.map(|w| "-".repeat(w));
    let mut out = String::new();
    for r in std::iter::once(&header)
        .chain(std::iter::once(&rule))
        .chain(&rows)
    {
        out.push_str(&line(r, &widths));
    }
    out.push_str(
        "\ne/n: edges per node; depth: longest chain in edges; chains: share of level-1 nodes \
         that reach a terminal node; slots: active canonical slots; unmapped: nodes in no slot; \
         tokens: in + out, respondent included.\n",
    );
    out
}

fn row(s: &RunSummary) -> [String; 14] {
    let ended = match (&s.termination_reason, s.finished) {
        (Some(reason), _) => reason.clone(),
        (None, true) => "-".to_owned(),
        (None, false) => "(unfinished)".to_owned(),
    };
    [
        s.persona.clone(),
        s.methodology.clone(),
        s.turns.to_string(),
        s.nodes.to_string(),
        s.edges.to_string(),
        format!("{:.2}", s.edge_node_ratio()),
        s.max_depth.to_string(),
        format!("{:.0}%", s.chain_completion * 100.0),
        s.canonical_slots_active.to_string(),
        s.unmapped_nodes.to_string(),
        ended,
        s.total_tokens().to_string(),
        format_cost(&s.usage),
        s.session_id.clone(),
    ]
}

fn line(cells: &[String; 14], widths: &[usize; 14]) -> String {
    let parts: Vec<String> = cells
        .iter()
        .zip(widths)
        .zip(COLUMNS)
        .map(|((cell, w), (_, numeric))| {
            if numeric {
                format!("{cell:>w$}")
            } else {
                format!("{cell:<w$}")
            }
        })
        .collect();
    format!("{}\n", parts.join("  ").trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::UsageTotals;

    fn run(persona: &str, nodes: u32, finished: bool) -> RunSummary {
        RunSummary {
            session_id: format!("sim-{persona}"),
            persona: persona.to_owned(),
            concept: "oat_milk".to_owned(),
            methodology: "means_end_chain".to_owned(),
            seed: 1,
            finished,
            turns: 5,
            nodes,
            edges: 3,
            max_depth: 2,
            chain_completion: 1.0 / 3.0,
            canonical_slots_active: 1,
            unmapped_nodes: 2,
            termination_reason: finished.then(|| "Maximum turns reached".to_owned()),
            usage: UsageTotals {
                tokens_in: 900,
                tokens_out: 100,
                cost_usd: Some(0.5),
                calls: 12,
                unpriced_calls: 0,
            },
            respondent_tokens: 50,
        }
    }

    #[test]
    fn columns_line_up() {
        let table = comparison_table(&[run("cooperative", 12, true), run("brief", 4, false)]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("persona      methodology      turns  nodes"));
        assert!(lines[1].starts_with("-----------  ---------------  -----"));
        assert!(
            lines[2].contains("   12      3  0.25      2     33%"),
            "{table}"
        );
        assert!(lines[3].contains("(unfinished)"), "{table}");
        assert!(lines[2].contains("Maximum turns reached    1000  $0.5000  sim-cooperative"));
        // Numbers end in the same column in every row.
        let nodes_end = lines[0].find("nodes").unwrap() + "nodes".len();
        assert_eq!(&lines[2][nodes_end - 2..nodes_end], "12");
        assert_eq!(&lines[3][nodes_end - 1..nodes_end], "4");
    }

    #[test]
    fn an_empty_matrix_still_has_headers() {
        let table = comparison_table(&[]);
        assert!(table.starts_with("persona"));
        assert_eq!(table.lines().filter(|l| l.starts_with("---")).count(), 1);
    }
}
