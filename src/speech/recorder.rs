//! Microphone capture without linking an audio library: a recorder program writes 16 kHz mono
//! signed 16-bit little-endian PCM to its standard output, and a reader thread turns it into
//! samples.
//!
//! The program is `audio.command` from the settings file (run by `sh -c`), or the first of
//! [`PROBES`] found on `PATH`: `PipeWire`'s `pw-record`, `PulseAudio`'s `parecord`, ALSA's
//! `arecord`, `SoX` (`rec`, then `sox` on the default device) and `ffmpeg`. A recorder that
//! writes a WAV header instead of raw samples is accepted when the header says 16 kHz mono
//! 16-bit, and refused with the format it did write otherwise.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use super::SAMPLE_RATE;

/// The recorders tried in order, each with the arguments that make it write 16 kHz mono s16le
/// to standard output.
pub const PROBES: [(&str, &[&str]); 6] = [
    (
        "pw-record",
        &["--rate", "16000", "--channels", "1", "--format", "s16", "-"],
    ),
    (
        "parecord",
        &["--raw", "--rate=16000", "--channels=1", "--format=s16le"],
    ),
    (
        "arecord",
        &["-q", "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "raw"],
    ),
    (
        "rec",
        &[
            "-q",
            "-t",
            "raw",
            "-r",
            "16000",
            "-c",
            "1",
            "-e",
            "signed-integer",
            "-b",
            "16",
            "-",
        ],
    ),
    (
        "sox",
        &[
            "-q",
            "-d",
            "-t",
            "raw",
            "-r",
            "16000",
            "-c",
            "1",
            "-e",
            "signed-integer",
            "-b",
            "16",
            "-",
        ],
    ),
    (
        "ffmpeg",
        &[
            "-loglevel",
            "error",
            "-f",
            "pulse",
            "-i",
            "default",
            "-ac",
            "1",
            "-ar",
            "16000",
            "-f",
            "s16le",
            "-",
        ],
    ),
];

/// Longest capture kept: the same bound as an audio file's.
pub const MAX_CAPTURE_SECONDS: f64 = super::MAX_SECONDS;

/// [`MAX_CAPTURE_SECONDS`] in samples.
const MAX_CAPTURE_SAMPLES: usize = 30 * 60 * SAMPLE_RATE as usize;

/// Bytes read from the recorder at a time (0.1 s of audio).
const CHUNK_BYTES: usize = 3_200;

/// Why recording could not start or went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecorderError {
    #[error(
        "no audio recorder found (tried {tried}); install one (e.g. `apt install pipewire-bin` \
         or `alsa-utils`) or set `audio: {{ command: \"...\" }}` in the settings file to a \
         command that writes 16 kHz mono s16le PCM to standard output"
    )]
    NotFound { tried: String },
    #[error("cannot start the recorder `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error(
        "the recorder `{command}` wrote {found}; it must write 16 kHz mono 16-bit PCM \
         (raw s16le, or WAV in that format)"
    )]
    Format { command: String, found: String },
    #[error("the recorder `{command}` stopped: {reason}")]
    Died { command: String, reason: String },
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecorderCommand {
    /// How the command is shown to the user.
    pub display: String,
    program: PathBuf,
    args: Vec<String>,
}

impl RecorderCommand {
    /// `audio.command` when set, else the first recorder of [`PROBES`] on `PATH`.
    pub fn choose(configured: Option<&str>) -> Result<Self, RecorderError> {
        Self::choose_on(configured, &std::env::var_os("PATH").unwrap_or_default())
    }

    /// [`Self::choose`] with `path` as the search path.
    fn choose_on(configured: Option<&str>, path: &std::ffi::OsStr) -> Result<Self, RecorderError> {
        if let Some(command) = configured.map(str::trim).filter(|c| !c.is_empty()) {
            return Ok(Self::shell(command));
        }
        let dirs: Vec<PathBuf> = std::env::split_paths(path).collect();
        for (name, args) in PROBES {
            if let Some(program) = dirs.iter().map(|d| d.join(name)).find(|p| executable(p)) {
                return Ok(Self {
                    display: format!("{name} {}", args.join(" ")),
                    program,
                    args: args.iter().map(|a| (*a).to_owned()).collect(),
                });
            }
        }
        Err(RecorderError::NotFound {
            tried: PROBES
                .iter()
                .map(|(name, _)| *name)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// A command line run by `sh -c`.
    pub fn shell(command: &str) -> Self {
        Self {
            display: command.to_owned(),
            program: PathBuf::from("sh"),
            args: vec!["-c".to_owned(), command.to_owned()],
        }
    }
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// What the reader thread has captured so far.
#[derive(Debug, Default)]
pub struct Captured {
    /// 16 kHz mono samples in [-1, 1].
    pub samples: Vec<f32>,
    /// RMS of the last chunk read (for a level meter).
    pub level: f32,
    /// Set once the recorder's output ended: `None` for a clean end (or a stop we asked for),
    /// the reason otherwise.
    pub ended: Option<Option<RecorderError>>,
    /// The capture reached [`MAX_CAPTURE_SECONDS`] and stopped growing.
    pub full: bool,
}

/// A running recorder and its reader thread.
#[derive(Debug)]
pub struct Recorder {
    command: RecorderCommand,
    child: Child,
    captured: Arc<Mutex<Captured>>,
    reader: Option<JoinHandle<()>>,
}

impl Recorder {
    /// Starts `command` and reads its output on a thread.
    pub fn start(command: RecorderCommand) -> Result<Self, RecorderError> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RecorderError::Spawn {
                command: command.display.clone(),
                reason: e.to_string(),
            })?;
        let stdout = child.stdout.take().ok_or_else(|| RecorderError::Spawn {
            command: command.display.clone(),
            reason: "no standard output".to_owned(),
        })?;
        let stderr = child.stderr.take();
        let captured = Arc::new(Mutex::new(Captured::default()));
        let shared = Arc::clone(&captured);
        let display = command.display.clone();
        let reader = std::thread::Builder::new()
            .name("recorder".to_owned())
            .spawn(move || read_pcm(stdout, stderr, &shared, &display))
            .map_err(|e| RecorderError::Spawn {
                command: command.display.clone(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            command,
            child,
            captured,
            reader: Some(reader),
        })
    }

    pub fn command(&self) -> &str {
        &self.command.display
    }

    /// Runs `f` on what has been captured so far.
    pub fn with<T>(&self, f: impl FnOnce(&Captured) -> T) -> T {
        f(&self.captured.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Stops the recorder and waits for the reader to take what was already written; returns
    /// everything captured and why the output ended early, if it did before we asked.
    pub fn stop(mut self) -> (Vec<f32>, Option<RecorderError>) {
        let ended_before = self.with(|c| c.ended.clone());
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let mut captured = self.captured.lock().unwrap_or_else(PoisonError::into_inner);
        (
            std::mem::take(&mut captured.samples),
            ended_before.flatten(),
        )
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reader thread: PCM from `stdout` into `captured` until the output ends.
fn read_pcm(
    mut stdout: impl Read,
    stderr: Option<impl Read + Send + 'static>,
    captured: &Mutex<Captured>,
    command: &str,
) {
    // The recorder's complaints, kept for the error if it dies.
    let complaints = stderr.map(|mut err| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        })
    });
    let lock = || captured.lock().unwrap_or_else(PoisonError::into_inner);
    let max_samples = MAX_CAPTURE_SAMPLES;
    let mut buffer = vec![0_u8; CHUNK_BYTES];
    let mut pending: Vec<u8> = Vec::new();
    let mut header_checked = false;
    let outcome = loop {
        let n = match stdout.read(&mut buffer) {
            Ok(0) => break None,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Some(e.to_string()),
        };
        pending.extend(buffer.get(..n).unwrap_or_default());
        if !header_checked {
            if pending.len() < 4 {
                continue;
            }
            if pending.starts_with(b"RIFF") {
                match wav_header(&pending) {
                    Header::Incomplete => continue,
                    Header::Fits(skip) => {
                        pending.drain(..skip.min(pending.len()));
                    }
                    Header::Wrong(found) => {
                        lock().ended = Some(Some(RecorderError::Format {
                            command: command.to_owned(),
                            found,
                        }));
                        return;
                    }
                }
            }
            header_checked = true;
        }
        let whole = pending.len() - pending.len() % 2;
        let samples: Vec<f32> = pending
            .drain(..whole)
            .collect::<Vec<u8>>()
            .chunks_exact(2)
            .map(|b| {
                let mut pair = [0_u8; 2];
                pair.copy_from_slice(b);
                f32::from(i16::from_le_bytes(pair)) / 32_768.0
            })
            .collect();
        let mut c = lock();
        c.level = super::model::rms(&samples);
        let room = max_samples.saturating_sub(c.samples.len());
        c.samples.extend(samples.iter().take(room));
        if room < samples.len() {
            c.full = true;
        }
    };
    let status = complaints
        .and_then(|h| h.join().ok())
        .map(|t| t.trim().lines().last().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let reason = match (outcome, status.is_empty()) {
        (Some(read), _) => Some(read),
        (None, false) => Some(status),
        (None, true) => None,
    };
    let mut c = lock();
    if c.ended.is_none() {
        c.ended = Some(reason.map(|reason| RecorderError::Died {
            command: command.to_owned(),
            reason,
        }));
    }
}

enum Header {
    Incomplete,
    /// Bytes to skip before the samples.
    Fits(usize),
    Wrong(String),
}

/// A streamed WAV header: where the samples start, or what format it announces.
fn wav_header(bytes: &[u8]) -> Header {
    let u16_at = |at: usize| {
        bytes
            .get(at..at + 2)
            .and_then(|b| <[u8; 2]>::try_from(b).ok())
            .map(u16::from_le_bytes)
    };
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
    };
    let mut at = 12;
    let mut format = None;
    loop {
        let (Some(id), Some(len)) = (bytes.get(at..at + 4), u32_at(at + 4)) else {
            return Header::Incomplete;
        };
        let body = at + 8;
        if id == b"fmt " {
            let (Some(tag), Some(channels), Some(rate), Some(bits)) = (
                u16_at(body),
                u16_at(body + 2),
                u32_at(body + 4),
                u16_at(body + 14),
            ) else {
                return Header::Incomplete;
            };
            format = Some((tag, channels, rate, bits));
        } else if id == b"data" {
            return match format {
                Some((1, 1, SAMPLE_RATE, 16)) => Header::Fits(body),
                Some((tag, channels, rate, bits)) => Header::Wrong(format!(
                    "WAV with format tag {tag}, {channels} channel(s), {rate} Hz, {bits}-bit"
                )),
                None => Header::Wrong("WAV without a format chunk".to_owned()),
            };
        }
        at = body + len as usize + (len as usize % 2);
        if at > 64 * 1024 {
            return Header::Wrong("a WAV header longer than 64 KiB".to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn wait_ended(recorder: &Recorder) {
        let started = Instant::now();
        while recorder.with(|c| c.ended.is_none()) && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn raw_file(samples: &[i16]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        std::fs::write(file.path(), bytes).unwrap();
        file
    }

    #[test]
    fn a_configured_command_streams_samples() {
        let file = raw_file(&[0, 16_384, -16_384, 32_767]);
        let recorder = Recorder::start(RecorderCommand::shell(&format!(
            "cat '{}'",
            file.path().display()
        )))
        .unwrap();
        wait_ended(&recorder);
        assert_eq!(recorder.with(|c| c.ended.clone()), Some(None));
        let (samples, error) = recorder.stop();
        assert_eq!(error, None);
        assert_eq!(samples.len(), 4);
        assert!((samples[1] - 0.5).abs() < 1e-6 && (samples[2] + 0.5).abs() < 1e-6);
    }

    #[test]
    fn a_wav_header_in_the_right_format_is_skipped_and_a_wrong_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.wav");
        std::fs::write(&good, super::super::encode_pcm16(16_000, &[0.5; 10])).unwrap();
        let recorder =
            Recorder::start(RecorderCommand::shell(&format!("cat '{}'", good.display()))).unwrap();
        wait_ended(&recorder);
        let (samples, error) = recorder.stop();
        assert_eq!((samples.len(), error), (10, None));

        let wrong = dir.path().join("wrong.wav");
        std::fs::write(&wrong, super::super::encode_pcm16(44_100, &[0.5; 10])).unwrap();
        let recorder = Recorder::start(RecorderCommand::shell(&format!(
            "cat '{}'",
            wrong.display()
        )))
        .unwrap();
        wait_ended(&recorder);
        let (samples, error) = recorder.stop();
        assert!(samples.is_empty());
        let message = error.unwrap().to_string();
        assert!(message.contains("44100 Hz"), "{message}");
        assert!(message.contains("16 kHz mono"), "{message}");
    }

    #[test]
    fn a_recorder_that_dies_says_why_and_keeps_what_it_wrote() {
        let file = raw_file(&[1_000; 1_600]);
        let recorder = Recorder::start(RecorderCommand::shell(&format!(
            "cat '{}'; echo 'device unplugged' >&2; exit 3",
            file.path().display()
        )))
        .unwrap();
        wait_ended(&recorder);
        let (samples, error) = recorder.stop();
        assert_eq!(samples.len(), 1_600);
        let message = error.unwrap().to_string();
        assert!(message.contains("device unplugged"), "{message}");
    }

    #[test]
    fn no_recorder_on_the_path_lists_what_was_tried() {
        let empty = tempfile::tempdir().unwrap();
        let message = RecorderCommand::choose_on(None, empty.path().as_os_str())
            .unwrap_err()
            .to_string();
        for (name, _) in PROBES {
            assert!(message.contains(name), "{message}");
        }
        assert!(message.contains("audio: { command:"), "{message}");
    }

    #[test]
    fn the_first_recorder_found_is_chosen_unless_one_is_configured() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for name in ["arecord", "ffmpeg"] {
            let path = dir.path().join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let chosen = RecorderCommand::choose_on(None, dir.path().as_os_str()).unwrap();
        assert!(
            chosen.display.starts_with("arecord -q -f S16_LE"),
            "{}",
            chosen.display
        );
        let configured =
            RecorderCommand::choose_on(Some("my-recorder --raw"), dir.path().as_os_str()).unwrap();
        assert_eq!(configured.display, "my-recorder --raw");
    }
}
