//! Stage 8, question generation: the next question under the selected strategy (a closing
//! question when the interview ends), streamed, checked, and replaced by the strategy's
//! template when there is no model or its replies fail the check twice.

use super::Staged;
use crate::config::{FocusMode, Strategy};
use crate::domain::Speaker;
use crate::llm::Role;
use crate::pipeline::PipelineError;
use crate::pipeline::contracts::{
    ContextLoadingOutput, Focus, QuestionGenerationOutput, RecentUtterance, StateComputationOutput,
    StrategySelectionOutput, UtteranceSavingOutput,
};
use crate::pipeline::ports::{AskedQuestion, Ports};
use crate::pipeline::runner::TurnRun;
use crate::prompts::{
    FollowUpInput, Line, QuestionFocus, SUMMARY_CONCEPTS, TemplateInput, compact_follow_up_prompt,
    conversation_window, follow_up_prompt, render_template,
};

pub(crate) struct Input<'a> {
    pub turn: u32,
    pub loaded: &'a ContextLoadingOutput,
    pub saved: &'a UtteranceSavingOutput,
    pub computed: &'a StateComputationOutput,
    pub selection: &'a StrategySelectionOutput,
    /// The interview ends with this question.
    pub closing: bool,
}

impl<'a> Input<'a> {
    pub fn from_turn(run: &'a TurnRun) -> Result<Self, PipelineError> {
        Ok(Self {
            turn: run.turn,
            loaded: run.ctx.context_loading()?,
            saved: run.ctx.utterance_saving()?,
            computed: run.ctx.state_computation()?,
            selection: run.ctx.strategy_selection()?,
            closing: !run.ctx.continuation()?.should_continue,
        })
    }
}

pub(crate) async fn run(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<Staged<'static, QuestionGenerationOutput>, PipelineError> {
    let selection = input.selection;
    let asked = ask(input, ports).await?;
    let summary = format!(
        "{} chars, {}, {}",
        asked.text.chars().count(),
        selection.strategy,
        asked.source
    );
    let output = QuestionGenerationOutput {
        question: asked.text,
        strategy: selection.strategy.clone(),
        focus: selection.focus.clone(),
        has_llm_fallback: asked.replaced_model,
        question_source: asked.source,
    };
    Ok(Staged {
        calls: asked.calls,
        ..Staged::new(output, summary)
    })
}

/// Builds the follow-up prompt for the input's selection and asks the question model; the
/// strategy's template question stands in when there is no model or its replies fail the
/// check. A researcher's override asks through this too, with the selection they chose.
pub(crate) async fn ask(
    input: &Input<'_>,
    ports: &Ports<'_>,
) -> Result<AskedQuestion, PipelineError> {
    let spec = ports.spec;
    let selection = input.selection;
    let conversation = window(
        &input.loaded.recent_utterances,
        input.turn,
        &input.saved.user_utterance,
        ports.services.settings.window_chars,
    );
    let strategy = ports.strategy(&selection.strategy)?;
    let raised = raised_concepts(ports.data.live_nodes().map(|n| n.label.as_str()));
    let focus = question_focus(strategy, selection.focus.as_ref(), &raised);
    let echo = match selection.focus.as_ref() {
        Some(f) => echo_of(f, input.turn, &input.saved.user_utterance, ports),
        None if strategy.focus_mode == FocusMode::Topic => {
            raised_by(input.turn, &input.saved.user_utterance, ports)
        }
        None => None,
    };
    // The stance of the concept the question quotes: the chosen node, or, where stage 2 chose
    // none (turn 1), the concept raised last ("start nodding at the wheel" is a struggle, not
    // something to have "done well").
    let focus_stance = match (selection.focus.as_ref(), &focus) {
        (Some(f), _) => ports.data.live_nodes().find(|n| n.id == f.node_id),
        (None, QuestionFocus::Node(label)) => ports
            .data
            .live_nodes()
            .filter(|n| n.label.trim().eq_ignore_ascii_case(label))
            .last(),
        (None, _) => None,
    }
    .map_or(0, |n| spec.methodology.stance_of(&n.node_type, n.stance));
    let template = || {
        let asked = ports.asked_questions(input.turn);
        render_template(&TemplateInput {
            templates: strategy.templates_for(focus_stance),
            focus: focus.node_label(),
            topic: spec.concept.topic(),
            turn: input.turn,
            session_seed: &spec.concept.id,
            asked: &asked,
            echo: echo.as_deref(),
        })
    };
    if ports.services.llm.is_modelless(Role::QuestionGeneration) {
        return Ok(AskedQuestion::template(template(), None));
    }
    let winner = selection
        .score_decomposition
        .iter()
        .find(|c| c.stage() == 1 && c.strategy == selection.strategy);
    let prompt_input = FollowUpInput {
        methodology: &spec.methodology,
        concept: &spec.concept,
        strategy,
        focus,
        focus_stance,
        conversation: &conversation,
        graph: &input.computed.graph_state,
        signals: &selection.signals,
        winner,
        closing: input.closing,
    };
    let prompt = if ports.small_question_model() {
        compact_follow_up_prompt(&prompt_input)
    } else {
        follow_up_prompt(&prompt_input)
    };
    let request = ports.question_request(prompt, input.turn)?;
    ports.checked_question(&request, input.turn, template).await
}

/// The respondent's own words for the focus when the focus is a concept of the answer just
/// given (a node created this turn, or one this turn's node was merged into) and its label is
/// what they said: the label as it stands in the answer. Otherwise `None`: a question never
/// says back words the respondent did not use.
fn echo_of(focus: &Focus, turn: u32, answer: &str, ports: &Ports<'_>) -> Option<String> {
    let data = ports.data;
    let from_this_answer = data.live_nodes().any(|n| {
        n.turn == turn
            && (n.id == focus.node_id || data.tracker.tracking_key(&n.id) == focus.node_id)
    });
    if !from_this_answer {
        return None;
    }
    quoted_in(answer, &focus.label)
}

/// What a question that widens the interview (a topic strategy, no focus) says back of the
/// answer just given: of the concepts it added, the lowest-rung one, the earliest said on
/// ties, in its label where the respondent said the label, else in the words it was
/// extracted from. A topic question asks for more of the ground the ladder starts
/// from, so it acknowledges a concept of that ground ("You mentioned "froths well". What else
/// do you notice …?"), not the value the answer ended on; an answer that added nothing within
/// [`ECHO_RUNGS`] of the ground is not quoted at all (a tmux run asked 'You mentioned
/// "listened to at home". What else do you notice about oat milk …?' after an answer about
/// family).
fn raised_by(turn: u32, answer: &str, ports: &Ports<'_>) -> Option<String> {
    let levels = &ports.spec.methodology;
    let (ground, _) = levels.level_range();
    ports
        .data
        .live_nodes()
        .filter(|n| n.turn == turn)
        .filter_map(|n| {
            let (at, quote) = quoted_at(answer, &n.label).or_else(|| {
                let words = n.source_quote.split_whitespace().count();
                (1..=MAX_ECHO_WORDS)
                    .contains(&words)
                    .then(|| quoted_at(answer, &n.source_quote))
                    .flatten()
            })?;
            let level = levels.node_type(&n.node_type).map_or(u32::MAX, |t| t.level);
            (level < ground.saturating_add(ECHO_RUNGS)).then_some(((level, at), quote))
        })
        .min_by_key(|(key, _)| *key)
        .map(|(_, quote)| quote)
}

/// Rungs above the ontology's lowest whose concepts a topic question may say back: the ground
/// and the one above it (an attribute and what it does, a scene and the job done in it).
const ECHO_RUNGS: u32 = 2;

/// Most words of an extracted span said back in a question.
const MAX_ECHO_WORDS: usize = 6;

/// `label` as it is written in `answer` (matched without regard to case, on word boundaries),
/// or `None` when the answer does not contain it.
pub(crate) fn quoted_in(answer: &str, label: &str) -> Option<String> {
    quoted_at(answer, label).map(|(_, quote)| quote)
}

/// [`quoted_in`] with the byte offset in `answer` where the quote starts.
fn quoted_at(answer: &str, label: &str) -> Option<(usize, String)> {
    let label = label.trim();
    if label.is_empty() {
        return None;
    }
    let lower_answer = answer.to_lowercase();
    let lower_label = label.to_lowercase();
    // Lowercasing can change byte lengths outside ASCII; only then is the match unsafe to map
    // back, and such a label is simply not echoed.
    if lower_answer.len() != answer.len() || lower_label.len() != label.len() {
        return None;
    }
    let boundary = |i: usize| {
        lower_answer
            .get(i..)
            .and_then(|r| r.chars().next())
            .is_none_or(|c| !c.is_alphanumeric())
    };
    let mut from = 0;
    while let Some(found) = lower_answer.get(from..)?.find(&lower_label) {
        let start = from + found;
        let end = start + lower_label.len();
        let before_ok = lower_answer
            .get(..start)
            .and_then(|b| b.chars().next_back())
            .is_none_or(|c| !c.is_alphanumeric());
        if before_ok && boundary(end) {
            let quote = answer.get(start..end)?;
            let opens_sentence = answer
                .get(..start)
                .map(str::trim_end)
                .is_none_or(|b| b.is_empty() || b.ends_with(['.', '!', '?']));
            return Some((
                start,
                if opens_sentence {
                    lowercase_first_word(quote)
                } else {
                    quote.to_owned()
                },
            ));
        }
        from = start + 1;
    }
    None
}

/// A quote that opened a sentence, with its first word in lower case as it reads mid-question
/// ("Being patient" → "being patient"); "I" and words with other capitals (names, acronyms)
/// stay as written.
fn lowercase_first_word(quote: &str) -> String {
    let first = quote.split_whitespace().next().unwrap_or_default();
    let bare = first.split('\'').next().unwrap_or_default();
    let ordinary = bare != "I" && bare.chars().skip(1).all(|c| !c.is_uppercase());
    let mut chars = quote.chars();
    match chars.next() {
        Some(c) if ordinary && c.is_uppercase() => c.to_lowercase().chain(chars).collect(),
        _ => quote.to_owned(),
    }
}

/// The conversation window for the question prompt: recent utterances before this turn plus
/// this turn's answer.
pub(crate) fn window(
    recent: &[RecentUtterance],
    turn: u32,
    answer: &str,
    max_chars: usize,
) -> String {
    let mut lines: Vec<Line<'_>> = recent
        .iter()
        .filter(|u| u.turn < turn)
        .map(|u| Line {
            speaker: u.speaker,
            text: &u.text,
        })
        .collect();
    lines.push(Line {
        speaker: Speaker::Respondent,
        text: answer,
    });
    conversation_window(&lines, max_chars)
}

/// Labels of the live concepts in the order they were raised, without repeats (the last
/// [`SUMMARY_CONCEPTS`]): what `recent_node` and `summary` focus on.
fn raised_concepts<'n>(live_labels: impl IntoIterator<Item = &'n str>) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for label in live_labels {
        let label = label.trim();
        if label.is_empty() {
            continue;
        }
        labels.retain(|l| !l.eq_ignore_ascii_case(label));
        labels.push(label.to_owned());
    }
    let skip = labels.len().saturating_sub(SUMMARY_CONCEPTS);
    labels.split_off(skip)
}

/// What the question is about: the node stage 2 chose; otherwise what the strategy's
/// `focus_mode` asks for: the concept raised last (`recent_node`), everything raised so far
/// (`summary`), or the topic (`topic`, and any mode before a concept exists).
fn question_focus<'a>(
    strategy: &Strategy,
    chosen: Option<&'a Focus>,
    raised: &'a [String],
) -> QuestionFocus<'a> {
    if let Some(focus) = chosen {
        return QuestionFocus::Node(&focus.label);
    }
    match (&strategy.focus_mode, raised.last()) {
        (FocusMode::RecentNode, Some(last)) => QuestionFocus::Node(last),
        (FocusMode::Summary, Some(_)) => QuestionFocus::Summary(raised),
        _ => QuestionFocus::Topic,
    }
}

#[cfg(test)]
mod focus_tests {
    use super::*;

    #[test]
    fn a_quote_is_what_the_answer_says_on_word_boundaries() {
        let answer = "Family matters most. Being patient with them is part of being a good parent.";
        assert_eq!(
            quoted_in(answer, "being patient").as_deref(),
            Some("being patient"),
            "opens a sentence: lower case"
        );
        assert_eq!(
            quoted_in(answer, "good parent").as_deref(),
            Some("good parent")
        );
        assert_eq!(quoted_in(answer, "parents"), None, "not a whole word");
        assert_eq!(quoted_in(answer, "patient parent"), None, "not said");
        assert_eq!(
            quoted_in("I think so.", "I think").as_deref(),
            Some("I think")
        );
        assert_eq!(
            quoted_in("Sony ones are best.", "sony ones").as_deref(),
            Some("sony ones")
        );
        assert_eq!(
            quoted_in("BBC radio helps.", "bbc radio").as_deref(),
            Some("BBC radio")
        );
        // Lowercasing 'İ' changes its length: such an answer is not quoted from.
        assert_eq!(quoted_in("İstanbul trips", "trips"), None);
        assert_eq!(
            quoted_in("Über cool", "über cool").as_deref(),
            Some("über cool")
        );
    }
    use crate::pipeline::stages::fixture::{self, Fixture, selection};

    #[tokio::test]
    async fn the_model_writes_the_question_and_without_one_the_template_does() {
        let mut fx = Fixture::new();
        fx.say(
            0,
            Speaker::Interviewer,
            "What comes to mind about oat milk?",
        );
        let node = fx.add_node("creamy texture", "attribute", 1);
        let (loaded, saved, _) = fx.opening_stages(1, "It froths well and it's creamy.");
        let chosen = selection("deepen", Some((&node, "creamy texture")));
        let computed = fixture::computed(1, crate::domain::GraphState::default(), "");
        let input = Input {
            turn: 1,
            loaded: &loaded,
            saved: &saved,
            computed: &computed,
            selection: &chosen,
            closing: false,
        };
        let staged = run(&input, &fx.ports()).await.unwrap();
        assert_eq!(
            staged.output.question,
            "What does a creamy, well-frothed latte do for you in the morning?"
        );
        assert_eq!(staged.output.question_source, "model");
        assert_eq!(staged.output.strategy, "deepen");
        assert_eq!(staged.output.focus, chosen.focus);
        assert_eq!(staged.calls.len(), 1);

        fx.without_model();
        let staged = run(&input, &fx.ports()).await.unwrap();
        assert!(staged.calls.is_empty());
        assert!(
            !staged.output.has_llm_fallback,
            "templates are the design without a model"
        );
        assert!(staged.output.question_source.starts_with("template"));
        assert!(
            staged.output.question.contains("creamy texture"),
            "{}",
            staged.output.question
        );
    }

    fn strategy(mode: &str) -> Strategy {
        serde_saphyr::from_str(&format!(
            "name: s\nnode_binding: none\nfocus_mode: {mode}\nsignal_weights: {{}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn each_focus_mode_gives_its_own_focus_on_a_node_free_turn() {
        let live = [
            "froths well",
            "kinder to the planet",
            "Froths well",
            " ",
            "being a good parent",
        ];
        let raised = raised_concepts(live);
        assert_eq!(
            raised,
            ["kinder to the planet", "Froths well", "being a good parent"]
        );
        assert_eq!(
            question_focus(&strategy("recent_node"), None, &raised),
            QuestionFocus::Node("being a good parent")
        );
        assert_eq!(
            question_focus(&strategy("summary"), None, &raised),
            QuestionFocus::Summary(&raised)
        );
        assert_eq!(
            question_focus(&strategy("topic"), None, &raised),
            QuestionFocus::Topic
        );
        // Before any concept, every mode asks about the topic.
        for mode in ["recent_node", "summary", "topic"] {
            assert_eq!(
                question_focus(&strategy(mode), None, &[]),
                QuestionFocus::Topic
            );
        }
        // A node chosen by stage 2 is the focus whatever the mode.
        let chosen = Focus {
            node_id: "n1".to_owned(),
            label: "froths well".to_owned(),
        };
        assert_eq!(
            question_focus(&strategy("summary"), Some(&chosen), &raised),
            QuestionFocus::Node("froths well")
        );
    }
}
