//! Reading transcripts: plain text with speaker labels, `WebVTT`, SRT and this app's JSON
//! export, into [`Parsed`] speaker turns.
//!
//! Plain text: a line `Name: text` starts a turn of `Name`, optionally after a time
//! (`[00:01:23]`, `(1:23)`, `00:01:23 -`) or with the time after the name
//! (`Sarah (00:01:23): text`); a line holding only a name and a time (`Sarah  0:03`, how
//! several transcription services export) starts a turn whose text is on the lines below; a line
//! without a label continues the turn before it. A word before a colon counts as a speaker only
//! when it labels two lines or more, or names a role (`Interviewer`, `Q`, `Respondent`, `A`,
//! …), so "Note: …" inside an answer stays text. Lines before the first label (a title, a date)
//! are skipped.

use std::collections::HashMap;

use super::ImportProblem;
use super::transcript::{Format, Parsed, Role, role_of_label};

/// Decides the format from the extension and the first bytes.
pub fn detect(extension: Option<&str>, text: &str) -> Format {
    let start = text.trim_start();
    match extension {
        Some("vtt") => return Format::Vtt,
        Some("srt") => return Format::Srt,
        Some("json") => return Format::Json,
        _ => {}
    }
    if start.starts_with("WEBVTT") {
        Format::Vtt
    } else if start.starts_with('{') {
        Format::Json
    } else if looks_like_srt(start) {
        Format::Srt
    } else {
        Format::Text
    }
}

fn looks_like_srt(text: &str) -> bool {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().trim();
    let second = lines.next().unwrap_or_default();
    !first.is_empty() && first.chars().all(|c| c.is_ascii_digit()) && second.contains("-->")
}

/// Parses `text` in `format` (not `Auto`).
pub fn parse(format: Format, text: &str) -> Result<Parsed, ImportProblem> {
    match format {
        Format::Auto | Format::Text => Ok(plain(text)),
        Format::Vtt | Format::Srt => cues(format, text),
        Format::Json => json(text),
    }
}

/// `h:mm:ss(.fff)`, `mm:ss(.fff)` (comma or dot before the fraction) in seconds.
pub fn clock(s: &str) -> Option<f64> {
    let s = s.trim();
    let (whole, fraction) = match s.find(['.', ',']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let parts: Vec<&str> = whole.split(':').collect();
    // The first field may be long (minutes past the hour); the others have two digits at most.
    if !(2..=3).contains(&parts.len())
        || parts.iter().enumerate().any(|(i, p)| {
            p.is_empty() || (i > 0 && p.len() > 2) || !p.chars().all(|c| c.is_ascii_digit())
        })
    {
        return None;
    }
    let mut seconds = 0.0;
    for p in &parts {
        seconds = seconds * 60.0 + p.parse::<f64>().ok()?;
    }
    if let Some(f) = fraction {
        if f.is_empty() || f.len() > 3 || !f.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        seconds += f.parse::<f64>().ok()? / 10_f64.powi(i32::try_from(f.len()).ok()?);
    }
    Some(seconds)
}

/// A time at the start of `line` (`[00:01:23]`, `(1:23)`, `00:01:23`, then an optional `-`),
/// and the rest.
fn leading_time(line: &str) -> Option<(f64, &str)> {
    let t = line.trim_start();
    let (inner, rest) = if let Some(r) = t.strip_prefix('[') {
        let end = r.find(']')?;
        (&r[..end], &r[end + 1..])
    } else if let Some(r) = t.strip_prefix('(') {
        let end = r.find(')')?;
        (&r[..end], &r[end + 1..])
    } else {
        let end = t.find(char::is_whitespace).unwrap_or(t.len());
        (&t[..end], &t[end..])
    };
    let seconds = clock(inner)?;
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    Some((seconds, rest.trim_start()))
}

/// `Name: text` → the name (with a time after it removed) and the text.
fn label(line: &str) -> Option<(String, Option<f64>, &str)> {
    let colon = line.find(':')?;
    let (head, text) = (&line[..colon], &line[colon + 1..]);
    // A time's own colon ("Sarah 00:01:23: …", "10:30 is …") is not the label's.
    if text.starts_with(|c: char| c.is_ascii_digit())
        && head.ends_with(|c: char| c.is_ascii_digit())
    {
        let (head, rest) = line.trim_start().split_once(": ")?;
        let (name, time) = split_name_time(head)?;
        return valid_name(&name).then_some((name, time, rest));
    }
    let (name, time) = split_name_time(head)?;
    valid_name(&name).then_some((name, time, text))
}

/// "Sarah (00:01:23)" → ("Sarah", Some(83.0)); "Sarah" → ("Sarah", None).
fn split_name_time(head: &str) -> Option<(String, Option<f64>)> {
    let head = head.trim();
    let mut words: Vec<&str> = head.split_whitespace().collect();
    let time = words
        .last()
        .and_then(|w| clock(w.trim_matches(|c| c == '(' || c == ')' || c == '[' || c == ']')));
    if time.is_some() {
        words.pop();
    }
    let name = words.join(" ");
    (!name.is_empty()).then_some((name, time))
}

/// 1 to 4 words of letters, digits, `.`, `'`, `-`, `_`, starting with a letter; at most 40
/// characters.
fn valid_name(name: &str) -> bool {
    let n = name.split_whitespace().count();
    (1..=4).contains(&n)
        && name.chars().count() <= 40
        && name.starts_with(char::is_alphabetic)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '\'' | '-' | '_'))
}

/// A line that is only a speaker and a time ("Sarah  0:03", "Speaker 1 00:01:02").
fn header_line(line: &str) -> Option<(String, f64)> {
    let (name, time) = split_name_time(line)?;
    let time = time?;
    valid_name(&name).then_some((name, time))
}

enum Kind<'a> {
    Labelled {
        name: String,
        time: Option<f64>,
        text: &'a str,
    },
    Header {
        name: String,
        time: f64,
    },
    Text,
}

fn classify(raw: &str) -> Kind<'_> {
    let (time, line) = match leading_time(raw) {
        Some((t, rest)) => (Some(t), rest),
        None => (None, raw.trim()),
    };
    if let Some((name, t2, text)) = label(line) {
        return Kind::Labelled {
            name,
            time: time.or(t2),
            text,
        };
    }
    if time.is_none()
        && let Some((name, time)) = header_line(line)
    {
        return Kind::Header { name, time };
    }
    Kind::Text
}

fn plain(text: &str) -> Parsed {
    // Which labels are speakers: those used twice or more, or naming a role.
    // A file laid out with speaker lines ("Sarah  0:03" above the text) names every speaker so.
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut headers: HashMap<String, usize> = HashMap::new();
    for raw in text.lines() {
        match classify(raw) {
            Kind::Labelled { name, .. } => *counts.entry(name).or_default() += 1,
            Kind::Header { name, .. } => *headers.entry(name).or_default() += 1,
            Kind::Text => {}
        }
    }
    let header_layout = headers.values().sum::<usize>() >= 2;
    let speaker = |name: &str| {
        counts.get(name).copied().unwrap_or(0) + headers.get(name).copied().unwrap_or(0) >= 2
            || (header_layout && headers.contains_key(name))
            || role_of_label(name).is_some()
    };
    let mut parsed = Parsed {
        format: Format::Text,
        turns: Vec::new(),
        named_roles: Vec::new(),
    };
    let mut current: Option<(String, Option<f64>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        match classify(raw) {
            Kind::Labelled { name, time, text } if speaker(&name) => {
                let name = clean(&name);
                parsed.push(&name, &clean(text), (time, None), line_no);
                current = Some((name, time));
            }
            Kind::Header { name, time } if speaker(&name) => {
                current = Some((clean(&name), Some(time)));
            }
            _ => {
                let line = raw.trim();
                if line.is_empty() {
                    continue;
                }
                if let Some((name, time)) = current.as_mut() {
                    let at = time.take();
                    parsed.push(name, &clean(line), (at, None), line_no);
                }
            }
        }
    }
    close_times(&mut parsed);
    parsed
}

/// Text transcripts give start times only: a turn ends where the next begins.
fn close_times(parsed: &mut Parsed) {
    let starts: Vec<Option<f64>> = parsed.turns.iter().map(|t| t.start).collect();
    for (i, turn) in parsed.turns.iter_mut().enumerate() {
        if turn.end.is_none() {
            turn.end = starts
                .get(i + 1)
                .copied()
                .flatten()
                .filter(|_| turn.start.is_some());
        }
    }
}

/// `WebVTT` and SRT: blocks separated by blank lines, each with a timing line.
fn cues(format: Format, text: &str) -> Result<Parsed, ImportProblem> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut start_line = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push((start_line, std::mem::take(&mut current)));
            }
        } else {
            if current.is_empty() {
                start_line = i + 1;
            }
            current.push(line);
        }
    }
    if !current.is_empty() {
        blocks.push((start_line, current));
    }
    // Speaker prefixes (`Name:`) count when used twice or more, or naming a role.
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut cues = Vec::new();
    for (first, block) in blocks {
        let Some(timing) = block.iter().position(|l| l.contains("-->")) else {
            let head = block.first().map_or("", |l| l.trim());
            let skipped = head.starts_with("WEBVTT")
                || head.starts_with("NOTE")
                || head.starts_with("STYLE")
                || head.starts_with("REGION");
            if skipped || format == Format::Vtt {
                continue;
            }
            return Err(ImportProblem::at(
                first,
                "an SRT block without a `-->` timing line".to_owned(),
            ));
        };
        let line_no = first + timing;
        let times = block.get(timing).map_or("", |l| l);
        let (from, to) = times.split_once("-->").unwrap_or_default();
        let start = clock(from);
        let end = to.split_whitespace().next().and_then(clock);
        if start.is_none() || end.is_none() {
            return Err(ImportProblem::at(
                line_no,
                format!("cannot read the cue times {:?}", times.trim()),
            ));
        }
        let body = block.get(timing + 1..).unwrap_or_default().join(" ");
        let (voice, body) = voice_tag(&body);
        let body = strip_tags(&body);
        let (speaker, text) = match voice {
            Some(v) => (Some(v), body),
            None => match label(&body) {
                Some((name, _, rest)) => {
                    *counts.entry(name.clone()).or_default() += 1;
                    (Some(name), rest.to_owned())
                }
                None => (None, body),
            },
        };
        cues.push((line_no + 1, speaker, text, start, end));
    }
    let mut parsed = Parsed {
        format,
        turns: Vec::new(),
        named_roles: Vec::new(),
    };
    let mut current: Option<String> = None;
    for (line_no, speaker, text, start, end) in cues {
        let speaker =
            speaker.filter(|s| counts.get(s).is_none_or(|&n| n >= 2) || role_of_label(s).is_some());
        if let Some(s) = speaker {
            current = Some(clean(&s));
        }
        let Some(name) = current.as_ref() else {
            return Err(ImportProblem::at(
                line_no,
                "a cue with no speaker before any speaker is named (`<v Name>` or `Name:`)"
                    .to_owned(),
            ));
        };
        parsed.push(name, &clean(&decode_entities(&text)), (start, end), line_no);
    }
    Ok(parsed)
}

/// `<v Name>text` or `<v.class Name>text` → (Name, text).
fn voice_tag(body: &str) -> (Option<String>, String) {
    let t = body.trim_start();
    if let Some(rest) = t.strip_prefix("<v")
        && rest.starts_with([' ', '.'])
        && let Some(end) = rest.find('>')
    {
        let inside = &rest[..end];
        let name = inside
            .split_once(' ')
            .map_or("", |(_, n)| n)
            .trim()
            .to_owned();
        if !name.is_empty() {
            return (Some(name), rest[end + 1..].to_owned());
        }
    }
    (None, body.to_owned())
}

/// Removes `<…>` markup (`<i>`, `</v>`, `<00:00:01.000>`, `<c.yellow>`).
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = false;
    for c in text.chars() {
        match c {
            '<' => depth = true,
            '>' if depth => depth = false,
            _ if !depth => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// This app's JSON export: `utterances` with `turn`, `speaker` and `text`.
fn json(text: &str) -> Result<Parsed, ImportProblem> {
    #[derive(serde::Deserialize)]
    struct Export {
        utterances: Vec<Utterance>,
    }
    #[derive(serde::Deserialize)]
    struct Utterance {
        turn: u32,
        speaker: String,
        text: String,
    }
    let export: Export = serde_json::from_str(text)
        .map_err(|e| ImportProblem::at(e.line(), format!("not this app's JSON export: {e}")))?;
    let mut utterances: Vec<(usize, Utterance)> =
        export.utterances.into_iter().enumerate().collect();
    // Turn k holds the answer to question k − 1, then question k.
    utterances.sort_by_key(|(i, u)| (u.turn, u.speaker == "interviewer", *i));
    let mut parsed = Parsed {
        format: Format::Json,
        turns: Vec::new(),
        named_roles: vec![
            ("interviewer".to_owned(), Role::Interviewer),
            ("respondent".to_owned(), Role::Respondent),
        ],
    };
    for (i, u) in utterances {
        if u.speaker != "interviewer" && u.speaker != "respondent" {
            return Err(ImportProblem::whole(format!(
                "utterance {}: speaker {:?} is neither \"interviewer\" nor \"respondent\"",
                i + 1,
                u.speaker
            )));
        }
        parsed.push(&u.speaker, &clean(&u.text), (None, None), i + 1);
    }
    Ok(parsed)
}

/// `text` without control characters (escape sequences, bells, carriage returns) or
/// bidirectional overrides: transcripts are untrusted, and names are printed and stored.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| {
            !c.is_control() && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(parsed: &Parsed) -> Vec<(&str, &str, Option<f64>)> {
        parsed
            .turns
            .iter()
            .map(|t| (t.speaker.as_str(), t.text.as_str(), t.start))
            .collect()
    }

    #[test]
    fn clock_times() {
        assert_eq!(clock("00:01:23"), Some(83.0));
        assert_eq!(clock("1:23"), Some(83.0));
        assert_eq!(clock("01:02:03.500"), Some(3723.5));
        assert_eq!(clock("00:00:01,250"), Some(1.25));
        assert_eq!(clock("123:00"), Some(7380.0));
        for bad in ["", "12", "1:2:3:4", "a:00", "1:234", "00:01.", "00:01.1234"] {
            assert_eq!(clock(bad), None, "{bad}");
        }
    }

    #[test]
    fn plain_text_labels_times_and_continuations() {
        let text = "Study 4, May\n\n[00:00:05] Sarah: Hi. Why oat milk?\n\
                    [00:00:09] Tom: It froths.\nNote: the barista one.\n\
                    Sarah (00:00:20): Why does froth matter?\n\
                    00:00:25 - Tom: Ratio: two to one, it looks nice.\n\
                    \x1b[31mSarah\x1b[0m: Thanks?\n";
        let parsed = plain(text);
        assert_eq!(
            turns(&parsed),
            vec![
                ("Sarah", "Hi. Why oat milk?", Some(5.0)),
                ("Tom", "It froths. Note: the barista one.", Some(9.0)),
                ("Sarah", "Why does froth matter?", Some(20.0)),
                // A label used once is text; escape characters never pass through.
                (
                    "Tom",
                    "Ratio: two to one, it looks nice. [31mSarah[0m: Thanks?",
                    Some(25.0)
                ),
            ],
        );
        // A turn ends where the next begins.
        assert_eq!(parsed.turns[0].end, Some(9.0));
    }

    #[test]
    fn speaker_lines_with_times_start_turns() {
        let text = "Speaker 1  0:03\nWhat do you buy?\n\nSpeaker 2  0:07\nOat milk.\nMostly.\n\n\
                    Speaker 1  1:02:04\nWhy?\n";
        let parsed = plain(text);
        assert_eq!(
            turns(&parsed),
            vec![
                ("Speaker 1", "What do you buy?", Some(3.0)),
                ("Speaker 2", "Oat milk. Mostly.", Some(7.0)),
                ("Speaker 1", "Why?", Some(3724.0)),
            ]
        );
    }

    #[test]
    fn vtt_voices_tags_and_entities() {
        let text = "WEBVTT - interview\n\nNOTE made by hand\n\nSTYLE\n::cue { color: red }\n\n\
                    intro\n00:01.000 --> 00:04.000 align:start\n<v.loud Sarah>Why <i>oat</i> milk?</v>\n\n\
                    00:00:05.000 --> 00:00:07.000\n<v Tom><c.yellow>Froth</c> &amp; taste.\n\n\
                    00:00:07.500 --> 00:00:09.000\nand the price\n";
        let parsed = cues(Format::Vtt, text).unwrap();
        assert_eq!(
            turns(&parsed),
            vec![
                ("Sarah", "Why oat milk?", Some(1.0)),
                ("Tom", "Froth & taste. and the price", Some(5.0)),
            ]
        );
        assert_eq!(parsed.turns[1].end, Some(9.0));
        let err = cues(
            Format::Vtt,
            "WEBVTT\n\n00:01.000 --> 00:02.000\nno speaker yet\n",
        )
        .unwrap_err();
        assert_eq!(err.line, Some(4));
    }

    #[test]
    fn srt_name_prefixes() {
        let text = "1\n00:00:01,000 --> 00:00:03,000\nQ: Why?\n\n2\n00:00:03,500 --> 00:00:06,000\n\
                    A: <i>Taste</i>.\nMostly.\n\n3\n00:00:06,000 --> 00:00:08,000\nQ: And?\n";
        let parsed = cues(Format::Srt, text).unwrap();
        assert_eq!(
            turns(&parsed),
            vec![
                ("Q", "Why?", Some(1.0)),
                ("A", "Taste. Mostly.", Some(3.5)),
                ("Q", "And?", Some(6.0)),
            ]
        );
        assert_eq!(detect(None, text), Format::Srt);
        let err = cues(Format::Srt, "1\nno timing\nQ: Why?\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: an SRT block without a `-->` timing line"
        );
    }

    #[test]
    fn formats_are_detected() {
        assert_eq!(detect(Some("vtt"), ""), Format::Vtt);
        assert_eq!(detect(None, "\u{feff}WEBVTT"), Format::Text);
        assert_eq!(detect(None, "WEBVTT\n\n"), Format::Vtt);
        assert_eq!(detect(None, " {\"utterances\": []}"), Format::Json);
        assert_eq!(detect(Some("txt"), "Q: hi\nA: ho\n"), Format::Text);
    }

    #[test]
    fn json_export_orders_answers_before_the_next_question() {
        let text = r#"{"utterances": [
            {"turn": 0, "speaker": "interviewer", "text": "Q0"},
            {"turn": 1, "speaker": "interviewer", "text": "Q1"},
            {"turn": 1, "speaker": "respondent", "text": "A1"}]}"#;
        let parsed = json(text).unwrap();
        assert_eq!(
            turns(&parsed),
            vec![
                ("interviewer", "Q0", None),
                ("respondent", "A1", None),
                ("interviewer", "Q1", None)
            ]
        );
        let err = json("{\"utterances\": [{\"turn\": 0}]}").unwrap_err();
        assert!(
            err.message.starts_with("not this app's JSON export"),
            "{err}"
        );
    }
}
