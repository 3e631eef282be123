//! The `md` export: the conversation as Markdown, each turn with the strategy and focus the
//! next question was chosen with (a researcher's override is shown beside the engine's
//! choice) and what the answer added to the graph.

use std::collections::HashMap;
use std::io::{self, Write};

use super::data::{SessionData, TurnRecord};
use crate::domain::{FocusEntry, Speaker};
use crate::store::SessionStatus;

pub(crate) fn write(data: &SessionData, out: &mut dyn Write) -> io::Result<()> {
    let s = &data.session;
    let name = if s.state.concept_name.is_empty() {
        &s.concept
    } else {
        &s.state.concept_name
    };
    let status = match (s.status, &s.termination_reason) {
        (SessionStatus::Finished, Some(reason)) => format!("finished ({})", escape(reason)),
        (status, _) => status.as_str().to_owned(),
    };
    let mut text = format!(
        "# Interview: {}\n\n- Session: {}\n- Concept: {} · Methodology: {}\n- Status: {status}\n\
         - Turns: {} of {}\n",
        escape(name),
        code(&s.id),
        code(&s.concept),
        code(&s.methodology),
        s.state.turn_count,
        s.max_turns,
    );
    if let Some(i) = &data.import {
        text.push_str(&format!(
            "- Imported from {} ({}; interviewer {}, respondent {}): each question below is the \
             one the interviewer asked; the engine's choice at that point is shown under the \
             answer\n",
            code(&i.file),
            escape(&i.format),
            escape(&i.interviewer),
            escape(&i.respondent)
        ));
    }
    let imported = data.import.is_some();
    let records: HashMap<u32, &TurnRecord> = data.turns.iter().map(|t| (t.turn, t)).collect();
    let focus: HashMap<u32, &FocusEntry> =
        s.state.focus_history.iter().map(|f| (f.turn, f)).collect();
    for u in &data.utterances {
        match (u.turn, u.speaker) {
            (0, Speaker::Interviewer) => {
                text.push_str(&format!(
                    "\n## Opening question\n\n**Interviewer:** {}\n",
                    escape(&u.text)
                ));
            }
            (turn, Speaker::Respondent) => {
                text.push_str(&format!(
                    "\n## Turn {turn}\n\n**Respondent:**\n\n{}\n",
                    quote(&u.text)
                ));
                match records.get(&turn) {
                    Some(record) if imported => text.push_str(&engine_choice(record)),
                    Some(record) => text.push_str(&decision(record, focus.get(&turn).copied())),
                    None => text.push_str("\n*This turn did not complete.*\n"),
                }
            }
            (_, Speaker::Interviewer) => {
                text.push_str(&format!("\n**Interviewer:** {}\n", escape(&u.text)));
            }
        }
    }
    out.write_all(text.as_bytes())
}

/// The line under an answer: strategy, focus, phase and graph growth.
fn decision(record: &TurnRecord, entry: Option<&FocusEntry>) -> String {
    let r = &record.result;
    let engine_focus = r.focus.as_ref().map_or("", |f| f.label.as_str());
    let (strategy, focus) = match entry {
        Some(e) if e.overridden => (
            format!(
                "{} (researcher override; the engine chose {})",
                code(&e.strategy),
                code(&r.strategy_selected)
            ),
            e.label.as_str(),
        ),
        _ => (code(&r.strategy_selected), engine_focus),
    };
    let focus = if focus.is_empty() {
        "none".to_owned()
    } else {
        escape(focus)
    };
    let phase = record
        .phase
        .as_deref()
        .map(|p| format!(" · *Phase:* {p}"))
        .unwrap_or_default();
    let mut line = format!(
        "\n*Strategy:* {strategy} · *Focus:* {focus}{phase} · *Graph:* +{} nodes, +{} edges \
         ({} nodes, {} edges)\n",
        r.nodes_added.len(),
        r.edges_added.len(),
        r.graph_state.node_count,
        r.graph_state.edge_count,
    );
    if let Some(reason) = &r.termination_reason {
        line.push_str(&format!("\n*The interview ends: {}.*\n", escape(reason)));
    }
    line
}

/// Under an imported answer: what the engine would have done there.
fn engine_choice(record: &TurnRecord) -> String {
    let r = &record.result;
    let focus = r
        .focus
        .as_ref()
        .map(|f| format!(" on {}", escape(&f.label)))
        .unwrap_or_default();
    format!(
        "\n*The engine:* {}{focus}, e.g. \"{}\" · *Graph:* +{} nodes, +{} edges ({} nodes, \
         {} edges)\n",
        code(&r.strategy_selected),
        escape(&r.next_question),
        r.nodes_added.len(),
        r.edges_added.len(),
        r.graph_state.node_count,
        r.graph_state.edge_count,
    )
}

/// Text as a block quote, line by line.
fn quote(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim().is_empty() {
                ">".to_owned()
            } else {
                format!("> {}", escape(l))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An identifier as a code span (backticks inside become quotes).
fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'"))
}

/// Backslash-escapes the characters that Markdown would read as markup.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            out.push('\\');
        }
        if c == '\n' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_and_answers_are_quoted() {
        assert_eq!(escape("a *b* <i> #1_x"), "a \\*b\\* \\<i\\> \\#1\\_x");
        assert_eq!(quote("one\n\ntwo > three"), "> one\n>\n> two \\> three");
    }
}
