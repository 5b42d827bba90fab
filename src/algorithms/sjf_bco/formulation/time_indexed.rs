//! The time-indexed exact ILP for non-preemptive gang scheduling with
//! contention-free integer durations, on a few jobs.

use crate::lp::{ColumnKind, ExactMipLimits, LinearProgram, LpError, Sense};
use crate::model::units::ceil_tol;
use crate::model::{GpuId, JobId};

use super::error::FormulationError;
use super::input::FormulationInput;
use super::report::{DEFAULT_LIMITS, MipReport, check_columns, solve_mip};

/// Default most jobs [`solve_time_indexed`] accepts
/// ([`TimeIndexedOptions::max_jobs`]).
pub const DEFAULT_TIME_INDEXED_MAX_JOBS: usize = 8;

/// Most slots a time-indexed horizon may have.
pub const MAX_HORIZON_SLOTS: u64 = 1_000_000;

/// Options of [`solve_time_indexed`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct TimeIndexedOptions {
    /// Integer durations `d_j ≥ 1`, slots, in input job order; `None`
    /// (default) uses [`default_durations`], `⌈ρ̂_j/u⌉`.
    pub durations: Option<Vec<u64>>,
    /// The horizon `H` (slots), an upper bound on the optimal makespan;
    /// `None` (default) uses [`list_schedule_makespan`]. A horizon shorter
    /// than the optimum makes the program infeasible.
    pub horizon: Option<u64>,
    /// Most jobs (default [`DEFAULT_TIME_INDEXED_MAX_JOBS`] = 8).
    pub max_jobs: usize,
    /// Solve limits (default [`DEFAULT_LIMITS`]; presolve is always off);
    /// `max_columns` bounds `1 + Σ_j (H − d_j + 1)(|S| + 1)`. In JSON, the
    /// fields not given keep their defaults.
    #[cfg_attr(
        feature = "serde",
        serde(deserialize_with = "super::report::deserialize_limits")
    )]
    pub limits: ExactMipLimits,
}

impl Default for TimeIndexedOptions {
    fn default() -> Self {
        TimeIndexedOptions {
            durations: None,
            horizon: None,
            max_jobs: DEFAULT_TIME_INDEXED_MAX_JOBS,
            limits: DEFAULT_LIMITS,
        }
    }
}

/// The default integer durations `d_j = max(1, ⌈ρ̂_j/u⌉)` (the ceiling
/// ignores relative noise below 10⁻⁹). Under the estimate contract
/// `ρ̂_j/u ≤ ρ_j`, and since a job holds its GPUs for whole slots, `d_j` is
/// at most the number of slots the job occupies in any schedule.
pub fn default_durations(input: &FormulationInput) -> Vec<u64> {
    (0..input.jobs().len())
        .map(|j| ceil_tol(input.load(j)).max(1.0) as u64)
        .collect()
}

/// One placed interval: `[start, end)` with per-server GPU counts.
struct Placed {
    start: u64,
    end: u64,
    per_server: Vec<u32>,
}

/// The makespan of a simple list schedule under per-server counts: jobs in
/// input order, each at the earliest time `t` (0 or the end of a placed
/// job) at which the servers have `G_j` GPUs free throughout
/// `[t, t + d_j)`, taken from the servers with the most free GPUs first.
/// It is a feasible makespan, hence a valid horizon for
/// [`solve_time_indexed`]. `durations` must have one entry per job.
///
/// # Complexity
///
/// `O(|J|³·|S|)`; nothing is allocated per slot.
pub fn list_schedule_makespan(input: &FormulationInput, durations: &[u64]) -> u64 {
    let servers = input.servers();
    let mut placed: Vec<Placed> = Vec::with_capacity(durations.len());
    for (job, &d) in input.jobs().iter().zip(durations) {
        let mut candidates: Vec<u64> = placed.iter().map(|p| p.end).collect();
        candidates.push(0);
        candidates.sort_unstable();
        for &t in &candidates {
            let end = t.saturating_add(d);
            let free: Vec<u32> = (0..servers.len())
                .map(|s| servers[s].gpus.saturating_sub(peak_use(&placed, s, t, end)))
                .collect();
            if free.iter().map(|&f| u64::from(f)).sum::<u64>() < u64::from(job.gpus) {
                continue;
            }
            let mut order: Vec<usize> = (0..servers.len()).collect();
            order.sort_by_key(|&s| std::cmp::Reverse(free[s]));
            let mut need = job.gpus;
            let mut per_server = vec![0; servers.len()];
            for s in order {
                let take = need.min(free[s]);
                per_server[s] = take;
                need -= take;
            }
            placed.push(Placed {
                start: t,
                end,
                per_server,
            });
            break;
        }
    }
    placed.iter().map(|p| p.end).max().unwrap_or(0)
}

/// Most GPUs of server `s` in use at once during `[t, end)`.
fn peak_use(placed: &[Placed], s: usize, t: u64, end: u64) -> u32 {
    let use_at = |x: u64| -> u32 {
        placed
            .iter()
            .filter(|p| p.start <= x && x < p.end)
            .map(|p| p.per_server[s])
            .sum()
    };
    placed
        .iter()
        .map(|p| p.start)
        .filter(|&x| t < x && x < end)
        .chain([t])
        .map(use_at)
        .max()
        .unwrap_or(0)
}

/// A built time-indexed program and where its columns are.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeIndexedModel {
    lp: LinearProgram,
    /// Column of job `j`'s block (its `x_{j,0}`).
    offsets: Vec<usize>,
    /// `H − d_j + 1` start slots per job.
    starts: Vec<u64>,
    servers: usize,
    durations: Vec<u64>,
    horizon: u64,
}

impl TimeIndexedModel {
    /// The program (minimise `Cmax`).
    pub fn lp(&self) -> &LinearProgram {
        &self.lp
    }

    /// The column of `Cmax` (0).
    pub fn cmax_column(&self) -> usize {
        0
    }

    /// The column of `x_{j,t}` (job `j` starts in slot `t`); `None` out of
    /// range (`t > H − d_j`).
    pub fn start_column(&self, job: usize, t: u64) -> Option<usize> {
        let n = *self.starts.get(job)?;
        (t < n).then(|| self.offsets[job] + t as usize * (self.servers + 1))
    }

    /// The column of `y_{j,s,t}` (GPUs of server `s` job `j` uses if it
    /// starts in slot `t`); `None` out of range.
    pub fn count_column(&self, job: usize, server: usize, t: u64) -> Option<usize> {
        (server < self.servers)
            .then(|| self.start_column(job, t).map(|c| c + 1 + server))
            .flatten()
    }

    /// The durations `d_j`.
    pub fn durations(&self) -> &[u64] {
        &self.durations
    }

    /// The horizon `H`.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }
}

/// Checks the options and returns `(durations, horizon)`; every size is
/// checked before the program is allocated.
fn resolve(
    input: &FormulationInput,
    opts: &TimeIndexedOptions,
) -> Result<(Vec<u64>, u64), FormulationError> {
    opts.limits.validate()?;
    let jobs = input.jobs().len();
    if jobs > opts.max_jobs {
        return Err(FormulationError::TooLarge {
            formulation: "time-indexed ILP",
            what: "jobs",
            size: jobs as u128,
            limit: opts.max_jobs as u64,
        });
    }
    let bad = |name, reason: String| FormulationError::InvalidOption { name, reason };
    let durations = match &opts.durations {
        Some(d) if d.len() != jobs => {
            return Err(bad(
                "durations",
                format!("{} durations for {jobs} jobs", d.len()),
            ));
        }
        Some(d) if d.contains(&0) => return Err(bad("durations", "a duration is 0".into())),
        Some(d) => d.clone(),
        None => default_durations(input),
    };
    let longest = durations.iter().copied().max().unwrap_or(1);
    if longest > MAX_HORIZON_SLOTS {
        return Err(too_many_slots(longest));
    }
    let horizon = match opts.horizon {
        Some(h) => h,
        None => list_schedule_makespan(input, &durations),
    };
    if horizon < longest {
        return Err(bad(
            "horizon",
            format!("{horizon} slots is shorter than the longest job ({longest} slots)"),
        ));
    }
    if horizon > MAX_HORIZON_SLOTS {
        return Err(too_many_slots(horizon));
    }
    let per_start = input.servers().len() as u128 + 1;
    let columns = 1 + durations
        .iter()
        .map(|&d| u128::from(horizon - d + 1) * per_start)
        .sum::<u128>();
    check_columns(opts.limits.max_columns, "time-indexed ILP", columns)?;
    Ok((durations, horizon))
}

fn too_many_slots(size: u64) -> FormulationError {
    FormulationError::TooLarge {
        formulation: "time-indexed ILP",
        what: "slots",
        size: u128::from(size),
        limit: MAX_HORIZON_SLOTS,
    }
}

/// Builds the time-indexed exact ILP (no solver needed):
///
/// ```text
/// minimise    Cmax
/// subject to  Σ_t x_{j,t} = 1                                      ∀ j
///             Σ_s y_{j,s,t} = G_j · x_{j,t}                        ∀ j, t
///             y_{j,s,t} ≤ min(O_s, G_j) · x_{j,t}                  ∀ j, s, t
///             Σ_j Σ_{t'=max(0,t−d_j+1)}^{t} y_{j,s,t'} ≤ O_s      ∀ s, t ∈ 0..H
///             Cmax ≥ Σ_t (t + d_j) · x_{j,t}                       ∀ j
///             x_{j,t} ∈ {0,1},  y_{j,s,t} ∈ Z≥0,  t ∈ 0..=H−d_j
/// ```
///
/// `Cmax` gets the lower bound `max(max_j d_j, ⌈Σ_j G_j d_j / N⌉)`, which
/// every integral schedule meets (so the optimum is unchanged).
///
/// # Errors
///
/// [`FormulationError::TooLarge`] for more than
/// [`TimeIndexedOptions::max_jobs`] jobs, a horizon or duration above
/// [`MAX_HORIZON_SLOTS`] or more than `max_columns` columns;
/// [`FormulationError::InvalidOption`] for invalid limits, durations (wrong
/// count, zero) or a horizon shorter than the longest duration;
/// [`FormulationError::Infeasible`] for a horizon below
/// `⌈Σ_j G_j d_j / N⌉`.
pub fn build_time_indexed(
    input: &FormulationInput,
    opts: &TimeIndexedOptions,
) -> Result<TimeIndexedModel, FormulationError> {
    let (durations, horizon) = resolve(input, opts)?;
    let servers = input.servers();
    let ns = servers.len();
    let mut lp = LinearProgram::new(Sense::Minimise);
    let area: u128 = input
        .jobs()
        .iter()
        .zip(&durations)
        .map(|(j, &d)| u128::from(j.gpus) * u128::from(d))
        .sum();
    let n = u128::from(input.total_gpus());
    let longest = durations.iter().copied().max().unwrap_or(0);
    let cmax_lower = (longest as f64).max(area.div_ceil(n) as f64);
    if cmax_lower > horizon as f64 {
        return Err(FormulationError::Infeasible {
            formulation: "time-indexed ILP",
            hint: format!(
                ": the horizon of {horizon} slots is below the lower bound {cmax_lower} on the makespan"
            ),
        });
    }
    lp.add_column(1.0, cmax_lower, horizon as f64, ColumnKind::Continuous);
    let mut offsets = Vec::with_capacity(durations.len());
    let mut starts = Vec::with_capacity(durations.len());
    for (job, &d) in input.jobs().iter().zip(&durations) {
        offsets.push(lp.n_cols());
        starts.push(horizon - d + 1);
        for _ in 0..=horizon - d {
            lp.add_binary_column(0.0);
            for s in servers {
                let cap = f64::from(job.gpus.min(s.gpus));
                lp.add_column(0.0, 0.0, cap, ColumnKind::Integer);
            }
        }
    }
    let model = TimeIndexedModel {
        lp,
        offsets,
        starts,
        servers: ns,
        durations,
        horizon,
    };
    Ok(add_time_indexed_rows(model, input))
}

/// A row: lower bound, upper bound, entries.
type Row = (f64, f64, Vec<(usize, f64)>);

/// The rows of [`build_time_indexed`].
fn add_time_indexed_rows(mut m: TimeIndexedModel, input: &FormulationInput) -> TimeIndexedModel {
    let servers = input.servers();
    let mut rows: Vec<Row> = Vec::new();
    for (j, job) in input.jobs().iter().enumerate() {
        let d = m.durations[j];
        let xs: Vec<(u64, usize)> = (0..m.starts[j])
            .filter_map(|t| m.start_column(j, t).map(|c| (t, c)))
            .collect();
        rows.push((1.0, 1.0, xs.iter().map(|&(_, c)| (c, 1.0)).collect()));
        let mut cmax = vec![(m.cmax_column(), 1.0)];
        cmax.extend(xs.iter().map(|&(t, c)| (c, -((t + d) as f64))));
        rows.push((0.0, f64::INFINITY, cmax));
        for &(t, x) in &xs {
            let ys: Vec<usize> = (0..servers.len())
                .filter_map(|s| m.count_column(j, s, t))
                .collect();
            let mut gang: Vec<(usize, f64)> = ys.iter().map(|&c| (c, 1.0)).collect();
            gang.push((x, -f64::from(job.gpus)));
            rows.push((0.0, 0.0, gang));
            for (s, &y) in ys.iter().enumerate() {
                let cap = f64::from(job.gpus.min(servers[s].gpus));
                rows.push((f64::NEG_INFINITY, 0.0, vec![(y, 1.0), (x, -cap)]));
            }
        }
    }
    for (s, server) in servers.iter().enumerate() {
        for t in 0..m.horizon {
            let mut row = Vec::new();
            for j in 0..input.jobs().len() {
                let first = (t + 1).saturating_sub(m.durations[j]);
                row.extend((first..=t).filter_map(|t2| m.count_column(j, s, t2).map(|c| (c, 1.0))));
            }
            if !row.is_empty() {
                rows.push((f64::NEG_INFINITY, f64::from(server.gpus), row));
            }
        }
    }
    for (lo, hi, row) in rows {
        m.lp.add_row(lo, hi, &row);
    }
    m
}

/// One job of a decoded time-indexed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedJob {
    /// The job.
    pub job: JobId,
    /// First slot it runs in.
    pub start: u64,
    /// Slots it runs, `d_j`: it completes at `start + duration`.
    pub duration: u64,
    /// GPUs per server (input server order), summing to `G_j`.
    pub per_server: Vec<u32>,
    /// Its concrete GPUs, held from `start` to `start + duration`.
    pub gpus: Vec<GpuId>,
}

/// The result of [`solve_time_indexed`].
#[derive(Debug, Clone, PartialEq)]
pub struct TimeIndexedSolution {
    /// How the MIP solve ended. The incumbent is the optimal makespan under
    /// the durations only when [`MipReport::optimal`]; the dual bound always
    /// bounds it from below.
    pub report: MipReport,
    /// The durations used.
    pub durations: Vec<u64>,
    /// The horizon used.
    pub horizon: u64,
    /// The decoded incumbent's makespan `max_j (start_j + d_j)`; `None`
    /// without incumbent.
    pub makespan: Option<u64>,
    /// The decoded incumbent, input job order; `None` without incumbent.
    pub schedule: Option<Vec<TimedJob>>,
}

impl TimeIndexedSolution {
    /// A proven lower bound on the optimal makespan under the durations:
    /// the dual bound rounded up to an integer (every makespan here is
    /// one), after subtracting 10⁻⁶ for the solver's tolerances. With the default durations and the estimate contract it is
    /// also a lower bound on the optimal makespan of the **contention
    /// model**, never an optimum of it.
    pub fn lower_bound(&self) -> f64 {
        (self.report.info.dual_bound - 1e-6).ceil()
    }
}

/// Solves the time-indexed exact ILP ([`build_time_indexed`]) with HiGHS,
/// **without presolve**, and decodes the incumbent into concrete GPUs.
///
/// # What the optimum means
///
/// Durations are **contention-free** constants (default `⌈ρ̂_j/u⌉`). The
/// optimum is the optimal makespan of non-preemptive gang scheduling under
/// those durations: exact when every job's duration is known and fixed
/// (SJF-BCO's fixed-duration time model with `u = 1`). Under the
/// ring-all-reduce contention model it is a **lower bound** on the optimal
/// makespan, never the optimum: any contention schedule keeps each job on
/// fixed GPUs for at least `d_j` whole slots, and cutting every job's
/// interval to its first `d_j` slots gives a schedule of this program with
/// no larger makespan.
///
/// # Realisability
///
/// Per-server counts suffice: inside one server, jobs with fixed intervals
/// and integer demands whose total use never exceeds `O_s` can be given
/// concrete GPUs without migration (interval-graph multicolouring). The
/// decoder processes each server's jobs in start order and gives each the
/// lowest-indexed GPUs that are free at its start.
///
/// # Errors
///
/// As [`build_time_indexed`]; [`FormulationError::Infeasible`] for a horizon
/// (given by the caller) shorter than the optimum;
/// [`FormulationError::Lp`] (with [`LpError::SolverUnavailable`] without
/// the `highs` feature); an [`LpError::Solver`] of stage `"check"` if the
/// rounded incumbent cannot be decoded.
pub fn solve_time_indexed(
    input: &FormulationInput,
    opts: &TimeIndexedOptions,
) -> Result<TimeIndexedSolution, FormulationError> {
    let model = build_time_indexed(input, opts)?;
    let hint = format!(
        ": no schedule within the horizon of {} slots",
        model.horizon
    );
    let (report, primal) = solve_mip(model.lp(), &opts.limits, "time-indexed ILP", &hint)?;
    let schedule = if primal.is_empty() {
        None
    } else {
        Some(decode(&model, input, &primal)?)
    };
    Ok(TimeIndexedSolution {
        report,
        makespan: schedule
            .as_ref()
            .and_then(|s| s.iter().map(|j| j.start + j.duration).max()),
        schedule,
        durations: model.durations,
        horizon: model.horizon,
    })
}

fn check_error(message: String) -> FormulationError {
    FormulationError::Lp(LpError::Solver {
        stage: "check".into(),
        message,
    })
}

/// Start slots and per-server counts of the incumbent, then concrete GPUs.
fn decode(
    m: &TimeIndexedModel,
    input: &FormulationInput,
    primal: &[f64],
) -> Result<Vec<TimedJob>, FormulationError> {
    let servers = input.servers();
    let mut out = Vec::with_capacity(input.jobs().len());
    for (j, job) in input.jobs().iter().enumerate() {
        let start = (0..m.starts[j])
            .find(|&t| m.start_column(j, t).is_some_and(|c| primal[c] >= 0.5))
            .ok_or_else(|| check_error(format!("the incumbent does not start {}", job.id)))?;
        let per_server: Vec<u32> = (0..servers.len())
            .map(|s| {
                m.count_column(j, s, start)
                    .map_or(0, |c| primal[c].round().max(0.0) as u32)
            })
            .collect();
        if per_server.iter().sum::<u32>() != job.gpus {
            return Err(check_error(format!(
                "the incumbent gives {} {} GPUs, not {}",
                job.id,
                per_server.iter().sum::<u32>(),
                job.gpus
            )));
        }
        out.push(TimedJob {
            job: job.id,
            start,
            duration: m.durations[j],
            per_server,
            gpus: Vec::new(),
        });
    }
    assign_gpus(&mut out, input)?;
    Ok(out)
}

/// Gives every job concrete GPUs, server by server: jobs in start order
/// (ties by input order) take the lowest-indexed GPUs free at their start.
fn assign_gpus(jobs: &mut [TimedJob], input: &FormulationInput) -> Result<(), FormulationError> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&j| (jobs[j].start, j));
    for (s, server) in input.servers().iter().enumerate() {
        let mut free_at = vec![0u64; server.gpus as usize];
        for &j in &order {
            let need = jobs[j].per_server[s] as usize;
            let start = jobs[j].start;
            let chosen: Vec<usize> = (0..free_at.len())
                .filter(|&g| free_at[g] <= start)
                .take(need)
                .collect();
            if chosen.len() < need {
                return Err(check_error(format!(
                    "{} needs {need} GPUs of {} at slot {start} but only {} are free",
                    jobs[j].job,
                    server.machine,
                    chosen.len()
                )));
            }
            for g in chosen {
                free_at[g] = start + jobs[j].duration;
                jobs[j].gpus.push(GpuId {
                    machine: server.machine,
                    index: g as u32,
                });
            }
        }
    }
    Ok(())
}
