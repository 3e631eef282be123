//! Questions read aloud (`--speak`) by a text-to-speech program, for self-administered voice
//! interviews: `audio.speak` from the settings file (a command line; the question is passed as
//! its last argument, never through a shell's parsing), else the first of [`VOICES`] on `PATH`.
//! Speaking never blocks: a new question stops the one still being read.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The programs tried in order, with the arguments before the text.
pub const VOICES: [(&str, &[&str]); 3] =
    [("spd-say", &["--wait"]), ("espeak-ng", &[]), ("say", &[])];

/// Longest text read aloud (characters); a longer question is cut at a word.
const MAX_CHARS: usize = 1_000;

/// Why nothing can speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VoiceError {
    #[error(
        "--speak: no text-to-speech program found (tried {tried}); install one (e.g. `apt \
         install speech-dispatcher` or `espeak-ng`) or set `audio: {{ speak: \"...\" }}` in the \
         settings file"
    )]
    NotFound { tried: String },
}

/// A text-to-speech command and the question it is reading.
#[derive(Debug)]
pub struct Voice {
    /// How the command is shown.
    pub display: String,
    program: PathBuf,
    args: Vec<String>,
    speaking: Option<Child>,
}

impl Voice {
    /// `audio.speak` when set, else the first of [`VOICES`] on `PATH`.
    pub fn choose(configured: Option<&str>) -> Result<Self, VoiceError> {
        if let Some(command) = configured.map(str::trim).filter(|c| !c.is_empty()) {
            // `sh -c 'CMD "$1"' sh TEXT`: the text is a positional parameter, never parsed.
            return Ok(Self {
                display: command.to_owned(),
                program: PathBuf::from("sh"),
                args: vec![
                    "-c".to_owned(),
                    format!("{command} \"$1\""),
                    "sh".to_owned(),
                ],
                speaking: None,
            });
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        for (name, args) in VOICES {
            if let Some(program) = std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
            {
                return Ok(Self {
                    display: name.to_owned(),
                    program,
                    args: args.iter().map(|a| (*a).to_owned()).collect(),
                    speaking: None,
                });
            }
        }
        Err(VoiceError::NotFound {
            tried: VOICES
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Starts reading `text` aloud, stopping what was being read. A program that cannot start
    /// is logged, not fatal: the question is on screen anyway.
    pub fn say(&mut self, text: &str) {
        self.stop();
        let clean = speakable(text);
        if clean.is_empty() {
            return;
        }
        match Command::new(&self.program)
            .args(&self.args)
            .arg(&clean)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => self.speaking = Some(child),
            Err(e) => tracing::warn!(command = %self.display, error = %e, "cannot speak"),
        }
    }

    /// Waits until the current question has been read (headless runs, so the next question
    /// does not cut it off).
    pub fn finish(&mut self) {
        if let Some(mut child) = self.speaking.take() {
            let _ = child.wait();
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.speaking.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Voice {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The text without control characters (no escape sequence reaches a speech program), with
/// runs of white space as one space, cut to [`MAX_CHARS`] at a word.
fn speakable(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut out = String::new();
    for word in flat.split_whitespace() {
        if out.chars().count() + word.chars().count() + 1 > MAX_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_lose_control_characters_and_are_bounded() {
        assert_eq!(
            speakable("Why does \u{1b}[31mthat\u{7}\n matter?"),
            "Why does [31mthat matter?"
        );
        let long = "word ".repeat(400);
        assert!(speakable(&long).chars().count() <= MAX_CHARS);
    }

    #[test]
    fn a_configured_command_gets_the_question_as_one_argument() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("said.txt");
        let mut voice =
            Voice::choose(Some(&format!("printf '%s|' >> '{}'", log.display()))).unwrap();
        voice.say("What's $HOME; `rm -rf /` about?");
        voice.finish();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "What's $HOME; `rm -rf /` about?|"
        );
    }
}
