//! Closed-class words and the small semantic classes that decide roles.
//!
//! Every function takes a token's normalised (lowercase, contraction-expanded) spelling or a
//! verb lemma. The lists are deliberately short: they hold the words interview answers use, not
//! a dictionary.

/// Whether `word` is one of the space-separated words of `list`.
fn listed(list: &str, word: &str) -> bool {
    list.split_ascii_whitespace().any(|w| w == word)
}

/// Pronouns that are subjects wherever they stand.
pub(super) fn is_nominative(word: &str) -> bool {
    matches!(word, "i" | "we" | "they" | "he" | "she")
}

/// Nouns that name a part or a kind of what follows "of" ("the only bit of the day", "the
/// kind of manager"): a relative clause after the whole speaks of the part.
pub(super) fn is_partitive(word: &str) -> bool {
    matches!(
        word,
        "bit" | "part" | "kind" | "sort" | "type" | "piece" | "half" | "side" | "moment"
    )
}

/// Pronouns that may be the subject of a relative clause without "that" ("the kind of teacher
/// [they can rely on]", "someone [people can trust]").
pub(super) fn is_relative_subject(word: &str) -> bool {
    is_nominative(word)
        || matches!(
            word,
            "you" | "people" | "everyone" | "everybody" | "someone" | "somebody"
        )
}

const SUBJECT_CAPABLE: &str = "\
    you it this that these those there everyone everybody someone somebody nobody everything \
    something nothing anyone anything people one which who";

/// Pronouns that may be a subject when they stand before a verb.
pub(super) fn is_subject_capable(word: &str) -> bool {
    is_nominative(word) || listed(SUBJECT_CAPABLE, word)
}

/// Object pronouns that stand right after a verb ("let me", "got us", "keeps them"). "You"
/// and "her" are not among them: "you" is as often a subject, "her" a determiner.
pub(super) fn is_object_pronoun(word: &str) -> bool {
    matches!(word, "me" | "us" | "him" | "them")
}

/// Reflexive pronouns of persons ("to myself", "for ourselves").
pub(super) fn is_reflexive(word: &str) -> bool {
    matches!(
        word,
        "myself" | "yourself" | "ourselves" | "himself" | "herself" | "themselves"
    )
}

/// Compound nouns whose first word would otherwise be read as an adjective or verb and whose
/// second as something other than their head: "flat white", "cold brew", "washing machine".
const FIXED_COMPOUNDS: [(&str, &str); 10] = [
    ("flat", "white"),
    ("flat", "whites"),
    ("long", "black"),
    ("cold", "brew"),
    ("washing", "machine"),
    ("washing", "up"),
    ("running", "shoes"),
    ("waiting", "list"),
    ("waiting", "lists"),
    ("standing", "desk"),
];

/// `first` and `second` make one of [`FIXED_COMPOUNDS`].
pub(super) fn is_fixed_compound(first: &str, second: &str) -> bool {
    FIXED_COMPOUNDS.contains(&(first, second))
}

const PRONOUN: &str = "\
    me us them him her myself yourself ourselves themselves himself herself itself mine yours \
    ours theirs hers what whom anybody whatever whichever whoever";

/// Personal and indefinite pronouns.
pub(super) fn is_pronoun(word: &str) -> bool {
    is_subject_capable(word) || listed(PRONOUN, word)
}

const DETERMINER: &str = "\
    the a an my your our their his its this that these those some any every each no all both \
    either neither another other much many more most few fewer less several such enough half \
    whose last next";

/// Nouns with an adjective's ending ("music", "interest", "vegetable"), which the guess by
/// suffix would read as adjectives.
pub(super) fn is_suffix_noun(word: &str) -> bool {
    listed(
        "music traffic clinic logic topic topics panic picnic mechanic fabric graphic graphics \
         rubric arithmetic interest interests guest guests chest forest forests request \
         requests contest protest olive olives archive detective detectives relative relatives \
         incentive incentives motive motives radish relish vegetable vegetables cable cables \
         timetable timetables table tables handful mouthful",
        word,
    )
}

/// Number words from two up ("two kids", "twenty minutes"); "one" is left to the pronoun it
/// often is ("the big one", "one less thing").
pub(super) fn is_number_word(word: &str) -> bool {
    listed(
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen \
         sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty \
         ninety hundred thousand million",
        word,
    )
}

/// Articles, possessives and demonstratives: they open a noun group and never continue an
/// adjective's phrase ("calm | the kids"), where a quantifier may ("early every day").
pub(super) fn opens_noun_group(word: &str) -> bool {
    listed(
        "the a an my your our their his her its this that these those",
        word,
    )
}

/// Determiners and quantifiers; several also stand alone as a noun phrase ("I need more").
pub(super) fn is_determiner(word: &str) -> bool {
    listed(DETERMINER, word)
}

const PREPOSITION: &str = "\
    about above across after against along among around at before behind below beside besides \
    between beyond by despite down during except for from in inside into near of off on onto \
    out outside over per since than through throughout till toward towards under until unlike \
    up upon via with within without as";

/// Prepositions ("to" and "like" are decided by context in the tagger).
pub(super) fn is_preposition(word: &str) -> bool {
    listed(PREPOSITION, word)
}

/// Words after a verb that belong to it ("pick up", "give up", "work out").
pub(super) fn is_particle(word: &str) -> bool {
    matches!(
        word,
        "up" | "out" | "off" | "away" | "back" | "down" | "round" | "along"
    )
}

/// Adverbs that may open a clause before its subject (", otherwise it's not worth it", ",
/// then we drove home").
pub(super) fn opens_clause_adverb(word: &str) -> bool {
    matches!(
        word,
        "otherwise" | "then" | "instead" | "anyway" | "still" | "besides"
    )
}

/// Nouns spelled like adverbs in "-ly" ("family dinners", "a bit of a bully"), alone or
/// last in a hyphenated compound ("an auto-reply").
pub(super) fn is_ly_noun(word: &str) -> bool {
    let word = word.rsplit('-').next().unwrap_or(word);
    matches!(
        word,
        "family"
            | "families"
            | "belly"
            | "bully"
            | "jelly"
            | "rally"
            | "reply"
            | "supply"
            | "assembly"
            | "butterfly"
            | "lolly"
            | "trolley"
    )
}

/// Adjectives spelled like adverbs in "-ly" ("a friendly face", "it felt lonely").
pub(super) fn is_ly_adjective(word: &str) -> bool {
    matches!(
        word,
        "friendly"
            | "lovely"
            | "lonely"
            | "lively"
            | "elderly"
            | "silly"
            | "ugly"
            | "costly"
            | "likely"
            | "unlikely"
            | "smelly"
            | "chilly"
            | "curly"
    )
}

const SUBORDINATOR: &str = "\
    because when whenever while whilst if unless although though whereas whether where how why \
    which who whom cuz cos coz";

/// Subordinators and wh-words that open a clause.
pub(super) fn is_subordinator(word: &str) -> bool {
    listed(SUBORDINATOR, word)
}

const ADVERB: &str = "\
    really very just also even only too quite so maybe probably definitely actually basically \
    honestly literally mostly mainly almost nearly perhaps together instead else rather well \
    however therefore thus hence moreover furthermore anyway otherwise kinda totally super \
    pretty fairly much more less yes yeah no ok okay um uh oh plus ago meanwhile afterwards \
    afterward consequently nevertheless nonetheless first finally eventually";

/// Adverbs the tagger knows by name (manner adverbs are recognised by "-ly").
/// An adverb the tagger knows, or a word that looks like one ("actually", "properly").
pub(super) fn looks_adverbial(word: &str) -> bool {
    is_adverb(word) || (word.len() > 4 && word.ends_with("ly"))
}

pub(super) fn is_adverb(word: &str) -> bool {
    is_time_adverb(word) || is_place_adverb(word) || listed(ADVERB, word)
}

const TIME_ADVERB: &str = "\
    always usually often sometimes rarely seldom ever again now then today yesterday tomorrow \
    tonight daily weekly monthly nowadays lately recently already still soon later earlier \
    anymore occasionally frequently normally typically generally currently immediately \
    overnight once twice yet";

/// Adverbs of time and frequency (ARGM-TMP).
pub(super) fn is_time_adverb(word: &str) -> bool {
    listed(TIME_ADVERB, word)
}

const PLACE_ADVERB: &str = "\
    here there abroad downtown upstairs downstairs nearby online everywhere somewhere anywhere \
    outside inside locally remotely wherever elsewhere";

/// Adverbs and bare nouns of place (ARGM-LOC).
pub(super) fn is_place_adverb(word: &str) -> bool {
    listed(PLACE_ADVERB, word)
}

const ADJECTIVE: &str = "\
    good bad great cheap cheaper cheapest expensive easy easier hard harder difficult nice \
    better best worse worst healthy healthier unhealthy fresh tasty creamy sweet bitter strong \
    weak hot cold warm fast faster slow slower quick long longer short big bigger small little \
    new old happy unhappy sad tired busy free available reliable convenient inconvenient \
    comfortable uncomfortable important affordable pricey costly loud quiet noisy heavy simple \
    complicated confusing clear overwhelming helpful useful useless friendly lovely welcoming \
    supportive stressful annoying frustrating frustrated boring bored interesting interested \
    excited exciting worried different same similar sure able unable worth full local \
    sustainable organic natural green safe dangerous close far ready late early likely \
    unlikely lonely ugly nervous anxious scared afraid glad fine okay ok awesome amazing \
    terrible awful horrible perfect decent smooth rich thick thin light dark black white wrong \
    right real main whole own extra electric wireless environmental used overwhelmed stressed \
    lost familiar unfamiliar high low sane calm calmer relaxed confident proud independent \
    productive energetic focused organised organized capable responsible proper special \
    homemade tight tighter loose safe unsafe secure insecure tiny huge massive enormous \
    straight foggy groggy ridiculous crazy weird strange odd messy tidy lucky patient \
    impatient grumpy sleepy awake asleep upset angry soggy lukewarm stale fussy grateful dead \
    alive stupid dumb clueless";

/// Common adjectives, including participles that behave as adjectives ("tired", "annoying").
pub(super) fn is_adjective(word: &str) -> bool {
    listed(ADJECTIVE, word) || is_comparative(word)
}

/// "nicer", "calmer", "happier", "bigger", "cheapest": a comparative or superlative of a listed
/// adjective. Words that are more often something else are not ("later", "owner", "lighter").
fn is_comparative(word: &str) -> bool {
    if matches!(
        word,
        "later" | "latest" | "earlier" | "owner" | "lighter" | "lightest"
    ) {
        return false;
    }
    let Some(stem) = word
        .strip_suffix("er")
        .or_else(|| word.strip_suffix("est"))
        .filter(|s| s.len() >= 2)
    else {
        return false;
    };
    // The suffix opens with "e", so the stem with its "e" back ("nicer" -> "nice") is a prefix.
    let with_e = word.get(..=stem.len()).unwrap_or_default();
    // "bigger" -> "big".
    let doubled = stem
        .as_bytes()
        .windows(2)
        .last()
        .is_some_and(|w| w.first() == w.get(1));
    let undoubled = if doubled {
        stem.get(..stem.len() - 1).unwrap_or_default()
    } else {
        ""
    };
    [stem, with_e, undoubled]
        .iter()
        .any(|c| !c.is_empty() && listed(ADJECTIVE, c))
        || stem
            .strip_suffix('i')
            .is_some_and(|s| listed(ADJECTIVE, &format!("{s}y")))
}

const TIME_NOUN: &str = "\
    morning afternoon evening night day week weekend weekday month year decade hour minute \
    second time moment monday tuesday wednesday thursday friday saturday sunday january \
    february march april may june july august september october november december spring \
    summer autumn winter today tonight yesterday tomorrow lunchtime past future childhood now \
    then holiday christmas pandemic lockdown semester quarter shift";

/// Nouns (and noun-like words) that name a time: a prepositional phrase or noun phrase headed
/// by one is ARGM-TMP ("in the morning", "every day").
pub(super) fn is_time_noun(word: &str) -> bool {
    let singular = word.strip_suffix('s').unwrap_or(word);
    [word, singular].into_iter().any(|w| listed(TIME_NOUN, w))
}

const PERSON_NOUN: &str = "\
    me us them him her you kids kid children child family wife husband partner son daughter \
    parent mother father friend friends team colleague colleagues mum mom dad parents boss \
    manager customer customers people everyone baby girlfriend boyfriend flatmate roommate \
    coworkers coworker guy guys bloke man woman lady girl boy sister brother nan grandma \
    grandad grandchildren niece nephew aunt uncle cousin mate mates buddy pal sweetie \
    sweetheart darling grandkids grandson granddaughter gran granny grandpa grandparents";

/// Nouns for people, used to tell a beneficiary ("for my kids") from other "for" phrases.
pub(super) fn is_person_noun(word: &str) -> bool {
    listed(PERSON_NOUN, word)
}

const CATENATIVE: &str = "\
    want need try like love hate prefer start begin decide plan hope expect learn choose \
    manage refuse agree afford seem tend remember forget wish mean intend continue promise \
    offer attempt prepare struggle fail aim enjoy avoid finish stop keep quit mind miss \
    consider recommend suggest imagine practise practice bother";

/// Verbs taking a to-infinitive or gerund as their `ARG1` ("want to save", "love cooking").
pub(super) fn is_catenative(lemma: &str) -> bool {
    listed(CATENATIVE, lemma)
}

/// Verbs of feeling or becoming that take a participle saying how the subject ended up
/// ("feel left out", "got stuck", "seemed rushed").
const PARTICIPLE_TAKING: &str = "feel get become seem look end";

pub(super) fn takes_participle(lemma: &str) -> bool {
    listed(PARTICIPLE_TAKING, lemma)
}

const OBJECT_CONTROL: &str = "\
    want need ask tell allow help expect encourage force get convince persuade teach remind \
    invite advise warn like prefer";

/// Verbs whose object controls a following infinitive ("want my kids to eat", "help me to").
pub(super) fn is_object_control(lemma: &str) -> bool {
    listed(OBJECT_CONTROL, lemma)
}

const CLAUSE_TAKING: &str = "\
    think know believe guess feel say mean hope realise realize reckon suppose wish bet \
    suspect figure notice remember forget doubt assume imagine understand learn decide worry \
    agree hear admit claim argue explain find see wonder promise";

/// Verbs taking a finite clause as `ARG1` ("I think it's cheaper").
pub(super) fn takes_clause(lemma: &str) -> bool {
    listed(CLAUSE_TAKING, lemma)
}

const LINKING: &str = "\
    be become seem feel look sound smell taste stay remain appear get turn grow go";

/// Verbs that link a subject to a description ("it tastes better", "I feel tired").
pub(super) fn is_linking(lemma: &str) -> bool {
    // "I ended up nearly late for the call": where things left the subject.
    listed(LINKING, lemma) || matches!(lemma, "end up" | "wind up")
}

const TRANSFER: &str = "\
    add attach connect link \
    give send pay sell lend show tell explain offer bring recommend mention describe owe teach \
    write buy make cook get order bake pick prepare introduce assign email text hand leave \
    read save";

/// Verbs whose "to" or "for" phrase names a recipient or beneficiary (`ARG2`).
pub(super) fn is_transfer(lemma: &str) -> bool {
    listed(TRANSFER, lemma)
}

/// Verbs taking two bare objects: recipient then theme ("I bought him a coffee").
pub(super) fn is_ditransitive(lemma: &str) -> bool {
    is_transfer(lemma)
        && !matches!(
            lemma,
            "explain"
                | "describe"
                | "mention"
                | "introduce"
                | "add"
                | "attach"
                | "connect"
                | "link"
        )
}

const MOTION: &str = "\
    go come drive walk move switch change travel fly run get return commute cycle ride head \
    transfer upgrade convert bike jog arrive rush hurry turn downgrade";

/// Verbs of motion or change of state: their "to/from/into" phrases are directions.
pub(super) fn is_motion(lemma: &str) -> bool {
    listed(MOTION, lemma)
}

const UNACCUSATIVE: &str = "\
    arrive happen break die fall change increase decrease rise drop grow go come appear \
    disappear occur last exist matter start begin stop end finish open close freeze boil work \
    run crash fail load charge drain curdle separate improve sink";

/// Verbs whose intransitive, non-human subject undergoes rather than does the action
/// ("the battery died", "the price increased"): that subject is `ARG1`.
pub(super) fn is_unaccusative(lemma: &str) -> bool {
    listed(UNACCUSATIVE, lemma)
}

const PLACE_NOUN: &str = "\
    work school bed church town college class university uni lunch dinner breakfast market \
    office hospital court sleep shop";

/// Places after which a bare noun is a location, not an object ("go to work", "at school").
pub(super) fn is_place_noun(word: &str) -> bool {
    listed(PLACE_NOUN, word)
}

/// Verbs that take an object and a description of it ("I find it expensive", "I take it
/// black"): the description is `ARG2`.
pub(super) fn takes_small_clause(lemma: &str) -> bool {
    matches!(
        lemma,
        "find"
            | "make"
            | "keep"
            | "get"
            | "consider"
            | "call"
            | "leave"
            | "like"
            | "prefer"
            | "want"
            | "need"
            | "drink"
            | "take"
            | "have"
            | "serve"
            | "eat"
    )
}

/// Verbs of telling whose bare infinitive is a message for a hearer left unsaid ("the guy
/// said to try another site", "the doctor advised to rest"): the speaker does not do what it
/// says.
pub(super) fn is_message_without_hearer(lemma: &str) -> bool {
    matches!(lemma, "say" | "tell" | "advise" | "warn")
}

/// Object-control verbs whose object is a hearer (`ARG2`) and whose infinitive is the
/// message (`ARG1`): "my doctor told me to cut down".
pub(super) fn is_directive(lemma: &str) -> bool {
    matches!(
        lemma,
        "tell"
            | "ask"
            | "advise"
            | "remind"
            | "warn"
            | "teach"
            | "encourage"
            | "persuade"
            | "convince"
            | "invite"
            | "force"
    )
}

/// Verbs taking an object and a bare infinitive ("made me feel", "let them try").
pub(super) fn is_causative(lemma: &str) -> bool {
    matches!(
        lemma,
        "make" | "let" | "help" | "have" | "see" | "watch" | "hear" | "notice"
    )
}

/// Words that can follow "is" but not a possessive: "the milk's [creamy]", "the app's [not]
/// great", "it's [a] rip-off".
pub(super) fn opens_predicate(word: &str) -> bool {
    is_adjective(word)
        || listed(
            "not been got gone really so very too quite pretty always never just still also \
             getting going a an the",
            word,
        )
}

/// Words that are a time on their own: "today", "tonight", …
pub(super) fn is_deictic_time(word: &str) -> bool {
    listed(
        "today tonight tomorrow yesterday now weekends weekdays",
        word,
    )
}

/// Determiners that date a time noun: "last year", "this morning", "every summer".
pub(super) fn is_time_determiner(word: &str) -> bool {
    listed("every each last next this these that", word)
}

/// Words that count a time unit: "a week", "two years", "all day", "per month".
pub(super) fn is_time_quantifier(word: &str) -> bool {
    is_time_determiner(word) || listed("all most some one a an per the", word)
}

/// Units of time, singular or plural: "a week", "three hours" (not "a future").
pub(super) fn is_time_unit(word: &str) -> bool {
    listed(
        "second minute hour day week weekend weekday month year decade morning afternoon \
         evening night summer winter spring autumn",
        word.strip_suffix('s').unwrap_or(word),
    )
}

/// Heads of fixed prepositional phrases that are neither places nor times: "in fact", "at
/// least", "in my opinion", "on the way".
pub(super) fn is_abstract_head(word: &str) -> bool {
    listed(
        "fact general least all total average particular mind opinion terms advance case \
         addition way end short",
        word,
    )
}

/// Verbs of exchange, whose "for" phrase names the goods ("paid £5 for a latte"), which no
/// label here fits.
pub(super) fn is_exchange(lemma: &str) -> bool {
    matches!(
        lemma,
        "pay" | "sell" | "charge" | "exchange" | "swap" | "trade"
    )
}

#[cfg(test)]
mod tests {
    use super::is_adjective;

    #[test]
    fn comparatives_and_superlatives_of_listed_adjectives_are_adjectives() {
        for word in ["nicer", "calmer", "happier", "bigger", "cheapest", "nicest"] {
            assert!(is_adjective(word), "{word}");
        }
        for word in ["later", "owner", "lighter", "er", "est", "butter", "finger"] {
            assert!(!is_adjective(word), "{word}");
        }
    }
}
