//! The crash switch for resume tests: `INTERVIEWER_CRASH_AT=<stage>:<before|after>` aborts the
//! process immediately before or after that stage's commit.
//!
//! Abort, not exit: no destructor runs and nothing is flushed, as in a real crash. The value is
//! read once when an interview is opened; a malformed value is an error there, not ignored.

use super::{PipelineError, Stage};

/// Environment variable naming the crash point.
pub const CRASH_ENV: &str = "INTERVIEWER_CRASH_AT";

/// Which side of the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashSide {
    Before,
    After,
}

/// Where to abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashPoint {
    pub stage: Stage,
    pub side: CrashSide,
}

impl CrashPoint {
    /// Parses `<stage>:<before|after>`.
    pub fn parse(value: &str) -> Result<Self, PipelineError> {
        let bad = |why: String| PipelineError::CrashSwitch {
            value: value.to_owned(),
            reason: why,
        };
        let (stage, side) = value
            .split_once(':')
            .ok_or_else(|| bad("expected <stage>:<before|after>".to_owned()))?;
        let stage = Stage::parse(stage.trim()).ok_or_else(|| {
            let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
            bad(format!(
                "unknown stage '{stage}'; stages: {}",
                names.join(", ")
            ))
        })?;
        let side = match side.trim() {
            "before" => CrashSide::Before,
            "after" => CrashSide::After,
            other => {
                return Err(bad(format!(
                    "side must be before or after, found '{other}'"
                )));
            }
        };
        Ok(Self { stage, side })
    }

    /// The crash point from the environment, if set.
    pub fn from_env() -> Result<Option<Self>, PipelineError> {
        match std::env::var(CRASH_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v).map(Some),
            _ => Ok(None),
        }
    }
}

/// Aborts the process when `point` names this stage and side.
pub(crate) fn check(point: Option<CrashPoint>, stage: Stage, side: CrashSide) {
    if point.is_some_and(|p| p.stage == stage && p.side == side) {
        eprintln!(
            "{CRASH_ENV}: aborting {} the commit of {stage}",
            match side {
                CrashSide::Before => "before",
                CrashSide::After => "after",
            }
        );
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stage_and_side() {
        assert_eq!(
            CrashPoint::parse("graph_update:after").unwrap(),
            CrashPoint {
                stage: Stage::GraphUpdate,
                side: CrashSide::After
            }
        );
        let err = CrashPoint::parse("graph:after").unwrap_err().to_string();
        assert!(err.contains("unknown stage 'graph'"), "{err}");
        assert!(err.contains("scoring_persistence"), "{err}");
        assert!(CrashPoint::parse("extraction").is_err());
        assert!(CrashPoint::parse("extraction:during").is_err());
    }
}
