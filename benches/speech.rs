//! Speech-to-text speed and memory: for Whisper tiny.en and base, the real-time factor on ten
//! seconds of `espeak-ng` speech (transcription time / audio time, median of three runs) and the
//! resident memory that loading and transcribing add.
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
    clippy::cast_precision_loss
)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use interviewer::model_files::FetchConfig;
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
