//! `interviewer doctor`: which provider and model each LLM role uses, where every setting came
//! from, the understanding mode new sessions get and why, and whether each provider answers a
//! one-token request. Roles on the `none` provider have no model to probe; they are listed as
//! such.

use std::collections::BTreeMap;
use std::time::Instant;

use super::setup::{LlmOptions, llm_config, router_for};
use super::{CliError, emit};
use crate::config::ConfigDir;
use crate::llm::{LlmRequest, Role};

/// Prints the report; fails with the model exit code when any provider did not answer.
pub fn run(
    dir: &ConfigDir,
    options: &LlmOptions,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let config = llm_config(dir, options)?;
    emit(out, &config.describe())?;
    let router = router_for(&config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Input(format!("cannot start the async runtime: {e}")))?;

    // One probe per distinct provider and model; roles sharing one are listed together.
    let mut probes: BTreeMap<(String, String), Vec<Role>> = BTreeMap::new();
    let mut modelless: Vec<&str> = Vec::new();
    for role in Role::ALL {
        let binding = router
            .binding(role)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        if router.is_modelless(role) {
            modelless.push(role.as_str());
            continue;
        }
        probes
            .entry((
                binding.provider.name().to_owned(),
                binding.provider.model().to_owned(),
            ))
            .or_default()
            .push(role);
    }
    emit(out, "\nprobes (one-token request):\n")?;
    if !modelless.is_empty() {
        emit(
            out,
            &format!(
                "  none  ({}): no model to probe; served without one\n",
                modelless.join(", ")
            ),
        )?;
    }
    let mut failed = 0;
    for ((provider, model), roles) in probes {
        let Some(&first) = roles.first() else {
            continue;
        };
        let request = LlmRequest {
            role: first,
            system: String::new(),
            user: "Reply with the single word: ok".to_owned(),
            temperature: 0.0,
            max_tokens: 1,
            turn: 0,
            schema: None,
        };
        let started = Instant::now();
        let result = runtime.block_on(router.complete(&request));
        let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
        let line = match result {
            Ok(r) => format!(
                "  ok    {provider} {model} ({}) in {} ms, {} token(s) in, {} out\n",
                names.join(", "),
                started.elapsed().as_millis(),
                r.tokens_in,
                r.tokens_out
            ),
            Err(e) => {
                failed += 1;
                format!("  FAIL  {provider} {model} ({}): {e}\n", names.join(", "))
            }
        };
        emit(out, &line)?;
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(CliError::Llm(format!(
            "{failed} provider(s) did not answer"
        )))
    }
}
