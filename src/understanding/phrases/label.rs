//! Turning a run of tagged words into a label that follows the naming conventions, and a quote
//! that is the answer's own bytes.

use std::ops::Range;

use crate::srl::{self, TaggedWord, WordClass};

use super::super::lexicon;
use super::{Origin, Phrase, Reader, Shape};

/// Longest label in words: the naming conventions ask for 2–5, and a verb phrase with its
/// object and context needs a little more ("start the day in a good mood"). A longer phrase
/// loses its trailing parts first, so labels end on a whole phrase. Articles, a relative "that" or "who", and the "kind of"
/// of "the kind of parent" do not count ("being the kind of manager I wish I had").
const MAX_LABEL_WORDS: usize = 7;

/// Words too generic to stand as a concept on their own ("main thing", "whole way").
const GENERIC_MODIFIERS: &str = "main whole same other only real first last certain \
    particular more most much many few little big able";

impl Reader<'_> {
    /// The phrase made of the words of `parts` (word ranges), normalised. `verb` holds the
    /// word indices of a predicate, kept even when they are auxiliaries ("do my bit").
    /// Trailing parts are dropped while the label is longer than [`MAX_LABEL_WORDS`].
    pub(super) fn phrase(
        &self,
        parts: &[Range<usize>],
        verb: Range<usize>,
        origin: Origin,
    ) -> Option<Phrase> {
        let mut parts: Vec<Range<usize>> = parts
            .iter()
            .map(|r| self.with_particle(self.before_apposition(r.clone())))
            .collect();
        parts.sort_by_key(|r| r.start);
        loop {
            let mut indices: Vec<usize> = parts.iter().flat_map(Clone::clone).collect();
            indices.sort_unstable();
            indices.dedup();
            let kept = self.label_words(&indices, &verb);
            let counted = self.within_label_length(&kept);
            // "the first coffee of the day | feel like a little treat": a subject too long
            // for the label loses its "of" phrase before the verb loses what it says.
            let subject_cut = parts
                .first()
                .filter(|s| parts.len() > 1 && s.end <= verb.start)
                .and_then(|s| self.of_postmodifier(s));
            if counted < kept.len()
                && let (Some(at), Some(first)) = (subject_cut, parts.first_mut())
            {
                first.end = at;
                continue;
            }
            // "my morning flat white | feels | like a proper cafe coffee": before what the
            // verb says is lost, a long subject keeps only its last two words, its head.
            let head_cut = parts
                .first()
                .filter(|s| parts.len() == 3 && s.end <= verb.start && s.len() > 2)
                // "a man with a van" has no head at its end.
                .filter(|s| (s.start..s.end).all(|i| self.in_noun_group(i)))
                .map(|s| s.end - 2);
            if counted < kept.len()
                && let (Some(at), Some(first)) = (head_cut, parts.first_mut())
            {
                first.start = at;
                continue;
            }
            if counted == kept.len() || parts.len() <= 1 {
                let cut = kept.get(counted).copied();
                let mut kept: Vec<usize> = kept.into_iter().take(counted).collect();
                if let Some(next) = cut {
                    self.drop_open_group(&mut kept, next);
                }
                return self.finish(&self.trim_dangling(kept), origin);
            }
            parts.pop();
        }
    }

    /// How many of the words `kept` fit in a label: [`MAX_LABEL_WORDS`] besides articles and
    /// a "kind of" or "sort of".
    fn within_label_length(&self, kept: &[usize]) -> usize {
        let mut counted = 0;
        for (n, &i) in kept.iter().enumerate() {
            let norm = |k: usize| self.word(k).map_or("", |w| w.norm.as_str());
            // Articles, and the "that" or "who" of a relative clause, cost nothing.
            let article = matches!(norm(i), "the" | "a" | "an" | "that" | "who");
            let kind_of = match norm(i) {
                "kind" | "sort" => norm(i + 1) == "of",
                "of" => i
                    .checked_sub(1)
                    .is_some_and(|p| matches!(norm(p), "kind" | "sort")),
                _ => false,
            };
            if !(article || kind_of) {
                counted += 1;
            }
            if counted > MAX_LABEL_WORDS {
                return n;
            }
        }
        kept.len()
    }

    /// `range` and the particle right after it, which belongs to a phrasal verb inside or
    /// before it ("sets me | up", "brings it | up", "before the kids wake | up").
    fn with_particle(&self, range: Range<usize>) -> Range<usize> {
        let particle = self
            .word(range.end)
            .is_some_and(|w| w.class == WordClass::Particle);
        if particle && !range.is_empty() {
            range.start..range.end + 1
        } else {
            range
        }
    }

    /// Word `i` can be part of a noun group: a determiner, adjective, noun or number.
    pub(super) fn in_noun_group(&self, i: usize) -> bool {
        self.word(i).is_some_and(|w| {
            matches!(
                w.class,
                WordClass::Determiner | WordClass::Adjective | WordClass::Noun | WordClass::Number
            )
        })
    }

    /// `range` without a noun group set after a comma to rename the one before it ("my
    /// over-ear ones, the big Bose ones"): the label names the thing once.
    fn before_apposition(&self, range: Range<usize>) -> Range<usize> {
        let noun = |r: Range<usize>| {
            r.clone().all(|i| self.in_noun_group(i))
                && r.into_iter()
                    .any(|i| self.word(i).is_some_and(|w| w.class == WordClass::Noun))
        };
        let comma = range
            .clone()
            .find(|&i| self.word(i).is_some_and(|w| w.norm == ","));
        match comma {
            Some(c)
                if c > range.start
                    && self
                        .word(c + 1)
                        .is_some_and(|w| w.class == WordClass::Determiner)
                    && noun(range.start..c)
                    && noun(c + 1..range.end) =>
            {
                range.start..c
            }
            _ => range,
        }
    }

    fn finish(&self, kept: &[usize], origin: Origin) -> Option<Phrase> {
        // A verb of meaning or mattering relates this phrase to the next one ("having
        // energy means …", "… matters because …"): it is never the end of a concept.
        let end = kept
            .iter()
            .rposition(|&i| {
                self.word(i)
                    .is_none_or(|w| !lexicon::is_judging_verb(&w.norm))
            })
            .map_or(0, |p| p + 1);
        let kept = self.with_change_marker(kept.get(..end)?);
        let kept = self.with_what_one_is_unable_to_do(kept);
        let kept = kept.as_slice();
        let first = *kept.first()?;
        let last = *kept.last()?;
        let words: Vec<String> = kept
            .iter()
            .filter_map(|&i| self.word(i))
            .map(|w| w.norm.clone())
            .collect();
        if !worth_a_concept(&words) || self.no_content_of_its_own(kept) {
            return None;
        }
        let start = self.word(first)?.start;
        let end = self.word(last)?.end;
        self.answer.get(start..end)?;
        // "actually listen": an adverb before the verb does not make the phrase a noun's.
        let head = kept
            .iter()
            .filter_map(|&i| self.word(i))
            .find(|w| w.class != WordClass::Adverb)
            .or_else(|| self.word(first))?;
        let shape = if head.norm == "being" {
            Shape::Being
        } else if matches!(head.class, WordClass::Verb | WordClass::Auxiliary)
            || (head.class == WordClass::Negation
                && self
                    .word(first + 1)
                    .is_some_and(|n| matches!(n.class, WordClass::Verb | WordClass::Auxiliary)))
        {
            Shape::Verbal
        } else {
            Shape::Nominal
        };
        // Words are compared lowercase; the label is read, and says "I" ("the kind of mum I
        // want to be"), an acronym and a name as they were written ("the IT person", "my GP",
        // "Leeds").
        let label = self.label_of(kept.iter().filter_map(|&i| self.word(i)));
        Some(Phrase {
            label,
            start,
            end,
            origin,
            shape,
            words,
            affect: 0,
            of_product: false,
        })
    }

    /// The label of `words`: lowercase, but "I" and an acronym as it was written ("the IT
    /// person", "my GP").
    pub(super) fn label_of<'w>(&self, words: impl Iterator<Item = &'w TaggedWord>) -> String {
        words
            .map(|w| {
                let written = self.answer.get(w.start..w.end).unwrap_or_default();
                let acronym =
                    written.chars().count() >= 2 && written.chars().all(|c| c.is_ascii_uppercase());
                if w.norm == "i" {
                    "I".to_owned()
                } else if acronym || w.name {
                    // "driving up to Leeds", "Dev's dad": a name as it was written.
                    written.to_owned()
                } else {
                    w.norm.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// "(sitting at my kitchen table,) unable to log into anything": "unable" names nothing
    /// without what one could not do, the infinitive after it to the end of its clause ("able
    /// to" adds nothing to what its infinitive's own phrase says).
    fn with_what_one_is_unable_to_do(&self, mut kept: Vec<usize>) -> Vec<usize> {
        let Some(&last) = kept.last() else {
            return kept;
        };
        let able = self.word(last).is_some_and(|w| w.norm == "unable");
        let to = self
            .word(last + 1)
            .is_some_and(|w| w.class == WordClass::Infinitive);
        if able && to {
            let mut i = last + 1;
            let mut verbs = 0;
            while let Some(w) = self.word(i) {
                if matches!(w.class, WordClass::Verb | WordClass::Auxiliary) {
                    verbs += 1;
                }
                // One verb, the infinitive's: "able to keep it up | makes me feel …" ends
                // before the next.
                let ends = matches!(
                    w.class,
                    WordClass::Punctuation | WordClass::Subordinator | WordClass::Conjunction
                ) || (i > last + 1 && w.clause_break)
                    || verbs > 1;
                if ends {
                    break;
                }
                kept.push(i);
                i += 1;
            }
            // "unable to relax now": when it is said is not part of it.
            while kept.len() > 2
                && kept
                    .last()
                    .and_then(|&k| self.word(k))
                    .is_some_and(|w| w.class == WordClass::Adverb)
            {
                kept.pop();
            }
        }
        kept
    }

    /// "Cold water means I actually drink it", "now I finally use it": a verb with only a
    /// pronoun beside it is no concept of its own, but one the respondent says they now
    /// "actually" or "finally" do is the change the product made, and keeps that word and
    /// its object.
    fn with_change_marker(&self, kept: &[usize]) -> Vec<usize> {
        let marker = kept
            .first()
            .and_then(|&first| first.checked_sub(1))
            .filter(|&m| {
                self.word(m)
                    .is_some_and(|w| matches!(w.norm.as_str(), "actually" | "finally"))
            });
        let words: Vec<&TaggedWord> = kept.iter().filter_map(|&i| self.word(i)).collect();
        let starts_on_a_verb = words.first().is_some_and(|w| w.class == WordClass::Verb);
        // "what I actually live for": the verb's object went before it, out of the phrase.
        let stranded = kept.last().is_some_and(|&l| {
            self.word(l + 1)
                .is_some_and(|w| w.class == WordClass::Preposition)
                && self
                    .word(l + 2)
                    .is_none_or(|w| w.class == WordClass::Punctuation)
        });
        match marker {
            Some(m) if starts_on_a_verb && !stranded && lone_verb(&words) => {
                // "actually drink it": the object pronoun stays, so the label reads.
                let object = kept.last().map(|&l| l + 1).filter(|&o| {
                    self.word(o)
                        .is_some_and(|w| matches!(w.norm.as_str(), "it" | "them"))
                });
                std::iter::once(m)
                    .chain(kept.iter().copied())
                    .chain(object)
                    .collect()
            }
            _ => kept.to_vec(),
        }
    }

    /// The indices of `indices` that belong in a label: comparison tails cut ("better than
    /// dairy" → "better"), "a bit" and "a lot of" dropped, then [`keeps`] per word.
    /// A lone adverb ("early", "halfway") says how or when something happened, and "ended
    /// up" only that it did: neither is a concept.
    fn no_content_of_its_own(&self, kept: &[usize]) -> bool {
        let words: Vec<&TaggedWord> = kept.iter().filter_map(|&i| self.word(i)).collect();
        if open_verb(&words) || self.pronoun_event(kept, &words) || lone_verb(&words) {
            return true;
        }
        // "sounds silly", "turns out": the speaker commenting on the telling, not content.
        if let [first, second, ..] = words.as_slice() {
            let comment = matches!(first.norm.as_str(), "sounds" | "sounded")
                && words.len() <= 3
                && words
                    .iter()
                    .skip(1)
                    .any(|w| SELF_COMMENTS.contains(&w.norm.as_str()));
            let turns_out = matches!(first.norm.as_str(), "turns" | "turned" | "turn")
                && second.norm == "out"
                && words.len() <= 4;
            if comment || turns_out {
                return true;
            }
        }
        match words.as_slice() {
            // The tagger reads a sentence's first noun before its verb as an adverb
            // ("Family matters").
            [one] => {
                let opens_sentence = kept.first().is_some_and(|&i| {
                    i.checked_sub(1)
                        .and_then(|p| self.word(p))
                        .is_none_or(|p| p.sentence != one.sentence)
                });
                one.class == WordClass::Adverb && !opens_sentence
            }
            [verb, up] if up.norm == "up" => {
                matches!(verb.norm.as_str(), "end" | "ended" | "ends" | "ending")
            }
            // "(it) makes (it) possible (to feel like me)": how something became, its thing
            // and what it led to said elsewhere.
            [verb, state] | [verb, _, state]
                if words.len() == 2
                    || kept.get(1).is_some_and(|&i| self.object_before_particle(i)) =>
            {
                srl::verb_lemma(&verb.norm) == "make"
                    && state.class == WordClass::Adjective
                    && kept
                        .last()
                        .and_then(|&l| self.word(l + 1))
                        .is_some_and(|w| w.class == WordClass::Infinitive)
            }
            _ => false,
        }
    }

    /// One verb said of "it", "that" or "this" ("so it doesn't happen again"): the event is
    /// whatever the pronoun stands for, not a concept of its own.
    fn pronoun_event(&self, kept: &[usize], words: &[&TaggedWord]) -> bool {
        let content: Vec<&&TaggedWord> = words
            .iter()
            .filter(|w| w.class != WordClass::Negation)
            .collect();
        let [verb] = content.as_slice() else {
            return false;
        };
        if verb.class != WordClass::Verb {
            return false;
        }
        let subject = kept.first().and_then(|&first| {
            (0..first).rev().filter_map(|i| self.word(i)).find(|w| {
                !matches!(
                    w.class,
                    WordClass::Auxiliary | WordClass::Negation | WordClass::Adverb
                )
            })
        });
        subject.is_some_and(|s| matches!(s.norm.as_str(), "it" | "that" | "this"))
    }

    fn label_words(&self, indices: &[usize], verb: &Range<usize>) -> Vec<usize> {
        let mut kept: Vec<usize> = Vec::new();
        let mut previous: Option<&TaggedWord> = None;
        for &i in indices {
            let Some(w) = self.word(i) else { continue };
            let comparison_tail = matches!(w.norm.as_str(), "than" | "like" | "unlike")
                && previous
                    .is_some_and(|p| matches!(p.class, WordClass::Adjective | WordClass::Adverb));
            if comparison_tail {
                break;
            }
            previous = Some(w);
            if self.is_quantity_hedge(i) || self.is_kind_of_hedge(i) || self.is_filler(i) {
                continue;
            }
            // "Compared with soy", "unlike almond": the frame of a comparison, whose verb the
            // phrase may hold; what it compares with is the concept.
            if kept.is_empty() && matches!(w.norm.as_str(), "compared" | "unlike" | "versus") {
                continue;
            }
            if self.opens_part_of_doing(i) {
                // "(a big) part of being a good parent": the way of being is the concept.
                kept.clear();
                continue;
            }
            if verb.contains(&i)
                || keeps(w, kept.is_empty())
                || (kept.is_empty() && self.opens_a_state(i))
                || self.demonstrative_of_partitive(i, &kept)
                || self.modal_of_relative(i, &kept)
                || self.subject_of_relative(i, &kept)
                || self.opens_wh_clause(i, &kept)
                || self.worth_it(i)
                || self.object_that(i, &kept)
                || self.rest_of_relative(i, &kept)
                || (!kept.is_empty() && self.object_before_particle(i))
                || (!kept.is_empty() && self.there_after_arriving(i))
                // "never want to be that person": the one pointed at is the concept.
                || (i.checked_sub(1)
                    .and_then(|b| self.word(b))
                    .is_some_and(|b| matches!(b.norm.as_str(), "be" | "being" | "become"))
                    && matches!(w.norm.as_str(), "that" | "this")
                    && w.class == WordClass::Determiner
                    && self
                        .word(i + 1)
                        .is_some_and(|n| n.norm == "person" || srl::is_person_word(&n.norm)))
                // "not just surviving the shifts": merely that, not its denial.
                || (matches!(w.norm.as_str(), "just" | "only" | "merely")
                    && kept
                        .last()
                        .and_then(|&k| self.word(k))
                        .is_some_and(|p| p.norm == "not"))
                || (w.norm == "one"
                    && self
                        .word(i + 1)
                        .is_some_and(|n| matches!(n.norm.as_str(), "less" | "fewer" | "more")))
            {
                kept.push(i);
            }
        }
        kept
    }

    /// Word `i` is the preposition of a state one is in ("on top of things", "in control of
    /// the money", "on track"): without it the label names a thing ("top of things").
    fn opens_a_state(&self, i: usize) -> bool {
        let Some(w) = self.word(i) else { return false };
        let noun = self.word(i + 1).map(|n| n.norm.as_str());
        match w.norm.as_str() {
            "on" => matches!(noun, Some("top" | "track" | "time" | "form")),
            "in" => matches!(
                noun,
                Some("control" | "charge" | "shape" | "touch" | "balance")
            ),
            "at" => matches!(noun, Some("ease" | "peace")),
            "under" => matches!(noun, Some("control" | "pressure")),
            _ => false,
        }
    }

    /// Word `i` belongs to "kind of" or "sort of" used as a hedge ("that's kind of my social
    /// life", "we sort of stopped talking"), not as a noun after a determiner ("the kind of
    /// person", "that sort of thing").
    fn is_kind_of_hedge(&self, i: usize) -> bool {
        let norm = |k: usize| self.word(k).map_or("", |w| w.norm.as_str());
        let hedge_at = |k: usize| {
            matches!(norm(k), "kind" | "sort")
                && norm(k + 1) == "of"
                && k.checked_sub(1)
                    .and_then(|p| self.word(p))
                    .is_none_or(|p| p.class != WordClass::Determiner)
        };
        hedge_at(i) || (norm(i) == "of" && i.checked_sub(1).is_some_and(hedge_at))
    }

    /// Word `i` is "it" between a verb and its particle ("brings it up", "sorted it out") or
    /// the state it is left in ("got it together", "take it easy"): the phrase reads whole
    /// only with it.
    fn object_before_particle(&self, i: usize) -> bool {
        let after_verb = i
            .checked_sub(1)
            .and_then(|p| self.word(p))
            .is_some_and(|p| p.class == WordClass::Verb);
        self.word(i).is_some_and(|w| w.norm == "it")
            && self.word(i + 1).is_some_and(|w| {
                w.class == WordClass::Particle
                    || (after_verb && (w.class == WordClass::Adjective || w.norm == "together"))
            })
    }

    /// Word `i` is "there" right after a verb of getting somewhere ("got there with six miles
    /// left", "went there twice"): where they got to, not a filler ("standing there").
    fn there_after_arriving(&self, i: usize) -> bool {
        self.word(i).is_some_and(|w| w.norm == "there")
            && i.checked_sub(1)
                .and_then(|p| self.word(p))
                .is_some_and(|p| {
                    matches!(
                        crate::srl::verb_lemma(&p.norm).as_str(),
                        "get" | "go" | "come" | "arrive"
                    )
                })
    }

    /// Word `i` is the "part" or "of" of "part of" before a verb in -ing ("part of being a
    /// good parent", "a big part of looking after them").
    fn opens_part_of_doing(&self, i: usize) -> bool {
        let norm = |k: usize| self.word(k).map_or("", |w| w.norm.as_str());
        let doing = |k: usize| {
            self.word(k)
                .is_some_and(|w| w.norm.ends_with("ing") && w.class != WordClass::Noun)
        };
        match norm(i) {
            "part" => norm(i + 1) == "of" && doing(i + 2),
            "of" => i.checked_sub(1).is_some_and(|p| norm(p) == "part") && doing(i + 1),
            _ => false,
        }
    }

    /// The index of an "of" that follows the head noun of the noun group `range` ("the first
    /// coffee | of the day"), where the noun is not a part or amount of what follows ("one of
    /// the boxes", "the rest of it").
    fn of_postmodifier(&self, range: &Range<usize>) -> Option<usize> {
        let at = range
            .clone()
            .find(|&i| self.word(i).is_some_and(|w| w.norm == "of"))?;
        let head = self.word(at.checked_sub(1)?)?;
        let partitive = matches!(
            head.norm.as_str(),
            "one"
                | "some"
                | "any"
                | "none"
                | "all"
                | "most"
                | "each"
                | "both"
                | "rest"
                | "part"
                | "kind"
                | "sort"
                | "bit"
                | "lot"
                | "lots"
                | "couple"
                | "number"
                | "half"
        );
        (head.class == WordClass::Noun && !partitive && at > range.start + 1).then_some(at)
    }

    /// A demonstrative after a partitive's "of" stays: "one of those blokes", not "one of
    /// blokes".
    fn demonstrative_of_partitive(&self, i: usize, kept: &[usize]) -> bool {
        let norm = |k: usize| self.word(k).map_or("", |w| w.norm.as_str());
        matches!(norm(i), "this" | "that" | "these" | "those")
            && kept.last().is_some_and(|&k| {
                k + 1 == i
                    && norm(k) == "of"
                    && k.checked_sub(1).is_some_and(|q| {
                        matches!(
                            norm(q),
                            "one" | "some" | "any" | "none" | "all" | "most" | "each" | "both"
                        )
                    })
            })
    }

    /// Word `i` belongs to "a bit", "a little" or "a lot (of)" used as a degree.
    pub(super) fn is_quantity_hedge(&self, i: usize) -> bool {
        let norm = |k: usize| self.word(k).map_or("", |w| w.norm.as_str());
        let quantity = |k: usize| matches!(norm(k), "bit" | "little" | "lot");
        let degree_after = |k: usize| {
            self.word(k).is_none_or(|w| {
                matches!(w.class, WordClass::Adjective | WordClass::Adverb)
                    || matches!(w.norm.as_str(), "of" | "more" | "less")
                    || w.clause_break
                    || w.class == WordClass::Punctuation
            })
        };
        // "a bit" and "a lot" are always a degree; "a little" only before a description ("a
        // little sweet", not "a little treat").
        let hedged = |k: usize| match norm(k) {
            "bit" | "lot" => true,
            "little" => degree_after(k + 1),
            _ => false,
        };
        match norm(i) {
            "a" => quantity(i + 1) && hedged(i + 1),
            "bit" | "little" | "lot" => {
                i.checked_sub(1).is_some_and(|p| norm(p) == "a") && hedged(i)
            }
            "of" => {
                i.checked_sub(2).is_some_and(|p| norm(p) == "a")
                    && i.checked_sub(1).is_some_and(|p| norm(p) == "lot")
            }
            _ => false,
        }
    }

    /// A label cut before word `next` in the middle of a noun group ("on a healthy | diet")
    /// loses the group's opening words, so that it ends on a whole phrase.
    fn drop_open_group(&self, kept: &mut Vec<usize>, next: usize) {
        let continues = self
            .word(next)
            .is_some_and(|w| matches!(w.class, WordClass::Noun | WordClass::Adjective));
        if !continues {
            return;
        }
        while let Some(&last) = kept.last() {
            let inside = self.word(last).is_some_and(|w| {
                matches!(
                    w.class,
                    WordClass::Adjective | WordClass::Determiner | WordClass::Number
                ) || (w.class == WordClass::Noun && last + 1 == next)
            });
            if !inside || kept.len() <= 1 {
                break;
            }
            kept.pop();
        }
    }

    /// "can"/"could" between a subject and its verb inside a label ("person others can count
    /// on", "someone people can trust"): the ability is what the phrase says.
    fn modal_of_relative(&self, i: usize, kept: &[usize]) -> bool {
        let modal = self.word(i).is_some_and(|w| {
            w.class == WordClass::Auxiliary && matches!(w.norm.as_str(), "can" | "could")
        });
        let after_nominal = kept.last().is_some_and(|&k| {
            k + 1 == i
                && self
                    .word(k)
                    .is_some_and(|w| matches!(w.class, WordClass::Noun | WordClass::Pronoun))
        });
        let verb_next = self.word(i + 1).is_some_and(|w| w.class == WordClass::Verb);
        modal && after_nominal && verb_next
    }

    /// Word `i` carries on a relative clause without "that" opened inside the label, so the
    /// label does not say a different thing without it: the "be" or "have" that closes a noun
    /// group's clause ("the kind of parent my mum was (to me)", "the aftertaste soy has"), or
    /// the subject pronoun or auxiliary of a clause inside a pronoun's ("kind of manager I
    /// wish [I had]"; a contracted "'d" is left out).
    fn rest_of_relative(&self, i: usize, kept: &[usize]) -> bool {
        let Some(w) = self.word(i) else {
            return false;
        };
        let class = |k: usize| self.word(k).map(|w| w.class);
        let norm = |k: usize| self.word(k).map(|w| w.norm.as_str());
        let last = kept.last().copied();
        let next_to_kept = last.is_some_and(|k| k + 1 == i);
        let auxiliary = w.class == WordClass::Auxiliary;
        let ends = |k: usize| class(k).is_none_or(|c| c == WordClass::Punctuation);
        let hearer =
            matches!(norm(i + 1), Some("to" | "for")) && class(i + 2) == Some(WordClass::Pronoun);
        let closes = auxiliary
            && srl::is_finite_be_or_have(&w.norm)
            && next_to_kept
            && last.and_then(class) == Some(WordClass::Noun)
            && (ends(i + 1) || (hearer && ends(i + 3)));
        let opened = kept.windows(2).any(|pair| {
            let &[noun, pronoun] = pair else {
                return false;
            };
            noun + 1 == pronoun
                && class(noun) == Some(WordClass::Noun)
                && class(pronoun) == Some(WordClass::Pronoun)
        });
        let across_d = last.is_some_and(|k| k + 2 == i && norm(k + 1) == Some("'d"));
        let fits = (w.class == WordClass::Pronoun
            && matches!(w.norm.as_str(), "i" | "we" | "they" | "he" | "she" | "you"))
            || (auxiliary
                && w.norm != "'d"
                && !matches!(class(i + 1), Some(WordClass::Verb | WordClass::Auxiliary)));
        closes || (opened && fits && (next_to_kept || across_d))
    }

    /// Word `i` is a "that" standing for what went before, as the object between a kept verb
    /// and a preposition ("not repeat that with mine"), which the label would not read
    /// without.
    fn object_that(&self, i: usize, kept: &[usize]) -> bool {
        self.word(i)
            .is_some_and(|w| matches!(w.norm.as_str(), "that" | "this"))
            && kept.last().is_some_and(|&k| {
                k + 1 == i && self.word(k).is_some_and(|w| w.class == WordClass::Verb)
            })
            && self
                .word(i + 1)
                .is_some_and(|w| w.class == WordClass::Preposition)
    }

    /// Word `i` is the "it" of "worth it", which the label would not read without.
    fn worth_it(&self, i: usize) -> bool {
        self.word(i).is_some_and(|w| w.norm == "it")
            && i.checked_sub(1)
                .and_then(|p| self.word(p))
                .is_some_and(|p| p.norm == "worth")
    }

    /// Word `i` opens a clause after a kept preposition ("proud of how I treat people"): the
    /// "how", "what" or "who", or the subject pronoun right after it.
    fn opens_wh_clause(&self, i: usize, kept: &[usize]) -> bool {
        let wh = |k: usize| {
            self.word(k)
                .is_some_and(|w| matches!(w.norm.as_str(), "how" | "what" | "who"))
        };
        let kept_before = |class: WordClass| {
            kept.last()
                .is_some_and(|&k| k + 1 == i && self.word(k).is_some_and(|w| w.class == class))
        };
        let opener = wh(i) && kept_before(WordClass::Preposition);
        // "how I treat people", "who can cover", "how I can help".
        let after_wh = kept.last().is_some_and(|&k| {
            k + 1 == i
                && (wh(k)
                    || (k > 0
                        && wh(k - 1)
                        && self.word(k).is_some_and(|w| w.class == WordClass::Pronoun)))
        });
        let clause_word = self.word(i).is_some_and(|w| {
            w.class == WordClass::Pronoun
                || (w.class == WordClass::Auxiliary && matches!(w.norm.as_str(), "can" | "could"))
        });
        opener || (after_wh && clause_word)
    }

    /// A subject pronoun right after a noun and before a verb group inside a label ("teacher
    /// they can rely on"), or the "who" or "that" there ("person who throws stuff away"): the
    /// relative clause's subject.
    fn subject_of_relative(&self, i: usize, kept: &[usize]) -> bool {
        let pronoun = self.word(i).is_some_and(|w| {
            matches!(w.norm.as_str(), "who" | "that")
                || (w.class == WordClass::Pronoun
                    && matches!(w.norm.as_str(), "i" | "we" | "they" | "he" | "she" | "you"))
        });
        let after_noun = kept.last().is_some_and(|&k| {
            k + 1 == i && self.word(k).is_some_and(|w| w.class == WordClass::Noun)
        });
        let verb_next = self
            .word(i + 1)
            .is_some_and(|w| matches!(w.class, WordClass::Verb | WordClass::Auxiliary));
        pronoun && after_noun && verb_next
    }

    /// Drops trailing prepositions, determiners, conjunctions and a dangling "not"; a
    /// preposition after a verb, its particle or a participle at the end of its clause stays
    /// ("others can count on", "the world they'll grow up in", "feeling listened to").
    fn trim_dangling(&self, mut kept: Vec<usize>) -> Vec<usize> {
        while let Some(&last) = kept.last() {
            let stranded = self.word(last).is_some_and(|w| {
                matches!(w.class, WordClass::Preposition | WordClass::Infinitive)
                    && self.word(last + 1).is_none_or(|n| {
                        n.class == WordClass::Punctuation || n.sentence != w.sentence
                    })
            }) && last
                .checked_sub(1)
                .and_then(|p| self.word(p))
                .is_some_and(|v| {
                    matches!(v.class, WordClass::Verb | WordClass::Particle)
                        || lexicon::is_participle(&v.norm)
                        // "before the kids get up": a verb the tagger took for a noun, with
                        // its particle.
                        || (srl::is_known_verb(&v.norm)
                            && srl::verb_lemma(&v.norm) == v.norm
                            && matches!(
                                self.word(last).map(|w| w.norm.as_str()),
                                Some("up" | "out" | "off" | "down" | "back" | "away")
                            ))
                })
                && kept.len() >= 2;
            if stranded {
                break;
            }
            let dangling = self.word(last).is_none_or(|w| {
                !lexicon::is_degree_word(&w.norm)
                    && matches!(
                        w.class,
                        WordClass::Preposition
                            | WordClass::Determiner
                            | WordClass::Conjunction
                            | WordClass::Infinitive
                            | WordClass::Subordinator
                    )
                    || w.norm == "not"
                    // "which the cheap cartons never do": the subject of a clause whose verb
                    // only stands in for one said before.
                    || (w.norm == "never" && kept.len() >= 2)
                    // "not worrying about what": a clause cut before its verb.
                    || matches!(w.norm.as_str(), "how" | "what" | "who")
                    // "my social life now": the time of saying it, not part of the concept.
                    || (w.norm == "now" && kept.len() >= 2)
                    // "sleep better knowing (nothing's blowing up)": a verb of knowing whose
                    // clause was cut off.
                    || (matches!(
                        w.norm.as_str(),
                        "knowing" | "thinking" | "wondering" | "hoping" | "realising" | "realizing"
                    ) && kept.len() >= 2)
            });
            if !dangling {
                break;
            }
            kept.pop();
        }
        kept
    }
}

/// Whether word `w` belongs in a label; `at_start` when no word has been kept yet. Leading
/// determiners, possessives and prepositions go, and so do pronouns other than an object
/// ("keeps me full"), auxiliaries other than "being", hedges, intensifiers and punctuation.
fn keeps(w: &TaggedWord, at_start: bool) -> bool {
    let norm = w.norm.as_str();
    match w.class {
        WordClass::Punctuation | WordClass::Subordinator => false,
        WordClass::Negation => true,
        WordClass::Auxiliary => norm == "being",
        WordClass::Pronoun => {
            !at_start
                && matches!(
                    norm,
                    "me" | "us"
                        | "mine"
                        | "ours"
                        | "them"
                        | "myself"
                        | "ourselves"
                        | "yourself"
                        | "himself"
                        | "herself"
                        | "themselves"
                        | "each"
                        | "other"
                        | "him"
                        | "her"
                        | "someone"
                        | "somebody"
                        | "something"
                        | "people"
                        | "everyone"
                )
        }
        WordClass::Determiner => {
            // "less stress", "fewer late nights", "half an hour": the amount is the point.
            matches!(norm, "no" | "less" | "fewer" | "more" | "half")
                || (!at_start && !matches!(norm, "this" | "that" | "these" | "those"))
        }
        WordClass::Conjunction | WordClass::Infinitive | WordClass::Preposition => !at_start,
        WordClass::Adverb => !lexicon::is_intensifier(norm) && !lexicon::is_hedge(norm),
        WordClass::Adjective
        | WordClass::Verb
        | WordClass::Noun
        | WordClass::Number
        | WordClass::Particle => {
            !lexicon::is_intensifier(norm) && !lexicon::is_hedge(norm) && norm != "'s"
        }
    }
}

/// A label that ends on a verb whose complement is missing ("colleague tried", "nurse
/// noticed", "go home feeling", "not mind"), or on such a verb and its object pronoun ("keeps
/// me", "makes us"): the rest was cut away, and what is left names nothing.
fn open_verb(words: &[&TaggedWord]) -> bool {
    let needs = |w: &&TaggedWord| w.class == WordClass::Verb && lexicon::needs_complement(&w.norm);
    match words {
        [.., verb, object]
            if object.class == WordClass::Pronoun
                && (srl::is_object_pronoun(&object.norm) || object.norm == "her") =>
        {
            needs(verb)
        }
        // "dog hair ends up": where it ends up was cut.
        [.., verb, up]
            if up.norm == "up" && matches!(verb.norm.as_str(), "end" | "ends" | "ended") =>
        {
            true
        }
        // "awake enough to (actually) help": to help is whole without an object.
        [.., to, help] | [.., to, _, help]
            if to.class == WordClass::Infinitive && help.norm == "help" =>
        {
            false
        }
        [_, .., last] => needs(last),
        _ => false,
    }
}

/// How a speaker rates their own telling ("sounds silly", "sounded daft").
const SELF_COMMENTS: [&str; 14] = [
    "silly", "small", "tiny", "daft", "stupid", "weird", "odd", "strange", "mad", "crazy",
    "dramatic", "petty", "obvious", "trivial",
];

/// One verb with nothing but pronouns beside it ("made", "wear them"): an event whose
/// content is elsewhere. A negated verb is an avoidance ("don't hurt"), "feel" a feeling
/// ("feel like me"), and a lone "-ing" form of a content verb a noun in disguise
/// ("travelling", "raining"): those stay, except a refusal to talk ("I'd rather not dwell on
/// that", "not go into it"), which is about the interview, not the respondent's life, and a
/// denied light verb ("not just have it").
fn lone_verb(words: &[&TaggedWord]) -> bool {
    if words.iter().any(|w| w.class == WordClass::Negation) {
        let verbs: Vec<&&TaggedWord> = words
            .iter()
            .filter(|w| w.class == WordClass::Verb)
            .collect();
        // "not just have (it because of the title)": a denied light verb (the tagger may
        // read "have" as an auxiliary) with nothing but a pronoun after it says nothing
        // either ("never did wrong by them" does).
        let light: Vec<&&TaggedWord> = words
            .iter()
            .filter(|w| matches!(w.class, WordClass::Verb | WordClass::Auxiliary))
            .collect();
        let bare_light = matches!(light.as_slice(), [v] if matches!(
            crate::srl::verb_lemma(&v.norm).as_str(),
            "have" | "get" | "do"
        )) && words.iter().all(|w| {
            matches!(
                w.class,
                WordClass::Negation | WordClass::Verb | WordClass::Auxiliary | WordClass::Pronoun
            ) || lexicon::is_intensifier(&w.norm)
                || w.norm == "only"
        });
        if bare_light {
            return true;
        }
        return matches!(verbs.as_slice(), [v] if matches!(
            crate::srl::verb_lemma(&v.norm).as_str(),
            "dwell" | "talk" | "discuss" | "say"
        )) && words.iter().all(|w| {
            !matches!(
                w.class,
                WordClass::Noun | WordClass::Adjective | WordClass::Number
            )
        });
    }
    let content: Vec<&&TaggedWord> = words
        .iter()
        .filter(|w| {
            lexicon::is_degree_word(&w.norm)
                // "not lose myself", "enjoy myself": the self is what the verb is about.
                || srl::is_reflexive(&w.norm)
                || !matches!(
                    w.class,
                    WordClass::Pronoun | WordClass::Determiner | WordClass::Punctuation
                )
        })
        .collect();
    let [verb] = content.as_slice() else {
        return false;
    };
    if !matches!(verb.class, WordClass::Verb | WordClass::Auxiliary)
        || matches!(verb.norm.as_str(), "feel" | "feels" | "felt" | "feeling")
    {
        return false;
    }
    let gerund = verb.norm.ends_with("ing")
        && !matches!(
            verb.norm.as_str(),
            "going" | "doing" | "getting" | "having" | "making" | "saying" | "trying" | "being"
        );
    !gerund
}

/// A label carries content: at least one word that is neither empty nor a generic modifier,
/// not only numbers ("twenty", "only thirty"), and not a lone word of judging, pointing or
/// time ("important", "the point", "day"), which says how or when, never what.
pub(super) fn worth_a_concept(words: &[String]) -> bool {
    let generic = |w: &str| GENERIC_MODIFIERS.split_whitespace().any(|g| g == w);
    let content: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| {
            w.chars().any(char::is_alphanumeric)
                && !lexicon::is_empty_word(w)
                && !lexicon::is_intensifier(w)
                && !matches!(
                    *w,
                    "not"
                        | "no"
                        | "never"
                        | "one"
                        | "ones"
                        | "anymore"
                        | "a"
                        | "an"
                        | "the"
                        | "of"
                        | "to"
                        | "and"
                        | "or"
                        | "being"
                )
        })
        .collect();
    // "the real thing for me", "not optional for me": for whom it is judged adds no content.
    let content: &[&str] = match content.as_slice() {
        [head @ .., "for" | "to"] if words.last().is_some_and(|w| w == "me" || w == "us") => head,
        all => all,
    };
    let substantive: Vec<&str> = content.iter().copied().filter(|w| !generic(w)).collect();
    let only_numbers = substantive.iter().all(|w| {
        w.split('-')
            .all(|part| part.is_empty() || lexicon::is_number_word(part))
    });
    // "two minutes", "six hours a day", "tuesdays", "back in March", "ten past": when, how
    // long or how often, not what.
    let time_like = |w: &str| {
        (lexicon::is_time_word(w) && !matches!(w, "late" | "early" | "halfway"))
            || lexicon::is_time_span_word(w)
            || lexicon::is_occasion(w)
            || lexicon::is_number_word(w)
            || w.strip_suffix('s').is_some_and(lexicon::is_occasion)
    };
    let time_preposition = |w: &str| {
        matches!(
            w,
            "back"
                | "in"
                | "on"
                | "at"
                | "since"
                | "around"
                | "during"
                | "until"
                | "till"
                | "by"
                // Clock times: "ten past", "half twelve", "till gone eleven".
                | "past"
                | "half"
                | "gone"
        )
    };
    let only_time = substantive.iter().all(|w| time_like(w))
        || (substantive.iter().any(|w| time_like(w))
            && substantive
                .iter()
                .all(|w| time_like(w) || time_preposition(w)));
    // "kids", "the guy": who, not what ("family" is an end in itself, and so is "being her
    // mum", a way of being).
    let being = words.first().is_some_and(|w| w == "being");
    let lone = |one: &str| {
        lexicon::is_evaluative(one)
            || (content.len() == 1 && lexicon::is_time_word(one))
            || (content.len() == 1 && crate::srl::is_person_word(one) && one != "family" && !being)
    };
    let lone_judgement = match substantive.as_slice() {
        [one] => lone(one),
        _ => false,
    };
    // "my sister's": a possessive whose noun was never said.
    let headless = words
        .last()
        .is_some_and(|w| w == "'s" || w.ends_with("'s") || w.ends_with("\u{2019}s"));
    !substantive.is_empty() && !only_numbers && !only_time && !lone_judgement && !headless
}
