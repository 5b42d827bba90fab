//! A replay's tables and plots, as `dmlsched replay --out DIR` writes
//! them.

use std::io::Write;
use std::path::Path;

use super::{ReplayError, ReplayFailure, ReplayObserver, ReplayRun, Replayed, scale_label};
use crate::report::RunMeta;
use crate::report::csv::{write_jobs_csv, write_summary_csv, write_utilization_csv_runs};
use crate::report::plot::{jct_cdf_svg, jct_vs_load_svg, utility_vs_load_svg, utilization_svg};
use crate::sim::{RunSummary, SimResult};

impl Replayed {
    /// The name of `run`'s per-job table: `jobs-<policy>-x<scale>-seed<seed>.csv`.
    pub fn jobs_file(run: &ReplayRun) -> String {
        format!(
            "jobs-{}-x{}-seed{}.csv",
            run.meta.policy,
            scale_label(run.meta.load_scale),
            run.meta.seed
        )
    }

    /// Writes `summary.csv`, one `jobs-<policy>-x<scale>-seed<seed>.csv`
    /// per run, `certificates.json` (when a run has a certificate),
    /// `failures.csv` (when a run failed), `utilization.csv` and the plots
    /// `utilization.svg`, `jct_cdf.svg`, `jct_vs_load.svg` and
    /// `utility.svg` to `dir` (created if missing). A plot that cannot be
    /// drawn is a note to `observer`: the tables are written anyway.
    ///
    /// # Errors
    ///
    /// [`ReplayError::Input`] when `dir` cannot be created,
    /// [`ReplayError::Run`] when a file cannot be written.
    pub fn write(&self, dir: &Path, observer: &mut dyn ReplayObserver) -> Result<(), ReplayError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| ReplayError::Input(format!("{}: {e}", dir.display())))?;
        let failed = |name: &str, e: &dyn std::fmt::Display| {
            ReplayError::Run(format!("{}: {e}", dir.join(name).display()))
        };
        let create = |name: &str| {
            std::fs::File::create(dir.join(name))
                .map(std::io::BufWriter::new)
                .map_err(|e| failed(name, &e))
        };
        write_summary_csv(create("summary.csv")?, &self.summary_rows())
            .map_err(|e| failed("summary.csv", &e))?;
        for r in &self.runs {
            let name = Self::jobs_file(r);
            write_jobs_csv(create(&name)?, &r.meta, &r.result).map_err(|e| failed(&name, &e))?;
        }
        if let Some(json) = self.certificates_json() {
            let text = serde_json::to_string_pretty(&json)
                .map_err(|e| ReplayError::Run(format!("certificates.json: {e}")))?;
            std::fs::write(dir.join("certificates.json"), text + "\n")
                .map_err(|e| failed("certificates.json", &e))?;
        }
        if !self.failures.is_empty() {
            write_failures(create("failures.csv")?, &self.failures)
                .map_err(|e| failed("failures.csv", &e))?;
        }
        let Some(run0) = self.runs.first() else {
            return Ok(());
        };
        // The utilization plots and table: the first load scale and seed.
        let first: Vec<&ReplayRun> = self
            .runs
            .iter()
            .filter(|r| (r.meta.load_scale, r.meta.seed) == (run0.meta.load_scale, run0.meta.seed))
            .collect();
        let metas: Vec<(RunMeta, &SimResult)> =
            first.iter().map(|r| (r.meta.clone(), &r.result)).collect();
        write_utilization_csv_runs(create("utilization.csv")?, &metas)
            .map_err(|e| failed("utilization.csv", &e))?;
        for (name, svg) in self.plots(&first, observer) {
            std::fs::write(dir.join(name), svg).map_err(|e| failed(name, &e))?;
        }
        Ok(())
    }

    /// The plots of the runs `first` (those of the first load scale and
    /// seed) and of every run against load; one that cannot be drawn is a
    /// note.
    fn plots(
        &self,
        first: &[&ReplayRun],
        observer: &mut dyn ReplayObserver,
    ) -> Vec<(&'static str, String)> {
        let plots: Vec<(&str, &SimResult)> = first
            .iter()
            .map(|r| (r.meta.policy.as_str(), &r.result))
            .collect();
        let (scale, seed) = (scale_label(first[0].meta.load_scale), first[0].meta.seed);
        let by_load = |metric: fn(&RunSummary) -> f64| mean_by_load(&self.runs, metric);
        let jct = by_load(|s| s.avg_jct_s);
        let jct: Vec<(&str, f64, f64)> = jct.iter().map(|(p, s, v)| (p.as_str(), *s, *v)).collect();
        let utility = by_load(|s| s.total_utility);
        let utility: Vec<(&str, f64, f64)> = utility
            .iter()
            .map(|(p, s, v)| (p.as_str(), *s, *v))
            .collect();
        let drawn = [
            (
                "utilization.svg",
                utilization_svg(
                    &plots,
                    &format!("GPU utilization, load x{scale}, seed {seed}"),
                ),
            ),
            (
                "jct_cdf.svg",
                jct_cdf_svg(&plots, &format!("JCT CDF, load x{scale}, seed {seed}")),
            ),
            (
                "jct_vs_load.svg",
                jct_vs_load_svg(&jct, "Average JCT against load (mean over seeds)"),
            ),
            (
                "utility.svg",
                utility_vs_load_svg(&utility, "Total utility against load (mean over seeds)"),
            ),
        ];
        let mut svgs = Vec::new();
        for (name, svg) in drawn {
            match svg {
                Ok(svg) => svgs.push((name, svg)),
                Err(e) => observer.message(&format!("note: {name} not written: {e}")),
            }
        }
        svgs
    }
}

/// `certificates.json`: every algorithm run's certificate with its policy,
/// load scale, seed, workload and cluster.
pub(crate) fn certificates_json(runs: &[ReplayRun]) -> Option<serde_json::Value> {
    let list: Vec<serde_json::Value> = runs
        .iter()
        .filter_map(|r| {
            let c = r.certificate.as_ref().ok()?.as_ref()?;
            Some(serde_json::json!({
                "policy": r.meta.policy,
                "load_scale": r.meta.load_scale,
                "seed": r.meta.seed,
                "workload": r.meta.workload,
                "cluster": r.meta.cluster,
                "certificate": c,
            }))
        })
        .collect();
    (!list.is_empty()).then_some(serde_json::Value::Array(list))
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// `failures.csv`: one row per failed run, with the error.
fn write_failures(mut w: impl Write, failures: &[ReplayFailure]) -> std::io::Result<()> {
    writeln!(w, "policy,load_scale,seed,workload,cluster,exit,error")?;
    for f in failures {
        let exit = if f.error.is_input() { 2 } else { 1 };
        writeln!(
            w,
            "{},{},{},{},{},{exit},{}",
            csv_field(&f.meta.policy),
            f.meta.load_scale,
            f.meta.seed,
            csv_field(&f.meta.workload),
            csv_field(&f.meta.cluster),
            csv_field(&f.error.message())
        )?;
    }
    w.flush()
}

/// Mean over seeds of `metric` for every (policy, load scale); runs whose
/// metric is not finite (an average JCT with no job done) are left out.
fn mean_by_load(
    runs: &[ReplayRun],
    metric: impl Fn(&RunSummary) -> f64,
) -> Vec<(String, f64, f64)> {
    let mut points: Vec<(String, f64, f64, usize)> = Vec::new();
    for r in runs {
        let v = metric(&r.summary);
        if !v.is_finite() {
            continue;
        }
        let key = (&r.meta.policy, r.meta.load_scale);
        match points.iter_mut().find(|p| (&p.0, p.1) == key) {
            Some(p) => {
                p.2 += v;
                p.3 += 1;
            }
            None => points.push((r.meta.policy.clone(), r.meta.load_scale, v, 1)),
        }
    }
    points
        .into_iter()
        .map(|(p, s, sum, n)| (p, s, sum / n as f64))
        .collect()
}
