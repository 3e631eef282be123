//! Speech-to-text speed and memory: for Whisper tiny.en and base, the real-time factor on ten
//! seconds of `espeak-ng` speech (transcription time / audio time, median of three runs), the
//! resident memory that loading and transcribing add, and the live path's latency: the same
//! speech streamed at real-time speed through a recorder command into the listener the
//! terminal app uses, stopped when the speech ends, timed from the stop to the final text.
//!
//! Each model runs in a child process of its own (this bench with `--one MODEL`), so its peak
//! resident memory (`VmHWM`) is its own. Targets (not asserted): tiny.en real-time factor at
//! most 0.3 on two cores, at most 250 MB added. Prints numbers; asserts nothing. candle's
//! thread count comes from `RAYON_NUM_THREADS` (default: all cores). Run with
//! `cargo bench --bench speech`; models are fetched into `target/test-cache` on first use.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::panic
)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use interviewer::model_files::FetchConfig;
use interviewer::speech::live::{ListenConfig, Listener, LiveEvent};
use interviewer::speech::{ModelChoice, SAMPLE_RATE, read_audio};

const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

/// Seconds of speech transcribed.
const SECONDS: usize = 10;

/// Runs per model; the median is reported.
const RUNS: usize = 3;

const SENTENCES: [&str; 4] = [
    "I usually buy oat milk because it tastes better in my coffee.",
    "The price is a bit high, but I think the quality is worth it.",
    "My kids drink it with their cereal every morning.",
    "Honestly, I like the creamy texture more than anything else.",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--one") {
        one(&args[i + 1]);
        return;
    }
    if Command::new("espeak-ng").arg("--version").output().is_err() {
        println!("SKIP: espeak-ng not installed");
        return;
    }
    println!(
        "speech: {SECONDS} s of espeak-ng speech, {} threads (RAYON_NUM_THREADS={})",
        std::thread::available_parallelism().map_or(1, usize::from),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "unset".into())
    );
    let exe = std::env::current_exe().unwrap();
    for model in ["tiny.en", "base"] {
        let status = Command::new(&exe).args(["--one", model]).status().unwrap();
        if !status.success() {
            println!("{model}: the child failed ({status})");
        }
    }
}

/// Ten seconds of speech at 16 kHz: the sentences spoken one after another, cut to length.
fn speech() -> Vec<f32> {
    let dir = Path::new(CACHE_ROOT).join("speech-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let mut samples = Vec::new();
    for (i, text) in SENTENCES.iter().enumerate() {
        let path = dir.join(format!("{i}.wav"));
        let ok = Command::new("espeak-ng")
            .args(["-v", "en-us", "-s", "150", "-w"])
            .arg(&path)
            .arg(text)
            .status()
            .unwrap()
            .success();
        assert!(ok, "espeak-ng failed");
        samples.extend(read_audio(&path).unwrap().0);
    }
    samples.truncate(SECONDS * SAMPLE_RATE as usize);
    samples
}

fn one(name: &str) {
    let audio = speech();
    let seconds = audio.len() as f64 / f64::from(SAMPLE_RATE);
    let config = FetchConfig {
        cache_root: Some(CACHE_ROOT.into()),
        ..FetchConfig::from_env()
    };
    let choice = ModelChoice::parse(name);
    // Fetch first, so the download is not counted.
    choice.resolve(&config).unwrap();
    let before = kib("VmRSS:");
    let started = Instant::now();
    let mut model = choice.load(&config).unwrap();
    let load = started.elapsed();
    let loaded = kib("VmRSS:");
    let mut times = Vec::new();
    let mut text = String::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let transcript = model.transcribe(&audio, Some("en")).unwrap();
        times.push(started.elapsed().as_secs_f64());
        text = transcript.text();
    }
    times.sort_by(f64::total_cmp);
    let median = times[RUNS / 2];
    let after = kib("VmRSS:");
    let peak = kib("VmHWM:");
    let mb = |kib: u64| kib as f64 / 1024.0;
    println!(
        "{}: load {} ms; {seconds:.1} s of speech in {median:.2} s (median of {RUNS}) = \
         real-time factor {:.3}\n  resident memory: {:.0} MB before, +{:.0} MB loaded, +{:.0} MB \
         after transcribing, peak +{:.0} MB\n  text: {text}",
        model.name(),
        load.as_millis(),
        median / seconds,
        mb(before),
        mb(loaded.saturating_sub(before)),
        mb(after.saturating_sub(before)),
        mb(peak.saturating_sub(before)),
    );
    drop(model);
    let mut latencies: Vec<f64> = (0..LIVE_RUNS)
        .map(|_| live(&choice, &config, &audio))
        .collect();
    latencies.sort_by(f64::total_cmp);
    println!(
        "  live, {LIVE_RUNS} runs: final text in the box {:.2} s after the respondent stopped \
         (median; {:.2} … {:.2} s)",
        latencies[LIVE_RUNS / 2],
        latencies[0],
        latencies[LIVE_RUNS - 1]
    );
}

/// Times the live path is run per model.
const LIVE_RUNS: usize = 5;

/// The live path: `audio` streamed in tenths of a second by a shell loop (then silence, as a
/// microphone would go on), the listener stopped when the speech has all been played; prints
/// the partial updates seen and the time from the stop to the final text; returns the seconds
/// from the end of the speech to the final text in the box.
fn live(choice: &ModelChoice, config: &FetchConfig, audio: &[f32]) -> f64 {
    let dir = tempfile_dir();
    let raw = dir.join("live.raw");
    let bytes: Vec<u8> = audio
        .iter()
        .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0) as i16).to_le_bytes())
        .collect();
    std::fs::write(&raw, &bytes).unwrap();
    let blocks = bytes.len().div_ceil(3_200);
    let command = format!(
        "i=0; while [ $i -lt {blocks} ]; do dd bs=3200 count=1 2>/dev/null; sleep 0.1; \
         i=$((i+1)); done < '{}'; while true; do head -c 3200 /dev/zero; sleep 0.1; done",
        raw.display()
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let listener = Listener::spawn(
        ListenConfig {
            command: Some(command),
            model: choice.clone(),
            language: Some("en".to_owned()),
            fetch: config.clone(),
            partial_every: std::time::Duration::from_secs(1),
            keep: None,
        },
        tx,
    );
    listener.start();
    let mut partials: Vec<(Instant, String)> = Vec::new();
    let speech_seconds = audio.len() as f64 / f64::from(SAMPLE_RATE);
    let mut started = None;
    let stopped = loop {
        match rx.blocking_recv() {
            // The stream plays in real time from here.
            Some(LiveEvent::Listening { .. }) => started = Some(Instant::now()),
            // The moderator presses F2 about a second after the respondent stops.
            Some(LiveEvent::Level { seconds, .. }) if seconds >= speech_seconds + 1.0 => {
                listener.stop();
                break Instant::now();
            }
            Some(LiveEvent::Partial { text }) => partials.push((Instant::now(), text)),
            Some(LiveEvent::Failed { message }) => panic!("{message}"),
            Some(_) => {}
            None => panic!("the listener stopped"),
        }
    };
    let (finished, text) = loop {
        match rx.blocking_recv() {
            Some(LiveEvent::Final(spoken)) => break (Instant::now(), spoken.text),
            Some(LiveEvent::Failed { message }) => panic!("{message}"),
            Some(LiveEvent::Partial { text }) => partials.push((Instant::now(), text)),
            Some(_) => {}
            None => panic!("the listener stopped"),
        }
    };
    let speech_end =
        started.expect("listening started") + std::time::Duration::from_secs_f64(speech_seconds);
    // When the answer box first showed the final text: the partial that equals it, or the
    // final event itself.
    let shown = partials
        .iter()
        .find(|(_, t)| *t == text)
        .map_or(finished, |(at, _)| *at);
    let since = |at: Instant| at.saturating_duration_since(speech_end).as_secs_f64();
    println!(
        "  live: {} partial transcripts; the final text was in the answer box {:.2} s after \
         the respondent stopped (the stop, {:.1} s after the speech, got it back in {:.2} s)\n  \
         final: {text}",
        partials.len(),
        since(shown),
        since(stopped),
        finished.duration_since(stopped).as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(dir);
    since(shown)
}

/// A fresh folder for the streamed audio.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("interviewer-speech-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `kB` field of `/proc/self/status` (Linux; 0 elsewhere).
fn kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field)?.trim().strip_suffix("kB"))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}
