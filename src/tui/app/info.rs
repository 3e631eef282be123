//! Where the app's time comes from ([`Clock`]). What it knows of a session besides its
//! events is the session's [`crate::session::SessionInfo`].

use std::time::Instant;

/// Where time comes from: the system clock, or a fixed instant in tests so that elapsed times
/// drawn on screen are stable.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that never moves: every elapsed time is zero.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Instant);

impl Clock for FixedClock {
    fn now(&self) -> Instant {
        self.0
    }
}
