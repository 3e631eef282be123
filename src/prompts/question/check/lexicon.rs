//! The words the question check looks for: speaker labels, the headings and stock phrases of
//! our own prompts, words that cannot end a question, and words that turn a number into a
//! weight. Kept apart from the rules so the lists can grow without touching them; every entry
//! is lower case, since the check compares ignoring case.

/// Labels that start a line of a transcript or chat, compared ignoring case.
pub(super) const ROLE_LABELS: &[&str] = &[
    "interviewer",
    "respondent",
    "interviewee",
    "assistant",
    "user",
    "system",
    "human",
    "moderator",
    "participant",
];

/// Headings and stock phrases of our own prompts (`src/prompts/**`, the signal-scoring and
/// slot-discovery prompts), lower case. A question that contains one of them is the prompt
/// coming back, not a question.
pub(super) const PROMPT_PHRASES: &[&str] = &[
    "why this strategy",
    "active signals",
    "topic anchoring",
    "research topic",
    "interview objective",
    "knowledge graph",
    "recent conversation",
    "focus concept",
    "focus node",
    "focus element",
    "node type",
    "edge type",
    "reply format",
    "linguistic hints",
    "concepts already in the graph",
    "relationship examples",
    "naming concepts",
    "how this method opens",
    "background (for you)",
    "for you, not to be read out",
    "the conversation so far",
    "your next answer",
    "who you are",
    "respondent's answer",
    "interviewer's question",
    "score decomposition",
    "phase multiplier",
    "phase bonus",
    "longest chain",
    "complete chain from",
    "concepts with no relationship",
    "write the next question",
    "write the opening question",
    "reply with the question only",
    "the last question was",
    "and they answered",
    "they have just said",
    "we are interviewing someone",
    "we are starting an interview",
    "a question in this spirit",
    "write one new question",
    "write one question",
    "in this spirit",
    "short sentence",
    "single sentence",
    "question mark",
    "looking for a question",
    "previous response",
    "you're an interviewer",
    "you are an interviewer",
    "i'm looking for",
    "respondent",
    "respondents",
    "rules:",
    "method:",
    "goal:",
    "note:",
    "topic:",
    "closing:",
    "methodology:",
    "rubrics:",
    "as an ai",
    "language model",
];

/// Words that never end a whole question: a question stopping on one was cut off (a budget
/// ran out and a closing `?` was forced), as in "What do you like about the?".
pub(in crate::prompts::question) const DANGLING_WORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "but", "nor", "your", "my", "our", "their", "its", "because",
    "than", "whose", "very",
];

/// Words that, next to a number, make it a weight or a score from the prompt.
pub(super) const WEIGHT_WORDS: &[&str] = &[
    "weight",
    "weights",
    "contribution",
    "score",
    "multiplier",
    "bonus",
];
