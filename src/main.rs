//! Binary entry point: parse arguments, run the command, print errors and pick the exit code.

use std::process::ExitCode;

use clap::Parser;
use interviewer::cli::{Cli, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _log = interviewer::logging::init();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match run(cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
