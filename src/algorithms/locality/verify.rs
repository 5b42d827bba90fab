//! The locality model's own checker, [`verify_locality`]: recomputes
//! everything from the schedule and the instance, sharing no code with
//! the oracle (demands, rates and windows are derived here again, in SI
//! units).

use std::collections::{HashMap, HashSet};

use crate::model::{
    Architecture, FIT_TOL, Hosting, Instance, Job, JobId, MachineId, PsJob, Resources,
};
use crate::schedule::{Configuration, Schedule, Segment};

use super::LocalityParams;
use super::error::{LocalityError, LocalityRule as Rule};

/// Relative tolerance of the checker.
const TOL: f64 = 1e-9;

/// What [`verify_locality`] found for one admitted job.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedJob {
    /// The job.
    pub job: JobId,
    /// Mini-batches done, at each slot's configuration rate.
    pub(crate) work: f64,
    /// The completion slot: the first slot where the cumulative work
    /// reaches `Q_i`.
    pub completion: u32,
    /// `f_i(completion − a_i)`.
    pub utility: f64,
}

/// The result of [`verify_locality`].
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct LocalityCheck {
    /// Every admitted job, in schedule order.
    pub jobs: Vec<CheckedJob>,
    /// `Σ` of their utilities.
    pub total_utility: f64,
}

fn fail(rule: Rule, job: Option<JobId>, slot: Option<u32>, detail: String) -> LocalityError {
    LocalityError::InvalidSchedule {
        rule,
        job,
        slot,
        detail,
    }
}

/// Demands of one configuration's units: LOCAL tasks use no NIC.
fn demand(r: &Resources, local: bool) -> Resources {
    let mut d = *r;
    if local {
        d.nic_bps = 0.0;
    }
    d
}

/// Checks `schedule` against the locality model of `instance` under
/// `params` (plan window `horizon`, intra-machine bandwidth rule
/// `intra_factor`):
///
/// * every listed job is a known parameter-server job, listed once;
///   admitted jobs run, rejected ones do not;
/// * every segment carries a configuration, and no two segments of a job
///   share a slot (exactly one configuration per job and slot);
/// * LOCAL on `h`: LOCAL is enabled (`params.allow_local`); the placement
///   is `h` alone, with `y ≥ 1` workers and exactly one PS; `h` hosts
///   workers and PSs;
/// * DISTRIBUTED: `Σy ≥ 1`, `b·Σy ≤ B·Σz`, `Σz ≤ Σy`; workers only where
///   workers may run, PSs where PSs may;
/// * `Σy ≤ N_i = min(data_chunks, max_workers)`, `Σz ≤ max_ps`; machines in
///   the job's allowed list;
/// * slots inside `[a_i, min(T − 1, a_i + horizon − 1)]`;
/// * per machine, resource and slot, the demands of all jobs (LOCAL tasks
///   with NIC 0) within capacity (relative tolerance 10⁻⁹);
/// * the work `Σ_t r·Σy` (at `r^L_h = Δ/(τ + 2e/b_int)` in LOCAL slots and
///   `r^D = Δ/(τ + 2e/b)` in DISTRIBUTED ones) reaches `Q_i = E·N·M`.
///
/// Returns each admitted job's work, completion slot and utility, so that
/// callers can compare them with what the scheduler reported.
///
/// # Errors
///
/// [`LocalityError::InvalidSchedule`] naming the first rule broken, the
/// job and the slot.
pub fn verify_locality(
    instance: &Instance,
    params: &LocalityParams,
    schedule: &Schedule,
) -> Result<LocalityCheck, LocalityError> {
    let mut used: HashMap<(MachineId, u32), Resources> = HashMap::new();
    let mut seen = HashSet::new();
    let mut out = LocalityCheck::default();
    for js in &schedule.jobs {
        let id = js.job;
        let job = instance
            .job(id)
            .filter(|_| seen.insert(id))
            .ok_or_else(|| {
                fail(
                    Rule::UnknownOrDuplicateJob,
                    Some(id),
                    None,
                    "unknown or listed twice".into(),
                )
            })?;
        if js.admitted == js.segments.is_empty() {
            let detail = format!(
                "admitted = {} with {} segments",
                js.admitted,
                js.segments.len()
            );
            return Err(fail(Rule::Admission, Some(id), None, detail));
        }
        if js.admitted {
            let checked = check_job(instance, params, job, &js.segments, &mut used)?;
            out.total_utility += checked.utility;
            out.jobs.push(checked);
        }
    }
    let mut cells: Vec<_> = used.into_iter().collect();
    cells.sort_by_key(|((m, s), _)| (*m, *s));
    for ((m, s), d) in cells {
        let cap = instance
            .machine(m)
            .map_or(Resources::zero(), |x| x.capacity);
        if let Some(kind) = d.first_excess(&cap, FIT_TOL) {
            let detail = format!("{m}: {} over capacity", kind.name());
            return Err(fail(Rule::Capacity, None, Some(s), detail));
        }
    }
    Ok(out)
}

/// One admitted job: its segments, then its work and completion slot; adds
/// its demands to `used`.
fn check_job(
    instance: &Instance,
    params: &LocalityParams,
    job: &Job,
    segments: &[Segment],
    used: &mut HashMap<(MachineId, u32), Resources>,
) -> Result<CheckedJob, LocalityError> {
    let id = job.id;
    let Architecture::ParameterServer(p) = &job.architecture else {
        let detail = "not a parameter-server job".into();
        return Err(fail(Rule::UnknownOrDuplicateJob, Some(id), None, detail));
    };
    let a = instance.arrival_slot(job);
    let end = a
        .saturating_add(params.horizon.max(1) - 1)
        .min(instance.horizon_slots() - 1);
    let mut work_by_slot: Vec<(u32, f64)> = Vec::new();
    for seg in segments {
        let slot = Some(seg.slots.start);
        if seg.slots.start >= seg.slots.end || seg.slots.start < a || seg.slots.end - 1 > end {
            let detail = format!("slots {:?} outside [{a}, {end}]", seg.slots);
            return Err(fail(Rule::Window, Some(id), slot, detail));
        }
        let (rate, local) = check_segment(instance, params, job, p, seg)?;
        for (m, t) in seg.placement.iter() {
            let d = demand(&p.worker, local)
                .scaled(f64::from(t.workers))
                .plus(&demand(&p.ps, local).scaled(f64::from(t.ps)));
            for s in seg.slots.clone() {
                let e = used.entry((*m, s)).or_insert_with(Resources::zero);
                *e = e.plus(&d);
            }
        }
        for s in seg.slots.clone() {
            work_by_slot.push((s, rate * f64::from(seg.placement.total().workers)));
        }
    }
    work_by_slot.sort_by_key(|w| w.0);
    if let Some(w) = work_by_slot.windows(2).find(|w| w[0].0 == w[1].0) {
        let detail = "two segments in one slot".into();
        return Err(fail(Rule::OneConfiguration, Some(id), Some(w[0].0), detail));
    }
    let q = p.total_minibatches() as f64;
    let mut acc = 0.0;
    let mut completion = None;
    for &(s, w) in &work_by_slot {
        acc += w;
        if completion.is_none() && acc >= q * (1.0 - TOL) {
            completion = Some(s);
        }
    }
    let Some(completion) = completion else {
        return Err(fail(
            Rule::Work,
            Some(id),
            None,
            format!("{acc} of {q} mini-batches"),
        ));
    };
    Ok(CheckedJob {
        job: id,
        work: acc,
        completion,
        utility: job.utility.value(completion - a),
    })
}

/// One segment's configuration, caps and roles; returns the rate per
/// worker and whether it is LOCAL.
fn check_segment(
    instance: &Instance,
    params: &LocalityParams,
    job: &Job,
    p: &PsJob,
    seg: &Segment,
) -> Result<(f64, bool), LocalityError> {
    let (id, slot) = (job.id, Some(seg.slots.start));
    let bad = |rule, detail: String| fail(rule, Some(id), slot, detail);
    let slot_s = instance.slot_length_s();
    let total = seg.placement.total();
    let (rate, local) = match seg.config {
        Some(Configuration::Local { machine }) => {
            if !params.allow_local {
                return Err(bad(
                    Rule::LocalShape,
                    format!("LOCAL on {machine} while LOCAL is disabled"),
                ));
            }
            let entries = seg.placement.non_empty();
            let shape_ok = entries.len() == 1
                && entries
                    .iter()
                    .all(|(m, t)| *m == machine && t.workers >= 1 && t.ps == 1);
            if !shape_ok {
                return Err(bad(
                    Rule::LocalShape,
                    format!("LOCAL on {machine} with {entries:?}"),
                ));
            }
            let m = instance
                .machine(machine)
                .ok_or_else(|| bad(Rule::Roles, format!("unknown {machine}")))?;
            if m.hosts != Hosting::Both {
                return Err(bad(
                    Rule::Roles,
                    format!("LOCAL on {machine}, which does not host both roles"),
                ));
            }
            let b_int = params
                .intra_factor
                .map_or(m.intra_bandwidth_bps, |k| k * p.worker.nic_bps);
            let theta = if p.gradient_bytes == 0.0 {
                p.minibatch_compute_s
            } else {
                p.minibatch_compute_s + 2.0 * p.gradient_bytes / b_int
            };
            (slot_s / theta, true)
        }
        Some(Configuration::Distributed) => {
            let (y, z) = (f64::from(total.workers), f64::from(total.ps));
            let bw_ok = p.worker.nic_bps * y <= p.ps.nic_bps * z * (1.0 + TOL);
            if total.workers == 0 || !bw_ok || total.ps > total.workers {
                let detail = format!("{} workers, {} PSs", total.workers, total.ps);
                return Err(bad(Rule::DistributedShape, detail));
            }
            (slot_s / p.minibatch_time_s(), false)
        }
        _ => {
            return Err(bad(
                Rule::OneConfiguration,
                "segment without a configuration".into(),
            ));
        }
    };
    let n = p.data_chunks.min(p.max_workers);
    if total.workers > n || total.ps > p.max_ps {
        let detail = format!(
            "{} workers (N = {n}), {} PSs (cap {})",
            total.workers, total.ps, p.max_ps
        );
        return Err(bad(Rule::TaskCap, detail));
    }
    for (m, t) in seg.placement.iter() {
        let machine = instance
            .machine(*m)
            .ok_or_else(|| bad(Rule::Roles, format!("unknown {m}")))?;
        let roles_ok = (t.workers == 0 || machine.hosts != Hosting::ParameterServers)
            && (t.ps == 0 || machine.hosts != Hosting::Workers)
            && (t.is_empty() || job.may_use(*m));
        if !roles_ok {
            let detail = format!("{} workers and {} PSs on {m}", t.workers, t.ps);
            return Err(bad(Rule::Roles, detail));
        }
    }
    Ok((rate, local))
}
