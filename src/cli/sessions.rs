//! `interviewer sessions`: the interviews stored in the database, most recently active first.

use std::path::Path;

use super::{CliError, emit};
use crate::store::{Store, StoreOps};

pub fn run(db: &Path, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    let store = Store::open(db).map_err(|e| CliError::Input(e.to_string()))?;
    let sessions = store
        .list_sessions()
        .map_err(|e| CliError::Input(e.to_string()))?;
    if sessions.is_empty() {
        return emit(out, &format!("no sessions in {}\n", db.display()));
    }
    let mut text = format!(
        "{:<36}  {:<24}  {:<18}  {:>5}  {:<8}  {}\n",
        "id", "concept", "methodology", "turns", "status", "last activity"
    );
    for s in sessions {
        text.push_str(&format!(
            "{:<36}  {:<24}  {:<18}  {:>5}  {:<8}  {}\n",
            s.id,
            s.concept,
            s.methodology,
            s.turns,
            s.status.as_str(),
            s.updated_at
        ));
    }
    emit(out, &text)
}
