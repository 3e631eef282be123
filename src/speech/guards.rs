//! The checks that keep a decoder's failure modes out of a transcript: text that compresses
//! too well (a line repeated), and a token run that repeats while decoding.
//!
//! Whisper measures repetition as gzip's compression ratio (text bytes / gzip bytes, failing
//! above 2.4). Without a gzip dependency we estimate the same quantity with a greedy LZ77 parse
//! over a 4 KiB window: each literal byte costs one byte and each back-reference (3 bytes or
//! longer) three, roughly what deflate's codes cost, without its ~20-byte container. Plain
//! sentences score 1.0–1.6; a line repeated three times scores well above 2.4.

/// Above this, text is too repetitive to be speech (Whisper's own threshold).
pub const COMPRESSION_RATIO_LIMIT: f64 = 2.4;

/// Back-references look this far back (deflate's window is 32 KiB; transcripts of a 30-second
/// window are far shorter).
const WINDOW: usize = 4096;
/// Shortest back-reference worth taking (as in deflate).
const MIN_MATCH: usize = 3;
/// Estimated bytes per back-reference (a length and a distance code).
const MATCH_COST: usize = 3;

/// Text bytes per estimated compressed byte; 1.0 for empty text.
pub fn compression_ratio(text: &str) -> f64 {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return 1.0;
    }
    let mut cost = 0;
    let mut at = 0;
    while at < bytes.len() {
        let best = longest_match(bytes, at);
        if best >= MIN_MATCH {
            cost += MATCH_COST;
            at += best;
        } else {
            cost += 1;
            at += 1;
        }
    }
    bytes.len() as f64 / cost as f64
}

/// Length of the longest earlier occurrence (within [`WINDOW`]) of the bytes starting at `at`;
/// matches may overlap `at`, as in LZ77.
fn longest_match(bytes: &[u8], at: usize) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    (at.saturating_sub(WINDOW)..at)
        .map(|start| {
            let earlier = bytes.get(start..).unwrap_or_default();
            earlier.iter().zip(rest).take_while(|(a, b)| a == b).count()
        })
        .max()
        .unwrap_or(0)
}

/// Where a repeating tail of `tokens` starts its second copy, if the tail is one block repeated:
/// at least 4 copies spanning 16 tokens or more, or 3 copies of a block of 5 tokens or more.
///
/// A real "no, no, no" is 3 copies of 2 tokens and passes; a decoder stuck in a loop produces
/// far longer runs. The caller keeps `tokens[..index]`: the text up to and including the first
/// copy.
pub fn repeated_tail(tokens: &[u32]) -> Option<usize> {
    let n = tokens.len();
    for block in 1..=n / 3 {
        let copies = (1..=n / block)
            .take_while(|&c| {
                c * block <= n
                    && tokens.get(n - c * block..n - (c - 1) * block) == tokens.get(n - block..n)
            })
            .count();
        let looping = (copies >= 4 && copies * block >= 16) || (copies >= 3 && block >= 5);
        if looping {
            return Some(n - (copies - 1) * block);
        }
    }
    None
}

/// Tokens a repeated phrase must span to count as the decoder repeating itself rather than the
/// speaker.
const DOUBLED_PHRASE: usize = 8;

/// Whether `tokens` end in a phrase of [`DOUBLED_PHRASE`] tokens or more said twice in a row.
/// Beam search ranks hypotheses by log-probability per token, and a second copy of a sentence
/// is so predictable that it raises the average: such a hypothesis is dropped, not extended.
pub fn doubled_tail(tokens: &[u32]) -> bool {
    let n = tokens.len();
    (DOUBLED_PHRASE..=n / 2)
        .any(|block| tokens.get(n - 2 * block..n - block) == tokens.get(n - block..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_said_twice_is_a_doubled_tail() {
        let sentence: Vec<u32> = (100..110).collect();
        let twice = [sentence.clone(), sentence.clone()].concat();
        assert!(doubled_tail(&twice));
        assert!(doubled_tail(&[vec![7, 8], twice].concat()));
        // A short phrase repeated ("no, no") and a sentence once are speech.
        assert!(!doubled_tail(&[5, 6, 5, 6]));
        assert!(!doubled_tail(&sentence));
        assert!(!doubled_tail(&[]));
    }

    #[test]
    fn plain_speech_passes_and_repeated_lines_fail() {
        for text in [
            "I buy oat milk because it froths well in my morning coffee.",
            "Honestly, the price matters less than the taste, and my kids like it too.",
            "No, no, no, that's not it.",
            "",
        ] {
            let ratio = compression_ratio(text);
            assert!(ratio < COMPRESSION_RATIO_LIMIT, "{text}: {ratio}");
        }
        let looped = "I'm not sure what to say. ".repeat(4);
        assert!(compression_ratio(&looped) > COMPRESSION_RATIO_LIMIT);
        assert!(compression_ratio(&"Thank you. ".repeat(4)) > COMPRESSION_RATIO_LIMIT);
        assert!(compression_ratio(&"a".repeat(50)) > 10.0);
    }

    #[test]
    fn a_looping_tail_is_found_and_a_short_real_repeat_is_not() {
        assert_eq!(repeated_tail(&[1, 2, 1, 2, 1, 2]), None, "no, no, no");
        assert_eq!(repeated_tail(&[9; 12]), None, "12 tokens is short of 16");
        assert_eq!(repeated_tail(&[9; 16]), Some(1));
        let phrase = [5, 6, 7, 8, 9];
        let mut tokens = vec![1, 2];
        for _ in 0..3 {
            tokens.extend(phrase);
        }
        assert_eq!(
            repeated_tail(&tokens),
            Some(7),
            "keeps 1, 2 and the first copy"
        );
        assert_eq!(repeated_tail(&[]), None);
    }
}
