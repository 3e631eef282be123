//! Stages 1 (context loading), 2 (utterance saving) and 2.5 (SRL preprocessing), and the start
//! of the LLM signal batch that runs beside the graph stages.

use crate::domain::Speaker;
use crate::llm::Role;
use crate::pipeline::contracts::{
    ContextLoadingOutput, RecentUtterance, SrlPreprocessingOutput, UtteranceSavingOutput,
};
use crate::pipeline::interview::{Interview, LoadingRecord, Scoring, ScoringTask, TurnRun};
use crate::pipeline::{PipelineError, TurnContext};
use crate::store::StoreOps;

/// Utterances loaded as recent context (the prompt window then bounds them by characters).
const RECENT_UTTERANCES: u32 = 12;
/// Strategies loaded for the temporal signals (seed 000 Path 4: the last 5).
const STRATEGY_HISTORY_LIMIT: u32 = 5;
/// Node labels loaded for the extraction prompt (it shows at most 30).
const RECENT_NODE_LABELS: usize = 30;

impl Interview {
    /// Stage 1: session metadata, turn number and history. The answer is kept with the
    /// checkpoint so an interruption before stage 2 loses nothing.
    pub(crate) fn context_loading(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let id = self.world.session_id.clone();
        let recent_utterances = self
            .store
            .recent_utterances(&id, RECENT_UTTERANCES)?
            .into_iter()
            .map(|u| RecentUtterance {
                turn: u.turn,
                speaker: u.speaker,
                text: u.text,
            })
            .collect();
        let strategy_history = self.store.recent_strategies(&id, STRATEGY_HISTORY_LIMIT)?;
        let live: Vec<String> = self.world.live_nodes().map(|n| n.label.clone()).collect();
        let recent_node_labels = live
            .iter()
            .skip(live.len().saturating_sub(RECENT_NODE_LABELS))
            .cloned()
            .collect();
        let state = &self.world.state;
        let output = ContextLoadingOutput {
            methodology: self.spec.methodology.method.name.clone(),
            concept_id: self.spec.concept.id.clone(),
            concept_name: self.spec.concept.name.clone(),
            turn_number: state.turn_count + 1,
            mode: "exploratory".to_owned(),
            max_turns: self.world.max_turns,
            recent_utterances,
            strategy_history,
            recent_node_labels,
            velocity: state.velocity.clone(),
            focus_history: state.focus_history.clone(),
        };
        let summary = format!(
            "turn {} of {}, {} nodes, last strategies [{}]",
            output.turn_number,
            output.max_turns,
            live.len(),
            output.strategy_history.join(", ")
        );
        let extra = serde_json::to_value(LoadingRecord {
            user_input: run.ctx.user_input.clone(),
        })
        .map_err(|e| PipelineError::State(format!("cannot keep the answer: {e}")))?;
        self.commit(run, output, Some(&extra), &[], |_| Ok(()))?;
        Ok(summary)
    }

    /// Stage 2: the answer, saved under an id minted for the session and turn.
    pub(crate) fn utterance_saving(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let id = self.world.session_id.clone();
        let turn = run.turn;
        let text = run.ctx.user_input.clone();
        let output = UtteranceSavingOutput {
            turn_number: turn,
            user_utterance_id: crate::pipeline::ids::single(&id, turn, "answer"),
            user_utterance: text.clone(),
        };
        let utterance_id = output.user_utterance_id.clone();
        let summary = format!(
            "answer saved ({} chars) as {}",
            text.chars().count(),
            output.user_utterance_id
        );
        self.commit(run, output, None, &[], |tx| {
            tx.insert_utterance_with_id(&utterance_id, &id, turn, Speaker::Respondent, &text)
                .map(drop)
        })?;
        Ok(summary)
    }

    /// Stage 2.5: discourse relations and predicate frames, or an empty output saying why.
    pub(crate) fn srl_preprocessing(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let output = if self.services.settings.enable_srl {
            let analysis = crate::srl::analyze(&run.ctx.user_input);
            SrlPreprocessingOutput {
                discourse_count: analysis.discourse_count(),
                frame_count: analysis.frame_count(),
                discourse_relations: analysis.discourse_relations,
                srl_frames: analysis.srl_frames,
                status: analysis.method,
            }
        } else {
            SrlPreprocessingOutput {
                status: "disabled (enable_srl = false)".to_owned(),
                ..SrlPreprocessingOutput::default()
            }
        };
        let summary = format!(
            "{} discourse relations, {} frames",
            output.discourse_count, output.frame_count
        );
        self.commit(run, output, None, &[], |_| Ok(()))?;
        Ok(summary)
    }

    /// Starts the LLM signal batch for the saved answer and the question it answers; in
    /// offline understanding, scores the rubrics by rule at once instead.
    pub(crate) fn start_signal_scoring(
        &self,
        ctx: &TurnContext,
        turn: u32,
    ) -> Result<Scoring, PipelineError> {
        let answer = &ctx.utterance_saving()?.user_utterance;
        let question = answered_question(ctx)?;
        if self.spec.understanding == crate::domain::Understanding::Offline {
            return Ok(Scoring::Ready(crate::understanding::score_rubrics_offline(
                &self.spec.rubrics,
                &question,
                answer,
            )));
        }
        let prompt = crate::signals::llm::batch_prompt(&self.spec.rubrics, &question, answer);
        let request = self
            .services
            .llm
            .request(Role::SignalScoring, String::new(), prompt, None, turn)
            .map_err(|e| crate::pipeline::interview::llm_error(Role::SignalScoring, e))?
            .with_schema(std::sync::Arc::new(crate::prompts::schema::scoring_schema(
                &self
                    .spec
                    .rubrics
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>(),
            )));
        let llm = std::sync::Arc::clone(&self.services.llm);
        let req = request.clone();
        let handle = tokio::spawn(async move { llm.complete(&req).await });
        Ok(Scoring::Call(ScoringTask(handle, request)))
    }
}

/// The question the answer responds to: the last interviewer utterance before this turn.
pub(crate) fn answered_question(ctx: &TurnContext) -> Result<String, PipelineError> {
    let loaded = ctx.context_loading()?;
    Ok(loaded
        .recent_utterances
        .iter()
        .rev()
        .find(|u| u.speaker == Speaker::Interviewer && u.turn < loaded.turn_number)
        .map(|u| u.text.clone())
        .unwrap_or_default())
}
