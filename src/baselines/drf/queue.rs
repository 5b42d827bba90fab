//! The queue of progressive filling, without sifting every job through a
//! heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A dominant share, totally ordered (by `f64::total_cmp`) for the heap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Share(f64);

impl Eq for Share {}

impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Share {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The queue of progressive filling: the job with the smallest key
/// `(share, index)` next. Every job starts at share 0 and gets one more key
/// after each step it takes, so the queue is the indices `next..n`, each
/// at share 0 and in index order, merged with a min-heap of the keys pushed
/// since: the same order as one heap of every key (keys are distinct, as a
/// job has one key at a time), without sifting every job through the heap
/// (most jobs of a long queue take no step).
pub(super) struct FillQueue {
    next: usize,
    n: usize,
    heap: BinaryHeap<Reverse<(Share, usize)>>,
}

impl FillQueue {
    /// Jobs `0..n`, each at share 0.
    pub(super) fn new(n: usize) -> Self {
        FillQueue {
            next: 0,
            n,
            heap: BinaryHeap::new(),
        }
    }

    /// The job with the smallest key, taken off the queue.
    pub(super) fn pop(&mut self) -> Option<usize> {
        let fresh = (self.next < self.n).then_some((Share(0.0), self.next));
        match (fresh, self.heap.peek()) {
            (Some(f), Some(Reverse(h))) if *h < f => self.heap.pop().map(|Reverse((_, i))| i),
            (Some((_, i)), _) => {
                self.next += 1;
                Some(i)
            }
            (None, _) => self.heap.pop().map(|Reverse((_, i))| i),
        }
    }

    /// Job `i` (off the queue) back at `share`.
    pub(super) fn push(&mut self, share: f64, i: usize) {
        self.heap.push(Reverse((Share(share), i)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn fill_queue_pops_as_one_heap() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..300 {
            let n = rng.random_range(0..12);
            let mut queue = FillQueue::new(n);
            let mut heap: BinaryHeap<Reverse<(Share, usize)>> =
                (0..n).map(|i| Reverse((Share(0.0), i))).collect();
            loop {
                let want = heap.pop().map(|Reverse((_, i))| i);
                assert_eq!(queue.pop(), want);
                let Some(i) = want else { break };
                if rng.random_range(0..3) > 0 {
                    // Shares as DRF makes them, ties and zeros included.
                    let share = [0.0, -0.0, 0.25, 0.5, 1.0][rng.random_range(0..5)];
                    queue.push(share, i);
                    heap.push(Reverse((Share(share), i)));
                }
            }
        }
    }
}
