//! `simulate --matrix`: every persona × methodology combination, `--jobs` at a time, one
//! progress bar per run, a manifest that makes the matrix resumable, and the comparison table.

use std::path::Path;

use indicatif::MultiProgress;

use super::{
    CliError, SimulateArgs, finish_bar, label, matrix_error, new_bar, simulation_error, spec_for,
    write_exports,
};
use crate::cli::emit;
use crate::config::{Concept, ConfigDir};
use crate::domain::Understanding;
use crate::pipeline::Services;
use crate::signals::Catalog;
use crate::simulate::matrix::{
    Manifest, MatrixParams, MatrixSpec, RunStatus, SharedManifest, manifest_path,
};
use crate::simulate::{
    RunProgress, RunReport, SimulationSpec, comparison_table, run_bounded, run_one, session_id,
};
use crate::store::{SessionStatus, Store, StoreOps};

/// Every persona × methodology cell of the matrix, personas outermost.
pub(super) fn matrix_cells(
    dir: &ConfigDir,
    args: &SimulateArgs,
    concept: &Concept,
    spec: &MatrixSpec,
    understanding: Understanding,
) -> Result<Vec<SimulationSpec>, CliError> {
    let methodology_refs = match (&args.methodology, spec.methodologies.is_empty()) {
        (Some(_), false) => {
            return Err(CliError::Usage(
                "give the methodologies either with --methodology or in --matrix \
                 methodologies=..., not both"
                    .to_owned(),
            ));
        }
        (Some(m), true) => vec![m.clone()],
        (None, true) => vec![concept.methodology.clone()],
        (None, false) => spec.methodologies.clone(),
    };
    let personas = spec
        .personas
        .iter()
        .map(|p| dir.persona(p))
        .collect::<Result<Vec<_>, _>>()?;
    let methodologies = methodology_refs
        .iter()
        .map(|m| dir.methodology(m, &Catalog))
        .collect::<Result<Vec<_>, _>>()?;
    unique("persona", personas.iter().map(|p| p.id.as_str()))?;
    unique(
        "methodology",
        methodologies.iter().map(|m| m.method.name.as_str()),
    )?;
    let mut cells = Vec::with_capacity(personas.len() * methodologies.len());
    for persona in &personas {
        for methodology in &methodologies {
            cells.push(spec_for(
                dir,
                args,
                concept,
                methodology.clone(),
                persona.clone(),
                understanding,
            )?);
        }
    }
    Ok(cells)
}

/// Two paths naming files with the same id would be one cell twice.
fn unique<'a>(kind: &str, ids: impl Iterator<Item = &'a str>) -> Result<(), CliError> {
    let mut seen = std::collections::BTreeSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(CliError::Usage(format!(
                "--matrix: two {kind} files have the id '{id}'"
            )));
        }
    }
    Ok(())
}

pub(super) fn run_matrix(
    db: &Path,
    args: &SimulateArgs,
    cells: Vec<SimulationSpec>,
    services: &Services,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    let manifest = prepare_manifest(db, args, &cells, services)?;
    eprintln!(
        "{} runs, {} at a time; manifest {}",
        cells.len(),
        args.jobs,
        manifest.path().display()
    );
    let bars = MultiProgress::new();
    let jobs: Vec<(SimulationSpec, String)> = cells
        .into_iter()
        .map(|spec| {
            let id = manifest
                .snapshot()
                .run(&spec.persona.id, &spec.interview.methodology.method.name)
                .map_or_else(
                    || session_id(&spec, &services.settings),
                    |r| r.session_id.clone(),
                );
            (spec, id)
        })
        .collect();
    let total = jobs.len();
    let results = run_bounded(jobs, usize::from(args.jobs), |_, (spec, id)| {
        run_cell(db, args, &spec, &id, services, &manifest, &bars)
    });
    let summaries: Vec<_> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|r| r.summary.clone()))
        .collect();
    emit(out, &comparison_table(&summaries))?;
    let failures: Vec<&CliError> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    match failures.first() {
        None => Ok(()),
        Some(first) => {
            for e in &failures {
                eprintln!("error: {e}");
            }
            let message = format!(
                "{} of {total} runs failed; run the same command again to resume them",
                failures.len()
            );
            Err(match first {
                CliError::Llm(_) => CliError::Llm(message),
                _ => CliError::Input(message),
            })
        }
    }
}

/// Loads (or starts) the manifest, records every cell's session id and marks cells whose
/// session has finished, then saves it.
fn prepare_manifest(
    db: &Path,
    args: &SimulateArgs,
    cells: &[SimulationSpec],
    services: &Services,
) -> Result<SharedManifest, CliError> {
    let Some(first) = cells.first() else {
        return Err(CliError::Usage("--matrix: no runs to make".to_owned()));
    };
    let params = MatrixParams {
        concept: first.interview.concept.id.clone(),
        seed: args.seed,
        turns: args.turns,
        srl: services.settings.enable_srl,
        canonical_slots: services.settings.enable_canonical_slots,
    };
    let keys: Vec<(String, String)> = cells.iter().map(cell_key).collect();
    let path = manifest_path(args.out.as_deref(), db, &params, &keys);
    let mut manifest = Manifest::load_for(&path, &params).map_err(matrix_error)?;
    let store = Store::open(db).map_err(|e| CliError::Input(e.to_string()))?;
    for (spec, (persona, methodology)) in cells.iter().zip(&keys) {
        let id = manifest.ensure(persona, methodology, &session_id(spec, &services.settings));
        let stored = store
            .get_session(&id)
            .map_err(|e| CliError::Input(e.to_string()))?;
        if stored.is_some_and(|s| s.status == SessionStatus::Finished) {
            manifest.set_status(persona, methodology, RunStatus::Finished, None);
        }
    }
    manifest.save(&path).map_err(matrix_error)?;
    Ok(SharedManifest::new(path, manifest))
}

/// Runs one cell (or summarises it when it finished earlier), keeping the manifest current.
fn run_cell(
    db: &Path,
    args: &SimulateArgs,
    spec: &SimulationSpec,
    id: &str,
    services: &Services,
    manifest: &SharedManifest,
    bars: &MultiProgress,
) -> Result<RunReport, CliError> {
    let (persona, methodology) = cell_key(spec);
    let finished_before = manifest
        .snapshot()
        .run(&persona, &methodology)
        .is_some_and(|r| r.status == RunStatus::Finished);
    if !finished_before {
        manifest
            .set_status(&persona, &methodology, RunStatus::Running, None)
            .map_err(matrix_error)?;
    }
    let mut progress = RunProgress::new(bars.add(new_bar(spec, &label(spec))));
    let report = run_one(db, spec, services, id, |e| {
        if let Some(e) = e.pipeline() {
            progress.observe(e);
        }
    });
    finish_bar(&progress, &report);
    let (status, error) = match &report {
        Ok(r) if r.summary.finished => (RunStatus::Finished, None),
        Ok(_) => (RunStatus::Failed, Some("stopped before the end".to_owned())),
        Err(e) => (RunStatus::Failed, Some(e.to_string())),
    };
    manifest
        .set_status(&persona, &methodology, status, error)
        .map_err(matrix_error)?;
    let report = report.map_err(|e| simulation_error(id, &e))?;
    if report.already_finished {
        bars.suspend(|| eprintln!("{}: finished earlier, skipped", label(spec)));
    }
    if let Some(out) = &args.out {
        let written = write_exports(db, id, &out.join(format!("{persona}__{methodology}")))?;
        bars.suspend(|| eprintln!("{written}"));
    }
    Ok(report)
}

fn cell_key(spec: &SimulationSpec) -> (String, String) {
    (
        spec.persona.id.clone(),
        spec.interview.methodology.method.name.clone(),
    )
}
