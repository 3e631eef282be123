//! The terminal app stopped by a signal, as a terminal emulator or a service manager stops it:
//! the real binary on a pseudo-terminal (`script`), sent `SIGTERM` or `SIGHUP` while it waits
//! for an answer. The terminal must be given back (mouse reporting, bracketed paste and the
//! alternate screen off) and the session must resume.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_interviewer");

/// The pid of the interviewer process whose command line names `db`.
fn interviewer_pid(db: &Path) -> Option<u32> {
    let db = db.to_str()?;
    std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let entry = entry.ok()?;
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let ours = args.first() == Some(&BIN.as_bytes()) && args.contains(&db.as_bytes());
        ours.then_some(pid)
    })
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts `new` on a pseudo-terminal, waits for its first screen, sends `signal`, and returns
/// everything the app wrote to the terminal.
fn stopped_by(signal: &str, dir: &Path) -> (PathBuf, String) {
    let db = dir.join("s.db");
    let screen = dir.join("screen.bin");
    let command = format!(
        "stty cols 160 rows 48; exec {BIN} --db {} --config-dir {} new --concept oat_milk \
         --provider none",
        db.display(),
        Path::new(common::MANIFEST).join("config").display()
    );
    let mut script = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("TERM", "xterm-256color")
        .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&screen).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("`script` (util-linux) runs the app on a pseudo-terminal");
    let drawn = || {
        String::from_utf8_lossy(&std::fs::read(&screen).unwrap_or_default())
            .contains("Type the answer")
    };
    wait_for("the first screen", drawn);
    let pid = interviewer_pid(&db).expect("the interviewer process");
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    wait_for("the app to stop", || script.try_wait().unwrap().is_some());
    let written = String::from_utf8_lossy(&std::fs::read(&screen).unwrap()).into_owned();
    (db, written)
}

#[test]
fn a_stop_signal_gives_the_terminal_back_and_the_session_resumes() {
    for signal in ["TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let (db, written) = stopped_by(signal, dir.path());
        let entered = written
            .rfind("\x1b[?1049h")
            .expect("entered the alternate screen");
        let after = &written[entered..];
        for (sequence, what) in [
            ("\x1b[?1049l", "the alternate screen"),
            ("\x1b[?1000l", "mouse reporting"),
            ("\x1b[?2004l", "bracketed paste"),
        ] {
            assert!(after.contains(sequence), "SIG{signal}: {what} left on");
        }
        assert!(
            after.contains(&format!("stopped by SIG{signal}; session "))
                && after.contains("`interviewer resume "),
            "SIG{signal}: {after:?}"
        );
        // The session is stored, unlocked, and carries on headless.
        let out = Command::new(BIN)
            .arg("--db")
            .arg(&db)
            .arg("--config-dir")
            .arg(Path::new(common::MANIFEST).join("config"))
            .args(["interview", "--resume", "latest", "--provider", "none"])
            .args(["--max-turns", "2", "--answers"])
            .arg(common::example("oat_milk_answers.txt"))
            .env("INTERVIEWER_CACHE_DIR", common::CACHE_ROOT)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "SIG{signal}: {stderr}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("[turn 1"),
            "SIG{signal}"
        );
    }
}
