//! Reply budgets for schema-constrained replies: every structured reply closes within its
//! token budget.
//!
//! The engine decodes freely until the budget left falls to a *reserve*, then closes the reply
//! along the shortest way the schema allows (end the open string, end arrays, take forced keys,
//! the likeliest enum value). This module sizes both sides from the schema:
//!
//! - the **reserve** is an upper bound of the tokens that closing needs from any point inside
//!   the reply: every still-required key with its shortest value, plus the longest enum value
//!   or minimum string that may be open, counted with the model's tokenizer;
//! - the **floor** is what closing needs from the very start (the shortest reply); a budget
//!   below it is raised to it, since a shorter reply cannot be valid JSON;
//! - the **bounds**: arrays without `maxItems` and strings without `maxLength` get one, and
//!   bounds the budget cannot fill are lowered so the content the model writes before closing
//!   is whole entries rather than a cut-off one (ordinary text runs about
//!   [`CHARS_PER_TOKEN`] characters per token).
//!
//! The schemas the pipeline sends already carry bounds; this makes the guarantee hold for any
//! `max_tokens` (a user's `LLM_EXTRACTION_MAX_TOKENS=64`, a long prompt leaving little
//! context) and for schemas from elsewhere. `$ref`, `allOf` and pattern-only strings are
//! costed conservatively, not resolved.

use serde_json::{Map, Value, json};

/// Tokens added to the closing cost: forced text may split into one token more than its
/// canonical tokenization where it meets sampled text.
const CLOSING_MARGIN: usize = 4;
/// Characters per token of ordinary English, for sizing string and array bounds.
const CHARS_PER_TOKEN: usize = 4;
/// `maxItems` given to arrays that have none, before sizing to the budget.
const DEFAULT_MAX_ITEMS: usize = 16;
/// `maxLength` given to free strings that have none, before sizing to the budget.
const DEFAULT_MAX_CHARS: usize = 400;
/// Cost assumed for a part of a schema this module does not model (`$ref`, `{}`): any JSON
/// value closes in a few tokens along the closers, but its depth is unknown.
const UNKNOWN_COST: usize = 16;

/// A schema made safe for a budget.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Budgeted {
    /// The schema with bounds added or lowered.
    pub(super) schema: Value,
    /// Tokens to keep for closing: steering starts when no more are left.
    pub(super) reserve: usize,
    /// Tokens of the shortest reply the closing steering produces from the start.
    pub(super) floor: usize,
}

/// Bounds `schema` for a reply of `budget` tokens; `count` gives a text's token count.
pub(super) fn budget_schema(
    schema: &Value,
    budget: usize,
    count: &dyn Fn(&str) -> usize,
) -> Budgeted {
    let costs = Costs { count };
    let mut schema = schema.clone();
    add_missing_bounds(&mut schema);
    if let Some(root) = schema.as_object_mut() {
        root.entry("x-guidance").or_insert_with(compact_guidance);
    }
    let floor = costs.floor(&schema);
    let reserve = costs.closing(&schema) + CLOSING_MARGIN;
    let allowance = budget.saturating_sub(reserve).saturating_sub(floor);
    costs.fit(&mut schema, allowance);
    Budgeted {
        schema,
        reserve,
        floor,
    }
}

/// llguidance options for schemas that bring none: no free whitespace (a small model can
/// otherwise write newlines until the budget is gone) and compact separators.
fn compact_guidance() -> Value {
    json!({"whitespace_flexible": false, "key_separator": ": ", "item_separator": ", "})
}

/// What a schema node describes, as far as costs go.
enum Kind<'a> {
    /// `enum` or `const`: one of these values.
    Values(Vec<&'a Value>),
    Object(&'a Map<String, Value>, Vec<&'a str>),
    Array(Option<&'a Value>, usize),
    String(usize),
    Number,
    Literal,
    Alternatives(Vec<&'a Value>),
    Unknown,
}

fn kind(node: &Value) -> Kind<'_> {
    let get = |key: &str| node.get(key);
    if let Some(Value::Array(values)) = get("enum") {
        return Kind::Values(values.iter().collect());
    }
    if let Some(value) = get("const") {
        return Kind::Values(vec![value]);
    }
    if let Some(Value::Array(options)) = get("anyOf").or_else(|| get("oneOf")) {
        return Kind::Alternatives(options.iter().collect());
    }
    let min = |key: &str| {
        get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    };
    match get("type").and_then(Value::as_str) {
        Some("object") => {
            let empty = empty_map();
            let properties = get("properties")
                .and_then(Value::as_object)
                .unwrap_or(empty);
            let required = get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            Kind::Object(properties, required)
        }
        Some("array") => Kind::Array(get("items"), min("minItems")),
        Some("string") => Kind::String(min("minLength")),
        Some("number" | "integer") => Kind::Number,
        Some("boolean" | "null") => Kind::Literal,
        _ => Kind::Unknown,
    }
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// Adds `maxItems` to arrays and `maxLength` to free strings that lack them, everywhere.
fn add_missing_bounds(node: &mut Value) {
    let Some(map) = node.as_object_mut() else {
        return;
    };
    let free = !map.contains_key("enum") && !map.contains_key("const");
    match map.get("type").and_then(Value::as_str) {
        Some("array") if free => {
            map.entry("maxItems").or_insert(json!(DEFAULT_MAX_ITEMS));
        }
        Some("string") if free => {
            map.entry("maxLength").or_insert(json!(DEFAULT_MAX_CHARS));
        }
        _ => {}
    }
    for (key, child) in map.iter_mut() {
        match key.as_str() {
            "items" => add_missing_bounds(child),
            "properties" => child
                .as_object_mut()
                .into_iter()
                .flat_map(|props| props.values_mut())
                .for_each(add_missing_bounds),
            "anyOf" | "oneOf" => child
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(add_missing_bounds),
            _ => {}
        }
    }
}

/// Token costs of schema nodes, counted with the model's tokenizer.
struct Costs<'c> {
    count: &'c dyn Fn(&str) -> usize,
}

impl Costs<'_> {
    /// Tokens of a key with its separators, as the grammar forces it.
    fn key(&self, name: &str) -> usize {
        (self.count)(&format!(", \"{name}\": ")) + 1
    }

    fn values(&self, values: &[&Value]) -> usize {
        values
            .iter()
            .map(|v| (self.count)(&v.to_string()) + 1)
            .max()
            .unwrap_or(1)
    }

    /// Tokens of the reply the closing steering writes for `node` from its start.
    fn floor(&self, node: &Value) -> usize {
        match kind(node) {
            Kind::Values(values) => self.values(&values),
            Kind::Object(properties, required) => {
                2 + required
                    .iter()
                    .map(|name| {
                        self.key(name)
                            + properties
                                .get(*name)
                                .map_or(UNKNOWN_COST, |p| self.floor(p))
                    })
                    .sum::<usize>()
            }
            Kind::Array(items, min_items) => {
                2 + min_items * (items.map_or(UNKNOWN_COST, |i| self.floor(i)) + 1)
            }
            Kind::String(min_length) => 2 + min_length,
            Kind::Number => 4,
            Kind::Literal => 2,
            Kind::Alternatives(options) => options.iter().map(|o| self.floor(o)).max().unwrap_or(1),
            Kind::Unknown => UNKNOWN_COST,
        }
    }

    /// Most tokens closing needs from any point inside `node`. Properties come in schema order
    /// (llguidance keeps it), so closing inside one property still owes that property's end and
    /// every required property after it.
    fn closing(&self, node: &Value) -> usize {
        match kind(node) {
            Kind::Values(values) => self.values(&values),
            Kind::Object(properties, required) => {
                let names: Vec<&String> = properties.keys().collect();
                let worst = names
                    .iter()
                    .enumerate()
                    .map(|(index, name)| {
                        let after: usize = names
                            .iter()
                            .skip(index + 1)
                            .filter(|later| required.contains(&later.as_str()))
                            .map(|later| {
                                let value = properties.get(later.as_str());
                                self.key(later) + value.map_or(UNKNOWN_COST, |v| self.floor(v))
                            })
                            .sum();
                        let own = properties
                            .get(name.as_str())
                            .map_or(UNKNOWN_COST, |p| self.closing(p));
                        self.key(name) + own + after
                    })
                    .max()
                    .unwrap_or(0);
                worst + 1
            }
            Kind::Array(items, min_items) => {
                let (close, floor) = items.map_or((UNKNOWN_COST, UNKNOWN_COST), |i| {
                    (self.closing(i), self.floor(i))
                });
                close + 1 + min_items * (floor + 1)
            }
            // The closing quote, characters still owed to `minLength`, a pending escape.
            Kind::String(min_length) => min_length + 3,
            Kind::Number => 4,
            Kind::Literal => 2,
            Kind::Alternatives(options) => {
                options.iter().map(|o| self.closing(o)).max().unwrap_or(1)
            }
            Kind::Unknown => UNKNOWN_COST,
        }
    }

    /// Tokens of a typical full `node`: strings at their length bound, arrays full.
    fn typical(&self, node: &Value) -> usize {
        match kind(node) {
            Kind::Object(properties, _) => {
                2 + properties
                    .iter()
                    .map(|(name, p)| self.key(name) + self.typical(p))
                    .sum::<usize>()
            }
            Kind::Array(items, _) => {
                let item = items.map_or(UNKNOWN_COST, |i| self.typical(i)) + 1;
                2 + max_items(node) * item
            }
            Kind::String(_) => 2 + max_length(node).div_ceil(CHARS_PER_TOKEN),
            _ => self.floor(node),
        }
    }

    /// Lowers `node`'s bounds so its content beyond the floor fits `allowance` tokens.
    fn fit(&self, node: &mut Value, allowance: usize) {
        /// What to change, decided before `node` is borrowed mutably.
        enum Plan {
            String { min_length: usize },
            Array { min_items: usize, each: usize },
            Object,
            Alternatives,
            Nothing,
        }
        let plan = match kind(node) {
            Kind::String(min_length) => Plan::String { min_length },
            Kind::Array(Some(items), min_items) => Plan::Array {
                min_items,
                each: self.typical(items) + 1,
            },
            Kind::Object(..) => Plan::Object,
            Kind::Alternatives(_) => Plan::Alternatives,
            _ => Plan::Nothing,
        };
        match plan {
            Plan::String { min_length } => {
                let fits = min_length + allowance * CHARS_PER_TOKEN;
                let bound = max_length(node).min(fits).max(min_length);
                set(node, "maxLength", bound);
            }
            Plan::Array { min_items, each } => {
                let extra = allowance / each.max(1);
                let bound = max_items(node).min(min_items + extra).max(min_items);
                set(node, "maxItems", bound);
                let per_item = allowance / bound.max(1);
                if let Some(items) = node.get_mut("items") {
                    self.fit(items, per_item);
                }
            }
            Plan::Object => self.fit_properties(node, allowance),
            Plan::Alternatives => {
                for key in ["anyOf", "oneOf"] {
                    if let Some(Value::Array(options)) = node.get_mut(key) {
                        for option in options {
                            self.fit(option, allowance);
                        }
                    }
                }
            }
            Plan::Nothing => {}
        }
    }

    /// Shares `allowance` among an object's properties in proportion to how much each could
    /// write beyond its floor.
    fn fit_properties(&self, node: &mut Value, allowance: usize) {
        let Some(Value::Object(properties)) = node.get_mut("properties") else {
            return;
        };
        let wants: Vec<usize> = properties
            .values()
            .map(|p| self.typical(p).saturating_sub(self.floor(p)))
            .collect();
        let total: usize = wants.iter().sum();
        if total == 0 {
            return;
        }
        for (property, want) in properties.values_mut().zip(wants) {
            let share = allowance.saturating_mul(want) / total;
            self.fit(property, share);
        }
    }
}

fn bound(node: &Value, key: &str, default: usize) -> usize {
    node.get(key)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(default)
}

fn max_items(node: &Value) -> usize {
    bound(node, "maxItems", DEFAULT_MAX_ITEMS)
}

fn max_length(node: &Value) -> usize {
    bound(node, "maxLength", DEFAULT_MAX_CHARS)
}

fn set(node: &mut Value, key: &str, value: usize) {
    if let Some(map) = node.as_object_mut() {
        map.insert(key.to_owned(), json!(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One token per four characters, at least one: close enough to a BPE tokenizer on JSON
    /// punctuation and English keys for these tests.
    fn count(text: &str) -> usize {
        text.chars().count().div_ceil(4).max(1)
    }

    fn extraction_like() -> Value {
        let label = json!({"type": "string", "minLength": 1, "maxLength": 60});
        json!({
            "type": "object",
            "properties": {
                "concepts": {"type": "array", "maxItems": 8, "items": {
                    "type": "object",
                    "properties": {
                        "label": label,
                        "node_type": {"enum": ["attribute", "terminal_value"]},
                        "source_quote": {"type": "string", "maxLength": 120},
                    },
                    "required": ["label", "node_type", "source_quote"],
                }},
                "relationships": {"type": "array", "maxItems": 8, "items": {
                    "type": "object",
                    "properties": {"source": label, "target": label},
                    "required": ["source", "target"],
                }},
            },
            "required": ["concepts", "relationships"],
        })
    }

    #[test]
    fn missing_bounds_are_added_and_guidance_is_compact() {
        let schema = json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"type": "string", "enum": ["a", "b"]},
        }});
        let out = budget_schema(&schema, 10_000, &count).schema;
        assert_eq!(
            out["properties"]["tags"]["maxItems"],
            json!(DEFAULT_MAX_ITEMS)
        );
        assert_eq!(
            out["properties"]["tags"]["items"]["maxLength"],
            json!(DEFAULT_MAX_CHARS)
        );
        assert!(out["properties"]["kind"].get("maxLength").is_none());
        assert_eq!(out["x-guidance"]["whitespace_flexible"], json!(false));
    }

    #[test]
    fn a_generous_budget_keeps_the_schema_bounds() {
        let out = budget_schema(&extraction_like(), 100_000, &count);
        assert_eq!(out.schema["properties"]["concepts"]["maxItems"], json!(8));
        let label = &out.schema["properties"]["concepts"]["items"]["properties"]["label"];
        assert_eq!(label["maxLength"], json!(60));
    }

    #[test]
    fn small_budgets_lower_the_bounds_down_to_empty_arrays() {
        let generous = budget_schema(&extraction_like(), 100_000, &count);
        let items = |b: &Budgeted, array: &str| b.schema["properties"][array]["maxItems"].clone();
        let roomy = generous.reserve + generous.floor + 300;
        let mid = budget_schema(&extraction_like(), roomy, &count);
        let concepts = items(&mid, "concepts").as_u64().unwrap();
        assert!((1..8).contains(&concepts), "{concepts}");
        let tiny = budget_schema(&extraction_like(), 20, &count);
        assert_eq!(items(&tiny, "concepts"), json!(0));
        assert_eq!(items(&tiny, "relationships"), json!(0));
        // Floor and reserve describe the schema, not the budget.
        assert_eq!(
            (tiny.floor, tiny.reserve),
            (generous.floor, generous.reserve)
        );
    }

    #[test]
    fn closing_costs_cover_the_required_keys_and_the_deepest_open_value() {
        let costs = Costs { count: &count };
        let schema = extraction_like();
        let floor = costs.floor(&schema);
        // `{` `}` plus both keys with an empty array each.
        assert_eq!(
            floor,
            2 + costs.key("concepts") + 2 + costs.key("relationships") + 2
        );
        // Inside the first concept's label: its key and end, the later required keys with
        // their shortest values, `}`, `]`, the relationships key with `[]`, `}`.
        let concept = &schema["properties"]["concepts"]["items"];
        let label = &concept["properties"]["label"];
        let rest: usize = ["node_type", "source_quote"]
            .iter()
            .map(|k| costs.key(k) + costs.floor(&concept["properties"][k]))
            .sum();
        let inside_label = costs.key("label") + costs.closing(label) + rest + 1;
        let relationships = costs.key("relationships") + 2;
        assert_eq!(
            costs.closing(&schema),
            costs.key("concepts") + inside_label + 1 + relationships + 1
        );
        let enums = json!({"enum": ["attribute", "terminal_value"]});
        assert_eq!(costs.closing(&enums), count("\"terminal_value\"") + 1);
        let string = json!({"type": "string", "minLength": 2});
        assert_eq!((costs.floor(&string), costs.closing(&string)), (4, 5));
    }
}
