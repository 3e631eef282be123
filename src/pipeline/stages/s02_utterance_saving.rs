//! Stage 2, utterance saving: the answer, saved under an id minted for the session and turn.

use super::{Effects, NewUtterance, Staged};
use crate::domain::Speaker;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::UtteranceSavingOutput;
use crate::pipeline::ports::Ports;

pub(crate) struct Input<'a> {
    pub turn: u32,
    /// The cleaned answer.
    pub answer: &'a str,
    /// How it was heard, when it was spoken.
    pub speech: Option<crate::domain::AnswerSpeech>,
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "every stage has the signature the runner calls; this one cannot fail"
)]
pub(crate) fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, UtteranceSavingOutput>, PipelineError> {
    let id = crate::pipeline::ids::single(&ports.data.session_id, input.turn, "answer");
    let summary = format!(
        "answer saved ({} chars) as {id}",
        input.answer.chars().count()
    );
    let output = UtteranceSavingOutput {
        turn_number: input.turn,
        user_utterance_id: id.clone(),
        user_utterance: input.answer.to_owned(),
    };
    Ok(Staged {
        effects: Effects {
            utterance: Some(NewUtterance {
                id,
                speaker: Speaker::Respondent,
                text: input.answer.to_owned(),
                speech: input.speech.clone(),
            }),
            ..Effects::default()
        },
        ..Staged::new(output, summary)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::stages::fixture::Fixture;

    #[test]
    fn the_answer_is_saved_under_an_id_stable_for_its_turn() {
        let fx = Fixture::new();
        let input = Input {
            turn: 3,
            answer: "It froths well.",
            speech: None,
        };
        let first = run(&input, &fx.ports()).unwrap();
        let again = run(&input, &fx.ports()).unwrap();
        assert_eq!(
            first.output.user_utterance_id,
            again.output.user_utterance_id
        );
        assert_eq!(first.output.turn_number, 3);
        let saved = first.effects.utterance.unwrap();
        assert_eq!(saved.id, first.output.user_utterance_id);
        assert_eq!(
            (saved.speaker, saved.text.as_str()),
            (Speaker::Respondent, "It froths well.")
        );
        let other = run(&Input { turn: 4, ..input }, &fx.ports()).unwrap();
        assert_ne!(
            other.output.user_utterance_id,
            first.output.user_utterance_id
        );
    }
}
