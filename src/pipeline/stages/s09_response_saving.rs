//! Stage 9, response saving: the question, saved before it is shown, so a session waiting for
//! its respondent is always at a clean checkpoint.

use super::{Effects, NewUtterance, Staged};
use crate::domain::Speaker;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{QuestionGenerationOutput, ResponseSavingOutput};
use crate::pipeline::ports::Ports;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub question: &'a QuestionGenerationOutput,
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "every stage has the signature the runner calls; this one cannot fail"
)]
pub(crate) fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, ResponseSavingOutput>, PipelineError> {
    let question = &input.question.question;
    let id = crate::pipeline::ids::single(&ports.data.session_id, input.turn, "question");
    let summary = format!("question saved as {id}");
    let output = ResponseSavingOutput {
        turn_number: input.turn,
        system_utterance_id: id.clone(),
        system_utterance: question.clone(),
        question_text: question.clone(),
    };
    Ok(Staged {
        effects: Effects {
            utterance: Some(NewUtterance {
                id,
                speaker: Speaker::Interviewer,
                text: question.clone(),
                speech: None,
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
    fn the_question_is_saved_as_the_interviewers_utterance_of_the_turn() {
        let fx = Fixture::new();
        let question = QuestionGenerationOutput {
            question: "Why does frothing matter to you?".to_owned(),
            strategy: "deepen".to_owned(),
            focus: None,
            has_llm_fallback: false,
            question_source: "model".to_owned(),
        };
        let staged = run(
            &Input {
                turn: 2,
                question: &question,
            },
            &fx.ports(),
        )
        .unwrap();
        let saved = staged.effects.utterance.unwrap();
        assert_eq!(saved.speaker, Speaker::Interviewer);
        assert_eq!(saved.text, question.question);
        assert_eq!(saved.id, staged.output.system_utterance_id);
        assert_eq!(staged.output.question_text, question.question);
        // The answer of the same turn gets another id.
        assert_ne!(saved.id, crate::pipeline::ids::single("s", 2, "answer"));
    }
}
