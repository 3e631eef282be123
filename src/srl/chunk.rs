//! Phrase chunking over tags: noun phrases, predicate complements, and clause starts.
//!
//! Every function takes a `limit` token index it never reads past, so a phrase cannot run
//! into the next clause.

use std::ops::Range;

use super::tagger::Tag;
use super::token::Doc;
use super::words;

/// End (exclusive) of the noun phrase starting at `i`: a pronoun alone, or determiners,
/// adjectives, numbers and nouns, continued through "of" ("a cup of coffee"). A determiner or
/// adjective after a noun starts a new phrase ("give my son the car", "like it black").
pub(super) fn np_end(doc: &Doc<'_>, i: usize, limit: usize) -> Option<usize> {
    if i >= limit {
        return None;
    }
    if doc.tag(i) == Tag::Pron {
        return Some(i + 1);
    }
    let mut k = i;
    let mut has_noun = false;
    while k < limit {
        match doc.tag(k) {
            Tag::Det | Tag::Adj if has_noun => break,
            Tag::Det | Tag::Adj => {}
            // "£200 a month": a number heads its phrase as much as a noun does.
            Tag::Num | Tag::Noun => has_noun = true,
            Tag::Adv if !has_noun && matches!(doc.tag(k + 1), Tag::Adj | Tag::Adv) => {}
            Tag::Prep if doc.norm(k) == "of" && k > i => match np_end(doc, k + 1, limit) {
                Some(end) => {
                    k = end;
                    break;
                }
                None => break,
            },
            _ => break,
        }
        k += 1;
    }
    (k > i && !matches!(doc.tag(k - 1), Tag::Adv)).then_some(k)
}

/// [`np_end`] continued through coordination: "oat milk, almond milk and soy".
pub(super) fn coordinated_np_end(doc: &Doc<'_>, i: usize, limit: usize) -> Option<usize> {
    let mut end = np_end(doc, i, limit)?;
    while end < limit && (doc.tag(end) == Tag::Conj || doc.norm(end) == ",") {
        match np_end(doc, end + 1, limit) {
            Some(next) => end = next,
            None => break,
        }
    }
    Some(end)
}

/// End of a predicate complement after a copula or linking verb: adjectives, adverbs and
/// noun phrases, with comparisons ("cheaper than dairy") and coordination ("cheap and tasty").
pub(super) fn complement_end(doc: &Doc<'_>, i: usize, limit: usize) -> usize {
    let mut k = i;
    while k < limit {
        let continues = match doc.tag(k) {
            Tag::Adj | Tag::Adv | Tag::Det | Tag::Noun | Tag::Num => true,
            Tag::Pron => {
                k == i
                    || matches!(
                        doc.norm(k.wrapping_sub(1)),
                        "worth" | "than" | "as" | "like"
                    )
            }
            Tag::Prep => matches!(doc.norm(k), "than" | "as" | "of") && k > i,
            Tag::Conj => matches!(doc.tag(k + 1), Tag::Adj | Tag::Adv) && k > i,
            _ => false,
        };
        if !continues {
            break;
        }
        k += 1;
    }
    if k == i { i + 1 } else { k }
}

/// The noun phrase ending just before `i` (the antecedent of a relative clause).
pub(super) fn np_before(doc: &Doc<'_>, i: usize, floor: usize) -> Option<Range<usize>> {
    let end = i;
    let mut start = i;
    if let Some(p) = i.checked_sub(1).filter(|p| *p >= floor)
        && doc.tag(p) == Tag::Pron
    {
        return Some(p..end);
    }
    while let Some(p) = start.checked_sub(1).filter(|p| *p >= floor) {
        match doc.tag(p) {
            Tag::Noun | Tag::Adj | Tag::Num => start = p,
            Tag::Det => {
                start = p;
                break;
            }
            _ => break,
        }
    }
    (start < end).then_some(start..end)
}

/// A clause (a subject, then a verb) starts at `i`.
pub(super) fn starts_clause(doc: &Doc<'_>, i: usize, limit: usize) -> bool {
    let subject_end = if doc.tag(i) == Tag::Pron {
        words::is_subject_capable(doc.norm(i)).then_some(i + 1)
    } else {
        np_end(doc, i, limit)
    };
    subject_end.is_some_and(|end| starts_verb_group(doc, end, limit))
}

/// A finite verb group (an auxiliary, or a verb not in "-ing", after adverbs) starts at `i`.
pub(super) fn starts_verb_group(doc: &Doc<'_>, i: usize, limit: usize) -> bool {
    (i..limit)
        .find(|&k| doc.tag(k) != Tag::Adv)
        .is_some_and(|k| match doc.tag(k) {
            Tag::Aux | Tag::Neg => true,
            Tag::Verb => !doc.norm(k).ends_with("ing"),
            _ => false,
        })
}

/// A noun phrase standing alone as a time ("every day", "last year", "once a week", "two
/// years", "tonight"), not merely containing a time word ("a future", "the past").
pub(super) fn is_bare_time_phrase(doc: &Doc<'_>, range: Range<usize>) -> bool {
    let first = doc.norm(range.start);
    let last = range.end.checked_sub(1).map_or("", |k| doc.norm(k));
    let deictic = range.len() == 1 && words::is_deictic_time(first);
    let counted = words::is_time_quantifier(first) || doc.tag(range.start) == Tag::Num;
    let dated = words::is_time_determiner(first) && words::is_time_noun(last);
    deictic || (counted && words::is_time_unit(last)) || dated
}

/// The phrase names a time: it contains a time noun or is a bare year.
pub(super) fn is_time_phrase(doc: &Doc<'_>, range: Range<usize>) -> bool {
    let single_number = range.len() == 1 && doc.tag(range.start) == Tag::Num;
    let year = single_number
        && doc.norm(range.start).len() == 4
        && doc.norm(range.start).starts_with(['1', '2']);
    year || range.clone().any(|k| words::is_time_noun(doc.norm(k)))
}
