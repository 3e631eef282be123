//! The `mermaid` export: a flowchart (bottom-up, like a ladder). Node ids are `n1`, `n2`, … in
//! creation order, since stored ids are not valid Mermaid ids; a `%%` comment per node and
//! edge maps them back and carries the provenance ids. Each node's label shows its text, type
//! and level, and its node type is a class (`t_<type>`) that a stylesheet can target;
//! superseded nodes also get the `superseded` class.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use super::graph::{Element, View};

/// Fill colours given to node types in order of first appearance (cycled).
const PALETTE: [&str; 6] = [
    "#e8f1fb", "#e9f7ef", "#fef5e7", "#f4ecf7", "#fdedec", "#eaf2f8",
];

pub(crate) fn write(view: &View, out: &mut dyn Write) -> io::Result<()> {
    let mut text = format!("flowchart BT\n  %% {}\n", comment(&view.title));
    let mut short: HashMap<&str, String> = HashMap::new();
    let mut classes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut type_order: Vec<String> = Vec::new();
    for (i, node) in view.nodes.iter().enumerate() {
        let id = format!("n{}", i + 1);
        let level = attr(view.node_keys, node, "level");
        let caption = match level {
            Some(l) => format!("{} ({}, level {l})", node.label, node.kind),
            None => format!("{} ({})", node.label, node.kind),
        };
        text.push_str(&format!("  {id}[\"{}\"]\n", label(&caption)));
        text.push_str(&format!(
            "  %% {id} = {}{}\n",
            comment(&node.id),
            provenance(view.node_keys, node)
        ));
        let class = class_name(&node.kind);
        if !type_order.contains(&class) {
            type_order.push(class.clone());
        }
        classes.entry(class).or_default().push(id.clone());
        if node.faded {
            classes
                .entry("superseded".to_owned())
                .or_default()
                .push(id.clone());
        }
        short.insert(node.id.as_str(), id);
    }
    for edge in &view.edges {
        let (source, target) = edge.ends.clone().unwrap_or_default();
        let (Some(s), Some(t)) = (short.get(source.as_str()), short.get(target.as_str())) else {
            continue;
        };
        text.push_str(&format!("  {s} -->|{}| {t}\n", edge_label(&edge.label)));
        text.push_str(&format!(
            "  %% {s} -> {t} = {}{}\n",
            comment(&edge.id),
            provenance(view.edge_keys, edge)
        ));
    }
    for (i, class) in type_order.iter().enumerate() {
        let fill = PALETTE.get(i % PALETTE.len()).copied().unwrap_or("#ffffff");
        text.push_str(&format!("  classDef {class} fill:{fill},stroke:#555\n"));
    }
    if classes.contains_key("superseded") {
        text.push_str("  classDef superseded stroke-dasharray:4 3,color:#777\n");
    }
    for (class, ids) in &classes {
        text.push_str(&format!("  class {} {class}\n", ids.join(",")));
    }
    out.write_all(text.as_bytes())
}

fn attr(keys: &[(&str, super::graph::Kind)], element: &Element, name: &str) -> Option<String> {
    keys.iter()
        .zip(&element.attrs)
        .find(|((k, _), _)| *k == name)
        .and_then(|(_, a)| a.text())
}

/// The id-valued provenance attributes (turns and id lists) as ` key=value` pairs.
fn provenance(keys: &[(&str, super::graph::Kind)], element: &Element) -> String {
    const PROVENANCE: [&str; 7] = [
        "turn",
        "source_utterance_ids",
        "canonical_slot_id",
        "superseded_by",
        "first_seen_turn",
        "surface_node_ids",
        "surface_edge_ids",
    ];
    PROVENANCE
        .iter()
        .filter_map(|name| {
            attr(keys, element, name)
                .filter(|v| !v.is_empty())
                .map(|v| format!(" {name}={}", comment(&v.replace(' ', ","))))
        })
        .collect()
}

/// Node text inside `["…"]`: Mermaid entity codes for the characters that would end the
/// string or be read as markup, line breaks as spaces.
fn label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// An edge label between pipes: letters, digits, spaces, `_` and `-` only.
fn edge_label(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | ' ') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A class name for a node type: `t_` and the type with anything but ASCII letters, digits
/// and `_` replaced.
fn class_name(node_type: &str) -> String {
    let body: String = node_type
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("t_{body}")
}

/// Text safe inside a `%%` comment: one line, and never the `%%{` that opens a directive.
fn comment(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '{' | '}' => '_',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_ids_and_comments_are_sanitised() {
        assert_eq!(
            label("a \"b\" #1 <i>\nc"),
            "a #quot;b#quot; #35;1 #lt;i#gt; c"
        );
        assert_eq!(edge_label("leads|to\"x"), "leads_to_x");
        assert_eq!(class_name("terminal value/β"), "t_terminal_value__");
        assert_eq!(comment("x%%{init}\ny"), "x%%_init_ y");
    }
}
