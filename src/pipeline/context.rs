//! The turn context: the stage outputs accumulated so far (seed 001 "`PipelineContext`").
//!
//! Contracts are the single source of truth; reading one before its stage ran is an error
//! ([`PipelineError::NotYetRun`]), never a panic or a default.

use serde_json::Value;

use super::contracts::{
    ContextLoadingOutput, ContinuationOutput, ExtractionOutput, GraphUpdateOutput,
    QuestionGenerationOutput, ResponseSavingOutput, ScoringPersistenceOutput, SlotDiscoveryOutput,
    SrlPreprocessingOutput, StateComputationOutput, StrategySelectionOutput, UtteranceSavingOutput,
};
use super::{PipelineError, Stage};

/// The outputs of one turn's stages.
#[derive(Debug, Clone, Default)]
pub struct TurnContext {
    pub session_id: String,
    /// The cleaned answer being processed.
    pub user_input: String,
    context_loading: Option<ContextLoadingOutput>,
    utterance_saving: Option<UtteranceSavingOutput>,
    srl_preprocessing: Option<SrlPreprocessingOutput>,
    extraction: Option<ExtractionOutput>,
    graph_update: Option<GraphUpdateOutput>,
    slot_discovery: Option<SlotDiscoveryOutput>,
    state_computation: Option<StateComputationOutput>,
    strategy_selection: Option<StrategySelectionOutput>,
    continuation: Option<ContinuationOutput>,
    question_generation: Option<QuestionGenerationOutput>,
    response_saving: Option<ResponseSavingOutput>,
    scoring_persistence: Option<ScoringPersistenceOutput>,
}

impl TurnContext {
    /// An empty context for a turn of `session_id` answering `user_input`.
    pub fn new(session_id: impl Into<String>, user_input: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            user_input: user_input.into(),
            ..Self::default()
        }
    }
}

macro_rules! contracts {
    ($($field:ident: $ty:ty => $stage:ident),* $(,)?) => {
        impl TurnContext {
            $(
                #[doc = concat!("The output of `", stringify!($field), "`, or an error if it has not run.")]
                pub fn $field(&self) -> Result<&$ty, PipelineError> {
                    self.$field
                        .as_ref()
                        .ok_or(PipelineError::NotYetRun { stage: Stage::$stage })
                }
            )*

            /// Whether `stage` has produced its output.
            pub fn has(&self, stage: Stage) -> bool {
                match stage {
                    $(Stage::$stage => self.$field.is_some(),)*
                }
            }

            /// Restores a stage output from its checkpoint JSON.
            pub(crate) fn restore(&mut self, stage: Stage, output: Value) -> Result<(), PipelineError> {
                let bad = |e: serde_json::Error| PipelineError::Checkpoint {
                    stage,
                    message: e.to_string(),
                };
                match stage {
                    $(Stage::$stage => self.$field = Some(serde_json::from_value(output).map_err(bad)?),)*
                }
                Ok(())
            }
        }

        $(
            impl StageOutput for $ty {
                const STAGE: Stage = Stage::$stage;
                fn store(self, ctx: &mut TurnContext) {
                    ctx.$field = Some(self);
                }
            }
        )*
    };
}

contracts! {
    context_loading: ContextLoadingOutput => ContextLoading,
    utterance_saving: UtteranceSavingOutput => UtteranceSaving,
    srl_preprocessing: SrlPreprocessingOutput => SrlPreprocessing,
    extraction: ExtractionOutput => Extraction,
    graph_update: GraphUpdateOutput => GraphUpdate,
    slot_discovery: SlotDiscoveryOutput => SlotDiscovery,
    state_computation: StateComputationOutput => StateComputation,
    strategy_selection: StrategySelectionOutput => StrategySelection,
    continuation: ContinuationOutput => Continuation,
    question_generation: QuestionGenerationOutput => QuestionGeneration,
    response_saving: ResponseSavingOutput => ResponseSaving,
    scoring_persistence: ScoringPersistenceOutput => ScoringPersistence,
}

/// A stage's output contract.
pub(crate) trait StageOutput: serde::Serialize {
    const STAGE: Stage;
    fn store(self, ctx: &mut TurnContext);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_an_output_before_its_stage_is_an_error() {
        let ctx = TurnContext::default();
        let err = ctx.strategy_selection().unwrap_err();
        assert!(matches!(
            err,
            PipelineError::NotYetRun {
                stage: Stage::StrategySelection
            }
        ));
        assert!(!ctx.has(Stage::Continuation));
    }

    #[test]
    fn restore_rejects_a_mismatched_checkpoint() {
        let mut ctx = TurnContext::default();
        let err = ctx
            .restore(
                Stage::Continuation,
                serde_json::json!({"should_continue": "yes"}),
            )
            .unwrap_err();
        assert!(err.to_string().contains("continuation"), "{err}");
        ctx.restore(
            Stage::Continuation,
            serde_json::json!({"should_continue": true, "focus_concept": "", "reason": "", "turns_remaining": 3}),
        )
        .unwrap();
        assert_eq!(ctx.continuation().unwrap().turns_remaining, 3);
    }
}
