//! The router's common call behaviour: a per-attempt timeout, the seed's retry rules, and the
//! structured `llm_*` log events, the same for every provider.
//!
//! Only timeouts and HTTP 429 are retried (seed 001: at most one retry, base delay 1 s,
//! exponential backoff); every other failure is returned at once. A rate limit's `retry-after`
//! replaces the backoff, capped.
//!
//! Log events go to target [`LOG_TARGET`] with the call's role, provider, model and turn, and
//! never the prompt or a key. The seed's names: `llm_call_start` (debug; attempt, prompt
//! length, temperature), `llm_call_complete` (info; tokens, latency, attempts), `llm_timeout`
//! and `llm_rate_limit` (warn), `llm_retry_after_timeout` and `llm_retry_after_rate_limit`
//! (info; the next attempt and the delay), `llm_http_error` (error; the status). Two more:
//! `llm_call_failed` (error) for failures without a status (connection, malformed or empty
//! response, a provider's stream error), and `llm_usage_estimated` (debug) when a server
//! reported no token counts.

use std::future::Future;
use std::time::Duration;

use futures::future::BoxFuture;
// Tokio's clock, not std's: the call's time then agrees with the backoff `sleep` and the
// attempt `timeout`, which also lets tests pause and advance all three together.
use tokio::time::Instant;

use super::{DeltaSink, LlmError, LlmRequest, LlmResponse, RoleBinding};

/// Target of every LLM log event.
pub const LOG_TARGET: &str = "interviewer::llm";

/// How the router retries a failed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// Wait after the first failed attempt; doubles after each further one.
    pub base_delay: Duration,
    /// The longest `retry-after` honoured; a longer request waits this long instead.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// The seed's rules: 2 attempts, 1 s base delay; a server's `retry-after` is honoured up to
    /// 30 s, the role's default timeout, so one wait never outlasts an attempt.
    fn default() -> Self {
        Self {
            max_attempts: 2,
            base_delay: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The exponential backoff after failed attempt `attempt` (1-based):
    /// `base_delay * 2^(attempt-1)`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(16);
        self.base_delay.saturating_mul(1 << exponent)
    }

    /// How long to wait before retrying after `error` on attempt `attempt`, or `None` when
    /// the call must fail now (a non-retryable error, or no attempts left).
    pub fn delay_after(&self, error: &LlmError, attempt: u32) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        match error {
            LlmError::RateLimited {
                retry_after: Some(wait),
                ..
            } => Some((*wait).min(self.max_retry_after)),
            e if e.is_retryable() => Some(self.backoff(attempt)),
            _ => None,
        }
    }
}

/// One attempt's result, and whether it already sent text to the caller (a stream that
/// delivered text is never retried: the caller would see the start of the answer twice).
pub(crate) struct Attempt {
    pub result: Result<LlmResponse, LlmError>,
    pub delivered: bool,
}

/// Runs `attempt` until it succeeds, fails for good, or the policy runs out, logging each
/// step. The returned response or error carries the attempts made and the whole call's time.
pub(crate) async fn call<'a, F>(
    binding: &'a RoleBinding,
    policy: RetryPolicy,
    request: &'a LlmRequest,
    mut attempt: F,
) -> Result<LlmResponse, LlmError>
where
    F: FnMut() -> BoxFuture<'a, Attempt>,
{
    let log = CallLog::new(binding, request);
    let started = Instant::now();
    let mut number = 0;
    loop {
        number += 1;
        log.start(request, number);
        let Attempt { result, delivered } = attempt().await;
        match result {
            Ok(mut response) => {
                response.attempts = number;
                response.latency = started.elapsed();
                log.complete(&response);
                return Ok(response);
            }
            Err(mut error) => {
                log.failed(&error, number);
                let delay = if delivered {
                    None
                } else {
                    policy.delay_after(&error, number)
                };
                let Some(delay) = delay else {
                    error.set_call_facts(number, started.elapsed());
                    return Err(error);
                };
                log.retry(&error, number + 1, delay);
                tokio::time::sleep(delay).await;
            }
        }
    }
}

/// One non-streaming attempt bounded by the role's timeout.
pub(crate) fn complete_attempt<'a>(
    binding: &'a RoleBinding,
    request: &'a LlmRequest,
) -> BoxFuture<'a, Attempt> {
    Box::pin(async move {
        Attempt {
            result: timed(binding, binding.provider.complete(request)).await,
            delivered: false,
        }
    })
}

/// One streaming attempt bounded by the role's timeout. Deltas pass through a channel of the
/// attempt's own, so the router knows whether any reached the caller.
pub(crate) fn stream_attempt<'a>(
    binding: &'a RoleBinding,
    request: &'a LlmRequest,
    deltas: &'a DeltaSink,
) -> BoxFuture<'a, Attempt> {
    Box::pin(async move {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let call = timed(binding, binding.provider.stream(request, tx));
        tokio::pin!(call);
        let mut delivered = false;
        let result = loop {
            tokio::select! {
                // Forward what has arrived before looking at the outcome, so deltas keep
                // their order relative to the end of the call.
                biased;
                Some(text) = rx.recv() => {
                    delivered |= !text.is_empty();
                    // A closed receiver only means nobody is watching the stream.
                    let _ = deltas.send(text);
                }
                result = &mut call => break result,
            }
        };
        // Deltas sent just before the call ended; a provider thread that outlives a timeout
        // may still hold a sender, so take only what is already queued.
        while let Ok(text) = rx.try_recv() {
            delivered |= !text.is_empty();
            let _ = deltas.send(text);
        }
        Attempt { result, delivered }
    })
}

async fn timed(
    binding: &RoleBinding,
    call: impl Future<Output = Result<LlmResponse, LlmError>>,
) -> Result<LlmResponse, LlmError> {
    let limit = binding.settings.timeout;
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result,
        Err(_) => Err(LlmError::Timeout {
            provider: binding.provider.name().to_owned(),
            timeout: limit,
            attempts: 1,
            elapsed: limit,
        }),
    }
}

/// The fields every event of one call shares.
struct CallLog<'a> {
    role: &'static str,
    provider: &'a str,
    model: &'a str,
    turn: u32,
}

impl<'a> CallLog<'a> {
    fn new(binding: &'a RoleBinding, request: &LlmRequest) -> Self {
        Self {
            role: request.role.as_str(),
            provider: binding.provider.name(),
            model: binding.provider.model(),
            turn: request.turn,
        }
    }

    fn start(&self, request: &LlmRequest, attempt: u32) {
        tracing::debug!(
            target: LOG_TARGET,
            role = self.role,
            provider = self.provider,
            model = self.model,
            turn = self.turn,
            attempt,
            prompt_chars = request.system.chars().count() + request.user.chars().count(),
            temperature = f64::from(request.temperature),
            max_tokens = request.max_tokens,
            "llm_call_start"
        );
    }

    fn complete(&self, response: &LlmResponse) {
        tracing::info!(
            target: LOG_TARGET,
            role = self.role,
            provider = self.provider,
            model = self.model,
            turn = self.turn,
            tokens_in = response.tokens_in,
            tokens_out = response.tokens_out,
            latency_ms = millis(response.latency),
            attempts = response.attempts,
            "llm_call_complete"
        );
    }

    fn failed(&self, error: &LlmError, attempt: u32) {
        let (role, provider, model, turn) = (self.role, self.provider, self.model, self.turn);
        match error {
            LlmError::Timeout { timeout, .. } => tracing::warn!(
                target: LOG_TARGET,
                role, provider, model, turn, attempt,
                timeout_ms = millis(*timeout),
                "llm_timeout"
            ),
            LlmError::RateLimited { retry_after, .. } => tracing::warn!(
                target: LOG_TARGET,
                role, provider, model, turn, attempt,
                status = 429,
                retry_after_ms = retry_after.map(millis),
                "llm_rate_limit"
            ),
            LlmError::Http { status, .. } => tracing::error!(
                target: LOG_TARGET,
                role, provider, model, turn, attempt,
                status,
                error = %error,
                "llm_http_error"
            ),
            _ => tracing::error!(
                target: LOG_TARGET,
                role, provider, model, turn, attempt,
                error = %error,
                "llm_call_failed"
            ),
        }
    }

    fn retry(&self, error: &LlmError, next_attempt: u32, delay: Duration) {
        let (role, provider, model, turn) = (self.role, self.provider, self.model, self.turn);
        let delay_ms = millis(delay);
        if matches!(error, LlmError::RateLimited { .. }) {
            tracing::info!(
                target: LOG_TARGET,
                role, provider, model, turn,
                attempt = next_attempt,
                delay_ms,
                "llm_retry_after_rate_limit"
            );
        } else {
            tracing::info!(
                target: LOG_TARGET,
                role, provider, model, turn,
                attempt = next_attempt,
                delay_ms,
                "llm_retry_after_timeout"
            );
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::llm::{LlmProvider, LlmRouter, Role, RoleSettings};

    /// What one attempt of [`FakeProvider`] does.
    enum Step {
        Answer(&'static str),
        Fail(LlmError),
        /// Streams the text, then never finishes (the role's timeout ends it).
        DeltaThenHang(&'static str),
    }

    /// Plays its steps in order, one per attempt.
    struct FakeProvider(Mutex<VecDeque<Step>>);

    impl FakeProvider {
        /// A router over `steps` with a 20 ms backoff and a 100 ms timeout.
        fn router(steps: Vec<Step>) -> LlmRouter {
            Self::router_with(
                steps,
                RetryPolicy {
                    base_delay: Duration::from_millis(20),
                    ..RetryPolicy::default()
                },
            )
        }

        fn router_with(steps: Vec<Step>, policy: RetryPolicy) -> LlmRouter {
            let provider: Arc<dyn LlmProvider> = Arc::new(Self(Mutex::new(steps.into())));
            let mut router = LlmRouter::single(&provider).with_retry(policy);
            router.set(
                Role::QuestionGeneration,
                RoleBinding {
                    provider,
                    settings: RoleSettings {
                        timeout: Duration::from_millis(100),
                        ..Role::QuestionGeneration.default_settings()
                    },
                },
            );
            router
        }

        fn next(&self) -> Step {
            self.0
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(Step::Answer("(script ended)"))
        }
    }

    fn ok(text: &str) -> LlmResponse {
        LlmResponse {
            text: text.to_owned(),
            provider: "fake".into(),
            model: "fake-1".into(),
            tokens_in: 1,
            tokens_out: 1,
            latency: Duration::ZERO,
            attempts: 1,
        }
    }

    impl LlmProvider for FakeProvider {
        fn name(&self) -> &'static str {
            "fake"
        }

        fn model(&self) -> &'static str {
            "fake-1"
        }

        fn complete<'a>(
            &'a self,
            _request: &'a LlmRequest,
        ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
            Box::pin(async move {
                match self.next() {
                    Step::Answer(text) => Ok(ok(text)),
                    Step::Fail(e) => Err(e),
                    Step::DeltaThenHang(_) => std::future::pending().await,
                }
            })
        }

        fn stream<'a>(
            &'a self,
            _request: &'a LlmRequest,
            deltas: DeltaSink,
        ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
            Box::pin(async move {
                match self.next() {
                    Step::Answer(text) => {
                        let _ = deltas.send(text.to_owned());
                        Ok(ok(text))
                    }
                    Step::Fail(e) => Err(e),
                    Step::DeltaThenHang(text) => {
                        let _ = deltas.send(text.to_owned());
                        std::future::pending().await
                    }
                }
            })
        }
    }

    fn question(router: &LlmRouter) -> LlmRequest {
        router
            .request(Role::QuestionGeneration, String::new(), "q".into(), None, 1)
            .unwrap()
    }

    async fn stream(router: &LlmRouter) -> (Result<LlmResponse, LlmError>, Vec<String>) {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let result = router.stream(&question(router), tx).await;
        let mut deltas = Vec::new();
        while let Some(d) = rx.recv().await {
            deltas.push(d);
        }
        (result, deltas)
    }

    // The tests below run on paused tokio time: timeouts and backoffs complete as soon as
    // nothing else can run, and the measured times are exactly the virtual waits.

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_failed_before_any_text_is_retried() {
        let router = FakeProvider::router(vec![
            Step::Fail(rate_limited(None)),
            Step::Answer("Second try."),
        ]);
        let (result, deltas) = stream(&router).await;
        let response = result.unwrap();
        assert_eq!(response.attempts, 2);
        assert_eq!(response.latency, Duration::from_millis(20), "one backoff");
        assert_eq!(deltas, ["Second try."]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_already_sent_text_is_not_retried() {
        let router = FakeProvider::router(vec![
            Step::DeltaThenHang("What do"),
            Step::Answer("never asked"),
        ]);
        let (result, deltas) = stream(&router).await;
        let err = result.unwrap_err();
        assert!(
            matches!(err, LlmError::Timeout { attempts: 1, .. }),
            "{err:?}"
        );
        assert_eq!(deltas, ["What do"], "the partial answer was not repeated");
    }

    #[tokio::test(start_paused = true)]
    async fn failures_carry_the_whole_calls_attempts_and_time() {
        let router = FakeProvider::router(vec![Step::DeltaThenHang(""), Step::DeltaThenHang("")]);
        let err = router.complete(&question(&router)).await.unwrap_err();
        assert!(
            matches!(err, LlmError::Timeout { attempts: 2, .. }),
            "{err:?}"
        );
        // Two 100 ms timeouts and a 20 ms backoff.
        assert_eq!(err.elapsed(), Duration::from_millis(220), "{err:?}");
        let router = FakeProvider::router(vec![Step::Fail(LlmError::malformed(
            "fake",
            "not json".into(),
        ))]);
        let err = router.complete(&question(&router)).await.unwrap_err();
        assert_eq!(err.attempts(), 1, "not retried");
    }

    fn rate_limited(retry_after: Option<Duration>) -> LlmError {
        LlmError::RateLimited {
            provider: "p".into(),
            retry_after,
            attempts: 1,
            elapsed: Duration::ZERO,
        }
    }

    #[derive(Clone, Default)]
    struct Logs(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Logs {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_seeds_policy_waits_one_second_or_the_servers_retry_after() {
        let answered_after = |first: LlmError| async move {
            let router = FakeProvider::router_with(
                vec![Step::Fail(first), Step::Answer("Second try.")],
                RetryPolicy::default(),
            );
            let response = router.complete(&question(&router)).await.unwrap();
            assert_eq!(response.attempts, 2);
            response.latency
        };
        assert_eq!(
            answered_after(rate_limited(None)).await,
            Duration::from_secs(1)
        );
        assert_eq!(
            answered_after(rate_limited(Some(Duration::from_secs(2)))).await,
            Duration::from_secs(2)
        );
        assert_eq!(
            answered_after(rate_limited(Some(Duration::from_secs(600)))).await,
            Duration::from_secs(30),
            "capped at max_retry_after"
        );
        // Twice rate limited: one 1 s wait, then the error; no second (2 s) wait.
        let router = FakeProvider::router_with(
            vec![
                Step::Fail(rate_limited(None)),
                Step::Fail(rate_limited(None)),
            ],
            RetryPolicy::default(),
        );
        let err = router.complete(&question(&router)).await.unwrap_err();
        assert_eq!((err.attempts(), err.elapsed()), (2, Duration::from_secs(1)));
    }

    #[tokio::test(start_paused = true)]
    async fn each_step_of_a_call_is_logged_by_name() {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        // While only one scoped subscriber exists, tracing decides whether a call site is
        // wanted from the subscriber of the thread that reaches it first: a test running beside
        // this one, with none, would switch the shared call sites off. A second live subscriber
        // makes tracing ask every live subscriber instead.
        let _second = tracing::Dispatch::new(tracing_subscriber::registry());
        let router = FakeProvider::router(vec![Step::DeltaThenHang(""), Step::Answer("Fine.")]);
        let response = router.complete(&question(&router)).await.unwrap();
        assert_eq!(response.attempts, 2);
        let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
        let position = |name: &str| {
            text.find(name)
                .unwrap_or_else(|| panic!("{name} missing:\n{text}"))
        };
        assert!(position("llm_call_start") < position("llm_timeout"));
        assert!(position("llm_timeout") < position("llm_retry_after_timeout"));
        assert!(position("llm_retry_after_timeout") < position("llm_call_complete"));
        for field in [
            "role=\"question_generation\"",
            "provider=\"fake\"",
            "model=\"fake-1\"",
            "turn=1",
            "timeout_ms=100",
            "delay_ms=20",
            "attempts=2",
            "tokens_in=1",
        ] {
            assert!(text.contains(field), "{field} missing:\n{text}");
        }
        assert!(text.contains(LOG_TARGET), "{text}");
    }

    #[test]
    fn the_default_is_the_seeds_policy() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.max_attempts, 2);
        assert_eq!(policy.backoff(1), Duration::from_secs(1));
        assert_eq!(policy.backoff(2), Duration::from_secs(2));
        assert_eq!(policy.backoff(3), Duration::from_secs(4));
    }

    #[test]
    fn delays_follow_retry_after_capped_else_backoff() {
        let policy = RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        };
        let timeout = LlmError::Timeout {
            provider: "p".into(),
            timeout: Duration::from_secs(30),
            attempts: 1,
            elapsed: Duration::ZERO,
        };
        assert_eq!(
            policy.delay_after(&timeout, 1),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            policy.delay_after(&timeout, 2),
            Some(Duration::from_secs(2))
        );
        assert_eq!(policy.delay_after(&timeout, 3), None, "no attempts left");
        assert_eq!(
            policy.delay_after(&rate_limited(Some(Duration::from_secs(2))), 1),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            policy.delay_after(&rate_limited(Some(Duration::from_secs(600))), 1),
            Some(Duration::from_secs(30)),
            "capped at max_retry_after"
        );
        assert_eq!(
            policy.delay_after(&rate_limited(None), 2),
            Some(Duration::from_secs(2))
        );
        let server_error = LlmError::Http {
            provider: "p".into(),
            status: 503,
            message: "overloaded".into(),
            attempts: 1,
            elapsed: Duration::ZERO,
        };
        assert_eq!(policy.delay_after(&server_error, 1), None);
    }
}
