//! Constrained decoding: llguidance masks every token that would take the reply outside the
//! request's JSON schema (so a structured reply always parses) or its Lark grammar (the
//! question grammar, see `grammar`).
//!
//! The token trie is built from our own token byte table (see `tokenizer`), not with
//! `toktrie_hf_tokenizers`, which would pull in a second copy of `tokenizers`. Grammar-forced
//! text (`{"concepts": [` …) is tokenized canonically with the model's tokenizer, so forced
//! tokens are the ones the model would have produced.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};

use super::LocalError;
use super::tokenizer::TextTokenizer;

/// The tokenizer as llguidance sees it.
struct GuidanceEnv {
    tokenizer: tokenizers::Tokenizer,
    trie: TokTrie,
}

impl TokenizerEnv for GuidanceEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        // Valid UTF-8 goes through the real tokenizer; stray bytes are matched greedily.
        self.trie.tokenize_with_greedy_fallback(s, |text| {
            self.tokenizer
                .encode(text, false)
                .map(|encoding| encoding.get_ids().to_vec())
                .unwrap_or_default()
        })
    }
}

/// Compiles JSON schemas into token matchers for one model.
pub(super) struct Guidance {
    factory: ParserFactory,
}

impl Guidance {
    /// A compiler over a vocabulary of `vocab` ids (the logits' size) where `end` ends the
    /// reply and `stops` are the other end-of-turn tokens.
    pub(super) fn new(
        tokenizer: &TextTokenizer,
        vocab: usize,
        end: TokenId,
        stops: &[TokenId],
    ) -> Result<Self, LocalError> {
        let words = tokenizer.trie_words(vocab);
        let vocab_size = u32::try_from(words.len())
            .map_err(|_| LocalError::Tokenizer(format!("vocabulary of {vocab} tokens")))?;
        if end >= vocab_size {
            return Err(LocalError::Tokenizer(format!(
                "end-of-turn token {end} is outside the vocabulary of {vocab_size}"
            )));
        }
        let mut ends = vec![end];
        ends.extend(stops.iter().filter(|t| **t < vocab_size && **t != end));
        let mut info = TokRxInfo::new(vocab_size, end);
        info.tok_end_of_turn = Some(end);
        // toktrie asserts on inconsistent input; the checks above and the de-duplicated words
        // rule that out, and catch_unwind keeps a surprise from taking the process down.
        let trie = catch_unwind(AssertUnwindSafe(|| {
            TokTrie::from(&info, &words).with_eos_tokens(&ends)
        }))
        .map_err(|_| LocalError::Tokenizer("cannot build the token trie".to_owned()))?;
        let env: TokEnv = Arc::new(GuidanceEnv {
            tokenizer: tokenizer.inner().clone(),
            trie,
        });
        let mut factory = ParserFactory::new_simple(&env)
            .map_err(|e| LocalError::Schema(format!("cannot prepare the token masks: {e}")))?;
        factory.quiet();
        Ok(Self { factory })
    }

    /// A matcher for replies that satisfy `schema`, and how long compiling took.
    pub(super) fn schema_matcher(
        &self,
        schema: &serde_json::Value,
    ) -> Result<(Matcher, Duration), LocalError> {
        self.compile(TopLevelGrammar::from_json_schema(schema.clone()))
    }

    /// A matcher for replies that the Lark `grammar` admits, and how long compiling took.
    pub(super) fn grammar_matcher(&self, grammar: &str) -> Result<(Matcher, Duration), LocalError> {
        self.compile(TopLevelGrammar::from_lark(grammar.to_owned()))
    }

    fn compile(&self, grammar: TopLevelGrammar) -> Result<(Matcher, Duration), LocalError> {
        let started = Instant::now();
        let parser = self
            .factory
            .create_parser(grammar)
            .map_err(|e| LocalError::Schema(format!("{e}")))?;
        let matcher = Matcher::new(Ok(parser));
        if let Some(error) = matcher.get_error() {
            return Err(LocalError::Schema(error));
        }
        Ok((matcher, started.elapsed()))
    }
}
