//! `interviewer coach`: a review of the interviewer's questions, exchange by exchange, beside
//! what the engine would have asked there and why, with the flags a training researcher would
//! raise (see [`flags`]), and a summary per session and across a concept's sessions.

pub mod flags;
mod review;

pub use flags::{Flag, Flagged, flag};
pub use review::{ExchangeReview, SessionReview, StudyReview, review_session, summarise};
