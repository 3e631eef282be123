//! The interview follows the respondent, headless, with templates and offline understanding
//! (`--provider none`) and with the scripted model's understanding (`understanding: llm`):
//! see `focus_support` for what is measured and on which respondents.

use crate::common;
use crate::focus_support::{
    check, check_negative_foci, check_widening_acknowledges, interview, ladder_scripts, measure,
};

#[test]
fn offline_interviews_follow_the_respondent_up_the_ladder() {
    let tmp = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    let oat = common::example("oat_milk_answers.txt");
    let db = tmp.path().join("oat.db");
    let turns = interview(&db, "oat_milk", &oat, &["--provider", "none"]);
    // Answer 8 adds nothing new but comes back to an earlier concept ("The creamy texture
    // again, really. That's the main thing."): the next question is about it, not about
    // another concept still open from before (it was "froths well").
    let after_return = turns.iter().find(|t| t["turn_number"] == 8).unwrap();
    assert_eq!(
        after_return["focus"]["label"], "creamy",
        "{}",
        after_return["next_question"]
    );
    reports.push(measure("oat milk answers", "oat_milk", &oat, &turns));
    for (name, concept, path) in ladder_scripts() {
        let db = tmp.path().join(format!("{name}.db"));
        let turns = interview(&db, &concept, &path, &["--provider", "none"]);
        reports.push(measure(&name, &concept, &path, &turns));
    }
    check_negative_foci(&reports);
    check_widening_acknowledges(&reports);
    check(&reports);
}

/// The same node selection when a model understands the answers: the scripted provider's
/// recorded extraction replies for the oat milk answers (`understanding: llm`).
#[test]
fn scripted_llm_understanding_follows_the_respondent_too() {
    let tmp = tempfile::tempdir().unwrap();
    let oat = common::example("oat_milk_answers.txt");
    let script = common::example("oat_milk_script.yaml");
    let turns = interview(
        &tmp.path().join("llm.db"),
        "oat_milk",
        &oat,
        &[
            "--script",
            script.to_str().unwrap(),
            "--understanding",
            "llm",
        ],
    );
    let report = measure("oat milk, scripted LLM", "oat_milk", &oat, &turns);
    check(&[report]);
}

/// Jobs to be done: an answer that reaches how it felt ("it felt like we were actually looking
/// after ourselves again") beside a plain functional job ("there was a plan") is followed at
/// the higher job, the motive the respondent has just given.
#[test]
fn a_jobs_interview_follows_the_feeling_an_answer_reaches() {
    let tmp = tempfile::tempdir().unwrap();
    let answers = tmp.path().join("answers.txt");
    std::fs::write(
        &answers,
        "It was January, right after our daughter was born. Neither of us had the energy to \
         plan meals, and we were living on toast and takeaways. My sister sent us a voucher \
         for a recipe box, so we tried it for the first month.\n\n\
         Honestly the difference was that at six o'clock there was a plan. The box had \
         everything weighed out, so I didn't have to think, I just followed the card. After \
         weeks of takeaways it felt like we were actually looking after ourselves again.\n",
    )
    .unwrap();
    let turns = interview(
        &tmp.path().join("jobs.db"),
        "meal_kits",
        &answers,
        &["--provider", "none"],
    );
    let second = turns.iter().find(|t| t["turn_number"] == 2).unwrap();
    assert_eq!(
        second["focus"]["label"], "looking after ourselves",
        "{}",
        second["next_question"]
    );
}
