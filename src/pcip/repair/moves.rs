//! Repair with model-supplied moves: a [`MoveSource`] proposes moves (sets
//! of column changes applied together) in each phase; the driver ranks them
//! with the keys of the generic phases, applies the best one that keeps every
//! hard row holding, re-checks, and asks again. Each phase then hands what is
//! left to the generic unit-move phase, which never breaks a row either.

use std::collections::BTreeMap;

use super::{CLASSES, LIMITS, State, norm, slot};
use crate::certificate::Sense;
use crate::pcip::error::{PcError, RowClass};
use crate::pcip::problem::PcProblem;

/// A repair move: changes `x_j += δ` of several columns, applied together.
///
/// `objective` is the move's change of the objective in the problem's own
/// sense (a cost change for a minimisation, a value change for a
/// maximisation); `None` lets the driver compute `Σ obj_j·δ_j`. A supplied
/// value is used only to rank moves (for instance to add a penalty the
/// objective does not have).
///
/// ```
/// use dmlsched::pcip::Move;
/// // Drop LOCAL on machine 3: its flag (column 7) and its 2 workers (column 9).
/// let m = Move::new(vec![(7, -1.0), (9, -2.0)]);
/// assert_eq!(m.objective, None);
/// let m = Move::unit(4, 1.0).with_objective(2.5);
/// assert_eq!((m.deltas, m.objective), (vec![(4, 1.0)], Some(2.5)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// `(column, change)` pairs, each column at most once; changes of
    /// integer columns must be integers.
    pub deltas: Vec<(usize, f64)>,
    /// Objective change in the problem's sense, or `None` to compute it.
    pub objective: Option<f64>,
}

impl Move {
    /// A move with the given changes and a computed objective change.
    pub fn new(deltas: Vec<(usize, f64)>) -> Self {
        Move {
            deltas,
            objective: None,
        }
    }

    /// `x_col += delta` alone.
    pub fn unit(col: usize, delta: f64) -> Self {
        Move::new(vec![(col, delta)])
    }

    /// Sets the objective change the driver ranks the move by.
    pub fn with_objective(mut self, change: f64) -> Self {
        self.objective = Some(change);
        self
    }
}

/// A model's repair moves, asked for at the current point before every step
/// of [`repair_with`]. Each method appends candidates to `out` (empty
/// between calls); a source that has none for a phase leaves it to the
/// generic unit moves. All three default to none, so an empty
/// implementation repairs exactly like [`repair`](super::repair).
///
/// ```
/// use dmlsched::pcip::{Move, MoveSource, PcProblem};
/// /// Grows columns 0 and 1 together (a paired resource).
/// struct Pairs;
/// impl MoveSource for Pairs {
///     fn grow_moves(&self, _: &PcProblem, _: &[f64], out: &mut Vec<Move>) {
///         out.push(Move::new(vec![(0, 1.0), (1, 1.0)]));
///     }
/// }
/// ```
pub trait MoveSource {
    /// Moves that relieve violated packing or linking rows (phase 1).
    fn shrink_moves(&self, p: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let _ = (p, x, out);
    }

    /// Moves that reduce the covering deficit (phase 2).
    fn grow_moves(&self, p: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let _ = (p, x, out);
    }

    /// Removal moves that lower the objective of a feasible point (phase 3,
    /// only with [`RepairOptions::improve`](super::RepairOptions::improve)).
    fn prune_moves(&self, p: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let _ = (p, x, out);
    }
}

/// The source without model moves: [`repair_with`] with it is [`repair`](super::repair).
impl MoveSource for () {}

/// A phase of the driver.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Shrink,
    Grow,
    Prune,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Shrink => "shrink",
            Phase::Grow => "grow",
            Phase::Prune => "prune",
        }
    }
}

/// What a move would do at the current point.
struct Assessment {
    /// New activity of every touched row, by `(class slot, row)`.
    acts: BTreeMap<(usize, usize), f64>,
    /// Canonical cost change.
    cost: f64,
    /// Whether every touched row of the classes the phase must keep holds
    /// after the move (rows that do not hold now need not).
    keeps: bool,
    /// Reduction of the total violation of the packing and linking rows.
    relief: f64,
    /// Reduction of the total covering deficit (negative: damage).
    gain: f64,
}

impl State<'_> {
    /// Checks move `index` of `phase` for form; `Ok(None)` when it leaves a
    /// column's box at `x` (not a candidate now).
    fn assess(
        &self,
        x: &[f64],
        mv: &Move,
        phase: Phase,
        index: usize,
    ) -> Result<Option<Assessment>, PcError> {
        let bad = |reason: String| PcError::InvalidMove {
            phase: phase.name(),
            index,
            reason,
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut in_box = true;
        for &(j, d) in &mv.deltas {
            if j >= x.len() {
                return Err(bad(format!("column {j} is out of range")));
            }
            if !seen.insert(j) {
                return Err(bad(format!("column {j} appears twice")));
            }
            if !d.is_finite() || (self.p.is_integer(j) && d.fract() != 0.0) {
                return Err(bad(format!("change {d} of column {j}")));
            }
            let v = x[j] + d;
            in_box &= v >= 0.0 && v <= self.p.upper(j);
        }
        let cost = match mv.objective {
            Some(o) if !o.is_finite() => return Err(bad(format!("objective change {o}"))),
            Some(o) => match self.p.sense() {
                Sense::Minimise => norm(o),
                Sense::Maximise => norm(-o),
            },
            None => mv.deltas.iter().map(|&(j, d)| self.cost[j] * d).sum(),
        };
        if !in_box {
            return Ok(None);
        }
        Ok(Some(self.effects(mv, phase, cost)))
    }

    /// The rows' new activities, computed with the arithmetic of
    /// [`State::step`] applied in the move's order, and what they mean.
    fn effects(&self, mv: &Move, phase: Phase, cost: f64) -> Assessment {
        let mut acts = BTreeMap::new();
        for &(j, d) in &mv.deltas {
            for class in CLASSES {
                let (idx, val) = self.p.column(class, j);
                let rows = &self.rows[slot(class)];
                for (&i, &a) in idx.iter().zip(val) {
                    *acts.entry((slot(class), i)).or_insert(rows.act[i]) += d * a;
                }
            }
        }
        let mut out = Assessment {
            acts,
            cost,
            keeps: true,
            relief: 0.0,
            gain: 0.0,
        };
        for (&(s, i), &after) in &out.acts {
            let rows = &self.rows[s];
            let before = rows.act[i];
            let change = rows.violation(i, before) - rows.violation(i, after);
            let held = rows.holds_at(i, before);
            if CLASSES[s] == RowClass::Covering {
                out.gain += change;
                out.keeps &= phase != Phase::Prune || !held || rows.holds_at(i, after);
            } else {
                if !held {
                    out.relief += change;
                }
                out.keeps &= !held || rows.holds_at(i, after);
            }
        }
        out
    }

    /// The phase's key of an assessed move (smaller is better), or `None`
    /// when it is not a candidate.
    fn move_key(a: &Assessment, phase: Phase) -> Option<(f64, f64)> {
        if !a.keeps {
            return None;
        }
        match phase {
            Phase::Shrink => {
                (a.relief > 0.0).then(|| (norm(-a.gain / a.relief), norm(a.cost / a.relief)))
            }
            Phase::Grow => (a.gain > 0.0).then(|| (norm(a.cost / a.gain), 0.0)),
            Phase::Prune => (a.cost < 0.0).then_some((norm(a.cost), 0.0)),
        }
    }

    /// Whether the phase still has work: a violated hard row (shrink), a
    /// short covering row (grow); prune always looks.
    fn phase_open(&self, phase: Phase) -> bool {
        match phase {
            Phase::Shrink => self.count_violated(&LIMITS) > 0,
            Phase::Grow => self.count_violated(&[RowClass::Covering]) > 0,
            Phase::Prune => true,
        }
    }

    /// One phase of model moves: while the phase has work, ask `source` for
    /// moves at `x`, apply the one with the smallest key (ties to the
    /// earliest), and repeat; stops when no move qualifies or after the step
    /// cap. Returns the number of moves applied.
    pub(super) fn model_phase(
        &mut self,
        x: &mut [f64],
        source: &dyn MoveSource,
        phase: Phase,
    ) -> Result<u64, PcError> {
        let cap = self.max_steps().saturating_mul(4);
        let mut list = Vec::new();
        let mut applied = 0u64;
        while (applied as usize) < cap && self.phase_open(phase) {
            list.clear();
            match phase {
                Phase::Shrink => source.shrink_moves(self.p, x, &mut list),
                Phase::Grow => source.grow_moves(self.p, x, &mut list),
                Phase::Prune => source.prune_moves(self.p, x, &mut list),
            }
            let mut best: Option<((f64, f64), usize)> = None;
            for (k, mv) in list.iter().enumerate() {
                let Some(a) = self.assess(x, mv, phase, k)? else {
                    continue;
                };
                if let Some(key) = Self::move_key(&a, phase)
                    && best.is_none_or(|(b, _)| {
                        key.0.total_cmp(&b.0).then(key.1.total_cmp(&b.1)).is_lt()
                    })
                {
                    best = Some((key, k));
                }
            }
            let Some((_, k)) = best else { break };
            for &(j, d) in &list[k].deltas {
                self.step(x, j, d);
            }
            applied += 1;
        }
        Ok(applied)
    }
}

/// [`repair`](super::repair) with a model's moves: in each phase the model's
/// moves come first, then the generic unit moves finish what is left.
///
/// 1. **Shrink.** While a packing or linking row is violated: among the
///    source's shrink moves that stay in every column's box, break no
///    packing or linking row that holds, and relieve the violated ones
///    (`relief > 0`, the total violation removed), apply the one minimising
///    `(damage/relief, Δcost/relief)` — `damage` the covering deficit it
///    creates, `Δcost` its canonical cost change — ties to the earliest in
///    the list. Then the generic phase 1.
/// 2. **Grow.** While a covering row is short: among the source's grow
///    moves that stay in the box, keep every packing and linking row
///    holding and remove covering deficit (`gain > 0`, net over the
///    covering rows), apply the one minimising `Δcost/gain` (so moves with
///    `Δcost ≤ 0` come first), ties to the earliest. Then the generic
///    phase 2.
/// 3. **Prune** (with `opts.improve`). Among the source's prune moves that
///    stay in the box, keep every row of every class holding and lower the
///    cost, apply the one that saves most, ties to the earliest; repeat.
///    Then the generic phase 3.
///
/// The canonical cost is the minimisation's (`−value` for a maximisation).
/// Every move is checked against the rows it touches before it is applied,
/// with the arithmetic the row activities are kept in; each applied model
/// move counts as one step of its phase in the [`RepairReport`](super::RepairReport).
/// A model phase stops after `16·(nnz + rows + n) + 256` moves. The result is
/// re-checked with [`evaluate`](crate::pcip::evaluate): an infeasible point
/// is never returned as `Ok`.
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{Move, MoveSource, PcBuilder, PcProblem, RepairOptions, repair_with};
/// // A flag (column 0) and its workers (column 1): w ≤ 4·f, f ≤ w; work w ≥ 3.
/// let p = PcBuilder::new(Sense::Minimise, 2)
///     .objective(vec![5.0, 1.0]).binary(0).upper(1, Some(4))
///     .covering_row(&[(1, 1.0)], 3.0)
///     .linking_row(&[(1, 1.0), (0, -4.0)], dmlsched::pcip::RowSense::Le, 0.0)
///     .linking_row(&[(0, 1.0), (1, -1.0)], dmlsched::pcip::RowSense::Le, 0.0)
///     .build().unwrap();
/// /// Opens the flag with one worker; unit moves add the rest.
/// struct Open;
/// impl MoveSource for Open {
///     fn grow_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
///         if x[0] == 0.0 { out.push(Move::new(vec![(0, 1.0), (1, 1.0)])); }
///     }
/// }
/// let mut x = vec![0.0, 0.0];
/// let r = repair_with(&p, &mut x, &RepairOptions::default(), &Open).unwrap();
/// assert_eq!((x, r.objective), (vec![1.0, 3.0], 8.0));
/// ```
///
/// # Errors
///
/// Those of [`repair`](super::repair), and [`PcError::InvalidMove`] for a
/// move naming an unknown column or a column twice, or with a non-finite
/// change or objective, or a fractional change of an integer column.
pub fn repair_with(
    p: &PcProblem,
    x: &mut [f64],
    opts: &super::RepairOptions,
    source: &dyn MoveSource,
) -> Result<super::RepairReport, PcError> {
    super::run_phases(
        p,
        x,
        opts,
        Some(source),
        super::Search::Full,
        State::shrink,
        State::grow,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcip::known_answers::{ka1, ka2, ka2b, ka3, ka4, ka5};
    use crate::pcip::{PcBuilder, RepairOptions, RowSense, evaluate, repair};

    /// Today's unit moves as a model source: `−1` (shrink), `+1` (grow),
    /// and `−1` on priced / `+1` on valued columns (prune), in column order.
    struct Units;
    impl MoveSource for Units {
        fn shrink_moves(&self, p: &PcProblem, _: &[f64], out: &mut Vec<Move>) {
            out.extend(
                (0..p.n_vars())
                    .filter(|&j| p.is_integer(j))
                    .map(|j| Move::unit(j, -1.0)),
            );
        }
        fn grow_moves(&self, p: &PcProblem, _: &[f64], out: &mut Vec<Move>) {
            out.extend(
                (0..p.n_vars())
                    .filter(|&j| p.is_integer(j))
                    .map(|j| Move::unit(j, 1.0)),
            );
        }
        fn prune_moves(&self, p: &PcProblem, _: &[f64], out: &mut Vec<Move>) {
            out.extend((0..p.n_vars()).filter(|&j| p.is_integer(j)).map(|j| {
                let down = (p.sense() == Sense::Minimise) == (p.objective()[j] > 0.0);
                Move::unit(j, if down { -1.0 } else { 1.0 })
            }));
        }
    }

    fn box_points(u: &[u32]) -> Vec<Vec<f64>> {
        let mut out = vec![Vec::new()];
        for &uj in u {
            out = out
                .into_iter()
                .flat_map(|v| {
                    (0..=uj).map(move |t| {
                        let mut w = v.clone();
                        w.push(f64::from(t));
                        w
                    })
                })
                .collect();
        }
        out
    }

    fn both(
        p: &PcProblem,
        start: &[f64],
        src: &dyn MoveSource,
    ) -> [(Vec<f64>, Result<f64, PcError>); 2] {
        let o = RepairOptions::default();
        let (mut a, mut b) = (start.to_vec(), start.to_vec());
        let ra = repair(p, &mut a, &o).map(|r| r.objective);
        let rb = repair_with(p, &mut b, &o, src).map(|r| r.objective);
        [(a, ra), (b, rb)]
    }

    #[test]
    fn the_empty_source_is_todays_repair() {
        for p in [ka1(), ka2(), ka2b(), ka3(), ka4(), ka5()] {
            let u: Vec<u32> = p.uppers().iter().map(|&u| u.min(3.0) as u32).collect();
            for start in box_points(&u) {
                let o = RepairOptions::default();
                let (mut a, mut b) = (start.clone(), start.clone());
                assert_eq!(repair(&p, &mut a, &o), repair_with(&p, &mut b, &o, &()));
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn unit_moves_through_the_driver_match_on_one_signed_linking_free_programs() {
        // Same rules, generalised keys: KA1–KA5 give today's points from
        // every box point.
        for p in [ka1(), ka2(), ka2b(), ka3(), ka4(), ka5()] {
            let u: Vec<u32> = p.uppers().iter().map(|&u| u.min(3.0) as u32).collect();
            for start in box_points(&u) {
                let [a, b] = both(&p, &start, &Units);
                assert_eq!(a, b, "from {start:?}");
            }
        }
        // With a linking row they differ: phase 3 is one ordered pass that
        // does not revisit x1 (value 5, blocked until x0 enters); the driver
        // repeats the best move and does.
        let m = PcBuilder::new(Sense::Maximise, 2)
            .objective(vec![1.0, 5.0])
            .packing_row(&[(0, 1.0), (1, 1.0)], 2.0)
            .linking_row(&[(0, 1.0), (1, -1.0)], RowSense::Ge, 0.0)
            .build()
            .unwrap();
        let [a, b] = both(&m, &[0.0, 0.0], &Units);
        assert_eq!((a.0, b.0), (vec![1.0, 0.0], vec![1.0, 1.0]));
    }

    /// A flag f (column 0) owning workers w (column 1): `w ≤ 4f`, `f ≤ w`;
    /// work `w ≥ 3`; capacity `w ≤ cap`.
    fn flagged(cap: f64) -> PcProblem {
        PcBuilder::new(Sense::Minimise, 3)
            .objective(vec![5.0, 1.0, 4.0])
            .binary(0)
            .upper(1, Some(4))
            .upper(2, Some(3))
            .covering_row(&[(1, 1.0), (2, 1.0)], 3.0)
            .packing_row(&[(1, 1.0)], cap)
            .linking_row(&[(1, 1.0), (0, -4.0)], RowSense::Le, 0.0)
            .linking_row(&[(0, 1.0), (1, -1.0)], RowSense::Le, 0.0)
            .build()
            .unwrap()
    }

    /// Opens or closes the flag together with one worker.
    struct Flag;
    impl MoveSource for Flag {
        fn shrink_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
            if x[0] == 1.0 {
                out.push(Move::new(vec![(0, -1.0), (1, -x[1])]));
            }
        }
        fn grow_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
            if x[0] == 0.0 {
                out.push(Move::new(vec![(0, 1.0), (1, 1.0)]));
            }
        }
        fn prune_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
            if x[0] == 1.0 {
                out.push(Move::new(vec![(0, -1.0), (1, -x[1])]));
            }
        }
    }

    #[test]
    fn model_moves_open_and_close_groups() {
        let o = RepairOptions::default();
        // Grow: unit moves alone cannot open the flag (each breaks a link),
        // so the expensive column 2 covers; the model opens it: 5 + 3 < 12.
        let p = flagged(4.0);
        let [a, b] = both(&p, &[0.0, 0.0, 0.0], &Flag);
        assert_eq!((a.0, a.1.unwrap()), (vec![0.0, 0.0, 3.0], 12.0));
        assert_eq!((b.0, b.1.unwrap()), (vec![1.0, 3.0, 0.0], 8.0));
        // Shrink: capacity 0 with (1, 2, 0): unit decrements break a link
        // either way; the model closes the flag, then column 2 covers.
        let p = flagged(0.0);
        let mut x = vec![1.0, 2.0, 0.0];
        assert!(matches!(
            repair(&p, &mut x, &o),
            Err(PcError::RepairFailed(_))
        ));
        let mut x = vec![1.0, 2.0, 0.0];
        let r = repair_with(&p, &mut x, &o, &Flag).unwrap();
        assert_eq!(
            (x, r.shrink_moves, r.objective),
            (vec![0.0, 0.0, 3.0], 1, 12.0)
        );
        // Prune: from (1, 1, 3) closing the flag saves 6 and keeps the cover.
        let p = flagged(4.0);
        let mut x = vec![1.0, 1.0, 3.0];
        let r = repair_with(&p, &mut x, &o, &Flag).unwrap();
        assert_eq!((x, r.prune_moves), (vec![0.0, 0.0, 3.0], 1));
        // …but not with improve off.
        let off = RepairOptions {
            improve: false,
            ..o
        };
        let mut x = vec![1.0, 1.0, 3.0];
        repair_with(&p, &mut x, &off, &Flag).unwrap();
        assert_eq!(x, vec![1.0, 1.0, 3.0]);
    }

    /// Fixed lists of moves.
    struct List(Vec<Move>);
    impl MoveSource for List {
        fn grow_moves(&self, _: &PcProblem, _: &[f64], out: &mut Vec<Move>) {
            out.extend(self.0.iter().cloned());
        }
    }

    #[test]
    fn ranking_ties_and_supplied_objectives() {
        let p = PcBuilder::new(Sense::Minimise, 3)
            .objective(vec![2.0, 2.0, 1.0])
            .upper(2, Some(5))
            .covering_row(&[(0, 1.0), (1, 1.0), (2, 1.0)], 1.0)
            .build()
            .unwrap();
        let o = RepairOptions {
            improve: false,
            ..RepairOptions::default()
        };
        let run = |moves: Vec<Move>| {
            let mut x = vec![0.0; 3];
            repair_with(&p, &mut x, &o, &List(moves)).unwrap();
            x
        };
        // Ties go to the earliest move.
        assert_eq!(
            run(vec![Move::unit(1, 1.0), Move::unit(0, 1.0)]),
            vec![0.0, 1.0, 0.0]
        );
        // Least cost per unit of deficit: 2 units of column 2 cover 1 unit
        // (gain min(2, 1) = 1, cost 2) tie with column 0, which comes first.
        assert_eq!(
            run(vec![Move::unit(0, 1.0), Move::unit(2, 2.0)]),
            vec![1.0, 0.0, 0.0]
        );
        // A supplied objective overrides the computed one (Δcost ≤ 0 first).
        assert_eq!(
            run(vec![
                Move::unit(0, 1.0),
                Move::unit(1, 1.0).with_objective(0.0)
            ]),
            vec![0.0, 1.0, 0.0]
        );
        // A move that leaves the box is skipped; the generic phase finishes.
        assert_eq!(run(vec![Move::unit(0, 2.0)]), vec![0.0, 0.0, 1.0]);
    }

    #[test]
    fn moves_never_break_a_hard_row() {
        let p = flagged(1.0);
        // Three workers at once would break the capacity and the link.
        let src = List(vec![Move::new(vec![(0, 1.0), (1, 3.0)])]);
        let mut x = vec![0.0; 3];
        let r = repair_with(&p, &mut x, &RepairOptions::default(), &src).unwrap();
        assert_eq!((x.clone(), r.objective), (vec![0.0, 0.0, 3.0], 12.0));
        assert!(evaluate(&p, &x, 1e-9).is_feasible());
    }

    #[test]
    fn malformed_moves_are_typed_errors() {
        let p = flagged(4.0);
        for (mv, what) in [
            (Move::unit(7, 1.0), "out of range"),
            (Move::new(vec![(1, 1.0), (1, 1.0)]), "twice"),
            (Move::unit(1, f64::NAN), "change"),
            (Move::unit(1, 0.5), "change"),
            (
                Move::unit(1, 1.0).with_objective(f64::INFINITY),
                "objective",
            ),
        ] {
            let mut x = vec![0.0; 3];
            match repair_with(&p, &mut x, &RepairOptions::default(), &List(vec![mv])) {
                Err(PcError::InvalidMove {
                    phase,
                    index,
                    reason,
                }) => {
                    assert_eq!((phase, index), ("grow", 0));
                    assert!(reason.contains(what), "{reason}");
                }
                r => panic!("{r:?}"),
            }
        }
    }
}
