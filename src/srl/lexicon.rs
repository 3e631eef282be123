//! The verb lexicon: about 90 irregular verbs with their past forms, some 300 regular verbs,
//! lemmatisation by suffix rules, and the auxiliaries.
//!
//! The list favours what respondents say in consumer and workplace interviews; a verb that is
//! missing is still recognised by position and suffix in the tagger, only with a guessed
//! lemma ("froths" → "froth", "googling" → "google").

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Inflection of a verb token, as far as spelling tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    Base,
    Third,
    Past,
    Participle,
    /// Regular `-ed` and irregular forms shared by past and participle ("bought", "used").
    PastOrParticiple,
    Ing,
}

impl Form {
    /// Could be the participle of a passive or perfect.
    pub(super) fn participial(self) -> bool {
        matches!(self, Form::Participle | Form::PastOrParticiple)
    }

    /// Finite on its own (needs no auxiliary).
    pub(super) fn finite(self) -> bool {
        matches!(self, Form::Third | Form::Past | Form::PastOrParticiple)
    }
}

/// A known verb form: its lemma and inflection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct VerbReading {
    pub lemma: &'static str,
    pub form: Form,
}

/// Irregular verbs: lemma, past, past participle.
const IRREGULAR: &[(&str, &str, &str)] = &[
    ("be", "was", "been"),
    ("be", "were", "been"),
    ("have", "had", "had"),
    ("do", "did", "done"),
    ("go", "went", "gone"),
    ("get", "got", "gotten"),
    ("make", "made", "made"),
    ("take", "took", "taken"),
    ("buy", "bought", "bought"),
    ("bring", "brought", "brought"),
    ("think", "thought", "thought"),
    ("teach", "taught", "taught"),
    ("catch", "caught", "caught"),
    ("fight", "fought", "fought"),
    ("seek", "sought", "sought"),
    ("drink", "drank", "drunk"),
    ("eat", "ate", "eaten"),
    ("give", "gave", "given"),
    ("find", "found", "found"),
    ("feel", "felt", "felt"),
    ("keep", "kept", "kept"),
    ("leave", "left", "left"),
    ("meet", "met", "met"),
    ("pay", "paid", "paid"),
    ("say", "said", "said"),
    ("sell", "sold", "sold"),
    ("send", "sent", "sent"),
    ("spend", "spent", "spent"),
    ("lend", "lent", "lent"),
    ("build", "built", "built"),
    ("tell", "told", "told"),
    ("hold", "held", "held"),
    ("stand", "stood", "stood"),
    ("understand", "understood", "understood"),
    ("lose", "lost", "lost"),
    ("mean", "meant", "meant"),
    ("hear", "heard", "heard"),
    ("choose", "chose", "chosen"),
    ("come", "came", "come"),
    ("become", "became", "become"),
    ("begin", "began", "begun"),
    ("break", "broke", "broken"),
    ("bear", "bore", "born"),
    ("drive", "drove", "driven"),
    ("ride", "rode", "ridden"),
    ("write", "wrote", "written"),
    ("speak", "spoke", "spoken"),
    ("wake", "woke", "woken"),
    ("wear", "wore", "worn"),
    ("forget", "forgot", "forgotten"),
    ("grow", "grew", "grown"),
    ("know", "knew", "known"),
    ("throw", "threw", "thrown"),
    ("fly", "flew", "flown"),
    ("draw", "drew", "drawn"),
    ("show", "showed", "shown"),
    ("see", "saw", "seen"),
    ("run", "ran", "run"),
    ("sit", "sat", "sat"),
    ("win", "won", "won"),
    ("swim", "swam", "swum"),
    ("sing", "sang", "sung"),
    ("ring", "rang", "rung"),
    ("shrink", "shrank", "shrunk"),
    ("tear", "tore", "torn"),
    ("steal", "stole", "stolen"),
    ("swear", "swore", "sworn"),
    ("bend", "bent", "bent"),
    ("shoot", "shot", "shot"),
    ("slide", "slid", "slid"),
    ("swing", "swung", "swung"),
    ("oversleep", "overslept", "overslept"),
    ("blow", "blew", "blown"),
    ("feed", "fed", "fed"),
    ("lead", "led", "led"),
    ("read", "read", "read"),
    ("put", "put", "put"),
    ("set", "set", "set"),
    ("let", "let", "let"),
    ("cut", "cut", "cut"),
    ("hit", "hit", "hit"),
    ("hurt", "hurt", "hurt"),
    ("cost", "cost", "cost"),
    ("quit", "quit", "quit"),
    ("shut", "shut", "shut"),
    ("spread", "spread", "spread"),
    ("sleep", "slept", "slept"),
    ("deal", "dealt", "dealt"),
    ("learn", "learnt", "learnt"),
    ("burn", "burnt", "burnt"),
    ("fall", "fell", "fallen"),
    ("forgive", "forgave", "forgiven"),
    ("freeze", "froze", "frozen"),
    ("wind", "wound", "wound"),
    ("hide", "hid", "hidden"),
    ("shake", "shook", "shaken"),
    ("mistake", "mistook", "mistaken"),
    ("rise", "rose", "risen"),
    ("stick", "stuck", "stuck"),
    ("hang", "hung", "hung"),
    ("sink", "sank", "sunk"),
    ("undergo", "underwent", "undergone"),
    ("overcome", "overcame", "overcome"),
    ("upset", "upset", "upset"),
    ("withdraw", "withdrew", "withdrawn"),
    ("overpay", "overpaid", "overpaid"),
];

/// Regular verbs (plus irregular lemmas, added from [`IRREGULAR`]).
const REGULAR: &str = "\
    use want need like love hate try start stop help work cook charge wait call switch prefer \
    look ask seem turn move live believe happen include continue change play open walk offer \
    appear add allow expect consider suggest create provide remember decide join pick order \
    finish enjoy avoid plan hope realise realize notice manage compare save earn afford book \
    check clean wash fix repair install download upgrade update test study train commute \
    travel visit shop deliver pack carry share recommend review rate trust worry care mind \
    miss wish agree complain explain describe mention reply answer listen watch follow return \
    arrive stay remain plug unplug park reach drop fill heat boil brew steam froth blend mix \
    pour taste smell sound last drain connect pair sync cancel subscribe sign register log \
    print scan type click email text message chat talk discuss present introduce welcome \
    onboard shadow support guide assign attend schedule organise organize handle solve \
    struggle fail succeed improve increase reduce lower raise matter depend rely affect impact \
    cause prevent protect waste reuse recycle replace select research search browse scroll \
    post annoy bother frustrate stress relax appreciate value imagine suppose guess assume \
    reckon figure wonder doubt suspect promise admit claim argue intend attempt aim prepare \
    practise practice exercise jog cycle bike fuel refuel recharge queue rush hurry rent lease \
    own borrow owe invest budget refund exchange convert adopt remove skip lack contain \
    involve require assist mentor coach respond survive cope function perform operate crash \
    load stream pause complete end close fit feel block focus learn burn dream kill die smoke \
    bake fry grab tend refuse forget suffer benefit sort tidy dress shower laugh cry smile \
    hire fire quit retire apply accept reject approve deny treat serve empty power warn \
    encourage force convince persuade remind invite advise insist hear cover track measure \
    count wander explore discover experiment juggle balance spill stain squeeze sweeten \
    flavour flavor curdle separate microwave behave react dissolve thicken spoil splash prove";

/// Every form of the irregular verbs, keyed by spelling.
static IRREGULAR_FORMS: LazyLock<HashMap<&'static str, VerbReading>> = LazyLock::new(|| {
    let mut forms = HashMap::new();
    for &(lemma, past, participle) in IRREGULAR {
        let past_form = if past == participle {
            Form::PastOrParticiple
        } else {
            Form::Past
        };
        forms.insert(
            past,
            VerbReading {
                lemma,
                form: past_form,
            },
        );
        forms.entry(participle).or_insert(VerbReading {
            lemma,
            form: Form::Participle,
        });
    }
    let special: [(&'static str, &'static str, Form); 12] = [
        ("am", "be", Form::Base),
        ("is", "be", Form::Third),
        ("are", "be", Form::Base),
        ("'s", "be", Form::Third),
        ("being", "be", Form::Ing),
        ("has", "have", Form::Third),
        ("having", "have", Form::Ing),
        ("does", "do", Form::Third),
        ("goes", "go", Form::Third),
        ("got", "get", Form::PastOrParticiple),
        ("lying", "lie", Form::Ing),
        ("dying", "die", Form::Ing),
    ];
    for (spelling, lemma, form) in special {
        forms.insert(spelling, VerbReading { lemma, form });
    }
    forms
});

/// Every known lemma.
static LEMMAS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    REGULAR
        .split_ascii_whitespace()
        .chain(IRREGULAR.iter().map(|&(lemma, _, _)| lemma))
        .collect()
});

/// Looks `word` (lowercase) up as a known verb form.
pub(super) fn verb(word: &str) -> Option<VerbReading> {
    if let Some(&lemma) = LEMMAS.get(word) {
        return Some(VerbReading {
            lemma,
            form: Form::Base,
        });
    }
    if let Some(&reading) = IRREGULAR_FORMS.get(word) {
        return Some(reading);
    }
    inflected(word)
        .into_iter()
        .find_map(|(stem, form)| LEMMAS.get(stem.as_str()).map(|&lemma| (lemma, form)))
        .map(|(lemma, form)| VerbReading { lemma, form })
}

/// Whether `word` is a verb whose base form is also its past ("set", "put", "cut"): alone it
/// marks no tense.
pub(super) fn base_is_past(word: &str) -> bool {
    IRREGULAR
        .iter()
        .any(|(base, past, _)| *base == word && *past == word)
}

/// Whether `word` is a past participle of a known verb (for passives: "was charged").
pub(super) fn is_participle(word: &str) -> bool {
    IRREGULAR_FORMS
        .get(word)
        .is_some_and(|reading| reading.form.participial())
        || verb(word).is_some_and(|reading| reading.form.participial())
}

/// The lemma of a verb token: the lexicon's when known, otherwise a best guess from suffixes.
pub(super) fn lemma(word: &str) -> String {
    if let Some(reading) = verb(word) {
        return reading.lemma.to_string();
    }
    guess_lemma(word)
}

/// Candidate stems for a regularly inflected form, most likely first.
fn inflected(word: &str) -> Vec<(String, Form)> {
    let mut out = Vec::new();
    if let Some(stem) = word.strip_suffix("ies") {
        out.push((format!("{stem}y"), Form::Third));
        out.push((format!("{stem}ie"), Form::Third));
    }
    if let Some(stem) = word.strip_suffix("es") {
        out.push((stem.to_string(), Form::Third));
    }
    if let Some(stem) = word.strip_suffix('s').filter(|s| !s.ends_with('s')) {
        out.push((stem.to_string(), Form::Third));
    }
    if let Some(stem) = word.strip_suffix("ied") {
        out.push((format!("{stem}y"), Form::PastOrParticiple));
    }
    if let Some(stem) = word.strip_suffix("ed") {
        out.push((stem.to_string(), Form::PastOrParticiple));
        if let Some(single) = undouble(stem) {
            out.push((single.to_string(), Form::PastOrParticiple));
        }
    }
    let looks_like_noun = matches!(
        word,
        "seed" | "need" | "feed" | "weed" | "deed" | "reed" | "speed" | "breed" | "greed" | "bed"
    );
    if let Some(stem) = word
        .strip_suffix('d')
        .filter(|s| s.ends_with('e') && s.chars().count() >= 3 && !looks_like_noun)
    {
        out.push((stem.to_string(), Form::PastOrParticiple));
    }
    if let Some(stem) = word.strip_suffix("ing").filter(|s| s.chars().count() >= 2) {
        out.push((stem.to_string(), Form::Ing));
        if let Some(single) = undouble(stem) {
            out.push((single.to_string(), Form::Ing));
        }
        out.push((format!("{stem}e"), Form::Ing));
    }
    out
}

/// "stopp" → "stop": drops a doubled final consonant.
fn undouble(stem: &str) -> Option<&str> {
    let mut rev = stem.chars().rev();
    let last = rev.next()?;
    let before = rev.next()?;
    (last == before && !matches!(last, 'a' | 'e' | 'i' | 'o' | 'u' | 'l' | 's' | 'z'))
        .then(|| stem.strip_suffix(last))
        .flatten()
}

/// Whether a stem stripped of "-ed"/"-ing" lost a silent "e" ("googl" → "google", "charg" →
/// "charge").
fn needs_final_e(stem: &str) -> bool {
    let mut rev = stem.chars().rev();
    let (Some(last), Some(before)) = (rev.next(), rev.next()) else {
        return false;
    };
    let vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u');
    matches!(last, 'v' | 'z' | 'u' | 'c')
        || (last == 'l' && !vowel(before) && before != 'l')
        || (last == 'g' && matches!(before, 'r' | 'd'))
        || ["at", "iz", "is", "ur"]
            .iter()
            .any(|end| stem.ends_with(end))
}

/// Suffix-stripping lemma for a verb the lexicon lacks ("froths" → "froth").
fn guess_lemma(word: &str) -> String {
    if let Some(stem) = word
        .strip_suffix("ied")
        .or_else(|| word.strip_suffix("ies"))
    {
        return format!("{stem}y");
    }
    for suffix in ["ing", "ed"] {
        if let Some(stem) = word.strip_suffix(suffix).filter(|s| s.chars().count() >= 3) {
            // "panicking", "mimicked": the "k" only keeps the "c" hard.
            if let Some(hard) = stem
                .strip_suffix('k')
                .filter(|s| matches!(*s, "panic" | "mimic" | "traffic" | "picnic" | "frolic"))
            {
                return hard.to_string();
            }
            if let Some(single) = undouble(stem) {
                return single.to_string();
            }
            let needs_e = needs_final_e(stem);
            return if needs_e {
                format!("{stem}e")
            } else {
                stem.to_string()
            };
        }
    }
    if let Some(stem) = word
        .strip_suffix("ches")
        .or_else(|| word.strip_suffix("shes"))
    {
        let kept = word.len().saturating_sub(2);
        return word
            .get(..kept)
            .map_or_else(|| stem.to_string(), str::to_string);
    }
    match word.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') && stem.chars().count() >= 2 => stem.to_string(),
        _ => word.to_string(),
    }
}

/// Forms of "be" (as a token's normalised spelling).
pub(super) fn is_be(word: &str) -> bool {
    matches!(
        word,
        "be" | "am" | "is" | "are" | "was" | "were" | "been" | "being" | "'s"
    )
}

/// Forms of "have", including the contraction "'ve".
pub(super) fn is_have(word: &str) -> bool {
    matches!(word, "have" | "has" | "had" | "having" | "'ve")
}

/// Forms of "be" or "have" that carry a tense ("was", "has", "'ve"), not "been" or "having".
pub(super) fn is_finite_be_or_have(word: &str) -> bool {
    (is_be(word) || is_have(word)) && !matches!(word, "be" | "been" | "being" | "having")
}

/// Forms of "do".
pub(super) fn is_do(word: &str) -> bool {
    matches!(word, "do" | "does" | "did")
}

/// Modal auxiliaries; `'d` and `'ll` are the contracted "would"/"had" and "will".
pub(super) fn is_modal(word: &str) -> bool {
    matches!(
        word,
        "can"
            | "could"
            | "will"
            | "would"
            | "shall"
            | "should"
            | "may"
            | "might"
            | "must"
            | "'d"
            | "'ll"
            | "ought"
    )
}

/// Any auxiliary (or the verbs that double as one).
pub(super) fn is_aux(word: &str) -> bool {
    is_be(word) || is_have(word) || is_do(word) || is_modal(word)
}
