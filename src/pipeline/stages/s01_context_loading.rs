//! Stage 1, context loading: session metadata, the turn number and the history the later
//! stages read. The answer is kept in the checkpoint beside the output, so a turn interrupted
//! before stage 2 saved it resumes with it.

use super::{Extra, Staged};
use crate::domain::Speaker;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{ContextLoadingOutput, RecentUtterance};
use crate::pipeline::ports::Ports;
use crate::pipeline::runner::LoadingRecord;
use crate::store::StoreOps;

/// Utterances loaded as recent context (the prompt window then bounds them by characters).
const RECENT_UTTERANCES: u32 = 12;
/// Strategies loaded for the temporal signals (seed 000 Path 4: the last 5).
const STRATEGY_HISTORY_LIMIT: u32 = 5;
/// Node labels loaded for the extraction prompt (it shows at most 30).
const RECENT_NODE_LABELS: usize = 30;

pub(crate) struct Input<'a> {
    /// The cleaned answer of the turn.
    pub answer: &'a str,
}

pub(crate) fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, ContextLoadingOutput>, PipelineError> {
    let data = ports.data;
    let id = &data.session_id;
    let recent_utterances = ports
        .store
        .recent_utterances(id, RECENT_UTTERANCES)?
        .into_iter()
        .map(|u| RecentUtterance {
            turn: u.turn,
            speaker: u.speaker,
            text: u.text,
        })
        .collect();
    let strategy_history = ports.store.recent_strategies(id, STRATEGY_HISTORY_LIMIT)?;
    let live: Vec<&str> = data.live_nodes().map(|n| n.label.as_str()).collect();
    let recent_node_labels = live
        .iter()
        .skip(live.len().saturating_sub(RECENT_NODE_LABELS))
        .map(|l| (*l).to_owned())
        .collect();
    let state = &data.state;
    let output = ContextLoadingOutput {
        methodology: ports.spec.methodology.method.name.clone(),
        concept_id: ports.spec.concept.id.clone(),
        concept_name: ports.spec.concept.name.clone(),
        turn_number: state.turn_count + 1,
        mode: "exploratory".to_owned(),
        max_turns: data.max_turns,
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
    let extra = Extra::Loading(LoadingRecord {
        user_input: input.answer.to_owned(),
    });
    Ok(Staged {
        extra: Some(extra),
        ..Staged::new(output, summary)
    })
}

/// The question the answer responds to: the last interviewer utterance before this turn.
pub(crate) fn answered_question(loaded: &ContextLoadingOutput) -> String {
    loaded
        .recent_utterances
        .iter()
        .rev()
        .find(|u| u.speaker == Speaker::Interviewer && u.turn < loaded.turn_number)
        .map(|u| u.text.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::stages::fixture::Fixture;

    #[test]
    fn loads_the_next_turn_number_and_history_and_keeps_the_answer() {
        let mut fx = Fixture::new();
        fx.say(
            0,
            Speaker::Interviewer,
            "What comes to mind about oat milk?",
        );
        fx.say(1, Speaker::Respondent, "It froths well.");
        fx.say(1, Speaker::Interviewer, "Why does frothing matter?");
        fx.data.state.turn_count = 1;
        fx.add_node("froths well", "attribute", 1);
        let staged = run(
            &Input {
                answer: "It makes my latte.",
            },
            &fx.ports(),
        )
        .unwrap();
        let out = &staged.output;
        assert_eq!(out.turn_number, 2);
        assert_eq!(out.recent_utterances.len(), 3);
        assert_eq!(out.recent_node_labels, ["froths well"]);
        assert_eq!(out.mode, "exploratory");
        assert!(
            staged.summary.starts_with("turn 2 of"),
            "{}",
            staged.summary
        );
        let Some(Extra::Loading(kept)) = &staged.extra else {
            panic!("no answer kept: {:?}", staged.extra);
        };
        assert_eq!(kept.user_input, "It makes my latte.");
        assert!(staged.effects.utterance.is_none() && staged.calls.is_empty());
        assert_eq!(answered_question(out), "Why does frothing matter?");
    }
}
