//! Stage 6, strategy selection: awaits the rubric scores, records the answer's depth on the
//! previous focus, detects every signal the methodology asks for, selects a strategy then a
//! node, and moves the focus.
//!
//! The rubric scores need only the answer and the question it answers, so the runner starts
//! them ([`start_scoring`]) as soon as stage 2 has saved the answer, and they run beside
//! stages 2.5–5.

use std::sync::Arc;

use super::s01_context_loading::answered_question;
use super::{Effects, Extra, Staged};
use crate::config;
use crate::domain::{LlmScores, ResponseDepth, SignalValue};
use crate::graph::node_state::NodeStateTracker;
use crate::llm::Role;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    Alternative, ContextLoadingOutput, Focus, StateComputationOutput, StrategySelectionOutput,
    UtteranceSavingOutput,
};
use crate::pipeline::ports::{CallRecord, Ports, llm_error};
use crate::pipeline::runner::{DecisionRecord, Scoring, ScoringTask, TurnRun};
use crate::scoring::{self, Selection};
use crate::signals::DetectionInput;
use crate::time::{is_rfc3339_millis, now_rfc3339};

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub loaded: &'a ContextLoadingOutput,
    pub computed: &'a StateComputationOutput,
    /// When this turn's extraction was accepted (RFC 3339), for the freshness check.
    pub extracted_at: &'a str,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            loaded: run.ctx.context_loading()?,
            computed: run.ctx.state_computation()?,
            extracted_at: &run.ctx.extraction()?.timestamp,
        })
    }
}

/// Starts the rubric scores for the saved answer and the question it answers: a model call
/// in flight, or in offline understanding the rubrics scored by rule at once.
pub(crate) fn start_scoring(
    loaded: &ContextLoadingOutput,
    saved: &UtteranceSavingOutput,
    ports: &Ports<'_>,
) -> Result<Scoring, PipelineError> {
    let spec = ports.spec;
    let answer = &saved.user_utterance;
    let question = answered_question(loaded);
    if spec.understanding == crate::domain::Understanding::Offline {
        return Ok(Scoring::Ready(crate::understanding::score_rubrics_offline(
            &spec.rubrics,
            &question,
            answer,
        )));
    }
    let prompt = crate::signals::llm::batch_prompt(&spec.rubrics, &question, answer);
    // The reply is asked for under the rubrics file's own keys (`emotional_valence` in a file
    // written for the original system) and read under either name.
    let keys: Vec<&str> = spec.rubrics.iter().map(config::Rubric::reply_key).collect();
    let request = ports
        .services
        .llm
        .request(
            Role::SignalScoring,
            String::new(),
            prompt,
            None,
            saved.turn_number,
        )
        .map_err(|e| llm_error(Role::SignalScoring, e))?
        .with_schema(Arc::new(crate::prompts::schema::scoring_schema(&keys)));
    let llm = Arc::clone(&ports.services.llm);
    let req = request.clone();
    let handle = tokio::spawn(async move { llm.complete(&req).await });
    Ok(Scoring::Call(ScoringTask(handle, request)))
}

/// Runs the stage on the rubric scores started for the turn. What a resumed turn and a
/// researcher's override need goes in the checkpoint beside the output ([`Extra::Decision`]).
pub(crate) async fn run(
    input: &Input<'_>,
    scoring: Scoring,
    ports: &Ports<'_>,
) -> Result<Staged<'static, StrategySelectionOutput>, PipelineError> {
    let data = ports.data;
    let methodology = &ports.spec.methodology;
    let turn = input.turn;
    check_graph_state_is_current(input.computed, turn, input.extracted_at)?;
    let (scores, call) = await_scores(scoring, turn, ports).await?;
    // No depth when the methodology does not ask for the `response_depth` rubric: nothing
    // is recorded on the previous focus or in the depth history then.
    let depth = scores
        .get("response_depth")
        .map(|s| ResponseDepth::from_score(s.score));
    let mut tracker = data.tracker.clone();
    if let (Some(previous), Some(depth)) = (tracker.previous_focus.clone(), depth) {
        tracker.append_response_signal(&previous, depth.as_str());
    }
    let before_focus = tracker.to_json();
    let mut depth_history = data.state.depth_history.clone();
    depth_history.extend(depth);
    let phases = methodology.phase_boundaries;
    let phase = phases.phase(turn, data.max_turns);
    let detection = DetectionInput {
        turn_number: turn,
        max_turns: data.max_turns,
        graph: &input.computed.graph_state,
        canonical: input.computed.canonical_graph_state.as_ref(),
        llm: Some(&scores),
        depth_history: &depth_history,
        strategy_history: &input.loaded.strategy_history,
        velocity: &data.state.velocity,
        tracker: &tracker,
        depth_divisor: methodology.depth_divisor(),
        phases,
        levels: methodology.level_range(),
    };
    let detected = ports.registry.detect(&detection, ports.signal_plan);
    let mut signals = detected.global.clone();
    signals
        .entry("meta.interview.phase".to_owned())
        .or_insert_with(|| SignalValue::category(phase.as_str()));
    let node_signals = detected.node_signals(&tracker);
    // Turn 1 targets no node: the question it answers was asked of an empty graph
    // (seed 000 Path 17), so node selection starts with turn 2.
    let none = Vec::new();
    let selectable = if turn <= 1 { &none } else { &node_signals };
    let selection = scoring::select(methodology, &signals, selectable, Some(phase))?;
    let focus = focus_of(&selection, &tracker);
    tracker.update_focus(
        focus.as_ref().map(|f| f.node_id.as_str()),
        turn,
        &selection.strategy,
    );
    let strategy = ports.strategy(&selection.strategy)?;
    let output = StrategySelectionOutput {
        strategy: selection.strategy.clone(),
        focus: focus.clone(),
        selected_at: now_rfc3339(),
        signals,
        node_signals,
        strategy_alternatives: alternatives(&selection),
        generates_closing_question: strategy.generates_closing_question,
        focus_mode: focus_mode_name(strategy),
        score_decomposition: selection.decomposition(),
    };
    let summary = format!(
        "{} → {} (depth {}, phase {})",
        output.strategy,
        focus.as_ref().map_or("no node", |f| f.label.as_str()),
        depth.map_or("not scored", ResponseDepth::as_str),
        phase
    );
    let record = DecisionRecord {
        llm_scores: scores,
        response_depth: depth,
        tracker_before_focus: Some(before_focus),
    };
    Ok(Staged {
        effects: Effects {
            tracker: Some(tracker),
            ..Effects::default()
        },
        extra: Some(Extra::Decision(record)),
        calls: call.into_iter().collect(),
        ..Staged::new(output, summary)
    })
}

/// Awaits the rubric scores and checks a model's reply against the rubrics.
async fn await_scores(
    scoring: Scoring,
    turn: u32,
    ports: &Ports<'_>,
) -> Result<(LlmScores, Option<CallRecord>), PipelineError> {
    let mut task = match scoring {
        Scoring::Ready(scores) => return Ok((scores, None)),
        Scoring::Call(task) => task,
    };
    let request = task.1.clone();
    let response = match (&mut task.0).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => {
            ports.record_failed_call(turn, &request, &e);
            return Err(llm_error(Role::SignalScoring, e));
        }
        Err(join) => {
            return Err(PipelineError::State(format!(
                "the LLM signal batch stopped: {join}"
            )));
        }
    };
    let names: Vec<&str> = ports.spec.rubrics.iter().map(|r| r.name.as_str()).collect();
    let (scores, call) = ports.read_reply(&request, response, |text| {
        crate::signals::llm::parse_batch_reply(text, &names).map_err(|source| {
            PipelineError::Contract {
                role: Role::SignalScoring,
                source,
            }
        })
    })?;
    Ok((scores, Some(call)))
}

/// Stage 6's freshness check (seed 001: "Validates: Graph state freshness via `computed_at`
/// timestamp"): the graph state to score must be stage 5's for `turn`, computed no earlier
/// than this turn's extraction (`extracted_at`), so the graph update of this answer is in it.
pub(crate) fn check_graph_state_is_current(
    computed: &StateComputationOutput,
    turn: u32,
    extracted_at: &str,
) -> Result<(), PipelineError> {
    let stale = |reason: String| Err(PipelineError::StaleGraphState { turn, reason });
    if computed.graph_state.turn_count != turn {
        return stale(format!(
            "it was computed for turn {}",
            computed.graph_state.turn_count
        ));
    }
    let at = computed.computed_at.as_str();
    if !is_rfc3339_millis(at) {
        return stale(format!("computed_at '{at}' is not an RFC 3339 UTC time"));
    }
    // Both times come from the same clock and format, so text order is time order.
    if is_rfc3339_millis(extracted_at) && at < extracted_at {
        return stale(format!(
            "it was computed at {at}, before this turn's extraction at {extracted_at}"
        ));
    }
    Ok(())
}

/// The selected node as a focus: its tracking key and label.
pub(crate) fn focus_of(selection: &Selection, tracker: &NodeStateTracker) -> Option<Focus> {
    let key = selection.node_id.as_deref()?;
    let label = tracker
        .get(key)
        .map_or_else(|| key.to_owned(), |s| s.label.clone());
    Some(Focus {
        node_id: key.to_owned(),
        label,
    })
}

pub(crate) fn alternatives(selection: &Selection) -> Vec<Alternative> {
    selection
        .alternatives
        .iter()
        .map(|(strategy, score)| Alternative {
            strategy: strategy.clone(),
            score: *score,
        })
        .collect()
}

pub(crate) fn focus_mode_name(strategy: &crate::config::Strategy) -> String {
    serde_json::to_value(&strategy.focus_mode)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{:?}", strategy.focus_mode).to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::RubricScore;
    use crate::pipeline::stages::fixture::Fixture;
    use crate::pipeline::stages::{s01_context_loading, s05_state_computation};

    fn computed(turn: u32, at: &str) -> StateComputationOutput {
        crate::pipeline::stages::fixture::computed(turn, crate::domain::GraphState::default(), at)
    }

    #[test]
    fn stage_six_scores_only_this_turns_graph_state() {
        let extracted = "2026-11-22T09:15:02.120Z";
        let fresh = computed(3, "2026-11-22T09:15:02.480Z");
        assert!(check_graph_state_is_current(&fresh, 3, extracted).is_ok());
        // Computed in the same millisecond as the extraction still counts as after it.
        assert!(check_graph_state_is_current(&computed(3, extracted), 3, extracted).is_ok());
        let reason =
            |c: &StateComputationOutput| match check_graph_state_is_current(c, 3, extracted) {
                Err(PipelineError::StaleGraphState { turn: 3, reason }) => reason,
                other => panic!("expected a stale graph state, got {other:?}"),
            };
        assert_eq!(
            reason(&computed(2, "2026-11-22T09:15:02.480Z")),
            "it was computed for turn 2"
        );
        assert_eq!(
            reason(&computed(3, "2026-11-22T09:15:01.999Z")),
            "it was computed at 2026-11-22T09:15:01.999Z, before this turn's extraction at \
             2026-11-22T09:15:02.120Z"
        );
        assert_eq!(
            reason(&computed(3, "")),
            "computed_at '' is not an RFC 3339 UTC time"
        );
    }

    /// A fixture at turn 2 with two nodes registered, and stage 5's output for it.
    fn turn_two(fx: &mut Fixture) -> (ContextLoadingOutput, StateComputationOutput) {
        fx.say(
            0,
            crate::domain::Speaker::Interviewer,
            "What comes to mind about oat milk?",
        );
        fx.data.state.turn_count = 1;
        for (label, node_type) in [
            ("froths well", "attribute"),
            ("calm mornings", "psychosocial_consequence"),
        ] {
            let id = fx.add_node(label, node_type, 1);
            fx.data.tracker.register_node(
                &crate::graph::node_state::NodeRegistration {
                    node_id: &id,
                    label,
                    node_type,
                    depth: 1,
                    level: 1,
                    is_terminal: false,
                },
                1,
            );
        }
        let loaded =
            s01_context_loading::run(&s01_context_loading::Input { answer: "x" }, &fx.ports())
                .unwrap()
                .output;
        let extraction = crate::pipeline::contracts::ExtractionOutput {
            extraction: crate::pipeline::contracts::ExtractionResult::default(),
            methodology: String::new(),
            timestamp: now_rfc3339(),
            concept_count: 0,
            relationship_count: 0,
        };
        let update = crate::pipeline::contracts::GraphUpdateOutput {
            nodes_added: Vec::new(),
            edges_added: Vec::new(),
            node_count: 2,
            edge_count: 0,
        };
        let mut computed = s05_state_computation::run(
            &s05_state_computation::Input {
                turn: 2,
                extraction: &extraction,
                update: &update,
            },
            &fx.ports(),
        )
        .unwrap()
        .output;
        computed.computed_at = now_rfc3339();
        (loaded, computed)
    }

    #[tokio::test]
    async fn selects_a_strategy_and_node_and_moves_the_focus() {
        let mut fx = Fixture::new();
        let (loaded, computed) = turn_two(&mut fx);
        let extracted_at = "2000-01-01T00:00:00.000Z";
        let input = Input {
            turn: 2,
            loaded: &loaded,
            computed: &computed,
            extracted_at,
        };
        let scores: LlmScores = [(
            "response_depth".to_owned(),
            RubricScore {
                score: 4,
                rationale: "a reason".to_owned(),
            },
        )]
        .into_iter()
        .collect();
        let staged = run(&input, Scoring::Ready(scores), &fx.ports())
            .await
            .unwrap();
        let Some(Extra::Decision(record)) = &staged.extra else {
            panic!("no decision kept: {:?}", staged.extra);
        };
        let out = &staged.output;
        assert!(
            fx.spec.methodology.strategy(&out.strategy).is_some(),
            "{}",
            out.strategy
        );
        assert!(out.signals.contains_key("meta.interview.phase"));
        assert!(!out.score_decomposition.is_empty());
        assert_eq!(record.response_depth, Some(ResponseDepth::from_score(4)));
        let tracker = staged.effects.tracker.as_ref().unwrap();
        if let Some(focus) = &out.focus {
            assert_eq!(
                tracker.previous_focus.as_deref(),
                Some(focus.node_id.as_str())
            );
        }
        assert!(staged.calls.is_empty(), "offline-ready scores make no call");
        // A stale state is refused before anything is scored.
        let stale = Input {
            extracted_at: "2999-01-01T00:00:00.000Z",
            ..input
        };
        let err = run(&stale, Scoring::Ready(LlmScores::default()), &fx.ports()).await;
        assert!(matches!(
            err,
            Err(PipelineError::StaleGraphState { turn: 2, .. })
        ));
    }
}
