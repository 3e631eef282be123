//! What methodology validation needs to know about the signals the engine can produce.
//!
//! The signal catalogue belongs to `signals`, which sits above `config` (its detectors read
//! configured methodologies). Validation therefore takes the catalogue as a [`SignalNames`]
//! argument: whoever loads a methodology passes `signals::Catalog`, and `config` never imports
//! the detector code. Tests of this module pass a small fake instead.

/// The signal vocabulary a methodology is checked against.
pub trait SignalNames {
    /// The pools a methodology's `signals:` section may list, named in error messages.
    fn pools(&self) -> &[&str];

    /// Whether a methodology's `signals:` section may list `pool`.
    fn is_pool(&self, pool: &str) -> bool {
        self.pools().contains(&pool)
    }

    /// Whether `name` is a signal or a detector the engine has.
    fn is_known(&self, name: &str) -> bool;

    /// Why `key` cannot be a strategy's weight key (an unknown signal, or a qualifier that does
    /// not fit the signal's kind), or `None` when it is valid.
    fn weight_key_problem(&self, key: &str) -> Option<String>;

    /// The node type a weight key names, when it weights a category whose values are the
    /// methodology's node types (`graph.node.type.<type>`): validation checks it against the
    /// ontology. `None` for every other key.
    fn node_type_in_key<'k>(&self, _key: &'k str) -> Option<&'k str> {
        None
    }
}

/// A vocabulary that accepts every pool, signal and weight key, for the unit tests of modules
/// below `signals` (`graph`): they load the shipped methodologies for their ontology and
/// strategies, while the catalogue check of those files is tested where the catalogue is
/// reachable.
#[cfg(test)]
pub(crate) struct AnySignals;

#[cfg(test)]
impl SignalNames for AnySignals {
    fn pools(&self) -> &[&str] {
        &[]
    }

    fn is_pool(&self, _pool: &str) -> bool {
        true
    }

    fn is_known(&self, _name: &str) -> bool {
        true
    }

    fn weight_key_problem(&self, _key: &str) -> Option<String> {
        None
    }
}
