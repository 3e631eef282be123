use std::collections::BTreeMap;

use super::*;
use crate::domain::Understanding;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |k| map.get(k).cloned()
}

fn resolve_with(
    file: Option<&str>,
    vars: &[(&str, &str)],
    flags: &FlagLayer,
) -> Result<LlmConfig, LlmConfigError> {
    let path = Path::new("/etc/interviewer.yaml");
    let parsed = file.map(|text| SettingsFile::parse(path, text).unwrap());
    resolve(
        parsed.as_ref().map(|f| (path, f)),
        &env(vars),
        flags,
        PricingTable::default(),
    )
}

fn provider_of(c: &LlmConfig, role: Role) -> (&str, &Source) {
    let r = c.role(role).unwrap();
    (r.provider.value.as_str(), &r.provider.source)
}

#[test]
fn no_keys_and_no_settings_mean_the_local_model_everywhere() {
    let c = resolve_with(None, &[], &FlagLayer::default()).unwrap();
    for role in Role::ALL {
        assert_eq!(provider_of(&c, role), ("local", &Source::Default));
        assert!(c.role(role).unwrap().effort.is_none());
        assert_eq!(c.role(role).unwrap().timeout.value, LOCAL_TIMEOUT);
    }
}

#[test]
fn keys_pick_the_seed_provider_per_role_then_any_keyed_provider() {
    let c = resolve_with(
        None,
        &[("ANTHROPIC_API_KEY", "sk-a"), ("KIMI_API_KEY", "sk-k")],
        &FlagLayer::default(),
    )
    .unwrap();
    assert_eq!(provider_of(&c, Role::Extraction).0, "anthropic");
    assert_eq!(provider_of(&c, Role::SignalScoring).0, "kimi");
    assert_eq!(provider_of(&c, Role::SlotDiscovery).0, "kimi");
    let ex = c.role(Role::Extraction).unwrap();
    assert_eq!(ex.model.value, "claude-sonnet-4-6");
    assert_eq!(ex.effort.as_ref().unwrap().value, "medium");
    let q = c.role(Role::QuestionGeneration).unwrap();
    assert_eq!(q.effort.as_ref().unwrap().value, "low");

    // Only a DeepSeek key: every role falls back to it rather than the local model.
    let c = resolve_with(None, &[("DEEPSEEK_API_KEY", "sk-d")], &FlagLayer::default()).unwrap();
    for role in Role::ALL {
        assert_eq!(
            provider_of(&c, role),
            ("deepseek", &Source::KeyPresent("DEEPSEEK_API_KEY"))
        );
    }
    assert_eq!(
        c.role(Role::Extraction).unwrap().model.value,
        "deepseek-chat"
    );
}

#[test]
fn layers_override_in_order_file_env_flag() {
    let file = "provider: ollama\nroles:\n  extraction: { provider: deepseek, max_tokens: 999 }\n";
    let c = resolve_with(Some(file), &[], &FlagLayer::default()).unwrap();
    assert_eq!(provider_of(&c, Role::Respondent).0, "ollama");
    assert_eq!(provider_of(&c, Role::Extraction).0, "deepseek");
    let ex = c.role(Role::Extraction).unwrap();
    assert_eq!(ex.max_tokens.value, 999);
    assert!(matches!(ex.max_tokens.source, Source::File(_)));

    let vars = [
        ("LLM_EXTRACTION_PROVIDER", "kimi"),
        ("KIMI_API_KEY", "k"),
        ("LLM_EXTRACTION_MAX_TOKENS", "77"),
    ];
    let c = resolve_with(Some(file), &vars, &FlagLayer::default()).unwrap();
    assert_eq!(
        provider_of(&c, Role::Extraction),
        ("kimi", &Source::Env("LLM_EXTRACTION_PROVIDER".to_owned()))
    );
    assert_eq!(c.role(Role::Extraction).unwrap().max_tokens.value, 77);

    let flags = FlagLayer {
        provider: Some("local".to_owned()),
        ..FlagLayer::default()
    };
    let c = resolve_with(Some(file), &vars, &flags).unwrap();
    for role in Role::ALL {
        assert_eq!(
            provider_of(&c, role),
            ("local", &Source::Flag("--provider"))
        );
    }
}

#[test]
fn the_seed_scoring_and_generation_variables_still_work() {
    let vars = [
        ("LLM_SCORING_PROVIDER", "deepseek"),
        ("LLM_GENERATION_PROVIDER", "ollama"),
    ];
    let c = resolve_with(None, &vars, &FlagLayer::default()).unwrap();
    assert_eq!(provider_of(&c, Role::SignalScoring).0, "deepseek");
    assert_eq!(provider_of(&c, Role::SlotDiscovery).0, "deepseek");
    assert_eq!(provider_of(&c, Role::QuestionGeneration).0, "ollama");
    assert_eq!(provider_of(&c, Role::Extraction).0, "local");

    // The role's own variable is more specific than the seed's shared one.
    let vars = [
        ("LLM_SCORING_PROVIDER", "deepseek"),
        ("LLM_SLOT_DISCOVERY_PROVIDER", "ollama"),
    ];
    let c = resolve_with(None, &vars, &FlagLayer::default()).unwrap();
    assert_eq!(provider_of(&c, Role::SlotDiscovery).0, "ollama");
    assert_eq!(provider_of(&c, Role::SignalScoring).0, "deepseek");
}

#[test]
fn a_model_from_a_lower_layer_than_the_provider_is_dropped() {
    let file = "roles:\n  extraction: { provider: anthropic, model: claude-opus-4 }\n";
    let vars = [("LLM_EXTRACTION_PROVIDER", "deepseek")];
    let c = resolve_with(Some(file), &vars, &FlagLayer::default()).unwrap();
    let ex = c.role(Role::Extraction).unwrap();
    assert_eq!(ex.model.value, "deepseek-chat");
    assert_eq!(ex.model.source, Source::Default);

    let vars = [
        ("LLM_EXTRACTION_PROVIDER", "ollama"),
        ("LLM_EXTRACTION_MODEL", "qwen2.5:7b"),
        ("LLM_EXTRACTION_BASE_URL", "http://10.0.0.2:11434/v1"),
    ];
    let c = resolve_with(Some(file), &vars, &FlagLayer::default()).unwrap();
    let ex = c.role(Role::Extraction).unwrap();
    assert_eq!(ex.model.value, "qwen2.5:7b");
    assert_eq!(ex.base_url.value, "http://10.0.0.2:11434/v1");
}

#[test]
fn mistakes_name_the_setting_and_its_source() {
    let err = resolve_with(
        None,
        &[("LLM_RESPONDENT_PROVIDER", "gemini")],
        &FlagLayer::default(),
    )
    .unwrap_err();
    assert!(err.0.contains("env LLM_RESPONDENT_PROVIDER"), "{err}");
    assert!(
        err.0.contains("'gemini'") && err.0.contains("kimi"),
        "{err}"
    );

    let err = resolve_with(
        None,
        &[
            ("LLM_EXTRACTION_PROVIDER", "openai"),
            ("LLM_EXTRACTION_BASE_URL", "localhost:8080"),
        ],
        &FlagLayer::default(),
    )
    .unwrap_err();
    assert!(err.0.contains("LLM_EXTRACTION_BASE_URL"), "{err}");

    let err = resolve_with(
        None,
        &[
            ("LLM_EXTRACTION_PROVIDER", "anthropic"),
            ("LLM_EXTRACTION_EFFORT", "max!"),
        ],
        &FlagLayer::default(),
    )
    .unwrap_err();
    assert!(err.0.contains("LLM_EXTRACTION_EFFORT"), "{err}");

    let err = resolve_with(
        None,
        &[("LLM_EXTRACTION_TIMEOUT", "0")],
        &FlagLayer::default(),
    )
    .unwrap_err();
    assert!(err.0.starts_with("LLM_EXTRACTION_TIMEOUT"), "{err}");

    let err = resolve_with(
        None,
        &[("LLM_EXTRACTION_PROVIDER", "scripted")],
        &FlagLayer::default(),
    )
    .unwrap_err();
    assert!(err.0.contains("--script"), "{err}");
}

#[test]
fn a_missing_key_is_reported_with_the_role_and_where_the_provider_came_from() {
    let c = resolve_with(
        None,
        &[("LLM_EXTRACTION_PROVIDER", "anthropic")],
        &FlagLayer::default(),
    )
    .unwrap();
    let ex = c.role(Role::Extraction).unwrap();
    let err = c.api_key(ex, &env(&[])).unwrap_err();
    assert!(
        err.0.contains("extraction") && err.0.contains("ANTHROPIC_API_KEY"),
        "{err}"
    );
    assert!(err.0.contains("env LLM_EXTRACTION_PROVIDER"), "{err}");
    let key = c
        .api_key(ex, &env(&[("ANTHROPIC_API_KEY", "sk-secret")]))
        .unwrap();
    assert!(!format!("{key:?}").contains("sk-secret"));
}

#[test]
fn settings_file_mistakes_name_the_yaml_path() {
    let path = Path::new("s.yaml");
    let err = SettingsFile::parse(path, "roles:\n  extractor: { provider: local }\n").unwrap_err();
    assert!(err.to_string().contains("roles.extractor"), "{err}");
    let err = SettingsFile::parse(path, "roles:\n  extraction: { temperature: 9 }\n").unwrap_err();
    assert!(
        err.to_string().contains("roles.extraction.temperature"),
        "{err}"
    );
    let err = SettingsFile::parse(path, "providr: local\n").unwrap_err();
    assert!(err.to_string().contains("providr"), "{err}");
}

#[test]
fn the_script_flag_selects_the_scripted_provider_unless_a_provider_is_named() {
    let flags = FlagLayer {
        script: Some(PathBuf::from("s.yaml")),
        ..FlagLayer::default()
    };
    let c = resolve_with(None, &[("LLM_EXTRACTION_PROVIDER", "local")], &flags).unwrap();
    for role in Role::ALL {
        assert_eq!(provider_of(&c, role).0, "scripted");
    }
    assert_eq!(c.script.as_deref(), Some(Path::new("s.yaml")));
    let described = c.describe();
    assert!(described.contains("flag --script"), "{described}");
}

// ---- the none provider and the understanding mode ----

fn understanding_of(
    file: Option<&str>,
    vars: &[(&str, &str)],
    flags: &FlagLayer,
) -> Result<Setting<Understanding>, LlmConfigError> {
    resolve_with(file, vars, flags).map(|c| c.understanding)
}

fn provider_flag(name: &str) -> FlagLayer {
    FlagLayer {
        provider: Some(name.to_owned()),
        ..FlagLayer::default()
    }
}

#[test]
fn the_none_provider_is_keyless_and_modelless() {
    let c = resolve_with(None, &[], &provider_flag("none")).unwrap();
    for role in Role::ALL {
        let r = c.role(role).unwrap();
        assert_eq!(r.preset.kind, ProviderKind::None);
        assert_eq!(c.api_key(r, &env(&[])).unwrap(), None);
    }
    assert!(c.describe().contains("(no model)"), "{}", c.describe());
    let router = build_router(&c, &env(&[]), &mut |_| {
        Err(LlmConfigError("no local model in this test".to_owned()))
    })
    .unwrap();
    for role in Role::ALL {
        assert!(router.is_modelless(role), "{role}");
    }
    // One role on none, the rest on a scripted model: the scripted roles keep their model.
    let file =
        "provider: scripted\nscript: s.yaml\nroles:\n  question_generation: { provider: none }\n";
    let c = resolve_with(Some(file), &[], &FlagLayer::default()).unwrap();
    assert_eq!(provider_of(&c, Role::QuestionGeneration).0, "none");
    assert_eq!(provider_of(&c, Role::Extraction).0, "scripted");
    assert_eq!(c.understanding.value, Understanding::Llm);
}

#[test]
fn understanding_defaults_follow_the_providers() {
    let none = understanding_of(None, &[], &FlagLayer::default()).unwrap();
    assert_eq!(
        none.value,
        Understanding::Offline,
        "nothing configured: the local model"
    );
    assert_eq!(none.source, Source::Provider("local".to_owned()));
    let none = understanding_of(None, &[], &provider_flag("none")).unwrap();
    assert_eq!(
        none,
        Setting::new(Understanding::Offline, Source::Provider("none".to_owned()))
    );
    let hosted = understanding_of(None, &[("ANTHROPIC_API_KEY", "k")], &FlagLayer::default());
    assert_eq!(hosted.unwrap().value, Understanding::Llm);
    let ollama = understanding_of(None, &[], &provider_flag("ollama")).unwrap();
    assert_eq!(ollama.value, Understanding::Llm);
    // Scripted runs keep the model path their scripts were written for.
    let flags = FlagLayer {
        script: Some(PathBuf::from("s.yaml")),
        ..FlagLayer::default()
    };
    assert_eq!(
        understanding_of(None, &[], &flags).unwrap().value,
        Understanding::Llm
    );
    // One understanding role on the local model is enough for offline.
    let vars = [
        ("DEEPSEEK_API_KEY", "k"),
        ("LLM_SIGNAL_SCORING_PROVIDER", "local"),
    ];
    let mixed = understanding_of(None, &vars, &FlagLayer::default()).unwrap();
    assert_eq!(mixed.value, Understanding::Offline);
    // Only the question on the local model: the answers are still understood by a model.
    let vars = [
        ("DEEPSEEK_API_KEY", "k"),
        ("LLM_QUESTION_GENERATION_PROVIDER", "local"),
    ];
    let mixed = understanding_of(None, &vars, &FlagLayer::default()).unwrap();
    assert_eq!(mixed.value, Understanding::Llm);
}

#[test]
fn understanding_layers_override_in_order_file_env_flag() {
    let keyed = [("OPENAI_API_KEY", "k")];
    let file = "understanding: offline\n";
    let u = understanding_of(Some(file), &keyed, &FlagLayer::default()).unwrap();
    assert_eq!(u.value, Understanding::Offline);
    assert!(matches!(u.source, Source::File(_)), "{:?}", u.source);

    let vars = [("OPENAI_API_KEY", "k"), (UNDERSTANDING_ENV, " LLM ")];
    let u = understanding_of(Some(file), &vars, &FlagLayer::default()).unwrap();
    assert_eq!(
        u,
        Setting::new(
            Understanding::Llm,
            Source::Env(UNDERSTANDING_ENV.to_owned())
        )
    );

    let flags = FlagLayer {
        understanding: Some(Understanding::Offline),
        ..FlagLayer::default()
    };
    let u = understanding_of(Some(file), &vars, &flags).unwrap();
    assert_eq!(
        u,
        Setting::new(Understanding::Offline, Source::Flag("--understanding"))
    );
    let described = resolve_with(Some(file), &vars, &flags).unwrap().describe();
    assert!(
        described.contains("understanding: offline") && described.contains("flag --understanding"),
        "{described}"
    );
    // A blank variable is unset.
    let vars = [("OPENAI_API_KEY", "k"), (UNDERSTANDING_ENV, "  ")];
    assert_eq!(
        understanding_of(None, &vars, &FlagLayer::default())
            .unwrap()
            .value,
        Understanding::Llm
    );
}

#[test]
fn bad_understanding_values_name_the_source_and_the_allowed_values() {
    let err =
        understanding_of(None, &[(UNDERSTANDING_ENV, "smart")], &FlagLayer::default()).unwrap_err();
    assert_eq!(
        err.0,
        "env INTERVIEWER_UNDERSTANDING: 'smart' is not an understanding mode (allowed: llm, \
         offline)"
    );
    let err = SettingsFile::parse(Path::new("s.yaml"), "understanding: clever\n").unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("s.yaml")
            && message.contains("understanding")
            && message.contains("'clever'")
            && message.contains("allowed: llm, offline"),
        "{message}"
    );
    assert_eq!(
        parse_understanding("bogus").unwrap_err(),
        "'bogus' is not an understanding mode (allowed: llm, offline)"
    );
}

#[test]
fn llm_understanding_without_a_model_is_refused() {
    let flags = FlagLayer {
        provider: Some("none".to_owned()),
        understanding: Some(Understanding::Llm),
        ..FlagLayer::default()
    };
    let err = understanding_of(None, &[], &flags).unwrap_err();
    assert!(
        err.0.contains("flag --understanding")
            && err.0.contains("extraction role")
            && err.0.contains("none provider (flag --provider)"),
        "{err}"
    );
    // The question alone on none is fine with llm understanding.
    let vars = [
        ("OPENAI_API_KEY", "k"),
        ("LLM_QUESTION_GENERATION_PROVIDER", "none"),
    ];
    let u = understanding_of(None, &vars, &FlagLayer::default()).unwrap();
    assert_eq!(u.value, Understanding::Llm);
}
