//! Predicate-argument frames, read off clause word order.
//!
//! For each verb group of a clause: the noun phrase before it is the subject, the phrases
//! after it are objects, complements and modifiers, labelled by the conventions in the
//! [`crate::srl`] docs. A clause without a subject shares one: the previous clause's after
//! "and" or a connective, the main clause's for a leading "After reading the reviews, …", the
//! antecedent for a relative clause.

mod draft;
mod links;

use std::ops::Range;

use super::chunk;
use super::clauses::{Clause, Opener};
use super::discourse::MarkerSpan;
use super::groups::{self, Group};
use super::roles;
use super::tagger::Tag;
use super::token::Doc;
use super::words;
use super::{ArgRole, RelationKind, SrlFrame};
use draft::Draft;

/// Builds the frames of every clause, at most `limit`.
pub(super) fn build(
    doc: &Doc<'_>,
    clauses: &[Clause],
    markers: &[MarkerSpan],
    limit: usize,
) -> Vec<SrlFrame> {
    let mut builder = Builder {
        doc,
        markers,
        frames: Vec::new(),
        last_subject: None,
        clause_end: 0,
    };
    for (k, clause) in clauses.iter().enumerate() {
        if builder.frames.len() >= limit {
            break;
        }
        builder.clause(clause, clauses.get(k + 1));
    }
    builder.frames.truncate(limit);
    builder.frames
}

struct Builder<'d, 't> {
    doc: &'d Doc<'t>,
    markers: &'d [MarkerSpan],
    frames: Vec<SrlFrame>,
    /// The subject of the last clause that had one, for clauses that share it.
    last_subject: Option<Range<usize>>,
    /// End of the clause being read.
    clause_end: usize,
}

impl Builder<'_, '_> {
    fn clause(&mut self, clause: &Clause, next: Option<&Clause>) {
        if clause.question {
            return;
        }
        self.clause_end = clause.range.end;
        // "the kind of person others can count on": the relative clause's verb is part of its
        // noun's phrase.
        let mut groups = groups::find(self.doc, clause.range.clone());
        groups.retain(|g| {
            !chunk::in_contact_relative(self.doc, g.start, clause.range.start, clause.range.end)
        });
        let mut controller: Option<Range<usize>> = None;
        let mut drafts = Vec::new();
        for (gi, group) in groups.iter().enumerate() {
            let following = groups.get(gi + 1);
            let region_end = following.map_or(clause.range.end, |n| n.start);
            let mut draft = self.draft(group.clone());
            let subject = if gi == 0 {
                self.first_subject(&mut draft, clause, next)
            } else {
                controller.take()
            };
            if let Some(s) = &subject {
                draft.existential = group.lemma == "be" && self.doc.norm(s.start) == "there";
            }
            self.post_verb(&mut draft, group.end, region_end);
            match following {
                Some(n) => controller = self.link(&mut draft, subject.clone(), n, clause),
                None => Self::complement(self.doc, &mut draft, next),
            }
            if gi == 0 {
                Self::relative_object(&mut draft, clause, subject.as_ref());
                Self::purpose(&mut draft, next);
            }
            if let Some(s) = subject {
                draft.add_subject(self.doc, s);
            }
            drafts.push(draft);
        }
        let doc = self.doc;
        self.frames
            .extend(drafts.into_iter().filter_map(|d| d.finish(doc)));
    }

    /// The subject of a clause's first verb group: its own, or one it shares.
    fn first_subject(
        &mut self,
        draft: &mut Draft,
        clause: &Clause,
        next: Option<&Clause>,
    ) -> Option<Range<usize>> {
        let own = self.pre_verb(draft, clause.range.start, draft.group.start);
        let subject = own.or_else(|| self.inherited(clause, next));
        if subject.is_some() {
            self.last_subject.clone_from(&subject);
        }
        subject
    }

    fn draft(&self, group: Group) -> Draft {
        let mut draft = Draft {
            copular: group.lemma == "be",
            existential: false,
            args: Vec::new(),
            group,
        };
        for &k in draft.group.negators.iter().chain(&draft.group.adverbs) {
            if let Some(role) = roles::adverb_role(self.doc, k) {
                draft.args.push((role, k..k + 1));
            }
        }
        draft
    }

    /// A missing subject: shared with the previous clause after "and" or a connective, or the
    /// antecedent of a relative clause.
    fn inherited(&self, clause: &Clause, next: Option<&Clause>) -> Option<Range<usize>> {
        match &clause.opener {
            // "After reading the reviews, I decided …": the main clause's subject.
            Opener::Connective { marker, .. } if self.opens_sentence(marker.start) => next
                .and_then(|n| self.subject_of(n))
                .or_else(|| self.last_subject.clone()),
            Opener::Coord {
                shared_subject: true,
            }
            | Opener::Connective { .. } => self.last_subject.clone(),
            Opener::Relative { antecedent } => antecedent.clone(),
            Opener::Resume { subject } => subject.clone(),
            _ => None,
        }
    }

    /// Only punctuation or "and" stands before token `k` in its sentence.
    fn opens_sentence(&self, k: usize) -> bool {
        self.doc
            .sentences
            .iter()
            .find(|s| s.contains(&k))
            .is_some_and(|s| self.doc.trim(s.start..k).is_none())
    }

    /// The subject `clause` states before its first verb group, if any.
    fn subject_of(&self, clause: &Clause) -> Option<Range<usize>> {
        let group = groups::find(self.doc, clause.range.clone())
            .into_iter()
            .next()?;
        let start = group.start;
        let mut scratch = self.draft(group);
        self.pre_verb(&mut scratch, clause.range.start, start)
    }

    /// Reads the words before the first verb group: the last noun phrase is the subject,
    /// earlier time phrases and prepositional phrases are modifiers.
    fn pre_verb(&self, draft: &mut Draft, from: usize, to: usize) -> Option<Range<usize>> {
        let doc = self.doc;
        let mut subject: Option<Range<usize>> = None;
        let mut k = from;
        while k < to {
            match doc.tag(k) {
                Tag::Prep => {
                    let end = chunk::np_end(doc, k + 1, to).unwrap_or(k + 1);
                    // "With two kids and a job, it's …": a coordinated object before a
                    // comma stays in the prepositional phrase ("behind me and the driver
                    // started" is two clauses).
                    let end = match chunk::np_end(doc, end + 1, to) {
                        Some(next)
                            if doc.tag(end) == Tag::Conj
                                && doc.tag(end + 1) != Tag::Pron
                                && doc.tag(end - 1) != Tag::Pron
                                && (next >= to || doc.norm(next) == ",") =>
                        {
                            next
                        }
                        _ => end,
                    };
                    match subject.as_mut() {
                        Some(s) if s.end == k && doc.tag(s.end - 1) == Tag::Noun => s.end = end,
                        _ => {
                            if let Some(role) = roles::pp_role(doc, k, k + 1..end, &draft.head()) {
                                draft.add(role, k..end);
                            }
                        }
                    }
                    k = end;
                }
                Tag::Adv | Tag::Neg => {
                    if let Some(role) = roles::adverb_role(doc, k) {
                        draft.add(role, k..k + 1);
                    }
                    k += 1;
                }
                Tag::Det | Tag::Noun | Tag::Pron | Tag::Num | Tag::Adj => {
                    let end = chunk::coordinated_np_end(doc, k, to).unwrap_or(k + 1);
                    if let Some(earlier) = subject.replace(k..end)
                        && chunk::is_bare_time_phrase(doc, earlier.clone())
                    {
                        draft.add(ArgRole::Tmp, earlier);
                    }
                    k = end;
                }
                _ => k += 1,
            }
        }
        subject
    }

    /// Reads the words between a verb group and the next group (or the clause end).
    fn post_verb(&self, draft: &mut Draft, from: usize, to: usize) {
        let doc = self.doc;
        let mut k = from;
        while k < to {
            if let Some(m) = self.markers.iter().find(|m| m.inline && m.range.start == k) {
                let end = chunk::np_end(doc, m.range.end, to).unwrap_or(to);
                match m.kind {
                    RelationKind::Causal => draft.add(ArgRole::Cau, k..end),
                    RelationKind::Temporal => draft.add(ArgRole::Tmp, k..end),
                    _ => {}
                }
                k = end.max(k + 1);
                continue;
            }
            k = match doc.tag(k) {
                Tag::Adv
                    if draft.copular
                        && !draft.existential
                        && !draft.has(ArgRole::Arg2)
                        && roles::adverb_role(doc, k).is_none() =>
                {
                    // "it was okay", "it's really good": the description starts here.
                    let end = chunk::complement_end(doc, k, to);
                    draft.add(ArgRole::Arg2, k..end);
                    end
                }
                Tag::Neg | Tag::Adv => {
                    // "once a week": a frequency adverb and its time phrase are one modifier.
                    let end = chunk::np_end(doc, k + 1, to)
                        .filter(|&e| {
                            words::is_time_adverb(doc.norm(k))
                                && chunk::is_bare_time_phrase(doc, k + 1..e)
                        })
                        .unwrap_or(k + 1);
                    if let Some(role) = roles::adverb_role(doc, k) {
                        draft.add(role, k..end);
                    }
                    end
                }
                Tag::Prep => self.prepositional(draft, k, to),
                // "rushing everyone out the door": a particle before a noun phrase says where
                // to.
                Tag::Part
                    if doc.tag(k + 1) == Tag::Det
                        && let Some(end) = chunk::np_end(doc, k + 1, to)
                        && !chunk::is_bare_time_phrase(doc, k + 1..end) =>
                {
                    draft.add(ArgRole::Dir, k..end);
                    end
                }
                Tag::Part if !draft.group.lemma.contains(' ') => {
                    // "figure it out": the particle after the object still belongs to the verb.
                    draft.group.lemma = format!("{} {}", draft.group.lemma, doc.norm(k));
                    k + 1
                }
                Tag::Det | Tag::Noun | Tag::Pron | Tag::Num | Tag::Adj => {
                    self.nominal(draft, k, to)
                }
                _ => k + 1,
            };
        }
    }

    /// A prepositional phrase at `k`; returns where it ends.
    fn prepositional(&self, draft: &mut Draft, k: usize, to: usize) -> usize {
        let doc = self.doc;
        if let Some(end) = chunk::np_end(doc, k + 1, to) {
            // "living on toast and takeaways": the object runs on through "and" when the
            // second noun group ends the clause or the phrase; not when it is the next
            // clause's subject ("on the table and the kids ate it", "at the gate and the
            // flight just disappears"), nor when it is a second "there is" ("nobody about on
            // the tops and no signal").
            // Nor is a verb in "-ing" a noun there ("at nine and snapping at each other").
            let second = doc.norm(end + 1);
            let joins = matches!(doc.norm(end), "and" | "or")
                && doc.tag(k + 1) != Tag::Pron
                && second != "no"
                && !(second.ends_with("ing") && second.len() > 5);
            let end = Some(end + 1)
                .filter(|_| joins)
                .and_then(|next| chunk::np_end(doc, next, to))
                .filter(|&e| e >= to || matches!(doc.tag(e), Tag::Punct | Tag::Prep | Tag::Sconj))
                .unwrap_or(end);
            if let Some(role) = roles::pp_role(doc, k, k + 1..end, &draft.head()) {
                draft.add(role, k..end);
            }
            return end;
        }
        // A preposition right before the next verb group governs a gerund ("by charging at
        // night"): the phrase runs to the clause end.
        // "it's about being a good parent": "being" and "having" are gerunds too.
        let gerund_follows = k + 1 == to
            && (doc.tag(to) == Tag::Verb
                || (doc.tag(to) == Tag::Aux && doc.norm(to).ends_with("ing")));
        if gerund_follows && let Some(role) = roles::pp_role(doc, k, to..to, &draft.head()) {
            draft.add(role, k..self.clause_end);
            return k + 1;
        }
        // "grow up feeling listened to": a preposition stranded at the end of its clause
        // belongs to the phrase before it, when that phrase is one stretch of words.
        let stranded = k + 1 >= to || doc.tag(k + 1) == Tag::Punct;
        if stranded && k > 0 && doc.tag(k - 1) != Tag::Punct {
            draft.extend_to(k, |r| r.clone().all(|t| doc.tag(t) != Tag::Punct));
        }
        k + 1
    }

    /// A noun phrase, adjective or complement at `k`; returns where it ends.
    fn nominal(&self, draft: &mut Draft, k: usize, to: usize) -> usize {
        let doc = self.doc;
        if draft.linking_description_at(doc, k) {
            draft.copular = true;
        }
        if draft.copular && !draft.existential && !draft.has(ArgRole::Arg2) {
            let end = chunk::complement_end(doc, k, to);
            draft.add(ArgRole::Arg2, k..end);
            return end;
        }
        let mut end = chunk::coordinated_np_end(doc, k, to).unwrap_or(k + 1);
        // "cook something proper", "nothing special": an adjective after an indefinite
        // pronoun belongs to it.
        if end == k + 1
            && end < to
            && matches!(
                doc.norm(k),
                "something" | "anything" | "nothing" | "everything" | "somewhere"
            )
            && doc.tag(end) == Tag::Adj
        {
            end += 1;
        }
        let adjectival = (k..end).all(|t| matches!(doc.tag(t), Tag::Adj | Tag::Adv));
        // "quality matters more": a bare degree word is not an object.
        let degree = end == k + 1 && matches!(doc.norm(k), "more" | "less" | "much" | "most");
        if degree {
            return end;
        }
        if chunk::is_bare_time_phrase(doc, k..end) {
            // "two years ago": the adverb belongs to the time phrase.
            let end = if doc.norm(end) == "ago" && end < to {
                end + 1
            } else {
                end
            };
            draft.add(ArgRole::Tmp, k..end);
            return end;
        } else if end == k + 1 && doc.norm(k) == "home" {
            draft.add(ArgRole::Loc, k..end);
        } else if adjectival {
            // "I take it black": a description of the object; "running late": not an object.
            if words::takes_small_clause(&draft.group.lemma)
                && draft.has(ArgRole::Arg1)
                && !draft.has(ArgRole::Arg2)
            {
                let end = chunk::complement_end(doc, k, to);
                draft.add(ArgRole::Arg2, k..end);
                return end;
            }
            // "I talk too fast", "we got home late": how the deed was done.
            if !draft.has(ArgRole::Arg1)
                && !draft.copular
                && !draft.has(ArgRole::Mnr)
                && !matches!(draft.group.lemma.as_str(), "do" | "have" | "make")
                && !matches!(
                    doc.norm(k),
                    "early" | "soon" | "later" | "again" | "already"
                )
            {
                draft.add(ArgRole::Mnr, k..end);
            }
        } else if !draft.has(ArgRole::Arg1) && (!draft.copular || draft.existential) {
            // "the flight was cancelled, no explanation": a passive verb has no object, and a
            // noun phrase after its comma is an aside.
            let aside = draft.group.passive && k > 0 && doc.norm(k - 1) == ",";
            if aside {
                return end;
            }
            return self.objects(draft, k, end, to);
        }
        end
    }

    /// The first object, or recipient and theme of a double-object verb.
    fn objects(&self, draft: &mut Draft, first: usize, first_end: usize, to: usize) -> usize {
        let doc = self.doc;
        let recipient = words::is_ditransitive(&draft.group.lemma)
            && first_end == first + 1
            && words::is_person_noun(doc.norm(first))
            || words::is_ditransitive(&draft.group.lemma)
                && doc.tag(first) == Tag::Det
                && words::is_person_noun(doc.norm(first_end - 1));
        if recipient
            && let Some(second_end) = chunk::coordinated_np_end(doc, first_end, to)
            && !chunk::is_bare_time_phrase(doc, first_end..second_end)
        {
            draft.add(ArgRole::Arg2, first..first_end);
            draft.add(ArgRole::Arg1, first_end..second_end);
            return second_end;
        }
        draft.add(ArgRole::Arg1, first..first_end);
        first_end
    }
}
