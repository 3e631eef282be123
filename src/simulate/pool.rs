//! Bounded concurrency for matrix runs: a fixed number of worker threads take jobs in order.
//!
//! Threads rather than tasks: each simulated session owns a `SQLite` connection and runs on its
//! own single-threaded runtime (see [`run_one`](super::run_one)), so a job is a blocking call.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `work` on every item with at most `jobs` running at once, and returns the results in
/// the items' order. Items are started in order; `jobs` is raised to 1 when 0.
pub fn run_bounded<T, R, F>(items: Vec<T>, jobs: usize, work: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    let count = items.len();
    let queue: Vec<Mutex<Option<T>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let results: Vec<Mutex<Option<R>>> = (0..count).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, count.max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(slot) = queue.get(index) else { break };
                    // Each index is taken by exactly one worker, so the locks never contend; a
                    // poisoned lock only means another job panicked, and its item is still ours.
                    let item = slot
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .take();
                    if let Some(item) = item {
                        let result = work(index, item);
                        if let Some(out) = results.get(index) {
                            *out.lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
                        }
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .filter_map(|r| {
            r.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    use super::*;

    #[test]
    fn results_keep_the_item_order() {
        let out = run_bounded((0..20).collect(), 3, |i, x: usize| {
            // Later items finish first, so completion order differs from item order.
            std::thread::sleep(Duration::from_millis(20 - x as u64));
            (i, x * 2)
        });
        let expected: Vec<(usize, usize)> = (0..20).map(|x| (x, x * 2)).collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn at_most_jobs_run_at_once() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        run_bounded((0..12).collect::<Vec<u32>>(), 2, |_, _| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(10));
            running.fetch_sub(1, Ordering::SeqCst);
        });
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn zero_jobs_still_run_and_no_items_is_fine() {
        assert_eq!(run_bounded(vec![1, 2], 0, |_, x: i32| x + 1), [2, 3]);
        assert!(run_bounded(Vec::<i32>::new(), 4, |_, x| x).is_empty());
    }
}
