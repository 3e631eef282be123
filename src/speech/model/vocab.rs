//! The tokenizer's special tokens and the token ids `config.json` suppresses.

use std::path::Path;

use candle_transformers::models::whisper as whisper_consts;
use tokenizers::Tokenizer;

use crate::speech::SpeechError;

/// The special tokens decoding needs.
#[derive(Debug, Clone)]
pub(super) struct Specials {
    pub(super) sot: u32,
    /// `<|startofprev|>`: opens the text the decoder is conditioned on (a prompt).
    pub(super) sot_prev: Option<u32>,
    pub(super) eot: u32,
    pub(super) transcribe: Option<u32>,
    pub(super) no_timestamps: u32,
    /// `<|0.00|>`: the id after `<|notimestamps|>`; every id from here up is a timestamp.
    pub(super) timestamp_begin: u32,
    pub(super) no_speech: Option<u32>,
    /// `(code, token)` of every language token, for detection.
    pub(super) languages: Vec<(String, u32)>,
}

pub(super) fn specials(tokenizer: &Tokenizer) -> Result<Specials, String> {
    let id = |token: &str| tokenizer.token_to_id(token);
    let need = |token: &str| id(token).ok_or_else(|| format!("no {token} token"));
    let mut languages: Vec<(String, u32)> = tokenizer
        .get_vocab(true)
        .into_iter()
        .filter_map(|(token, id)| {
            let code = token.strip_prefix("<|")?.strip_suffix("|>")?;
            let is_language =
                (2..=3).contains(&code.len()) && code.chars().all(|c| c.is_ascii_lowercase());
            is_language.then(|| (code.to_owned(), id))
        })
        .collect();
    languages.sort_by_key(|(_, id)| *id);
    let no_timestamps = need(whisper_consts::NO_TIMESTAMPS_TOKEN)?;
    Ok(Specials {
        sot: need(whisper_consts::SOT_TOKEN)?,
        sot_prev: id("<|startofprev|>"),
        eot: need(whisper_consts::EOT_TOKEN)?,
        transcribe: id(whisper_consts::TRANSCRIBE_TOKEN),
        no_timestamps,
        timestamp_begin: no_timestamps + 1,
        no_speech: whisper_consts::NO_SPEECH_TOKENS.iter().find_map(|t| id(t)),
        languages,
    })
}

/// `suppress_ids` and `suppress_ids_begin` from `CTranslate2`'s `config.json`; empty lists
/// when the file is absent (a directory with only `model.bin` and `tokenizer.json`).
pub(super) fn suppress_lists(path: &Path) -> Result<(Vec<u32>, Vec<u32>), SpeechError> {
    #[derive(serde::Deserialize)]
    struct Ct2Config {
        #[serde(default)]
        suppress_ids: Vec<u32>,
        #[serde(default)]
        suppress_ids_begin: Vec<u32>,
    }
    if !path.is_file() {
        return Ok((Vec::new(), vec![220]));
    }
    let fail = |problem: String| SpeechError::Model {
        path: path.to_path_buf(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let config: Ct2Config = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
    Ok((config.suppress_ids, config.suppress_ids_begin))
}
