//! The `dot` export: a Graphviz digraph. Every attribute of [`super::graph`] is written as a
//! node or edge attribute (Graphviz keeps attributes it does not know, and tools reading DOT
//! see them); the drawn label shows the node's text, type and level. Ladders read bottom-up
//! (`rankdir=BT`), superseded nodes are dashed.

use std::io::{self, Write};

use super::graph::{Element, Kind, View};

pub(crate) fn write(view: &View, out: &mut dyn Write) -> io::Result<()> {
    let mut text = format!(
        "digraph {} {{\n  graph [label={}, labelloc=t, rankdir=BT];\n  \
         node [shape=box, style=rounded];\n",
        quote(view.name),
        quote(&view.title)
    );
    for node in &view.nodes {
        let level = node_level(view, node);
        let caption = match level {
            Some(l) => format!("{}\n({}, level {l})", node.label, node.kind),
            None => format!("{}\n({})", node.label, node.kind),
        };
        let mut attrs = vec![format!("label={}", quote(&caption))];
        if node.faded {
            attrs.push("style=\"rounded,dashed\"".to_owned());
        }
        attrs.extend(attributes(view.node_keys, node));
        text.push_str(&format!("  {} [{}];\n", quote(&node.id), attrs.join(", ")));
    }
    for edge in &view.edges {
        let (source, target) = edge.ends.clone().unwrap_or_default();
        let mut attrs = vec![format!("label={}", quote(&edge.label))];
        attrs.extend(attributes(view.edge_keys, edge));
        text.push_str(&format!(
            "  {} -> {} [{}];\n",
            quote(&source),
            quote(&target),
            attrs.join(", ")
        ));
    }
    text.push_str("}\n");
    out.write_all(text.as_bytes())
}

fn node_level(view: &View, node: &Element) -> Option<String> {
    view.node_keys
        .iter()
        .zip(&node.attrs)
        .find(|((name, _), _)| *name == "level")
        .and_then(|(_, attr)| attr.text())
}

/// `name="value"` for every present attribute except `label` (the drawn label is set apart).
fn attributes(keys: &[(&str, Kind)], element: &Element) -> Vec<String> {
    keys.iter()
        .zip(&element.attrs)
        .filter(|((name, _), _)| *name != "label")
        .filter_map(|((name, _), attr)| attr.text().map(|v| format!("{name}={}", quote(&v))))
        .collect()
}

/// A DOT double-quoted string: quotes and backslashes escaped (so `\N`-style label escapes
/// cannot appear by accident), newlines as `\n`, other control characters dropped.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_backslashes_and_newlines() {
        assert_eq!(quote("a \"b\" \\N\nc\u{7}"), r#""a \"b\" \\N\nc""#);
    }
}
