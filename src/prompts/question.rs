//! Question prompts: the conversational opening and the policy-driven follow-up (seed 001
//! "Policy-Driven Follow-Up Question Generation", "Topic Anchoring").
//!
//! The follow-up prompt tells the model what strategy to carry out and why the engine chose it:
//! the signals that contributed to the winning strategy, with their catalogue descriptions, and
//! its score decomposition. The original system designed this but never wired it; here it is
//! built from the stage-1 [`ScoredCandidate`] of the winner. The reply parser is in [`reply`].
//!
//! For small models, [`compact`] writes a few sentences of prose instead; every question from
//! any source passes [`check`]; and [`templates`] renders the methodology's own phrasings, the
//! floor when a model's question fails the check and all a modelless session asks.

mod check;
mod compact;
mod relevance;
mod reply;
mod templates;

use super::Prompt;
use super::window::one_line;
use crate::config::{Concept, Methodology, Strategy};
use crate::domain::{GraphState, Signals, format_number};
use crate::scoring::{ScoredCandidate, SignalContribution};
use crate::signals::catalog;

pub use check::{MAX_QUESTION_WORDS, MIN_QUESTION_WORDS, QuestionProblem, check_question};
pub use compact::{COMPACT_MAX_TOKENS, COMPACT_TEMPERATURE, compact_follow_up_prompt};
pub use relevance::{Anchors, RelevanceProblem, check_small_model_question};
pub use reply::{MAX_QUESTION_CHARS, parse_question_reply};
pub use templates::{LAST_RESORT_QUESTION, TemplateInput, render_template};

/// Opening temperature (seed 001): high, for a varied, natural first question.
pub const OPENING_TEMPERATURE: f32 = 0.9;
/// Follow-up temperature (seed 001, baseline mode): some variety, but the strategy constrains.
pub const FOLLOW_UP_TEMPERATURE: f32 = 0.8;
/// Contributions listed under "Why This Strategy Was Selected": the strongest few explain the
/// choice; the full decomposition is in the score panel, not the prompt.
pub const MAX_REASONS: usize = 5;

/// Chain length from which the user prompt adds the topic reminder (seed 001: depth ≥ 2).
const DEEP_CHAIN: u32 = 2;

/// Rules shared by both question prompts, about the shape of the reply.
const REPLY_RULES: &str = "Reply with the question only, as plain text: no label, no quotation \
                           marks, no JSON, no explanation.";

/// What a follow-up question is about: the strategy's focus node, or for a turn without
/// one, what the strategy's `focus_mode` asks for (seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionFocus<'a> {
    /// One concept, by its label: the node stage 2 chose, or with `recent_node` on a
    /// node-free strategy the concept the respondent raised last.
    Node(&'a str),
    /// What the respondent has said so far (`summary`): the concepts they raised, most
    /// recent last, to be played back and asked about as a whole.
    Summary(&'a [String]),
    /// The concept's topic as a whole (`topic`, or `recent_node` before any concept).
    Topic,
}

impl<'a> QuestionFocus<'a> {
    /// The focus node's label, for templates' `{focus}`; none for a summary or the topic.
    pub fn node_label(&self) -> Option<&'a str> {
        match self {
            Self::Node(label) => Some(label),
            Self::Summary(_) | Self::Topic => None,
        }
    }
}

/// Concepts a summary focus names at most: the most recent ones.
pub const SUMMARY_CONCEPTS: usize = 6;

/// What the follow-up prompt is built from.
#[derive(Debug, Clone, Copy)]
pub struct FollowUpInput<'a> {
    pub methodology: &'a Methodology,
    pub concept: &'a Concept,
    /// The selected strategy.
    pub strategy: &'a Strategy,
    /// What the question is about (see [`QuestionFocus`]).
    pub focus: QuestionFocus<'a>,
    /// The focus node's stance (−1 when the respondent spoke against it, +1 when they spoke
    /// well of it, 0 without a node): a negative focus gets the strategy's
    /// `negative_focus_templates`, a positive one its `positive_focus_templates`, and the
    /// model is told.
    pub focus_stance: i8,
    /// The recent conversation, already bounded by
    /// [`conversation_window`](super::conversation_window).
    pub conversation: &'a str,
    pub graph: &'a GraphState,
    /// This turn's global signals.
    pub signals: &'a Signals,
    /// The winning strategy's stage-1 decomposition; `None` leaves out both rationale sections.
    pub winner: Option<&'a ScoredCandidate>,
    /// Whether this is the interview's last question.
    pub closing: bool,
}

/// The opening question prompt: methodology name, goal and opening guidance plus the interview
/// objective.
pub fn opening_prompt(methodology: &Methodology, concept: &Concept) -> Prompt {
    let system = format!(
        "You are an experienced qualitative researcher opening an in-depth interview. The first \
         question sets the tone: make it warm, conversational and easy to answer from the \
         respondent's own experience.\n\n\
         Rules:\n\
         - Ask exactly one open-ended question that cannot be answered with yes or no.\n\
         - Do not mention the research method, its vocabulary or the objective's wording.\n\
         - Do not suggest answers, opinions or reasons.\n\
         - One or two short sentences; a brief friendly greeting is fine.\n\
         - {REPLY_RULES}"
    );
    let method = &methodology.method;
    let mut user = format!(
        "## Interview objective (for you, not to be read out)\n{}\n\n\
         ## Topic\n{}\n\n\
         ## Methodology\n{}: {}\n",
        concept.objective().trim(),
        concept.topic().trim(),
        method.name,
        method.goal.trim()
    );
    if !method.opening_bias.trim().is_empty() {
        user.push_str(&format!(
            "\n## How this method opens\n{}\n",
            method.opening_bias.trim()
        ));
    }
    if !concept.context.insight.trim().is_empty() {
        user.push_str(&format!(
            "\n## Background (for you)\n{}\n",
            concept.context.insight.trim()
        ));
    }
    user.push_str("\nWrite the opening question.");
    Prompt {
        system,
        user,
        temperature: OPENING_TEMPERATURE,
    }
}

/// The follow-up question prompt for the selected strategy.
pub fn follow_up_prompt(input: &FollowUpInput<'_>) -> Prompt {
    Prompt {
        system: follow_up_system(input.methodology, input.concept),
        user: follow_up_user(input),
        temperature: FOLLOW_UP_TEMPERATURE,
    }
}

fn follow_up_system(methodology: &Methodology, concept: &Concept) -> String {
    let topic = concept.topic().trim();
    format!(
        "You are an experienced qualitative researcher conducting an in-depth interview. Each \
         turn you are given a strategy, chosen from what the interview has uncovered so far, \
         and you ask the one next question that carries it out.\n\n\
         ## Topic Anchoring:\n\
         This interview is about **{topic}**. However far the conversation moves into \
         motivations and values, keep every question tied to the respondent's own experience \
         of {topic}. If the talk drifts into general reflections on life, bring it back gently \
         by way of {topic}.\n\n\
         Method: {}\n\
         Goal: {}\n\n\
         Rules:\n\
         - Ask exactly one question, open-ended and non-leading; never suggest the answer you \
         expect.\n\
         - Refer to what the respondent mentioned in their own words.\n\
         - Do not repeat a question from the recent conversation.\n\
         - Keep it short and conversational; a brief acknowledgement before it is fine.\n\
         - {REPLY_RULES}",
        methodology.method.name,
        methodology.method.goal.trim()
    )
}

fn follow_up_user(input: &FollowUpInput<'_>) -> String {
    let mut p = format!(
        "## Strategy: {}\n{}\n\n",
        input.strategy.name,
        input.strategy.description.trim()
    );
    match input.focus {
        QuestionFocus::Node(label) if !one_line(label).is_empty() => {
            p.push_str(&format!("Focus concept: {}\n", one_line(label)));
            if input.focus_stance < 0 {
                p.push_str(
                    "The respondent spoke of it as something negative: do not ask what it \
                     gives them or why it is important; ask how it affects them.\n",
                );
            } else if input.focus_stance > 0 {
                p.push_str(
                    "The respondent spoke well of it: do not ask what it cost them or what \
                     went wrong with it.\n",
                );
            }
            p.push('\n');
        }
        QuestionFocus::Summary(labels) if !labels.is_empty() => {
            let listed: Vec<String> = labels.iter().map(|l| one_line(l)).collect();
            p.push_str(&format!(
                "Focus: what the respondent has said so far. The concepts they raised, most \
                 recent last: {}. Play these back briefly in their own words and ask about them \
                 as a whole, not about one of them.\n\n",
                listed.join("; ")
            ));
        }
        _ => p.push_str("Focus concept: none; address the topic as a whole.\n\n"),
    }
    p.push_str(&graph_summary(input.graph));
    let conversation = input.conversation.trim();
    p.push_str(&format!(
        "\n## Recent conversation:\n{}\n",
        if conversation.is_empty() {
            "(nothing yet)"
        } else {
            conversation
        }
    ));
    if let Some(winner) = input.winner {
        p.push_str(&active_signals(winner, input.signals));
        p.push_str(&selection_reasons(winner));
    }
    if input.graph.max_depth >= DEEP_CHAIN {
        let topic = input.concept.topic().trim();
        p.push_str(&format!(
            "\nNote: the conversation has reached a chain of {} links. Keep the question tied to \
             {topic}: explore what matters to the respondent through their specific experience \
             of it, not through life in general.\n",
            input.graph.max_depth
        ));
    }
    if input.closing {
        p.push_str(
            "\n## Closing:\nThis is the last question of the interview. Thank the respondent \
             warmly for their time and ask one final question that lets them confirm or add to \
             what they have told you.\n",
        );
    }
    p.push_str("\nWrite the next question.");
    p
}

fn graph_summary(graph: &GraphState) -> String {
    let by_type: Vec<String> = graph
        .nodes_by_type
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    let by_type = if by_type.is_empty() {
        String::new()
    } else {
        format!(" ({})", by_type.join(", "))
    };
    let complete = if graph.has_complete_chain {
        "yes"
    } else {
        "no"
    };
    format!(
        "## Knowledge graph so far:\n\
         - Concepts: {}{by_type}\n\
         - Relationships: {}\n\
         - Longest chain: {} links\n\
         - Concepts with no relationship: {}\n\
         - Complete chain from a concrete to a terminal concept: {complete}\n",
        graph.node_count, graph.edge_count, graph.max_depth, graph.orphan_count
    )
}

/// The signal a weight key reads: the key itself when it names a signal, else the key without
/// its qualifier (`llm.response_depth.moderate` → `llm.response_depth`).
fn base_signal(key: &str) -> &str {
    if catalog::spec(key).is_some() {
        return key;
    }
    match key.rsplit_once('.') {
        Some((base, _)) if catalog::spec(base).is_some() => base,
        _ => key,
    }
}

/// The signals behind the winner's non-zero contributions, once each, with their current value
/// and catalogue description.
fn active_signals(winner: &ScoredCandidate, signals: &Signals) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut lines = String::new();
    for c in winner
        .signal_contributions
        .iter()
        .filter(|c| c.contribution.abs() > 0.0)
    {
        let base = base_signal(&c.name);
        if seen.contains(&base) {
            continue;
        }
        seen.push(base);
        let value = signals.get(base).unwrap_or(&c.value);
        lines.push_str(&format!("- {base}: {value}\n"));
        if let Some(spec) = catalog::spec(base) {
            lines.push_str(&format!("  -> {}\n", spec.description));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("\n## Active Signals:\n{lines}")
}

/// The strongest contributions of the winner and its phase terms.
fn selection_reasons(winner: &ScoredCandidate) -> String {
    let mut top: Vec<&SignalContribution> = winner
        .signal_contributions
        .iter()
        .filter(|c| c.contribution.abs() > 0.0)
        .collect();
    // Stable sort: equal contributions keep the methodology's weight order.
    top.sort_by(|a, b| b.contribution.abs().total_cmp(&a.contribution.abs()));
    let mut p = String::from("\n## Why This Strategy Was Selected:\n");
    for c in top.iter().take(MAX_REASONS) {
        p.push_str(&format!(
            "- {}: weight {}, contribution {}\n",
            c.name,
            format_number(c.weight),
            format_number(c.contribution)
        ));
    }
    p.push_str(&format!(
        "- Score: base {} × phase multiplier {} + phase bonus {} = {}\n",
        format_number(winner.base_score),
        format_number(winner.phase_multiplier),
        format_number(winner.phase_bonus),
        format_number(winner.final_score)
    ));
    p
}
