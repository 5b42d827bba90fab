//! The evaluation metrics of the GADGET-style scheduler and its baselines,
//! measured the same way from any policy's simulator run
//! ([`GadgetMetrics::from_sim`]) or from an offline run of the scheduler
//! ([`GadgetMetrics::from_solved`]).

use std::collections::BTreeMap;
use std::fmt;

use dmlsched::algorithms::Solved;
use dmlsched::algorithms::gadget::{
    GadgetParams, GadgetReport, fastest_shapes, jain_index, utility_at_jct,
};
use dmlsched::model::units::Num;
use dmlsched::model::{Architecture, Instance, Job, Utility};
use dmlsched::sim::{SimOptions, SimResult, percentile, work_to_train};

/// Mean, median, 95th percentile (nearest rank) and maximum of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JctStats {
    /// Mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: f64,
    /// 95th percentile (nearest rank).
    pub p95: f64,
    /// Maximum.
    pub max: f64,
}

impl JctStats {
    /// The statistics of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<JctStats> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Some(JctStats {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: percentile(&v, 0.5),
            p95: percentile(&v, 0.95),
            max: v[v.len() - 1],
        })
    }
}

/// The metrics of one run over an instance of ring-all-reduce jobs.
///
/// Slots are the instance's; `T` is its horizon, `δ_i = t̂_i − a_i + 1`
/// the completion delay (job completion time) in slots of a job that
/// completes in slot `t̂_i ≤ T − 1` (a job completing later counts as
/// unfinished: no utility, but its GPU time is charged).
///
/// | metric | definition |
/// |---|---|
/// | `gross_utility` | `Σ_completed ω_i·u_i(δ_i)` ([`utility_at_jct`]) |
/// | `net_utility` | gross `− e·gpu_slots` |
/// | `gpu_slots` | GPU-slots used by every job, unfinished ones included |
/// | admission / completion rate | admitted (not rejected) / arrived; completed by `T` / arrived |
/// | `jct_slots`, `jct_s` | `δ_i` and `δ_i·slot` over completed jobs |
/// | `deadline_met_rate` | among jobs with a deadline utility, the share completed with `δ_i − 1 ≤ deadline` (`None` without such jobs) |
/// | `gpu_hours` | `gpu_slots·slot/3600` |
/// | `excessive_training_avoided_gpu_hours` | `Σ_completed (F^req − F^eff)·τ_i·w_i·slot/3600`: the GPU time the iterations past convergence would have taken |
/// | `gpu_utilisation`, `nic_utilisation` | GPU-seconds held, and reserved ring bandwidth × seconds (`b` per direction on each of the `n ≥ 2` servers of a reserving ring), within `[0, T·slot)`, over the cluster's GPUs and NIC bandwidth per direction times `T·slot` |
/// | `jain_jobs` | [`jain_index`] of `x_i = d_i^min/δ_i` (completed) or 0, over all jobs; `d_i^min` the job's shortest duration on the empty cluster |
/// | `jain_tenants` | [`jain_index`] of `x_v` = GPU-slots used by tenant `v`'s jobs / `Σ_{i∈v} w_i^min·d_i^min` (the GPU-slots of their shortest shapes), over tenants with a positive request; jobs without a tenant form one |
#[derive(Debug, Clone, PartialEq)]
pub struct GadgetMetrics {
    /// The policy measured.
    policy: String,
    /// Jobs arrived (the instance's jobs).
    pub arrived: usize,
    /// Jobs admitted (not rejected).
    pub admitted: usize,
    /// Jobs completed by the horizon.
    pub completed: usize,
    /// `Σ_completed ω_i·u_i(δ_i)`.
    pub gross_utility: f64,
    /// `gross − e·gpu_slots`.
    pub net_utility: f64,
    /// The energy price `e` per GPU-slot.
    energy_price: f64,
    /// GPU-slots used, unfinished jobs included.
    pub gpu_slots: f64,
    /// `δ` in slots over completed jobs.
    pub jct_slots: Option<JctStats>,
    /// `δ·slot` in seconds over completed jobs.
    pub jct_s: Option<JctStats>,
    /// Share of deadline jobs that met their deadline.
    pub deadline_met_rate: Option<f64>,
    /// `gpu_slots·slot/3600`.
    pub gpu_hours: f64,
    /// GPU-hours the completed jobs did not train past convergence.
    pub excessive_training_avoided_gpu_hours: f64,
    /// Mean fraction of the cluster's GPUs held over the horizon.
    pub gpu_utilisation: f64,
    /// Mean fraction of the cluster's NIC bandwidth reserved by rings over
    /// the horizon.
    pub nic_utilisation: f64,
    /// Jain's index over jobs.
    pub jain_jobs: Option<f64>,
    /// Jain's index over tenants.
    pub jain_tenants: Option<f64>,
}

/// What the metrics need of one job.
#[derive(Debug, Clone, PartialEq)]
struct Measured<'a> {
    job: &'a Job,
    weight: f64,
    admitted: bool,
    /// Completion slot, when by the horizon.
    completion: Option<u32>,
    /// GPU-seconds used (unfinished included).
    gpu_s: f64,
    /// GPU-seconds of the iterations trained (`F^eff·τ·w·slot`).
    train_gpu_s: f64,
    /// `F^req`, `F^eff`.
    iterations: (f64, f64),
    /// `(d^min, w^min)` on the empty cluster.
    fastest: Option<(u32, u32)>,
}

/// GPU-seconds held and reserved NIC bandwidth × seconds (per direction)
/// within the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Busy {
    gpu_s: f64,
    nic_bps_s: f64,
}

impl GadgetMetrics {
    /// The metrics of a simulator run of any policy over `instance` (every
    /// job ring-all-reduce): `options` are the simulator's (whether it
    /// stopped at convergence gives `F^eff`), `params` the model of the
    /// GADGET-style scheduler that gives `d^min` and the energy price. From
    /// a simulator run every `ω_i = 1`. Run the baselines with
    /// [`GadgetParams::sim_options`] too, so that every policy trains the
    /// same iterations.
    ///
    /// # Errors
    ///
    /// The model's errors (a job that is not ring-all-reduce, a size guard;
    /// see the [module documentation](dmlsched::algorithms::gadget#errors)).
    pub fn from_sim(
        instance: &Instance,
        result: &SimResult,
        options: &SimOptions,
        params: &GadgetParams,
    ) -> dmlsched::Result<GadgetMetrics> {
        let fastest = fastest_shapes(instance, params)?;
        let horizon = instance.horizon_slots();
        let mut measured = Vec::with_capacity(result.jobs.len());
        for rec in &result.jobs {
            let Some(p) = instance.job_position(rec.job) else {
                continue;
            };
            let job = &instance.jobs()[p];
            let f_eff = work_to_train(job, options.stop_at_convergence);
            let completion = rec.completion_slot.filter(|&c| c < horizon);
            measured.push(Measured {
                job,
                weight: 1.0,
                admitted: !rec.rejected,
                completion,
                gpu_s: rec.gpu_seconds,
                train_gpu_s: rec.gpu_seconds,
                iterations: (requested(job), f_eff),
                fastest: fastest[p],
            });
        }
        let busy = sim_busy(instance, result);
        Ok(compute(
            instance,
            &result.policy,
            params.energy_price,
            &measured,
            busy,
        ))
    }

    /// The metrics of an offline run of the GADGET-style scheduler over
    /// `instance`: every admitted plan completes in its slot, with its
    /// frozen weight `ω_i`; GPU-slots are the plans' `w·d`.
    pub fn from_solved(instance: &Instance, solved: &Solved<GadgetReport>) -> GadgetMetrics {
        let report = &solved.report;
        let slot = instance.slot_length_s();
        let mut measured = Vec::with_capacity(report.jobs.len());
        let mut busy = Busy::default();
        for rec in &report.jobs {
            let Some(job) = instance.job(rec.job) else {
                continue;
            };
            let fastest = rec.min_slots.zip(rec.min_workers);
            let iterations = (
                rec.iterations_requested as f64,
                rec.iterations_effective as f64,
            );
            let mut m = Measured {
                job,
                weight: rec.omega,
                admitted: rec.admitted(),
                completion: None,
                gpu_s: 0.0,
                train_gpu_s: 0.0,
                iterations,
                fastest,
            };
            if let Ok(a) = &rec.decision {
                let w = f64::from(a.workers);
                m.completion = Some(a.completion);
                m.gpu_s = a.gpu_slots() as f64 * slot;
                m.train_gpu_s = a.iterations as f64 * a.tau_slots * w * slot;
                busy.gpu_s += m.gpu_s;
                let n = a.placement.len();
                busy.nic_bps_s += reserved_bps(job, n) * n as f64 * f64::from(a.slots) * slot;
            }
            measured.push(m);
        }
        compute(instance, "gadget", report.energy_price, &measured, busy)
    }

    /// Admitted / arrived (0 without jobs).
    pub fn admission_rate(&self) -> f64 {
        ratio(self.admitted, self.arrived)
    }

    /// Completed by the horizon / arrived (0 without jobs).
    pub fn completion_rate(&self) -> f64 {
        ratio(self.completed, self.arrived)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// `F^req` of a ring (the work of any other job).
fn requested(job: &Job) -> f64 {
    work_to_train(job, false)
}

/// The bandwidth per direction a ring of `job` on `n` servers reserves on
/// each (0 for other jobs).
fn reserved_bps(job: &Job, n: usize) -> f64 {
    match &job.architecture {
        Architecture::RingAllReduce(r) => r.reserved_nic_bps(n),
        Architecture::ParameterServer(_) => 0.0,
    }
}

/// GPU-seconds held and ring reservations × seconds of a simulator run,
/// within `[0, T·slot)`, from its allocation records.
fn sim_busy(instance: &Instance, result: &SimResult) -> Busy {
    let end = instance.horizon_s();
    let mut busy = Busy::default();
    for a in &result.allocations {
        let Some(job) = instance.job(a.job) else {
            continue;
        };
        let dt = (a.to_s.min(end) - a.from_s.max(0.0)).max(0.0);
        if dt <= 0.0 {
            continue;
        }
        let mut machines = 0;
        for (_, t) in &a.placement {
            busy.gpu_s += job.demand_for(t.workers, t.ps).gpus * dt;
            if t.workers > 0 {
                machines += 1;
            }
        }
        busy.nic_bps_s += reserved_bps(job, machines) * machines as f64 * dt;
    }
    busy
}

/// Whether `u` is a deadline utility, and if so whether completing after
/// `jct` slots meets it.
fn deadline_met(u: &Utility, jct: Option<u32>) -> Option<bool> {
    match u {
        Utility::DeadlineStep { deadline_slots, .. } => {
            Some(jct.is_some_and(|d| d.saturating_sub(1) <= *deadline_slots))
        }
        _ => None,
    }
}

/// The metrics of the measured jobs.
fn compute(
    instance: &Instance,
    policy: &str,
    energy_price: f64,
    jobs: &[Measured<'_>],
    busy: Busy,
) -> GadgetMetrics {
    let slot = instance.slot_length_s();
    let arrival = |m: &Measured<'_>| instance.arrival_slot(m.job);
    let jct = |m: &Measured<'_>| m.completion.map(|c| c.saturating_sub(arrival(m)) + 1);
    let mut gross = 0.0;
    let mut avoided_s = 0.0;
    let mut jcts = Vec::new();
    let mut deadlines = (0usize, 0usize);
    let mut x_jobs = Vec::with_capacity(jobs.len());
    let mut tenants: BTreeMap<Option<&str>, (f64, f64)> = BTreeMap::new();
    for m in jobs {
        let d = jct(m);
        if let Some(d) = d {
            gross += m.weight * utility_at_jct(&m.job.utility, d);
            jcts.push(f64::from(d));
            let (f_req, f_eff) = m.iterations;
            if f_eff > 0.0 {
                avoided_s += m.train_gpu_s * (f_req - f_eff).max(0.0) / f_eff;
            }
        }
        if let Some(met) = deadline_met(&m.job.utility, d) {
            deadlines.0 += 1;
            deadlines.1 += usize::from(met);
        }
        x_jobs.push(match (d, m.fastest) {
            (Some(d), Some((d_min, _))) => f64::from(d_min) / f64::from(d),
            _ => 0.0,
        });
        let t = tenants.entry(m.job.tenant.as_deref()).or_insert((0.0, 0.0));
        t.0 += m.gpu_s / slot;
        if let Some((d_min, w_min)) = m.fastest {
            t.1 += f64::from(d_min) * f64::from(w_min);
        }
    }
    let x_tenants: Vec<f64> = tenants
        .values()
        .filter(|(_, req)| *req > 0.0)
        .map(|(got, req)| got / req)
        .collect();
    let gpu_slots = jobs.iter().map(|m| m.gpu_s).sum::<f64>() / slot;
    let cap = instance.cluster().total_capacity();
    let span = instance.horizon_s();
    let share = |used: f64, capacity: f64| {
        if capacity > 0.0 && span > 0.0 {
            used / (capacity * span)
        } else {
            0.0
        }
    };
    let jct_s: Vec<f64> = jcts.iter().map(|d| d * slot).collect();
    GadgetMetrics {
        policy: policy.to_string(),
        arrived: jobs.len(),
        admitted: jobs.iter().filter(|m| m.admitted).count(),
        completed: jcts.len(),
        gross_utility: gross,
        net_utility: gross - energy_price * gpu_slots,
        energy_price,
        gpu_slots,
        jct_slots: JctStats::of(&jcts),
        jct_s: JctStats::of(&jct_s),
        deadline_met_rate: (deadlines.0 > 0).then(|| ratio(deadlines.1, deadlines.0)),
        gpu_hours: gpu_slots * slot / 3600.0,
        excessive_training_avoided_gpu_hours: avoided_s / 3600.0,
        gpu_utilisation: share(busy.gpu_s, cap.gpus),
        nic_utilisation: share(busy.nic_bps_s, cap.nic_bps),
        jain_jobs: jain_index(&x_jobs),
        jain_tenants: jain_index(&x_tenants),
    }
}

impl fmt::Display for GadgetMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
        let stats = |s: &Option<JctStats>| {
            s.map_or("n/a".to_string(), |s| {
                format!(
                    "mean {}, p50 {}, p95 {}, max {}",
                    Num(s.mean),
                    Num(s.p50),
                    Num(s.p95),
                    Num(s.max)
                )
            })
        };
        writeln!(f, "policy {}", self.policy)?;
        writeln!(
            f,
            "  jobs: {} arrived, {} admitted ({:.1}%), {} completed ({:.1}%)",
            self.arrived,
            self.admitted,
            100.0 * self.admission_rate(),
            self.completed,
            100.0 * self.completion_rate()
        )?;
        writeln!(
            f,
            "  utility: gross {}, net {} (e = {} per GPU-slot, {} GPU-slots)",
            Num(self.gross_utility),
            Num(self.net_utility),
            Num(self.energy_price),
            Num(self.gpu_slots)
        )?;
        writeln!(f, "  JCT (slots): {}", stats(&self.jct_slots))?;
        writeln!(f, "  JCT (s): {}", stats(&self.jct_s))?;
        writeln!(f, "  deadlines met: {}", opt(self.deadline_met_rate))?;
        writeln!(
            f,
            "  GPU-hours: {:.4} ({:.4} avoided by stopping at convergence)",
            self.gpu_hours, self.excessive_training_avoided_gpu_hours
        )?;
        writeln!(
            f,
            "  utilisation: GPU {:.1}%, NIC {:.1}%",
            100.0 * self.gpu_utilisation,
            100.0 * self.nic_utilisation
        )?;
        write!(
            f,
            "  Jain fairness: jobs {}, tenants {}",
            opt(self.jain_jobs),
            opt(self.jain_tenants)
        )
    }
}
