//! Reading one answer's frames and uncovered words into phrases.

use std::ops::Range;

use crate::srl::{self, ArgRole, Argument, Span, SrlFrame, TaggedWord, Tense, WordClass};

use super::super::lexicon;
use super::{FramePhrases, Origin, Phrase, Reader};

impl Reader<'_> {
    /// Word indices inside a byte span.
    pub(super) fn range(&self, span: &Span) -> Range<usize> {
        let start = self
            .words
            .iter()
            .position(|w| w.start >= span.start)
            .unwrap_or(self.words.len());
        let end = self
            .words
            .iter()
            .rposition(|w| w.end <= span.end)
            .map_or(start, |i| (i + 1).max(start));
        start..end
    }

    pub(super) fn word(&self, i: usize) -> Option<&TaggedWord> {
        self.words.get(i)
    }

    /// Marks the words of `frame` as read. "I picked the Sony ones for the noise cancelling":
    /// what a choice was made for is left to be read on its own, as the reason for it.
    pub(super) fn mark(&self, covered: &mut [bool], frame: &SrlFrame) {
        let reason = |a: &&Argument| {
            a.role == ArgRole::Prp
                && lexicon::is_choice_verb(&frame.lemma)
                && self.starts_reason(&self.range(&a.span))
        };
        let spans = std::iter::once(&frame.predicate).chain(
            frame
                .arguments
                .iter()
                .filter(|a| !reason(a))
                .map(|a| &a.span),
        );
        for span in spans {
            for i in self.range(span) {
                if let Some(c) = covered.get_mut(i) {
                    *c = true;
                }
            }
        }
    }

    /// `range` is "at", "in" or "on", perhaps an article, and one common noun ("at work", "in
    /// the car").
    fn is_whereabouts(&self, range: &Range<usize>) -> bool {
        let words: Vec<&TaggedWord> = range.clone().filter_map(|i| self.word(i)).collect();
        match words.as_slice() {
            [p, rest @ ..] if matches!(p.norm.as_str(), "at" | "in" | "on") => {
                let content: Vec<&&TaggedWord> = rest
                    .iter()
                    .filter(|w| w.class != WordClass::Determiner)
                    .collect();
                matches!(content.as_slice(), [n] if n.class == WordClass::Noun && !n.name)
            }
            _ => false,
        }
    }

    /// `range` is "for" and a thing ("for the noise cancelling"), not a person ("for my
    /// kids") or a span of time ("for years").
    fn starts_reason(&self, range: &Range<usize>) -> bool {
        let mut words = range.clone().filter_map(|i| self.word(i));
        let opens = words.next().is_some_and(|w| w.norm == "for");
        let rest: Vec<&TaggedWord> = words.collect();
        opens
            && rest.iter().any(|w| w.class == WordClass::Noun)
            && !rest
                .iter()
                .any(|w| srl::is_person_word(&w.norm) || lexicon::is_time_span_word(&w.norm))
    }

    /// "like" after an adjective, or after a one-word subject that follows "not" or a comma
    /// ("a smooth mouthfeel, not watery like almond milk"), is a comparison the tagger read as
    /// a verb.
    pub(super) fn is_comparison(&self, frame: &SrlFrame) -> bool {
        if frame.lemma != "like" {
            return false;
        }
        let predicate = self.range(&frame.predicate);
        let before = |k: usize| predicate.start.checked_sub(k).and_then(|i| self.word(i));
        let after_adjective = before(1).is_some_and(|w| w.class == WordClass::Adjective);
        let lone_subject = before(1).is_some_and(|w| w.class != WordClass::Pronoun)
            && before(2).is_some_and(|w| w.class == WordClass::Negation || w.clause_break);
        after_adjective || lone_subject
    }

    pub(super) fn frame(&self, frame: &SrlFrame) -> FramePhrases {
        let mut read = self.frame_read(frame);
        // "Nobody had sent me a laptop": what nobody did did not happen.
        if let (Some(main), Some(word)) = (read.main.as_mut(), nobody(frame)) {
            main.deny_with(&word);
        }
        // "Nobody from the operator had updated it": with only a pronoun for its object, what
        // nobody did is said whole (who "nobody" was among too), not left to "operator".
        let someone_denied = nobody(frame).is_some_and(|w| w != "nothing");
        if read.main.is_none() && someone_denied {
            let spans = frame
                .arguments
                .iter()
                .map(|a| &a.span)
                .chain(std::iter::once(&frame.predicate));
            let (start, end) = spans.fold((usize::MAX, 0), |(s, e), span| {
                (s.min(span.start), e.max(span.end))
            });
            let words = self.range(&Span {
                start,
                end,
                text: String::new(),
            });
            let words: Vec<&TaggedWord> = words.filter_map(|i| self.word(i)).collect();
            // A setting inside it is folded in with the rest of its words.
            read.main = self.said_whole(&words, super::Shape::Nominal);
        }
        read
    }

    fn frame_read(&self, frame: &SrlFrame) -> FramePhrases {
        let predicate = self.range(&frame.predicate);
        let subject = self.subject(frame);
        let after = self.after_verb(frame, &predicate);
        let lemma = frame.lemma.as_str();
        let felt_by_speaker = self.speaker_first(&after);
        if let Some(felt) = self.feeling(frame, subject.clone(), &predicate, &after) {
            return felt;
        }
        let alone = |r: Range<usize>, origin: Origin| self.phrase(&[r], 0..0, origin);
        let subject_phrase = || subject.clone().and_then(|r| alone(r, Origin::Subject));
        let setting = self.setting(frame);
        if let Some(read) = self.by_lemma(frame, &predicate, subject.as_ref(), &after) {
            return read.with_setting(setting);
        }
        if lemma == "be" {
            return self.be(frame, subject.as_ref(), &predicate, &after, setting);
        }
        // "gives me the feeling that I'm doing a good job": what the feeling is, the clause
        // after "that", is the concept, with a frame of its own.
        if after.last().is_some_and(|(_, r)| self.names_a_clause(r)) {
            return FramePhrases::new(subject_phrase(), None, setting);
        }
        let object = core_object(&after);
        // "makes my coffee feel like a treat", "helps me be a better mum".
        let governs_verb = object
            .clone()
            .is_some_and(|r| self.has_class(r, &[WordClass::Verb, WordClass::Auxiliary]));
        if lexicon::is_causative_verb(lemma)
            && !lexicon::is_content_causative(lemma)
            && governs_verb
        {
            // "makes my coffee feel like a treat": the governed verb has a frame of its own.
            return FramePhrases::new(subject_phrase(), None, setting);
        }
        if lexicon::is_content_causative(lemma)
            && governs_verb
            && !self.ceases(lemma, object.as_ref())
        {
            // "kept making me miss the train": an aspect of the governed verb.
            return FramePhrases::new(subject_phrase(), None, setting);
        }
        if lexicon::is_causative_verb(lemma)
            && !lexicon::is_content_causative(lemma)
            && felt_by_speaker
        {
            // "That puts me in a calmer mood", "gives me a sense of freedom": what the
            // respondent is brought to is the concept; the verb is the link to it.
            if let Some(main) = self.brought_to(&after) {
                return FramePhrases::new(subject_phrase(), Some(main), setting);
            }
        }
        let content_object = object
            .clone()
            .or_else(|| after.first().map(|(_, r)| r.clone()))
            .filter(|r| !self.is_infinitive(r) && self.has_content(r.clone()))
            .map(|r| self.with_own(r, &after));
        let result = lexicon::is_result_verb(lemma)
            && (self.ends_in_participle(object.as_ref()) || self.object_then_state(&after));
        let motion = moves(lemma, &after);
        let becomes = self.changes_state(lemma, content_object.as_ref());
        // "I'm not buying bottles": what one no longer does is the concept, verb and all. What
        // one lacks or can do without stays its object ("it doesn't have the beany aftertaste",
        // "I don't need the noise cancelling at home").
        let refrained = frame.negated && lexicon::is_consuming_verb(lemma);
        if lexicon::is_light_verb(lemma) && !result && !motion && !becomes && !refrained {
            if let Some(object) = content_object {
                let mut main = alone(object, Origin::Predicate);
                if let Some(m) = main
                    .as_mut()
                    .filter(|_| lemma == "have" && of_product(frame))
                {
                    m.of_product = true;
                }
                return FramePhrases::new(subject_phrase(), main, setting);
            }
            if object.as_ref().is_some_and(|r| self.is_infinitive(r)) {
                return FramePhrases::new(subject_phrase(), None, setting);
            }
        }
        let mut parts: Vec<Range<usize>> = Vec::new();
        let linking = lexicon::is_linking_verb(lemma);
        // A content causative keeps its subject apart, as the cause it links from ("making my
        // own latte saves money"); any other verb takes it in ("charger rejected my card").
        // "The app kept timing out" is an aspect, not a cause: "keep" before an "-ing" word.
        let aspectual = object
            .as_ref()
            .and_then(|r| self.word(r.start))
            .is_some_and(|w| w.norm.ends_with("ing"));
        let separate = lexicon::is_content_causative(lemma) && !aspectual;
        if let Some(s) = subject
            .clone()
            .filter(|s| !separate && !self.shared(s, &predicate))
        {
            parts.push(self.through_relative_pronoun(s, &predicate));
        }
        parts.extend(self.denials_before(frame));
        let predicate = self.with_degree(predicate);
        let tail = self.contiguous(&after, predicate.end, linking);
        let origin = self.clause_origin(&predicate, tail.is_empty());
        parts.push(predicate.clone());
        parts.extend(tail);
        self.drop_time_ago(&mut parts);
        let at = predicate.start;
        let main = self
            .phrase(&parts, predicate, origin)
            .filter(|p| p.words.len() >= 2)
            .map(|p| self.with_infinitive_denial(p, at));
        let subject = if separate { subject_phrase() } else { None };
        FramePhrases::new(subject, main, setting)
    }

    /// The frame's arguments after its verb, in text order, each cut before another frame's
    /// verb (a causative's governed verb aside) and the last one extended over a
    /// prepositional phrase the parser left out.
    fn after_verb(
        &self,
        frame: &SrlFrame,
        predicate: &Range<usize>,
    ) -> Vec<(ArgRole, Range<usize>)> {
        let causative = lexicon::is_causative_verb(&frame.lemma);
        let mut after: Vec<(ArgRole, Range<usize>)> = frame
            .arguments
            .iter()
            .filter(|a| a.span.start >= frame.predicate.end && a.role != ArgRole::Neg)
            .map(|a| {
                let range = self.range(&a.span);
                // A causative governs the next verb ("makes my coffee feel like a treat").
                if causative {
                    (a.role, range)
                } else {
                    (a.role, self.before_next_verb(range, predicate))
                }
            })
            .filter(|(_, r)| !r.is_empty())
            .collect();
        after.sort_by_key(|(_, r)| r.start);
        if let Some((_, last)) = after.last_mut() {
            *last = self.with_modifier(last.clone(), predicate);
        }
        after
    }

    /// A verb of feeling: "the price annoys me" is the stance on its subject, not a concept;
    /// "I was annoyed", "relieved" (a participle with no object) is the feeling itself.
    fn feeling(
        &self,
        frame: &SrlFrame,
        subject: Option<Range<usize>>,
        predicate: &Range<usize>,
        after: &[(ArgRole, Range<usize>)],
    ) -> Option<FramePhrases> {
        let affect = lexicon::affect_verb(&frame.lemma);
        if affect == 0 {
            return None;
        }
        if self.speaker_first(after) {
            let main = subject.and_then(|r| self.felt_about(r, affect));
            return Some(FramePhrases::new(None, main, self.setting(frame)));
        }
        // After "was" or a conjunction ("annoyed but also relieved"); "I hadn't bothered" is
        // no feeling.
        let before = (0..predicate.start).rev().find_map(|i| {
            self.word(i)
                .filter(|w| !matches!(w.class, WordClass::Adverb | WordClass::Negation))
        });
        let passive = before.is_some_and(|b| {
            b.class == WordClass::Conjunction
                || matches!(
                    b.norm.as_str(),
                    "was"
                        | "were"
                        | "am"
                        | "'m"
                        | "is"
                        | "'s"
                        | "are"
                        | "'re"
                        | "be"
                        | "been"
                        | "felt"
                        | "feel"
                        | "got"
                        | "get"
                )
        });
        // "I panicked": the respondent's own feeling, told with no object ("I hadn't bothered"
        // is a step not taken, read as a predicate).
        let felt_by_speaker = !frame.negated
            // Verbs of feeling that take no object ("I ended up driving" is no feeling).
            && matches!(frame.lemma.as_str(), "panic" | "worry" | "stress" | "relax")
            && frame.arguments.iter().any(|a| {
                a.role == ArgRole::Arg0
                    && a.span.end <= frame.predicate.start
                    && matches!(a.span.text.to_lowercase().as_str(), "i" | "we")
            });
        // "I was panicking a bit": a degree is no object.
        let no_object =
            core_object(after).is_none_or(|r| r.clone().all(|i| self.is_quantity_hedge(i)));
        let w = self
            .word(predicate.start)
            .filter(|w| {
                let form = w.norm.ends_with("ed") || w.norm.ends_with("ing");
                predicate.len() == 1 && form && (passive || felt_by_speaker)
            })
            .filter(|_| no_object)?;
        // A lone verb is otherwise no concept, so the phrase is made here.
        let felt = Phrase {
            label: w.norm.clone(),
            start: w.start,
            end: w.end,
            origin: Origin::Predicate,
            shape: super::Shape::Nominal,
            words: vec![w.norm.clone()],
            affect: 0,
            of_product: false,
        };
        Some(FramePhrases::new(None, Some(felt), self.setting(frame)))
    }

    /// The subject is another verb's, shared across a conjunction ("the site had taken the
    /// money but never passed the booking on"): the phrase would span the other clause.
    fn shared(&self, subject: &Range<usize>, predicate: &Range<usize>) -> bool {
        let between = subject.end..predicate.start;
        let joined = between
            .clone()
            .filter_map(|i| self.word(i))
            .any(|w| w.class == WordClass::Conjunction || w.clause_break);
        joined
            && self
                .predicates
                .iter()
                .any(|p| p.start >= between.start && p.end <= between.end)
    }

    /// The first argument after the verb is the respondent ("annoys me", "puts us in …").
    fn speaker_first(&self, after: &[(ArgRole, Range<usize>)]) -> bool {
        after.first().is_some_and(|(_, r)| {
            r.clone()
                .filter_map(|i| self.word(i))
                .any(|w| matches!(w.norm.as_str(), "me" | "us"))
        })
    }

    /// "get more done at work", "get my work done faster": a participle that ends the
    /// object is the result the verb brings about, so the verb stays in the phrase. Inside
    /// the object it only describes it ("have a sealed carton", "get the sweetened one").
    fn ends_in_participle(&self, object: Option<&Range<usize>>) -> bool {
        object.cloned().is_some_and(|r| {
            r.into_iter().any(|i| {
                let participle = self
                    .word(i)
                    .is_some_and(|w| lexicon::is_participle(&w.norm));
                let ends_the_phrase = self.word(i + 1).is_none_or(|w| {
                    matches!(
                        w.class,
                        WordClass::Punctuation
                            | WordClass::Preposition
                            | WordClass::Adverb
                            | WordClass::Adjective
                            | WordClass::Conjunction
                            | WordClass::Subordinator
                    )
                });
                participle && ends_the_phrase
            })
        })
    }

    /// "get my head straight", "get the kids ready": the object and, right after it, the
    /// state the verb brings it to (an argument of adjectives alone).
    fn object_then_state(&self, after: &[(ArgRole, Range<usize>)]) -> bool {
        after.windows(2).any(|pair| match pair {
            [(ArgRole::Arg1, object), (_, state)] => {
                state.start == object.end
                    && !state.is_empty()
                    && state.clone().all(|i| {
                        self.word(i).is_some_and(|w| {
                            w.class == WordClass::Adjective
                                || (w.class == WordClass::Adverb
                                    && lexicon::is_intensifier(&w.norm))
                        })
                    })
            }
            _ => false,
        })
    }

    /// The subject of a verb of feeling, as the concept the feeling is about.
    fn felt_about(&self, subject: Range<usize>, affect: i8) -> Option<Phrase> {
        let mut p = self.phrase(&[subject], 0..0, Origin::Subject)?;
        p.affect = affect;
        Some(p)
    }

    /// The phrase of what a causative verb brings the respondent to: its arguments after
    /// "me" or "us", while they follow each other ("puts me | in a calmer mood").
    fn brought_to(&self, after: &[(ArgRole, Range<usize>)]) -> Option<Phrase> {
        let mut rest: Vec<Range<usize>> = Vec::new();
        let mut end: Option<usize> = None;
        for (_, r) in after
            .iter()
            .skip(1)
            .filter(|(role, _)| *role != ArgRole::Neg)
        {
            if end.is_some_and(|e| !self.joined(e, r.start)) {
                break;
            }
            rest.push(r.clone());
            end = Some(r.end);
        }
        self.phrase(&rest, 0..0, Origin::Predicate)
    }

    /// "We stopped talking properly", "I stopped going to the gym": "stop" with an
    /// "-ing" verb right after it says the doing ended, and stays in the label (where "it
    /// stops me worrying" brings the respondent to what follows).
    fn ceases(&self, lemma: &str, object: Option<&Range<usize>>) -> bool {
        lemma == "stop"
            && object
                .and_then(|r| self.word(r.start))
                .is_some_and(|w| w.norm.ends_with("ing") && w.class == WordClass::Verb)
    }

    /// `range` is "the feeling", "a sense" or "the impression" right before a "that" clause.
    fn names_a_clause(&self, range: &Range<usize>) -> bool {
        let content: Vec<&str> = range
            .clone()
            .filter_map(|i| self.word(i))
            .filter(|w| w.class != WordClass::Determiner)
            .map(|w| w.norm.as_str())
            .collect();
        let empty = matches!(
            content.as_slice(),
            ["feeling" | "sense" | "impression" | "idea"]
        );
        empty && self.word(range.end).is_some_and(|w| w.norm == "that")
    }

    /// `range` up to the first word of another frame's predicate: "feeling bloated | means",
    /// "my kids to | grow up" — that verb's frame has a phrase of its own.
    fn before_next_verb(&self, range: Range<usize>, own: &Range<usize>) -> Range<usize> {
        let cut = range.clone().find(|&i| {
            !own.contains(&i) && self.predicates.iter().any(|p| p != own && p.contains(&i))
        });
        match cut {
            Some(c) => range.start..c,
            None => range,
        }
    }

    /// `range` extended over a prepositional phrase right after it that the parser left out of
    /// every argument ("a slow start | to the day", "a sense | of freedom"): "to", "of",
    /// "for", "with" or "from" and the noun group after it, up to another verb or a break.
    fn with_modifier(&self, range: Range<usize>, own: &Range<usize>) -> Range<usize> {
        let joins = self.word(range.end).is_some_and(|w| {
            w.class == WordClass::Preposition
                && !w.clause_break
                && matches!(w.norm.as_str(), "to" | "of" | "for" | "with" | "from")
        });
        if !joins || range.is_empty() {
            return range;
        }
        let mut end = range.end + 1;
        while self.word(end).is_some_and(|w| {
            matches!(
                w.class,
                WordClass::Determiner | WordClass::Adjective | WordClass::Noun | WordClass::Number
            ) && !w.clause_break
                && !self.predicates.iter().any(|p| p != own && p.contains(&end))
        }) {
            end += 1;
        }
        let has_noun = (range.end + 1..end)
            .filter_map(|i| self.word(i))
            .any(|w| w.class == WordClass::Noun);
        if has_noun { range.start..end } else { range }
    }

    /// Which words belong to fixed phrases of talk ("to be honest"): no frame, fragment or
    /// label is read from them.
    pub(super) fn fillers(&self) -> Vec<bool> {
        let mut covered = vec![false; self.words.len()];
        for phrase in lexicon::FILLER_PHRASES {
            let parts: Vec<&str> = phrase.split_whitespace().collect();
            let n = parts.len();
            for start in 0..self.words.len().saturating_sub(n.saturating_sub(1)) {
                let hit = parts
                    .iter()
                    .enumerate()
                    .all(|(k, p)| self.word(start + k).is_some_and(|w| w.norm == *p));
                if hit {
                    for c in covered.iter_mut().skip(start).take(n) {
                        *c = true;
                    }
                }
            }
        }
        covered
    }

    /// Word `i` belongs to a fixed phrase of talk.
    pub(super) fn is_filler(&self, i: usize) -> bool {
        self.filler.get(i).copied().unwrap_or(false)
    }

    /// Joins fragment `p` to the phrase it modifies when a preposition alone separates them
    /// ("a slow start | to | the day", "a healthy diet | for | the kids"): a prepositional
    /// phrase the parser left out of the argument before it. Returns whether it was joined.
    pub(super) fn attach(&self, list: &mut [Phrase], p: &Phrase) -> bool {
        let Some(first) = self.words.iter().position(|w| w.start == p.start) else {
            return false;
        };
        let Some(prep) = first.checked_sub(1).and_then(|i| self.word(i)) else {
            return false;
        };
        let Some(before) = first.checked_sub(2).and_then(|i| self.word(i)) else {
            return false;
        };
        let joinable = prep.class == WordClass::Preposition
            && !prep.clause_break
            && matches!(prep.norm.as_str(), "to" | "of" | "for" | "with" | "from");
        if !joinable {
            return false;
        }
        let Some(host) = list
            .iter_mut()
            .find(|q| q.end == before.end && q.origin != Origin::Fragment)
        else {
            return false;
        };
        host.end = p.end;
        host.words.push(prep.norm.clone());
        host.words.extend(
            self.words
                .iter()
                .filter(|w| w.start >= p.start && w.end <= p.end)
                .filter(|w| w.class != WordClass::Punctuation)
                .map(|w| w.norm.clone()),
        );
        host.label = host.words.join(" ");
        true
    }

    /// The frame's subject when it is a noun phrase with content ("the creamy texture", not
    /// "it", not a clause): its agent or patient before the verb, or a lone word the parser
    /// gave another role before the verb ("Family matters").
    fn subject(&self, frame: &SrlFrame) -> Option<Range<usize>> {
        let before: Vec<&Argument> = frame
            .arguments
            .iter()
            .filter(|a| a.span.end <= frame.predicate.start)
            .collect();
        if let Some(core) = before
            .iter()
            .find(|a| matches!(a.role, ArgRole::Arg0 | ArgRole::Arg1))
        {
            let range = self.range(&core.span);
            let verbal = [WordClass::Verb, WordClass::Auxiliary];
            // A verb inside is only a relative clause's ("someone people can trust").
            let no_verb = |r: Range<usize>| {
                let first = r.clone().find(|&i| self.has_class(i..i + 1, &verbal));
                first.is_none_or(|f| {
                    let nominal = |k: usize| {
                        self.word(k).is_some_and(|w| {
                            matches!(w.class, WordClass::Noun | WordClass::Pronoun)
                        })
                    };
                    f >= r.start + 2 && nominal(f - 1) && nominal(f - 2)
                })
            };
            let nominal = no_verb(range.clone());
            // "Being patient (makes me …)": a gerund phrase with no other verb in it.
            let gerund = self.word(range.start).is_some_and(|w| {
                w.norm.ends_with("ing") && matches!(w.class, WordClass::Verb | WordClass::Auxiliary)
            }) && no_verb(range.start + 1..range.end);
            // "Being there for her": the idiom's content is being present for someone.
            let being_there = self.word(range.start).is_some_and(|w| w.norm == "being")
                && self
                    .word(range.start + 1)
                    .is_some_and(|w| w.norm == "there");
            let content = self.has_content(range.clone()) || being_there;
            return ((nominal || gerund) && content).then_some(range);
        }
        // The tagger reads a sentence-initial noun before an intransitive verb as a manner
        // adverb ("Family matters"): one word that is no hedge or intensifier is the subject.
        let manner = before.iter().find(|a| a.role == ArgRole::Mnr)?;
        let range = self.range(&manner.span);
        let word = self.word(range.start).filter(|_| range.len() == 1)?;
        let plain = !lexicon::is_intensifier(&word.norm)
            && !lexicon::is_hedge(&word.norm)
            && !lexicon::is_empty_word(&word.norm);
        plain.then_some(range)
    }

    /// A time or place phrase before the verb with a noun of substance ("on school days",
    /// "at the services"), as the scene of the event.
    fn setting(&self, frame: &SrlFrame) -> Option<Phrase> {
        let arg = frame.arguments.iter().find(|a| {
            matches!(a.role, ArgRole::Tmp | ArgRole::Loc) && a.span.end <= frame.predicate.start
        })?;
        let range = self.range(&arg.span);
        let has_noun = range.clone().filter_map(|i| self.word(i)).any(|w| {
            matches!(w.class, WordClass::Noun | WordClass::Number)
                && !lexicon::is_empty_word(&w.norm)
        });
        if !has_noun {
            return None;
        }
        self.phrase(&[range], 0..0, Origin::Setting)
    }

    /// The predicate extended over degree words right after it ("waste less", "froths
    /// better") and over a particle before "of", "on" or "with" ("running out of charge"),
    /// which the parser leaves out of every argument.
    fn with_degree(&self, predicate: Range<usize>) -> Range<usize> {
        let mut end = predicate.end;
        while self.word(end).is_some_and(|w| {
            let next = self.word(end + 1);
            lexicon::is_degree_word(&w.norm)
                || (matches!(w.class, WordClass::Particle | WordClass::Preposition)
                    && lexicon::is_particle(&w.norm)
                    && next.is_some_and(|n| {
                        matches!(n.norm.as_str(), "of" | "on" | "with")
                            || n.class == WordClass::Punctuation
                    }))
                // "he sleeps through, and …", "the drive flies by.": a preposition of passing
                // with nothing after it in its clause is the verb's. Others left at a clause's
                // end belong to a relative ("what I live for", "turns into").
                || (w.class == WordClass::Preposition
                    && matches!(w.norm.as_str(), "through" | "by" | "around" | "along")
                    && next.is_none_or(|n| n.class == WordClass::Punctuation))
        }) {
            end += 1;
        }
        predicate.start..end
    }

    /// The arguments after a verb that belong in its label: objects, descriptions, manner,
    /// direction and place, a "for" purpose or duration, and a time phrase right after the
    /// verb ("start the day"); in text order, stopping at the first gap with a clause break.
    /// A linking verb takes whatever comes first ("feel in control of my day").
    fn contiguous(
        &self,
        after: &[(ArgRole, Range<usize>)],
        from: usize,
        linking: bool,
    ) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut end = from;
        for (i, (role, range)) in after.iter().enumerate() {
            let starts_with = |word: &str| self.word(range.start).is_some_and(|w| w.norm == word);
            let wanted = match role {
                ArgRole::Arg1 | ArgRole::Arg2 | ArgRole::Mnr | ArgRole::Dir | ArgRole::Loc => true,
                ArgRole::Prp | ArgRole::Tmp if starts_with("for") => true,
                // How often is part of what is done ("charge them once a week").
                ArgRole::Tmp if starts_with("once") || starts_with("twice") => true,
                // How long is part of it too ("waited six hours", "lasts twenty hours").
                ArgRole::Tmp
                    if range.start == from
                        && self
                            .word(range.start)
                            .is_some_and(|w| w.class == WordClass::Number) =>
                {
                    true
                }
                ArgRole::Tmp => {
                    (range.start == from || i > 0) && (starts_with("the") || starts_with("every"))
                }
                _ => false,
            } || (linking && i == 0);
            if !wanted || !self.joined(end, range.start) {
                break;
            }
            out.push(range.clone());
            end = range.end;
        }
        out
    }

    /// Cuts a span of time before "ago" off the end of `parts` ("switched to oat milk two
    /// years ago" → "switched to oat milk"): when it happened is a circumstance, not part of
    /// the concept.
    fn drop_time_ago(&self, parts: &mut Vec<Range<usize>>) {
        let Some(end) = parts.iter().map(|r| r.end).max() else {
            return;
        };
        if self.word(end).is_none_or(|w| w.norm != "ago") {
            return;
        }
        let mut cut = end;
        while cut > 0
            && self.word(cut - 1).is_some_and(|w| {
                w.class == WordClass::Number || lexicon::is_time_span_word(&w.norm)
            })
        {
            cut -= 1;
        }
        if cut == end {
            return;
        }
        parts.retain_mut(|r| {
            r.end = r.end.min(cut);
            r.start < r.end
        });
    }

    /// At most two words lie between word `end` and word `start`, none a clause break or a
    /// conjunction.
    fn joined(&self, end: usize, start: usize) -> bool {
        let gap = end.min(start)..start;
        gap.len() <= 2
            && gap.filter_map(|i| self.word(i)).all(|w| {
                !w.clause_break
                    && !matches!(w.class, WordClass::Conjunction | WordClass::Subordinator)
            })
    }

    /// A frame of "be": a way of being after a gerund "being", a description otherwise.
    fn be(
        &self,
        frame: &SrlFrame,
        subject: Option<&Range<usize>>,
        predicate: &Range<usize>,
        after: &[(ArgRole, Range<usize>)],
        setting: Option<Phrase>,
    ) -> FramePhrases {
        if self.is_gerund_being(predicate) {
            return FramePhrases::new(None, self.way_of_being(predicate, after), setting);
        }
        let mut read = self.copular(subject, after).with_setting(setting);
        if let Some(main) = read.main.as_mut() {
            main.of_product |= of_product(frame);
            // "It's not watery", "I'm not anxious about bills": a denied description ("nobody
            // is responsible for those units" is denied of everyone in `frame`).
            if frame.negated && nobody(frame).is_none() {
                main.deny();
            }
        }
        read
    }

    /// "… before everyone wakes up", "until the kids get home": a clause of a subject and a
    /// verb in the present alone, opened by a subordinator of time, says when, like a time
    /// phrase; in the past it tells an event ("until the nurse came back"). Anything else is
    /// a predicate. `bare` when nothing follows the verb.
    fn clause_origin(&self, predicate: &Range<usize>, bare: bool) -> Origin {
        let present = self
            .word(predicate.start)
            .is_some_and(|w| srl::tense_of(&w.norm) != Some(Tense::Past));
        // The word before the subject's noun group, which the parser may have left out.
        let nominal = |k: usize| {
            self.in_noun_group(k) || self.word(k).is_some_and(|w| w.class == WordClass::Pronoun)
        };
        let mut start = predicate.start;
        while start > predicate.start.saturating_sub(4) && start > 0 && nominal(start - 1) {
            start -= 1;
        }
        let opener = start.checked_sub(1).and_then(|k| self.word(k));
        let of_time = opener.is_some_and(|w| {
            w.class == WordClass::Subordinator
                && matches!(
                    w.norm.as_str(),
                    "before" | "after" | "until" | "till" | "while" | "once"
                )
        });
        if bare && of_time && present {
            Origin::Setting
        } else {
            Origin::Predicate
        }
    }

    /// "I suppose being a present parent is what matters": a way of being, whoever the parser
    /// made its subject.
    fn way_of_being(
        &self,
        predicate: &Range<usize>,
        after: &[(ArgRole, Range<usize>)],
    ) -> Option<Phrase> {
        let mut parts = vec![predicate.clone()];
        parts.extend(self.contiguous(after, predicate.end, true));
        self.phrase(&parts, predicate.clone(), Origin::Predicate)
            .filter(|p| p.words.len() >= 2)
    }

    /// The predicate is a gerund "being" on its own, not a progressive ("was being silly").
    fn is_gerund_being(&self, predicate: &Range<usize>) -> bool {
        let being = predicate.len() == 1
            && self
                .word(predicate.start)
                .is_some_and(|w| w.norm == "being");
        let progressive = predicate
            .start
            .checked_sub(1)
            .and_then(|p| self.word(p))
            .is_some_and(|w| w.class == WordClass::Auxiliary);
        being && !progressive
    }

    /// `object` and a "to myself" or "for ourselves" right after it: "ten minutes to myself"
    /// is time of one's own, not a span of time.
    fn with_own(&self, object: Range<usize>, after: &[(ArgRole, Range<usize>)]) -> Range<usize> {
        let own = after.iter().find(|(_, r)| {
            r.start == object.end
                && r.len() == 2
                && self
                    .word(r.start)
                    .is_some_and(|w| matches!(w.norm.as_str(), "to" | "for"))
                && self
                    .word(r.start + 1)
                    .is_some_and(|w| srl::is_reflexive(&w.norm))
        });
        match own {
            Some((_, r)) => object.start..r.end,
            None => object,
        }
    }

    /// Verbs whose reading their lemma decides: "Family matters most to me" (the subject is
    /// what matters), "I go for the barista one", "it comes down to self-respect" (what is
    /// chosen or pointed at is the concept).
    fn by_lemma(
        &self,
        frame: &SrlFrame,
        predicate: &Range<usize>,
        subject: Option<&Range<usize>>,
        after: &[(ArgRole, Range<usize>)],
    ) -> Option<FramePhrases> {
        if let Some(read) = self.person_matters(frame, predicate) {
            return Some(read);
        }
        let lemma = frame.lemma.as_str();
        let alone = |r: Range<usize>, origin: Origin| self.phrase(&[r], 0..0, origin);
        if lexicon::is_value_verb(lemma) {
            let main = subject.and_then(|r| alone(r.clone(), Origin::Predicate));
            return Some(FramePhrases::new(None, main, None));
        }
        let chosen = chosen(lemma, after, |i| self.word(i))?;
        let subject_phrase = subject.and_then(|r| alone(r.clone(), Origin::Subject));
        Some(FramePhrases::new(
            subject_phrase,
            alone(chosen, Origin::Predicate),
            None,
        ))
    }

    /// "I want her to feel like she matters more than my job": a person who matters is no
    /// thing that matters; the clause is the concept, with the comparison after it.
    fn person_matters(&self, frame: &SrlFrame, predicate: &Range<usize>) -> Option<FramePhrases> {
        if frame.lemma != "matter" {
            return None;
        }
        let person = frame
            .arguments
            .iter()
            .filter(|a| a.span.end <= frame.predicate.start)
            .map(|a| self.range(&a.span))
            .find(|r| {
                r.len() == 1
                    && self.word(r.start).is_some_and(|w| {
                        matches!(w.norm.as_str(), "she" | "he" | "they" | "i" | "you" | "we")
                    })
            })?;
        let compared = self
            .word(predicate.end)
            .is_some_and(|w| matches!(w.norm.as_str(), "more" | "most" | "less"));
        let mut end = predicate.end;
        while compared
            && self.word(end).is_some_and(|w| {
                !w.clause_break
                    && !matches!(
                        w.class,
                        WordClass::Punctuation | WordClass::Conjunction | WordClass::Subordinator
                    )
            })
        {
            end += 1;
        }
        let clause = person.start..end;
        let main = self.phrase(
            std::slice::from_ref(&clause),
            predicate.clone(),
            Origin::Predicate,
        );
        Some(FramePhrases::new(None, main, None))
    }

    /// A denial with the "just" after it ("not just surviving the shifts"): merely that, which
    /// the respondent does not deny.
    /// `p`, denied when its verb (at `i`) is an infinitive denied before its "to" ("I tried
    /// not to shout", "she told me not to worry"): what the respondent keeps from doing.
    fn with_infinitive_denial(&self, mut p: Phrase, i: usize) -> Phrase {
        let at = |back: usize| i.checked_sub(back).and_then(|k| self.word(k));
        if at(1).is_some_and(|w| w.class == WordClass::Infinitive)
            && at(2).is_some_and(|w| matches!(w.norm.as_str(), "not" | "never"))
        {
            p.deny();
        }
        p
    }

    /// The words of `frame`'s denials before its verb ("not", "just not"), when it is denied.
    fn denials_before(&self, frame: &SrlFrame) -> Vec<Range<usize>> {
        if !frame.negated {
            return Vec::new();
        }
        frame
            .arguments
            .iter()
            .filter(|a| a.role == ArgRole::Neg && a.span.end <= frame.predicate.start)
            .map(|a| self.merely(self.range(&a.span)))
            .collect()
    }

    fn merely(&self, neg: Range<usize>) -> Range<usize> {
        let just = self
            .word(neg.end)
            .is_some_and(|w| matches!(w.norm.as_str(), "just" | "only" | "merely"));
        if just { neg.start..neg.end + 1 } else { neg }
    }

    /// "I got pretty low", "to get going": a verb of coming into a state, with a state after
    /// it, stays in the label.
    fn changes_state(&self, lemma: &str, object: Option<&Range<usize>>) -> bool {
        lexicon::is_state_change_verb(lemma) && object.is_some_and(|r| self.is_state(r.clone()))
    }

    /// The words describe a state: adjectives and their adverbs ("pretty low"), or one word
    /// in "-ing" ("going").
    fn is_state(&self, range: Range<usize>) -> bool {
        let words: Vec<&TaggedWord> = range.filter_map(|i| self.word(i)).collect();
        let adjectival = words.iter().any(|w| w.class == WordClass::Adjective)
            && words
                .iter()
                .all(|w| matches!(w.class, WordClass::Adjective | WordClass::Adverb));
        let gerund = matches!(words.as_slice(), [w] if w.norm.ends_with("ing"));
        adjectival || gerund
    }

    fn has_class(&self, range: Range<usize>, classes: &[WordClass]) -> bool {
        range
            .filter_map(|i| self.word(i))
            .any(|w| classes.contains(&w.class))
    }

    /// "be": the description with what follows it, joined with a content subject when both
    /// are one or two words ("the price is a bit high" → "high price", "the packaging was a
    /// pain" → "packaging pain").
    fn copular(
        &self,
        subject: Option<&Range<usize>>,
        after: &[(ArgRole, Range<usize>)],
    ) -> FramePhrases {
        // "I'm still, you know, in charge of my own life": a time before the description is
        // not part of it.
        let first = after
            .iter()
            .position(|(role, _)| *role == ArgRole::Arg2)
            .or_else(|| {
                after
                    .iter()
                    .position(|(role, _)| !matches!(role, ArgRole::Tmp | ArgRole::Neg))
            })
            .unwrap_or(0);
        let rest = after.get(first..).unwrap_or_default();
        // "who I want to be at work", "when I'm at home": where, a scene, not a rung.
        let whereabouts = matches!(rest, [(ArgRole::Loc, place), ..] if self.is_whereabouts(place));
        let mut description: Vec<Range<usize>> = Vec::new();
        let mut end = None;
        for (_, next) in rest {
            if end.is_some_and(|e| !self.joined(e, next.start)) {
                break;
            }
            description.push(next.clone());
            end = Some(next.end);
        }
        if let Some(last) = description.last_mut() {
            *last = self.through_wh_clause(last.clone());
        }
        // "The main reason is comfort": a subject that only points at the description.
        let pointer = subject.is_some_and(|s| {
            s.clone()
                .filter_map(|i| self.word(i))
                .any(|w| w.class == WordClass::Noun && lexicon::is_pointer_noun(&w.norm))
        });
        let subject = subject.filter(|_| !pointer);
        // "The company was mostly in Singapore": an adverb before the place is not the
        // description.
        let placed = rest.iter().skip_while(|(_, r)| {
            r.clone()
                .all(|i| self.word(i).is_some_and(|w| w.class == WordClass::Adverb))
        });
        if let (Some(s), Some((ArgRole::Loc | ArgRole::Tmp, place))) =
            (subject, placed.clone().next())
            && let Some(somewhere) = self.someone_somewhere(s, place)
        {
            return FramePhrases::new(None, Some(somewhere), None);
        }
        // "The creamy texture is the main thing for me": a description whose only nouns point
        // back at the subject says how much it matters; the subject is the concept.
        let subject_itself = subject
            .filter(|_| self.points_back(&description))
            .map(|s| self.phrase(std::slice::from_ref(s), 0..0, Origin::Predicate));
        if let Some(main) = subject_itself.or_else(|| {
            self.someone_described(&description)
                .or_else(|| subject.and_then(|s| self.who_they_are(s, &description)))
                .map(Some)
        }) {
            return FramePhrases::new(None, main, None);
        }
        let subject_phrase =
            subject.and_then(|s| self.phrase(std::slice::from_ref(s), 0..0, Origin::Subject));
        let origin = if whereabouts {
            Origin::Setting
        } else {
            Origin::Predicate
        };
        let described = self.phrase(&description, 0..0, origin);
        // "a world that is liveable for my children": the description of a relative clause's
        // noun is what the noun stands for here, so the two are one concept however long.
        let relative = subject.is_some_and(|s| {
            self.word(s.end)
                .is_some_and(|w| matches!(w.norm.as_str(), "that" | "which" | "who"))
        });
        if let (Some(s), Some(d), Some(sp)) = (&subject, &described, &subject_phrase)
            && (d.words.len() <= 2 || ((relative || of_service(d)) && d.words.len() <= 4))
            && sp.words.len() <= 2
        {
            let nominal = description.iter().flat_map(Clone::clone).any(|i| {
                !self.is_quantity_hedge(i)
                    && self.word(i).is_some_and(|w| w.class == WordClass::Noun)
            });
            // "the app was down": a state of service reads after its noun ("app down").
            let noun_first = nominal || relative || of_service(d);
            // "my own mum was stressed" → "stressed mum": "own" only stresses the possessive
            // the label drops.
            let subject_words: Vec<String> =
                sp.words.iter().filter(|w| *w != "own").cloned().collect();
            let (first_words, then) = if noun_first {
                (&subject_words, &d.words)
            } else {
                (&d.words, &subject_words)
            };
            let mut words = first_words.clone();
            words.extend(then.iter().cloned());
            let joined = Phrase {
                label: words.join(" "),
                start: self.word(s.start).map_or(d.start, |w| w.start),
                end: d.end.max(sp.end),
                origin: Origin::Predicate,
                shape: super::Shape::Nominal,
                words,
                affect: 0,
                of_product: false,
            };
            return FramePhrases::new(None, Some(joined), None);
        }
        if described.is_none()
            && let Some(judged) = self.judged(subject_phrase.as_ref(), &description)
        {
            return FramePhrases::new(None, Some(judged), None);
        }
        FramePhrases::new(subject_phrase, described, None)
    }

    /// The description's only nouns point back at the subject ("the main thing for me").
    fn points_back(&self, description: &[Range<usize>]) -> bool {
        let mut nouns = description
            .iter()
            .flat_map(Clone::clone)
            .filter(|&i| !self.is_quantity_hedge(i))
            .filter_map(|i| self.word(i))
            .filter(|w| w.class == WordClass::Noun)
            .peekable();
        nouns.peek().is_some() && nouns.all(|w| lexicon::is_empty_noun(&w.norm))
    }

    /// "I never have to think about charging them", "I don't worry about the battery": the
    /// denial, the verb and what it is about, in the respondent's words ("never have to think
    /// about charging them", "not worry about the battery").
    pub(super) fn thought_no_more(&self, frame: &SrlFrame) -> Option<Phrase> {
        let about = frame
            .arguments
            .iter()
            .find(|a| a.role == ArgRole::Arg1 && a.span.start >= frame.predicate.end);
        let denial = frame.arguments.iter().find(|a| a.role == ArgRole::Neg)?;
        let spelled_out = matches!(denial.span.text.to_lowercase().as_str(), "never" | "not");
        // About nothing ("I didn't have to think"), the obligation is the phrase: "not have
        // to think".
        let from = match (spelled_out, about) {
            (true, _) => denial.span.start,
            (false, Some(_)) => frame.predicate.start,
            (false, None) => denial.span.end,
        };
        let range = self.range(&Span {
            start: from,
            end: about.map_or(frame.predicate.end, |a| a.span.end),
            text: String::new(),
        });
        let words: Vec<&TaggedWord> = range.filter_map(|i| self.word(i)).collect();
        let mut phrase = self.said_whole(&words, super::Shape::Verbal)?;
        if !spelled_out {
            phrase.deny();
        }
        // No longer having to think or worry about something is a relief the respondent
        // gained, whatever the thing is.
        phrase.affect = 1;
        Some(phrase)
    }

    /// `words` as one phrase, every word as the respondent said it.
    fn said_whole(&self, words: &[&TaggedWord], shape: super::Shape) -> Option<Phrase> {
        let (first, last) = (words.first()?, words.last()?);
        let said = self.answer.get(first.start..last.end)?;
        let mut label = said.split_whitespace().collect::<Vec<_>>().join(" ");
        // The capital of a sentence's first word is no part of what was said ("Nobody from
        // the operator …"); a name's and "I" are.
        if !first.name && first.norm != "i" {
            let mut chars = label.chars();
            if let Some(opening) = chars.next() {
                label = opening.to_lowercase().chain(chars).collect();
            }
        }
        Some(Phrase {
            label,
            start: first.start,
            end: last.end,
            origin: Origin::Predicate,
            shape,
            words: words.iter().map(|w| w.norm.clone()).collect(),
            affect: 0,
            of_product: false,
        })
    }

    /// "I want to be someone people can trust", "someone people feel they can come to": the
    /// person described by the clause after them is the concept, every word of it (the
    /// clause's own verbs are no concepts of their own).
    fn someone_described(&self, description: &[Range<usize>]) -> Option<Phrase> {
        let [range] = description else {
            return None;
        };
        let words: Vec<&TaggedWord> = range.clone().filter_map(|i| self.word(i)).collect();
        let first = words.first()?;
        let someone = matches!(first.norm.as_str(), "someone" | "somebody")
            && words.len() >= 3
            && words.iter().skip(1).any(|w| w.class == WordClass::Verb);
        if someone {
            self.said_whole(&words, super::Shape::Nominal)
        } else {
            None
        }
    }

    /// "My mum was a nurse", "my manager is a nightmare": what someone close to the respondent
    /// is, in the respondent's words from the person on ("mum was a nurse"), as a setting;
    /// "nurse" alone would code the respondent as one.
    fn who_they_are(&self, subject: &Range<usize>, description: &[Range<usize>]) -> Option<Phrase> {
        let [range] = description else {
            return None;
        };
        let from = subject.clone().find(|i| {
            self.word(*i)
                .is_some_and(|w| w.class != WordClass::Determiner)
        })?;
        let who: Vec<&TaggedWord> = (from..subject.end).filter_map(|i| self.word(i)).collect();
        let person = matches!(who.as_slice(), [.., head] if who.len() <= 2
            && head.class == WordClass::Noun
            && srl::is_person_word(&head.norm));
        let what: Vec<&TaggedWord> = range.clone().filter_map(|i| self.word(i)).collect();
        let named = matches!(what.as_slice(), [first, .., head] if what.len() <= 4
            && first.class == WordClass::Determiner
            && head.class == WordClass::Noun);
        if !(person && named) {
            return None;
        }
        let words: Vec<&TaggedWord> = (from..range.end).filter_map(|i| self.word(i)).collect();
        // Who someone else is sets the scene; it is no rung of the respondent's ladder.
        let mut phrase = self.said_whole(&words, super::Shape::Nominal)?;
        phrase.origin = Origin::Setting;
        Some(phrase)
    }

    /// "My manager was on holiday", "the IT person was in a different time zone": a noun
    /// group somewhere, or away, is one circumstance; apart, "holiday" and "manager" say
    /// neither.
    fn someone_somewhere(&self, subject: &Range<usize>, place: &Range<usize>) -> Option<Phrase> {
        let who: Vec<&TaggedWord> = subject
            .clone()
            .filter_map(|i| self.word(i))
            .skip_while(|w| w.class == WordClass::Determiner)
            .collect();
        let nominal = !who.is_empty()
            && who.len() <= 3
            && who.iter().any(|w| w.class == WordClass::Noun)
            && who
                .iter()
                .all(|w| matches!(w.class, WordClass::Noun | WordClass::Adjective));
        let at: Vec<&TaggedWord> = place.clone().filter_map(|i| self.word(i)).collect();
        let placed = at
            .first()
            .is_some_and(|w| w.class == WordClass::Preposition)
            && at.len() >= 2
            && at.len() <= 7
            && at
                .iter()
                .skip(1)
                .any(|w| matches!(w.class, WordClass::Noun | WordClass::Number));
        if !nominal || !placed {
            return None;
        }
        let words: Vec<String> = who.iter().chain(&at).map(|w| w.norm.clone()).collect();
        Some(Phrase {
            label: self.label_of(who.iter().chain(&at).copied()),
            start: who.first()?.start,
            end: at.last()?.end,
            origin: Origin::Predicate,
            shape: super::Shape::Nominal,
            words,
            affect: 0,
            of_product: false,
        })
    }

    /// "even though my card was fine", "my knees are bad": a judgement alone says nothing as a
    /// concept, but what it is said of, with it, does ("card fine"), where the thing alone
    /// would not. Praise is left to the thing praised ("the noise cancelling is really good"
    /// is the attribute "noise cancelling"), and so is how much it counts ("being there for
    /// my kids is non-negotiable").
    fn judged(&self, subject: Option<&Phrase>, description: &[Range<usize>]) -> Option<Phrase> {
        let [only] = description else {
            return None;
        };
        let words: Vec<&TaggedWord> = only
            .clone()
            .filter_map(|i| self.word(i))
            .filter(|w| !lexicon::is_intensifier(&w.norm))
            .collect();
        let [adjective] = words.as_slice() else {
            return None;
        };
        if adjective.class != WordClass::Adjective
            || !lexicon::is_evaluative(&adjective.norm)
            || lexicon::is_praise(&adjective.norm)
            || lexicon::is_weighing(&adjective.norm)
        {
            return None;
        }
        let mut judged = subject?.clone();
        judged.words.push(adjective.norm.clone());
        judged.label = judged.words.join(" ");
        judged.end = judged.end.max(adjective.end);
        judged.origin = Origin::Predicate;
        Some(judged)
    }

    /// A relative clause's `subject` with its "that" or "who" when the verb follows it ("the
    /// kind of person who throws stuff away").
    fn through_relative_pronoun(
        &self,
        subject: Range<usize>,
        predicate: &Range<usize>,
    ) -> Range<usize> {
        let pronoun = self
            .word(subject.end)
            .is_some_and(|w| matches!(w.norm.as_str(), "that" | "who"));
        if pronoun && subject.end + 1 == predicate.start {
            subject.start..predicate.start
        } else {
            subject
        }
    }

    /// `range` ending on a preposition before a "how", "what" or "who" clause, through that
    /// clause: "proud of how I treat people" is one description, not "proud of".
    fn through_wh_clause(&self, range: Range<usize>) -> Range<usize> {
        let opens = range
            .end
            .checked_sub(1)
            .and_then(|p| self.word(p))
            .is_some_and(|p| p.class == WordClass::Preposition)
            && self
                .word(range.end)
                .is_some_and(|w| matches!(w.norm.as_str(), "how" | "what" | "who"));
        if !opens {
            return range;
        }
        let sentence = self.word(range.end).map(|w| w.sentence);
        let mut end = range.end + 1;
        while let Some(w) = self.word(end) {
            if Some(w.sentence) != sentence
                || w.class == WordClass::Punctuation
                || w.clause_break
                || w.class == WordClass::Conjunction
            {
                break;
            }
            end += 1;
        }
        range.start..end
    }

    /// A frame with no concept in it: a time of life ("like when I was younger"), or "do"
    /// standing in for a verb said elsewhere ("I'd do it differently").
    pub(super) fn says_nothing(&self, frame: &SrlFrame) -> bool {
        let predicate = self.range(&frame.predicate);
        // "and so do I", "neither does my wife": the clause says again what the one before
        // said.
        let echo = predicate
            .start
            .checked_sub(1)
            .and_then(|i| self.word(i))
            .is_some_and(|w| matches!(w.norm.as_str(), "so" | "neither" | "nor"))
            && matches!(frame.lemma.as_str(), "do" | "be" | "have")
            && self.word(predicate.end).is_some_and(|w| {
                matches!(
                    w.class,
                    WordClass::Pronoun | WordClass::Determiner | WordClass::Noun
                )
            });
        if echo {
            return true;
        }
        let after = &self.after_verb(frame, &predicate);
        let stand_in = core_object(after).is_some_and(|r| {
            r.len() == 1
                && self.word(r.start).is_some_and(|w| {
                    matches!(
                        w.norm.as_str(),
                        "it" | "that" | "this" | "anything" | "nothing" | "something"
                    )
                })
        });
        match frame.lemma.as_str() {
            "be" => {
                self.time_of_life(frame, after)
                    || self.not_the_point(frame, after)
                    || self.frames_a_clause(&predicate)
            }
            // "when they're grown up": a stage of life, told as a time. "I don't want her to
            // grow up thinking mum is always tired": what she would think is what is said.
            "grow up" => {
                let empty = !after.iter().any(|(_, r)| self.has_content(r.clone()));
                // A verb of thinking carries a clause of its own; "grow up feeling listened
                // to" stays one phrase.
                let then_thinking = self.word(predicate.end).is_some_and(|w| {
                    matches!(
                        w.norm.as_str(),
                        "thinking" | "believing" | "knowing" | "assuming"
                    )
                });
                (self.someone_after_when(frame) && empty) || then_thinking
            }
            // "my husband went and queued", "I'll come and get it": the second verb says what
            // was done.
            "go" | "come" => {
                let end = self.range(&frame.predicate).end;
                self.word(end).is_some_and(|w| w.norm == "and")
                    && self
                        .word(end + 1)
                        .is_some_and(|w| w.class == WordClass::Verb)
            }
            "do" => stand_in && !after.iter().any(|(_, r)| self.has_content(r.clone())),
            // "so I went back": a return to what was used before, told in no words of its own.
            "go back" => !after.iter().any(|(_, r)| self.has_content(r.clone())),
            // "At home I don't bother", "I don't mind": an attitude with nothing it is about
            // ("I don't care about the brand" is kept). In a story, "I hadn't bothered" is a
            // step not taken, and kept.
            "bother" | "mind" | "care" => {
                let past = self
                    .word(predicate.start)
                    .is_some_and(|w| srl::tense_of(&w.norm) == Some(Tense::Past))
                    || predicate
                        .start
                        .checked_sub(1)
                        .and_then(|i| self.word(i))
                        .is_some_and(|w| {
                            matches!(w.norm.as_str(), "had" | "hadn't" | "didn't" | "did")
                        });
                !past && !after.iter().any(|(_, r)| self.has_content(r.clone()))
            }
            _ => false,
        }
    }

    /// "It's not really about the coffee, it's about getting home in one piece": what the
    /// respondent says the matter is not about is set aside, not coded as its denial.
    fn not_the_point(&self, frame: &SrlFrame, after: &[(ArgRole, Range<usize>)]) -> bool {
        let about = |r: &Range<usize>| self.word(r.start).is_some_and(|w| w.norm == "about");
        // "not anxious about bills" denies a description; only "about" itself is set aside.
        frame.negated
            && after.iter().any(|(_, r)| about(r))
            && after
                .iter()
                .all(|(_, r)| about(r) || !self.has_content(r.clone()))
    }

    /// "The difference was that at six o'clock there was a plan", "the problem is that the
    /// app said …": the subject only announces the clause after "that", which says the thing.
    fn frames_a_clause(&self, predicate: &Range<usize>) -> bool {
        let mut next = (predicate.end..).map_while(|i| self.word(i));
        next.find(|w| w.class != WordClass::Adverb)
            .is_some_and(|w| w.norm == "that" && w.class == WordClass::Subordinator)
    }

    /// "when I was younger", "back when we were kids", "when I was at uni": the respondent's
    /// stage of life after "when" dates the story.
    fn time_of_life(&self, frame: &SrlFrame, after: &[(ArgRole, Range<usize>)]) -> bool {
        let mut content = after
            .iter()
            .flat_map(|(_, r)| r.clone())
            .filter_map(|i| self.word(i))
            .filter(|w| {
                matches!(
                    w.class,
                    WordClass::Noun | WordClass::Adjective | WordClass::Verb
                )
            })
            .peekable();
        let stage = content.peek().is_some() && content.all(|w| lexicon::is_life_stage(&w.norm));
        stage && self.someone_after_when(frame)
    }

    /// The frame's subject is someone, right after "when" ("when I was …", "when they're
    /// grown up").
    fn someone_after_when(&self, frame: &SrlFrame) -> bool {
        let Some(subject) = frame
            .arguments
            .iter()
            .find(|a| {
                a.span.end <= frame.predicate.start
                    && matches!(a.role, ArgRole::Arg0 | ArgRole::Arg1)
            })
            .map(|a| self.range(&a.span))
        else {
            return false;
        };
        let after_when = subject
            .start
            .checked_sub(1)
            .and_then(|i| self.word(i))
            .is_some_and(|w| w.norm == "when");
        // "when they're grown up", "when the kids were little": anyone's stage of life.
        let speaker = subject.clone().filter_map(|i| self.word(i)).all(|w| {
            matches!(
                w.norm.as_str(),
                "i" | "we" | "they" | "he" | "she" | "the" | "my" | "our"
            ) || crate::srl::is_person_word(&w.norm)
        }) && !subject.is_empty();
        after_when && speaker
    }

    fn is_infinitive(&self, range: &Range<usize>) -> bool {
        self.word(range.start).is_some_and(|w| {
            w.class == WordClass::Infinitive || (w.norm == "to" && range.len() > 1)
        })
    }

    /// A noun, adjective, number or verb that is not an empty word.
    fn has_content(&self, range: Range<usize>) -> bool {
        range.filter_map(|i| self.word(i)).any(|w| {
            matches!(
                w.class,
                WordClass::Noun | WordClass::Adjective | WordClass::Number | WordClass::Verb
            ) && !lexicon::is_empty_word(&w.norm)
        })
    }

    /// Noun and adjective phrases among the words no frame covers, cut at clause breaks; a
    /// preposition continues a phrase that has content when a noun phrase follows it ("part
    /// of being a good parent"). A phrase right after "like", "than", "unlike" or "as" is the
    /// standard of a comparison ("like almond milk"), not a concept.
    pub(super) fn fragments(&self, covered: &[bool]) -> Vec<Phrase> {
        let mut out = Vec::new();
        let mut run: Vec<usize> = Vec::new();
        for (i, w) in self.words.iter().enumerate() {
            let free = !covered.get(i).copied().unwrap_or(true);
            let continues = run
                .last()
                .and_then(|&l| self.word(l))
                .is_some_and(|l| l.sentence == w.sentence);
            // "Being someone people can rely on, that's …": a gerund "being" left outside
            // every frame takes the rest of its clause.
            let being = continues
                && run
                    .first()
                    .and_then(|&f| self.word(f))
                    .is_some_and(|f| f.norm == "being")
                && w.class != WordClass::Punctuation
                && !w.clause_break;
            let joins = free && (nominal(w) || being || (continues && self.bridges(i)));
            if joins && (continues || run.is_empty()) {
                run.push(i);
                continue;
            }
            self.flush(&mut run, &mut out);
            if free && nominal(w) {
                run.push(i);
            }
        }
        self.flush(&mut run, &mut out);
        out.retain(|p| {
            // "not sure" and "no idea" are answers about knowing, not concepts.
            !lexicon::UNSURE_PHRASES.contains(&p.label.as_str())
                && !matches!(p.label.as_str(), "sure" | "idea")
        });
        out
    }

    /// Word `i` is a preposition between content and a following noun phrase.
    fn bridges(&self, i: usize) -> bool {
        let Some(w) = self.word(i) else {
            return false;
        };
        let next_nominal = self.word(i + 1).is_some_and(|n| {
            matches!(
                n.class,
                WordClass::Determiner | WordClass::Adjective | WordClass::Noun | WordClass::Number
            ) || n.norm == "being"
        });
        w.class == WordClass::Preposition && !w.clause_break && next_nominal
    }

    /// The preposition at `i` follows "outside" or "out" ("outside of work").
    fn after_outside(&self, i: usize) -> bool {
        i.checked_sub(1)
            .and_then(|p| self.word(p))
            .is_some_and(|w| matches!(w.norm.as_str(), "outside" | "out"))
    }

    fn flush(&self, run: &mut Vec<usize>, out: &mut Vec<Phrase>) {
        let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
            return;
        };
        run.clear();
        let standard = first
            .checked_sub(1)
            .and_then(|p| self.word(p))
            .is_some_and(|p| matches!(p.norm.as_str(), "like" | "than" | "unlike" | "as"));
        // "on the train to work", "when I'm at home", "in the garden, in the car": a bare
        // noun after a preposition of place or direction says where, and is no concept of its
        // own.
        let noun = (first..=last)
            .find(|&i| {
                self.word(i)
                    .is_some_and(|w| w.class != WordClass::Determiner)
            })
            .unwrap_or(first);
        let whereabouts = noun == last
            && self
                .word(noun)
                .is_some_and(|w| w.class == WordClass::Noun && !w.name)
            && first
                .checked_sub(1)
                .and_then(|p| self.word(p))
                .is_some_and(|p| {
                    p.class == WordClass::Preposition
                        && (matches!(
                            p.norm.as_str(),
                            "to" | "at" | "in" | "on" | "by" | "from" | "around" | "near"
                        ) || (p.norm == "of" && self.after_outside(first - 1)))
                });
        // "rain or not", "busy or not": whatever it is, it makes no difference.
        let regardless = self.word(last + 1).is_some_and(|w| w.norm == "or")
            && self.word(last + 2).is_some_and(|w| w.norm == "not");
        // "a man … saw what was happening": a lone word before a question word is the verb
        // of a clause the tagger took for a noun.
        let verb_of_wh = first == last
            && self.word(last + 1).is_some_and(|w| {
                // Not "where", "who" or "why": "one place where anyone could see", "the man
                // who", "the reason why" are nouns with a relative clause.
                matches!(w.norm.as_str(), "what" | "how" | "whether")
            });
        if standard || whereabouts || regardless || verb_of_wh {
            return;
        }
        let run = std::iter::once(first..last + 1).collect::<Vec<_>>();
        if let Some(p) = self.phrase(&run, 0..0, Origin::Fragment) {
            out.push(p);
        }
    }
}

/// The frame's subject is "it", "they" or "this" alone: in an answer about a product,
/// what is or has something is the product.
fn of_product(frame: &SrlFrame) -> bool {
    frame.arguments.iter().any(|a| {
        a.span.end <= frame.predicate.start
            && matches!(a.role, ArgRole::Arg0 | ArgRole::Arg1)
            && matches!(
                a.span.text.trim().to_lowercase().as_str(),
                "it" | "they" | "this" | "these"
            )
    })
}

/// "got to the airport", "let it get below twenty percent": a light verb of motion keeps its
/// direction.
fn moves(lemma: &str, after: &[(ArgRole, Range<usize>)]) -> bool {
    after
        .first()
        .is_some_and(|(role, _)| *role == ArgRole::Dir || (*role == ArgRole::Loc && lemma == "get"))
}

/// What a verb of choosing or of summing up points at: "go for the barista one", "opt for
/// the cheapest", "settle on that one" (a definite object: "went for a coffee" is an outing),
/// "it comes down to self-respect", "it boils down to trust". Nothing else may come first.
fn chosen<'w>(
    lemma: &str,
    after: &[(ArgRole, Range<usize>)],
    word: impl Fn(usize) -> Option<&'w TaggedWord>,
) -> Option<Range<usize>> {
    let (_, first) = after.first()?;
    let preposition = word(first.start)?.norm.as_str();
    let definite = word(first.start + 1).is_some_and(|w| {
        matches!(
            w.norm.as_str(),
            "the" | "this" | "that" | "these" | "those" | "my" | "our"
        )
    });
    let choosing = matches!(
        (lemma, preposition),
        ("go" | "opt", "for") | ("settle" | "decide", "on")
    ) && definite
        && first.len() >= 3;
    let summing_up =
        matches!((lemma, preposition), ("come down" | "boil down", "to")) && first.len() >= 2;
    (choosing || summing_up).then(|| first.start + 1..first.end)
}

/// "The card reader had been down all day": a description of being out of service, for
/// however long.
fn of_service(description: &Phrase) -> bool {
    description
        .words
        .first()
        .is_some_and(|w| matches!(w.as_str(), "down" | "off"))
}

/// "nobody", "no one" or "nothing" as the frame's subject: what it says is denied of all.
/// "Neither of us" and "none of them" deny it too, and are no one in particular: the phrase
/// takes "not".
fn nobody(frame: &SrlFrame) -> Option<String> {
    frame.arguments.iter().find_map(|a| {
        let said = a.span.text.trim().to_lowercase();
        if !matches!(a.role, ArgRole::Arg0 | ArgRole::Arg1) || a.span.end > frame.predicate.start {
            return None;
        }
        if matches!(said.as_str(), "nobody" | "no one" | "nothing") {
            return Some(said);
        }
        let group = said
            .strip_prefix("neither of ")
            .or_else(|| said.strip_prefix("none of "));
        group
            .is_some_and(|g| !g.contains(' '))
            .then(|| "not".to_owned())
    })
}

/// The first object or description after the verb.
fn core_object(after: &[(ArgRole, Range<usize>)]) -> Option<Range<usize>> {
    after
        .iter()
        .find(|(role, _)| *role == ArgRole::Arg1)
        .or_else(|| after.iter().find(|(role, _)| *role == ArgRole::Arg2))
        .map(|(_, r)| r.clone())
}

/// A word that can be part of a noun or adjective phrase outside any frame.
fn nominal(w: &TaggedWord) -> bool {
    matches!(
        w.class,
        WordClass::Noun
            | WordClass::Adjective
            | WordClass::Number
            | WordClass::Determiner
            | WordClass::Negation
    ) || (w.class == WordClass::Adverb && lexicon::is_intensifier(&w.norm))
        || w.norm == "being"
}
