//! Stage 3, extraction: concepts and relationships from the answer, each tied to its
//! utterance. In `llm` understanding one call, screened, with one retry carrying the reasons
//! when the screen rejects anything; in `offline` understanding the program reads the SRL
//! frames and types the phrases with the embedder.

use std::sync::Arc;

use super::Staged;
use super::s01_context_loading::answered_question;
use crate::domain::Understanding;
use crate::llm::Role;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    ContextLoadingOutput, ExtractionOutput, ExtractionResult, SourcedConcept, SourcedRelationship,
    SrlPreprocessingOutput, UtteranceSavingOutput,
};
use crate::pipeline::ports::{CallRecord, Ports};
use crate::pipeline::runner::TurnRun;
use crate::prompts::{
    Extraction, ExtractionInput, Rejection, extraction_prompt, parse_extraction_reply,
    rejection_feedback, screen_extraction,
};
use crate::srl::SrlAnalysis;
use crate::time::now_rfc3339;
use crate::understanding::{
    KnownConcept, OfflineInput, TurnContext as UnderstandingContext, TypeIndex,
    extract_offline_in_context,
};

/// Characters of SRL hints given to the extraction prompt.
const SRL_HINT_CHARS: usize = 1_500;

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub loaded: &'a ContextLoadingOutput,
    pub saved: &'a UtteranceSavingOutput,
    pub srl: &'a SrlPreprocessingOutput,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            loaded: run.ctx.context_loading()?,
            saved: run.ctx.utterance_saving()?,
            srl: run.ctx.srl_preprocessing()?,
        })
    }
}

pub(crate) async fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, ExtractionOutput>, PipelineError> {
    let saved = input.saved;
    let srl = input.srl;
    let analysis = SrlAnalysis {
        discourse_relations: srl.discourse_relations.clone(),
        srl_frames: srl.srl_frames.clone(),
        method: srl.status.clone(),
    };
    let question = answered_question(input.loaded);
    let (extraction, rejected, calls) = match ports.spec.understanding {
        Understanding::Offline => {
            // The concept the answered question was about: the last turn's focus.
            let focus = input
                .loaded
                .focus_history
                .last()
                .map(|f| f.node_id.as_str())
                .filter(|id| !id.is_empty());
            let (kept, rejected) =
                extract_offline(ports, saved, &question, focus, analysis).await?;
            (kept, rejected, Vec::new())
        }
        Understanding::Llm => {
            extract_with_llm(input, ports, &saved.user_utterance, &question, &analysis).await?
        }
    };
    if !rejected.is_empty() {
        tracing::warn!(
            turn = input.turn,
            rejected = %rejected.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
            "extraction items rejected"
        );
    }
    let result = ExtractionResult {
        concepts: extraction
            .concepts
            .into_iter()
            .map(|concept| SourcedConcept {
                concept,
                source_utterance_id: saved.user_utterance_id.clone(),
            })
            .collect(),
        relationships: extraction
            .relationships
            .into_iter()
            .map(|relationship| SourcedRelationship {
                relationship,
                source_utterance_id: saved.user_utterance_id.clone(),
            })
            .collect(),
    };
    let output = ExtractionOutput {
        concept_count: result.concepts.len(),
        relationship_count: result.relationships.len(),
        extraction: result,
        methodology: ports.spec.methodology.method.name.clone(),
        timestamp: now_rfc3339(),
    };
    let mut summary = format!(
        "{} concepts, {} relationships",
        output.concept_count, output.relationship_count
    );
    if !rejected.is_empty() {
        let named: Vec<String> = rejected.iter().map(ToString::to_string).collect();
        summary.push_str(&format!(", rejected: {}", named.join("; ")));
    }
    Ok(Staged {
        calls,
        ..Staged::new(output, summary)
    })
}

/// Offline extraction, screened like a model's reply.
async fn extract_offline(
    ports: &Ports<'_>,
    saved: &UtteranceSavingOutput,
    question: &str,
    focus_id: Option<&str>,
    analysis: SrlAnalysis,
) -> Result<(Extraction, Vec<Rejection>), PipelineError> {
    // The extractor reads the answer as one line: a hard line break in a typed or filed
    // answer would otherwise cut a phrase in two. With stage 2.5 off, or when the answer had
    // line breaks, it parses the flattened answer itself.
    let flat = saved
        .user_utterance
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let analysis = if ports.services.settings.enable_srl && flat == saved.user_utterance {
        analysis
    } else {
        crate::srl::analyze(&flat)
    };
    let types = type_index(ports).await?;
    let known: Vec<KnownConcept<'_>> = ports
        .data
        .live_nodes()
        .map(|n| KnownConcept {
            label: &n.label,
            node_type: &n.node_type,
        })
        .collect();
    let focus = focus_id
        .and_then(|id| ports.data.live_nodes().find(|n| n.id == id))
        .map(|n| KnownConcept {
            label: &n.label,
            node_type: &n.node_type,
        });
    let extraction = extract_offline_in_context(
        &OfflineInput {
            methodology: &ports.spec.methodology,
            answer: &flat,
            question,
            srl: &analysis,
        },
        &UnderstandingContext {
            topic: &ports.spec.concept.name,
            known: &known,
            focus,
        },
        &types,
        ports.services.embedder.as_ref(),
    )?;
    Ok(screen_extraction(
        extraction,
        &saved.user_utterance,
        &ports.spec.methodology,
    ))
}

/// The methodology's node types embedded for offline typing, built on first use.
async fn type_index(ports: &Ports<'_>) -> Result<Arc<TypeIndex>, PipelineError> {
    ports
        .type_index
        .get_or_try_init(|| async {
            TypeIndex::build(&ports.spec.methodology, ports.services.embedder.as_ref())
                .map(Arc::new)
        })
        .await
        .map(Arc::clone)
        .map_err(PipelineError::from)
}

/// Extraction on the LLM: one call, the reply parsed and screened; when the screen rejects
/// anything, one more call with the reasons appended, whose screened reply is kept.
async fn extract_with_llm(
    input: &Input<'_>,
    ports: &Ports<'_>,
    answer: &str,
    question: &str,
    analysis: &SrlAnalysis,
) -> Result<(Extraction, Vec<Rejection>, Vec<CallRecord>), PipelineError> {
    let methodology = &ports.spec.methodology;
    let hints = analysis.hints(SRL_HINT_CHARS);
    let label_refs: Vec<&str> = input
        .loaded
        .recent_node_labels
        .iter()
        .map(String::as_str)
        .collect();
    let prompt = extraction_prompt(&ExtractionInput {
        methodology,
        concept: &ports.spec.concept,
        answer,
        question,
        existing_labels: &label_refs,
        srl_hints: &hints,
    });
    let schema = Arc::new(crate::prompts::schema::extraction_schema(methodology));
    let parse = |text: &str| {
        parse_extraction_reply(text, methodology)
            .map(|e| screen_extraction(e, answer, methodology))
            .map_err(|source| PipelineError::Contract {
                role: Role::Extraction,
                source,
            })
    };
    let request = ports
        .prompt_request(Role::Extraction, prompt.clone(), input.turn)?
        .with_schema(Arc::clone(&schema));
    let ((kept, rejected), first) = ports.call_and_read(&request, parse).await?;
    if rejected.is_empty() {
        return Ok((kept, rejected, vec![first]));
    }
    let retry_prompt = crate::prompts::Prompt {
        user: format!("{}\n\n{}", prompt.user, rejection_feedback(&rejected)),
        ..prompt
    };
    let request = ports
        .prompt_request(Role::Extraction, retry_prompt, input.turn)?
        .with_schema(schema);
    let ((kept, still_rejected), second) = ports.call_and_read(&request, parse).await?;
    Ok((kept, still_rejected, vec![first, second]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::stages::fixture::Fixture;

    const ANSWER: &str = "It froths really well and it's so creamy in my morning latte.";

    /// Stages 1 to 3 of turn 1 on `answer`: the saved answer and what extraction returned.
    async fn extract(
        fx: &mut Fixture,
        answer: &str,
    ) -> (UtteranceSavingOutput, Staged<'static, ExtractionOutput>) {
        let (loaded, saved, srl) = fx.opening_stages(1, answer);
        let input = Input {
            turn: 1,
            loaded: &loaded,
            saved: &saved,
            srl: &srl,
        };
        let staged = run(&input, &fx.ports()).await.unwrap();
        (saved, staged)
    }

    fn labels(out: &ExtractionOutput) -> Vec<&str> {
        out.extraction
            .concepts
            .iter()
            .map(|c| c.concept.label.as_str())
            .collect()
    }

    #[tokio::test]
    async fn the_models_concepts_are_kept_with_their_utterance_and_call() {
        let mut fx = Fixture::new();
        let (saved, staged) = extract(&mut fx, ANSWER).await;
        let out = &staged.output;
        assert_eq!(
            labels(out),
            ["creamy texture", "froths well", "better morning latte"]
        );
        assert_eq!((out.concept_count, out.relationship_count), (3, 2));
        assert!(
            out.extraction
                .concepts
                .iter()
                .all(|c| c.source_utterance_id == saved.user_utterance_id)
        );
        assert_eq!(staged.calls.len(), 1);
        assert_eq!(staged.calls[0].role, Role::Extraction);
        assert_eq!(out.methodology, "means_end_chain");
    }

    #[tokio::test]
    async fn offline_understanding_reads_the_answer_without_a_call() {
        let mut fx = Fixture::new();
        fx.spec.understanding = Understanding::Offline;
        fx.without_model();
        let (_, staged) = extract(
            &mut fx,
            "I buy oat milk because it froths well, which makes my mornings feel calm.",
        )
        .await;
        assert!(staged.calls.is_empty());
        let labels = labels(&staged.output);
        assert!(labels.contains(&"froths well"), "{labels:?}");
        assert!(
            fx.type_index.initialized(),
            "the type index is built on first use"
        );
    }
}
