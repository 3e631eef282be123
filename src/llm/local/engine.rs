//! One generation: render the chat, continue from the role's cached prefix, prefill the rest,
//! then sample token by token, masked by the request's schema or grammar when it has one.
//!
//! Runs on the provider's worker thread and is fully synchronous. `cancelled` is polled
//! between prefill chunks and between tokens, so a caller that gave up (the router's timeout
//! dropped the future) frees the model within one forward pass.
//!
//! A constrained reply always ends inside its budget: when the tokens left fall to the
//! constraint's reserve (computed from the schema by `budget`; a few tokens for a grammar),
//! decoding turns greedy and prefers the tokens that end the reply (closing quotes and
//! brackets for JSON, a `?` for the question grammar).

use std::time::{Duration, Instant};

use candle_transformers::generation::LogitsProcessor;
use llguidance::Matcher;

use super::LocalError;
use super::budget::budget_schema;
use super::constrain::Guidance;
use super::load::{Loaded, Weights, Working};
use super::prefix::{KV_CACHE_BYTES, KvPool};
use super::sampling::{
    apply_mask, argmax, close_or_greedy, favour, penalise_repeats, sample, sampling,
};
use super::speed::{self, Speed};
use super::template::ChatTemplate;
use super::tokenizer::{TextTokenizer, Utf8Stream};
use crate::llm::{ReplyConstraint, Role};

/// Prompt tokens per forward pass during prefill: long enough for efficient matrix products,
/// short enough that cancellation is noticed within a fraction of a second and the attention
/// scores stay small.
const PREFILL_CHUNK: usize = 256;
/// Tokens kept to end a grammar-constrained reply: a question needs one token for its `?`
/// once it has enough words, and a few more when it is short of them.
const GRAMMAR_RESERVE: usize = 8;
/// A grammar-constrained reply longer than this many tokens is nudged towards its end: the
/// tokens that end it gain [`END_PRESSURE_STEP`] logits per further token. A small model's
/// question otherwise runs on until the cap cuts it at an arbitrary word; with the nudge it
/// tends to end where a `?` reads naturally.
const END_PRESSURE_AFTER: usize = 20;
const END_PRESSURE_STEP: f32 = 0.25;
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
    pub(super) constraint: Option<&'a ReplyConstraint>,
}

/// Where the time of one generation went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenerationStats {
    /// Prompt length in tokens.
    pub prompt_tokens: usize,
    /// Prompt tokens served from the role's cached prefix instead of being run.
    pub reused_tokens: usize,
    /// Time to run the rest of the prompt (and the constraint's forced opening).
    pub prefill: Duration,
    /// Reply tokens, forced ones included.
    pub generated_tokens: usize,
    /// Reply tokens the constraint forced (run in batches, not sampled).
    pub forced_tokens: usize,
    /// Time from the first reply token to the last.
    pub decode: Duration,
    /// Reply tokens allowed: `max_tokens` within the context, for a schema at least its
    /// shortest reply, for a grammar at most its `max_tokens` cap.
    pub budget: usize,
    /// Tokens of the budget kept for closing a constrained reply (0 without a constraint).
    pub reserve: usize,
    /// Time to compile the schema or grammar, for constrained requests.
    pub schema_compile: Option<Duration>,
    /// Total time spent computing token masks, and how many were computed.
    pub mask_time: Duration,
    pub masks: u32,
    /// The reply stopped at the budget before the constraint was satisfied.
    pub truncated: bool,
    /// The budget ran low and a constrained reply was steered to close early (it is complete
    /// and valid, but may hold fewer entries than the model would have written).
    pub closed_early: bool,
    /// Resident memory of the KV caches after the call, all roles together.
    pub kv_cache_bytes: usize,
}

/// A finished reply.
#[derive(Debug, Clone)]
pub(super) struct Generation {
    pub(super) text: String,
    pub(super) stats: GenerationStats,
}

/// A compiled constraint and how to end it when the budget runs low.
struct Steering {
    matcher: Matcher,
    /// Tokens left at which closing starts.
    reserve: usize,
    /// JSON closes with quotes and brackets; a grammar with its end token set.
    json: bool,
}

impl Steering {
    /// The next token from `logits` under the constraint, with `left` tokens of budget: sampled
    /// while the budget lasts, then the quickest way to the reply's end.
    fn choose(
        &mut self,
        mut logits: Vec<f32>,
        left: usize,
        closers: &Closers<'_>,
        sampler: &mut LogitsProcessor,
        stats: &mut GenerationStats,
    ) -> Result<u32, LocalError> {
        let allowed = constrain(&mut self.matcher, &mut logits, stats)?;
        let written = stats.budget.saturating_sub(left);
        if !self.json && written > END_PRESSURE_AFTER {
            let bonus = END_PRESSURE_STEP * (written - END_PRESSURE_AFTER) as f32;
            favour(&mut logits, closers.question, bonus);
        }
        if left <= self.reserve {
            stats.closed_early = true;
            close_or_greedy(&logits, &closers.for_position(self.json, allowed))
        } else {
            sample(sampler, logits)
        }
    }

    /// Feeds `token` to the matcher; returns it with the tokens the constraint forces after it
    /// (at most `room` of them).
    fn advance(
        &mut self,
        token: u32,
        room: usize,
        stats: &mut GenerationStats,
    ) -> Result<Vec<u32>, LocalError> {
        self.matcher
            .consume_token(token)
            .map_err(|e| LocalError::Schema(format!("token {token}: {e}")))?;
        let forced = take_forced(&mut self.matcher, room)?;
        stats.forced_tokens += forced.len();
        let mut step = Vec::with_capacity(1 + forced.len());
        step.push(token);
        step.extend(forced);
        Ok(step)
    }
}

/// The model and everything that belongs to it; owned by the worker thread.
pub(super) struct Engine {
    weights: Weights,
    tokenizer: TextTokenizer,
    template: ChatTemplate,
    guidance: Guidance,
    pool: KvPool,
    /// Tokens made only of `"`, `]` and `}` that start with `"` (end a string, then maybe more).
    quote_closers: Vec<u32>,
    /// Tokens made only of `]` and `}`.
    bracket_closers: Vec<u32>,
    /// Tokens ending in `?`: the end of a question.
    question_closers: Vec<u32>,
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
            question_closers: tokenizer.tokens_ending_with(b'?'),
            tokenizer,
            template,
            guidance,
            pool: KvPool::new(KV_CACHE_BYTES),
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

    /// Turns prefix reuse on or off (off drops every cache); returns the caches and cached
    /// tokens held before.
    pub(super) fn set_prefix_reuse(&mut self, enabled: bool) -> (usize, usize) {
        self.pool.set_enabled(enabled)
    }

    /// The call's constraint compiled, and its reply budget (`room` is what the context has
    /// left after the prompt).
    fn steering(
        &self,
        call: &Call<'_>,
        room: usize,
        stats: &mut GenerationStats,
    ) -> Result<(Option<Steering>, usize), LocalError> {
        let budget = (call.max_tokens as usize).min(room);
        let (matcher, reserve, json, budget) = match call.constraint {
            None => return Ok((None, budget)),
            Some(ReplyConstraint::JsonSchema(schema)) => {
                let count =
                    |text: &str| self.tokenizer.encode(text).map_or(text.len(), |t| t.len());
                let plan = budget_schema(schema, budget, &count);
                let (matcher, compile) = self.guidance.schema_matcher(&plan.schema)?;
                stats.schema_compile = Some(compile);
                let budget = budget.max(plan.floor).min(room);
                (matcher, plan.reserve, true, budget)
            }
            Some(ReplyConstraint::Grammar(grammar)) => {
                let (matcher, compile) = self.guidance.grammar_matcher(grammar)?;
                stats.schema_compile = Some(compile);
                let budget = grammar_token_cap(grammar).map_or(budget, |cap| budget.min(cap));
                (matcher, GRAMMAR_RESERVE, false, budget)
            }
        };
        let steering = Steering {
            matcher,
            reserve,
            json,
        };
        Ok((Some(steering), budget))
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
        let rendered = self
            .template
            .render(&self.tokenizer, call.system, call.user)?;
        let prompt = rendered.tokens;
        stats.prompt_tokens = prompt.len();
        if prompt.len() >= self.context {
            return Err(LocalError::PromptTooLong {
                tokens: prompt.len(),
                context: self.context,
            });
        }
        let (mut steering, max_new) =
            self.steering(call, self.context - prompt.len(), &mut stats)?;
        stats.budget = max_new;
        stats.reserve = steering.as_ref().map_or(0, |s| s.reserve);

        let started = Instant::now();
        let mut working = self.weights.start(&mut self.pool, call.role, &prompt)?;
        stats.reused_tokens = working.position();
        let forced = match steering.as_mut() {
            Some(s) => take_forced(&mut s.matcher, max_new)?,
            None => Vec::new(),
        };
        let mut feed: Vec<u32> = prompt
            .get(stats.reused_tokens..)
            .unwrap_or_default()
            .to_vec();
        feed.extend_from_slice(&forced);
        let mut logits = prefill(&mut working, &feed, cancelled)?;
        stats.prefill = started.elapsed();
        tracing::trace!(
            system_tokens = rendered.user_start,
            reused = stats.reused_tokens,
            "prompt prefilled"
        );

        let decode_started = Instant::now();
        let mut reply = Reply::new(&self.tokenizer, on_text);
        reply.push(&forced);
        stats.forced_tokens = forced.len();
        let mut sampler = LogitsProcessor::from_sampling(
            self.seed.wrapping_add(self.calls),
            sampling(call.temperature),
        );
        let closers = Closers {
            quote: &self.quote_closers,
            bracket: &self.bracket_closers,
            question: &self.question_closers,
        };
        loop {
            if cancelled() {
                return Err(LocalError::Cancelled);
            }
            if steering.as_ref().is_some_and(|s| s.matcher.is_stopped()) {
                break;
            }
            if reply.tokens.len() >= max_new {
                stats.truncated = steering.is_some();
                break;
            }
            penalise_repeats(&mut logits, &reply.tokens, &self.tokenizer);
            let left = max_new - reply.tokens.len();
            let token = match steering.as_mut() {
                Some(s) => s.choose(logits, left, &closers, &mut sampler, &mut stats)?,
                None => sample(&mut sampler, logits)?,
            };
            if self.template.stops().contains(&token) {
                break;
            }
            let step = match steering.as_mut() {
                Some(s) => s.advance(token, left - 1, &mut stats)?,
                None => vec![token],
            };
            reply.push(&step);
            let done = steering.as_ref().is_some_and(|s| s.matcher.is_stopped());
            if done || reply.tokens.len() >= max_new {
                stats.truncated = !done && steering.is_some();
                break;
            }
            logits = working.forward(&step)?;
        }
        stats.decode = decode_started.elapsed();
        stats.generated_tokens = reply.tokens.len();
        stats.kv_cache_bytes = self.pool.resident_bytes();
        if stats.truncated {
            tracing::warn!(
                role = %call.role,
                budget = max_new,
                "local model reply cut at its budget before the constraint was satisfied"
            );
        }
        let text = reply.finish();
        Ok(Generation { text, stats })
    }

    /// Runs a prompt of about `prompt_tokens` tokens in a cache of its own, then exactly
    /// `reply_tokens` greedy tokens, and times the two apart (see [`Speed`]).
    pub(super) fn measure_speed(
        &mut self,
        prompt_tokens: usize,
        reply_tokens: usize,
    ) -> Result<Speed, LocalError> {
        let text = speed::probe_text(&self.tokenizer, prompt_tokens)?;
        let prompt = self.template.render(&self.tokenizer, "", &text)?.tokens;
        let needed = prompt.len() + reply_tokens;
        if needed > self.context {
            return Err(LocalError::PromptTooLong {
                tokens: needed,
                context: self.context,
            });
        }
        // A scratch pool: the measurement runs the whole prompt and keeps no cache.
        let mut scratch = KvPool::new(0);
        let mut working = self.weights.start(&mut scratch, Role::Respondent, &[])?;
        let started = Instant::now();
        let mut logits = prefill(&mut working, &prompt, &|| false)?;
        let prefill = started.elapsed();
        let started = Instant::now();
        for _ in 0..reply_tokens {
            let token = argmax(&logits)
                .ok_or_else(|| LocalError::Inference("the model gave no logits".to_owned()))?;
            logits = working.forward(&[token])?;
        }
        Ok(Speed {
            prompt_tokens: prompt.len(),
            prefill,
            reply_tokens,
            decode: started.elapsed(),
        })
    }
}

/// The token sets that end a reply.
struct Closers<'a> {
    quote: &'a [u32],
    bracket: &'a [u32],
    question: &'a [u32],
}

impl<'a> Closers<'a> {
    /// The closer groups to try, in order, at a position whose mask allows `allowed` tokens.
    fn for_position(&self, json: bool, allowed: usize) -> Vec<&'a [u32]> {
        match (json, allowed <= FREE_TEXT_ALLOWED) {
            (true, true) => vec![self.quote, self.bracket],
            (true, false) => vec![self.quote],
            (false, _) => vec![self.question],
        }
    }
}

/// The `max_tokens=N` attribute of a Lark grammar's `start` rule, which llguidance enforces;
/// the engine plans the reply's closing within it.
fn grammar_token_cap(grammar: &str) -> Option<usize> {
    let line = grammar
        .lines()
        .find(|l| l.trim_start().starts_with("start["))?;
    let attributes = line.split_once('[')?.1.split_once(']')?.0;
    attributes
        .split(',')
        .filter_map(|a| a.trim().strip_prefix("max_tokens="))
        .find_map(|n| n.trim().parse().ok())
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

/// Masks `logits` to what the constraint allows next; returns how many tokens it allows.
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

/// Runs `tokens` after what `working` holds, in chunks, returning the logits after the last.
fn prefill(
    working: &mut Working<'_>,
    tokens: &[u32],
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<f32>, LocalError> {
    let mut logits = Err(LocalError::Inference("nothing to run".to_owned()));
    for chunk in tokens.chunks(PREFILL_CHUNK) {
        if cancelled() {
            return Err(LocalError::Cancelled);
        }
        logits = working.forward(chunk);
        if logits.is_err() {
            break;
        }
    }
    logits
}

/// Tokens the constraint forces next (at most `room`), consumed by the matcher.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_cap_is_read_from_the_start_rule() {
        let grammar = super::super::grammar::one_question_grammar();
        assert_eq!(
            grammar_token_cap(&grammar),
            usize::try_from(super::super::grammar::QUESTION_MAX_TOKENS).ok()
        );
        assert_eq!(grammar_token_cap("start: \"a\""), None);
        assert_eq!(
            grammar_token_cap("x: \"b\"\n start[capture, max_tokens=7]: x"),
            Some(7)
        );
    }

    #[test]
    fn closers_depend_on_the_constraint_and_the_position() {
        let closers = Closers {
            quote: &[1],
            bracket: &[2],
            question: &[3],
        };
        assert_eq!(closers.for_position(true, 5), vec![&[1][..], &[2][..]]);
        assert_eq!(closers.for_position(true, 5_000), vec![&[1][..]]);
        assert_eq!(closers.for_position(false, 5), vec![&[3][..]]);
    }
}
