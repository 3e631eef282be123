//! A frame under construction and the role conventions for its subject.

use std::ops::Range;

use crate::srl::groups::Group;
use crate::srl::roles::Head;
use crate::srl::tagger::Tag;
use crate::srl::token::Doc;
use crate::srl::words;
use crate::srl::{ArgRole, Argument, SrlFrame};

/// A frame under construction; arguments are token ranges until [`Draft::finish`].
pub(super) struct Draft {
    pub(super) group: Group,
    pub(super) args: Vec<(ArgRole, Range<usize>)>,
    /// Copula, or a linking verb followed by an adjective: the subject is described.
    pub(super) copular: bool,
    pub(super) existential: bool,
}

impl Draft {
    pub(super) fn has(&self, role: ArgRole) -> bool {
        self.args.iter().any(|(r, _)| *r == role)
    }

    pub(super) fn add(&mut self, role: ArgRole, range: Range<usize>) {
        if !range.is_empty() && !self.args.iter().any(|(_, r)| *r == range) {
            self.args.push((role, range));
        }
    }

    /// Extends the argument that ends at `at`, where `whole` accepts it, by the one token there
    /// ("feeling listened | to"); returns whether one did.
    pub(super) fn extend_to(&mut self, at: usize, whole: impl Fn(&Range<usize>) -> bool) -> bool {
        match self.args.iter_mut().find(|(_, r)| r.end == at && whole(r)) {
            Some((_, r)) => {
                r.end = at + 1;
                true
            }
            None => false,
        }
    }

    pub(super) fn head(&self) -> Head<'_> {
        Head {
            lemma: &self.group.lemma,
            passive: self.group.passive,
            has_arg1: self.has(ArgRole::Arg1),
            has_arg2: self.has(ArgRole::Arg2),
        }
    }

    /// A linking verb ("feel", "taste", "get") describes its subject when an adjective
    /// follows ("it tastes better", "I felt a bit lost") rather than an object ("I feel the
    /// difference").
    pub(super) fn linking_description_at(&self, doc: &Doc<'_>, k: usize) -> bool {
        let describes = match doc.tag(k) {
            Tag::Adj => true,
            Tag::Det => matches!(doc.norm(k + 1), "bit" | "little") && doc.tag(k + 2) == Tag::Adj,
            // "it became a habit": a few linking verbs also take a noun.
            Tag::Noun => matches!(self.group.lemma.as_str(), "become" | "remain" | "stay"),
            _ => false,
        };
        describes
            && words::is_linking(&self.group.lemma)
            && !self.copular
            && !self.has(ArgRole::Arg1)
    }

    /// Adds the subject with the role the conventions in the module docs give it.
    pub(super) fn add_subject(&mut self, doc: &Doc<'_>, subject: Range<usize>) {
        if self.existential {
            return;
        }
        let personal = subject.len() == 1
            && words::is_subject_capable(doc.norm(subject.start))
            && !matches!(
                doc.norm(subject.start),
                "it" | "this" | "that" | "which" | "there"
            );
        let undergoes = self.group.passive
            || self.copular
            || (words::is_unaccusative(&self.group.lemma) && !self.has(ArgRole::Arg1) && !personal);
        let role = match (undergoes, self.has(ArgRole::Arg1)) {
            (false, _) => ArgRole::Arg0,
            (true, false) => ArgRole::Arg1,
            // "I wasn't given a laptop", "we were told to read": the subject received it.
            (true, true) if self.group.passive && !self.has(ArgRole::Arg2) => ArgRole::Arg2,
            (true, true) => return,
        };
        self.args.insert(0, (role, subject));
    }

    /// "They should have told us": the lone person after "tell"/"ask"/"show" is the hearer
    /// (`ARG2`), not the message.
    fn hearer_as_recipient(&mut self, doc: &Doc<'_>) {
        let hearing = words::is_directive(&self.group.lemma)
            || matches!(self.group.lemma.as_str(), "show" | "inform");
        if !hearing || self.has(ArgRole::Arg2) {
            return;
        }
        let ones: Vec<usize> = (0..self.args.len())
            .filter(|&i| self.args.get(i).is_some_and(|(r, _)| *r == ArgRole::Arg1))
            .collect();
        if let [only] = ones.as_slice()
            && let Some((role, range)) = self.args.get_mut(*only)
            && range.len() == 1
            && words::is_person_noun(doc.norm(range.start))
        {
            *role = ArgRole::Arg2;
        }
    }

    /// The finished frame, or `None` when it carries nothing worth a hint: no argument, a
    /// bare modal or "do" ("I can", "I don't"), or a copula with no subject ("to be honest").
    pub(super) fn finish(mut self, doc: &Doc<'_>) -> Option<SrlFrame> {
        let lemma = self.group.lemma.as_str();
        let content = self.args.iter().any(|(r, _)| !matches!(r, ArgRole::Neg));
        let modal = self.group.aux_main && !matches!(lemma, "be" | "have" | "do");
        let bare_do = lemma == "do" && !self.has(ArgRole::Arg1) && !self.has(ArgRole::Mnr);
        let describes_nothing = lemma == "be" && !self.has(ArgRole::Arg1);
        if !content || modal || bare_do || describes_nothing {
            return None;
        }
        self.hearer_as_recipient(doc);
        let g = &self.group;
        let predicate = doc.raw_span(g.main..g.particle.map_or(g.main + 1, |p| p + 1))?;
        self.args
            .sort_by_key(|(role, range)| (role.core_rank(), range.start));
        let arguments = self
            .args
            .iter()
            .filter_map(|(role, range)| {
                Some(Argument {
                    role: *role,
                    span: doc.span(range.clone())?,
                })
            })
            .collect();
        Some(SrlFrame {
            predicate,
            lemma: g.lemma.clone(),
            negated: !g.negators.is_empty() || self.has(ArgRole::Neg),
            arguments,
        })
    }
}
