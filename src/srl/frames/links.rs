//! How a verb group connects to what follows it: infinitive and gerund complements,
//! purposes, complement clauses, and the gap of a relative clause.

use std::ops::Range;

use super::Builder;
use super::draft::Draft;
use crate::srl::chunk;
use crate::srl::clauses::{Clause, Opener};
use crate::srl::groups::{Form, Group};
use crate::srl::roles;
use crate::srl::tagger::Tag;
use crate::srl::token::Doc;
use crate::srl::words;
use crate::srl::{ArgRole, RelationKind};

impl Builder<'_, '_> {
    /// "the charger that I use": a relative clause with its own subject and no object has
    /// the antecedent as its object.
    pub(super) fn relative_object(
        draft: &mut Draft,
        clause: &Clause,
        subject: Option<&Range<usize>>,
    ) {
        if let Opener::Relative {
            antecedent: Some(antecedent),
        } = &clause.opener
            && subject.is_some_and(|s| s != antecedent)
            && !draft.copular
            && !draft.has(ArgRole::Arg1)
        {
            draft.add(ArgRole::Arg1, antecedent.clone());
        }
    }

    /// Connects a verb group to the group after it in the same clause; returns the next
    /// group's subject.
    pub(super) fn link(
        &self,
        draft: &mut Draft,
        subject: Option<Range<usize>>,
        next: &Group,
        clause: &Clause,
    ) -> Option<Range<usize>> {
        let end = clause.range.end;
        let between = draft.group.end..next.start;
        match next.form {
            Form::Infinitive | Form::Gerund if draft.copular => {
                // "it's easy to use": the infinitive completes the description.
                if let Some((_, range)) = draft.args.iter_mut().find(|(r, _)| *r == ArgRole::Arg2) {
                    range.end = end;
                }
                None
            }
            Form::Infinitive => self.infinitive(draft, subject, between, end),
            Form::Gerund => {
                let nothing_between = self.doc.trim(between.clone()).is_none();
                if nothing_between && words::is_catenative(&draft.group.lemma) {
                    draft.add(ArgRole::Arg1, next.start..end);
                }
                // "that money goes into travelling": what the money goes on, not something
                // the money does. A thing acts through a gerund only after "by" ("it saves
                // power by dimming").
                let domain = between.end > between.start
                    && matches!(
                        self.doc.norm(between.end - 1),
                        "into" | "on" | "for" | "towards" | "toward"
                    );
                let thing = subject.as_ref().is_some_and(|s| !self.is_agent(s));
                if domain && thing { None } else { subject }
            }
            // "Running is what keeps me sane": the subject is what the clause after "what"
            // says of it.
            Form::Finite if draft.copular && self.is_free_relative(&between) => {
                draft.args.retain(|(r, _)| *r != ArgRole::Arg2);
                subject
            }
            Form::Finite => self.finite_after(draft, between, clause, next.start),
        }
    }

    /// A subject that can act on its own: a personal pronoun or a noun phrase headed by a
    /// person ("my sister", "the guy").
    fn is_agent(&self, subject: &Range<usize>) -> bool {
        let doc = self.doc;
        let personal = subject.len() == 1
            && matches!(
                doc.norm(subject.start),
                "i" | "we" | "you" | "he" | "she" | "they"
            );
        personal || (subject.start..subject.end).any(|k| words::is_person_noun(doc.norm(k)))
    }

    /// Only "what" stands between a copula and the next verb group.
    fn is_free_relative(&self, between: &Range<usize>) -> bool {
        self.doc
            .trim(between.clone())
            .is_some_and(|r| r.len() == 1 && self.doc.norm(r.start) == "what")
    }

    /// A to-infinitive after the verb: its `ARG1` ("want to save"), its object's action
    /// ("want my kids to eat", "told me to cut down"), or its purpose ("use it to make lattes").
    fn infinitive(
        &self,
        draft: &mut Draft,
        subject: Option<Range<usize>>,
        between: Range<usize>,
        end: usize,
    ) -> Option<Range<usize>> {
        let doc = self.doc;
        let infinitive = between.end..end;
        let lemma = draft.group.lemma.clone();
        let nothing_between = doc.trim(between.clone()).is_none();
        let passive_control = draft.group.passive
            && (words::is_object_control(&lemma) || words::is_directive(&lemma));
        if nothing_between && (words::is_catenative(&lemma) || passive_control) {
            draft.add(ArgRole::Arg1, infinitive);
            return subject;
        }
        // "the guy just said to try another site": no controller ("she asked to see the
        // manager" is hers to do).
        if nothing_between && words::is_message_without_hearer(&lemma) {
            draft.add(ArgRole::Arg1, infinitive);
            return None;
        }
        let object = (chunk::np_end(doc, between.start, between.end) == Some(between.end))
            .then_some(between);
        match object {
            Some(object) if words::is_directive(&lemma) => {
                // "my doctor told me to cut down": hearer ARG2, message ARG1.
                draft.args.retain(|(r, _)| *r != ArgRole::Arg1);
                draft.add(ArgRole::Arg2, object.clone());
                draft.add(ArgRole::Arg1, infinitive);
                Some(object)
            }
            Some(object) if words::is_object_control(&lemma) => {
                draft.args.retain(|(r, _)| *r != ArgRole::Arg1);
                draft.add(ArgRole::Arg1, object.start..end);
                Some(object)
            }
            _ => {
                draft.add(ArgRole::Prp, infinitive);
                subject
            }
        }
    }

    /// A finite group after the verb: a bare infinitive after "make"/"let"/"help" and their
    /// object, or the verb a leading gerund is the subject of ("Charging at work is free").
    fn finite_after(
        &self,
        draft: &mut Draft,
        between: Range<usize>,
        clause: &Clause,
        next_start: usize,
    ) -> Option<Range<usize>> {
        let doc = self.doc;
        let object_ends_here = chunk::np_end(doc, between.start, next_start) == Some(next_start);
        if words::is_causative(&draft.group.lemma) && object_ends_here {
            // "it made me feel bloated": the object and its bare infinitive are the ARG1.
            draft.args.retain(|(r, _)| *r != ArgRole::Arg1);
            draft.add(ArgRole::Arg1, between.start..clause.range.end);
            return Some(between);
        }
        let gerund_subject = draft.group.form == Form::Gerund
            && doc.trim(clause.range.start..draft.group.start).is_none();
        gerund_subject.then_some(clause.range.start..next_start)
    }

    /// "I think [it's cheaper]", "nobody showed me [how it works]": a verb without an object
    /// takes the complement clause after it as `ARG1`; a hearer already in `ARG1` moves to
    /// `ARG2`.
    pub(super) fn complement(doc: &Doc<'_>, draft: &mut Draft, next: Option<&Clause>) {
        let Some(next) = next.filter(|n| n.opener == Opener::Complement) else {
            return;
        };
        if draft.copular {
            return;
        }
        // "impressed by how quickly she answered": the clause is the preposition's object.
        if let Some(prep) = next.range.start.checked_sub(1)
            && doc.tag(prep) == Tag::Prep
        {
            if let Some(role) = roles::pp_role(doc, prep, next.range.clone(), &draft.head()) {
                draft.add(role, prep..next.range.end);
            }
            return;
        }
        let hearer = draft.args.iter().position(|(role, range)| {
            *role == ArgRole::Arg1
                && range.len() == 1
                && words::is_person_noun(doc.norm(range.start))
        });
        if let Some(pos) = hearer
            && (words::is_transfer(&draft.group.lemma) || words::is_directive(&draft.group.lemma))
            && let Some((role, _)) = draft.args.get_mut(pos)
        {
            *role = ArgRole::Arg2;
        }
        if !draft.has(ArgRole::Arg1) {
            draft.add(ArgRole::Arg1, next.range.clone());
        }
    }

    /// "so that" / "in order to" after the clause: a purpose of its main verb.
    pub(super) fn purpose(draft: &mut Draft, next: Option<&Clause>) {
        if let Some(next) = next
            && let Opener::Connective {
                marker,
                kind: RelationKind::Purpose,
            } = &next.opener
        {
            draft.add(ArgRole::Prp, marker.start..next.range.end);
        }
    }
}
