//! Stage 3 without a model: the answer's phrases typed by `MiniLM` similarity and linked by its
//! connectives, returned as the same [`Extraction`] the LLM path parses.
//!
//! One embedding call per answer embeds every candidate label; a phrase's type is the nearest
//! among those its wording allows (`cues`), or among all types when no cue applies.
//! Confidence is derived, not
//! guessed: 0.6 for any phrase, +0.1 when it fills a syntactic role of a frame (subject,
//! predicate, object or description) rather than being a fragment, +0.1 when its type wins by
//! a clear margin ([`CLEAR_TYPE_MARGIN`]), so 0.6–0.8. Stance comes from the affect lexicon
//! over the label's words with negation ("not watery" +1, "feel less guilty" +1).

use crate::config::Methodology;
use crate::embed::{EmbedError, Embedder};
use crate::graph::surface::{ExtractedConcept, ExtractedRelationship, norm};
use crate::prompts::Extraction;
use crate::srl::{self, DiscourseRelation, RelationKind, SrlAnalysis, WordClass};

use super::cues::{self, Cue};
use super::lexicon;
use super::links::{self, Node};
use super::phrases::{self, Origin, Phrase, Shape};
use super::types::{TypeIndex, TypeMatch};

/// Confidence of every offline concept before the bonuses below.
const BASE_CONFIDENCE: f64 = 0.6;
/// Bonus for a phrase that fills a frame's role: its extent is grammatical, not guessed.
const ROLE_BONUS: f64 = 0.1;
/// Bonus for a type that wins by at least [`CLEAR_TYPE_MARGIN`].
const TYPE_BONUS: f64 = 0.1;
/// Blended-similarity lead over the runner-up type above which the typing counts as clear;
/// `MiniLM` similarities of short phrases to the ontology differ by a few hundredths.
const CLEAR_TYPE_MARGIN: f32 = 0.03;

/// The node type of a product's properties, where the ontology has one (means-end chains): a
/// phrase said of the product itself ("it's so creamy") takes it.
const PROPERTY_TYPE: &str = "attribute";

/// What offline extraction reads for one answer.
#[derive(Debug, Clone, Copy)]
pub struct OfflineInput<'a> {
    pub methodology: &'a Methodology,
    pub answer: &'a str,
    /// The question being answered (may be empty).
    pub question: &'a str,
    /// Stage 2.5's analysis of `answer`; when it is empty (SRL switched off) the answer is
    /// analysed here, since offline extraction cannot work without frames.
    pub srl: &'a SrlAnalysis,
}

/// A concept already in the session graph.
#[derive(Debug, Clone, Copy)]
pub struct KnownConcept<'a> {
    pub label: &'a str,
    pub node_type: &'a str,
}

/// What the session adds to one answer: the interview topic and the graph so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnContext<'a> {
    /// The concept's topic or product name ("oat milk"): a phrase made only of its words is
    /// the subject of the whole interview, not a concept of this answer.
    pub topic: &'a str,
    /// Concepts already in the graph: a phrase with the same label reuses it (and its type),
    /// and an answer to a probe about one of them ("Why does X matter to you?") links it to
    /// the answer's concepts.
    pub known: &'a [KnownConcept<'a>],
    /// The concept the question being answered was about, when the interviewer chose one:
    /// the answer is read as a probe about it even where the question words it otherwise
    /// ("Why do you think the wrong strength got through?" about "boxes were a different
    /// strength").
    pub focus: Option<KnownConcept<'a>>,
}

/// Stage 3 offline. Same output contract as `prompts::parse_extraction_reply` returns
/// ([`Extraction`]); every `source_quote` is a byte slice of the answer.
pub fn extract_offline(
    input: &OfflineInput<'_>,
    types: &TypeIndex,
    embedder: &dyn Embedder,
) -> Result<Extraction, EmbedError> {
    extract_offline_in_context(input, &TurnContext::default(), types, embedder)
}

/// [`extract_offline`] with the session's topic and known concepts (see [`TurnContext`]).
pub fn extract_offline_in_context(
    input: &OfflineInput<'_>,
    context: &TurnContext<'_>,
    types: &TypeIndex,
    embedder: &dyn Embedder,
) -> Result<Extraction, EmbedError> {
    let answer = input.answer;
    let own;
    let analysis = if input.srl.is_empty() {
        own = srl::analyze(answer);
        &own
    } else {
        input.srl
    };
    let words = srl::tag_words(answer);
    let narrated = cues::narrated(&words);
    let asked = Asked::read(input.question, context);
    let turned = cues::changes_subject(&words);
    let floor = ladder_floor(input, &asked).filter(|_| !turned);
    // On a ladder, what a result connective brings in ("so it gets right under the sofa",
    // "which means I'm not buying bottles") is a consequence, never the lowest rung.
    let result_floor = climbs(input.methodology)
        .then(|| lowest_level(input.methodology))
        .flatten()
        .map(|low| low + 1);
    let mut found = phrases::find(answer, &words, analysis);
    let topic = content_words(context.topic);
    let scenes = cues::has_scene_type(|t| types.has_type(t));
    // "Otherwise I'm checking my phone every five minutes": on a ladder, what the product
    // spares the respondent is the rung, denied. Elsewhere it stays as said: the struggle a
    // job is hired against ("otherwise I'd go stir crazy").
    // Asked what would be different without the concept, "I'd be the shouty mum again" says
    // the same.
    let without = asks_without(input.question);
    for p in found.list.iter_mut().filter(|_| !scenes) {
        if cues::is_counterfactual(&words, p.start)
            || (without && cues::is_conditional(&words, p.start))
        {
            p.deny();
        }
    }
    let keep = worth_typing(&found.list, &words, answer, &topic, types);
    if keep.iter().all(|k| !k) {
        return Ok(Extraction::default());
    }
    // One model call for every phrase that is not the topic itself.
    let labels: Vec<&str> = found
        .list
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| p.label.as_str())
        .collect();
    let mut vectors = embedder.embed(&labels)?.into_iter();
    // Drop the topic phrases and untyped ones, remapping the causal pairs.
    let mut index_of = vec![None; found.list.len()];
    let mut kept: Vec<(Phrase, TypeMatch)> = Vec::new();
    for (i, phrase) in found.list.drain(..).enumerate() {
        if !keep.get(i).copied().unwrap_or(false) {
            continue;
        }
        let best = vectors.next().and_then(|v| {
            let floor = if is_result(&analysis.discourse_relations, &words, &phrase) {
                floor.max(result_floor)
            } else {
                floor
            };
            let favoured = denies_a_struggle(&phrase);
            let below_values = value_floor(input.methodology).filter(|_| spoken_against(&phrase));
            let above_floor = |t: &str| {
                let node_type = input.methodology.node_type(t);
                floor.is_none_or(|f| node_type.is_some_and(|n| n.level >= f))
                    && !(favoured && node_type.is_some_and(|n| n.negative))
                    && below_values.is_none_or(|v| node_type.is_some_and(|n| n.level < v))
            };
            let property = phrase.of_product
                && !cues::names_an_end(&phrase.words)
                && types.has_type(PROPERTY_TYPE)
                && above_floor(PROPERTY_TYPE);
            let cued: Vec<&str> = if property {
                vec![PROPERTY_TYPE]
            } else {
                cues::candidates(
                    &Cue::read(&words, narrated, phrase.start, phrase.end)
                        .answering_why(asked.why_it_happened),
                    |t| types.has_type(t),
                )
                .into_iter()
                .filter(|t| types.has_type(t) && above_floor(t))
                .collect()
            };
            if cued.is_empty() {
                types.classify_shaped_among(&v, phrase.shape, above_floor)
            } else {
                types.classify_among(&v, |t| cued.contains(&t))
            }
        });
        if let (Some(t), Some(slot)) = (best, index_of.get_mut(i)) {
            *slot = Some(kept.len());
            kept.push((phrase, t));
        }
    }
    let causal: Vec<phrases::CausalPair> = found
        .causal
        .iter()
        .filter_map(|p| {
            Some(phrases::CausalPair {
                cause: index_of.get(p.cause).copied().flatten()?,
                effect: index_of.get(p.effect).copied().flatten()?,
            })
        })
        .collect();
    Ok(assemble(
        input, &asked, types, &kept, &causal, analysis, turned,
    ))
}

/// Concepts and relationships from the typed phrases.
fn assemble(
    input: &OfflineInput<'_>,
    asked: &Asked<'_, '_>,
    types: &TypeIndex,
    kept: &[(Phrase, TypeMatch)],
    causal: &[phrases::CausalPair],
    analysis: &SrlAnalysis,
    turned: bool,
) -> Extraction {
    // Final label and type of each phrase: a known concept's (the one asked about when the
    // phrase says it again in fewer words), or the typed phrase's.
    let finals: Vec<(String, String)> = kept
        .iter()
        .map(|(phrase, typed)| {
            match asked
                .known
                .iter()
                .find(|k| norm(k.label) == norm(&phrase.label))
                .or_else(|| asked.concept.filter(|k| restates(&phrase.label, k.label)))
            {
                Some(k) => (k.label.to_owned(), k.node_type.to_owned()),
                None => (
                    types.conventional_label(&typed.node_type, &phrase.label),
                    typed.node_type.clone(),
                ),
            }
        })
        .collect();
    let level = |node_type: &str| {
        input
            .methodology
            .node_type(node_type)
            .map_or(0, |t| t.level)
    };
    let nodes: Vec<Node<'_>> = kept
        .iter()
        .zip(&finals)
        .map(|((phrase, _), (_, node_type))| Node {
            phrase,
            type_name: node_type,
            level: level(node_type),
        })
        .collect();
    let mut concepts: Vec<ExtractedConcept> = Vec::with_capacity(kept.len());
    for ((phrase, typed), (label, node_type)) in kept.iter().zip(&finals) {
        if concepts.iter().any(|c| norm(&c.label) == norm(label)) {
            continue;
        }
        concepts.push(ExtractedConcept {
            label: label.clone(),
            node_type: node_type.clone(),
            confidence: confidence(phrase, typed),
            stance: input
                .methodology
                .stance_of(node_type, phrase_stance(phrase)),
            source_quote: input
                .answer
                .get(phrase.start..phrase.end)
                .unwrap_or_default()
                .to_owned(),
        });
    }
    let mut relationships: Vec<ExtractedRelationship> =
        links::find(input.methodology, analysis, &nodes, causal, input.answer)
            .into_iter()
            .filter_map(|link| {
                Some(ExtractedRelationship {
                    source: finals.get(link.source)?.0.clone(),
                    target: finals.get(link.target)?.0.clone(),
                    edge_type: link.edge_type,
                    confidence: link.confidence,
                })
            })
            .filter(|r| norm(&r.source) != norm(&r.target))
            .collect();
    // An answer that turns to something else is no answer to the probe.
    let probes = if turned {
        Vec::new()
    } else {
        probe_links(input, asked, &nodes, &finals)
    };
    for probe in probes {
        let stated = relationships.iter().any(|r| {
            norm(&r.source) == norm(&probe.source) && norm(&r.target) == norm(&probe.target)
        });
        if !stated {
            relationships.push(probe);
        }
    }
    Extraction {
        concepts,
        relationships,
    }
}

/// The lowest level a concept of this answer can have: in an ontology that only ever links
/// upwards (a ladder such as means-end chain, where every edge goes from a level to the same
/// or a higher one), an answer to why the probed concept matters is on its rung or above it.
/// In the development corpora, 41 of 42 concepts a researcher coded in such answers were, and
/// none in the jobs-to-be-done or critical incident answers followed that rule.
fn ladder_floor(input: &OfflineInput<'_>, asked: &Asked<'_, '_>) -> Option<u32> {
    if !asked.reason || !climbs(input.methodology) {
        return None;
    }
    // "Why is self-respect important to you?": nothing lies above a terminal rung, so what
    // the respondent says on the way to it keeps its own level.
    input
        .methodology
        .node_type(asked.concept?.node_type)
        .filter(|t| !t.terminal)
        .map(|t| t.level)
}

/// Every edge of the ontology climbs (or stays on one level): a ladder, such as means-end
/// chains, where what something leads to is never below it.
pub(super) fn climbs(methodology: &Methodology) -> bool {
    let level = |name: &str| methodology.node_type(name).map(|t| t.level);
    methodology.ontology.edges.iter().all(|e| {
        e.permitted_connections
            .iter()
            .all(|(s, t)| s == "*" || t == "*" || level(s) <= level(t))
    })
}

/// The level of the ontology's lowest rung.
fn lowest_level(methodology: &Methodology) -> Option<u32> {
    methodology.ontology.nodes.iter().map(|n| n.level).min()
}

/// Words that, right before a phrase, state it as what something else brings about.
const RESULT_LEADS: [&str; 3] = ["means", "meaning", "so"];

/// The phrase is a result a connective states, and says what happens (a verb or a negation:
/// "gets right under the sofa", "rain not running down my glasses", "hardly any washing
/// up"; a bare noun such as
/// "a tray" in "so there's hardly any washing up, rather than … a tray" is no consequence):
/// inside the second argument of a result
/// relation ("…, so the rain's not running down my glasses"), or right after "means"
/// ("which means I'm not buying bottles", "Means there's never a surprise bill"), with at
/// most a subject and a copula between.
fn is_result(relations: &[DiscourseRelation], words: &[srl::TaggedWord], phrase: &Phrase) -> bool {
    let stated = relations.iter().any(|r| {
        r.kind == RelationKind::Result && r.arg2.start <= phrase.start && phrase.end <= r.arg2.end
    });
    let before: Vec<&str> = words
        .iter()
        .rev()
        .filter(|w| w.end <= phrase.start && w.class != WordClass::Punctuation)
        .take(5)
        .map(|w| w.norm.as_str())
        .collect();
    let lead = before.iter().position(|w| RESULT_LEADS.contains(w));
    // "there", "'s", "I", "'m", "is": a subject and a copula.
    // An article and a denial before the phrase's words ("there's never a surprise bill")
    // are slight too.
    let slight = |w: &&str| {
        lexicon::is_empty_word(w)
            || srl::is_finite_be_or_have(w)
            || matches!(
                *w,
                "a" | "an" | "the" | "never" | "not" | "n't" | "no" | "hardly"
            )
    };
    let between_is_slight = |n: usize| before.iter().take(n).all(slight);
    let happens = phrase.shape == Shape::Verbal
        || srl::tag_words(&phrase.label).iter().any(|w| {
            matches!(w.class, WordClass::Verb | WordClass::Negation)
                || matches!(w.norm.as_str(), "hardly" | "never")
        });
    happens && (stated || lead.is_some_and(between_is_slight))
}

/// Words of a question that ask for the reason or the meaning of something.
const PROBE_CUES: [&str; 10] = [
    "why",
    "important",
    "matter",
    "matters",
    "mean",
    "do for you",
    "give you",
    "without",
    "make possible",
    "trying to achieve",
];

/// Words of a question that ask what the respondent's words say rather than why they matter
/// ("When you say "creamy", what exactly do you mean?", "what does that mean in practice?"):
/// a clarification, whose answer restates the concept instead of climbing from it.
const CLARIFICATION_CUES: [&str; 2] = ["you mean", "in practice"];

/// Words of a question that ask what followed something ("What happened when you got to
/// A&E?", "What did you do then?").
const SEQUENCE_CUES: [&str; 3] = ["what happened", "what did you do", "what happened next"];

/// The question asks what life would be like without the concept: what the respondent says
/// they would be or do then is what the concept spares them.
fn asks_without(question: &str) -> bool {
    let normalised = norm(question);
    WITHOUT_CUES
        .iter()
        .any(|cue| links::mentions(&normalised, cue))
}

/// Question wording that asks about life without the concept ("What would be different for
/// you without …?", "What if you didn't have it?").
const WITHOUT_CUES: [&str; 7] = [
    "without",
    "if you didn't",
    "if you couldn't",
    "if you did not",
    "if you could not",
    "if you no longer",
    "if it wasn't",
];

/// An answer to a probe about a known concept links that concept to the answer: to its first
/// concept of a higher level (or, failing that, of the same level) when the question asks for
/// a reason or a meaning ("Why does a good mood matter to you?"), to its first event when it
/// asks what happened; each only where the ontology permits the edge. An answer to why
/// something happened ("Why do you think the wrong strength got through?") gives causes and
/// what came of them, each of them about the probed event: every concept of the answer's top
/// rungs (attributions, outcomes, lessons) is linked to it.
///
/// On a ladder, the reasons given for why a rung matters are every higher rung the answer
/// names ("My lower back doesn't ache by three anymore … I've got energy left for the
/// evening"), except what it tells in the past: the backstory that explains the answer
/// ("Sitting all day is what wrecked my back", "My own father was physically there") is not
/// what the probed concept leads to.
fn probe_links(
    input: &OfflineInput<'_>,
    asked: &Asked<'_, '_>,
    nodes: &[Node<'_>],
    finals: &[(String, String)],
) -> Vec<ExtractedRelationship> {
    let ladder = asked.reason && asked.concept.is_some() && climbs(input.methodology);
    let backstory: Vec<bool> = if ladder {
        let words = srl::tag_words(input.answer);
        let narrated = cues::narrated(&words);
        nodes
            .iter()
            .map(|n| Cue::read(&words, narrated, n.phrase.start, n.phrase.end).told_in_past())
            .collect()
    } else {
        vec![false; nodes.len()]
    };
    let first = probe_link(input, asked, nodes, finals, &backstory);
    let mut out: Vec<ExtractedRelationship> = first.into_iter().collect();
    let Some(known) = asked.concept else {
        return out;
    };
    let (_, top) = input.methodology.level_range();
    let known_level = input
        .methodology
        .node_type(known.node_type)
        .map_or(top, |t| t.level);
    let answers = |n: &Node<'_>, told_before: bool| {
        if asked.why_it_happened {
            n.level + 1 >= top
        } else {
            ladder && n.level > known_level && !told_before
        }
    };
    for ((n, (label, _)), told_before) in nodes.iter().zip(finals).zip(&backstory) {
        let taken = out.iter().any(|r| norm(&r.target) == norm(label));
        if taken || !answers(n, *told_before) || norm(label) == norm(known.label) {
            continue;
        }
        if let Some(edge) = links::reason_edge(input.methodology, known.node_type, n.type_name) {
            out.push(ExtractedRelationship {
                source: known.label.to_owned(),
                target: label.clone(),
                edge_type: edge,
                confidence: links::PROBE_CONFIDENCE,
            });
        }
    }
    out
}

/// The first link of [`probe_links`]; `backstory` marks the nodes told in the past on a
/// ladder, which answer no probe.
fn probe_link(
    input: &OfflineInput<'_>,
    asked: &Asked<'_, '_>,
    nodes: &[Node<'_>],
    finals: &[(String, String)],
    backstory: &[bool],
) -> Option<ExtractedRelationship> {
    let reason = asked.reason;
    if !reason && !asked.sequence {
        return None;
    }
    let known = asked.concept?;
    let known_level = input.methodology.node_type(known.node_type)?.level;
    let link = |rung: &dyn Fn(u32) -> bool| {
        nodes
            .iter()
            .zip(finals)
            .zip(backstory)
            .filter(|((n, (label, _)), told_before)| {
                rung(n.level) && norm(label) != norm(known.label) && !**told_before
            })
            .find_map(|((n, (label, _)), _)| {
                let edge = if reason {
                    links::reason_edge(input.methodology, known.node_type, n.type_name)?
                } else {
                    links::sequence_edge(input.methodology, known.node_type, n.type_name)?
                };
                Some(ExtractedRelationship {
                    source: known.label.to_owned(),
                    target: label.clone(),
                    edge_type: edge,
                    confidence: links::PROBE_CONFIDENCE,
                })
            })
    };
    if reason {
        // The reason given is a rung up; where the typer put none above the probed concept,
        // a concept on its rung (the same value in other words, often typed one rung off) is
        // still the answer to the probe, except on the lowest rung, where another concept is
        // another property, not a reason.
        let (lowest, _) = input.methodology.level_range();
        link(&|level| level > known_level)
            .or_else(|| link(&|level| level == known_level && level > lowest))
    } else {
        link(&|_| true)
    }
}

/// What the question asks, read once per answer.
struct Asked<'c, 'a> {
    /// The session's concepts, which the answer may name again.
    known: &'c [KnownConcept<'a>],
    /// The concept it asks about (see [`asked_about`]).
    concept: Option<&'c KnownConcept<'a>>,
    /// It asks for a reason or a meaning ([`PROBE_CUES`]), not for a clarification
    /// ([`CLARIFICATION_CUES`]).
    reason: bool,
    /// It asks what followed ([`SEQUENCE_CUES`]).
    sequence: bool,
    /// It asks why something happened ([`cues::asks_why_it_happened`]).
    why_it_happened: bool,
}

impl<'c, 'a> Asked<'c, 'a> {
    fn read(question: &str, context: &'c TurnContext<'a>) -> Self {
        let normalised = norm(question);
        let any = |cues: &[&str]| cues.iter().any(|cue| links::mentions(&normalised, cue));
        Self {
            known: context.known,
            concept: asked_about(&normalised, context),
            reason: any(&PROBE_CUES) && !any(&CLARIFICATION_CUES),
            sequence: any(&SEQUENCE_CUES),
            why_it_happened: cues::asks_why_it_happened(question),
        }
    }
}

/// The concept a question (normalised) asks about: the turn's focus, else the known concept
/// it names.
fn asked_about<'c, 'a>(
    question: &str,
    context: &'c TurnContext<'a>,
) -> Option<&'c KnownConcept<'a>> {
    context
        .focus
        .as_ref()
        .or_else(|| probed(question, context.known))
}

/// The known concept a question (normalised) is about: the longest label it quotes, else the
/// label most of whose content words it repeats in its own person ("You said the queue made
/// you miss the bus" for "queue made me miss the bus").
fn probed<'k, 'a>(question: &str, known: &'k [KnownConcept<'a>]) -> Option<&'k KnownConcept<'a>> {
    let quoted = known
        .iter()
        .filter(|k| !k.label.trim().is_empty() && links::mentions(question, &norm(k.label)))
        .max_by_key(|k| k.label.len());
    if quoted.is_some() {
        return quoted;
    }
    let asked: Vec<String> = content_words(question)
        .into_iter()
        .map(|w| match w.as_str() {
            "you" => "me".to_owned(),
            "your" => "my".to_owned(),
            "yourself" => "myself".to_owned(),
            _ => w,
        })
        .collect();
    known
        .iter()
        .filter_map(|k| {
            let words = content_words(k.label);
            let repeated = words
                .iter()
                .filter(|w| asked.iter().any(|a| stem(a) == stem(w)))
                .count();
            let share = repeated as f64 / words.len().max(1) as f64;
            (repeated >= 2 && share >= 0.6).then_some((share, k))
        })
        .max_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.label.len().cmp(&b.1.label.len()))
        })
        .map(|(_, k)| k)
}

/// A word's first five letters: "patient" and "patience", "cook" and "cooking" compare equal.
fn stem(word: &str) -> String {
    word.chars().take(5).collect()
}

/// `label` says `concept` again in fewer words ("being patient with them" for "being more
/// patient with my kids"): it has a word of its own, each of its words is one of the
/// concept's (intensifiers, "more" and pronouns aside, compared by their first five letters),
/// and it is negated exactly when the concept is.
pub(super) fn restates(label: &str, concept: &str) -> bool {
    let own = |text: &str| -> Vec<String> {
        content_words(text)
            .into_iter()
            .filter(|w| !lexicon::is_intensifier(w) && !matches!(w.as_str(), "more" | "being"))
            .map(|w| stem(&w))
            .collect()
    };
    let negated = |text: &str| {
        text.split(|c: char| !c.is_alphanumeric() && c != '\'')
            .any(|w| lexicon::is_negator(&w.to_lowercase()) || w.ends_with("n't"))
    };
    let words = own(label);
    let theirs = own(concept);
    !words.is_empty()
        && words.len() <= theirs.len()
        && words.iter().all(|w| theirs.contains(w))
        && negated(label) == negated(concept)
}

fn confidence(phrase: &Phrase, typed: &TypeMatch) -> f64 {
    let role = if phrase.origin == Origin::Fragment {
        0.0
    } else {
        ROLE_BONUS
    };
    let clear = if typed.margin >= CLEAR_TYPE_MARGIN {
        TYPE_BONUS
    } else {
        0.0
    };
    BASE_CONFIDENCE + role + clear
}

/// "never stuck without coffee", "not missed a Wednesday": a struggle denied is what the
/// respondent is after, no struggle.
fn denies_a_struggle(phrase: &Phrase) -> bool {
    opens_with_denial(phrase) && phrase_stance(phrase) > 0
}

/// On a ladder, "I'm quite an anxious person" is what the respondent is, no value they hold:
/// what they speak against stays below this level, the lower of the two top rungs.
fn value_floor(methodology: &Methodology) -> Option<u32> {
    climbs(methodology)
        .then(|| methodology.level_range().1.saturating_sub(1))
        .filter(|v| *v > 1)
}

/// The respondent speaks against what the phrase says ("anxious person", "stressed"), not
/// against its denial.
fn spoken_against(phrase: &Phrase) -> bool {
    !opens_with_denial(phrase) && phrase_stance(phrase) < 0
}

fn opens_with_denial(phrase: &Phrase) -> bool {
    phrase
        .words
        .first()
        .is_some_and(|w| matches!(w.as_str(), "not" | "never" | "no"))
}

/// What the respondent feels about the phrase: the affect read around it, else its own words.
fn phrase_stance(phrase: &Phrase) -> i8 {
    if phrase.affect == 0 {
        stance(&phrase.words)
    } else {
        phrase.affect
    }
}

fn stance(words: &[String]) -> i8 {
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    // "not go to bed feeling guilty": a denial that opens the phrase denies all of it, however
    // far the feeling is from it.
    let affect = match refs.as_slice() {
        [not, rest @ ..] if matches!(*not, "not" | "never") => -lexicon::affect(rest),
        _ => lexicon::affect(&refs),
    };
    match affect {
        0 => 0,
        a if a > 0 => 1,
        _ => -1,
    }
}

/// Which phrases are concepts to type: not the topic itself, not a scene where the ontology
/// has no type for one, not what the respondent sets aside where it has no type for that, and
/// not an item of an inventory in a story or a job.
fn worth_typing(
    list: &[Phrase],
    words: &[srl::TaggedWord],
    answer: &str,
    topic: &[String],
    types: &TypeIndex,
) -> Vec<bool> {
    let scenes = cues::has_scene_type(|t| types.has_type(t));
    let foils = cues::has_foil_type(|t| types.has_type(t));
    let listed = if scenes {
        inventory(list, answer)
    } else {
        vec![false; list.len()]
    };
    list.iter()
        .zip(&listed)
        .map(|(p, listed)| {
            !within(&p.words, topic)
                && !listed
                && (scenes || p.origin != Origin::Setting)
                && (foils || !cues::is_foil(words, p.start))
        })
        .collect()
}

/// Phrases that are items of an inventory: three or more fragments in a row with only commas
/// (and an "and") between them ("Duvet, a printer, a mini fridge, three boxes of shoes",
/// "Saturday morning, hoovering, bathrooms, the lot"). In a story or a job they are the
/// scenery of a moment, which researchers do not code item by item. A ladder has no such
/// rule: there a list of things is a list of properties ("Cushioning, grip, the weight").
fn inventory(list: &[Phrase], answer: &str) -> Vec<bool> {
    let mut out = vec![false; list.len()];
    let joined = |a: &Phrase, b: &Phrase| {
        a.origin == Origin::Fragment
            && b.origin == Origin::Fragment
            && a.end <= b.start
            && answer.get(a.end..b.start).is_some_and(|gap| {
                // A comma, and at most an "and" and an article or a possessive after it.
                let words: Vec<String> = gap
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_lowercase)
                    .collect();
                gap.trim_start().starts_with(',')
                    && words.len() <= 2
                    && words
                        .iter()
                        .all(|w| matches!(w.as_str(), "and" | "a" | "an" | "the" | "my" | "our"))
            })
    };
    let mut start = 0;
    while start < list.len() {
        let mut end = start + 1;
        while let (Some(a), Some(b)) = (list.get(end - 1), list.get(end)) {
            if !joined(a, b) {
                break;
            }
            end += 1;
        }
        if end - start >= INVENTORY_ITEMS {
            for slot in out.iter_mut().take(end).skip(start) {
                *slot = true;
            }
        }
        start = end;
    }
    out
}

/// Fewest fragments in a row that make an inventory.
const INVENTORY_ITEMS: usize = 3;

/// Lowercase words of `text` that are not empty words.
fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !lexicon::is_empty_word(w))
        .collect()
}

/// Every content word of a phrase is one of `topic`'s (and there is at least one), verbs of
/// choosing or using aside: "switched to oat milk" is the topic too. A phrase that is only
/// such a verb and its particle ("signed up", "switched over") is taking up the topic.
fn within(words: &[String], topic: &[String]) -> bool {
    let spoken: Vec<&String> = words
        .iter()
        .filter(|w| !lexicon::is_empty_word(w) && w.chars().any(char::is_alphanumeric))
        .filter(|w| !matches!(w.as_str(), "to" | "from" | "of" | "a" | "an" | "the"))
        .collect();
    let content: Vec<&&String> = spoken
        .iter()
        .filter(|w| !lexicon::is_choice_verb(&srl::verb_lemma(w)))
        .collect();
    let taken_up = spoken.len() > content.len()
        && content
            .iter()
            .all(|w| matches!(w.as_str(), "up" | "over" | "in" | "on" | "out"));
    !topic.is_empty()
        && (taken_up || (!content.is_empty() && content.iter().all(|w| topic.contains(w))))
}
