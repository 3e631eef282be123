//! `interviewer transcribe FILE`: an audio file to text, offline, with Whisper (see `speech`).
//!
//! `--format text` prints the text; `--format json` prints the model, language, audio duration
//! and every segment (start and end seconds, text, mean log-probability, no-speech
//! probability). The model is fetched into the cache on first use (progress on stderr).
//!
//! Exit codes: 1 for an unreadable or unsupported audio file, 2 for a language the model does
//! not know, 3 when the model cannot be fetched, loaded or run.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CliError, emit};
use crate::model_files::FetchConfig;
use crate::speech::{ModelChoice, SpeechError, read_audio};

#[derive(Debug, Args)]
pub struct TranscribeArgs {
    /// An audio file: WAV (PCM 8/16/24/32-bit or float), MP3, Ogg Vorbis, Ogg Opus, FLAC or
    /// M4A/AAC; any rate, mono or stereo; at most 30 minutes.
    pub file: PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value_t = TranscriptFormat::Text)]
    pub format: TranscriptFormat,
    /// `tiny.en` (English, default), `base` (multilingual), or a directory holding a
    /// `CTranslate2` Whisper `model.bin` and `tokenizer.json`.
    #[arg(long, default_value = "tiny.en", value_name = "tiny.en|base|PATH")]
    pub model: String,
    /// Language code such as `en` or `de` (multilingual models; detected when absent).
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,
    /// Segments timed by Whisper's timestamp tokens instead of one per 30-second window (a
    /// little less accurate on our tests).
    #[arg(long)]
    pub timestamps: bool,
    /// Words the speaker is likely to say (the study's topic, the question asked): the model
    /// is conditioned on them, so names and terms in them are heard as such.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
}

/// Output of `transcribe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum TranscriptFormat {
    #[default]
    Text,
    Json,
}

/// Transcribes the file and prints the result.
pub fn run(args: &TranscribeArgs, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let (samples, _) = read_audio(&args.file).map_err(to_cli)?;
    let choice = ModelChoice::parse(&args.model);
    let mut model = choice.load(&FetchConfig::from_env()).map_err(to_cli)?;
    model.set_timestamps(args.timestamps);
    model
        .set_prompt(args.prompt.as_deref().unwrap_or_default())
        .map_err(to_cli)?;
    let transcript = model
        .transcribe(&samples, args.language.as_deref())
        .map_err(to_cli)?;
    match args.format {
        TranscriptFormat::Text => emit(out, &format!("{}\n", transcript.text())),
        TranscriptFormat::Json => {
            let json = serde_json::to_string_pretty(&transcript)
                .map_err(|e| CliError::Input(format!("cannot write the transcript: {e}")))?;
            emit(out, &format!("{json}\n"))
        }
    }
}

#[allow(clippy::needless_pass_by_value)] // used as `map_err(to_cli)`
fn to_cli(error: SpeechError) -> CliError {
    match error {
        SpeechError::Audio(_) => CliError::Input(error.to_string()),
        SpeechError::Language(_) => CliError::Usage(error.to_string()),
        _ => CliError::Llm(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn the_command_line_parses_with_defaults() {
        let cli = Cli::try_parse_from(["interviewer", "transcribe", "a.wav"]).unwrap();
        let Some(Command::Transcribe(args)) = cli.command else {
            panic!("not transcribe");
        };
        assert_eq!(args.model, "tiny.en");
        assert_eq!(args.format, TranscriptFormat::Text);
        let cli = Cli::try_parse_from([
            "interviewer",
            "transcribe",
            "a.wav",
            "--format",
            "json",
            "--model",
            "base",
            "--language",
            "de",
        ])
        .unwrap();
        let Some(Command::Transcribe(args)) = cli.command else {
            panic!("not transcribe");
        };
        assert_eq!(args.format, TranscriptFormat::Json);
        assert_eq!(args.language.as_deref(), Some("de"));
    }

    #[test]
    fn a_bad_audio_file_is_an_input_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answer.wav");
        std::fs::write(&path, "text, not audio").unwrap();
        let args = TranscribeArgs {
            file: path,
            format: TranscriptFormat::Text,
            model: "tiny.en".into(),
            language: None,
            timestamps: false,
            prompt: None,
        };
        let err = run(&args, &mut Vec::new()).unwrap_err();
        assert!(matches!(err, CliError::Input(_)));
        assert!(
            err.to_string().contains("answer.wav: not a WAV file"),
            "{err}"
        );
    }
}
