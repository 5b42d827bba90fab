//! Structured rounding: choice groups of binary columns (at most one is 1),
//! each member owning dependent columns that are rounded only when it is
//! chosen; and the [`Derive`] hook that sets columns from others after
//! rounding.
//!
//! # The random stream
//!
//! [`round_structured`] consumes exactly [`Structure::n_draws`] uniforms
//! (the portable `(next_u64 >> 11)·2⁻⁵³` of the independent rounding), in
//! this order, whatever the LP point and whatever is chosen:
//!
//! 1. for each group, in declaration order: one uniform for the choice, then
//!    one per dependent of each member (members in their order, dependents
//!    in theirs), drawn even for the members that are not chosen;
//! 2. one uniform per free column (neither a member nor a dependent), in
//!    column order.
//!
//! With no group this is exactly [`round_independent`](super::round_independent)
//! of [`scaled_point`](super::scaled_point): one draw per column in column
//! order.

use rand::Rng;

use super::error::{GroupIssue, PcError, RowClass};
use super::problem::PcProblem;
use super::rounding::{snap, uniform};

/// LP values of members below this are never chosen.
pub const MIN_MEMBER_VALUE: f64 = 1e-9;

/// One member of a [`ChoiceGroup`]: a binary column and the columns that
/// belong to it (rounded from their LP values when it is chosen, 0
/// otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Member {
    /// The member's binary column.
    pub col: usize,
    /// Its dependent columns (any kind).
    pub dependents: Vec<usize>,
}

/// Binary columns of which at most one is 1, each with its dependent
/// columns.
///
/// ```
/// use dmlsched::pcip::ChoiceGroup;
/// // Column 0 (LOCAL) owns worker count 2; column 1 (DISTRIBUTED) owns 3.
/// let g = ChoiceGroup::new().member(0, &[2]).member(1, &[3]);
/// assert_eq!(g.members.len(), 2);
/// assert_eq!(g.members[1].dependents, vec![3]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChoiceGroup {
    /// The members, in drawing order.
    pub members: Vec<Member>,
}

impl ChoiceGroup {
    /// An empty group (add members with [`member`](Self::member)).
    pub fn new() -> Self {
        ChoiceGroup::default()
    }

    /// Adds member column `col` with its dependent columns.
    pub fn member(mut self, col: usize, dependents: &[usize]) -> Self {
        self.members.push(Member {
            col,
            dependents: dependents.to_vec(),
        });
        self
    }
}

/// Choice groups validated against a problem: the rounding-time structure
/// of [`round_structured`].
///
/// # Rules
///
/// Checked per group in declaration order, first violation returned as
/// [`PcError::InvalidGroup`]: the group has a member
/// ([`GroupIssue::Empty`]); every member and dependent is a column of the
/// problem ([`GroupIssue::ColumnOutOfRange`]); every member is binary
/// (integer with upper bound 1, [`GroupIssue::MemberNotBinary`]); no column
/// appears twice among all members and dependents of all groups
/// ([`GroupIssue::ColumnReused`]); and the group's `Σ members ≤ 1` is
/// implied by a packing row of the problem: a row `i` with `P_ij ≥ p_i` on
/// every member `j` ([`GroupIssue::NotPacked`]). The structure adds no row:
/// the LP sees that packing row, so its point has `Σ x*_members ≤ 1`, and
/// every rounded point satisfies it.
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{ChoiceGroup, GroupIssue, PcBuilder, PcError, Structure};
/// let p = PcBuilder::new(Sense::Minimise, 4)
///     .binary(0).binary(1).upper(2, Some(4)).upper(3, Some(4))
///     .packing_row(&[(0, 1.0), (1, 1.0)], 1.0)
///     .covering_row(&[(2, 1.0), (3, 1.0)], 2.0)
///     .build().unwrap();
/// let s = Structure::new(&p, vec![ChoiceGroup::new().member(0, &[2]).member(1, &[3])]).unwrap();
/// assert_eq!(s.n_draws(), 3); // one choice, two dependents, no free column
/// let bad = Structure::new(&p, vec![ChoiceGroup::new().member(2, &[])]);
/// assert!(matches!(bad, Err(PcError::InvalidGroup {
///     group: 0, issue: GroupIssue::MemberNotBinary { col: 2 } })));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Structure {
    groups: Vec<ChoiceGroup>,
    /// Per column: a member or a dependent.
    grouped: Vec<bool>,
}

impl Structure {
    /// Validates `groups` against `p`.
    ///
    /// # Errors
    ///
    /// [`PcError::InvalidGroup`] for the first group that breaks a rule (see
    /// the type's documentation).
    pub fn new(p: &PcProblem, groups: Vec<ChoiceGroup>) -> Result<Self, PcError> {
        let grouped = validate(p, &groups)?;
        Ok(Structure { groups, grouped })
    }

    /// No group at all (structured rounding is then independent rounding).
    pub fn none(p: &PcProblem) -> Self {
        Structure {
            groups: Vec::new(),
            grouped: vec![false; p.n_vars()],
        }
    }

    /// The groups, in declaration order.
    pub fn groups(&self) -> &[ChoiceGroup] {
        &self.groups
    }

    /// Whether there is no group.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Number of columns of the problem it was validated against.
    pub fn n_vars(&self) -> usize {
        self.grouped.len()
    }

    /// Uniforms one rounding consumes: one per group, one per dependent,
    /// one per free column.
    pub fn n_draws(&self) -> usize {
        let deps: usize = self
            .groups
            .iter()
            .flat_map(|g| &g.members)
            .map(|m| m.dependents.len())
            .sum();
        let free = self.grouped.iter().filter(|&&g| !g).count();
        self.groups.len() + deps + free
    }

    /// Checks that the structure is valid for `p` (the pipeline calls this
    /// before using a structure with a problem).
    ///
    /// # Errors
    ///
    /// [`PcError::DimensionMismatch`] when `p` has another number of
    /// columns; [`PcError::InvalidGroup`] as in [`Structure::new`].
    pub fn check(&self, p: &PcProblem) -> Result<(), PcError> {
        if self.n_vars() != p.n_vars() {
            return Err(PcError::DimensionMismatch {
                what: "structure columns",
                expected: p.n_vars(),
                got: self.n_vars(),
            });
        }
        validate(p, &self.groups).map(|_| ())
    }

    /// The expected value of [`round_structured`]'s point: a member's
    /// probability `π_m = x*_m / max(1, Σ_group x*)` (0 below
    /// [`MIN_MEMBER_VALUE`]); a dependent `π_m·min(λ·x*_d/x*_m, u_d)`; a
    /// free column `min(λ·x*_j, u_j)` (all clamped below at 0). Without
    /// clamping a dependent's expectation is `λ·x*_d`.
    ///
    /// ```
    /// use dmlsched::certificate::Sense;
    /// use dmlsched::pcip::{ChoiceGroup, PcBuilder, Structure};
    /// let p = PcBuilder::new(Sense::Minimise, 3)
    ///     .binary(0).upper(1, Some(9)).upper(2, Some(9))
    ///     .packing_row(&[(0, 1.0)], 1.0)
    ///     .covering_row(&[(1, 1.0), (2, 1.0)], 1.0)
    ///     .build().unwrap();
    /// let s = Structure::new(&p, vec![ChoiceGroup::new().member(0, &[1])]).unwrap();
    /// let e = s.expected_point(&p, &[0.5, 1.5, 0.25], 2.0).unwrap();
    /// assert_eq!(e, vec![0.5, 3.0, 0.5]);
    /// ```
    ///
    /// # Errors
    ///
    /// As [`round_structured`].
    pub fn expected_point(
        &self,
        p: &PcProblem,
        lp_x: &[f64],
        lambda: f64,
    ) -> Result<Vec<f64>, PcError> {
        self.check_inputs(p, lp_x, lambda)?;
        let mut e: Vec<f64> = (0..lp_x.len())
            .map(|j| (lambda * lp_x[j]).min(p.upper(j)).max(0.0))
            .collect();
        for g in &self.groups {
            let probs = member_probabilities(g, lp_x);
            for (m, &pm) in g.members.iter().zip(&probs) {
                e[m.col] = pm;
                for &d in &m.dependents {
                    e[d] = if pm > 0.0 {
                        pm * dependent_target(p, d, lp_x[d], lp_x[m.col], lambda)
                    } else {
                        0.0
                    };
                }
            }
        }
        Ok(e)
    }

    fn check_inputs(&self, p: &PcProblem, lp_x: &[f64], lambda: f64) -> Result<(), PcError> {
        if self.n_vars() != p.n_vars() {
            return Err(PcError::DimensionMismatch {
                what: "structure columns",
                expected: p.n_vars(),
                got: self.n_vars(),
            });
        }
        if lp_x.len() != p.n_vars() {
            return Err(PcError::DimensionMismatch {
                what: "LP point",
                expected: p.n_vars(),
                got: lp_x.len(),
            });
        }
        if !(lambda.is_finite() && lambda >= 0.0) {
            return Err(PcError::InvalidOption {
                option: "lambda",
                reason: format!("must be finite and ≥ 0, got {lambda}"),
            });
        }
        if let Some(j) = lp_x.iter().position(|v| !v.is_finite()) {
            return Err(PcError::InvalidOption {
                option: "lp_x",
                reason: format!("entry {j} is {}", lp_x[j]),
            });
        }
        Ok(())
    }
}

/// Marks every member and dependent; the first rule broken is the error.
fn validate(p: &PcProblem, groups: &[ChoiceGroup]) -> Result<Vec<bool>, PcError> {
    let n = p.n_vars();
    let mut grouped = vec![false; n];
    for (gi, g) in groups.iter().enumerate() {
        let err = |issue| PcError::InvalidGroup { group: gi, issue };
        if g.members.is_empty() {
            return Err(err(GroupIssue::Empty));
        }
        for m in &g.members {
            let cols = std::iter::once(m.col).chain(m.dependents.iter().copied());
            for (k, col) in cols.enumerate() {
                if col >= n {
                    return Err(err(GroupIssue::ColumnOutOfRange { col }));
                }
                if k == 0 && !(p.is_integer(col) && p.upper(col) == 1.0) {
                    return Err(err(GroupIssue::MemberNotBinary { col }));
                }
                if grouped[col] {
                    return Err(err(GroupIssue::ColumnReused { col }));
                }
                grouped[col] = true;
            }
        }
        if !packed(p, g) {
            return Err(err(GroupIssue::NotPacked));
        }
    }
    Ok(grouped)
}

/// Whether some packing row has `P_ij ≥ p_i` on every member.
fn packed(p: &PcProblem, g: &ChoiceGroup) -> bool {
    let coeff = |j: usize, row: usize| {
        let (idx, val) = p.column(RowClass::Packing, j);
        idx.iter().position(|&i| i == row).map(|k| val[k])
    };
    let (rows, vals) = p.column(RowClass::Packing, g.members[0].col);
    let rhs = p.rhs_of(RowClass::Packing);
    rows.iter().zip(vals).any(|(&i, &a)| {
        a >= rhs[i]
            && g.members[1..]
                .iter()
                .all(|m| coeff(m.col, i).is_some_and(|b| b >= rhs[i]))
    })
}

/// The probability of each member: its LP value (clamped to `[0, 1]`, 0
/// below [`MIN_MEMBER_VALUE`]), divided by the group's sum when that exceeds
/// 1 (round-off).
fn member_probabilities(g: &ChoiceGroup, lp_x: &[f64]) -> Vec<f64> {
    let raw: Vec<f64> = g
        .members
        .iter()
        .map(|m| {
            let v = lp_x[m.col].clamp(0.0, 1.0);
            if v < MIN_MEMBER_VALUE { 0.0 } else { v }
        })
        .collect();
    let sum: f64 = raw.iter().sum();
    if sum > 1.0 {
        raw.iter().map(|v| v / sum).collect()
    } else {
        raw
    }
}

/// The value a dependent is rounded from when its member is chosen:
/// `λ·x*_d/x*_m` clamped to `[0, u_d]` (the member's value is at least
/// [`MIN_MEMBER_VALUE`], so the ratio is finite).
fn dependent_target(p: &PcProblem, d: usize, xd: f64, xm: f64, lambda: f64) -> f64 {
    let m = xm.clamp(MIN_MEMBER_VALUE, 1.0);
    let v = (lambda * xd / m).min(p.upper(d)).max(0.0);
    if v.is_finite() { v } else { 0.0 }
}

/// `RR(y) = ⌊y⌋ + 1[u < y − ⌊y⌋]` for an integer column (after snapping
/// within 10⁻⁹); continuous columns keep `y`.
fn rr(p: &PcProblem, j: usize, y: f64, u: f64) -> f64 {
    if !p.is_integer(j) {
        return y;
    }
    let y = snap(y);
    let fl = y.floor();
    if u < y - fl { fl + 1.0 } else { fl }
}

/// [`round_structured`] with its uniforms given, in stream order (missing
/// entries count as 1: round down, choose nothing). The test hook.
pub(crate) fn round_with_uniforms(
    p: &PcProblem,
    s: &Structure,
    lp_x: &[f64],
    lambda: f64,
    uniforms: &[f64],
) -> Vec<f64> {
    let mut next = uniforms.iter().copied().chain(std::iter::repeat(1.0));
    let mut x = vec![0.0; lp_x.len()];
    for g in &s.groups {
        let probs = member_probabilities(g, lp_x);
        let u = next.next().unwrap_or(1.0);
        let mut acc = 0.0;
        let mut chosen = None;
        for (k, &pm) in probs.iter().enumerate() {
            acc += pm;
            if pm > 0.0 && u < acc {
                chosen = Some(k);
                break;
            }
        }
        for (k, m) in g.members.iter().enumerate() {
            let on = chosen == Some(k);
            x[m.col] = if on { 1.0 } else { 0.0 };
            for &d in &m.dependents {
                let u = next.next().unwrap_or(1.0);
                if on {
                    let y = dependent_target(p, d, lp_x[d], lp_x[m.col], lambda);
                    x[d] = rr(p, d, y, u);
                }
            }
        }
    }
    for j in (0..lp_x.len()).filter(|&j| !s.grouped[j]) {
        let u = next.next().unwrap_or(1.0);
        let y = (lambda * lp_x[j]).min(p.upper(j)).max(0.0);
        x[j] = rr(p, j, y, u);
    }
    x
}

/// Structured randomized rounding of the LP point `lp_x` with scale `λ`: a
/// pure function of `(p, s, lp_x, λ, rng)`.
///
/// Per group, in declaration order: one uniform `U` chooses member `m` when
/// `U` falls in its slice of `[0, 1)` (slices of width `π_m`, members in
/// order, see [`Structure::expected_point`]), or no member when `U ≥ Σ π`.
/// The chosen member becomes 1 and each of its dependents `d` becomes
/// `RR(min(λ·x*_d/x*_m, u_d))` with `RR(y) = ⌊y⌋ + 1[U_d < y − ⌊y⌋]`
/// (continuous dependents keep the clamped value); the other members and
/// their dependents become 0. A free column `j` becomes
/// `RR(min(λ·x*_j, u_j))`, as in independent rounding.
///
/// The stream: exactly [`Structure::n_draws`] uniforms, whatever `lp_x`
/// and the choices: per group in declaration order, one for the choice,
/// then one per dependent of each member (members in order, dependents in
/// order, drawn for unchosen members too); then one per free column in
/// column order. Without groups this is
/// [`round_independent`](super::round_independent) of
/// [`scaled_point`](super::scaled_point)`(p, lp_x, λ)`.
///
/// Hence `P[m chosen] = π_m = x*_m` (when the group's LP sum is at most 1),
/// `E[X_d | m chosen] = λ·x*_d/x*_m` and `E[X_d] = λ·x*_d` (without
/// clamping); [`Structure::expected_point`] gives the exact expectation.
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{ChoiceGroup, PcBuilder, Structure, round_structured, trial_rng};
/// let p = PcBuilder::new(Sense::Minimise, 4)
///     .binary(0).binary(1).upper(2, Some(8)).upper(3, Some(8))
///     .packing_row(&[(0, 1.0), (1, 1.0)], 1.0)
///     .covering_row(&[(2, 1.0), (3, 1.0)], 3.0)
///     .build().unwrap();
/// let s = Structure::new(&p, vec![ChoiceGroup::new().member(0, &[2]).member(1, &[3])]).unwrap();
/// let x = round_structured(&p, &s, &[0.5, 0.5, 1.5, 1.5], 1.0, &mut trial_rng(0, 0)).unwrap();
/// // Exactly one member is chosen (the LP sum is 1) and owns 3 workers.
/// assert!(x == vec![1.0, 0.0, 3.0, 0.0] || x == vec![0.0, 1.0, 0.0, 3.0]);
/// ```
///
/// # Errors
///
/// [`PcError::DimensionMismatch`] when `lp_x` or the structure does not
/// match `p`; [`PcError::InvalidOption`] when `λ` is negative or not finite
/// (option `"lambda"`) or an entry of `lp_x` is not finite (`"lp_x"`).
pub fn round_structured<R: Rng + ?Sized>(
    p: &PcProblem,
    s: &Structure,
    lp_x: &[f64],
    lambda: f64,
    rng: &mut R,
) -> Result<Vec<f64>, PcError> {
    s.check_inputs(p, lp_x, lambda)?;
    let u: Vec<f64> = (0..s.n_draws()).map(|_| uniform(rng)).collect();
    Ok(round_with_uniforms(p, s, lp_x, lambda, &u))
}

/// Sets columns from others after rounding and before repair (for example
/// parameter-server counts from the rounded worker counts). Any
/// `Fn(&PcProblem, &mut [f64])` is one.
///
/// The pipeline calls it on every rounded point; repair then clamps the
/// point into its box (integer columns to the nearest integer) and fixes
/// whatever rows the derivation leaves violated. A non-finite entry is
/// reported by repair as [`PcError::InvalidOption`] (option `"x"`).
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{Derive, PcBuilder, PcProblem};
/// let p = PcBuilder::new(Sense::Minimise, 2).upper(0, Some(9)).upper(1, Some(9))
///     .covering_row(&[(0, 1.0)], 1.0).build().unwrap();
/// // One server per four workers, rounded up.
/// let servers = |_: &PcProblem, x: &mut [f64]| x[1] = (x[0] / 4.0).ceil();
/// let mut x = vec![5.0, 0.0];
/// servers.derive(&p, &mut x);
/// assert_eq!(x, vec![5.0, 2.0]);
/// ```
pub trait Derive {
    /// Overwrites the derived entries of `x` from the others.
    fn derive(&self, p: &PcProblem, x: &mut [f64]);
}

impl<F: Fn(&PcProblem, &mut [f64])> Derive for F {
    fn derive(&self, p: &PcProblem, x: &mut [f64]) {
        self(p, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::Sense;
    use crate::pcip::{PcBuilder, round_independent, scaled_point, trial_rng};

    /// Two groups: {0 → [3, 4], 1 → [5]} and {2 → [6]}; free 7 (integer), 8
    /// (continuous). Packing rows make each group's sum ≤ 1.
    fn program() -> (PcProblem, Structure) {
        let mut b = PcBuilder::new(Sense::Minimise, 9)
            .objective(vec![1.0; 9])
            .binary(0)
            .binary(1)
            .binary(2)
            .continuous(8, 5.0)
            .packing_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .packing_row(&[(2, 2.0)], 1.0)
            .covering_row(&[(3, 1.0), (5, 1.0), (6, 1.0), (7, 1.0)], 2.0);
        for j in 3..8 {
            b = b.upper(j, Some(6));
        }
        let p = b.build().unwrap();
        let s = Structure::new(
            &p,
            vec![
                ChoiceGroup::new().member(0, &[3, 4]).member(1, &[5]),
                ChoiceGroup::new().member(2, &[6]),
            ],
        )
        .unwrap();
        (p, s)
    }

    /// The exact mean of the rounding over a product grid of uniforms.
    fn grid_mean(p: &PcProblem, s: &Structure, x: &[f64], lambda: f64, n: usize) -> Vec<f64> {
        let d = s.n_draws();
        let mut sum = vec![0.0; x.len()];
        let mut count = 0.0;
        let mut idx = vec![0usize; d];
        loop {
            let u: Vec<f64> = idx.iter().map(|&i| (i as f64 + 0.5) / n as f64).collect();
            let r = round_with_uniforms(p, s, x, lambda, &u);
            sum.iter_mut().zip(&r).for_each(|(a, b)| *a += b);
            count += 1.0;
            let mut k = 0;
            while k < d {
                idx[k] += 1;
                if idx[k] < n {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
            if k == d {
                break;
            }
        }
        sum.iter().map(|v| v / count).collect()
    }

    #[test]
    fn expectations_are_exact_on_a_grid() {
        let (p, s) = program();
        assert_eq!(s.n_draws(), 2 + 4 + 2);
        // Quarter values, so that a 4-point grid per uniform is exact.
        let x = [0.25, 0.5, 0.5, 0.3125, 0.125, 1.25, 0.25, 1.25, 0.25];
        for lambda in [1.0, 2.0] {
            let mean = grid_mean(&p, &s, &x, lambda, 4);
            let want = s.expected_point(&p, &x, lambda).unwrap();
            for j in 0..9 {
                assert!(
                    (mean[j] - want[j]).abs() < 1e-12,
                    "λ {lambda} col {j}: {mean:?}"
                );
            }
            // P[member] = x*; E[dependent] = λ·x* (no clamping here).
            for j in [0, 1, 2] {
                assert_eq!(want[j], x[j]);
            }
            for j in [3, 4, 5, 6, 7] {
                assert!((want[j] - lambda * x[j]).abs() < 1e-12, "{j}");
            }
            assert!((want[8] - lambda * x[8]).abs() < 1e-12);
        }
    }

    #[test]
    fn conditional_values_and_exclusivity() {
        let (p, s) = program();
        let x = [0.25, 0.5, 0.75, 0.375, 0.125, 1.25, 0.5, 1.625, 0.3];
        // U = 0.1 < 0.25: member 0 with dependents RR(1.5), RR(0.5); U_d = 0.4
        // rounds 1.5 up and 0.5 up.
        let u = [0.1, 0.4, 0.4, 0.9, 0.7, 0.1, 0.5, 0.0];
        let r = round_with_uniforms(&p, &s, &x, 1.0, &u);
        assert_eq!(&r[..6], &[1.0, 0.0, 1.0, 2.0, 1.0, 0.0]);
        // Group 2: U = 0.7 < 0.75 chooses 2; its dependent RR(0.5/0.75) with 0.1.
        assert_eq!((r[2], r[6]), (1.0, 1.0));
        assert_eq!((r[7], r[8]), (2.0, 0.3));
        // U ≥ Σ: nothing; every dependent 0 whatever its uniform.
        let r = round_with_uniforms(&p, &s, &x, 1.0, &[0.8, 0.0, 0.0, 0.0, 0.9]);
        assert_eq!(&r[..7], &[0.0; 7]);
        // Clamped: member value 1e-6, dependent target 0.375e6 clamps to 6.
        let y = [1e-6, 0.0, 0.0, 0.375, 0.0, 0.0, 0.0, 0.0, 0.0];
        let r = round_with_uniforms(&p, &s, &y, 1.0, &[0.0]);
        assert_eq!((r[0], r[3]), (1.0, 6.0));
        // Below MIN_MEMBER_VALUE: never chosen, even with U = 0.
        let y = [1e-10, 0.0, 0.0, 0.375, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(round_with_uniforms(&p, &s, &y, 1.0, &[0.0])[0], 0.0);
    }

    #[test]
    fn sums_above_one_are_renormalised() {
        let (p, s) = program();
        let x = [0.75, 0.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let e = s.expected_point(&p, &x, 1.0).unwrap();
        assert_eq!((e[0], e[1]), (0.5, 0.5));
        let r = round_with_uniforms(&p, &s, &x, 1.0, &[0.6]);
        assert_eq!((r[0], r[1]), (0.0, 1.0));
    }

    #[test]
    fn statistics_with_a_fixed_seed() {
        let (p, s) = program();
        let x = [0.3, 0.6, 0.2, 0.9, 0.1, 1.7, 0.05, 2.2, 1.0];
        let lambda = 1.25;
        let want = s.expected_point(&p, &x, lambda).unwrap();
        let n = 20_000;
        let mut mean = vec![0.0; 9];
        for t in 0..n {
            let r = round_structured(&p, &s, &x, lambda, &mut trial_rng(11, t)).unwrap();
            assert!(r[0] + r[1] <= 1.0 && r[2] <= 1.0);
            if r[0] == 0.0 {
                assert_eq!((r[3], r[4]), (0.0, 0.0));
            }
            mean.iter_mut()
                .zip(&r)
                .for_each(|(a, b)| *a += b / n as f64);
        }
        for j in 0..9 {
            // Values ≤ 6: 5 standard errors is below 0.25.
            assert!(
                (mean[j] - want[j]).abs() < 0.1,
                "col {j}: {mean:?} vs {want:?}"
            );
        }
    }

    #[test]
    fn deterministic_and_independent_rounding_without_groups() {
        let (p, s) = program();
        let x = [0.3, 0.6, 0.2, 0.9, 0.1, 1.7, 0.05, 2.2, 1.0];
        for t in 0..20 {
            let a = round_structured(&p, &s, &x, 1.0, &mut trial_rng(3, t)).unwrap();
            let b = round_structured(&p, &s, &x, 1.0, &mut trial_rng(3, t)).unwrap();
            assert_eq!(a, b);
            let none = Structure::none(&p);
            let c = round_structured(&p, &none, &x, 1.5, &mut trial_rng(3, t)).unwrap();
            let y = scaled_point(&p, &x, 1.5);
            assert_eq!(c, round_independent(&p, &y, &mut trial_rng(3, t)));
        }
        // The stream does not depend on the LP point: a free column's draw
        // stays put when a group's values change.
        let mut y = x;
        y[0] = 0.0;
        y[3] = 0.0;
        for t in 0..50 {
            let a = round_structured(&p, &s, &x, 1.0, &mut trial_rng(5, t)).unwrap();
            let b = round_structured(&p, &s, &y, 1.0, &mut trial_rng(5, t)).unwrap();
            assert_eq!((a[7], a[2], a[6]), (b[7], b[2], b[6]));
        }
    }

    #[test]
    fn validation_errors() {
        let (p, _) = program();
        let issue = |groups: Vec<ChoiceGroup>| match Structure::new(&p, groups) {
            Err(PcError::InvalidGroup { group, issue }) => (group, issue),
            r => panic!("{r:?}"),
        };
        let g = ChoiceGroup::new;
        assert_eq!(issue(vec![g()]), (0, GroupIssue::Empty));
        assert_eq!(
            issue(vec![g().member(0, &[]), g().member(9, &[])]),
            (1, GroupIssue::ColumnOutOfRange { col: 9 })
        );
        assert_eq!(
            issue(vec![g().member(0, &[12])]),
            (0, GroupIssue::ColumnOutOfRange { col: 12 })
        );
        assert_eq!(
            issue(vec![g().member(3, &[])]),
            (0, GroupIssue::MemberNotBinary { col: 3 })
        );
        assert_eq!(
            issue(vec![g().member(0, &[3]).member(1, &[3])]),
            (0, GroupIssue::ColumnReused { col: 3 })
        );
        assert_eq!(
            issue(vec![g().member(0, &[]), g().member(2, &[0])]),
            (1, GroupIssue::ColumnReused { col: 0 })
        );
        // 0 and 2 share no packing row.
        assert_eq!(
            issue(vec![g().member(0, &[]).member(2, &[])]),
            (0, GroupIssue::NotPacked)
        );
        let msg = Structure::new(&p, vec![g().member(0, &[]).member(2, &[])])
            .unwrap_err()
            .to_string();
        assert!(msg.contains("choice group 0"), "{msg}");
        // A too-small coefficient does not imply Σ ≤ 1.
        let q = PcBuilder::new(Sense::Minimise, 2)
            .packing_row(&[(0, 1.0), (1, 0.5)], 1.0)
            .build()
            .unwrap();
        assert!(Structure::new(&q, vec![g().member(0, &[]).member(1, &[])]).is_err());
        // Inputs of the rounding.
        let (p, s) = program();
        let mut rng = trial_rng(0, 0);
        assert!(matches!(
            round_structured(&p, &s, &[0.0; 3], 1.0, &mut rng),
            Err(PcError::DimensionMismatch { .. })
        ));
        for (lambda, bad) in [(-1.0, 0.0), (f64::NAN, 0.0), (1.0, f64::INFINITY)] {
            let mut x = [0.0; 9];
            x[4] = bad;
            assert!(matches!(
                round_structured(&p, &s, &x, lambda, &mut rng),
                Err(PcError::InvalidOption { .. })
            ));
        }
        let q = PcBuilder::new(Sense::Minimise, 2)
            .packing_row(&[(0, 1.0)], 1.0)
            .build()
            .unwrap();
        assert!(matches!(
            s.check(&q),
            Err(PcError::DimensionMismatch { .. })
        ));
    }
}
