//! A study as text: the Markdown report a researcher pastes into a study memo, the tables as
//! CSV, the whole analysis as JSON, and the map as Mermaid, DOT or `GraphML`.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::Study;
use super::codes::Code;

/// Output formats of `interviewer analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Csv,
    Json,
    Mermaid,
    Dot,
    Graphml,
}

/// Quotes per code in the report.
const QUOTES_PER_CODE: usize = 3;

/// `study` in `format`.
pub fn render(study: &Study, format: Format) -> Result<String, serde_json::Error> {
    Ok(match format {
        Format::Graphml => graphml(study),
        Format::Md => markdown(study),
        Format::Csv => csv(study),
        Format::Json => serde_json::to_string_pretty(study)? + "\n",
        Format::Mermaid => mermaid(study),
        Format::Dot => dot(study),
    })
}

fn names(study: &Study) -> HashMap<&str, &Code> {
    study.codes.iter().map(|c| (c.id.as_str(), c)).collect()
}

/// The tables in one long CSV: a `code` row per code and a `link` row per linked pair.
fn csv(study: &Study) -> String {
    let by_id = names(study);
    let mut out = String::from(
        "table,code,name,node_type,level,respondents,to_code,to_name,direct,indirect\n",
    );
    for code in &study.codes {
        let _ = writeln!(
            out,
            "code,{},{},{},{},{},,,,",
            code.id,
            field(&code.name),
            field(&code.node_type),
            code.level,
            code.respondents()
        );
    }
    for link in &study.links {
        let name = |id: &str| by_id.get(id).map_or(String::new(), |c| field(&c.name));
        let _ = writeln!(
            out,
            "link,{},{},,,,{},{},{},{}",
            link.from,
            name(&link.from),
            link.to,
            name(&link.to),
            link.direct,
            link.indirect
        );
    }
    out
}

/// A CSV field, quoted when it must be; a leading `=`, `+`, `-` or `@` is prefixed with `'`
/// so a spreadsheet does not run a respondent's words as a formula.
fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The map (links at or above the cutoff) as a Mermaid flowchart, lowest rung at the bottom.
fn mermaid(study: &Study) -> String {
    let by_id = names(study);
    let mut out = String::from("flowchart BT\n");
    for code in map_codes(study) {
        let _ = writeln!(
            out,
            "  {}[\"{} · {}<br/><small>{} · {} resp.</small>\"]",
            code.id,
            code.id,
            mermaid_text(&code.name),
            mermaid_text(&code.node_type),
            code.respondents()
        );
    }
    for link in map_links(study) {
        if by_id.contains_key(link.0) && by_id.contains_key(link.1) {
            let _ = writeln!(out, "  {} -->|{}| {}", link.0, link.2, link.1);
        }
    }
    out
}

/// Text safe inside a quoted Mermaid label.
fn mermaid_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => '\'',
            '<' | '>' | '[' | ']' | '{' | '}' | '|' | '`' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// The map as a DOT digraph.
fn dot(study: &Study) -> String {
    let mut out = String::from("digraph study {\n  rankdir=BT;\n  node [shape=box];\n");
    for code in map_codes(study) {
        let _ = writeln!(
            out,
            "  {} [label=\"{}\\n{} · {} resp.\"];",
            code.id,
            dot_text(&code.name),
            dot_text(&code.node_type),
            code.respondents()
        );
    }
    for (from, to, direct) in map_links(study) {
        let _ = writeln!(out, "  {from} -> {to} [label=\"{direct}\"];");
    }
    out.push_str("}\n");
    out
}

/// The map as `GraphML`, with the codes' name, node type, level and respondents and the links'
/// direct and indirect counts as typed columns (Gephi, yEd).
fn graphml(study: &Study) -> String {
    use crate::export::graph::{Attr, Element, Kind, View};
    const NODE_KEYS: &[(&str, Kind)] = &[
        ("name", Kind::String),
        ("node_type", Kind::String),
        ("level", Kind::Int),
        ("respondents", Kind::Int),
    ];
    const EDGE_KEYS: &[(&str, Kind)] = &[("direct", Kind::Int), ("indirect", Kind::Int)];
    let nodes = map_codes(study)
        .into_iter()
        .map(|c| Element {
            id: c.id.clone(),
            label: c.name.clone(),
            kind: c.node_type.clone(),
            attrs: vec![
                Attr::Str(c.name.clone()),
                Attr::Str(c.node_type.clone()),
                Attr::Int(i64::from(c.level)),
                Attr::Int(i64::from(c.respondents())),
            ],
            ends: None,
            faded: false,
        })
        .collect();
    let edges = study
        .links
        .iter()
        .filter(|l| l.direct >= study.cutoff.max(1))
        .map(|l| Element {
            id: format!("{}-{}", l.from, l.to),
            label: l.direct.to_string(),
            kind: "link".to_owned(),
            attrs: vec![
                Attr::Int(i64::from(l.direct)),
                Attr::Int(i64::from(l.indirect)),
            ],
            ends: Some((l.from.clone(), l.to.clone())),
            faded: false,
        })
        .collect();
    let view = View {
        name: "study_map",
        title: format!(
            "{} ({}), {} interviews, links made directly by at least {} respondents",
            study.concepts.join(", "),
            study.methodology,
            study.sessions.len(),
            study.cutoff
        ),
        node_keys: NODE_KEYS,
        edge_keys: EDGE_KEYS,
        nodes,
        edges,
    };
    let mut out = Vec::new();
    // Writing to memory cannot fail.
    let _ = crate::export::graphml::write(&view, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn dot_text(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// The links the map keeps: `(from, to, direct respondents)`.
fn map_links(study: &Study) -> Vec<(&str, &str, u32)> {
    study
        .links
        .iter()
        .filter(|l| l.direct >= study.cutoff.max(1))
        .map(|l| (l.from.as_str(), l.to.as_str(), l.direct))
        .collect()
}

/// Codes on the map (those of a kept link), in report order.
fn map_codes(study: &Study) -> Vec<&Code> {
    let links = map_links(study);
    study
        .codes
        .iter()
        .filter(|c| links.iter().any(|(a, b, _)| *a == c.id || *b == c.id))
        .collect()
}

/// The report.
fn markdown(study: &Study) -> String {
    let mut out = String::new();
    summary(study, &mut out);
    codes_table(study, &mut out);
    matrix(study, &mut out);
    map_section(study, &mut out);
    chains_section(study, &mut out);
    tables(study, &mut out);
    quotes(study, &mut out);
    out
}

fn summary(study: &Study, out: &mut String) {
    let finished = study.sessions.iter().filter(|s| s.finished).count();
    let imported = study.sessions.iter().filter(|s| s.imported).count();
    let origin = if imported > 0 {
        format!(
            "; {} live, {imported} imported",
            study.sessions.len() - imported
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "# Study: {} ({})\n",
        study.concepts.join(", "),
        study.methodology
    );
    let _ = writeln!(
        out,
        "{} interviews ({finished} finished{origin}), {} codes, {} linked pairs; the map keeps the links \
         at least {} respondent{} made directly ({} of them). Codes merge items of one node type \
         at cosine ≥ {:.2}.\n",
        study.sessions.len(),
        study.codes.len(),
        study.links.len(),
        study.cutoff,
        if study.cutoff == 1 { "" } else { "s" },
        map_links(study).len(),
        study.threshold
    );
}

fn codes_table(study: &Study, out: &mut String) {
    out.push_str("## Codes\n\n| code | name | node type | respondents |\n|---|---|---|---|\n");
    for code in &study.codes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            code.id,
            md(&code.name),
            md(&code.node_type),
            code.respondents()
        );
    }
    out.push('\n');
}

/// The implication matrix, rows and columns limited to codes with a link, cells `direct.indirect`.
fn matrix(study: &Study, out: &mut String) {
    let mut linked: Vec<&str> = study
        .links
        .iter()
        .flat_map(|l| [l.from.as_str(), l.to.as_str()])
        .collect();
    let order: HashMap<&str, usize> = study
        .codes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    linked.sort_by_key(|c| order.get(c).copied().unwrap_or(usize::MAX));
    linked.dedup();
    out.push_str(
        "## Implication matrix\n\nRow → column; each cell is direct.indirect: respondents who \
         linked the two codes directly, and those who linked them only through other codes (each \
         respondent counts once).\n\n",
    );
    if linked.is_empty() {
        out.push_str("No respondent linked two codes.\n\n");
        return;
    }
    let cells: HashMap<(&str, &str), (u32, u32)> = study
        .links
        .iter()
        .map(|l| ((l.from.as_str(), l.to.as_str()), (l.direct, l.indirect)))
        .collect();
    let _ = writeln!(out, "| from \\ to | {} |", linked.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(linked.len()));
    for from in &linked {
        let row: Vec<String> = linked
            .iter()
            .map(|to| {
                cells
                    .get(&(*from, *to))
                    .map_or(String::new(), |(d, i)| format!("{d}.{i}"))
            })
            .collect();
        let _ = writeln!(out, "| {from} | {} |", row.join(" | "));
    }
    out.push('\n');
}

fn map_section(study: &Study, out: &mut String) {
    let _ = writeln!(
        out,
        "## Map (links made directly by ≥ {} respondent{})\n",
        study.cutoff,
        if study.cutoff == 1 { "" } else { "s" }
    );
    out.push_str("```mermaid\n");
    out.push_str(&mermaid(study));
    out.push_str(
        "```\n\n| cutoff | links kept | share of links | share of mentions |\n|---|---|---|---|\n",
    );
    for share in &study.cutoff_shares {
        let _ = writeln!(
            out,
            "| {} | {} | {:.0}% | {:.0}% |",
            share.cutoff,
            share.links,
            share.share_of_links * 100.0,
            share.share_of_mentions * 100.0
        );
    }
    out.push('\n');
}

fn chains_section(study: &Study, out: &mut String) {
    let by_id = names(study);
    out.push_str("## Dominant chains\n\n");
    if study.chains.is_empty() {
        out.push_str("The map has no path of two or more codes at this cutoff.\n\n");
        return;
    }
    for chain in &study.chains {
        let steps: Vec<String> = chain
            .codes
            .iter()
            .map(|id| by_id.get(id.as_str()).map_or(id.clone(), |c| md(&c.name)))
            .collect();
        let _ = writeln!(
            out,
            "- {} ({} respondent{})",
            steps.join(" → "),
            chain.respondents,
            if chain.respondents == 1 { "" } else { "s" }
        );
    }
    out.push('\n');
}

/// Each session's shortest unambiguous id (at least 8 characters), for the report.
fn short(study: &Study) -> HashMap<&str, String> {
    let ids: Vec<&str> = study.sessions.iter().map(|s| s.id.as_str()).collect();
    ids.iter()
        .copied()
        .zip(crate::store::short_ids(&ids, 8))
        .collect()
}

fn tables(study: &Study, out: &mut String) {
    let by_id = names(study);
    let short = short(study);
    out.push_str("## Interviews\n\n| session | turns | codes | coverage | finished |\n|---|---|---|---|---|\n");
    for s in &study.sessions {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0}% | {} |",
            md(short.get(s.id.as_str()).map_or(&s.id, |id| id)),
            s.turns,
            s.codes,
            s.coverage * 100.0,
            if s.finished { "yes" } else { "no" }
        );
    }
    out.push_str("\n## Strategies and endings\n\n| strategy | turns |\n|---|---|\n");
    for (strategy, n) in &study.strategies {
        let _ = writeln!(out, "| {} | {n} |", md(strategy));
    }
    out.push_str("\n| ending | interviews |\n|---|---|\n");
    for (reason, n) in &study.terminations {
        let _ = writeln!(out, "| {} | {n} |", md(reason));
    }
    if !study.co_occurrence.is_empty() {
        out.push_str(
            "\n## Codes raised together\n\n| code | code | respondents |\n|---|---|---|\n",
        );
        for pair in &study.co_occurrence {
            let name = |id: &str| by_id.get(id).map_or(id.to_owned(), |c| md(&c.name));
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                name(&pair.a),
                name(&pair.b),
                pair.respondents
            );
        }
    }
    out.push('\n');
}

fn quotes(study: &Study, out: &mut String) {
    let short = short(study);
    out.push_str("## Quotes by code\n\n");
    for code in &study.codes {
        let _ = writeln!(
            out,
            "### {} · {} ({})\n",
            code.id,
            md(&code.name),
            md(&code.node_type)
        );
        let mut shown = 0;
        for member in &code.members {
            for quote in &member.quotes {
                if shown == QUOTES_PER_CODE {
                    break;
                }
                let _ = writeln!(
                    out,
                    "> {} — {}, turn {}\n",
                    md(quote.text.trim()),
                    md(short
                        .get(member.session.as_str())
                        .map_or(&member.session, |id| id)),
                    quote.turn
                );
                shown += 1;
            }
        }
        if shown == 0 {
            out.push_str("(no quote kept)\n\n");
        }
    }
}

/// Text safe in a Markdown table cell or quote: no pipes, no line breaks, no control characters.
fn md(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '|' => '/',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}
