//! The small closed word lists offline understanding reads answers with: filler and light
//! verbs, hedges and intensifiers, certainty markers, an affect lexicon, negators and the cues
//! of concrete detail and reflection.
//!
//! Lists hold normalised single words (lowercase, contractions expanded as the SRL tokeniser
//! does: "n't" → "not"); multi-word cues are matched on word sequences by [`count_phrases`].
//! The lists are deliberately short and general: they describe how people talk in interviews,
//! not any one product or methodology.

/// Verbs of saying and thinking that frame an answer rather than carry content ("I think",
/// "you know", "I mean").
const FILLER_VERBS: &str = "think guess suppose reckon know mean say cover suppose wonder \
    remember forget ask tell";

/// Verbs whose object is the concept and the verb itself adds nothing to a label: "it has a
/// smooth mouthfeel" is the attribute "smooth mouthfeel".
const LIGHT_VERBS: &str = "be have like love prefer enjoy use buy get choose pick drink want \
    need hate dislike find give mean";

/// Light verbs that take a result ("get more done", "have it delivered"): with a participle
/// after the object, the verb is part of what is said.
const RESULT_VERBS: &str = "get have";

/// Verbs that say their subject comes into a state ("got pretty low", "went quiet", "grew
/// tired"): with a state after them, the verb is part of what is said.
const STATE_CHANGE_VERBS: &str = "get go grow turn become";

/// Past participles that do not end in "-ed".
const IRREGULAR_PARTICIPLES: &str = "done made gone seen taken given known paid built sold \
    brought bought kept sent caught stuck lost left hurt told found held";

/// Verbs that say their subject brings about their object ("X makes Y", "X helps me Y"): a
/// causal link inside one clause.
const CAUSATIVE_VERBS: &str = "make help let allow enable mean cause give keep save stop \
    prevent lead put";

/// Particles of phrasal verbs ("run out of", "give up on").
const PARTICLES: &str = "out up off down away back over";

/// Causative verbs that also say what happens ("keeps me full", "saves money"): their phrase
/// is a concept of its own, unlike "makes" or "helps".
const CONTENT_CAUSATIVES: &str = "keep save stop prevent";

/// Verbs whose description is the point: "feel less guilty", "tastes better".
const LINKING_VERBS: &str = "feel taste seem look sound smell become stay";

/// Verbs that say their subject matters: "family matters most", "price counts".
const VALUE_VERBS: &str = "matter count";

/// Degree words that the parser leaves outside every argument: "waste less", "works better".
const DEGREE_WORDS: &str = "less more better worse well fewer";

/// Verbs of choosing or using the product: "switched to oat milk" says no more than the
/// topic itself.
const CHOICE_VERBS: &str = "switch buy use choose drink try pick order start get have sign \
    subscribe join";

/// Words that soften a claim; dropped from labels, counted by the certainty rubric.
const HEDGES: &str = "maybe perhaps probably possibly guess suppose somewhat apparently \
    presumably might";

/// Multi-word hedges.
pub(super) const HEDGE_PHRASES: [&str; 9] = [
    "i think",
    "i guess",
    "sort of",
    "kind of",
    "i suppose",
    "not really sure",
    "i would say",
    "more or less",
    "i believe",
];

/// Multi-word markers of not knowing or not answering.
pub(super) const UNSURE_PHRASES: [&str; 9] = [
    "not sure",
    "do not know",
    "no idea",
    "dunno",
    "can not remember",
    "cannot remember",
    "do not remember",
    "hard to say",
    "no clue",
];

/// Words that commit to a claim.
const CERTAINTY_WORDS: &str = "definitely certainly absolutely always never clearly obviously \
    sure exactly totally completely";

/// Words that only intensify or soften; dropped from labels ("so creamy" → "creamy").
const INTENSIFIERS: &str = "so very really quite pretty rather fairly extremely super just \
    honestly actually also still even again basically definitely totally absolutely literally \
    truly simply particularly especially maybe perhaps probably mostly usually generally lot";

/// Words that turn the stance of what follows ("not watery", "less guilty", "waste less").
const NEGATORS: &str = "not no never without less fewer nothing hardly avoid stop";

/// Positive affect.
const POSITIVE: &str = "like likes liked love loves loved enjoy enjoys enjoyed good great \
    better best nice lovely tasty delicious creamy smooth happy glad pleased treat treated \
    patient calm relaxed relieved relief helpful easy easier reliable fresh healthy healthier \
    comfortable convenient perfect excellent fantastic amazing wonderful brilliant fun \
    proud confident safe secure satisfied well care cares cared benefit worth welcome \
    welcomed included supported valued grateful thankful belonged";

/// Negative affect.
const NEGATIVE: &str = "hate hates hated dislike bad worse worst annoying annoyed \
    frustrating frustrated expensive pricey guilty waste wasted wasteful watery bland bitter \
    late stranded panicked panic panicking broken failed fail fails worried worry stressed stress \
    hassle problem problems difficult hard slow awful terrible horrible angry upset \
    disappointed disappointing useless rude cold stuck miss missed lost tired sluggish \
    bloated sick pain anxious nervous rejected confused unclear lonely isolated overwhelmed \
    unfair overpriced extortionate surcharge rip-off ripoff intolerant intolerance bloating \
    cramps headache headaches nausea snap snapped snappy snappier snapping grumpy grumpier irritable \
    impatient short-tempered moody frazzled bored boring fiddly knackered exhausted exhausting \
    drained tedious chore faff binned binning shout shouted shouting yelled yelling resentful \
    resented shattered miserable loud loudly noisy wrecked crash crashed crashing jittery \
    leak leaks leaked leaking spilt spilled \
    foggy groggy chaos chaotic ridiculous sleepy invisible afterthought ignored forgotten \
    embarrassed embarrassing awkward mortified mortifying humiliated humiliating gutted wound";

/// Affect words strong enough to move valence by two steps at once.
const STRONG_AFFECT: &str = "love loves loved hate hates hated amazing fantastic wonderful \
    brilliant perfect awful terrible horrible furious disgusting nightmare delighted";

/// Words of personal meaning and values: the respondent reasoning about themselves.
const REFLECTION_WORDS: &str = "matters matter important value values believe belief \
    principle principles myself realise realize realised realized priority priorities \
    meaning identity responsible proud guilt guilty conscience";

/// Multi-word cues of reflection about oneself.
pub(super) const REFLECTION_PHRASES: [&str; 10] = [
    "to me",
    "for me",
    "i care",
    "i want to be",
    "kind of person",
    "the way i was brought up",
    "i feel",
    "makes me feel",
    "thinking about it",
    "i realise",
];

/// Multi-word cues that introduce an example or a particular occasion.
pub(super) const EXAMPLE_PHRASES: [&str; 8] = [
    "for example",
    "for instance",
    "like when",
    "last week",
    "last time",
    "the other day",
    "last year",
    "this morning",
];

/// Words that name a particular time or occasion.
const OCCASION_WORDS: &str = "yesterday today tonight monday tuesday wednesday thursday \
    friday saturday sunday morning evening night weekend january february march april may \
    june july august september october november december once";

/// Units and amounts of a span of time, as in "two years ago" or "a couple of months ago".
const TIME_SPAN_WORDS: &str = "second seconds minute minutes hour hours day days week weeks \
    month months year years decade decades while ages a an one two three four five six seven \
    eight nine ten few couple of several some many about almost nearly over";

/// What one has or lacks the means of doing something with.
const RESOURCE_WORDS: &str = "time energy money patience headspace space room chance strength \
    bandwidth budget";

/// Vague words that stand in for content ("stuff", "things").
const VAGUE_WORDS: &str = "stuff things thing whatever something anything everything fine \
    okay ok";

/// Short replies that close a topic or decline to go on.
pub(super) const CLOSING_PHRASES: [&str; 9] = [
    "that is about it",
    "that 's about it",
    "that is it",
    "that 's it",
    "nothing else",
    "i do not care",
    "no comment",
    "move on",
    "covered everything",
];

/// Words never worth a concept on their own: pronouns, fillers and vague nouns.
const EMPTY_WORDS: &str = "i me my mine you your we our us they them their it its he him his \
    she her this that these those there here one ones thing things stuff lot bit way kind \
    sort something anything everything nothing someone everyone people yeah yes no ok okay \
    well um uh er erm hm hmm mm mhm ah oh ha haha gosh wow ugh eh sorry like time times end \
    whatever whichever whoever somebody anybody everybody ouch och aye hey yikes phew oops \
    argh meh duh whoa jeez blimey crikey ooh";

/// Words that judge or point rather than name: alone, a label made of them says how the
/// respondent rates something ("important", "alright") or where the talk is going ("the
/// point", "the main reason"), never what the thing is.
const EVALUATIVE_WORDS: &str = "important alright fine okay ok good great nice bad sick \
    lovely worth key crucial essential vital huge big main honest true right wrong \
    reason point thing things matter fact question answer idea truth deal part bit problem \
    issue case sense back comes asking bits looking nightmare pointless crazy awful terrible \
    brilliant amazing ridiculous annoying obvious helpful real non-negotiable optional bonus \
    godsend serious priority easy silly stupid daft weird odd strange mad insane nuts bonkers \
    ironic typical classic hilarious joke";

/// Evaluative words that say how much something counts ("non-negotiable", "a bonus"), not
/// what state it is in.
const WEIGHING_WORDS: &str = "real non-negotiable optional bonus godsend serious priority";

/// Nouns with no content of their own ("thing", "bit"): as a copular description they point
/// back at the subject ("the creamy texture is the main thing"), as a subject forward at the
/// description ("the best bit is the quiet").
const EMPTY_NOUNS: &str = "thing point deal bit part";

/// Nouns that, besides the [`EMPTY_NOUNS`], only point at what follows them in a copular
/// sentence ("the main reason is comfort", "the problem is the queue"): the description is the
/// concept. They carry a stance or a role, so they point forward only.
const POINTER_NOUNS: &str = "reason problem issue answer idea truth question fact";

/// Words of time that are no concept on their own ("day", "morning"), only the scene of one.
const TIME_WORDS: &str = "day days morning mornings evening evenings night nights week weeks \
    month months year years time times today tonight yesterday tomorrow weekend weekends hour \
    hours minute minutes moment now then early late halfway monday tuesday wednesday thursday \
    friday saturday sunday winter winters summer summers autumn spring quarter january february \
    march april june july august september october november december christmas easter \
    afternoon afternoons fortnight fortnights lunchtime weekday weekdays";

/// Stages of a life ("when I was younger", "when we were kids"): said after "when", they date
/// what the respondent tells, as a time would, and are no concept.
const LIFE_STAGES: &str = "young younger little small kid kids child children teenager \
    teenagers teen teens student students baby babies boy boys girl girls school uni university \
    college grown older adult adults grown-up grown-ups";

pub(super) fn is_life_stage(word: &str) -> bool {
    listed(LIFE_STAGES, word)
}

/// Number words ("twenty", "fifteen"): alone they are an amount, not a concept.
const NUMBER_WORDS: &str = "one two three four five six seven eight nine ten eleven twelve \
    thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty \
    sixty seventy eighty ninety hundred thousand half couple dozen";

/// Verbs of feeling whose object is the one who feels ("the price annoys me", "it nags at
/// me"): their subject is what the feeling is about, and the verb only sets its stance.
const NEGATIVE_AFFECT_VERBS: &str = "annoy bother irritate frustrate nag bug worry stress \
    upset anger scare frighten depress disappoint drive panic";
const POSITIVE_AFFECT_VERBS: &str = "please delight excite thrill cheer reassure comfort \
    calm relax relieve";

/// Fixed phrases of talk that carry no content ("to be honest", "thank god", "full stop"),
/// and talk about the talk itself ("if that makes sense", "sorry, tangent", "I can't even
/// describe it"), which a researcher does not code.
pub(super) const FILLER_PHRASES: [&str; 38] = [
    "to be honest",
    "of course",
    "step by step",
    "to be fair",
    "if i am honest",
    "if i 'm honest",
    "at the end of the day",
    "to be frank",
    "not going to lie",
    "thank god",
    "thank goodness",
    "full stop",
    "fair enough",
    "first and foremost",
    "bless him",
    "bless her",
    "bless them",
    "bless 'em",
    "not gonna lie",
    "that 's the word",
    "the right word",
    "a better word",
    "the word for it",
    "a word for it",
    "if that makes sense",
    "if this makes sense",
    "if it makes sense",
    "does that make sense",
    "funny thing",
    "serious question",
    "sorry , tangent",
    "on a tangent",
    "can not describe",
    "can not even describe",
    "can not really describe",
    "can not explain",
    "can not even explain",
    "can not really explain",
];

fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// Evaluative words that praise: said of a thing, the thing is the concept ("the noise
/// cancelling is really good").
const PRAISE_WORDS: &str = "good great nice lovely brilliant amazing excellent perfect easy";

pub(super) fn is_praise(word: &str) -> bool {
    listed(PRAISE_WORDS, word)
}

/// Whether `word` weighs how much something counts rather than judging its state.
pub(super) fn is_weighing(word: &str) -> bool {
    listed(WEIGHING_WORDS, word)
}

pub(super) fn is_evaluative(word: &str) -> bool {
    listed(EVALUATIVE_WORDS, word)
}

pub(super) fn is_pointer_noun(word: &str) -> bool {
    is_empty_noun(word) || listed(POINTER_NOUNS, word)
}

pub(super) fn is_empty_noun(word: &str) -> bool {
    listed(EMPTY_NOUNS, word)
}

pub(super) fn is_time_word(word: &str) -> bool {
    listed(TIME_WORDS, word)
}

pub(super) fn is_number_word(word: &str) -> bool {
    listed(NUMBER_WORDS, word)
        || word
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ':')
}

/// Stance a verb of feeling about its subject expresses: −1, +1, or 0 for any other verb.
pub(super) fn affect_verb(lemma: &str) -> i8 {
    if listed(NEGATIVE_AFFECT_VERBS, lemma) {
        -1
    } else {
        i8::from(listed(POSITIVE_AFFECT_VERBS, lemma))
    }
}

/// Verbs that need what follows them to say anything ("tried", "noticed", "told"): a label
/// that ends on one lost its complement.
const COMPLEMENT_VERBS: &str = "try tries tried trying notice noticed notices see saw seen \
    tell told say said feel felt feeling want wanted need needed seem seemed mind minded \
    keep keeps kept make makes made let lets help helps helped turn turns turned";

/// Verbs that say what something means or how much it matters: the relation between two
/// concepts, never part of one ("being focused at work means …", "… matters because …").
const JUDGING_VERBS: &str = "means mean meant matters matter mattered";

/// Whether `word` is a verb of meaning or mattering (see [`JUDGING_VERBS`]).
pub(super) fn is_judging_verb(word: &str) -> bool {
    listed(JUDGING_VERBS, word)
}

pub(super) fn needs_complement(word: &str) -> bool {
    listed(COMPLEMENT_VERBS, word)
}

pub(super) fn is_time_span_word(word: &str) -> bool {
    listed(TIME_SPAN_WORDS, word)
}

pub(super) fn is_filler_verb(lemma: &str) -> bool {
    listed(FILLER_VERBS, lemma)
}

pub(super) fn is_light_verb(lemma: &str) -> bool {
    listed(LIGHT_VERBS, lemma)
}

pub(super) fn is_result_verb(lemma: &str) -> bool {
    listed(RESULT_VERBS, lemma)
}

pub(super) fn is_state_change_verb(lemma: &str) -> bool {
    listed(STATE_CHANGE_VERBS, lemma)
}

/// A word that reads as a past participle: listed, or ending in "-ed" after at least three
/// letters ("fixed", "sorted"; not "red" or "bed").
pub(super) fn is_participle(word: &str) -> bool {
    listed(IRREGULAR_PARTICIPLES, word) || (word.len() >= 5 && word.ends_with("ed"))
}

pub(super) fn is_causative_verb(lemma: &str) -> bool {
    listed(CAUSATIVE_VERBS, lemma)
}

pub(super) fn is_particle(word: &str) -> bool {
    listed(PARTICLES, word)
}

pub(super) fn is_content_causative(lemma: &str) -> bool {
    listed(CONTENT_CAUSATIVES, lemma)
}

pub(super) fn is_linking_verb(lemma: &str) -> bool {
    listed(LINKING_VERBS, lemma)
}

pub(super) fn is_value_verb(lemma: &str) -> bool {
    listed(VALUE_VERBS, lemma)
}

pub(super) fn is_degree_word(word: &str) -> bool {
    listed(DEGREE_WORDS, word)
}

/// Light verbs of taking something up: buying, using, ordering, drinking.
const CONSUMING_VERBS: &str = "buy use order drink eat";

pub(super) fn is_consuming_verb(lemma: &str) -> bool {
    listed(CONSUMING_VERBS, lemma)
}

pub(super) fn is_choice_verb(lemma: &str) -> bool {
    listed(CHOICE_VERBS, lemma)
}

pub(super) fn is_hedge(word: &str) -> bool {
    listed(HEDGES, word)
}

pub(super) fn is_certainty(word: &str) -> bool {
    listed(CERTAINTY_WORDS, word)
}

pub(super) fn is_intensifier(word: &str) -> bool {
    listed(INTENSIFIERS, word)
}

pub(super) fn is_negator(word: &str) -> bool {
    listed(NEGATORS, word)
}

pub(super) fn is_positive(word: &str) -> bool {
    listed(POSITIVE, word) || progressive_of(POSITIVE, word)
}

pub(super) fn is_negative(word: &str) -> bool {
    listed(NEGATIVE, word) || progressive_of(NEGATIVE, word)
}

/// `word` is the -ing form of a verb `list` holds ("wasting food", "worrying about it",
/// "enjoying it").
fn progressive_of(list: &str, word: &str) -> bool {
    word.len() > 5 && word.ends_with("ing") && listed(list, &crate::srl::verb_lemma(word))
}

pub(super) fn is_strong_affect(word: &str) -> bool {
    listed(STRONG_AFFECT, word)
}

pub(super) fn is_reflection(word: &str) -> bool {
    listed(REFLECTION_WORDS, word)
}

pub(super) fn is_occasion(word: &str) -> bool {
    listed(OCCASION_WORDS, word)
}

pub(super) fn is_vague(word: &str) -> bool {
    listed(VAGUE_WORDS, word)
}

pub(super) fn is_empty_word(word: &str) -> bool {
    listed(EMPTY_WORDS, word)
}

/// How many times any of `phrases` occurs in `words` as a run of whole words.
pub(super) fn count_phrases(words: &[&str], phrases: &[&str]) -> usize {
    phrases
        .iter()
        .map(|phrase| {
            let parts: Vec<&str> = phrase.split_whitespace().collect();
            if parts.is_empty() {
                return 0;
            }
            words
                .windows(parts.len())
                .filter(|window| *window == parts.as_slice())
                .count()
        })
        .sum()
}

/// Affect of a run of words: +1 per positive and −1 per negative word, a negator flipping the
/// sign of the next affect word within three words ("not watery" is +1, "less guilty" is +1),
/// and a "less" or "fewer" right after an affect word flipping that word ("waste less" is +1).
pub(super) fn affect(words: &[&str]) -> i32 {
    let mut total = 0;
    let mut flip_window = 0_u8;
    let mut previous = 0;
    let mut perceived = false;
    let mut previous_word = "";
    for word in words {
        let before = std::mem::replace(&mut previous_word, word);
        // "feels like a tax", "looks like rain": a comparison, not liking.
        let comparison = perceived && matches!(*word, "like" | "likes");
        perceived = matches!(
            *word,
            "feel"
                | "feels"
                | "felt"
                | "feeling"
                | "look"
                | "looks"
                | "looked"
                | "sound"
                | "sounds"
                | "seem"
                | "seems"
                | "seemed"
        );
        let value = if comparison {
            0
        } else if is_positive(word) {
            1
        } else if is_negative(word) {
            -1
        } else {
            0
        };
        if value != 0 {
            let signed = if flip_window > 0 { -value } else { value };
            total += signed;
            previous = signed;
            flip_window = 0;
            continue;
        }
        if matches!(*word, "less" | "fewer") && previous != 0 {
            total -= 2 * previous;
            flip_window = 0;
        } else if is_negator(word) || instead_of(before, word) {
            flip_window = 3;
        } else {
            flip_window = flip_window.saturating_sub(1);
        }
        previous = 0;
    }
    // "everything feels out of control", "out of my depth": a loss of grip, whatever the
    // words are alone.
    let adrift = words
        .windows(3)
        .filter(|w| matches!(w, ["out", "of", "control"] | ["of", "my" | "our", "depth"]))
        .count();
    // "someone in my corner": on the respondent's side.
    let backed = words
        .windows(3)
        .filter(|w| matches!(w, ["in", "my" | "our", "corner"]))
        .count();
    total + i32::try_from(backed).unwrap_or(0)
        - i32::try_from(adrift + time_eaten(words)).unwrap_or(0)
}

/// [`time_eaten`] of owned words: whether they say time was eaten up.
pub(super) fn eats_time(words: &[String]) -> bool {
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    time_eaten(&refs) > 0
}

/// "it eats half the weekend", "ate up my whole evening": time consumed is a cost, where "eat
/// dinner in the evening" is no more than a meal.
fn time_eaten(words: &[&str]) -> usize {
    let time = |w: &str| {
        matches!(
            w,
            "weekend"
                | "weekends"
                | "evening"
                | "evenings"
                | "morning"
                | "mornings"
                | "day"
                | "days"
                | "night"
                | "nights"
                | "hour"
                | "hours"
                | "afternoon"
                | "sunday"
                | "saturday"
                | "time"
        )
    };
    let between = |w: &str| {
        matches!(
            w,
            "half"
                | "the"
                | "my"
                | "our"
                | "whole"
                | "all"
                | "up"
                | "into"
                | "most"
                | "of"
                | "an"
                | "a"
                | "entire"
                | "your"
                | "every"
        )
    };
    words
        .iter()
        .enumerate()
        .filter(|(_, w)| matches!(**w, "eat" | "eats" | "ate" | "eating" | "eaten"))
        .filter(|(i, _)| {
            let rest = words.get(i + 1..).unwrap_or_default();
            let object = rest.iter().position(|w| !between(w));
            object.is_some_and(|k| k > 0 && rest.get(k).is_some_and(|w| time(w)))
        })
        .count()
}

/// What joins a thing done to the thing it is done in place of: "go home without replaying
/// every call", "listen instead of snapping", "walk rather than drive".
pub(super) const IN_PLACE_OF: [&str; 3] = ["without", "instead of", "rather than"];

/// "listen instead of snapping", "walk rather than drive": what follows is what is avoided
/// (a two-word link of [`IN_PLACE_OF`]; "without" is a negator of its own).
fn instead_of(previous: &str, word: &str) -> bool {
    IN_PLACE_OF
        .iter()
        .any(|link| link.split_once(' ') == Some((previous, word)))
}

/// What one has or lacks to do something with ("no energy to plan meals", "time to read").
pub(super) fn is_resource_word(word: &str) -> bool {
    listed(RESOURCE_WORDS, word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_after_a_verb_of_perception_compares() {
        // Seen in a tmux run: "feels like a tax" was read as liking.
        assert_eq!(affect(&["feels", "like", "a", "tax"]), 0);
        assert_eq!(affect(&["i", "like", "it"]), 1);
        assert_eq!(affect(&["feels", "unfair"]), -1);
    }

    #[test]
    fn a_complaint_of_the_body_is_negative() {
        // Seen in a tmux run: "lactose intolerant" was asked about as something valued.
        assert_eq!(affect(&["lactose", "intolerant"]), -1);
        assert_eq!(affect(&["the", "bloating"]), -1);
        assert_eq!(affect(&["no", "cramps"]), 1);
        // A headless jobs run: "it grinds really loudly" (it wakes the baby) was asked "When
        // "grinds loudly" goes well, what does that make possible for you?".
        assert_eq!(affect(&["grinds", "really", "loudly"]), -1);
        assert_eq!(affect(&["not", "noisy"]), 1);
        // Seen in a headless headphones run: "actually listen instead of snapping" was coded
        // negative.
        assert_eq!(affect(&["listen", "instead", "of", "snapping"]), 1);
        assert_eq!(affect(&["instead", "snapping"]), -1);
        // A live meal-kit interview: "everything feels out of control" was coded neutral.
        assert_eq!(affect(&["feels", "out", "of", "control"]), -1);
        assert_eq!(affect(&["in", "control"]), 0);
        // The same interview: "it eats half the weekend" was typed a setting of the job.
        assert_eq!(affect(&["eats", "half", "the", "weekend"]), -1);
        assert_eq!(affect(&["eat", "dinner", "in", "the", "evening"]), 0);
        // A headless onboarding incident: "like an afterthought", "invisible" and "someone in
        // my corner" were neutral, and "had someone in my corner" was asked "what would you
        // do differently?".
        assert_eq!(affect(&["feel", "like", "an", "afterthought"]), -1);
        assert_eq!(affect(&["feel", "invisible"]), -1);
        assert_eq!(affect(&["had", "someone", "in", "my", "corner"]), 1);
        assert_eq!(affect(&["in", "the", "corner"]), 0);
    }

    #[test]
    fn the_ing_form_of_an_affect_verb_carries_its_affect() {
        // "When 'wasting food' goes well, what does that make possible?" was asked of a
        // concept read as neutral.
        assert_eq!(affect(&["wasting", "food"]), -1);
        assert_eq!(affect(&["worrying", "about", "money"]), -1);
        assert_eq!(affect(&["enjoying", "the", "walk"]), 1);
        assert_eq!(affect(&["not", "wasting", "food"]), 1);
        assert_eq!(affect(&["cooking", "dinner"]), 0);
    }

    #[test]
    fn negators_flip_the_next_affect_word() {
        assert_eq!(affect(&["not", "watery"]), 1);
        assert_eq!(affect(&["feel", "less", "guilty"]), 1);
        assert_eq!(affect(&["waste", "less"]), 1);
        assert_eq!(
            affect(&["waste", "it", "less"]),
            -1,
            "only right after the word"
        );
        assert_eq!(
            affect(&["not", "that", "it", "is", "the", "worst"]),
            -1,
            "out of reach"
        );
        assert_eq!(affect(&["love", "it", "but", "expensive"]), 0);
    }

    #[test]
    fn phrases_match_whole_word_runs() {
        let words = ["i", "think", "it", "is", "sort", "of", "fine", "i", "think"];
        assert_eq!(count_phrases(&words, &HEDGE_PHRASES), 3);
        assert_eq!(count_phrases(&["sorting", "of"], &HEDGE_PHRASES), 0);
    }

    #[test]
    fn lists_hold_whole_words() {
        assert!(is_light_verb("have"));
        assert!(!is_light_verb("hav"));
        assert!(is_causative_verb("make"));
        assert!(is_filler_verb("think"));
        assert!(is_empty_word("it"));
    }
}
