//! A session to run one stage against in a unit test: the shipped means-end chain and oat milk
//! concept, the scripted provider on the oat milk script, the hashing embedder, an in-memory
//! store holding session `s`, and its data in memory.

use std::path::Path;
use std::sync::Arc;

use crate::config::{ConfigDir, shipped_methodology};
use crate::domain::{SessionState, Speaker, Understanding};
use crate::embed::HashEmbedder;
use crate::graph::records::KgNode;
use crate::llm::{LlmProvider, LlmRouter, ScriptedProvider};
use crate::pipeline::contracts::{
    ContextLoadingOutput, ContinuationOutput, SrlPreprocessingOutput, StrategySelectionOutput,
    UtteranceSavingOutput,
};
use crate::pipeline::interview::{InterviewSpec, Services};
use crate::pipeline::ports::Ports;
use crate::pipeline::session_data::SessionData;
use crate::pipeline::stages::{s01_context_loading, s02_5_srl_preprocessing, s02_utterance_saving};
use crate::pipeline::{EventSink, PipelineSettings};
use crate::signals::Registry;
use crate::store::{NewSession, Store, StoreOps};

pub(crate) struct Fixture {
    pub spec: InterviewSpec,
    pub services: Services,
    pub store: Store,
    pub data: SessionData,
    pub events: EventSink,
    pub registry: Registry,
    pub type_index: tokio::sync::OnceCell<Arc<crate::understanding::TypeIndex>>,
}

impl Fixture {
    /// Session `s` of 10 turns with no turn yet, understood by the (scripted) model.
    pub fn new() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = ConfigDir::new(root.join("config"));
        let spec = InterviewSpec {
            methodology: shipped_methodology("means_end_chain"),
            concept: dir.concept("oat_milk").unwrap(),
            rubrics: dir.rubrics().unwrap(),
            max_turns: 10,
            understanding: Understanding::Llm,
        };
        let provider =
            ScriptedProvider::load(&root.join("assets/examples/oat_milk_script.yaml")).unwrap();
        let services = Services {
            llm: Arc::new(LlmRouter::single(
                &(Arc::new(provider) as Arc<dyn LlmProvider>),
            )),
            embedder: Arc::new(HashEmbedder::new(384)),
            settings: PipelineSettings::default(),
        };
        let store = Store::open_in_memory().unwrap();
        store
            .create_session(&NewSession {
                id: "s".to_owned(),
                methodology: spec.methodology.method.name.clone(),
                concept: spec.concept.id.clone(),
                max_turns: spec.max_turns,
                state: SessionState::default(),
            })
            .unwrap();
        let data = SessionData::load(&store, "s").unwrap();
        Self {
            spec,
            services,
            store,
            data,
            events: EventSink::none(),
            registry: Registry::standard(),
            type_index: tokio::sync::OnceCell::new(),
        }
    }

    pub fn ports(&self) -> Ports<'_> {
        Ports {
            spec: &self.spec,
            services: &self.services,
            store: &self.store,
            data: &self.data,
            events: &self.events,
            registry: &self.registry,
            signal_plan: None,
            type_index: &self.type_index,
        }
    }

    /// Saves an utterance of `turn`.
    pub fn say(&self, turn: u32, speaker: Speaker, text: &str) {
        let id = format!("u{turn}{}", speaker.as_str());
        self.store
            .insert_utterance_with_id(&id, "s", turn, speaker, text)
            .unwrap();
    }

    /// Adds a live node of `turn` to the session in memory and returns its id.
    pub fn add_node(&mut self, label: &str, node_type: &str, turn: u32) -> String {
        let id = format!("n{}", self.data.nodes.len() + 1);
        self.data.nodes.push(KgNode {
            turn,
            ..KgNode::fixture(&id, label, node_type)
        });
        id
    }

    /// Puts the model-free `none` provider behind every role.
    pub fn without_model(&mut self) {
        let provider: Arc<dyn LlmProvider> = Arc::new(crate::llm::NoneProvider);
        self.services.llm = Arc::new(LlmRouter::single(&provider));
    }

    /// Stages 1, 2 and 2.5 of `turn` answering `answer`, as their outputs (nothing committed).
    pub fn opening_stages(
        &mut self,
        turn: u32,
        answer: &str,
    ) -> (
        ContextLoadingOutput,
        UtteranceSavingOutput,
        SrlPreprocessingOutput,
    ) {
        self.data.state.turn_count = turn - 1;
        let ports = self.ports();
        let loaded = s01_context_loading::run(&s01_context_loading::Input { answer }, &ports)
            .unwrap()
            .output;
        let saved = s02_utterance_saving::run(
            &s02_utterance_saving::Input {
                turn,
                answer,
                speech: None,
            },
            &ports,
        )
        .unwrap()
        .output;
        let srl = s02_5_srl_preprocessing::run(&s02_5_srl_preprocessing::Input { answer }, &ports)
            .unwrap()
            .output;
        (loaded, saved, srl)
    }
}

/// A selection of `strategy` with no signals, focused on `focus` (a node id and label).
pub(crate) fn selection(strategy: &str, focus: Option<(&str, &str)>) -> StrategySelectionOutput {
    StrategySelectionOutput {
        strategy: strategy.to_owned(),
        focus: focus.map(|(id, label)| crate::pipeline::contracts::Focus {
            node_id: id.to_owned(),
            label: label.to_owned(),
        }),
        selected_at: crate::time::now_rfc3339(),
        signals: crate::domain::Signals::new(),
        node_signals: Vec::new(),
        strategy_alternatives: Vec::new(),
        generates_closing_question: false,
        focus_mode: "recent_node".to_owned(),
        score_decomposition: Vec::new(),
    }
}

/// A continuation that stops for `reason`, or goes on when it is `None`.
pub(crate) fn continuation(reason: Option<&str>, turns_remaining: u32) -> ContinuationOutput {
    ContinuationOutput {
        should_continue: reason.is_none(),
        focus_concept: String::new(),
        reason: reason.unwrap_or_default().to_owned(),
        turns_remaining,
    }
}

/// Stage 5's output for `turn` over `graph`, computed at `at`, with nothing saturated.
pub(crate) fn computed(
    turn: u32,
    graph: crate::domain::GraphState,
    at: &str,
) -> crate::pipeline::contracts::StateComputationOutput {
    crate::pipeline::contracts::StateComputationOutput {
        graph_state: crate::domain::GraphState {
            turn_count: turn,
            ..graph
        },
        recent_nodes: Vec::new(),
        computed_at: at.to_owned(),
        saturation_metrics: crate::domain::SaturationMetrics::default(),
        canonical_graph_state: None,
    }
}
