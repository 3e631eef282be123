//! The `graphml` export: `GraphML` 1.0 with one declared `<key>` per attribute, so Gephi and yEd
//! show node types, levels and provenance as typed columns.
//!
//! Key ids are `n_<attribute>` for nodes and `e_<attribute>` for edges; `attr.name` is the
//! attribute's plain name (`label`, `node_type`, `level`, …, see [`super::graph`]). A missing
//! value (a node's level when the methodology gave none, an unpromoted slot's
//! `promoted_turn`) has no `<data>` element.

use std::io::{self, Write};

use super::graph::{Element, View};

pub(crate) fn write(view: &View, out: &mut dyn Write) -> io::Result<()> {
    let mut text = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns \
         http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n",
    );
    for (prefix, scope, keys) in [("n", "node", view.node_keys), ("e", "edge", view.edge_keys)] {
        for (name, kind) in keys {
            text.push_str(&format!(
                "  <key id=\"{prefix}_{name}\" for=\"{scope}\" attr.name=\"{name}\" \
                 attr.type=\"{}\"/>\n",
                kind.graphml()
            ));
        }
    }
    text.push_str(&format!(
        "  <graph id=\"{}\" edgedefault=\"directed\">\n    <desc>{}</desc>\n",
        escape(view.name),
        escape(&view.title)
    ));
    for node in &view.nodes {
        text.push_str(&format!("    <node id=\"{}\">\n", escape(&node.id)));
        push_data(&mut text, "n", view.node_keys, node);
        text.push_str("    </node>\n");
    }
    for edge in &view.edges {
        let (source, target) = edge.ends.clone().unwrap_or_default();
        text.push_str(&format!(
            "    <edge id=\"{}\" source=\"{}\" target=\"{}\">\n",
            escape(&edge.id),
            escape(&source),
            escape(&target)
        ));
        push_data(&mut text, "e", view.edge_keys, edge);
        text.push_str("    </edge>\n");
    }
    text.push_str("  </graph>\n</graphml>\n");
    out.write_all(text.as_bytes())
}

fn push_data(
    text: &mut String,
    prefix: &str,
    keys: &[(&str, super::graph::Kind)],
    element: &Element,
) {
    for ((name, _), attr) in keys.iter().zip(&element.attrs) {
        if let Some(value) = attr.text() {
            text.push_str(&format!(
                "      <data key=\"{prefix}_{name}\">{}</data>\n",
                escape(&value)
            ));
        }
    }
}

/// Escapes text for element content and double-quoted attributes, replacing characters XML
/// 1.0 does not allow (control characters other than tab, newline and carriage return,
/// U+FFFE, U+FFFF) with U+FFFD.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Attribute values normalise raw newlines to spaces; references survive.
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_forbidden_characters_are_escaped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'>\u{1}\u{FFFF}\n"),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\u{FFFD}\u{FFFD}&#10;"
        );
    }
}
