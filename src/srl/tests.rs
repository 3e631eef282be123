use proptest::prelude::*;

use super::*;

/// The relation whose marker reads `marker` (case-insensitive).
fn relation<'a>(analysis: &'a SrlAnalysis, marker: &str) -> &'a DiscourseRelation {
    analysis
        .discourse_relations
        .iter()
        .find(|r| r.marker.text.eq_ignore_ascii_case(marker))
        .unwrap_or_else(|| panic!("no {marker:?} relation in {analysis:#?}"))
}

/// The first frame with `lemma`.
fn frame<'a>(analysis: &'a SrlAnalysis, lemma: &str) -> &'a SrlFrame {
    analysis
        .srl_frames
        .iter()
        .find(|f| f.lemma == lemma)
        .unwrap_or_else(|| panic!("no {lemma:?} frame in {analysis:#?}"))
}

/// The text of `frame`'s first argument with `role`.
fn arg(frame: &SrlFrame, role: ArgRole) -> Option<&str> {
    frame
        .arguments
        .iter()
        .find(|a| a.role == role)
        .map(|a| a.span.text.as_str())
}

/// Every span in `analysis` slices `text` exactly.
fn assert_spans_slice(text: &str, analysis: &SrlAnalysis) {
    let spans = analysis
        .discourse_relations
        .iter()
        .flat_map(|r| [&r.marker, &r.arg1, &r.arg2])
        .chain(analysis.srl_frames.iter().flat_map(|f| {
            std::iter::once(&f.predicate).chain(f.arguments.iter().map(|a| &a.span))
        }));
    for span in spans {
        assert!(span.start <= span.end, "{span:?}");
        assert_eq!(
            text.get(span.start..span.end),
            Some(span.text.as_str()),
            "{span:?}"
        );
    }
}

#[test]
fn oat_milk_because_links_main_clause_to_reason() {
    let text = "I buy oat milk because it tastes better.";
    let a = analyze(text);
    let r = relation(&a, "because");
    assert_eq!(r.kind, RelationKind::Causal);
    assert_eq!(r.arg1.text, "I buy oat milk");
    assert_eq!(r.arg2.text, "it tastes better");
    let buy = frame(&a, "buy");
    assert_eq!(buy.predicate.text, "buy");
    assert_eq!(arg(buy, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(buy, ArgRole::Arg1), Some("oat milk"));
    assert!(!buy.negated);
    let taste = frame(&a, "taste");
    assert_eq!(arg(taste, ArgRole::Arg1), Some("it"));
    assert_eq!(arg(taste, ArgRole::Arg2), Some("better"));
    assert_spans_slice(text, &a);
}

#[test]
fn hints_render_the_documented_format() {
    let a = analyze("I buy oat milk because it tastes better.");
    let hints = a.hints(1_000);
    assert!(
        hints.starts_with(
            "Discourse relations:\n- causal (because): \"I buy oat milk\" <- \"it tastes better\"\n\
             Predicate frames:\n- buy: ARG0=I, ARG1=oat milk\n"
        ),
        "{hints}"
    );
    assert!(hints.contains("- taste: ARG1=it, ARG2=better\n"), "{hints}");
}

#[test]
fn sentence_initial_subordinator_takes_the_main_clause_after_the_comma() {
    let text = "Because it froths well, I use it in lattes.";
    let a = analyze(text);
    let r = relation(&a, "Because");
    assert_eq!(r.kind, RelationKind::Causal);
    assert_eq!(r.arg2.text, "it froths well");
    assert_eq!(r.arg1.text, "I use it in lattes");
    let froth = frame(&a, "froth");
    assert_eq!(arg(froth, ArgRole::Mnr), Some("well"));
    let use_ = frame(&a, "use");
    assert_eq!(arg(use_, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(use_, ArgRole::Arg1), Some("it"));
    assert_eq!(arg(use_, ArgRole::Loc), Some("in lattes"));
}

#[test]
fn sentence_initial_adverbials_link_to_the_previous_sentence() {
    let text = "I used to drink dairy. However, it made me feel bloated. That's why I switched.";
    let a = analyze(text);
    let however = relation(&a, "However");
    assert_eq!(however.kind, RelationKind::Contrast);
    assert_eq!(however.arg1.text, "I used to drink dairy");
    assert_eq!(however.arg2.text, "it made me feel bloated");
    let why = relation(&a, "That's why");
    assert_eq!(why.kind, RelationKind::Result);
    assert_eq!(why.arg1.text, "However, it made me feel bloated");
    assert_eq!(why.arg2.text, "I switched");
    // "used to" is a habitual auxiliary, not a frame of its own.
    assert_eq!(arg(frame(&a, "drink"), ArgRole::Arg1), Some("dairy"));
    assert!(a.srl_frames.iter().all(|f| f.lemma != "use"));
    assert_eq!(
        arg(frame(&a, "make"), ArgRole::Arg1),
        Some("me feel bloated")
    );
    assert_spans_slice(text, &a);
}

#[test]
fn so_before_a_when_clause_leads_to_the_clause_after_it() {
    // Seen in development round 4: "so" was taken for the description of "I'm not in a foul
    // mood", which then gave no concept.
    let text = "I'm not in a foul mood by the end of the day, so when the kids get home I'm not \
                snapping at them.";
    let a = analyze(text);
    let so = relation(&a, "so");
    assert_eq!(so.kind, RelationKind::Result);
    assert_eq!(so.arg1.text, "I'm not in a foul mood by the end of the day");
    assert_eq!(so.arg2.text, "I'm not snapping at them");
    let when = relation(&a, "when");
    assert_eq!(when.arg2.text, "the kids get home");
    assert_eq!(arg(frame(&a, "be"), ArgRole::Arg2), None);
    assert_spans_slice(text, &a);
}

#[test]
fn so_links_cause_to_result_and_ev_charging_frames_have_modifiers() {
    let text = "I want to save money, so I charge my car at work every day.";
    let a = analyze(text);
    let so = relation(&a, "so");
    assert_eq!(so.kind, RelationKind::Result);
    assert_eq!(so.arg1.text, "I want to save money");
    assert_eq!(so.arg2.text, "I charge my car at work every day");
    let want = frame(&a, "want");
    assert_eq!(arg(want, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(want, ArgRole::Arg1), Some("to save money"));
    let save = frame(&a, "save");
    assert_eq!(arg(save, ArgRole::Arg0), Some("I"), "ARG0 is inherited");
    assert_eq!(arg(save, ArgRole::Arg1), Some("money"));
    let charge = frame(&a, "charge");
    assert_eq!(arg(charge, ArgRole::Arg1), Some("my car"));
    assert_eq!(arg(charge, ArgRole::Loc), Some("at work"));
    assert_eq!(arg(charge, ArgRole::Tmp), Some("every day"));
}

#[test]
fn also_never_matches_so_and_since_a_year_is_temporal() {
    let text = "I've been drinking coffee since 2019 and I also drink tea.";
    let a = analyze(text);
    assert!(
        a.discourse_relations
            .iter()
            .all(|r| r.kind != RelationKind::Result)
    );
    let since = relation(&a, "since");
    assert_eq!(since.kind, RelationKind::Temporal);
    assert_eq!(since.arg2.text, "2019");
    let also = relation(&a, "also");
    assert_eq!(also.kind, RelationKind::Addition);
    assert_eq!(also.arg1.text, "I've been drinking coffee since 2019");
    assert_eq!(also.arg2.text, "I also drink tea");
    let drink = frame(&a, "drink");
    assert_eq!(
        drink.predicate.text, "drinking",
        "main verb of the auxiliary chain"
    );
    assert_eq!(arg(drink, ArgRole::Tmp), Some("since 2019"));
}

#[test]
fn since_before_a_present_clause_is_causal() {
    let a = analyze("I never go to Starbucks anymore since they raised their prices.");
    assert_eq!(relation(&a, "since").kind, RelationKind::Causal);
    let go = frame(&a, "go");
    assert!(go.negated);
    assert_eq!(arg(go, ArgRole::Neg), Some("never"));
    assert_eq!(arg(go, ArgRole::Dir), Some("to Starbucks"));
    let a = analyze("I've used it since I moved here.");
    assert_eq!(relation(&a, "since").kind, RelationKind::Temporal);
}

#[test]
fn negation_from_contractions_and_never() {
    let text = "I don't like the taste of soy milk, and I can't afford the fancy brands.";
    let a = analyze(text);
    let like = frame(&a, "like");
    assert!(like.negated);
    assert_eq!(arg(like, ArgRole::Neg), Some("n't"));
    assert_eq!(arg(like, ArgRole::Arg1), Some("the taste of soy milk"));
    let afford = frame(&a, "afford");
    assert!(afford.negated);
    assert_eq!(arg(afford, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(afford, ArgRole::Arg1), Some("the fancy brands"));
    assert!(
        a.hints(500)
            .contains("- like (negated): ARG0=I, ARG1=the taste of soy milk")
    );
    assert_spans_slice(text, &a);
}

#[test]
fn headphones_contrast_and_concession() {
    let text = "The headphones are great but the battery dies too quickly. \
                Although they were expensive, I'd buy them again.";
    let a = analyze(text);
    let but = relation(&a, "but");
    assert_eq!(but.kind, RelationKind::Contrast);
    assert_eq!(but.arg1.text, "The headphones are great");
    assert_eq!(but.arg2.text, "the battery dies too quickly");
    let although = relation(&a, "Although");
    assert_eq!(although.kind, RelationKind::Concession);
    assert_eq!(although.arg2.text, "they were expensive");
    assert_eq!(although.arg1.text, "I'd buy them again");
    let be = frame(&a, "be");
    assert_eq!(arg(be, ArgRole::Arg1), Some("The headphones"));
    assert_eq!(arg(be, ArgRole::Arg2), Some("great"));
    let die = frame(&a, "die");
    assert_eq!(
        arg(die, ArgRole::Arg1),
        Some("the battery"),
        "unaccusative subject"
    );
    assert_eq!(arg(frame(&a, "buy"), ArgRole::Tmp), Some("again"));
}

#[test]
fn onboarding_answer_with_passive_complement_and_result() {
    let text = "On my first week, nobody showed me how the ticketing system works, so I spent \
                hours googling. I wasn't given a laptop until Wednesday.";
    let a = analyze(text);
    let show = frame(&a, "show");
    assert_eq!(arg(show, ArgRole::Arg0), Some("nobody"));
    assert_eq!(arg(show, ArgRole::Arg2), Some("me"));
    assert_eq!(
        arg(show, ArgRole::Arg1),
        Some("how the ticketing system works")
    );
    assert_eq!(arg(show, ArgRole::Tmp), Some("On my first week"));
    let so = relation(&a, "so");
    assert_eq!(so.arg2.text, "I spent hours googling");
    let give = frame(&a, "give");
    assert!(give.negated);
    assert_eq!(arg(give, ArgRole::Arg1), Some("a laptop"));
    assert_eq!(arg(give, ArgRole::Arg2), Some("I"), "passive recipient");
    assert_eq!(arg(give, ArgRole::Tmp), Some("until Wednesday"));
    assert_spans_slice(text, &a);
}

#[test]
fn coffee_routine_with_condition_and_time() {
    let text = "When I'm tired I drink coffee because it wakes me up. \
                Unless the price drops, I won't buy another machine.";
    let a = analyze(text);
    let when = relation(&a, "When");
    assert_eq!(when.kind, RelationKind::Temporal);
    assert_eq!(when.arg2.text, "I'm tired");
    assert_eq!(when.arg1.text, "I drink coffee");
    let because = relation(&a, "because");
    assert_eq!(because.arg1.text, "I drink coffee");
    assert_eq!(because.arg2.text, "it wakes me up");
    let drink = frame(&a, "drink");
    assert_eq!(arg(drink, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(drink, ArgRole::Arg1), Some("coffee"));
    assert_eq!(frame(&a, "wake up").predicate.text, "wakes");
    let unless = relation(&a, "Unless");
    assert_eq!(unless.kind, RelationKind::Condition);
    assert_eq!(unless.arg2.text, "the price drops");
    assert_eq!(unless.arg1.text, "I won't buy another machine");
}

#[test]
fn purpose_clauses_and_recipients() {
    let text = "My manager gave me a laptop so that I could start working. \
                I use it to make lattes for my kids.";
    let a = analyze(text);
    assert_eq!(relation(&a, "so that").kind, RelationKind::Purpose);
    let give = frame(&a, "give");
    assert_eq!(arg(give, ArgRole::Arg0), Some("My manager"));
    assert_eq!(arg(give, ArgRole::Arg2), Some("me"));
    assert_eq!(arg(give, ArgRole::Arg1), Some("a laptop"));
    assert_eq!(
        arg(give, ArgRole::Prp),
        Some("so that I could start working")
    );
    let use_ = frame(&a, "use");
    assert_eq!(arg(use_, ArgRole::Prp), Some("to make lattes for my kids"));
    let make = frame(&a, "make");
    assert_eq!(arg(make, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(make, ArgRole::Arg1), Some("lattes"));
    assert_eq!(arg(make, ArgRole::Arg2), Some("for my kids"));
}

#[test]
fn lemmas_of_irregular_and_regular_forms() {
    let a = analyze(
        "I bought it. She drank tea. He tried it. We stopped. They paid me. I chose oat milk.",
    );
    let lemmas: Vec<&str> = a.srl_frames.iter().map(|f| f.lemma.as_str()).collect();
    assert_eq!(lemmas, ["buy", "drink", "try", "stop", "pay", "choose"]);
}

#[test]
fn a_gerund_after_into_is_what_a_thing_goes_on_not_what_it_does() {
    let a = analyze("That money goes into saving.");
    let lemmas: Vec<&str> = a.srl_frames.iter().map(|f| f.lemma.as_str()).collect();
    assert_eq!(lemmas, ["go"], "{a:?}");
    // A person still does what the gerund says.
    let a = analyze("I got into running.");
    let run = a
        .srl_frames
        .iter()
        .find(|f| f.lemma == "run")
        .expect("a frame");
    assert_eq!(arg(run, ArgRole::Arg0), Some("I"));
}

#[test]
fn a_free_relatives_verb_spelled_like_its_base_is_a_verb() {
    // Seen live: "let" was read as a noun after "what", giving a concept "let".
    let a = analyze("Those ten minutes are what let me be a calm mum.");
    let let_ = frame(&a, "let");
    assert_eq!(arg(let_, ArgRole::Arg0), Some("Those ten minutes"));
    // "What time" still determines its noun.
    let words = crate::srl::tag_words("What time suits you?");
    assert_eq!(words.first().map(|w| w.class), Some(WordClass::Determiner));
}

#[test]
fn an_adjective_after_something_is_part_of_the_object() {
    // A jobs-to-be-done tmux run: "I wanted to cook something proper" left the object
    // "something" and no concept.
    let a = analyze("I wanted to cook something proper.");
    let cook = a
        .srl_frames
        .iter()
        .find(|f| f.lemma == "cook")
        .expect("a frame");
    assert_eq!(arg(cook, ArgRole::Arg1), Some("something proper"));
    // A second object is not swallowed.
    let a = analyze("I gave someone money.");
    let give = a.srl_frames.first().expect("a frame");
    assert_ne!(arg(give, ArgRole::Arg2), Some("someone money"));
}

#[test]
fn a_noun_phrase_after_a_passive_verbs_comma_is_an_aside() {
    // "The flight was cancelled, no explanation." had "no explanation" as the object and
    // the flight as a recipient, and left no concept.
    let a = analyze("The flight was cancelled, no explanation.");
    let frame = a.srl_frames.first().expect("a frame");
    assert_eq!(arg(frame, ArgRole::Arg1), Some("The flight"));
    assert_eq!(arg(frame, ArgRole::Arg2), None);
}

#[test]
fn switching_from_one_product_to_another_is_a_direction() {
    let a = analyze("I switched from dairy to oat milk last year.");
    let switch = frame(&a, "switch");
    let dirs: Vec<&str> = switch
        .arguments
        .iter()
        .filter(|a| a.role == ArgRole::Dir)
        .map(|a| a.span.text.as_str())
        .collect();
    assert_eq!(dirs, ["from dairy", "to oat milk"]);
    assert_eq!(arg(switch, ArgRole::Tmp), Some("last year"));
}

#[test]
fn copula_existential_and_complement_clause() {
    let a = analyze("There are no chargers near my house. I think it's cheaper than dairy.");
    let be = frame(&a, "be");
    assert_eq!(arg(be, ArgRole::Arg1), Some("no chargers"));
    assert_eq!(arg(be, ArgRole::Arg0), None);
    assert_eq!(arg(be, ArgRole::Loc), Some("near my house"));
    let think = frame(&a, "think");
    assert_eq!(arg(think, ArgRole::Arg1), Some("it's cheaper than dairy"));
    let cheaper = a
        .srl_frames
        .iter()
        .find(|f| f.predicate.text == "'s")
        .unwrap();
    assert_eq!(arg(cheaper, ArgRole::Arg2), Some("cheaper than dairy"));
}

#[test]
fn relative_clauses_fill_the_gap_with_their_antecedent() {
    let a = analyze("The app that I use shows which chargers are available.");
    let use_ = frame(&a, "use");
    assert_eq!(arg(use_, ArgRole::Arg0), Some("I"));
    assert_eq!(arg(use_, ArgRole::Arg1), Some("The app"));
    let show = frame(&a, "show");
    assert_eq!(arg(show, ArgRole::Arg0), Some("The app"));
    assert_eq!(
        arg(show, ArgRole::Arg1),
        Some("which chargers are available")
    );
}

#[test]
fn a_relative_clause_after_a_part_of_something_speaks_of_the_part() {
    let a = analyze("It's the only bit of the day that feels like mine.");
    assert_eq!(
        arg(frame(&a, "feel"), ArgRole::Arg0),
        Some("the only bit of the day")
    );
    // Not a part: the nearest noun phrase.
    let a = analyze("It's the end of a day that felt endless.");
    assert_eq!(arg(frame(&a, "feel"), ArgRole::Arg1), Some("a day"));
}

#[test]
fn a_particle_before_a_noun_phrase_says_where_to() {
    let a = analyze("I'm not rushing everyone out the door any more.");
    assert_eq!(arg(frame(&a, "rush"), ArgRole::Dir), Some("out the door"));
    // A time after the particle is no place.
    let a = analyze("I figured it out the other day.");
    let figure = frame(&a, "figure out");
    assert_eq!(arg(figure, ArgRole::Dir), None);
    assert_eq!(arg(figure, ArgRole::Tmp), Some("the other day"));
}

#[test]
fn an_adverb_after_a_comma_may_open_the_next_clause() {
    let a = analyze("It has to be on the table in thirty minutes, otherwise it's not worth it.");
    let be = frame(&a, "be");
    assert!(
        be.arguments
            .iter()
            .all(|x| !x.span.text.contains("otherwise")),
        "{be:?}"
    );
    assert_eq!(arg(be, ArgRole::Loc), Some("on the table"));
    assert_eq!(a.srl_frames.iter().filter(|f| f.lemma == "be").count(), 2);
}

#[test]
fn a_lone_reason_has_an_unstated_first_argument() {
    let text = "Because it's cheaper.";
    let a = analyze(text);
    let r = relation(&a, "Because");
    assert!(r.arg1_unstated());
    assert_eq!((r.arg1.start, r.arg1.end), (0, 0));
    assert!(
        a.hints(200)
            .contains("- causal (because): (before this answer) <- \"it's cheaper\"")
    );
}

#[test]
fn ambiguous_words_are_not_connectives() {
    for text in [
        "It is so good.",
        "I think so.",
        "I drink it once a week.",
        "I had never tried it before.",
        "It took a while.",
        "I don't know if it's worth it.",
        "Nothing but water.",
    ] {
        let a = analyze(text);
        assert_eq!(
            a.discourse_count(),
            0,
            "{text}: {:?}",
            a.discourse_relations
        );
    }
    assert_eq!(
        arg(
            frame(&analyze("I drink it once a week."), "drink"),
            ArgRole::Tmp
        ),
        Some("once a week")
    );
}

#[test]
fn multi_word_connectives_win_over_their_parts() {
    let a =
        analyze("I charge at night so that the car is ready. Even though it's slow, I like it.");
    assert_eq!(relation(&a, "so that").kind, RelationKind::Purpose);
    assert_eq!(relation(&a, "Even though").kind, RelationKind::Concession);
    assert_eq!(a.discourse_count(), 2);
    let a = analyze("On the other hand, the app is clunky.");
    assert_eq!(
        relation(&a, "On the other hand").kind,
        RelationKind::Contrast
    );
}

#[test]
fn empty_and_degenerate_inputs_yield_nothing() {
    for text in ["", "   ", "...", "?!?!", "🙂🙂🙂", "\n\n", "—", "123 456"] {
        let a = analyze(text);
        assert!(a.is_empty(), "{text:?}: {a:?}");
        assert_eq!(a.hints(1_000), "");
        assert_eq!(a.method, METHOD);
    }
}

#[test]
fn emoji_and_multibyte_text_keep_spans_on_char_boundaries() {
    let text =
        "😍 Ich liebe café. I love the café because it’s cosy 🙂 and I don’t mind paying €4.";
    let a = analyze(text);
    assert_spans_slice(text, &a);
    assert_eq!(relation(&a, "because").arg2.text, "it’s cosy");
    assert!(frame(&a, "mind").negated);
}

#[test]
fn long_inputs_are_capped() {
    let sentence = "I buy oat milk because it tastes better, but I also drink coffee. ";
    let text = sentence.repeat(400);
    let a = analyze(&text);
    assert_eq!(a.frame_count(), MAX_FRAMES);
    assert_eq!(a.discourse_count(), MAX_RELATIONS);
    assert!(
        a.srl_frames
            .iter()
            .all(|f| f.predicate.end <= MAX_INPUT_CHARS)
    );
    assert_spans_slice(&text, &a);
}

#[test]
fn hints_drop_whole_lines_and_count_them() {
    let a = analyze("I buy oat milk because it tastes better. I also drink tea.");
    let full = a.hints(10_000);
    let lines = full.lines().count();
    for max in [0, 10, 40, 80, 120, 160, 200] {
        let hints = a.hints(max);
        assert!(hints.chars().count() <= max, "{max}: {hints}");
        for line in hints.lines() {
            assert!(full.lines().any(|l| l == line) || line.ends_with("more omitted)"));
        }
    }
    let cut = a.hints(90);
    assert!(cut.ends_with("more omitted)\n"), "{cut}");
    assert!(cut.lines().count() < lines);
}

#[test]
fn serde_uses_propbank_labels_and_lowercase_kinds() {
    let a = analyze("I stopped buying almond milk due to the price.");
    let json = serde_json::to_value(&a).unwrap();
    let text = json.to_string();
    assert!(text.contains("\"kind\":\"causal\""), "{text}");
    assert!(text.contains("\"role\":\"ARG0\""), "{text}");
    assert!(text.contains("\"role\":\"ARGM-CAU\""), "{text}");
    let back: SrlAnalysis = serde_json::from_value(json).unwrap();
    assert_eq!(back, a);
    assert_eq!(
        arg(frame(&a, "buy"), ArgRole::Cau),
        Some("due to the price")
    );
}

#[test]
fn chat_style_speech_and_questions() {
    let a = analyze("What do you mean by that? honestly i dont drink dairy cuz it upsets me");
    assert!(
        a.srl_frames.iter().all(|f| f.lemma != "mean"),
        "no frames in a question"
    );
    let drink = frame(&a, "drink");
    assert!(drink.negated);
    assert_eq!(arg(drink, ArgRole::Arg0), Some("i"));
    assert_eq!(arg(drink, ArgRole::Arg1), Some("dairy"));
    assert_eq!(relation(&a, "cuz").arg2.text, "it upsets me");

    let a = analyze("My sister said \"you should try Oatly\". I chose it as it is organic.");
    let say = frame(&a, "say");
    assert_eq!(arg(say, ArgRole::Arg1), Some("you should try Oatly"));
    assert_eq!(arg(frame(&a, "try"), ArgRole::Arg1), Some("Oatly"));
    let as_ = relation(&a, "as");
    assert_eq!(as_.kind, RelationKind::Causal);
    assert_eq!(as_.arg1.text, "I chose it");
    assert_eq!(as_.arg2.text, "it is organic");
    assert_eq!(analyze("It's as good as dairy.").discourse_count(), 0);
}

#[test]
fn leading_subordinate_clause_borrows_the_main_subject() {
    let a = analyze("After reading the reviews, I decided to buy the Sony ones.");
    let after = relation(&a, "After");
    assert_eq!(after.arg2.text, "reading the reviews");
    assert_eq!(after.arg1.text, "I decided to buy the Sony ones");
    assert_eq!(arg(frame(&a, "read"), ArgRole::Arg0), Some("I"));
    assert_eq!(arg(frame(&a, "buy"), ArgRole::Arg1), Some("the Sony ones"));
}

proptest! {
    #[test]
    fn never_panics_and_spans_slice_the_input(text in "\\PC{0,300}") {
        let a = analyze(&text);
        assert_spans_slice(&text, &a);
        prop_assert!(a.frame_count() <= MAX_FRAMES);
        prop_assert!(a.discourse_count() <= MAX_RELATIONS);
    }

    #[test]
    fn english_like_text_never_panics(
        words in proptest::collection::vec(
            prop_oneof![
                Just("I"), Just("it"), Just("don't"), Just("because"), Just("so"),
                Just("since"), Just("2019"), Just("the"), Just("milk"), Just("buy"),
                Just("bought"), Just("to"), Just("charge"), Just(","), Just("."),
                Just("that's"), Just("why"), Just("and"), Just("also"), Just("which"),
                Just("was"), Just("given"), Just("😍"), Just("café"), Just("up"),
                Just("if"), Just("when"), Just("however"), Just("at"), Just("home"),
            ],
            0..80,
        ),
        max in 0usize..400,
    ) {
        let text = words.join(" ");
        let a = analyze(&text);
        assert_spans_slice(&text, &a);
        prop_assert!(a.hints(max).chars().count() <= max);
    }

    #[test]
    fn hints_fit_any_budget(text in "\\PC{0,200}", max in 0usize..300) {
        prop_assert!(analyze(&text).hints(max).chars().count() <= max);
    }
}

#[test]
fn a_sentence_initial_when_ends_before_a_new_subject_ahead_of_a_later_comma() {
    let text = "When my latte tastes that good I enjoy a slow start, and that calms me.";
    let a = analyze(text);
    let when = relation(&a, "When");
    assert_eq!(when.arg2.text, "my latte tastes that good");
    assert!(
        when.arg1.text.starts_with("I enjoy a slow start"),
        "{when:?}"
    );
}

#[test]
fn a_when_clause_without_a_comma_ends_before_a_subject_with_its_own_auxiliary() {
    // Development round 6: "in the pan doesn't go cold" stayed in the "when" clause, so "so"
    // led to dropping the steak instead of to the pan staying hot.
    let text = "It holds the heat, so when you drop a steak in the pan doesn't go cold on you.";
    let a = analyze(text);
    let so = relation(&a, "so");
    assert_eq!(so.arg1.text, "It holds the heat");
    assert!(
        so.arg2.text.starts_with("the pan doesn't go cold"),
        "{so:?}"
    );
    let when = relation(&a, "when");
    assert_eq!(when.arg2.text, "you drop a steak in");
    // A noun group followed by no verb of its own stays the preposition's object.
    let a = analyze("When you look at the prices it's mad.");
    assert_eq!(relation(&a, "When").arg2.text, "you look at the prices");
    assert_spans_slice(text, &analyze(text));
}

#[test]
fn a_message_said_to_an_unsaid_hearer_is_not_the_speakers_to_do() {
    let a = analyze("The guy just said to try another site.");
    let say = frame(&a, "say");
    assert_eq!(arg(say, ArgRole::Arg0), Some("The guy"));
    assert_eq!(arg(say, ArgRole::Arg1), Some("to try another site"));
    assert_eq!(arg(frame(&a, "try"), ArgRole::Arg0), None);
    // Asking to do something is the asker's own step.
    let a = analyze("She asked to see the manager.");
    assert_eq!(arg(frame(&a, "see"), ArgRole::Arg0), Some("She"));
}

#[test]
fn a_parenthetical_you_know_or_i_mean_is_no_clause() {
    // Development round 5: "you know" became a frame that took "in charge of my own life".
    let a = analyze("Then I'm still, you know, in charge of my own life.");
    assert!(a.srl_frames.iter().all(|f| f.lemma != "know"), "{a:#?}");
    assert_eq!(
        arg(frame(&a, "be"), ArgRole::Loc),
        Some("in charge of my own life")
    );
    let a = analyze("It was, I mean, a total nightmare.");
    assert!(a.srl_frames.iter().all(|f| f.lemma != "mean"), "{a:#?}");
    // Not set off by punctuation, they are verbs with objects.
    let a = analyze("You know the one I mean, the red one.");
    assert_eq!(arg(frame(&a, "know"), ArgRole::Arg1), Some("the one"));
    assert!(
        analyze("I mean it, honestly.")
            .srl_frames
            .iter()
            .any(|f| f.lemma == "mean")
    );
}

#[test]
fn a_noun_group_and_its_verb_after_a_description_are_a_new_clause() {
    // A headless ladder: "When I'm calm the kids actually talk to me" gave the copula the
    // description "calm the kids actually".
    let a = analyze("When I'm calm the kids actually talk to me at breakfast.");
    assert_eq!(arg(frame(&a, "be"), ArgRole::Arg2), Some("calm"));
    assert_eq!(arg(frame(&a, "talk"), ArgRole::Arg0), Some("the kids"));
    // A quantifier continues the description.
    let a = analyze("I was leaving early every day.");
    assert!(a.srl_frames.iter().all(|f| f.lemma != "day"), "{a:#?}");
}

#[test]
fn a_pronoun_after_a_verb_that_takes_a_clause_is_that_clauses_subject() {
    // A headless ladder: "comes" was read as a noun, so "self-respect" was lost.
    let a = analyze("I guess it comes down to self-respect.");
    assert_eq!(arg(frame(&a, "come down"), ArgRole::Arg0), Some("it"));
    // An object stays one.
    let a = analyze("I like it black.");
    assert_eq!(arg(frame(&a, "like"), ArgRole::Arg1), Some("it"));
}

#[test]
fn a_noun_group_after_a_manner_adverb_opens_the_main_clause() {
    // A headless oat milk interview: "froths properly my morning" was one predicate and
    // "flat white feels" a noun.
    let a =
        analyze("When it froths properly my morning flat white feels like a proper cafe coffee.");
    let froth = frame(&a, "froth");
    assert_eq!(arg(froth, ArgRole::Arg1), None);
    assert_eq!(
        arg(frame(&a, "feel"), ArgRole::Arg0),
        Some("my morning flat white")
    );
    let when = relation(&a, "when");
    assert_eq!(when.arg2.text, "it froths properly");
    assert_eq!(
        when.arg1.text,
        "my morning flat white feels like a proper cafe coffee"
    );
    // A degree adverb after "be" breaks nothing.
    let a = analyze("So it's not really the ward's fault.");
    assert_eq!(
        arg(frame(&a, "be"), ArgRole::Arg2),
        Some("really the ward's fault")
    );
}

#[test]
fn a_number_with_and_is_one_number() {
    let words = tag_words("The bill was three hundred and eighty pounds.");
    let and = words.iter().find(|w| w.norm == "and").unwrap();
    assert_eq!(and.class, WordClass::Number);
    let words = tag_words("I rang them and waited.");
    let and = words.iter().find(|w| w.norm == "and").unwrap();
    assert_eq!(and.class, WordClass::Conjunction);
}
