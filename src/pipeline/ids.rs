//! Ids the pipeline mints for utterances, nodes, edges and slots.
//!
//! Name-based (`UUIDv5`) from the session id, the turn, what is being named and a counter, so
//! a stage that runs again after a crash mints the ids its rolled-back attempt minted, and a
//! seeded simulation (whose session id is derived from its seed) exports byte-identical files.
//! Ids are unique within a session because each stage commits once per turn and names its own
//! kind; across sessions because session ids are.

/// Mints the ids of one kind of thing in one turn.
pub(crate) struct IdMinter {
    prefix: String,
    next: u32,
}

impl IdMinter {
    pub(crate) fn new(session_id: &str, turn: u32, kind: &str) -> Self {
        Self {
            prefix: format!("interviewer/{session_id}/{turn}/{kind}/"),
            next: 0,
        }
    }

    /// The next id.
    pub(crate) fn mint(&mut self) -> String {
        self.next += 1;
        let name = format!("{}{}", self.prefix, self.next);
        uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, name.as_bytes()).to_string()
    }
}

/// The one id of a kind in a turn (an utterance).
pub(crate) fn single(session_id: &str, turn: u32, kind: &str) -> String {
    IdMinter::new(session_id, turn, kind).mint()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let mut a = IdMinter::new("s1", 3, "surface");
        let mut b = IdMinter::new("s1", 3, "surface");
        let first = a.mint();
        assert_eq!(first, b.mint());
        assert_ne!(first, a.mint());
        assert_ne!(first, IdMinter::new("s2", 3, "surface").mint());
        assert_ne!(first, IdMinter::new("s1", 4, "surface").mint());
        assert_ne!(first, single("s1", 3, "slot"));
        assert_eq!(first.len(), 36);
    }
}
