//! Every label, hint and help line the app shows, so wording is reviewed in one file.

/// Panel titles.
pub const CONVERSATION: &str = "Conversation";
pub const SIGNALS: &str = "Signals";
pub const SCORES: &str = "Score decomposition";
pub const GRAPH_STATS: &str = "Graph";
pub const FOCUS_TRACE: &str = "Focus trace";
pub const ANSWER: &str = "Answer";
pub const EDIT_QUESTION: &str = "Edit the question";
pub const GRAPH_VIEW: &str = "Surface graph";
pub const INSPECTOR: &str = "Node";
pub const SLOTS: &str = "Canonical slots";

/// Short tab names for narrow layouts, in panel order.
pub const TABS: [&str; 5] = ["Chat", "Signals", "Scores", "Graph", "Focus"];

/// Speaker labels in the conversation.
pub const INTERVIEWER: &str = "Interviewer";
pub const RESPONDENT: &str = "Respondent";

/// Why the answer box does not send, shown in its title.
pub const WAIT_OPENING: &str = "waiting for the opening question";
pub const WAIT_TURN: &str = "turn running, sending disabled";
pub const WAIT_OVERRIDE: &str = "regenerating the question, sending disabled";
pub const WAIT_PROPOSAL: &str = "Enter accept · e edit · r regenerate";
pub const WAIT_FAILED: &str = "turn failed: r retry · x end interview";
pub const WAIT_FINISHED: &str = "interview finished: q quit · g graph view";
pub const WAIT_WATCH: &str = "watching: answers come from the simulated respondent";
pub const EMPTY_ANSWER: &str = "type an answer first";
pub const SPEECH_OFF: &str = "speech is off in this view";
pub const SPEECH_HELD: &str =
    "you edited the answer while listening: the transcript stays out (F2 stops)";
pub const PLACEHOLDER: &str = "Type the answer. Enter sends, Alt+Enter adds a line.";

/// Empty-panel notes.
pub const NO_TURN_YET: &str = "Appears after the first answer.";
pub const NO_NODES: &str = "No concepts yet.";
pub const NO_SLOTS: &str = "No canonical slots yet.";

/// One section of the help overlay: a heading and `(keys, what they do)` rows.
pub type HelpSection = (&'static str, &'static [(&'static str, &'static str)]);

/// Every key binding, by context.
pub const HELP: &[HelpSection] = &[
    (
        "Anywhere",
        &[
            ("Ctrl+C", "quit (asks first; the session stays resumable)"),
            ("F1", "this help"),
            (
                "Tab / Shift+Tab",
                "move between the answer box and the panels",
            ),
            (
                "Alt+1…5",
                "show a panel (chat, signals, scores, graph, focus)",
            ),
            ("PgUp / PgDn", "scroll the conversation"),
            ("mouse wheel", "scroll the panel under the pointer"),
            ("Ctrl+G", "graph view"),
            ("F2", "listen: speech fills the answer box (F2 again stops)"),
            (
                "Alt+← / Alt+→",
                "view the turn before / after (every panel and the graph)",
            ),
        ],
    ),
    (
        "Answer box",
        &[
            ("Enter", "send the answer"),
            ("Alt+Enter / Shift+Enter", "new line (Ctrl+J too)"),
            ("Esc", "leave the answer box"),
            ("←→↑↓ Home End", "move (Ctrl+←→ by word)"),
            ("Ctrl+U", "delete to the start of the line"),
            ("Ctrl+K", "delete to the end of the line"),
            (
                "Ctrl+W / Alt+Backspace",
                "delete the word before the cursor",
            ),
            ("Ctrl+Z / Ctrl+R", "undo / redo"),
            ("Ctrl+Y", "paste what was last deleted"),
            ("(count)", "the length shows near the 5,000-character limit"),
        ],
    ),
    (
        "Panels",
        &[
            ("↑↓ / j k", "select or scroll"),
            ("Home / End", "first / last"),
            ("Enter / Space", "expand: contributions, rubric rationale"),
            ("w", "what-if: edit a strategy's weights (Score panel)"),
            ("1…5", "show a panel"),
            ("i", "back to the answer box"),
            ("[ / ]", "view the turn before / after"),
            ("{ / }", "view the first turn / back to the latest"),
            ("g", "graph view"),
            ("x", "end the interview now (asks first)"),
            ("? / q", "help / quit"),
        ],
    ),
    (
        "Moderator: proposed question",
        &[
            ("Enter", "accept it as asked, then type the answer"),
            ("e", "edit it (Enter saves, Esc cancels)"),
            ("r", "regenerate with another strategy and focus node"),
        ],
    ),
    (
        "Graph view",
        &[
            ("↑↓", "select a node or slot"),
            ("Tab", "switch between nodes and slots"),
            ("PgUp / PgDn", "scroll the node inspector"),
            ("[ ] { }", "the graph as it stood after another turn"),
            ("Esc / g", "back"),
        ],
    ),
    (
        "Popups",
        &[
            ("r / x", "failed turn: retry / end the interview"),
            ("y / n", "confirm / cancel"),
            ("Esc", "close"),
        ],
    ),
];

/// The one-line hint under the screen, by what has the keyboard.
pub const HINT_TYPING: &str = "Enter send · Alt+Enter newline · Esc panels · Tab next panel · Ctrl+G graph · F1 help · Ctrl+C quit";
pub const HINT_TYPING_SPEECH: &str = "Enter send · F2 listen · Alt+Enter newline · Esc panels · Tab next panel · Ctrl+G graph · F1 help · Ctrl+C quit";
pub const HINT_LISTENING: &str =
    "F2 stop listening · Enter send what is shown · type to correct · F1 help";
pub const HINT_PANELS: &str =
    "↑↓ select · Enter expand · Tab next · i answer · g graph · x end · ? help · q quit";
pub const HINT_PROPOSAL: &str =
    "Enter accept · e edit · r regenerate · Tab panels · ? help · q quit";
pub const HINT_EDIT: &str = "Enter save the edited question · Alt+Enter newline · Esc cancel";
pub const HINT_GRAPH: &str =
    "↑↓ select · Tab nodes/slots · PgUp/PgDn inspector · Esc back · ? help · q quit";
pub const HINT_WATCH: &str = "↑↓ select · Tab next panel · g graph · ? help · q quit";
/// After the interview ended: nothing to answer or end any more.
pub const HINT_FINISHED: &str =
    "↑↓ select · Enter expand · Tab next panel · g graph · ? help · q quit";

/// Hints while a popup has the keyboard: the popup's own keys.
pub const HINT_POPUP_HELP: &str = "↑↓ PgUp/PgDn scroll · Esc, F1 or q close";
pub const HINT_POPUP_QUIT: &str = "y or Enter quit (the session stays resumable) · n or Esc stay";
pub const HINT_POPUP_END_CONFIRM: &str = "y or Enter end the interview now · n or Esc go on";
pub const HINT_POPUP_FAILED: &str = "r retry the turn · x end the interview · q quit (resumable)";
pub const HINT_POPUP_OVERRIDE_FAILED: &str =
    "r retry · x end the interview · Esc keep the question · q quit (resumable)";
pub const HINT_POPUP_FATAL: &str = "q quit (the session resumes from its last checkpoint)";
pub const HINT_POPUP_END: &str = "Esc or Enter browse the panels · g graph view · q quit";
pub const HINT_POPUP_WHATIF: &str =
    "↑↓ weight · type a number · ←→ −/+0.1 · s save as new YAML · Esc discard";
pub const HINT_POPUP_REGENERATE: &str =
    "↑↓ choose · Tab strategy/node · Enter regenerate · Esc cancel";
