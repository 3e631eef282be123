//! Offline understanding against the researcher-annotated corpus (`tests/corpus/extraction.yaml`)
//! with the real all-MiniLM-L6-v2: recall and precision of concepts and links, printed and held
//! to floors a little below what was measured, next to the recorded LLM replies of the scripted
//! oat milk interview scored the same way.
//!
//! Matching: a predicted concept matches a gold one when their content words (lowercase, common
//! function words dropped, a plural "s" and "-ing"/"-ed" endings stripped) overlap by at least
//! half of the shorter label's words; typed matching also needs the same node type. Each gold
//! item matches at most one prediction. A predicted link matches a gold link when both
//! endpoints match and the edge types are equal. Only links between concepts of the same
//! extraction are scored, for both extractors (the recorded replies also link to concepts of
//! earlier turns, which the corpus does not annotate).

use std::collections::HashMap;
use std::time::Instant;

use serde::Deserialize;

use interviewer::config::{ConfigDir, Methodology};
use interviewer::embed::{Embedder, HashEmbedder};
use interviewer::graph::surface::{ExtractedConcept, ExtractedRelationship};
use interviewer::prompts::{Extraction, parse_extraction_reply, screen_extraction};
use interviewer::srl;
use interviewer::understanding::{
    KnownConcept, OfflineInput, TurnContext, TypeIndex, extract_offline_in_context,
    score_rubrics_offline,
};

use crate::common;

#[derive(Debug, Clone, Deserialize)]
struct Corpus {
    answers: Vec<Case>,
}

#[derive(Debug, Clone, Deserialize)]
struct Case {
    id: String,
    methodology: String,
    concept: String,
    #[serde(default)]
    script_turn: Option<u32>,
    question: String,
    /// The earlier concept the question probed (held-out corpus): a known concept of the turn,
    /// and a gold link may start from it.
    #[serde(default)]
    focus: Option<String>,
    answer: String,
    concepts: Vec<GoldConcept>,
    links: Vec<GoldLink>,
}

#[derive(Debug, Clone, Deserialize)]
struct GoldConcept {
    label: String,
    node_type: String,
}

#[derive(Debug, Clone, Deserialize)]
struct GoldLink {
    source: String,
    target: String,
    edge_type: String,
}

/// The extraction section of the scripted provider's file; other sections are ignored.
#[derive(Debug, Clone, Deserialize)]
struct Script {
    extraction: Vec<ScriptRule>,
}

#[derive(Debug, Clone, Deserialize)]
struct ScriptRule {
    turn: Option<u32>,
    reply: Option<String>,
}

/// The development corpus: the rules were tuned against it.
fn corpus() -> Corpus {
    load("tests/corpus/extraction.yaml")
}

/// The third round of development answers, written from the ontologies and the held-out
/// corpus's annotation conventions (not from the rules) by someone who never saw either
/// corpus; the rules were tuned on it afterwards.
fn development_more() -> Corpus {
    load("tests/corpus/development_more.yaml")
}

/// The fourth round of development answers, written from the ontologies and the third
/// round's conventions by someone who never saw the rules or the held-out corpus; scored
/// before the rules were changed for it (README "Offline understanding"), then tuned on.
fn development_round4() -> Corpus {
    load("tests/corpus/development_round4.yaml")
}

/// The fifth development round, written from the ontologies and the fourth round's
/// conventions by someone who never saw the rules or the held-out corpus; scored before the
/// rules were changed for it (README "Offline understanding"), then tuned on.
fn development_round5() -> Corpus {
    load("tests/corpus/development_round5.yaml")
}

/// The sixth development round, written from the ontologies and the fifth round's
/// conventions by someone who never saw the rules or the held-out corpus; scored before the
/// rules were changed for it (README "Offline understanding"), then tuned on.
fn development_round6() -> Corpus {
    load("tests/corpus/development_round6.yaml")
}

/// The seventh development round, written from the ontologies and the sixth round's
/// conventions by someone who never saw the rules or the held-out corpus; scored before the
/// rules were changed for it (README "Offline understanding"), then tuned on.
fn development_round7() -> Corpus {
    load("tests/corpus/development_round7.yaml")
}

/// The held-out corpus, written apart from the rules by someone who never saw them; never
/// used to tune them.
fn heldout() -> Corpus {
    load("tests/corpus/heldout.yaml")
}

fn load(relative: &str) -> Corpus {
    let path = std::path::Path::new(common::MANIFEST).join(relative);
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

const STOP: &str = "a an the my our your their his her its it i me we you they them to of for \
    in on at and or is are was be been am with that this so than about just really very";

/// Content words of a label, lightly stemmed.
fn tokens(label: &str) -> Vec<String> {
    label
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP.split_whitespace().any(|s| s == *w))
        .map(|w| {
            let stem = ["ing", "ed", "es", "s"]
                .iter()
                .find_map(|suffix| w.strip_suffix(suffix).filter(|s| s.len() >= 3));
            stem.unwrap_or(w).to_owned()
        })
        .collect()
}

/// Shared content words over the shorter label's count; 0 when either has none.
fn overlap(a: &str, b: &str) -> f64 {
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.is_empty() || tb.is_empty() {
        return 0.0;
    }
    let shared = ta.iter().filter(|t| tb.contains(t)).count();
    shared as f64 / ta.len().min(tb.len()) as f64
}

fn same(a: &str, b: &str) -> bool {
    overlap(a, b) >= 0.5
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    gold_concepts: usize,
    predicted_concepts: usize,
    label_matches: usize,
    typed_matches: usize,
    gold_links: usize,
    predicted_links: usize,
    link_matches: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.gold_concepts += other.gold_concepts;
        self.predicted_concepts += other.predicted_concepts;
        self.label_matches += other.label_matches;
        self.typed_matches += other.typed_matches;
        self.gold_links += other.gold_links;
        self.predicted_links += other.predicted_links;
        self.link_matches += other.link_matches;
    }

    fn ratio(n: usize, d: usize) -> f64 {
        if d == 0 { 1.0 } else { n as f64 / d as f64 }
    }

    fn concept_recall(&self) -> f64 {
        Self::ratio(self.label_matches, self.gold_concepts)
    }
    fn concept_precision(&self) -> f64 {
        Self::ratio(self.label_matches, self.predicted_concepts)
    }
    fn typed_recall(&self) -> f64 {
        Self::ratio(self.typed_matches, self.gold_concepts)
    }
    fn typed_precision(&self) -> f64 {
        Self::ratio(self.typed_matches, self.predicted_concepts)
    }
    fn link_recall(&self) -> f64 {
        Self::ratio(self.link_matches, self.gold_links)
    }
    fn link_precision(&self) -> f64 {
        Self::ratio(self.link_matches, self.predicted_links)
    }

    fn line(&self, name: &str) -> String {
        format!(
            "{name}: concepts R {:.2} P {:.2} (typed R {:.2} P {:.2}; {} gold, {} predicted) · \
             links R {:.2} P {:.2} ({} gold, {} predicted)",
            self.concept_recall(),
            self.concept_precision(),
            self.typed_recall(),
            self.typed_precision(),
            self.gold_concepts,
            self.predicted_concepts,
            self.link_recall(),
            self.link_precision(),
            self.gold_links,
            self.predicted_links,
        )
    }
}

/// Greedy one-to-one matching of gold and predicted concepts, best overlap first.
fn match_concepts(gold: &[GoldConcept], predicted: &[ExtractedConcept], typed: bool) -> usize {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (g, gc) in gold.iter().enumerate() {
        for (p, pc) in predicted.iter().enumerate() {
            let o = overlap(&gc.label, &pc.label);
            if o >= 0.5 && (!typed || gc.node_type == pc.node_type) {
                pairs.push((o, g, p));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut used_g, mut used_p) = (vec![false; gold.len()], vec![false; predicted.len()]);
    let mut n = 0;
    for (_, g, p) in pairs {
        if !used_g[g] && !used_p[p] {
            used_g[g] = true;
            used_p[p] = true;
            n += 1;
        }
    }
    n
}

fn score(case: &Case, extraction: &Extraction) -> Tally {
    let labels: Vec<String> = extraction
        .concepts
        .iter()
        .map(|c| c.label.trim().to_lowercase())
        .chain(case.focus.iter().map(|f| f.trim().to_lowercase()))
        .collect();
    let inside = |l: &str| labels.contains(&l.trim().to_lowercase());
    let links: Vec<&ExtractedRelationship> = extraction
        .relationships
        .iter()
        .filter(|r| inside(&r.source) && inside(&r.target))
        .collect();
    let mut used = vec![false; links.len()];
    let mut link_matches = 0;
    for g in &case.links {
        let hit = links.iter().enumerate().position(|(i, r)| {
            !used[i]
                && r.edge_type == g.edge_type
                && same(&g.source, &r.source)
                && same(&g.target, &r.target)
        });
        if let Some(i) = hit {
            used[i] = true;
            link_matches += 1;
        }
    }
    Tally {
        gold_concepts: case.concepts.len(),
        predicted_concepts: extraction.concepts.len(),
        label_matches: match_concepts(&case.concepts, &extraction.concepts, false),
        typed_matches: match_concepts(&case.concepts, &extraction.concepts, true),
        gold_links: case.links.len(),
        predicted_links: links.len(),
        link_matches,
    }
}

fn show(case: &Case, extraction: &Extraction) {
    println!("-- {} ({})", case.id, case.methodology);
    for c in &extraction.concepts {
        println!(
            "   {} [{}] \"{}\" {:.2}",
            c.label, c.node_type, c.source_quote, c.confidence
        );
    }
    for r in &extraction.relationships {
        println!("   {} -{}-> {}", r.source, r.edge_type, r.target);
    }
}

/// Everything the offline extractor needs per methodology, built once.
struct Offline {
    methodologies: HashMap<String, (Methodology, TypeIndex)>,
    topics: HashMap<String, String>,
    /// Every answer, in corpus order: a probe's focus was extracted from an earlier one.
    cases: Vec<Case>,
}

impl Offline {
    fn new(cases: &[Case], embedder: &dyn Embedder) -> Self {
        let dir: ConfigDir = common::config();
        let mut methodologies = HashMap::new();
        let mut topics = HashMap::new();
        for case in cases {
            if !methodologies.contains_key(&case.methodology) {
                let m = dir
                    .methodology(&case.methodology, &interviewer::signals::Catalog)
                    .unwrap();
                let types = TypeIndex::build(&m, embedder).unwrap();
                methodologies.insert(case.methodology.clone(), (m, types));
            }
            // Held-out answers also come from studies with no concept file: their topic is
            // the study's id in words.
            let topic = dir
                .concept(&case.concept)
                .map_or_else(|_| case.concept.replace('_', " "), |c| c.name.clone());
            topics.insert(case.concept.clone(), topic);
        }
        Self {
            methodologies,
            topics,
            cases: cases.to_vec(),
        }
    }

    /// The type the extractor gave a probe's focus in the earlier answer of the same study
    /// that the annotator took it from: what the session graph would hold.
    fn focus_type_from_earlier(
        &self,
        case: &Case,
        focus: &str,
        embedder: &dyn Embedder,
    ) -> Option<String> {
        let at = self.cases.iter().position(|c| c.id == case.id)?;
        let earlier = self.cases.get(..at)?.iter().rev().find(|c| {
            c.concept == case.concept && c.concepts.iter().any(|g| same(&g.label, focus))
        })?;
        self.extract(earlier, embedder)
            .concepts
            .iter()
            .filter(|c| same(&c.label, focus))
            .max_by(|a, b| overlap(focus, &a.label).total_cmp(&overlap(focus, &b.label)))
            .map(|c| c.node_type.clone())
    }

    fn extract(&self, case: &Case, embedder: &dyn Embedder) -> Extraction {
        let (m, types) = &self.methodologies[&case.methodology];
        let analysis = srl::analyze(&case.answer);
        let input = OfflineInput {
            methodology: m,
            answer: &case.answer,
            question: &case.question,
            srl: &analysis,
        };
        // A probe's focus is a concept the graph already holds: of the type the extractor gave
        // it in the earlier answer it came from, or of the ontology's lowest type.
        let focus_type = case
            .focus
            .as_ref()
            .and_then(|f| self.focus_type_from_earlier(case, f, embedder))
            .unwrap_or_else(|| {
                m.ontology
                    .nodes
                    .first()
                    .map(|n| n.name.clone())
                    .unwrap_or_default()
            });
        let known: Vec<KnownConcept<'_>> = case
            .focus
            .iter()
            .map(|f| KnownConcept {
                label: f,
                node_type: &focus_type,
            })
            .collect();
        let context = TurnContext {
            topic: &self.topics[&case.concept],
            known: &known,
            focus: known.first().copied(),
        };
        extract_offline_in_context(&input, &context, types, embedder).unwrap()
    }
}

#[test]
fn offline_extraction_recall_and_precision_on_the_corpus() {
    let corpus = corpus();
    assert!(
        corpus.answers.len() >= 20,
        "the corpus holds {}",
        corpus.answers.len()
    );
    let embedder = common::model();
    let offline = Offline::new(&corpus.answers, embedder.as_ref());
    let (mut all, mut oat) = (Tally::default(), Tally::default());
    let (mut earlier, mut round2) = (Tally::default(), Tally::default());
    for case in &corpus.answers {
        let extraction = offline.extract(case, embedder.as_ref());
        show(case, &extraction);
        let (m, _) = &offline.methodologies[&case.methodology];
        let (screened, rejections) = screen_extraction(extraction.clone(), &case.answer, m);
        assert!(rejections.is_empty(), "{}: {rejections:?}", case.id);
        assert_eq!(screened, extraction, "{}", case.id);
        for c in &extraction.concepts {
            assert!(case.answer.contains(&c.source_quote), "{}: {c:?}", case.id);
        }
        let tally = score(case, &extraction);
        all.add(tally);
        if case.concept == "oat_milk" {
            oat.add(tally);
        }
        // The second round of development answers, annotated before the rules saw them.
        if case.id.starts_with("dev2_") {
            round2.add(tally);
        } else {
            earlier.add(tally);
        }
    }
    let (whole, oat_only, first, second) = (
        all.line("offline, whole corpus"),
        oat.line("offline, oat milk answers"),
        earlier.line("offline, answers before round 2"),
        round2.line("offline, dev additions round 2"),
    );
    println!("{whole}\n{oat_only}\n{first}\n{second}");
    // Floors a little below the figures measured when the corpus was written (see the
    // report in the README): a regression in the extractor fails here.
    assert!(all.concept_recall() >= 0.83, "{whole}");
    assert!(all.concept_precision() >= 0.86, "{whole}");
    assert!(all.typed_recall() >= 0.67, "{whole}");
    assert!(all.typed_precision() >= 0.69, "{whole}");
    assert!(all.link_recall() >= 0.33, "{whole}");
    assert!(all.link_precision() >= 0.55, "{whole}");
    assert!(oat.concept_recall() >= 0.95, "{oat_only}");
    assert!(oat.typed_recall() >= 0.72, "{oat_only}");
    assert!(oat.link_recall() >= 0.6, "{oat_only}");
    // The second round was annotated before the rules were tuned on it.
    assert!(round2.concept_recall() >= 0.78, "{second}");
    assert!(round2.concept_precision() >= 0.84, "{second}");
    assert!(round2.typed_recall() >= 0.63, "{second}");
    assert!(round2.link_recall() >= 0.36, "{second}");
    assert!(round2.link_precision() >= 0.62, "{second}");
    assert!(earlier.concept_recall() >= 0.89, "{first}");
}

/// The third development round, scored and reported apart from the first two.
#[test]
fn offline_extraction_on_the_third_development_round() {
    let corpus = development_more();
    let (all, type_accuracy) = scored(&corpus, "development round 3");
    let line = all.line("offline, development round 3");
    DEV3_FLOORS.check(&all, type_accuracy, &line);
}

/// The fourth development round, scored and reported apart.
#[test]
fn offline_extraction_on_the_fourth_development_round() {
    let corpus = development_round4();
    let (all, type_accuracy) = scored(&corpus, "development round 4");
    let line = all.line("offline, development round 4");
    DEV4_FLOORS.check(&all, type_accuracy, &line);
}

/// The fifth development round, scored and reported apart.
#[test]
fn offline_extraction_on_the_fifth_development_round() {
    let corpus = development_round5();
    let (all, type_accuracy) = scored(&corpus, "development round 5");
    let line = all.line("offline, development round 5");
    DEV5_FLOORS.check(&all, type_accuracy, &line);
}

/// The sixth development round, scored and reported apart.
#[test]
fn offline_extraction_on_the_sixth_development_round() {
    let corpus = development_round6();
    let (all, type_accuracy) = scored(&corpus, "development round 6");
    let line = all.line("offline, development round 6");
    DEV6_FLOORS.check(&all, type_accuracy, &line);
}

/// The seventh development round, scored and reported apart.
#[test]
fn offline_extraction_on_the_seventh_development_round() {
    let corpus = development_round7();
    let (all, type_accuracy) = scored(&corpus, "development round 7");
    let line = all.line("offline, development round 7");
    DEV7_FLOORS.check(&all, type_accuracy, &line);
}

/// The held-out corpus, scored the same way and reported apart: the rules were never tuned on
/// it, so these are the figures to expect on the next respondent.
#[test]
fn offline_extraction_on_the_heldout_corpus() {
    let corpus = heldout();
    assert!(
        corpus.answers.len() >= 30,
        "the held-out corpus holds {}",
        corpus.answers.len()
    );
    let (all, type_accuracy) = scored(&corpus, "held-out");
    let line = all.line("offline, held-out corpus");
    HELDOUT_FLOORS.check(&all, type_accuracy, &line);
}

/// Scores every answer of `corpus`, printing each extraction, the figures per methodology and
/// in all; returns the total and the type accuracy of matched concepts.
fn scored(corpus: &Corpus, name: &str) -> (Tally, f64) {
    let embedder = common::model();
    let offline = Offline::new(&corpus.answers, embedder.as_ref());
    let mut by_method = std::collections::BTreeMap::<String, Tally>::new();
    let mut all = Tally::default();
    for case in &corpus.answers {
        let extraction = offline.extract(case, embedder.as_ref());
        show(case, &extraction);
        for c in &extraction.concepts {
            assert!(case.answer.contains(&c.source_quote), "{}: {c:?}", case.id);
        }
        let tally = score(case, &extraction);
        all.add(tally);
        by_method
            .entry(case.methodology.clone())
            .or_default()
            .add(tally);
    }
    for (m, t) in &by_method {
        println!("{}", t.line(&format!("offline, {name}, {m}")));
    }
    println!("{}", all.line(&format!("offline, {name}")));
    let type_accuracy = Tally::ratio(all.typed_matches, all.label_matches);
    println!("offline, {name}: type accuracy {type_accuracy:.2} of matched concepts");
    (all, type_accuracy)
}

/// Floors on the held-out corpus a little below the measured figures (README "Offline
/// understanding"), so a change that helps the development corpus at the held-out one's
/// expense fails here.
struct Floors {
    concept_recall: f64,
    concept_precision: f64,
    type_accuracy: f64,
    link_recall: f64,
    link_precision: f64,
}

impl Floors {
    fn check(&self, t: &Tally, type_accuracy: f64, line: &str) {
        assert!(t.concept_recall() >= self.concept_recall, "{line}");
        assert!(t.concept_precision() >= self.concept_precision, "{line}");
        assert!(type_accuracy >= self.type_accuracy, "{line}");
        assert!(t.link_recall() >= self.link_recall, "{line}");
        assert!(t.link_precision() >= self.link_precision, "{line}");
    }
}

/// Floors on the third development round a little below its figures: in-sample for typing,
/// since its labels are among the methodologies' `phrasings`.
const DEV3_FLOORS: Floors = Floors {
    concept_recall: 0.83,
    concept_precision: 0.64,
    type_accuracy: 0.64,
    link_recall: 0.13,
    link_precision: 0.27,
};

/// Floors on the fourth development round a little below its figures after the rules were
/// tuned on it.
const DEV4_FLOORS: Floors = Floors {
    concept_recall: 0.74,
    concept_precision: 0.58,
    type_accuracy: 0.47,
    link_recall: 0.06,
    link_precision: 0.19,
};

/// Floors on the fifth development round a little below its figures after the rules were
/// tuned on it.
const DEV5_FLOORS: Floors = Floors {
    concept_recall: 0.79,
    concept_precision: 0.48,
    type_accuracy: 0.50,
    link_recall: 0.14,
    link_precision: 0.26,
};

/// Scored before any rule was changed for it: concepts 0.81 / 0.46, types 0.46, links
/// 0.08 / 0.17 (README "Offline understanding"); links 0.15 / 0.25 since every higher rung
/// answers a ladder's probe.
const DEV6_FLOORS: Floors = Floors {
    concept_recall: 0.77,
    concept_precision: 0.43,
    type_accuracy: 0.46,
    link_recall: 0.12,
    link_precision: 0.21,
};

/// Scored before any rule was changed for it: concepts 0.76 / 0.48, types 0.46, links
/// 0.08 / 0.17 (README "Offline understanding"); links 0.13 / 0.21 since every higher rung
/// answers a ladder's probe.
const DEV7_FLOORS: Floors = Floors {
    concept_recall: 0.72,
    concept_precision: 0.44,
    type_accuracy: 0.42,
    link_recall: 0.11,
    link_precision: 0.18,
};

/// The link-recall floor was 0.08 (11 links of 126 found) until the fifth round's parsing fixes,
/// which cost one held-out link (10 of 126) while the development rounds held or gained. The
/// rules were kept on their development merits, not chosen by which one lost it (that would
/// tune on this corpus), and the floor moved down: the README reports the loss. Since every
/// higher rung answers a ladder's probe (chosen on rounds 6 and 7), 14 of 126 are found.
const HELDOUT_FLOORS: Floors = Floors {
    concept_recall: 0.77,
    concept_precision: 0.48,
    type_accuracy: 0.57,
    link_recall: 0.09,
    link_precision: 0.13,
};

#[test]
fn recorded_llm_replies_scored_on_the_oat_milk_answers() {
    let corpus = corpus();
    let text = std::fs::read_to_string(common::example("oat_milk_script.yaml")).unwrap();
    let script: Script = serde_saphyr::from_str(&text).unwrap();
    let m = common::config()
        .methodology("means_end_chain", &interviewer::signals::Catalog)
        .unwrap();
    let mut tally = Tally::default();
    let mut scored = 0;
    for case in &corpus.answers {
        let Some(turn) = case.script_turn else {
            continue;
        };
        let reply = script
            .extraction
            .iter()
            .find(|r| r.turn == Some(turn))
            .and_then(|r| r.reply.as_deref())
            .unwrap_or_else(|| panic!("no scripted extraction for turn {turn}"));
        let parsed = parse_extraction_reply(reply, &m).unwrap();
        let (screened, rejections) = screen_extraction(parsed, &case.answer, &m);
        for r in &rejections {
            println!("   {}: rejected {}: {}", case.id, r.item, r.reason);
        }
        show(case, &screened);
        tally.add(score(case, &screened));
        scored += 1;
    }
    assert_eq!(scored, 10);
    let line = tally.line("recorded LLM replies, oat milk answers");
    println!("{line}");
    // The replies are fixed text, so these are the measured figures rounded down.
    assert!(tally.concept_recall() >= 0.7, "{line}");
    assert!(tally.concept_precision() >= 0.85, "{line}");
    assert!(tally.typed_recall() >= 0.55, "{line}");
    assert!(tally.link_recall() >= 0.5, "{line}");
    assert!(tally.link_precision() >= 0.5, "{line}");
}

#[test]
fn offline_extraction_time_per_answer() {
    let corpus = corpus();
    let embedder = common::model();
    let offline = Offline::new(&corpus.answers, embedder.as_ref());
    // Warm-up pass: first calls pay for allocations the later ones reuse.
    for case in &corpus.answers {
        offline.extract(case, embedder.as_ref());
    }
    let passes = 3;
    let started = Instant::now();
    for _ in 0..passes {
        for case in &corpus.answers {
            offline.extract(case, embedder.as_ref());
        }
    }
    let per_answer = started.elapsed() / u32::try_from(passes * corpus.answers.len()).unwrap();
    // The same without the model: SRL, phrases, typing and links over trigram hashes.
    let hash = HashEmbedder::new(384);
    let no_model = Offline::new(&corpus.answers, &hash);
    let started = Instant::now();
    for _ in 0..passes {
        for case in &corpus.answers {
            no_model.extract(case, &hash);
        }
    }
    let without_model = started.elapsed() / u32::try_from(passes * corpus.answers.len()).unwrap();
    let rubric_started = Instant::now();
    let rubrics = common::config().rubrics().unwrap();
    for case in &corpus.answers {
        let scores = score_rubrics_offline(&rubrics, &case.question, &case.answer);
        assert_eq!(scores.len(), rubrics.len());
    }
    let per_rubric_set = rubric_started.elapsed() / u32::try_from(corpus.answers.len()).unwrap();
    println!(
        "offline extraction: {per_answer:?} per answer (MiniLM, {} answers × {passes}), \
         {without_model:?} of it outside the model; rubric rules: {per_rubric_set:?} per answer",
        corpus.answers.len()
    );
}
