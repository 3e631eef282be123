//! The local model's tokenizer: a `tokenizer.json` when one is given or sits next to the GGUF,
//! else rebuilt from the GGUF's metadata, plus the byte string of every token.
//!
//! candle's `TokenizerFromGguf` gets byte-level BPE vocabularies right but not their
//! pre-tokenizers: `smollm` falls back to GPT-2's `ByteLevel(add_prefix_space = true)` and a
//! post-processor that adds a leading space, so every prompt encodes to the wrong ids, and
//! llama.cpp's `llama-bpe` (Llama 3) is not recognised at all. [`TextTokenizer::from_gguf`]
//! replaces the pre-tokenizer by the one the model was trained with and removes the
//! post-processor; the chat template adds BOS itself.
//!
//! Token bytes come from the vocabulary, not from `decode`: byte-level tokens map through the
//! GPT-2 byte-to-unicode table, SentencePiece-style tokens through `▁` and `<0xNN>`. The same
//! table feeds streaming (bytes are concatenated and cut at UTF-8 boundaries) and the
//! constrained decoder's token trie.

use std::collections::HashMap;
use std::path::Path;

use candle_core::quantized::gguf_file::Content;
use candle_core::quantized::tokenizer::TokenizerFromGguf;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{SplitDelimiterBehavior, Tokenizer};

use super::LocalError;

/// Llama 3's pre-tokenizer split (llama.cpp `llama-bpe`): contractions, letters, numbers of up
/// to three digits, punctuation runs, newlines, spaces.
const LLAMA3_SPLIT: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen 2's split: as Llama 3's but one digit per piece.
const QWEN2_SPLIT: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A tokenizer plus the bytes of each token id.
pub(super) struct TextTokenizer {
    inner: Tokenizer,
    /// Bytes of each token id, indexed by id; special tokens hold their text.
    bytes: Vec<Vec<u8>>,
    /// Whether each token id is a special (control) token.
    special: Vec<bool>,
    /// Texts of the special tokens, longest first, for neutralising them in prompt text.
    special_texts: Vec<String>,
    /// Where the tokenizer came from, for `models verify` and logs.
    origin: String,
}

impl TextTokenizer {
    /// Loads a `tokenizer.json`.
    pub(super) fn from_file(path: &Path) -> Result<Self, LocalError> {
        let inner = Tokenizer::from_file(path)
            .map_err(|e| LocalError::Tokenizer(format!("{}: {e}", path.display())))?;
        Self::new(inner, path.display().to_string())
    }

    /// Rebuilds the tokenizer from GGUF metadata, with the pre-tokenizer fixed for the model's
    /// `tokenizer.ggml.pre` and no post-processor.
    pub(super) fn from_gguf(content: &Content) -> Result<Self, LocalError> {
        let kind = metadata_string(content, "tokenizer.ggml.model").unwrap_or_default();
        if kind != "gpt2" {
            return Err(LocalError::Tokenizer(format!(
                "the GGUF's tokenizer model is '{kind}', which cannot be rebuilt from metadata \
                 (only byte-level BPE, 'gpt2', can); pass a tokenizer.json"
            )));
        }
        let mut inner = Tokenizer::from_gguf(content)
            .map_err(|e| LocalError::Tokenizer(format!("from GGUF metadata: {e}")))?;
        let pre = metadata_string(content, "tokenizer.ggml.pre").unwrap_or_else(|| "gpt2".into());
        let pre_tokenizer = pre_tokenizer_for(&pre)?;
        if pre == "qwen2" {
            inner
                .with_normalizer(Some(NFC))
                .map_err(|e| LocalError::Tokenizer(e.to_string()))?;
        }
        inner.with_pre_tokenizer(Some(pre_tokenizer));
        inner.with_post_processor(None::<PostProcessorWrapper>);
        Self::new(inner, format!("GGUF metadata (pre-tokenizer '{pre}')"))
    }

    fn new(inner: Tokenizer, origin: String) -> Result<Self, LocalError> {
        let size = inner.get_vocab_size(true);
        let added = inner.get_added_tokens_decoder();
        let byte_level = is_byte_level(inner.get_decoder());
        let unicode_to_byte = gpt2_unicode_to_byte();
        let mut bytes = Vec::with_capacity(size);
        let mut special = Vec::with_capacity(size);
        for id in 0..size {
            let id = u32::try_from(id)
                .map_err(|_| LocalError::Tokenizer(format!("vocabulary of {size} tokens")))?;
            let (token_bytes, is_special) = match added.get(&id) {
                Some(token) => (token.content.as_bytes().to_vec(), token.special),
                None => match inner.id_to_token(id) {
                    Some(text) if byte_level => (byte_level_bytes(&text, &unicode_to_byte), false),
                    Some(text) => (sentencepiece_bytes(&text), false),
                    None => (Vec::new(), false),
                },
            };
            bytes.push(token_bytes);
            special.push(is_special);
        }
        let mut special_texts: Vec<String> = added
            .values()
            .filter(|token| token.special && !token.content.is_empty())
            .map(|token| token.content.clone())
            .collect();
        special_texts.sort_by_key(|text| std::cmp::Reverse(text.len()));
        Ok(Self {
            inner,
            bytes,
            special,
            special_texts,
            origin,
        })
    }

    /// Encodes plain text (no special tokens are added, and special-token text in `text` is
    /// neutralised so a respondent cannot end the model's turn by typing `<|im_end|>`).
    pub(super) fn encode(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        let safe = self.neutralise(text);
        self.encode_raw(&safe)
    }

    /// Encodes text as is; special-token text becomes the special token.
    pub(super) fn encode_raw(&self, text: &str) -> Result<Vec<u32>, LocalError> {
        self.inner
            .encode(text, false)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|e| LocalError::Tokenizer(format!("encoding failed: {e}")))
    }

    /// `text` with a zero-width space after the first character of every special token text.
    fn neutralise(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for special in &self.special_texts {
            if out.contains(special.as_str()) {
                let mut chars = special.chars();
                let broken: String = chars
                    .next()
                    .into_iter()
                    .chain(std::iter::once('\u{200b}'))
                    .chain(chars)
                    .collect();
                out = out.replace(special.as_str(), &broken);
            }
        }
        out
    }

    /// The id of a token given by its text (`<|im_end|>`).
    pub(super) fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// Bytes a token contributes to the reply: empty for special tokens and unknown ids.
    pub(super) fn output_bytes(&self, id: u32) -> &[u8] {
        let index = id as usize;
        if self.special.get(index).copied().unwrap_or(true) {
            return &[];
        }
        self.bytes.get(index).map_or(&[], Vec::as_slice)
    }

    /// The text of `ids`, special tokens included or skipped, invalid UTF-8 replaced.
    #[cfg(test)]
    pub(super) fn decode(&self, ids: &[u32], with_special: bool) -> String {
        let bytes: Vec<u8> = ids
            .iter()
            .flat_map(|id| {
                let all = self.bytes.get(*id as usize).map_or(&[][..], Vec::as_slice);
                if with_special {
                    all
                } else {
                    self.output_bytes(*id)
                }
                .iter()
                .copied()
            })
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Whether a token carries words (a letter, digit or non-ASCII character) rather than only
    /// punctuation and spaces; the repetition penalty applies to these only, so JSON structure
    /// is never discouraged.
    pub(super) fn is_wordy(&self, id: u32) -> bool {
        self.output_bytes(id)
            .iter()
            .any(|b| b.is_ascii_alphanumeric() || *b >= 0x80)
    }

    /// Tokens made only of the characters that close JSON strings, arrays and objects (`"`,
    /// `]`, `}`), for steering a constrained reply to its end when the budget runs out: those
    /// starting with `"` when `quote` is set, else those without any `"`.
    pub(super) fn closing_tokens(&self, quote: bool) -> Vec<u32> {
        (0..self.bytes.len())
            .filter_map(|index| u32::try_from(index).ok())
            .filter(|id| {
                let bytes = self.output_bytes(*id);
                let closing = bytes.iter().all(|b| matches!(b, b'"' | b']' | b'}'));
                closing
                    && match bytes.first() {
                        Some(b'"') => quote,
                        Some(_) => !quote && !bytes.contains(&b'"'),
                        None => false,
                    }
            })
            .collect()
    }

    /// Tokens whose reply bytes end with `last` (special tokens never do), for steering a
    /// grammar-constrained reply to its end: `?` ends a question.
    pub(super) fn tokens_ending_with(&self, last: u8) -> Vec<u32> {
        (0..self.bytes.len())
            .filter_map(|index| u32::try_from(index).ok())
            .filter(|id| self.output_bytes(*id).last() == Some(&last))
            .collect()
    }

    /// Number of token ids the tokenizer knows (special tokens included).
    pub(super) fn vocab_size(&self) -> usize {
        self.bytes.len()
    }

    /// Token words for a [`toktrie::TokTrie`] over `vocab` ids: special tokens carry the trie's
    /// marker byte; ids the tokenizer lacks (padding rows of the embedding) and later duplicates
    /// of a byte string are empty, which the trie never offers.
    pub(super) fn trie_words(&self, vocab: usize) -> Vec<Vec<u8>> {
        let mut seen = std::collections::HashSet::new();
        (0..vocab)
            .map(|index| {
                let word = match (self.bytes.get(index), self.special.get(index)) {
                    (Some(bytes), Some(true)) => {
                        let mut word = vec![toktrie::TokTrie::SPECIAL_TOKEN_MARKER];
                        word.extend_from_slice(bytes);
                        word
                    }
                    (Some(bytes), _) => bytes.clone(),
                    (None, _) => Vec::new(),
                };
                if word.is_empty() || seen.insert(word.clone()) {
                    word
                } else {
                    Vec::new()
                }
            })
            .collect()
    }

    /// A clone of the underlying tokenizer, for the constrained decoder's canonical
    /// tokenization.
    pub(super) fn inner(&self) -> &Tokenizer {
        &self.inner
    }

    pub(super) fn origin(&self) -> &str {
        &self.origin
    }
}

/// The pre-tokenizer a byte-level BPE model was trained with, by llama.cpp's `pre` name.
fn pre_tokenizer_for(pre: &str) -> Result<PreTokenizerWrapper, LocalError> {
    let split = |pattern: &str| {
        Split::new(
            SplitPattern::Regex(pattern.to_owned()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(|e| LocalError::Tokenizer(format!("pre-tokenizer regex: {e}")))
    };
    Ok(match pre {
        "llama-bpe" | "llama3" | "smaug-bpe" => Sequence::new(vec![
            split(LLAMA3_SPLIT)?.into(),
            ByteLevel::new(false, true, false).into(),
        ])
        .into(),
        "qwen2" => Sequence::new(vec![
            split(QWEN2_SPLIT)?.into(),
            ByteLevel::new(false, false, false).into(),
        ])
        .into(),
        // SmolLM (and StarCoder-style vocabularies): one digit per piece, then GPT-2's regex
        // without a prefix space. Also the safest default for other byte-level vocabularies.
        _ => Sequence::new(vec![
            Digits::new(true).into(),
            ByteLevel::new(false, true, true).into(),
        ])
        .into(),
    })
}

fn metadata_string(content: &Content, key: &str) -> Option<String> {
    content
        .metadata
        .get(key)
        .and_then(|value| value.to_string().ok())
        .cloned()
}

/// Whether the decoder maps tokens through the GPT-2 byte table.
fn is_byte_level(decoder: Option<&DecoderWrapper>) -> bool {
    match decoder {
        Some(DecoderWrapper::ByteLevel(_)) | None => true,
        Some(DecoderWrapper::Sequence(sequence)) => sequence
            .get_decoders()
            .iter()
            .any(|d| matches!(d, DecoderWrapper::ByteLevel(_))),
        Some(_) => false,
    }
}

/// GPT-2's byte-to-unicode table, inverted: printable bytes stand for themselves, the other 68
/// are shifted to U+0100 and up in byte order.
fn gpt2_unicode_to_byte() -> HashMap<char, u8> {
    let mut map = HashMap::with_capacity(256);
    let mut next = 0x100_u32;
    for byte in 0..=255_u8 {
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let c = if printable {
            char::from(byte)
        } else {
            let shifted = char::from_u32(next).unwrap_or(char::REPLACEMENT_CHARACTER);
            next += 1;
            shifted
        };
        map.insert(c, byte);
    }
    map
}

/// A byte-level token's bytes; a character outside the table (a hand-added vocabulary entry)
/// contributes its own UTF-8.
fn byte_level_bytes(token: &str, table: &HashMap<char, u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    for c in token.chars() {
        if let Some(byte) = table.get(&c) {
            out.push(*byte);
        } else {
            let mut buf = [0_u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

/// A SentencePiece-style token's bytes: `<0xNN>` is one byte, `▁` is a space.
fn sentencepiece_bytes(token: &str) -> Vec<u8> {
    if let Some(hex) = token
        .strip_prefix("<0x")
        .and_then(|rest| rest.strip_suffix('>'))
        && hex.len() == 2
        && let Ok(byte) = u8::from_str_radix(hex, 16)
    {
        return vec![byte];
    }
    token.replace('\u{2581}', " ").into_bytes()
}

/// Cuts a growing byte stream at UTF-8 character boundaries, so a character split across two
/// tokens is sent once, whole.
#[derive(Debug, Default)]
pub(super) struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    /// Appends `bytes` and returns the complete characters now available (possibly empty).
    /// Bytes that can never become valid UTF-8 are replaced by U+FFFD.
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(text) => {
                    out.push_str(text);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(&String::from_utf8_lossy(
                        self.pending.get(..valid).unwrap_or_default(),
                    ));
                    match e.error_len() {
                        // An incomplete character at the end: wait for the next token.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// Whatever is left at the end of the reply, lossily.
    pub(super) fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_table_covers_every_byte_once() {
        let table = gpt2_unicode_to_byte();
        assert_eq!(table.len(), 256);
        assert_eq!(table[&'\u{120}'], b' ');
        assert_eq!(table[&'\u{10a}'], b'\n');
        assert_eq!(table[&'A'], b'A');
        assert_eq!(byte_level_bytes("\u{120}hello", &table), b" hello");
    }

    #[test]
    fn sentencepiece_tokens_map_spaces_and_byte_fallback() {
        assert_eq!(sentencepiece_bytes("\u{2581}the"), b" the");
        assert_eq!(sentencepiece_bytes("<0x0A>"), b"\n");
        assert_eq!(sentencepiece_bytes("<0xZZ>"), b"<0xZZ>");
    }

    #[test]
    fn utf8_stream_holds_split_characters_back() {
        let mut stream = Utf8Stream::default();
        let euro = "€".as_bytes();
        assert_eq!(stream.push(b"a"), "a");
        assert_eq!(stream.push(&euro[..1]), "");
        assert_eq!(stream.push(&euro[1..2]), "");
        assert_eq!(stream.push(&euro[2..]), "€");
        assert_eq!(stream.push(&[0xff, b'b']), "\u{fffd}b");
        assert_eq!(stream.push(&euro[..2]), "");
        assert_eq!(stream.finish(), "\u{fffd}");
    }
}
