//! Phrase chunking over tags: noun phrases, predicate complements, and clause starts.
//!
//! Every function takes a `limit` token index it never reads past, so a phrase cannot run
//! into the next clause.

use std::ops::Range;

use super::lexicon;
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
    if doc.tag(i) == Tag::Pron && doc.norm(i) == "each" && doc.norm(i + 1) == "other" {
        return Some(i + 2);
    }
    if doc.tag(i) == Tag::Pron {
        // "someone [people can trust]", "something [other than nappies]".
        let end = if is_indefinite(doc.norm(i)) {
            contact_relative_end(doc, i + 1, limit).or_else(|| {
                (doc.norm(i + 1) == "other" && doc.norm(i + 2) == "than")
                    .then(|| np_end(doc, i + 3, limit))
                    .flatten()
            })
        } else {
            None
        };
        return Some(end.unwrap_or(i + 1));
    }
    let mut k = i;
    let mut has_noun = false;
    while k < limit {
        match doc.tag(k) {
            // "my morning flat white": a fixed compound after a modifying noun continues
            // the group.
            Tag::Adj if has_noun && words::is_fixed_compound(doc.norm(k), doc.norm(k + 1)) => {}
            // "two big boxes", "one less thing": a count before the description.
            Tag::Adj
                if has_noun
                    && doc.tag(k - 1) == Tag::Num
                    && matches!(doc.tag(k + 1), Tag::Noun | Tag::Adj) => {}
            Tag::Det | Tag::Adj if has_noun => break,
            // "calm | the kids": no determiner follows an adjective inside one phrase.
            Tag::Det if k > i && after_description(doc, k) => break,
            Tag::Det | Tag::Adj => {}
            // "the kind of person [others can count on]".
            Tag::Noun if has_noun && let Some(end) = contact_relative_end(doc, k, limit) => {
                k = end;
                break;
            }
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
    if k == i || matches!(doc.tag(k - 1), Tag::Adv) {
        return None;
    }
    Some(if has_noun && !is_time_phrase(doc, i..k) {
        contact_relative_end(doc, k, limit).unwrap_or(k)
    } else {
        k
    })
}

/// End of a relative clause without "that" at `i`, after its noun: a subject, a verb group and
/// nothing where the verb's object would be ("the kind of person [others can count on]",
/// "someone [people can trust]", "the car [my dad bought] broke down"). The clause ends at the
/// clause's end, a connective, or a finite verb of the main clause.
pub(super) fn contact_relative_end(doc: &Doc<'_>, i: usize, limit: usize) -> Option<usize> {
    contact_relative(doc, i, limit).map(|(_, end)| end)
}

/// [`contact_relative_end`], with where the relative clause's subject ends.
fn contact_relative(doc: &Doc<'_>, i: usize, limit: usize) -> Option<(usize, usize)> {
    let norm = doc.norm(i);
    let subject_end = match doc.tag(i) {
        Tag::Pron if words::is_relative_subject(norm) => i + 1,
        Tag::Noun | Tag::Det => {
            let mut k = i;
            while k < limit && k < i + 3 && matches!(doc.tag(k), Tag::Det | Tag::Noun) {
                k += 1;
            }
            (doc.tag(k - 1) == Tag::Noun).then_some(k)?
        }
        _ => return None,
    };
    let mut k = subject_end;
    while k < limit && matches!(doc.tag(k), Tag::Aux | Tag::Neg | Tag::Adv) {
        k += 1;
    }
    if let Some(end) = copular_relative_end(doc, subject_end, k, limit) {
        return Some((subject_end, end));
    }
    let verb = doc.norm(k);
    let filler = k == subject_end
        && doc.tag(i) == Tag::Pron
        && matches!(
            verb,
            "know" | "mean" | "see" | "guess" | "think" | "suppose"
        );
    if k >= limit || doc.tag(k) != Tag::Verb || verb.ends_with("ing") || filler {
        return None;
    }
    // "the kind of manager [I wish [I'd had]]": the gap is in the clause the verb takes.
    if words::takes_clause(&lexicon::lemma(verb))
        && doc.tag(k + 1) == Tag::Pron
        && words::is_relative_subject(doc.norm(k + 1))
        && let Some((_, end)) = contact_relative(doc, k + 1, limit)
    {
        return Some((subject_end, end));
    }
    // "the kind of mum [I want to be]", "the person [I used to be]": the gap follows "to be".
    if doc.norm(k + 1) == "to" && lexicon::is_be(doc.norm(k + 2)) {
        let end = k + 3;
        let closes = end >= limit || matches!(doc.tag(end), Tag::Punct | Tag::Conj | Tag::Sconj);
        return closes.then_some((subject_end, end));
    }
    k += 1;
    // A stranded preposition or particle: "count on", "put up with".
    while k < limit && matches!(doc.tag(k), Tag::Prep | Tag::Part) && k < subject_end + 8 {
        k += 1;
    }
    let ends = k >= limit
        || matches!(doc.tag(k), Tag::Punct | Tag::Conj | Tag::Sconj | Tag::Aux)
        || (doc.tag(k) == Tag::Verb && !doc.norm(k).ends_with("ing"));
    ends.then_some((subject_end, k))
}

/// "the kind of parent [my mum was to me]", "the manager [I never had]": a relative clause
/// without "that" whose verb is a form of "be" or "have" after its subject (the auxiliaries
/// `subject_end..k`), whose description or object is the noun it follows, with at most a "to
/// me" or "for us" after it before the clause ends.
fn copular_relative_end(
    doc: &Doc<'_>,
    subject_end: usize,
    k: usize,
    limit: usize,
) -> Option<usize> {
    let verb = k.checked_sub(1).filter(|&b| b >= subject_end)?;
    let norm = doc.norm(verb);
    if !(lexicon::is_be(norm) || lexicon::is_have(norm)) || doc.tag(verb) != Tag::Aux {
        return None;
    }
    let hearer = matches!(doc.norm(k), "to" | "for") && doc.tag(k + 1) == Tag::Pron;
    let end = if hearer { k + 2 } else { k };
    let ends = end >= limit || matches!(doc.tag(end), Tag::Punct | Tag::Conj | Tag::Sconj);
    ends.then_some(end)
}

/// [`np_end`] continued through coordination: "oat milk, almond milk and soy".
pub(super) fn coordinated_np_end(doc: &Doc<'_>, i: usize, limit: usize) -> Option<usize> {
    let mut end = np_end(doc, i, limit)?;
    while end < limit && (doc.tag(end) == Tag::Conj || doc.norm(end) == ",") {
        // "With two kids and a job, it's …": a pronoun after a comma starts the clause.
        if doc.norm(end) == "," && doc.tag(end + 1) == Tag::Pron {
            break;
        }
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
            // "the kind of parent [my mum was to me]".
            Tag::Noun | Tag::Det
                if k > i
                    && doc.tag(k - 1) == Tag::Noun
                    && let Some(end) = contact_relative_end(doc, k, limit) =>
            {
                k = end;
                break;
            }
            // "When I'm calm | the kids talk to me": a determiner after an adjective opens
            // the next clause's subject.
            Tag::Det if k > i && after_description(doc, k) => false,
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
    if k == i {
        i + 1
    } else if k == i + 1 && matches!(doc.norm(i), "someone" | "somebody") {
        // "I want to be someone [people feel they can come to]".
        contact_relative_end(doc, k, limit).unwrap_or(k)
    } else if doc.tag(k - 1) == Tag::Noun && !is_time_phrase(doc, i..k) {
        contact_relative_end(doc, k, limit).unwrap_or(k)
    } else {
        k
    }
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
    // "the only bit of the day [that feels like mine]": a part of something is what the
    // clause speaks of.
    if let Some(of) = start.checked_sub(1).filter(|of| *of > floor)
        && doc.norm(of) == "of"
        && let Some(head) = of.checked_sub(1).filter(|h| *h >= floor)
        && doc.tag(head) == Tag::Noun
        && words::is_partitive(doc.norm(head))
    {
        let mut whole = head;
        while let Some(p) = whole.checked_sub(1).filter(|p| *p >= floor) {
            match doc.tag(p) {
                Tag::Adj | Tag::Num => whole = p,
                Tag::Adv if doc.norm(p) == "only" => whole = p,
                Tag::Det => {
                    whole = p;
                    break;
                }
                _ => break,
            }
        }
        return Some(whole..end);
    }
    (start < end).then_some(start..end)
}

/// Whether the verb group starting at `group_start` is the verb of a relative clause without
/// "that" ([`contact_relative_end`]) whose subject follows a noun or an indefinite pronoun
/// after `floor`: the clause then belongs to that noun's phrase, not to a frame of its own.
pub(super) fn in_contact_relative(
    doc: &Doc<'_>,
    group_start: usize,
    floor: usize,
    limit: usize,
) -> bool {
    (1..=3).any(|len| {
        group_start.checked_sub(len).is_some_and(|subject| {
            contact_subject(doc, subject, floor, limit)
                .is_some_and(|(subject_end, _)| subject_end == group_start)
        })
    }) || nested_in_contact_relative(doc, group_start, floor, limit)
}

/// Whether word `at` lies inside the clause a relative clause without "that" takes, after its
/// own verb ("the kind of manager [I wish [I'd had]]"): what follows belongs to the noun's
/// phrase too.
fn nested_in_contact_relative(doc: &Doc<'_>, at: usize, floor: usize, limit: usize) -> bool {
    (at.saturating_sub(MAX_RELATIVE_REACH).max(floor)..at).any(|subject| {
        contact_subject(doc, subject, floor, limit)
            .is_some_and(|(subject_end, end)| subject_end < at && at < end)
    })
}

/// Most words from a relative clause's subject to a verb group inside it.
const MAX_RELATIVE_REACH: usize = 8;

/// Whether a relative clause without "that" opens at `subject` ("the kind of teacher [they
/// can rely on]"): a subject pronoun there does not start a clause of its own.
pub(super) fn in_contact_relative_at(
    doc: &Doc<'_>,
    subject: usize,
    floor: usize,
    limit: usize,
) -> bool {
    contact_subject(doc, subject, floor, limit).is_some()
        || nested_in_contact_relative(doc, subject, floor, limit)
}

/// Where the subject at `subject` of a relative clause without "that" ends, and where the
/// clause ends, when one opens there after a noun or an indefinite pronoun that follows a verb
/// of the clause from `floor`.
fn contact_subject(
    doc: &Doc<'_>,
    subject: usize,
    floor: usize,
    limit: usize,
) -> Option<(usize, usize)> {
    let head = subject.checked_sub(1).filter(|h| *h >= floor)?;
    let norm = doc.norm(head);
    let head_fits = match doc.tag(head) {
        Tag::Noun => !words::is_time_noun(norm),
        Tag::Pron => is_indefinite(norm),
        _ => false,
    };
    // The noun follows the clause's own verb ("I want to be the kind of person …", "Being
    // someone …"): a noun opening the clause is its subject ("The oat milk froths").
    let verb_before = (floor..head).any(|k| matches!(doc.tag(k), Tag::Verb | Tag::Aux));
    if !(head_fits && verb_before) {
        return None;
    }
    contact_relative(doc, subject, limit)
}

/// "someone", "something", "anyone", …: pronouns a relative clause may describe.
pub(super) fn is_indefinite(norm: &str) -> bool {
    matches!(
        norm,
        "someone"
            | "somebody"
            | "something"
            | "anyone"
            | "anybody"
            | "anything"
            | "everyone"
            | "everybody"
            | "everything"
    )
}

/// The determiner at `k` opens a noun group right after an adjective that ends a description
/// ("calm | the kids", "froths properly | my morning"): an article, possessive or demonstrative (a quantifier may continue it,
/// "early every day"), after an adjective that is no participle ("gets paid the wrong
/// amount").
pub(super) fn after_description(doc: &Doc<'_>, k: usize) -> bool {
    let Some(p) = k.checked_sub(1) else {
        return false;
    };
    // "froths properly | my morning flat white": a manner adverb closes a clause the same way.
    // "wasn't really | a call" is no clause break: the adverb must follow a main verb.
    let manner = doc.tag(p) == Tag::Adv
        && doc.norm(p).ends_with("ly")
        && p.checked_sub(1).is_some_and(|v| doc.tag(v) == Tag::Verb);
    (doc.tag(p) == Tag::Adj || manner)
        && words::opens_noun_group(doc.norm(k))
        && !lexicon::verb(doc.norm(p)).is_some_and(|r| r.form.participial())
}

/// "When you drop a steak in | the pan doesn't go cold": a noun group right after the
/// subordinate clause's object or particle, followed by an auxiliary of its own, is the main
/// clause's subject; the respondent left out the comma. Only an auxiliary or a denial counts
/// as that verb, since a plain verb after a noun group is too often a noun misread.
pub(super) fn subject_after_object(doc: &Doc<'_>, k: usize, limit: usize) -> bool {
    let Some(p) = k.checked_sub(1) else {
        return false;
    };
    // "When I plugged in | the screen just said payment error": after a particle the tagger
    // has already found a past verb after the noun group.
    let particle = doc.tag(p) == Tag::Part;
    (matches!(doc.tag(p), Tag::Prep | Tag::Noun) || particle)
        && doc.tag(k) == Tag::Det
        && np_end(doc, k, limit).is_some_and(|end| {
            (end..limit)
                .find(|&v| doc.tag(v) != Tag::Adv)
                .is_some_and(|v| {
                    matches!(doc.tag(v), Tag::Aux | Tag::Neg)
                        || (particle && doc.tag(v) == Tag::Verb && !doc.norm(v).ends_with("ing"))
                })
        })
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
