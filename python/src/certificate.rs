//! `dmlsched.Certificate`, `Bound` and `Guarantee`: what is proven about
//! a returned point (`dmlsched::certificate`).

use dmlsched::certificate::{
    Bound as LibBound, BoundKind, Certificate, Guarantee, GuaranteeKind, GuaranteeScope, Sense,
};
use pyo3::prelude::*;

use crate::convert;
use crate::errors;

/// The tolerance of `Certificate.valid` (the library's examples and tests
/// check certificates with it).
pub const CHECK_TOL: f64 = 1e-9;

/// What is proven about a returned point: its objective, a bound on the
/// optimum, the a-priori guarantees and the achieved ratio.
#[pyclass(frozen, name = "Certificate", module = "dmlsched")]
pub struct PyCertificate {
    /// The library's certificate.
    pub inner: Certificate,
    /// The independent checker's verdict on the schedule the certificate is
    /// about (`schedule::verify`), when there is one.
    pub schedule: Option<Result<(), String>>,
}

impl PyCertificate {
    /// A certificate without a schedule to verify.
    pub fn new(inner: Certificate) -> Self {
        PyCertificate {
            inner,
            schedule: None,
        }
    }

    /// Every problem found: the certificate's own check at `tol`, and the
    /// schedule checker's.
    fn problems_at(&self, tol: f64) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(v) = self.inner.check(tol) {
            out.push(format!("certificate check failed: {v}"));
        }
        if let Some(Err(v)) = &self.schedule {
            out.push(format!("the schedule fails the checker: {v}"));
        }
        out
    }
}

/// The name of a bound's kind.
fn kind_name(kind: BoundKind) -> String {
    match kind {
        BoundKind::LpDualSafe => "lp_dual_safe".into(),
        BoundKind::LpPrimal => "lp_primal".into(),
        BoundKind::MipDual => "mip_dual".into(),
        BoundKind::Trivial => "trivial".into(),
        BoundKind::OnlineDual { .. } => "online_dual".into(),
        other => format!("{other:?}"),
    }
}

#[pymethods]
impl PyCertificate {
    /// The algorithm that returned the point.
    #[getter]
    fn algorithm(&self) -> &str {
        &self.inner.algorithm
    }

    /// `"maximise"` or `"minimise"`.
    #[getter]
    fn sense(&self) -> &'static str {
        match self.inner.sense {
            Sense::Maximise => "maximise",
            Sense::Minimise => "minimise",
        }
    }

    /// Whether the objective is maximised.
    #[getter]
    fn maximise(&self) -> bool {
        self.inner.sense == Sense::Maximise
    }

    /// The returned point's objective.
    #[getter]
    fn objective(&self) -> f64 {
        self.inner.objective
    }

    /// The relaxation's bound on the optimum (upper when maximising, lower
    /// when minimising).
    #[getter]
    fn bound(&self) -> PyBound {
        PyBound::of(&self.inner.relaxation_bound)
    }

    /// The tightest usable bound on the optimum (relaxation and exact
    /// solve); ±inf when there is none.
    #[getter]
    fn best_bound(&self) -> f64 {
        self.inner.best_bound()
    }

    /// The achieved ratio against the best bound (≥ 1 for a correct
    /// certificate; inf without a bound; NaN where undefined).
    #[getter]
    fn achieved_ratio(&self) -> f64 {
        self.inner.achieved_ratio()
    }

    /// The optimum, when an exact solve proved it.
    #[getter]
    fn optimum(&self) -> Option<f64> {
        self.inner.optimum()
    }

    /// The exact solve's result as a dict, if one was run.
    #[getter]
    fn exact<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .exact
            .as_ref()
            .map(|e| convert::serialize_to_py(py, e))
            .transpose()
    }

    /// The a-priori guarantees, evaluated for this run.
    #[getter]
    fn guarantees(&self) -> Vec<PyGuarantee> {
        self.inner.guarantees.iter().map(PyGuarantee::of).collect()
    }

    /// The point's feasibility report, as a dict.
    #[getter]
    fn feasibility<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serialize_to_py(py, &self.inner.feasibility)
    }

    /// How the run went (times, iterations, ...), as a dict.
    #[getter]
    fn run<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serialize_to_py(py, &self.inner.run)
    }

    /// What the bound and guarantees cover, in words, if stated.
    #[getter]
    fn scope(&self) -> Option<&str> {
        self.inner.scope.as_deref()
    }

    /// Whether the certificate passes its own check (`Certificate::check`
    /// at 1e-9) and, for a solve, the schedule passes the independent
    /// checker (`schedule::verify`).
    #[getter]
    fn valid(&self) -> bool {
        self.problems_at(CHECK_TOL).is_empty()
    }

    /// What `valid` found wrong (empty when valid).
    #[getter]
    fn problems(&self) -> Vec<String> {
        self.problems_at(CHECK_TOL)
    }

    /// Runs the checks at tolerance `tol`; raises `RunError` with the
    /// first problem.
    #[pyo3(signature = (tol = CHECK_TOL))]
    fn check(&self, tol: f64) -> PyResult<()> {
        match self.problems_at(tol).into_iter().next() {
            Some(p) => Err(errors::RunError::new_err(p)),
            None => Ok(()),
        }
    }

    /// The certificate as a dict (its JSON: non-finite numbers as the
    /// strings "inf", "-inf", "nan").
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::serialize_to_py(py, &self.inner)
    }

    /// The certificate as JSON text.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.inner)
            .map_err(|e| errors::RunError::new_err(e.to_string()))
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Certificate({}: objective {}, bound {} ({}), valid {})",
            self.inner.algorithm,
            self.inner.objective,
            self.inner.relaxation_bound.value,
            kind_name(self.inner.relaxation_bound.kind),
            if self.valid() { "True" } else { "False" }
        )
    }
}

/// A bound on the optimum: its value, where it comes from, and whether it
/// may be relied on.
#[pyclass(frozen, name = "Bound", module = "dmlsched")]
pub struct PyBound {
    value: f64,
    kind: BoundKind,
    usable: bool,
}

impl PyBound {
    fn of(b: &LibBound) -> Self {
        PyBound {
            value: b.value,
            kind: b.kind,
            usable: b.is_usable(),
        }
    }
}

#[pymethods]
impl PyBound {
    /// The bound's value (±inf: no information).
    #[getter]
    fn value(&self) -> f64 {
        self.value
    }

    /// Where it comes from: "lp_dual_safe", "lp_primal", "mip_dual",
    /// "trivial" or "online_dual".
    #[getter]
    fn kind(&self) -> String {
        kind_name(self.kind)
    }

    /// False only for an online dual whose assumptions do not hold.
    #[getter]
    fn valid(&self) -> bool {
        self.kind.is_valid()
    }

    /// Whether the bound may be used: valid and not NaN.
    #[getter]
    fn usable(&self) -> bool {
        self.usable
    }

    fn __repr__(&self) -> String {
        format!(
            "Bound(value={}, kind={:?}, valid={})",
            self.value,
            kind_name(self.kind),
            if self.kind.is_valid() {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// An a-priori statement of an algorithm, evaluated for this run.
#[pyclass(frozen, name = "Guarantee", module = "dmlsched")]
pub struct PyGuarantee {
    inner: Guarantee,
}

impl PyGuarantee {
    fn of(g: &Guarantee) -> Self {
        PyGuarantee { inner: g.clone() }
    }
}

#[pymethods]
impl PyGuarantee {
    /// The statement, e.g. "OPT ≤ 2α·ALG".
    #[getter]
    fn expression(&self) -> &str {
        &self.inner.expression
    }

    /// Where it is proven (a paper, or "crate").
    #[getter]
    fn source(&self) -> &str {
        &self.inner.source
    }

    /// Its right-hand side for this instance, if it has one.
    #[getter]
    fn value(&self) -> Option<f64> {
        self.inner.value
    }

    /// `value` over the relaxation bound, if meaningful.
    #[getter]
    fn ratio(&self) -> Option<f64> {
        self.inner.ratio
    }

    /// A ratio-only statement's bound (max: OPT ≤ ratio_bound·ALG; min:
    /// ALG ≤ ratio_bound·OPT).
    #[getter]
    fn ratio_bound(&self) -> Option<f64> {
        self.inner.ratio_bound
    }

    /// "deterministic", "in_expectation" or "with_probability".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.inner.kind {
            GuaranteeKind::Deterministic => "deterministic",
            GuaranteeKind::InExpectation => "in_expectation",
            GuaranteeKind::WithProbability(_) => "with_probability",
        }
    }

    /// The probability of a "with_probability" guarantee.
    #[getter]
    fn probability(&self) -> Option<f64> {
        match self.inner.kind {
            GuaranteeKind::WithProbability(p) => Some(p),
            _ => None,
        }
    }

    /// "final_point" or "rounded_before_repair".
    #[getter]
    fn scope(&self) -> &'static str {
        match self.inner.scope {
            GuaranteeScope::FinalPoint => "final_point",
            GuaranteeScope::RoundedBeforeRepair => "rounded_before_repair",
        }
    }

    /// False when the theorem's assumptions do not hold in this run.
    #[getter]
    fn valid(&self) -> bool {
        self.inner.valid
    }

    /// Why it is not valid (empty when valid).
    #[getter]
    fn reasons(&self) -> Vec<String> {
        self.inner.reasons.clone()
    }

    /// Whether `Certificate.check` verifies it (valid, deterministic,
    /// about the final point).
    #[getter]
    fn checked(&self) -> bool {
        self.inner.is_checked()
    }

    fn __repr__(&self) -> String {
        format!(
            "Guarantee({:?}, value={:?}, ratio_bound={:?}, valid={}, source={:?})",
            self.inner.expression,
            self.inner.value,
            self.inner.ratio_bound,
            if self.inner.valid { "True" } else { "False" },
            self.inner.source
        )
    }
}
