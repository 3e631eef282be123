//! Prefix reuse: keep the KV cache of prompt prefixes that repeat (a role's system prompt, the
//! signal-scoring rubrics) and run only the rest of the next prompt.
//!
//! candle's `quantized_llama::ModelWeights` keeps its KV cache inside the weights and only ever
//! appends to it (`forward(x, index_pos)` concatenates onto whatever is cached; there is no
//! truncation), so a cache cannot be rolled back to a shorter prefix. But the weights are
//! `Clone` and a clone shares every tensor, weights and cache alike, while appending builds new
//! cache tensors. So a snapshot is a clone taken when the prefill reaches a checkpoint, and a
//! call that starts with a snapshot's tokens continues from a clone of it. qwen2's weights are
//! not `Clone`; that architecture runs without reuse.
//!
//! Checkpoints: the longest common prefix with the role's previous prompt (which catches the
//! instruction text before the per-call material), or, on a role's first call, the end of the
//! system block. Snapshots are kept per role, bounded by a byte budget, least recently used out.

use std::collections::HashMap;

use candle_transformers::models::quantized_llama::ModelWeights;

use crate::llm::Role;

/// A checkpoint must save at least this many tokens over what is already reused; shorter
/// prefixes cost a clone and memory for a few milliseconds of prefill.
const MIN_GAIN: usize = 32;

/// Memory for snapshots. SmolLM2-135M needs 46 KB per cached token, SmolLM2-1.7B 393 KB, so
/// this holds about 17,000 tokens of the small model or 2,000 of the large one: a few system
/// prompts.
pub(super) const PREFIX_CACHE_BYTES: usize = 768 * 1024 * 1024;

/// Snapshots of the model after known prompt prefixes.
pub(super) struct PrefixCache {
    entries: Vec<Entry>,
    /// The last prompt of each role, to find where the next one diverges.
    last_prompts: HashMap<Role, Vec<u32>>,
    bytes_per_token: usize,
    budget: usize,
    enabled: bool,
    clock: u64,
}

struct Entry {
    role: Role,
    tokens: Vec<u32>,
    weights: ModelWeights,
    last_used: u64,
}

impl PrefixCache {
    pub(super) fn new(bytes_per_token: usize, budget: usize) -> Self {
        Self {
            entries: Vec::new(),
            last_prompts: HashMap::new(),
            bytes_per_token: bytes_per_token.max(1),
            budget,
            enabled: true,
            clock: 0,
        }
    }

    /// Turns reuse on or off (off also drops every snapshot); for measuring the gain.
    pub(super) fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
        if !enabled {
            self.clear();
        }
    }

    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.last_prompts.clear();
    }

    /// A clone of the snapshot with the longest prefix of `prompt` (strictly shorter than it,
    /// since the last prompt token must run to give logits), and that prefix's length.
    pub(super) fn lookup(&mut self, prompt: &[u32]) -> Option<(ModelWeights, usize)> {
        if !self.enabled {
            return None;
        }
        self.clock += 1;
        let clock = self.clock;
        let best = self
            .entries
            .iter_mut()
            .filter(|e| e.tokens.len() < prompt.len() && prompt.starts_with(&e.tokens))
            .max_by_key(|e| e.tokens.len())?;
        best.last_used = clock;
        Some((best.weights.clone(), best.tokens.len()))
    }

    /// Where to snapshot while prefilling `prompt` for `role`, when `reused` tokens come from a
    /// snapshot already: the common prefix with the role's previous prompt or the end of the
    /// system block, whichever is longer, if it gains enough.
    pub(super) fn checkpoint(
        &self,
        role: Role,
        prompt: &[u32],
        user_start: usize,
        reused: usize,
    ) -> Option<usize> {
        if !self.enabled || prompt.is_empty() {
            return None;
        }
        let shared = self
            .last_prompts
            .get(&role)
            .map_or(0, |last| common_prefix(last, prompt));
        let target = shared.max(user_start).min(prompt.len() - 1);
        (target >= reused + MIN_GAIN).then_some(target)
    }

    /// Keeps `weights` (whose cache holds exactly `tokens`) as `role`'s snapshot, replacing the
    /// role's previous one and evicting the least recently used ones beyond the budget.
    pub(super) fn store(&mut self, role: Role, tokens: Vec<u32>, weights: ModelWeights) {
        if !self.enabled || tokens.len().saturating_mul(self.bytes_per_token) > self.budget {
            return;
        }
        self.clock += 1;
        self.entries
            .retain(|e| e.role != role && e.tokens != tokens);
        self.entries.push(Entry {
            role,
            tokens,
            weights,
            last_used: self.clock,
        });
        while self.cached_bytes() > self.budget {
            let Some(oldest) = self
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
            else {
                break;
            };
            self.entries.swap_remove(oldest);
        }
    }

    /// Records `role`'s latest prompt.
    pub(super) fn remember(&mut self, role: Role, prompt: &[u32]) {
        if self.enabled {
            self.last_prompts.insert(role, prompt.to_vec());
        }
    }

    fn cached_bytes(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.tokens.len().saturating_mul(self.bytes_per_token))
            .sum()
    }

    /// Snapshots held and the tokens they cover, for logs and benchmarks.
    pub(super) fn size(&self) -> (usize, usize) {
        (
            self.entries.len(),
            self.entries.iter().map(|e| e.tokens.len()).sum(),
        )
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_counts_equal_leading_tokens() {
        assert_eq!(common_prefix(&[1, 2, 3], &[1, 2, 4]), 2);
        assert_eq!(common_prefix(&[], &[1]), 0);
        assert_eq!(common_prefix(&[1, 2], &[1, 2, 3]), 2);
    }

    #[test]
    fn checkpoints_need_a_gain_and_leave_the_last_token() {
        let mut cache = PrefixCache::new(1, 1_000);
        let prompt: Vec<u32> = (0..100).collect();
        // First call of a role: the end of the system block.
        assert_eq!(cache.checkpoint(Role::Extraction, &prompt, 60, 0), Some(60));
        assert_eq!(cache.checkpoint(Role::Extraction, &prompt, 60, 40), None);
        // Next call: the common prefix with the previous prompt, capped below the end.
        cache.remember(Role::Extraction, &prompt);
        assert_eq!(cache.checkpoint(Role::Extraction, &prompt, 10, 0), Some(99));
        let mut next = prompt.clone();
        next[80] = 999;
        assert_eq!(cache.checkpoint(Role::Extraction, &next, 10, 0), Some(80));
        assert_eq!(cache.checkpoint(Role::SignalScoring, &next, 10, 0), None);
        cache.set_enabled(false);
        assert_eq!(cache.checkpoint(Role::Extraction, &next, 60, 0), None);
    }
}
