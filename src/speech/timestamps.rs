//! Whisper's timestamp tokens: the rules that keep them well-formed while decoding, and
//! splitting a decoded window into timed pieces.
//!
//! Token `timestamp_begin + i` means `0.02 · i` seconds into the window. A window decodes as
//! `<|t0|> text <|t1|><|t1'|> text <|t2|> … <|endoftext|>`: timestamps come in pairs (the end
//! of one piece, the start of the next), never decrease, and the first token is a timestamp of
//! at most one second. When the timestamps together are more likely than any single text token,
//! a timestamp is forced (as Whisper does). The models were trained mostly on this format, and
//! decoding with it is what faster-whisper does by default.

/// Seconds per timestamp step.
pub const SECONDS_PER_STEP: f64 = 0.02;

/// The first timestamp may be at most this many steps in (1 s, Whisper's
/// `max_initial_timestamp`).
const MAX_INITIAL_STEPS: usize = 50;

/// A timed stretch of one window's tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// Seconds from the window's start.
    pub start: f64,
    pub end: f64,
    /// Text tokens only.
    pub tokens: Vec<u32>,
}

/// Sets to −∞ every logit the timestamp rules forbid after `generated` (the tokens decoded
/// so far in this window, prompt excluded). `eot < timestamp_begin`; ids in between must
/// already be masked.
pub fn apply_rules(logits: &mut [f32], generated: &[u32], eot: u32, timestamp_begin: u32) {
    let ts = timestamp_begin as usize;
    let forbid = |logits: &mut [f32], range: std::ops::Range<usize>| {
        let end = range.end.min(logits.len());
        if let Some(slice) = logits.get_mut(range.start.min(end)..end) {
            slice.fill(f32::NEG_INFINITY);
        }
    };
    if generated.is_empty() {
        forbid(logits, 0..ts);
        forbid(logits, ts + MAX_INITIAL_STEPS + 1..logits.len());
        return;
    }
    let is_ts = |t: &u32| *t >= timestamp_begin;
    let n = generated.len();
    let last_was_ts = generated.last().is_some_and(is_ts);
    let penultimate_was_ts = n < 2 || generated.get(n - 2).is_some_and(is_ts);
    if last_was_ts {
        if penultimate_was_ts {
            forbid(logits, ts..logits.len());
        } else {
            forbid(logits, 0..eot as usize);
        }
    }
    if let Some(&last) = generated.iter().rev().find(|t| is_ts(t)) {
        // Never backwards; and a piece that has text must end after it began.
        let floor = if last_was_ts && !penultimate_was_ts {
            last
        } else {
            last + 1
        };
        forbid(logits, ts..floor as usize);
    }
    let log_sum_exp = |values: &[f32]| -> f64 {
        let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        if max == f32::NEG_INFINITY {
            return f64::NEG_INFINITY;
        }
        let sum: f64 = values.iter().map(|v| f64::from(v - max).exp()).sum();
        f64::from(max) + sum.ln()
    };
    let (text, stamps) = logits.split_at(ts.min(logits.len()));
    let text_best = f64::from(text.iter().copied().fold(f32::NEG_INFINITY, f32::max));
    // Both sides share the softmax's normaliser, so raw logits compare like log-probabilities.
    if log_sum_exp(stamps) > text_best {
        forbid(logits, 0..ts);
    }
}

/// The timed pieces of a window's tokens; text after the last timestamp runs to `window_end`
/// seconds. Pieces without text are left out.
pub fn pieces(generated: &[u32], eot: u32, timestamp_begin: u32, window_end: f64) -> Vec<Piece> {
    let time = |t: u32| f64::from(t - timestamp_begin) * SECONDS_PER_STEP;
    let mut out = Vec::new();
    let mut start = 0.0;
    let mut text = Vec::new();
    for &token in generated {
        if token >= timestamp_begin {
            if text.is_empty() {
                start = time(token);
            } else {
                out.push(Piece {
                    start,
                    end: time(token).min(window_end),
                    tokens: std::mem::take(&mut text),
                });
                start = time(token);
            }
        } else if token < eot {
            text.push(token);
        }
    }
    if !text.is_empty() {
        out.push(Piece {
            start,
            end: window_end.max(start),
            tokens: text,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const EOT: u32 = 10;
    const EOT_ID: usize = 10;
    const TS: u32 = 20;
    const VOCAB: usize = 100;

    fn allowed(generated: &[u32], logits: &[f32]) -> Vec<usize> {
        let mut logits = logits.to_vec();
        apply_rules(&mut logits, generated, EOT, TS);
        (0..VOCAB).filter(|&i| logits[i].is_finite()).collect()
    }

    fn flat() -> Vec<f32> {
        let mut logits = vec![0.0; VOCAB];
        // Text clearly preferred over any single timestamp, and over all of them together.
        logits[3] = 10.0;
        logits
    }

    #[test]
    fn the_first_token_is_an_early_timestamp() {
        let got = allowed(&[], &flat());
        assert_eq!(got.first(), Some(&20));
        assert_eq!(got.last(), Some(&70), "at most 1 s in");
    }

    #[test]
    fn timestamps_pair_up_and_never_go_back() {
        // After an opening timestamp and text: text, end, or a later timestamp.
        let got = allowed(&[25, 3], &flat());
        assert!(got.contains(&3) && got.contains(&EOT_ID) && got.contains(&26));
        assert!(!got.contains(&25), "a piece must have a length");
        // After a closing timestamp: another timestamp (not earlier) or the end, no text.
        let got = allowed(&[25, 3, 30], &flat());
        assert!(!got.contains(&3));
        assert!(got.contains(&30) && !got.contains(&29));
        // After a pair: text only (no third timestamp).
        let got = allowed(&[25, 3, 30, 30], &flat());
        assert!(got.iter().all(|&t| t < TS as usize));
    }

    #[test]
    fn likely_timestamps_are_forced() {
        let mut logits = vec![0.0; VOCAB];
        logits[3] = 2.0;
        // 80 timestamps at 0 together outweigh one text token at 2.
        let got = allowed(&[25, 3], &logits);
        assert!(got.iter().all(|&t| t >= TS as usize), "{got:?}");
    }

    #[test]
    fn pieces_carry_their_times() {
        let tokens = [20, 1, 2, 70, 70, 3, 95];
        let got = pieces(&tokens, EOT, TS, 30.0);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].tokens, [1, 2]);
        assert!((got[0].start - 0.0).abs() < 1e-9 && (got[0].end - 1.0).abs() < 1e-9);
        assert_eq!(got[1].tokens, [3]);
        assert!((got[1].start - 1.0).abs() < 1e-9 && (got[1].end - 1.5).abs() < 1e-9);
        let open = pieces(&[20, 4, 5], EOT, TS, 4.2);
        assert_eq!(open[0].end, 4.2);
        assert!(pieces(&[20, 20], EOT, TS, 3.0).is_empty());
    }
}
