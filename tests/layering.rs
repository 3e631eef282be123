//! The layering check: no import cycle between the crate's top-level modules, and every
//! reference from one to another points down the layer list in `src/lib.rs` (`# Layers`).
//!
//! It reads the sources rather than asking the compiler, so it sees what a reader sees: every
//! `crate::x` path (`use`, `pub use`, grouped `use crate::{a, b}`, `$crate::` in macros, and
//! paths written inline in function bodies) and every `super::` path that climbs to the crate
//! root. Test modules count too: a test that imports upwards ties the layers together just the
//! same. Comments, doc comments and string literals do not count. `lib.rs` (the root) and
//! `main.rs` (a separate binary crate) are not modules of the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where the crate's sources are.
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// One `crate::` reference from a file of module `from` to module `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    from: String,
    to: String,
    file: String,
    line: usize,
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = graph(&references());
    let cycles = cycles(&graph);
    if !cycles.is_empty() {
        let mut report = String::from("import cycles between top-level modules:\n");
        for cycle in &cycles {
            let _ = writeln!(report, "  {}", cycle.join(" → "));
            for pair in cycle.windows(2) {
                if let [a, b] = pair {
                    let site = &graph[a][b][0];
                    let _ = writeln!(report, "    {a} → {b} at src/{}:{}", site.file, site.line);
                }
            }
        }
        panic!("{report}");
    }
}

#[test]
fn every_import_points_down_the_layers_written_in_lib_rs() {
    let layers = layers(&read(&Path::new(SRC).join("lib.rs")));
    assert!(
        layers.len() > 1,
        "src/lib.rs has no `# Layers` list of numbered lines (`//! 1. `a`, `b`: ...`)"
    );
    let rank = layer_ranks(&layers);
    let mut problems = Vec::new();
    for module in modules() {
        if !rank.contains_key(&module) {
            problems.push(format!(
                "module `{module}` is on no line of `# Layers` in src/lib.rs; add it to the \
                 layer it belongs to"
            ));
        }
    }
    for r in references() {
        let (Some(&from), Some(&to)) = (rank.get(&r.from), rank.get(&r.to)) else {
            continue;
        };
        if to >= from {
            let direction = if to == from { "beside it" } else { "above it" };
            problems.push(format!(
                "src/{}:{}: `{}` (layer {from}) imports `{}` (layer {to}, {direction}); imports \
                 must point to an earlier line of `# Layers` in src/lib.rs",
                r.file, r.line, r.from, r.to
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The terminal app is a view over the session driver: it gets a running session's feed and
/// command channel, never the interview itself or a store to query, so a frame can never wait
/// on the pipeline or the database.
#[test]
fn the_terminal_app_holds_no_interview_and_no_store() {
    const FORBIDDEN: [&str; 4] = ["Interview", "Store", "StoreOps", "AsyncStore"];
    let mut files = vec![Path::new(SRC).join("tui.rs")];
    rust_files(&Path::new(SRC).join("tui"), &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in &files {
        for (token, line) in tokens(&read(path)) {
            if let Token::Ident(word) = token
                && FORBIDDEN.contains(&word.as_str())
            {
                let rel = path.strip_prefix(SRC).unwrap().display();
                found.push(format!("src/{rel}:{line}: {word}"));
            }
        }
    }
    assert!(
        files.len() > 10,
        "the terminal app's sources were not found: {files:?}"
    );
    assert!(
        found.is_empty(),
        "the terminal app names:\n{}",
        found.join("\n")
    );
}

/// The layer list names each module once.
fn layer_ranks(layers: &[Vec<String>]) -> BTreeMap<String, usize> {
    let mut rank = BTreeMap::new();
    for (i, layer) in layers.iter().enumerate() {
        for module in layer {
            let earlier = rank.insert(module.clone(), i + 1);
            assert!(
                earlier.is_none(),
                "`{module}` is on two lines of `# Layers` in src/lib.rs"
            );
        }
    }
    rank
}

/// The crate's top-level modules: the `src/*.rs` files besides `lib.rs` and `main.rs`.
fn modules() -> BTreeSet<String> {
    std::fs::read_dir(SRC)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".rs")?;
            (stem != "lib" && stem != "main").then(|| stem.to_owned())
        })
        .collect()
}

/// Every reference between two different top-level modules, in file order.
fn references() -> Vec<Reference> {
    let modules = modules();
    let mut files = Vec::new();
    rust_files(Path::new(SRC), &mut files);
    files.sort();
    let mut all = Vec::new();
    for path in files {
        let rel = path.strip_prefix(SRC).unwrap();
        let module_path = module_path(rel);
        let Some(from) = module_path.first().filter(|m| modules.contains(*m)) else {
            continue;
        };
        let file = rel.to_string_lossy().replace('\\', "/");
        for (to, line) in root_paths(&read(&path), &module_path) {
            if modules.contains(&to) && to != *from {
                all.push(Reference {
                    from: from.clone(),
                    to,
                    file: file.clone(),
                    line,
                });
            }
        }
    }
    all
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `pipeline/stages/s03.rs` is module `pipeline::stages::s03`; a `foo/mod.rs` is `foo`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut path: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// `from → to → sites`, only for modules that reference each other.
type Graph = BTreeMap<String, BTreeMap<String, Vec<Reference>>>;

fn graph(references: &[Reference]) -> Graph {
    let mut graph = Graph::new();
    for r in references {
        graph
            .entry(r.from.clone())
            .or_default()
            .entry(r.to.clone())
            .or_default()
            .push(r.clone());
    }
    graph
}

/// One cycle per back edge of a depth-first walk, each as `[a, b, …, a]`; empty when the
/// graph is acyclic.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            match marks.get(next) {
                Some(Mark::Open) => {
                    let start = stack.iter().position(|m| m == next).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(next.clone());
                    found.push(cycle);
                }
                Some(Mark::Done) => {}
                None => visit(next, graph, marks, stack, found),
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
    }
    let mut marks = BTreeMap::new();
    let mut found = Vec::new();
    for node in graph.keys() {
        if !marks.contains_key(node) {
            visit(node, graph, &mut marks, &mut Vec::new(), &mut found);
        }
    }
    found
}

/// The numbered lines of the `# Layers` section of a crate root's `//!` docs: for each, the
/// backticked names before its first colon. `//! 2. `config`: validated YAML` is `["config"]`.
fn layers(lib_rs: &str) -> Vec<Vec<String>> {
    let docs = lib_rs
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim);
    let section = docs
        .skip_while(|l| *l != "# Layers")
        .skip(1)
        .take_while(|l| !l.starts_with('#'));
    section
        .filter_map(|l| {
            let (number, rest) = l.split_once(". ")?;
            (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit())).then_some(rest)
        })
        .map(|rest| {
            let names = rest.split_once(':').map_or(rest, |(names, _)| names);
            names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// A Rust token, as far as paths need one.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other,
}

/// Tokens with their line numbers; comments, strings and character literals are dropped.
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if at(i + 1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == '*' => i = skip_block_comment(&chars, i, &mut line),
            '"' => i = skip_string(&chars, i + 1, None, &mut line),
            '\'' => i = skip_char_or_lifetime(&chars, i),
            c if c.is_alphabetic() || c == '_' => {
                let end = (i..chars.len())
                    .find(|&j| !(chars[j].is_alphanumeric() || chars[j] == '_'))
                    .unwrap_or(chars.len());
                let word: String = chars[i..end].iter().collect();
                let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
                let string_prefix = matches!(word.as_str(), "b" | "c");
                if raw_prefix && matches!(at(end), '"' | '#') {
                    let hashes = (end..chars.len()).take_while(|&j| chars[j] == '#').count();
                    if at(end + hashes) == '"' {
                        i = skip_string(&chars, end + hashes + 1, Some(hashes), &mut line);
                        continue;
                    }
                    // `r#ident`, a raw identifier.
                    let ident_end = (end + 1..chars.len())
                        .find(|&j| !(chars[j].is_alphanumeric() || chars[j] == '_'))
                        .unwrap_or(chars.len());
                    out.push((
                        Token::Ident(chars[end + 1..ident_end].iter().collect()),
                        line,
                    ));
                    i = ident_end;
                    continue;
                }
                if string_prefix && at(end) == '"' {
                    i = skip_string(&chars, end + 1, None, &mut line);
                    continue;
                }
                out.push((Token::Ident(word), line));
                i = end;
            }
            c if c.is_ascii_digit() => {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            ':' if at(i + 1) == ':' => {
                out.push((Token::PathSep, line));
                i += 2;
            }
            '{' => {
                out.push((Token::Open, line));
                i += 1;
            }
            '}' => {
                out.push((Token::Close, line));
                i += 1;
            }
            ',' => {
                out.push((Token::Comma, line));
                i += 1;
            }
            _ => {
                out.push((Token::Other, line));
                i += 1;
            }
        }
    }
    out
}

/// Skips a (nested) block comment starting at `i`; returns the index after it.
fn skip_block_comment(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        match (chars[i], chars.get(i + 1).copied()) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            ('\n', _) => {
                *line += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// Skips a string body starting at `i` (after the opening quote): a plain one (`raw_hashes`
/// `None`, with escapes) up to an unescaped `"`, a raw one up to `"` and its `#`s. Returns the
/// index after it.
fn skip_string(chars: &[char], mut i: usize, raw_hashes: Option<usize>, line: &mut usize) -> usize {
    let hashes = raw_hashes.unwrap_or(0);
    while i < chars.len() {
        match chars[i] {
            '\\' if raw_hashes.is_none() => {
                if chars.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '\n' => {
                *line += 1;
                i += 1;
            }
            '"' if (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) => {
                return i + 1 + hashes;
            }
            _ => i += 1,
        }
    }
    i
}

/// Skips a character literal (`'{'`, `'\''`, `'\u{7b}'`) or the quote of a lifetime or label
/// (`'a`); returns the index after it.
fn skip_char_or_lifetime(chars: &[char], i: usize) -> usize {
    if chars.get(i + 1) == Some(&'\\') {
        let close = (i + 3..chars.len()).find(|&j| chars[j] == '\'');
        return close.map_or(chars.len(), |j| j + 1);
    }
    if chars.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    i + 1
}

/// The top-level modules a file's paths name through the crate root, with their lines:
/// `crate::x`, `$crate::x`, `crate::{x, y}` and `super::…::x` where the `super`s climb to the
/// root from `module_path` (the file's module plus the inline `mod`s around the path).
fn root_paths(text: &str, module_path: &[String]) -> Vec<(String, usize)> {
    let tokens = tokens(text);
    let ident = |i: usize| match tokens.get(i) {
        Some((Token::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let is = |i: usize, t: &Token| tokens.get(i).is_some_and(|(k, _)| k == t);
    let mut found = Vec::new();
    // Inline `mod name { … }` blocks open at the given brace depth.
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Open => depth += 1,
            Token::Close => {
                if inline_mods.last() == Some(&depth) {
                    inline_mods.pop();
                }
                depth -= 1;
            }
            Token::Ident(word)
                if word == "mod" && ident(i + 1).is_some() && is(i + 2, &Token::Open) =>
            {
                inline_mods.push(depth + 1);
            }
            Token::Ident(word) if word == "crate" && is(i + 1, &Token::PathSep) => {
                found.extend(heads(&tokens, i + 2));
            }
            Token::Ident(word) if word == "super" && !(i > 0 && is(i - 1, &Token::PathSep)) => {
                let mut climbs = 0;
                let mut j = i;
                while ident(j) == Some("super") && is(j + 1, &Token::PathSep) {
                    climbs += 1;
                    j += 2;
                }
                if climbs == module_path.len() + inline_mods.len() {
                    found.extend(heads(&tokens, j));
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The first segment of the path that starts at token `i`, or of each entry of a group there
/// (`{a::X, b}` gives `a` and `b`).
fn heads(tokens: &[(Token, usize)], i: usize) -> Vec<(String, usize)> {
    match tokens.get(i) {
        Some((Token::Ident(name), line)) => vec![(name.clone(), *line)],
        Some((Token::Open, _)) => {
            let mut heads = Vec::new();
            let mut depth = 0;
            let mut entry_start = true;
            for (token, line) in &tokens[i..] {
                match token {
                    Token::Open => {
                        depth += 1;
                        entry_start = depth == 1;
                    }
                    Token::Close => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Token::Comma => entry_start = depth == 1,
                    Token::Ident(name) if entry_start => {
                        heads.push((name.clone(), *line));
                        entry_start = false;
                    }
                    _ => entry_start = false,
                }
            }
            heads
        }
        _ => Vec::new(),
    }
}

#[test]
fn paths_are_found_in_uses_groups_bodies_and_macros_but_not_comments_or_strings() {
    let text = r##"
use crate::config::Methodology;
pub use crate::{domain::Phase, graph::{model::KgNode, surface}};
// crate::commented
/* crate::blocked /* crate::nested */ */
const S: &str = "crate::quoted \" crate::escaped";
const R: &str = r#"crate::raw " crate::still_raw"#;
const C: char = '{';
fn f<'a>(x: &'a str) -> usize {
    let _ = b"crate::bytes";
    crate::scoring::select(x);
    $crate::signals::run();
    '"'.len_utf8()
}
"##;
    let found = root_paths(text, &["pipeline".to_owned()]);
    let names: Vec<(&str, usize)> = found.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    assert_eq!(
        names,
        [
            ("config", 2),
            ("domain", 3),
            ("graph", 3),
            ("scoring", 11),
            ("signals", 12)
        ]
    );
}

#[test]
fn super_paths_count_only_when_they_climb_to_the_root() {
    let text = "
use super::sibling::Thing;
mod tests {
    use super::super::config::X;
    use super::super::super::graph::Y;
}
use super::super::domain::Z;
";
    // In `src/pipeline/stages.rs`: two `super`s reach the root, three inside `mod tests`.
    let path = ["pipeline".to_owned(), "stages".to_owned()];
    let found = root_paths(text, &path);
    assert_eq!(
        found,
        [("graph".to_owned(), 5), ("domain".to_owned(), 7)],
        "{found:?}"
    );
}

#[test]
fn cycles_are_reported_as_closed_paths() {
    let refs: Vec<Reference> = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
        .iter()
        .map(|(from, to)| Reference {
            from: (*from).to_owned(),
            to: (*to).to_owned(),
            file: format!("{from}.rs"),
            line: 1,
        })
        .collect();
    assert_eq!(cycles(&graph(&refs)), [["a", "b", "c", "a"]]);
    assert!(cycles(&graph(&refs[..2])).is_empty());
}

#[test]
fn the_layer_list_is_read_from_numbered_doc_lines() {
    let lib = "//! Intro.\n//!\n//! # Layers\n//!\n//! Prose with `ticks`.\n//!\n\
               //! 1. `a`, `b`: leaves, and `c` is not named here.\n//!    more prose\n\
               //! 2. `c`: the rest.\n//!\n//! # Next\n//! 3. `d`: not a layer.\n\nmod a;\n";
    assert_eq!(layers(lib), [vec!["a", "b"], vec!["c"]]);
}
