//! One machine's cells: what is used in every slot from the state's origin
//! on, and which GPU ids are taken.

use std::collections::VecDeque;

use crate::model::Resources;

/// A version of the state, as cells are stamped with it: bookkeeping for
/// the state's readers (a session re-reads only the cells changed since
/// it last read), not part of what the state holds. Two states that hold
/// the same are equal whatever their stamps, so a change rolled back
/// leaves the state equal to what it was.
#[derive(Debug, Clone, Copy, Default, PartialOrd)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub(crate) struct Stamp(pub u64);

impl PartialEq for Stamp {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What one (machine, slot) cell holds: the resources used and the GPU ids
/// taken, ascending (memory follows the GPUs in use, not the machine's
/// count).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct CellUse {
    pub(crate) used: Resources,
    pub(crate) gpus: Vec<u32>,
    /// The state's version when the cell last changed.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) stamp: Stamp,
}

impl CellUse {
    pub fn gpu_taken(&self, index: u32) -> bool {
        self.gpus.binary_search(&index).is_ok()
    }

    fn set_gpu(&mut self, index: u32, taken: bool) {
        match (self.gpus.binary_search(&index), taken) {
            (Err(at), true) => self.gpus.insert(at, index),
            (Ok(at), false) => {
                self.gpus.remove(at);
            }
            _ => {}
        }
    }
}

/// A machine's cells from slot `origin` on (the deque's front), grown when a
/// use reaches past its end. Slots past the end hold nothing.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct MachineCells {
    /// The machine's GPU ids are `0..gpu_ids`.
    gpu_ids: u32,
    cells: VecDeque<CellUse>,
    /// The state's version when a cell of the machine last changed.
    #[cfg_attr(feature = "serde", serde(default))]
    stamp: Stamp,
}

impl MachineCells {
    pub fn new(gpu_ids: u32) -> Self {
        MachineCells {
            gpu_ids,
            cells: VecDeque::new(),
            stamp: Stamp(0),
        }
    }

    /// The cell of `slot` (`origin ≤ slot`), `None` past the stored end.
    pub fn get(&self, origin: u32, slot: u32) -> Option<&CellUse> {
        slot.checked_sub(origin)
            .and_then(|i| self.cells.get(i as usize))
    }

    /// The resources used in `slot` (zero past the stored end or before the
    /// origin).
    pub fn used(&self, origin: u32, slot: u32) -> Resources {
        self.get(origin, slot).map_or(Resources::zero(), |c| c.used)
    }

    /// Whether GPU `index` is free in every slot of `start..end`.
    pub fn gpu_free(&self, origin: u32, start: u32, end: u32, index: u32) -> bool {
        (start..end).all(|t| self.get(origin, t).is_none_or(|c| !c.gpu_taken(index)))
    }

    /// The state's version when a cell of the machine last changed.
    pub fn stamp(&self) -> u64 {
        self.stamp.0
    }

    /// The state's version when the cell of `slot` last changed (0 for a
    /// cell never changed, or not stored).
    pub fn cell_stamp(&self, origin: u32, slot: u32) -> u64 {
        self.get(origin, slot).map_or(0, |c| c.stamp.0)
    }

    /// Adds (`add`) or removes `amount` and the GPU ids `gpus` in the slots
    /// `start..end` (`origin ≤ start`), stamping the cells changed with
    /// the state's version `stamp`.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        origin: u32,
        start: u32,
        end: u32,
        amount: &Resources,
        gpus: &[u32],
        add: bool,
        stamp: u64,
    ) {
        let (from, to) = ((start - origin) as usize, (end - origin) as usize);
        if add && self.cells.len() < to {
            self.cells.resize_with(to, CellUse::default);
        }
        let to = to.min(self.cells.len());
        for cell in self.cells.range_mut(from.min(to)..to) {
            cell.used = if add {
                cell.used.plus(amount)
            } else {
                // Rounding may leave a hair below zero: clamp it.
                cell.used.minus(amount).max(&Resources::zero())
            };
            for &g in gpus {
                cell.set_gpu(g, add);
            }
            cell.stamp = Stamp(stamp);
        }
        self.stamp = Stamp(stamp);
    }

    /// Drops the `n` first cells (the origin moves `n` slots on).
    pub fn drop_front(&mut self, n: u32) {
        let n = (n as usize).min(self.cells.len());
        self.cells.drain(..n);
    }

    /// Whether the cells are those of a machine with `other`'s GPU ids
    /// (every cell's taken ids ascending and among them).
    #[cfg(feature = "serde")]
    pub fn same_shape(&self, other: &MachineCells) -> bool {
        self.gpu_ids == other.gpu_ids
            && self.cells.iter().all(|c| {
                c.gpus.windows(2).all(|w| w[0] < w[1])
                    && c.gpus.last().is_none_or(|&g| g < self.gpu_ids)
            })
    }

    /// The number of stored cells.
    pub fn len(&self) -> usize {
        self.cells.len()
    }
}
