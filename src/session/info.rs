//! What a view shows about a session that no event carries ([`SessionInfo`]): its concept,
//! methodology and strategies, the question model, the understanding mode. Read from the
//! interview before it moves to its session thread, so a view never touches the interview.

use crate::config::NodeBinding;
use crate::llm::{LlmRouter, Role};
use crate::pipeline::{Interview, InterviewSpec};

/// A strategy of the methodology, as the regenerate popup offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyInfo {
    pub name: String,
    /// Whether the strategy targets a focus node.
    pub node_bound: bool,
}

/// What the app shows about the session that no event carries.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub session_id: String,
    pub concept_id: String,
    pub concept_name: String,
    pub methodology: String,
    pub max_turns: u32,
    pub provider: String,
    pub model: String,
    /// Who understands answers: `llm` or `offline` (the session's stored mode).
    pub understanding: String,
    pub strategies: Vec<StrategyInfo>,
    /// Where the methodology's phases change, for the status bar's phase.
    pub phases: crate::domain::PhaseBoundaries,
    /// The methodology itself, for the what-if editor; `None` where a view has only names.
    pub rules: Option<std::sync::Arc<crate::config::Methodology>>,
}

impl SessionInfo {
    /// The facts of an opened interview (read before it moves to the session task).
    pub fn of(interview: &Interview) -> Self {
        Self::of_spec(
            interview.session_id(),
            interview.spec(),
            &interview.services.llm,
        )
    }

    /// The facts of a session about to run elsewhere (`simulate --watch`).
    pub fn of_spec(session_id: &str, spec: &InterviewSpec, llm: &LlmRouter) -> Self {
        let binding = llm.binding(Role::QuestionGeneration).ok();
        Self {
            session_id: session_id.to_owned(),
            concept_id: spec.concept.id.clone(),
            concept_name: spec.concept.name.clone(),
            methodology: spec.methodology.method.name.clone(),
            max_turns: spec.max_turns,
            provider: binding
                .map(|b| b.provider.name().to_owned())
                .unwrap_or_default(),
            model: binding
                .map(|b| b.provider.model().to_owned())
                .unwrap_or_default(),
            understanding: spec.understanding.as_str().to_owned(),
            phases: spec.methodology.phase_boundaries,
            rules: Some(std::sync::Arc::new(spec.methodology.clone())),
            strategies: spec
                .methodology
                .strategies
                .iter()
                .map(|s| StrategyInfo {
                    name: s.name.clone(),
                    node_bound: s.node_binding != NodeBinding::None,
                })
                .collect(),
        }
    }
}
