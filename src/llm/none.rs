//! The `none` provider: no model at all, for demos, tests and machines that cannot run one.
//!
//! A session on `none` understands answers offline and asks the methodology's template
//! questions, so the pipeline never calls this provider; the router reports it through
//! [`LlmRouter::is_modelless`](super::LlmRouter::is_modelless). If a call does reach it (a
//! stage wired to ask a model regardless, or a simulated respondent), it fails at once with
//! an error saying why, instead of waiting for a timeout or inventing text.

use futures::future::BoxFuture;

use super::{LlmError, LlmProvider, LlmRequest, LlmResponse};

/// The provider's name in settings, usage rows and messages.
pub const NONE_PROVIDER: &str = "none";

/// A provider with no model behind it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoneProvider;

impl NoneProvider {
    /// Why a call to this provider cannot be answered, naming the role that asked.
    fn refusal(request: &LlmRequest) -> LlmError {
        LlmError::Transport {
            provider: NONE_PROVIDER.to_owned(),
            message: format!(
                "the `none` provider has no model; the {} role cannot be asked. With \
                 `--provider none` questions come from the methodology's templates and \
                 understanding must be offline; give the {} role a model provider (e.g. \
                 LLM_{}_PROVIDER) to use one",
                request.role,
                request.role,
                request.role.as_str().to_uppercase()
            ),
        }
    }
}

impl LlmProvider for NoneProvider {
    fn name(&self) -> &str {
        NONE_PROVIDER
    }

    fn model(&self) -> &'static str {
        ""
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
    ) -> BoxFuture<'a, Result<LlmResponse, LlmError>> {
        Box::pin(async move { Err(Self::refusal(request)) })
    }

    fn is_modelless(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::*;
    use crate::llm::{LlmRouter, Role};

    #[tokio::test]
    async fn a_call_fails_at_once_and_says_why() {
        let provider: Arc<dyn LlmProvider> = Arc::new(NoneProvider);
        let router = LlmRouter::single(&provider);
        for role in Role::ALL {
            assert!(router.is_modelless(role));
        }
        let request = router
            .request(Role::Respondent, String::new(), "hi".to_owned(), None, 1)
            .unwrap();
        let err = router.complete(&request).await.unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("none: the `none` provider has no model; the respondent role"),
            "{message}"
        );
        assert!(message.contains("LLM_RESPONDENT_PROVIDER"), "{message}");
        // Not retried: one attempt, no backoff.
        assert!(!err.is_retryable(), "{message}");
    }
}
