//! Stage 2.5, SRL preprocessing: discourse relations and predicate frames of the answer, as
//! hints for extraction; an empty output saying why when `enable_srl` is off.

use super::Staged;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::SrlPreprocessingOutput;
use crate::pipeline::ports::Ports;

pub(crate) struct Input<'a> {
    pub answer: &'a str,
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "every stage has the signature the runner calls; this one cannot fail"
)]
pub(crate) fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, SrlPreprocessingOutput>, PipelineError> {
    let output = if ports.services.settings.enable_srl {
        let analysis = crate::srl::analyze(input.answer);
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
    Ok(Staged::new(output, summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::stages::fixture::Fixture;

    const ANSWER: &str = "I drink oat milk because it froths well, so my latte feels calm.";

    #[test]
    fn finds_relations_and_frames_or_says_it_is_off() {
        let mut fx = Fixture::new();
        let on = run(&Input { answer: ANSWER }, &fx.ports()).unwrap().output;
        assert!(on.discourse_count >= 1 && on.frame_count >= 1, "{on:?}");
        assert_eq!(on.discourse_count, on.discourse_relations.len());
        fx.services.settings.enable_srl = false;
        let off = run(&Input { answer: ANSWER }, &fx.ports()).unwrap().output;
        assert_eq!(off.status, "disabled (enable_srl = false)");
        assert_eq!((off.discourse_count, off.frame_count), (0, 0));
    }
}
