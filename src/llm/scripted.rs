//! The scripted provider: replies read from a YAML (or JSON) file, chosen by role, turn and
//! prompt text. Tests and demos use it to run the whole pipeline without a model.
//!
//! ```yaml
//! latency_ms: 0            # optional: simulated latency of every call
//! stream_chunk_chars: 16   # optional: streamed answers arrive in pieces of this many chars
//! extraction:
//!   - turn: 1              # optional: only for this turn
//!     contains: "oat"      # optional: only when the prompt contains this text
//!     reply: '{"concepts": [], "relationships": []}'
//!   - turn: 2
//!     replies: ["not json", '{"concepts": [], "relationships": []}']
//! question_generation:
//!   - reply: "What else comes to mind?"
//! signal_scoring:
//!   - error: timeout       # simulate a failure: timeout, rate_limit or a message
//! ```
//!
//! The first rule of the request's role whose conditions hold answers it. `reply` is the same
//! every time, so a resumed session sees exactly what the interrupted one saw; `replies` is
//! consumed one entry per attempt at that rule and turn within one process (the last entry
//! repeats), which is how a test makes a first attempt fail and a retry succeed.
//!
//! Setting [`SCRIPT_LOG_ENV`] to a file path appends one JSON line per request served
//! (`{"role","turn","rule","attempt"}`), so a test can prove which calls were made.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde::Deserialize;

use super::{DeltaSink, LlmError, LlmProvider, LlmRequest, LlmResponse, Role, estimate_tokens};
use crate::config::{ConfigError, Problem};

/// Environment variable naming the request log file.
pub const SCRIPT_LOG_ENV: &str = "INTERVIEWER_SCRIPT_LOG";

/// A script file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ScriptError(#[from] ConfigError);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(default)]
    latency_ms: u64,
    #[serde(default)]
    stream_chunk_chars: usize,
    #[serde(default)]
    extraction: Vec<Rule>,
    #[serde(default)]
    slot_discovery: Vec<Rule>,
    #[serde(default)]
    signal_scoring: Vec<Rule>,
    #[serde(default)]
    question_generation: Vec<Rule>,
    #[serde(default)]
    respondent: Vec<Rule>,
}

impl ScriptFile {
    fn rules(&self, role: Role) -> &[Rule] {
        match role {
            Role::Extraction => &self.extraction,
            Role::SlotDiscovery => &self.slot_discovery,
            Role::SignalScoring => &self.signal_scoring,
            Role::QuestionGeneration => &self.question_generation,
            Role::Respondent => &self.respondent,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    #[serde(default)]
    turn: Option<u32>,
    #[serde(default)]
    contains: Option<String>,
    #[serde(default)]
    reply: Option<String>,
    #[serde(default)]
    replies: Option<Vec<String>>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    latency_ms: Option<u64>,
}

impl Rule {
    fn matches(&self, request: &LlmRequest) -> bool {
        self.turn.is_none_or(|t| t == request.turn)
            && self.contains.as_deref().is_none_or(|needle| {
                request.user.contains(needle) || request.system.contains(needle)
            })
    }
}

/// Replies from a script file.
#[derive(Debug)]
pub struct ScriptedProvider {
    path: PathBuf,
    model: String,
    script: ScriptFile,
    /// Attempts per (role, rule index, turn), for `replies` sequences.
    attempts: Mutex<HashMap<(Role, usize, u32), usize>>,
    log: Option<PathBuf>,
}

impl ScriptedProvider {
    /// Loads and checks a script. The request log is taken from [`SCRIPT_LOG_ENV`].
    pub fn load(path: &Path) -> Result<Self, ScriptError> {
        let script: ScriptFile = crate::config::yaml::load(path)?;
        let problems = check(&script);
        if !problems.is_empty() {
            return Err(ConfigError::invalid(path, problems).into());
        }
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(Self {
            path: path.to_path_buf(),
            model: format!("script:{name}"),
            script,
            attempts: Mutex::new(HashMap::new()),
            log: std::env::var_os(SCRIPT_LOG_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        })
    }

    /// The script file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The rule answering `request`, its index and the attempt number (0-based).
    fn pick(&self, request: &LlmRequest) -> Result<(usize, &Rule, usize), LlmError> {
        let (index, rule) = self
            .script
            .rules(request.role)
            .iter()
            .enumerate()
            .find(|(_, r)| r.matches(request))
            .ok_or_else(|| {
                LlmError::Script(format!(
                    "{}: no rule of `{}` matches turn {}",
                    self.path.display(),
                    request.role,
                    request.turn
                ))
            })?;
        let attempt = {
            let mut attempts = self
                .attempts
                .lock()
                .map_err(|_| LlmError::Script("attempt counter poisoned".to_owned()))?;
            let n = attempts
                .entry((request.role, index, request.turn))
                .or_insert(0);
            let current = *n;
            *n += 1;
            current
        };
        Ok((index, rule, attempt))
    }

    fn record(&self, request: &LlmRequest, rule: usize, attempt: usize) {
        let Some(path) = &self.log else { return };
        let line = serde_json::json!({
            "role": request.role,
            "turn": request.turn,
            "rule": rule,
            "attempt": attempt,
        });
        // The log is a debugging aid; failing to write it must not fail the interview.
        if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(file, "{line}");
        }
    }

    async fn answer(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let started = Instant::now();
        let (index, rule, attempt) = self.pick(request)?;
        self.record(request, index, attempt);
        let latency = rule.latency_ms.unwrap_or(self.script.latency_ms);
        if latency > 0 {
            tokio::time::sleep(Duration::from_millis(latency)).await;
        }
        if let Some(error) = &rule.error {
            return Err(simulated_error(error));
        }
        let text = match (&rule.reply, &rule.replies) {
            (Some(reply), _) => reply.clone(),
            (None, Some(replies)) => replies
                .get(attempt)
                .or(replies.last())
                .cloned()
                .unwrap_or_default(),
            (None, None) => String::new(),
        };
        Ok(LlmResponse {
            tokens_in: estimate_tokens(&request.system) + estimate_tokens(&request.user),
            tokens_out: estimate_tokens(&text),
            text,
            provider: "scripted".to_owned(),
            model: self.model.clone(),
            latency: started.elapsed(),
            attempts: 1,
        })
    }
}

fn simulated_error(error: &str) -> LlmError {
    let provider = "scripted".to_owned();
    match error {
        "timeout" => LlmError::Timeout {
            provider,
            timeout: Duration::ZERO,
            attempts: 1,
            elapsed: Duration::ZERO,
        },
        "rate_limit" => LlmError::RateLimited {
            provider,
            retry_after: None,
            attempts: 1,
            elapsed: Duration::ZERO,
        },
        message => LlmError::Transport {
            provider,
            message: message.to_owned(),
        },
    }
}

fn check(script: &ScriptFile) -> Vec<Problem> {
    let mut problems = Vec::new();
    for role in Role::ALL {
        for (i, rule) in script.rules(role).iter().enumerate() {
            let at = format!("{role}[{i}]");
            let answers = usize::from(rule.reply.is_some())
                + usize::from(rule.replies.is_some())
                + usize::from(rule.error.is_some());
            if answers != 1 {
                problems.push(Problem::new(
                    at.clone(),
                    "needs exactly one of `reply`, `replies` or `error`",
                ));
            }
            if rule.replies.as_ref().is_some_and(Vec::is_empty) {
                problems.push(Problem::new(format!("{at}.replies"), "must not be empty"));
            }
        }
    }
    problems
}

impl LlmProvider for ScriptedProvider {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(self.answer(request))
    }

    fn stream<'a>(
        &'a self,
        request: &'a LlmRequest,
        deltas: DeltaSink,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(async move {
            let response = self.answer(request).await?;
            let chunk = self.script.stream_chunk_chars;
            if chunk == 0 {
                let _ = deltas.send(response.text.clone());
            } else {
                let chars: Vec<char> = response.text.chars().collect();
                for piece in chars.chunks(chunk) {
                    let _ = deltas.send(piece.iter().collect());
                    tokio::task::yield_now().await;
                }
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(yaml: &str) -> (tempfile::TempDir, ScriptedProvider) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.yaml");
        std::fs::write(&path, yaml).unwrap();
        let p = ScriptedProvider::load(&path).unwrap();
        (dir, p)
    }

    fn request(role: Role, turn: u32, user: &str) -> LlmRequest {
        LlmRequest {
            role,
            system: String::new(),
            user: user.to_owned(),
            temperature: 0.3,
            max_tokens: 100,
            turn,
            schema: None,
        }
    }

    async fn text(p: &ScriptedProvider, role: Role, turn: u32, user: &str) -> String {
        p.complete(&request(role, turn, user)).await.unwrap().text
    }

    #[tokio::test]
    async fn first_matching_rule_answers() {
        let (_dir, p) = provider(
            "extraction:\n  - turn: 2\n    reply: two\n  - contains: oat\n    reply: oat\n  - reply: any\n",
        );
        assert_eq!(text(&p, Role::Extraction, 2, "oat milk").await, "two");
        assert_eq!(text(&p, Role::Extraction, 3, "oat milk").await, "oat");
        assert_eq!(text(&p, Role::Extraction, 3, "coffee").await, "any");
    }

    #[tokio::test]
    async fn replies_advance_per_attempt_and_repeat_the_last() {
        let (_dir, p) = provider("question_generation:\n  - replies: [a, b]\n");
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(text(&p, Role::QuestionGeneration, 1, "").await);
        }
        assert_eq!(got, ["a", "b", "b"]);
        // Another turn starts its own sequence.
        assert_eq!(text(&p, Role::QuestionGeneration, 2, "").await, "a");
    }

    #[tokio::test]
    async fn unmatched_requests_and_simulated_errors_fail() {
        let (_dir, p) = provider("signal_scoring:\n  - error: rate_limit\n");
        let err = p
            .complete(&request(Role::Extraction, 1, ""))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no rule of `extraction` matches turn 1"),
            "{err}"
        );
        let err = p
            .complete(&request(Role::SignalScoring, 1, ""))
            .await
            .unwrap_err();
        assert!(matches!(err, LlmError::RateLimited { .. }));
    }

    #[tokio::test]
    async fn streaming_splits_into_chunks() {
        let (_dir, p) =
            provider("stream_chunk_chars: 3\nquestion_generation:\n  - reply: abcdefgh\n");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let r = p
            .stream(&request(Role::QuestionGeneration, 1, ""), tx)
            .await
            .unwrap();
        assert_eq!(r.text, "abcdefgh");
        let mut pieces = Vec::new();
        while let Ok(piece) = rx.try_recv() {
            pieces.push(piece);
        }
        assert_eq!(pieces, ["abc", "def", "gh"]);
    }

    #[test]
    fn a_rule_needs_exactly_one_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.yaml");
        std::fs::write(
            &path,
            "extraction:\n  - turn: 1\n  - reply: a\n    error: b\n",
        )
        .unwrap();
        let err = ScriptedProvider::load(&path).unwrap_err().to_string();
        assert!(err.contains("extraction[0]"), "{err}");
        assert!(err.contains("extraction[1]"), "{err}");
        std::fs::write(&path, "extraction:\n  - reply: a\n    typo: 1\n").unwrap();
        let err = ScriptedProvider::load(&path).unwrap_err().to_string();
        assert!(err.contains("typo"), "{err}");
    }
}
