//! Typing a phrase against the methodology's node types by `MiniLM` similarity.
//!
//! Each node type is represented by the embeddings of its name (underscores as spaces), its
//! description and each of its examples, all computed once per session in one batch. A phrase
//! scores against a type as a weighted blend: the best example counts most, because examples
//! are short phrases like the labels being typed; the description and the name break ties
//! between types whose examples are all far away.

use crate::config::Methodology;
use crate::embed::{EmbedError, Embedder};
use crate::graph::similarity::cosine;
use crate::srl::{self, WordClass};

use super::phrases::Shape;

/// Weight of the closest example in a type's score: examples are phrased like labels, so
/// they are the best evidence.
const EXAMPLE_WEIGHT: f32 = 0.55;
/// Weight of the mean of the two closest examples, so one lucky example does not decide.
const EXAMPLE_PAIR_WEIGHT: f32 = 0.15;
/// Weight of the description: long text, so its similarity to a short phrase is low but
/// informative when no example is near.
const DESCRIPTION_WEIGHT: f32 = 0.2;
/// Weight of the type's name ("functional consequence").
const NAME_WEIGHT: f32 = 0.1;
/// Weight of shape agreement: the share of a type's examples shaped like the phrase (noun
/// phrase, verb phrase, "being …"). Similarities of short phrases to the types differ by a few
/// hundredths, so this settles close calls (a verb phrase is rarely an attribute) without
/// overriding a clear semantic match.
const SHAPE_WEIGHT: f32 = 0.06;

/// One node type's embedded description.
#[derive(Debug, Clone)]
struct TypeEntry {
    name: String,
    level: u32,
    name_vec: Vec<f32>,
    description_vec: Option<Vec<f32>>,
    example_vecs: Vec<Vec<f32>>,
    /// The first word every example shares ("being" for instrumental values), which the
    /// naming convention then asks of every label of the type.
    prefix: Option<String>,
    /// Share of the examples that are noun phrases, verb phrases and "being" phrases.
    shapes: [f32; 3],
}

fn shape_slot(shape: Shape) -> usize {
    match shape {
        Shape::Nominal => 0,
        Shape::Verbal => 1,
        Shape::Being => 2,
    }
}

/// The shape of an example phrase read in isolation, where the tagger cannot tell a leading
/// verb by its position: a known verb form counts as a verb.
fn example_shape(example: &str) -> Shape {
    let words = srl::tag_words(example);
    let Some(first) = words.first() else {
        return Shape::Nominal;
    };
    let verb_at = |w: &srl::TaggedWord| {
        matches!(w.class, WordClass::Verb | WordClass::Auxiliary) || srl::is_known_verb(&w.norm)
    };
    if first.norm == "being" {
        Shape::Being
    } else if verb_at(first)
        || (first.class == WordClass::Negation && words.get(1).is_some_and(verb_at))
    {
        Shape::Verbal
    } else {
        Shape::Nominal
    }
}

/// Shares of the three shapes among `examples` (all zero without examples).
fn shape_shares(examples: &[String]) -> [f32; 3] {
    let mut counts = [0_u32; 3];
    for e in examples {
        if let Some(c) = counts.get_mut(shape_slot(example_shape(e))) {
            *c += 1;
        }
    }
    let total = counts.iter().sum::<u32>().max(1) as f32;
    counts.map(|c| c as f32 / total)
}

/// Examples a type needs before a first word they all share counts as a naming rule.
const MIN_EXAMPLES_FOR_PREFIX: usize = 3;

/// The first word all `examples` share, when there are enough of them.
fn shared_first_word(examples: &[String]) -> Option<String> {
    if examples.len() < MIN_EXAMPLES_FOR_PREFIX {
        return None;
    }
    let first = |e: &String| e.split_whitespace().next().map(str::to_lowercase);
    let word = first(examples.first()?)?;
    examples
        .iter()
        .all(|e| first(e).as_deref() == Some(word.as_str()))
        .then_some(word)
}

/// The methodology's node types, embedded; built once per session.
#[derive(Debug, Clone)]
pub struct TypeIndex {
    entries: Vec<TypeEntry>,
}

/// The type a phrase was given, with how clearly it won.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeMatch {
    pub node_type: String,
    /// Ontology level of the type (lower is more concrete).
    pub level: u32,
    /// The blended similarity of the winning type.
    pub score: f32,
    /// Winning score minus the runner-up's (0 with a single type).
    pub margin: f32,
}

impl TypeIndex {
    /// Embeds each node type's name, description and examples (from the methodology YAML), in
    /// one embedding call.
    pub fn build(methodology: &Methodology, embedder: &dyn Embedder) -> Result<Self, EmbedError> {
        let nodes = &methodology.ontology.nodes;
        let mut texts: Vec<String> = Vec::new();
        for node in nodes {
            texts.push(node.name.replace('_', " "));
            texts.push(node.description.trim().to_owned());
            texts.extend(node.examples.iter().map(|e| e.trim().to_owned()));
            texts.extend(node.phrasings.iter().map(|e| e.trim().to_owned()));
        }
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut vectors = embedder.embed(&refs)?.into_iter();
        let mut entries = Vec::with_capacity(nodes.len());
        for node in nodes {
            let name_vec = vectors.next().unwrap_or_default();
            let description_vec = vectors
                .next()
                .filter(|_| !node.description.trim().is_empty());
            let example_vecs: Vec<Vec<f32>> = vectors
                .by_ref()
                .take(node.examples.len() + node.phrasings.len())
                .collect();
            entries.push(TypeEntry {
                name: node.name.clone(),
                level: node.level,
                name_vec,
                description_vec,
                example_vecs,
                prefix: shared_first_word(&node.examples),
                shapes: shape_shares(&node.examples),
            });
        }
        Ok(Self { entries })
    }

    /// Whether a node type of this name is indexed.
    pub fn has_type(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    /// Number of node types indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `label` as the type's naming convention wants it: a noun or adjective phrase prefixed
    /// with the first word all of the type's examples share ("patient with my kids" →
    /// "being patient with my kids"). Verb phrases and labels that already start with it are
    /// left alone.
    pub fn conventional_label(&self, node_type: &str, label: &str) -> String {
        // "not an eco warrior" → "not being an eco warrior": the denial stays in front.
        if let Some(denied) = label.strip_prefix("not ") {
            let named = self.conventional_label(node_type, denied);
            return format!("not {named}");
        }
        let prefix = self
            .entries
            .iter()
            .find(|e| e.name == node_type)
            .and_then(|e| e.prefix.as_deref());
        let first = label.split_whitespace().next();
        let verbal = first.is_some_and(srl::is_known_verb);
        match prefix {
            Some(p) if first != Some(p) && !verbal => {
                let words = srl::tag_words(label);
                if names_a_thing(&words) || says_of_a_subject(&words) {
                    label.to_owned()
                } else {
                    format!("{p} {}", with_article(label, &words))
                }
            }
            _ => label.to_owned(),
        }
    }

    /// The best type for an embedded phrase, or `None` when the index holds no type.
    pub fn classify(&self, phrase: &[f32]) -> Option<TypeMatch> {
        self.rank(phrase, None, |_| true)
    }

    /// [`TypeIndex::classify_among`] with the phrase's grammatical shape weighed in.
    pub(super) fn classify_shaped_among(
        &self,
        phrase: &[f32],
        shape: Shape,
        allowed: impl Fn(&str) -> bool,
    ) -> Option<TypeMatch> {
        self.rank(phrase, Some(shape), allowed)
    }

    /// The best type for an embedded phrase among the types `allowed` accepts by name.
    pub fn classify_among(
        &self,
        phrase: &[f32],
        allowed: impl Fn(&str) -> bool,
    ) -> Option<TypeMatch> {
        self.rank(phrase, None, allowed)
    }

    fn rank(
        &self,
        phrase: &[f32],
        shape: Option<Shape>,
        allowed: impl Fn(&str) -> bool,
    ) -> Option<TypeMatch> {
        let mut scored: Vec<(&TypeEntry, f32)> = self
            .entries
            .iter()
            .filter(|e| allowed(&e.name))
            .map(|e| {
                let agreement =
                    shape.map_or(0.0, |s| e.shapes.get(shape_slot(s)).copied().unwrap_or(0.0));
                (e, score(e, phrase) + SHAPE_WEIGHT * agreement)
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut ranked = scored.into_iter();
        let (best, best_score) = ranked.next()?;
        let margin = ranked.next().map_or(0.0, |(_, s)| best_score - s);
        Some(TypeMatch {
            node_type: best.name.clone(),
            level: best.level,
            score: best_score,
            margin,
        })
    }
}

/// The label names a thing one has or gets, not a way of being ("being a more patience"): a
/// noun phrase headed (before any preposition) by an abstract noun ("more patience",
/// "independence", "freedom") or by time ("half hour for myself"). Read alone, "patient" tags as a noun too ("more patient with
/// my kids"), so a noun of any other form is not enough.
fn names_a_thing(words: &[srl::TaggedWord]) -> bool {
    let head = words
        .iter()
        .take_while(|w| w.class != WordClass::Preposition)
        .last();
    head.is_some_and(|h| {
        h.class == WordClass::Noun
            && (["ness", "ence", "ance", "dom", "ity", "ment"]
                .iter()
                .any(|suffix| h.norm.ends_with(suffix))
                // "half hour for myself", "time to myself": time one has.
                || super::lexicon::is_time_word(&h.norm)
                || h.norm == "time")
    })
}

/// The label is a subject and what is said of it, its verb dropped ("money tight", from
/// "money was really tight"): no way of being of the respondent's, and "being money tight"
/// is no English.
fn says_of_a_subject(words: &[srl::TaggedWord]) -> bool {
    matches!(words, [subject, .., said]
        if subject.class == WordClass::Noun
            && said.class == WordClass::Adjective
            && !srl::is_person_word(&subject.norm))
}

/// A label that is one singular noun after its adjectives ("patient dad") with the article
/// the naming convention dropped, so that "being …" reads as English ("being a patient dad"),
/// and "kind of …" with its "the" ("being the kind of manager people can come to"); anything
/// else as it is ("patient with my kids", "health-conscious"). `words` are the
/// label's, tagged.
fn with_article(label: &str, words: &[srl::TaggedWord]) -> String {
    // "being the kind of manager people can come to".
    if let [kind, of, ..] = words
        && matches!(kind.norm.as_str(), "kind" | "sort" | "type")
        && of.norm == "of"
    {
        return format!("the {label}");
    }
    let Some((head, modifiers)) = words.split_last() else {
        return label.to_owned();
    };
    let singular_noun = head.class == WordClass::Noun && !head.norm.ends_with('s');
    // Read alone, "patient" in "patient dad" tags as a noun: before a word for a person,
    // any modifier is taken as describing them.
    let describes = |w: &srl::TaggedWord| {
        w.class == WordClass::Adjective
            || (w.class == WordClass::Noun && srl::is_person_word(&head.norm))
            || matches!(w.norm.as_str(), "more" | "less")
    };
    let adjectives = !modifiers.is_empty() && modifiers.iter().all(describes);
    if !(singular_noun && adjectives) {
        return label.to_owned();
    }
    let article = if label.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {label}")
}

fn score(entry: &TypeEntry, phrase: &[f32]) -> f32 {
    let mut sims: Vec<f32> = entry
        .example_vecs
        .iter()
        .map(|v| cosine(phrase, v))
        .collect();
    sims.sort_by(|a, b| b.total_cmp(a));
    let name = cosine(phrase, &entry.name_vec);
    let description = entry
        .description_vec
        .as_ref()
        .map_or(name, |v| cosine(phrase, v));
    let (best, pair) = match sims.as_slice() {
        [] => (description, description),
        [one] => (*one, *one),
        [a, b, ..] => (*a, (a + b) / 2.0),
    };
    EXAMPLE_WEIGHT * best
        + EXAMPLE_PAIR_WEIGHT * pair
        + DESCRIPTION_WEIGHT * description
        + NAME_WEIGHT * name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;

    fn mec() -> Methodology {
        crate::config::shipped_methodology("means_end_chain")
    }

    #[test]
    fn indexes_every_type_and_classifies_an_example_as_its_type() {
        let embedder = HashEmbedder::new(384);
        let m = mec();
        let index = TypeIndex::build(&m, &embedder).unwrap();
        assert_eq!(index.len(), m.ontology.nodes.len());
        // Character trigrams make an example nearest to itself.
        let v = embedder.embed(&["being considerate of others"]).unwrap();
        let hit = index.classify(&v[0]).unwrap();
        assert_eq!(hit.node_type, "instrumental_value");
        assert_eq!(hit.level, 4);
        assert!(hit.margin > 0.0);
        let only = index.classify_among(&v[0], |t| t == "attribute").unwrap();
        assert_eq!(only.node_type, "attribute");
        assert_eq!(only.margin, 0.0);
        assert!(index.classify_among(&v[0], |_| false).is_none());
    }

    #[test]
    fn labels_follow_a_prefix_all_examples_share() {
        let index = TypeIndex::build(&mec(), &HashEmbedder::new(64)).unwrap();
        let value = "instrumental_value";
        for (node_type, label, named) in [
            (value, "patient with my kids", "being patient with my kids"),
            (value, "being responsible", "being responsible"),
            ("attribute", "creamy", "creamy"),
            (value, "patient mum", "being a patient mum"),
            // Seen in a headless run: "I've got more patience" asked back as "being a more
            // patience"; a thing one has is not forced into the being form.
            (value, "more patience", "more patience"),
            (value, "not shouty mum", "not being a shouty mum"),
            // Seen in a tmux run: "money was really tight" asked back as "being money tight".
            (value, "money tight", "money tight"),
            (value, "patient dad", "being a patient dad"),
            // A verb phrase is not forced into the being form.
            (value, "sound professional", "sound professional"),
        ] {
            assert_eq!(index.conventional_label(node_type, label), named, "{label}");
        }
    }

    #[test]
    fn example_shapes_come_from_the_yaml() {
        let m = mec();
        let shares = |name: &str| shape_shares(&m.node_type(name).unwrap().examples);
        assert_eq!(shares("instrumental_value"), [0.0, 0.0, 1.0]);
        assert!(
            shares("functional_consequence")[1] >= 0.8,
            "{:?}",
            shares("functional_consequence")
        );
        assert!(shares("attribute")[0] >= 0.8, "{:?}", shares("attribute"));
    }
}
