//! Role labels for modifiers: adverbs and prepositional phrases.
//!
//! A prepositional phrase's role comes from its preposition, its head words (a time word makes
//! "in the morning" temporal) and the verb (a transfer verb makes "to my sister" a recipient, a
//! motion verb makes "to oat milk" a direction).

use std::ops::Range;

use super::ArgRole;
use super::chunk;
use super::tagger::Tag;
use super::token::Doc;
use super::words;

/// What the role rules need to know about the frame a phrase attaches to.
pub(super) struct Head<'a> {
    pub lemma: &'a str,
    pub passive: bool,
    pub has_arg1: bool,
    pub has_arg2: bool,
}

/// The role of the adverb (or negator) at `k`, if it is worth reporting.
pub(super) fn adverb_role(doc: &Doc<'_>, k: usize) -> Option<ArgRole> {
    let w = doc.norm(k);
    if doc.tag(k) == Tag::Neg {
        Some(ArgRole::Neg)
    } else if words::is_time_adverb(w) {
        Some(ArgRole::Tmp)
    } else if words::is_place_adverb(w) {
        Some(ArgRole::Loc)
    } else if (w.ends_with("ly") && !words::is_adverb(w))
        || matches!(w, "well" | "fast" | "together" | "alone")
        || (matches!(w, "right" | "wrong") && doc.norm(k + 1) == "by")
    {
        Some(ArgRole::Mnr)
    } else {
        None
    }
}

/// The role of the phrase "`prep` + `np`" (`np` may be empty for a stranded preposition
/// before a gerund, "by charging at night").
pub(super) fn pp_role(
    doc: &Doc<'_>,
    prep: usize,
    np: Range<usize>,
    head: &Head<'_>,
) -> Option<ArgRole> {
    let p = doc.norm(prep);
    let time = !np.is_empty() && chunk::is_time_phrase(doc, np.clone());
    let last = np.end.checked_sub(1).map_or("", |k| doc.norm(k));
    let person = words::is_person_noun(last);
    if words::is_abstract_head(last) {
        // "in fact", "at least", "in my opinion": fixed phrases, not places or times.
        return None;
    }
    match p {
        "during" | "since" | "until" | "till" | "throughout" | "before" | "after" => {
            Some(ArgRole::Tmp)
        }
        "in" | "on" | "at" | "by" | "within" | "over" | "around" | "for" if time => {
            Some(ArgRole::Tmp)
        }
        // "about ten minutes" is a time; "going on about her day" is what she talks about.
        "about" if !np.is_empty() && chunk::is_bare_time_phrase(doc, np.clone()) => {
            Some(ArgRole::Tmp)
        }
        "by" if head.passive => Some(ArgRole::Arg0),
        // "cut down on lactose", "run out of milk": a phrasal verb's object.
        "on" | "with" | "of" | "for" | "about" if head.lemma.contains(' ') && !head.has_arg1 => {
            Some(ArgRole::Arg1)
        }
        "for" if person && !head.has_arg2 => Some(ArgRole::Arg2),
        // "paid £5 for a latte": the goods in an exchange, which no label here fits.
        "for" if words::is_exchange(head.lemma) => None,
        "for" => Some(ArgRole::Prp),
        "to" | "into" | "toward" | "towards" | "from" if words::is_motion(head.lemma) => {
            Some(ArgRole::Dir)
        }
        "to" if words::is_transfer(head.lemma) || person => Some(ArgRole::Arg2),
        "to" if !head.has_arg1 && !np.is_empty() => Some(ArgRole::Arg1),
        "like" if words::is_linking(head.lemma) && !head.has_arg2 => Some(ArgRole::Arg2),
        "about" | "of" if !head.has_arg1 => Some(ArgRole::Arg1),
        "on" if matches!(head.lemma, "rely" | "depend" | "focus" | "count") && !head.has_arg1 => {
            Some(ArgRole::Arg1)
        }
        "by" | "via" | "through" | "with" | "without" | "like" => Some(ArgRole::Mnr),
        "at" | "in" | "on" | "near" | "inside" | "outside" | "behind" | "under" | "across"
        | "around" | "from" | "between" | "beside" | "into" | "onto" | "within" | "along"
        | "above" | "below" | "upon" | "over" | "against" | "among" => Some(ArgRole::Loc),
        _ => None,
    }
}
