//! A session to run one stage against in a unit test: the shipped means-end chain and oat milk
//! concept, the scripted provider on the oat milk script, the hashing embedder, an in-memory
//! store holding session `s`, and its data in memory.

use std::path::Path;
use std::sync::Arc;

use crate::config::{ConfigDir, shipped_methodology};
use crate::domain::{SessionState, Speaker, Understanding};
use crate::embed::HashEmbedder;
use crate::graph::model::KgNode;
use crate::llm::{LlmProvider, LlmRouter, ScriptedProvider};
use crate::pipeline::interview::{InterviewSpec, Services};
use crate::pipeline::ports::Ports;
use crate::pipeline::world::World;
use crate::pipeline::{EventSink, PipelineSettings};
use crate::signals::Registry;
use crate::store::{NewSession, Store, StoreOps};

pub(crate) struct Fixture {
    pub spec: InterviewSpec,
    pub services: Services,
    pub store: Store,
    pub world: World,
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
        let world = World::load(&store, "s").unwrap();
        Self {
            spec,
            services,
            store,
            world,
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
            world: &self.world,
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
        let id = format!("n{}", self.world.nodes.len() + 1);
        self.world.nodes.push(KgNode {
            turn,
            ..KgNode::fixture(&id, label, node_type)
        });
        id
    }
}
