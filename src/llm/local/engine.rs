//! One generation: render the chat, prefill (reusing a cached prefix when one matches), then
//! sample token by token, masked by the schema when the request has one.
//!
//! Runs on the provider's worker thread and is fully synchronous. `cancelled` is polled
//! between prefill chunks and between tokens, so a caller that gave up (the router's timeout
//! dropped the future) frees the model within one forward pass.

use std::time::{Duration, Instant};

use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use llguidance::Matcher;
use toktrie::SimpleVob;

use super::LocalError;
use super::constrain::Guidance;
use super::load::{Loaded, Weights, Working};
use super::prefix::{PREFIX_CACHE_BYTES, PrefixCache};
use super::template::{ChatTemplate, Rendered};
use super::tokenizer::{TextTokenizer, Utf8Stream};
use crate::llm::Role;

/// Prompt tokens per forward pass during prefill: long enough for efficient matrix products,
/// short enough that cancellation is noticed within a fraction of a second and the attention
/// scores stay small.
const PREFILL_CHUNK: usize = 256;
/// Sampling keeps the 40 likeliest tokens, then the nucleus of 95% probability: small models
/// derail on the long tail of a 49k vocabulary at the interview's temperatures.
const TOP_K: usize = 40;
const TOP_P: f64 = 0.95;
/// Temperatures at or below this are greedy decoding.
const GREEDY_BELOW: f32 = 1e-3;
/// llama.cpp's default repetition penalty over the last 64 reply tokens; the 135M model
/// otherwise loops ("I'm not sure about the price either, but I'm not sure about…"). Only
/// tokens that carry words are penalised, so JSON punctuation stays as likely as ever.
const REPEAT_PENALTY: f32 = 1.1;
const REPEAT_WINDOW: usize = 64;
/// When a constrained reply has this many tokens of budget left (at most a quarter of it),
/// decoding turns greedy and prefers tokens that close strings, arrays and objects, so the
/// reply ends as valid JSON instead of being cut mid-value. Our schemas close from any point in
/// under 40 tokens: the remaining keys are forced and every value can end at once.
const CLOSING_RESERVE: usize = 64;
/// A mask allowing more tokens than this is inside free text (a string value); fewer means a
/// structural position, where `]` and `}` may end an array or object. Inside a string those
/// would be content, so there only `"` closes.
const FREE_TEXT_ALLOWED: usize = 256;

/// One request, as the engine needs it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Call<'a> {
    pub(super) role: Role,
    pub(super) system: &'a str,
    pub(super) user: &'a str,
    pub(super) temperature: f32,
    pub(super) max_tokens: u32,
    pub(super) schema: Option<&'a serde_json::Value>,
}

/// Where the time of one generation went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenerationStats {
    /// Prompt length in tokens.
    pub prompt_tokens: usize,
    /// Prompt tokens served from a cached prefix instead of being run.
    pub reused_tokens: usize,
    /// Time to run the rest of the prompt (and the schema's forced opening).
    pub prefill: Duration,
    /// Reply tokens, forced ones included.
    pub generated_tokens: usize,
    /// Reply tokens the schema forced (run in batches, not sampled).
    pub forced_tokens: usize,
    /// Time from the first reply token to the last.
    pub decode: Duration,
    /// Time to compile the schema, for structured requests.
    pub schema_compile: Option<Duration>,
    /// Total time spent computing token masks, and how many were computed.
    pub mask_time: Duration,
    pub masks: u32,
    /// The reply stopped at `max_tokens` (or the context) before it was complete.
    pub truncated: bool,
    /// The budget ran low and a constrained reply was steered to close early (it is complete
    /// and valid, but may hold fewer entries than the model would have written).
    pub closed_early: bool,
}

/// A finished reply.
#[derive(Debug, Clone)]
pub(super) struct Generation {
    pub(super) text: String,
    pub(super) stats: GenerationStats,
}

/// The model and everything that belongs to it; owned by the worker thread.
pub(super) struct Engine {
    weights: Weights,
    tokenizer: TextTokenizer,
    template: ChatTemplate,
    guidance: Guidance,
    prefix: PrefixCache,
    /// Tokens made only of `"`, `]` and `}` that start with `"` (end a string, then maybe more).
    quote_closers: Vec<u32>,
    /// Tokens made only of `]` and `}`.
    bracket_closers: Vec<u32>,
    context: usize,
    seed: u64,
    calls: u64,
}

impl Engine {
    pub(super) fn new(loaded: Loaded, seed: u64) -> Result<Self, LocalError> {
        let Loaded {
            weights,
            tokenizer,
            facts,
            ..
        } = loaded;
        let template = ChatTemplate::detect(
            facts.chat_template.as_deref(),
            &tokenizer,
            facts.add_bos,
            facts.bos,
            facts.eos,
        );
        let end = template.end_of_turn().ok_or_else(|| {
            LocalError::Tokenizer("the vocabulary has no end-of-turn or end-of-text token".into())
        })?;
        let guidance = Guidance::new(&tokenizer, facts.vocab_rows, end, template.stops())?;
        Ok(Self {
            weights,
            quote_closers: tokenizer.closing_tokens(true),
            bracket_closers: tokenizer.closing_tokens(false),
            tokenizer,
            template,
            guidance,
            prefix: PrefixCache::new(facts.kv_bytes_per_token, PREFIX_CACHE_BYTES),
            context: facts.context,
            seed,
            calls: 0,
        })
    }

    pub(super) fn template_name(&self) -> &'static str {
        self.template.kind().name()
    }

    pub(super) fn tokenizer_origin(&self) -> &str {
        self.tokenizer.origin()
    }

    pub(super) fn set_prefix_reuse(&mut self, enabled: bool) {
        self.prefix.set_enabled(enabled);
    }

    /// The rendered prompt, the reply budget (`max_tokens` within the context) and the schema's
    /// matcher, if any.
    fn prepare(
        &self,
        call: &Call<'_>,
        stats: &mut GenerationStats,
    ) -> Result<(Rendered, usize, Option<Matcher>), LocalError> {
        let rendered = self
            .template
            .render(&self.tokenizer, call.system, call.user)?;
        let length = rendered.tokens.len();
        stats.prompt_tokens = length;
        if length >= self.context {
            return Err(LocalError::PromptTooLong {
                tokens: length,
                context: self.context,
            });
        }
        let max_new = (call.max_tokens as usize).min(self.context - length);
        let matcher = match call.schema {
            Some(schema) => {
                let (matcher, compile) = self.guidance.matcher(schema)?;
                stats.schema_compile = Some(compile);
                Some(matcher)
            }
            None => None,
        };
        Ok((rendered, max_new, matcher))
    }

    /// Runs one call. `on_text` receives the reply as it grows, in whole characters.
    pub(super) fn generate(
        &mut self,
        call: &Call<'_>,
        on_text: &mut dyn FnMut(&str),
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Generation, LocalError> {
        self.calls += 1;
        let mut stats = GenerationStats::default();
        let (rendered, max_new, mut matcher) = self.prepare(call, &mut stats)?;
        let prompt = rendered.tokens;

        let started = Instant::now();
        let (mut working, reused, mut pos) = resume_prompt(
            &mut self.weights,
            &mut self.prefix,
            call.role,
            &prompt,
            rendered.user_start,
            cancelled,
        )?;
        stats.reused_tokens = reused;
        let forced = match matcher.as_mut() {
            Some(m) => take_forced(m, max_new)?,
            None => Vec::new(),
        };
        let mut feed: Vec<u32> = prompt.get(pos..).unwrap_or_default().to_vec();
        feed.extend_from_slice(&forced);
        let mut logits = prefill(&mut working, &feed, pos, cancelled)?;
        pos += feed.len();
        stats.prefill = started.elapsed();

        let decode_started = Instant::now();
        let mut reply = Reply::new(&self.tokenizer, on_text);
        reply.push(&forced);
        stats.forced_tokens = forced.len();
        let mut sampler = LogitsProcessor::from_sampling(
            self.seed.wrapping_add(self.calls),
            sampling(call.temperature),
        );
        loop {
            if cancelled() {
                return Err(LocalError::Cancelled);
            }
            if matcher.as_ref().is_some_and(Matcher::is_stopped) {
                break;
            }
            if reply.tokens.len() >= max_new {
                stats.truncated = true;
                break;
            }
            penalise_repeats(&mut logits, &reply.tokens, &self.tokenizer);
            let allowed = match matcher.as_mut() {
                Some(m) => constrain(m, &mut logits, &mut stats)?,
                None => usize::MAX,
            };
            let left = max_new - reply.tokens.len();
            let token = if matcher.is_some() && left <= CLOSING_RESERVE.min(max_new / 4) {
                stats.closed_early = true;
                let closers: &[&[u32]] = if allowed <= FREE_TEXT_ALLOWED {
                    &[&self.quote_closers, &self.bracket_closers]
                } else {
                    &[&self.quote_closers]
                };
                close_or_greedy(&logits, closers)?
            } else {
                sample(&mut sampler, logits)?
            };
            if self.template.stops().contains(&token) {
                break;
            }
            let mut step = vec![token];
            if let Some(m) = matcher.as_mut() {
                m.consume_token(token)
                    .map_err(|e| LocalError::Schema(format!("token {token}: {e}")))?;
                let room = max_new.saturating_sub(reply.tokens.len() + 1);
                let extra = take_forced(m, room)?;
                stats.forced_tokens += extra.len();
                step.extend(extra);
            }
            reply.push(&step);
            let done = matcher.as_ref().is_some_and(Matcher::is_stopped);
            if done || reply.tokens.len() >= max_new {
                stats.truncated = !done && reply.tokens.len() >= max_new && matcher.is_some();
                break;
            }
            logits = working.forward(&step, pos)?;
            pos += step.len();
        }
        stats.decode = decode_started.elapsed();
        stats.generated_tokens = reply.tokens.len();
        if stats.truncated {
            tracing::warn!(
                role = %call.role,
                max_tokens = call.max_tokens,
                "local model reply cut at max_tokens before the schema was complete"
            );
        }
        let text = reply.finish();
        Ok(Generation { text, stats })
    }

    /// Snapshots currently held and the tokens they cover.
    pub(super) fn prefix_size(&self) -> (usize, usize) {
        self.prefix.size()
    }
}

/// The reply so far: its tokens and the text handed to the caller.
struct Reply<'a, 'f> {
    tokenizer: &'a TextTokenizer,
    on_text: &'f mut dyn FnMut(&str),
    stream: Utf8Stream,
    tokens: Vec<u32>,
    text: String,
}

impl<'a, 'f> Reply<'a, 'f> {
    fn new(tokenizer: &'a TextTokenizer, on_text: &'f mut dyn FnMut(&str)) -> Self {
        Self {
            tokenizer,
            on_text,
            stream: Utf8Stream::default(),
            tokens: Vec::new(),
            text: String::new(),
        }
    }

    fn push(&mut self, tokens: &[u32]) {
        for token in tokens {
            let chunk = self.stream.push(self.tokenizer.output_bytes(*token));
            self.emit(&chunk);
        }
        self.tokens.extend_from_slice(tokens);
    }

    fn emit(&mut self, chunk: &str) {
        if !chunk.is_empty() {
            (self.on_text)(chunk);
            self.text.push_str(chunk);
        }
    }

    fn finish(mut self) -> String {
        let rest = self.stream.finish();
        self.emit(&rest);
        self.text
    }
}

/// Starts a call's prompt: continues from the longest cached prefix (or empty weights), runs
/// up to the prefix cache's checkpoint and snapshots there, and records the prompt for the
/// role. Returns the weights, how many tokens came from the cache, and the position reached.
fn resume_prompt<'w>(
    weights: &'w mut Weights,
    prefix: &mut PrefixCache,
    role: Role,
    prompt: &[u32],
    user_start: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<(Working<'w>, usize, usize), LocalError> {
    let (mut working, reused) = match prefix.lookup(prompt) {
        Some((cached, reused)) => (Working::Llama(Box::new(cached)), reused),
        None => (weights.start(), 0),
    };
    let mut pos = reused;
    if working.can_snapshot()
        && let Some(stop) = prefix.checkpoint(role, prompt, user_start, pos)
    {
        prefill(
            &mut working,
            prompt.get(pos..stop).unwrap_or_default(),
            pos,
            cancelled,
        )?;
        pos = stop;
        if let Some(snapshot) = working.snapshot() {
            prefix.store(
                role,
                prompt.get(..stop).unwrap_or_default().to_vec(),
                snapshot,
            );
        }
    }
    prefix.remember(role, prompt);
    Ok((working, reused, pos))
}

/// Masks `logits` to what the schema allows next; returns how many tokens it allows.
fn constrain(
    matcher: &mut Matcher,
    logits: &mut [f32],
    stats: &mut GenerationStats,
) -> Result<usize, LocalError> {
    let started = Instant::now();
    let mask = matcher
        .compute_mask()
        .map_err(|e| LocalError::Schema(format!("token mask: {e}")))?;
    apply_mask(logits, &mask)?;
    stats.mask_time += started.elapsed();
    stats.masks += 1;
    Ok(mask.num_set())
}

/// Runs `tokens` from position `pos` in chunks, returning the logits after the last token.
fn prefill(
    working: &mut Working<'_>,
    tokens: &[u32],
    pos: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<f32>, LocalError> {
    let mut logits = Err(LocalError::Inference("nothing to run".to_owned()));
    for (i, chunk) in tokens.chunks(PREFILL_CHUNK).enumerate() {
        if cancelled() {
            return Err(LocalError::Cancelled);
        }
        logits = working.forward(chunk, pos + i * PREFILL_CHUNK);
        if logits.is_err() {
            break;
        }
    }
    logits
}

/// Tokens the grammar forces next (at most `room`), consumed by the matcher.
fn take_forced(matcher: &mut Matcher, room: usize) -> Result<Vec<u32>, LocalError> {
    let mut forced = matcher.compute_ff_tokens();
    forced.truncate(room);
    if !forced.is_empty() {
        matcher
            .consume_tokens(&forced)
            .map_err(|e| LocalError::Schema(format!("forced tokens: {e}")))?;
    }
    Ok(forced)
}

fn sampling(temperature: f32) -> Sampling {
    if temperature <= GREEDY_BELOW || !temperature.is_finite() {
        Sampling::ArgMax
    } else {
        Sampling::TopKThenTopP {
            k: TOP_K,
            p: TOP_P,
            temperature: f64::from(temperature),
        }
    }
}

fn sample(sampler: &mut LogitsProcessor, logits: Vec<f32>) -> Result<u32, LocalError> {
    let len = logits.len();
    Tensor::from_vec(logits, len, &Device::Cpu)
        .and_then(|t| sampler.sample(&t))
        .map_err(|e| LocalError::Inference(format!("sampling: {e}")))
}

/// Sets every token the mask forbids to −∞; an empty mask is an error rather than a sample
/// from nothing.
fn apply_mask(logits: &mut [f32], mask: &SimpleVob) -> Result<(), LocalError> {
    let allowed = mask.len().min(logits.len());
    let mut any = false;
    for (index, logit) in logits.iter_mut().enumerate() {
        if index < allowed && mask.get(index) {
            any = true;
        } else {
            *logit = f32::NEG_INFINITY;
        }
    }
    if any {
        Ok(())
    } else {
        Err(LocalError::Schema(
            "no token of the vocabulary can continue the reply".to_owned(),
        ))
    }
}

/// The allowed token with the highest logit from the first closer group that has one, else the
/// allowed token with the highest logit: the quickest way to a reply the schema accepts.
fn close_or_greedy(logits: &[f32], closer_groups: &[&[u32]]) -> Result<u32, LocalError> {
    let best = |ids: &mut dyn Iterator<Item = u32>| {
        ids.filter_map(|id| logits.get(id as usize).map(|l| (id, *l)))
            .filter(|(_, l)| l.is_finite())
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(id, _)| id)
    };
    closer_groups
        .iter()
        .find_map(|group| best(&mut group.iter().copied()))
        .or_else(|| best(&mut (0..logits.len()).filter_map(|i| u32::try_from(i).ok())))
        .ok_or_else(|| LocalError::Schema("no token can continue the reply".to_owned()))
}

/// llama.cpp's repetition penalty over the recent reply tokens that carry words.
fn penalise_repeats(logits: &mut [f32], reply: &[u32], tokenizer: &TextTokenizer) {
    let recent = reply
        .get(reply.len().saturating_sub(REPEAT_WINDOW)..)
        .unwrap_or_default();
    let mut seen = std::collections::HashSet::with_capacity(recent.len());
    for token in recent {
        if seen.insert(*token)
            && tokenizer.is_wordy(*token)
            && let Some(logit) = logits.get_mut(*token as usize)
        {
            *logit = if *logit >= 0.0 {
                *logit / REPEAT_PENALTY
            } else {
                *logit * REPEAT_PENALTY
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_forbids_and_refuses_an_empty_mask() {
        let mut mask = SimpleVob::alloc(4);
        mask.allow_token(2);
        let mut logits = vec![1.0, 2.0, 3.0, 4.0, 5.0];
        apply_mask(&mut logits, &mask).unwrap();
        assert_eq!(logits[2], 3.0);
        assert!(
            logits
                .iter()
                .enumerate()
                .all(|(i, l)| i == 2 || *l == f32::NEG_INFINITY)
        );
        let empty = SimpleVob::alloc(4);
        assert!(apply_mask(&mut logits, &empty).is_err());
    }

    #[test]
    fn closing_prefers_closers_then_the_best_allowed_token() {
        let inf = f32::NEG_INFINITY;
        let logits = [3.0, 1.0, 0.5, 2.0];
        assert_eq!(close_or_greedy(&logits, &[&[1, 3]]).unwrap(), 3);
        assert_eq!(close_or_greedy(&logits, &[&[2], &[1, 3]]).unwrap(), 2);
        assert_eq!(
            close_or_greedy(&[3.0, inf, 0.5, inf], &[&[1, 3]]).unwrap(),
            0
        );
        assert!(close_or_greedy(&[inf, inf], &[&[0]]).is_err());
    }

    #[test]
    fn zero_temperature_is_greedy() {
        assert_eq!(sampling(0.0), Sampling::ArgMax);
        assert!(matches!(sampling(0.8), Sampling::TopKThenTopP { .. }));
    }
}
