//! Prefix reuse: each role keeps its own KV cache between calls, and a new call keeps the
//! cached tokens its prompt starts with and runs only the rest.
//!
//! A role's prompts repeat their instructions (the extraction system prompt, the scoring
//! rubrics) and differ in the per-call material at the end, so the common prefix with the
//! role's previous call (prompt and reply) is usually most of the prompt. Reuse is a
//! truncation of the cache to that prefix ([`KvCache::truncate`]): no copy of weights or cache.
//!
//! Memory: a cache's pages become resident as positions are written and stay so until it is
//! dropped, so the pool counts each cache's high-water mark against a byte budget and drops the
//! least recently used caches of other roles beyond it. The cache in use is never dropped.

use crate::llm::Role;

use super::LocalError;
use super::llama::KvCache;

/// Resident KV memory the caches of idle roles may keep. SmolLM2-135M needs 23 KB per cached
/// token (f16), so this holds its four interview roles' prompts (about 5,500 tokens together);
/// a 1.7B model (197 KB per token) keeps little beyond the cache in use.
pub(super) const KV_CACHE_BYTES: usize = 128 * 1024 * 1024;

/// One role's cache and the tokens it holds.
pub(super) struct Slot {
    role: Role,
    pub(super) cache: KvCache,
    /// The tokens in `cache`, position for position.
    pub(super) tokens: Vec<u32>,
    last_used: u64,
}

impl Slot {
    /// Keeps the first `len` cached tokens.
    pub(super) fn truncate(&mut self, len: usize) {
        self.cache.truncate(len);
        self.tokens.truncate(self.cache.len());
    }
}

/// The roles' caches.
pub(super) struct KvPool {
    slots: Vec<Slot>,
    budget: usize,
    enabled: bool,
    clock: u64,
}

impl KvPool {
    pub(super) fn new(budget: usize) -> Self {
        Self {
            slots: Vec::new(),
            budget,
            enabled: true,
            clock: 0,
        }
    }

    /// Turns reuse on or off; off also drops every cache (and its memory). Returns the caches
    /// and cached tokens held before the change.
    pub(super) fn set_enabled(&mut self, enabled: bool) -> (usize, usize) {
        let size = self.size();
        self.enabled = enabled;
        if !enabled {
            self.slots.clear();
        }
        size
    }

    /// `role`'s slot, truncated to the longest cached prefix of `prompt` that leaves at least
    /// the last prompt token to run (it gives the logits); `fresh` makes a cache when the role
    /// has none. With reuse off the slot comes back empty.
    pub(super) fn acquire(
        &mut self,
        role: Role,
        prompt: &[u32],
        fresh: impl FnOnce() -> KvCache,
    ) -> Result<&mut Slot, LocalError> {
        self.clock += 1;
        self.evict_beyond_budget(role);
        match self.slots.iter().position(|s| s.role == role) {
            // The role's slot goes last, where the lookup below finds it.
            Some(index) => {
                let slot = self.slots.swap_remove(index);
                self.slots.push(slot);
            }
            None => self.slots.push(Slot {
                role,
                cache: fresh(),
                tokens: Vec::new(),
                last_used: 0,
            }),
        }
        let (enabled, clock) = (self.enabled, self.clock);
        let slot = self
            .slots
            .last_mut()
            .ok_or_else(|| LocalError::Inference("the KV cache pool lost a cache".to_owned()))?;
        let keep = if enabled {
            common_prefix(&slot.tokens, prompt).min(prompt.len().saturating_sub(1))
        } else {
            0
        };
        slot.truncate(keep);
        slot.last_used = clock;
        Ok(slot)
    }

    /// Caches held and the tokens they hold, for logs and benchmarks.
    pub(super) fn size(&self) -> (usize, usize) {
        (
            self.slots.len(),
            self.slots.iter().map(|s| s.tokens.len()).sum(),
        )
    }

    /// Resident bytes of every cache.
    pub(super) fn resident_bytes(&self) -> usize {
        self.slots.iter().map(|s| s.cache.resident_bytes()).sum()
    }

    /// Drops least recently used caches of roles other than `keep` while over the budget.
    fn evict_beyond_budget(&mut self, keep: Role) {
        while self.resident_bytes() > self.budget {
            let Some(oldest) = self
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.role != keep)
                .min_by_key(|(_, s)| s.last_used)
                .map(|(i, _)| i)
            else {
                break;
            };
            self.slots.swap_remove(oldest);
        }
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::local::llama::LlamaShape;

    fn shape() -> LlamaShape {
        LlamaShape {
            layers: 1,
            width: 4,
            heads: 1,
            kv_heads: 1,
            rope_dim: 4,
            rope_base: 10_000.0,
            eps: 1e-5,
            context: 64,
        }
    }

    fn fresh() -> KvCache {
        KvCache::new(&shape())
    }

    /// Pretends the model ran `tokens` into the role's cache.
    fn fill(pool: &mut KvPool, role: Role, tokens: &[u32]) {
        let slot = pool.acquire(role, tokens, fresh).unwrap();
        slot.truncate(0);
        slot.cache.set_len(tokens.len());
        slot.tokens = tokens.to_vec();
    }

    #[test]
    fn common_prefix_counts_equal_leading_tokens() {
        assert_eq!(common_prefix(&[1, 2, 3], &[1, 2, 4]), 2);
        assert_eq!(common_prefix(&[], &[1]), 0);
        assert_eq!(common_prefix(&[1, 2], &[1, 2, 3]), 2);
    }

    #[test]
    fn a_role_keeps_the_prefix_its_next_prompt_shares() {
        let mut pool = KvPool::new(usize::MAX);
        fill(&mut pool, Role::Extraction, &[1, 2, 3, 4, 5, 6]);
        let slot = pool
            .acquire(Role::Extraction, &[1, 2, 3, 9], fresh)
            .unwrap();
        assert_eq!(slot.tokens, vec![1, 2, 3]);
        assert_eq!(slot.cache.len(), 3);
        // The whole prompt cached: the last token still runs, for its logits.
        fill(&mut pool, Role::Extraction, &[1, 2, 3, 4]);
        let slot = pool
            .acquire(Role::Extraction, &[1, 2, 3, 4], fresh)
            .unwrap();
        assert_eq!(slot.cache.len(), 3);
        // Another role has its own cache.
        let slot = pool
            .acquire(Role::SignalScoring, &[1, 2, 3, 4], fresh)
            .unwrap();
        assert_eq!(slot.cache.len(), 0);
        assert_eq!(pool.size(), (2, 3));
    }

    #[test]
    fn reuse_off_drops_the_caches_and_starts_empty() {
        let mut pool = KvPool::new(usize::MAX);
        fill(&mut pool, Role::Extraction, &[1, 2, 3, 4]);
        assert_eq!(pool.set_enabled(false), (1, 4));
        assert_eq!(pool.size(), (0, 0));
        fill(&mut pool, Role::Extraction, &[1, 2, 3, 4]);
        let slot = pool
            .acquire(Role::Extraction, &[1, 2, 3, 4, 5], fresh)
            .unwrap();
        assert_eq!(slot.cache.len(), 0);
    }

    #[test]
    fn idle_caches_beyond_the_budget_go_least_recently_used_first() {
        let per_token = shape().kv_bytes_per_token();
        let mut pool = KvPool::new(25 * per_token);
        fill(&mut pool, Role::Extraction, &[1; 10]);
        fill(&mut pool, Role::SignalScoring, &[2; 10]);
        fill(&mut pool, Role::QuestionGeneration, &[3; 10]);
        assert_eq!(pool.size().0, 3, "eviction happens when a call starts");
        // 30 tokens resident > 25: the oldest other role goes.
        pool.acquire(Role::QuestionGeneration, &[3; 11], fresh)
            .unwrap();
        let roles: Vec<Role> = pool.slots.iter().map(|s| s.role).collect();
        assert!(!roles.contains(&Role::Extraction), "{roles:?}");
        assert_eq!(pool.resident_bytes(), 20 * per_token);
        // The role in use is kept even when it alone exceeds the budget.
        let mut small = KvPool::new(per_token);
        fill(&mut small, Role::Extraction, &[1; 10]);
        small.acquire(Role::Extraction, &[1; 11], fresh).unwrap();
        assert_eq!(small.size(), (1, 10));
    }
}
