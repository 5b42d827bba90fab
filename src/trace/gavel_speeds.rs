//! Per-GPU-type speeds of trace rows from Gavel's measured throughputs
//! ([`assign_gavel_speeds`]): what a replay on a cluster of several GPU
//! types needs.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::gavel_rates::{Converted, GavelConversion, GavelThroughputs, SkipCause, SkippedRow};
use super::{TraceError, TraceJob, gavel_job_type};

/// The stream of a row's job-type draw is `JOB_TYPE_STREAM + row index`:
/// apart from the recipe's own streams (the row index), so that drawing a
/// job type never moves the recipe's draws for the same seed.
const JOB_TYPE_STREAM: u64 = 1 << 63;

/// Gives every row a compute speed on each GPU type of `types`, relative to
/// its duration on `conv.gpu` (the reference kind, speed 1), from Gavel's
/// measured throughputs:
///
/// - **The rates compared.** A job that fits one machine (`num_gpus ≤
///   conv.gpus_per_machine`) is compared at the `<type>` rates, a larger
///   one at `<type>_unconsolidated` (measured with the workers spread over
///   machines): the speed on type `t` is `rate(t) / rate(conv.gpu)` for the
///   job's Gavel job type at its scale factor. How a placement spreads a
///   job further is the timing model's to charge, as on a cluster of one
///   type.
/// - **The job type.** A row whose [`gavel_job_type`] is measured in the
///   table (Gavel's traces) keeps it, at its own GPU count; a row without
///   one (Philly, ITP, Tiresias, Alibaba) gets one drawn uniformly among
///   the job types measured on the reference kind and every type of
///   `types`, at the largest scale factor of the table that is at most its
///   GPU count (8 for a 16-GPU row, 2 for a 3-GPU one). The draw is
///   seeded (`seed`, ChaCha8 stream 2⁶³ + the row's index), written to the
///   row's `model` and `batch_size`, and marked
///   [`model_is_synthetic`](TraceJob::model_is_synthetic).
/// - **Rows left out.** A Gavel row whose job type has no rate on one of
///   the kinds compared (Gavel has none for ResNet-50 with batch 64 or 128
///   on several K80s) cannot be timed there and is listed in
///   [`Converted::skipped`]; the others keep their order. Durations are
///   not touched.
///
/// ```
/// use dmlsched::trace::{GavelConversion, GavelThroughputs, TraceJob, assign_gavel_speeds};
///
/// let mut t = GavelThroughputs::new();
/// t.insert("v100", "LM (batch size 20)", 1, 10.0)?;
/// t.insert("k80", "LM (batch size 20)", 1, 2.5)?;
/// let mut row = TraceJob::new("a", 0.0, 1);
/// row.duration_s = Some(600.0); // on a V100
/// let out = assign_gavel_speeds(&[row], &t, &GavelConversion::default(), &["v100", "k80"], 0)?;
/// let job = &out.jobs[0];
/// assert_eq!(job.model.as_deref(), Some("LM")); // the table's one job type
/// assert_eq!(job.batch_size, Some(20));
/// assert_eq!(job.gpu_speeds["v100"], 1.0);
/// assert_eq!(job.gpu_speeds["k80"], 0.25); // 2,400 s on a K80
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] when `conv.gpus_per_machine` is 0, or
/// the table has no rate at all for the reference kind or a type of
/// `types` (naming the kinds it has).
pub fn assign_gavel_speeds(
    rows: &[TraceJob],
    rates: &GavelThroughputs,
    conv: &GavelConversion,
    types: &[&str],
    seed: u64,
) -> Result<Converted, TraceError> {
    if conv.gpus_per_machine == 0 {
        return Err(TraceError::invalid("gpus_per_machine", "must be ≥ 1"));
    }
    if let Some(kind) = std::iter::once(conv.gpu.as_str())
        .chain(types.iter().copied())
        .find(|k| rates.entries(k) == 0)
    {
        return Err(TraceError::invalid(
            "Gavel GPU kind",
            format!(
                "the throughput table has no `{kind}` rates (it has: {})",
                rates.gpu_kinds().join(", ")
            ),
        ));
    }
    let mut out = Converted::default();
    for (index, row) in rows.iter().enumerate() {
        let compared = Compared::new(conv, types, row.num_gpus);
        match speeds_of(row, index, rates, &compared, seed) {
            Ok(job) => out.jobs.push(job),
            Err(cause) => out.skipped.push(SkippedRow {
                index,
                line: None,
                id: row.id.clone(),
                cause,
            }),
        }
    }
    Ok(out)
}

/// The table kinds a row's rates come from: the reference first, then each
/// cluster type, consolidated or not by whether the row fits one machine.
struct Compared<'a> {
    /// `(cluster type, table kind)`; the reference's type is `None`.
    kinds: Vec<(Option<&'a str>, String)>,
}

impl<'a> Compared<'a> {
    fn new(conv: &'a GavelConversion, types: &[&'a str], num_gpus: u32) -> Compared<'a> {
        let kind = |t: &str| {
            if num_gpus <= conv.gpus_per_machine {
                t.to_string()
            } else {
                format!("{t}_unconsolidated")
            }
        };
        let mut kinds = vec![(None, kind(&conv.gpu))];
        kinds.extend(types.iter().map(|&t| (Some(t), kind(t))));
        Compared { kinds }
    }

    /// Every kind's rate for `(job_type, scale)`, or the first kind
    /// without one.
    fn rates(
        &self,
        table: &GavelThroughputs,
        job_type: &str,
        scale: u32,
    ) -> Result<Vec<f64>, SkipCause> {
        self.kinds
            .iter()
            .map(|(_, k)| {
                table
                    .rate(k, job_type, scale)
                    .ok_or_else(|| SkipCause::NoMeasuredRate {
                        gpu: k.clone(),
                        job_type: job_type.to_string(),
                        scale_factor: scale,
                    })
            })
            .collect()
    }
}

/// The row with its speeds (and, when drawn, its job type), or why it has
/// none.
fn speeds_of(
    row: &TraceJob,
    index: usize,
    table: &GavelThroughputs,
    compared: &Compared<'_>,
    seed: u64,
) -> Result<TraceJob, SkipCause> {
    let reference = &compared.kinds[0].1;
    let own =
        gavel_job_type(row).filter(|t| table.job_types(reference).iter().any(|(jt, _)| jt == t));
    let mut job = row.clone();
    let (job_type, scale) = match own {
        Some(t) => (t, row.num_gpus),
        None => {
            let (t, scale) = draw_job_type(row.num_gpus, index, table, compared, seed)?;
            let (model, batch) = split_job_type(&t);
            job.model = Some(model);
            job.batch_size = batch;
            job.model_is_synthetic = true;
            (t, scale)
        }
    };
    let rates = compared.rates(table, &job_type, scale)?;
    job.gpu_speeds = compared.kinds[1..]
        .iter()
        .zip(&rates[1..])
        .filter_map(|((t, _), r)| t.map(|t| (t.to_string(), r / rates[0])))
        .collect();
    Ok(job)
}

/// A job type drawn for a row of `num_gpus` GPUs: uniform among those
/// measured on every compared kind at the largest scale factor of the
/// reference kind's entries that is at most `num_gpus` (or, when none is
/// measured there, the next smaller scale).
fn draw_job_type(
    num_gpus: u32,
    index: usize,
    table: &GavelThroughputs,
    compared: &Compared<'_>,
    seed: u64,
) -> Result<(String, u32), SkipCause> {
    let reference = table.job_types(&compared.kinds[0].1);
    let mut scales: Vec<u32> = reference.iter().map(|e| e.1).collect();
    scales.sort_unstable();
    scales.dedup();
    for &scale in scales.iter().rev().filter(|&&s| s <= num_gpus.max(1)) {
        let candidates: Vec<&str> = reference
            .iter()
            .filter(|(t, s)| *s == scale && compared.rates(table, t, scale).is_ok())
            .map(|e| e.0)
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(JOB_TYPE_STREAM + index as u64);
        let pick = rng.random_range(0..candidates.len());
        return Ok((candidates[pick].to_string(), scale));
    }
    Err(SkipCause::NoMeasuredRate {
        gpu: compared.kinds[0].1.clone(),
        job_type: "any job type".into(),
        scale_factor: num_gpus,
    })
}

/// `"ResNet-50 (batch size 64)"` → `("ResNet-50", Some(64))`; a job type
/// without a batch size is the model alone.
fn split_job_type(job_type: &str) -> (String, Option<u32>) {
    job_type
        .strip_suffix(')')
        .and_then(|s| s.rsplit_once(" (batch size "))
        .and_then(|(m, b)| Some((m.to_string(), Some(b.parse().ok()?))))
        .unwrap_or_else(|| (job_type.to_string(), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> GavelThroughputs {
        let mut t = GavelThroughputs::new();
        for (kind, jt, scale, rate) in [
            ("v100", "A3C", 1, 8.0),
            ("k80", "A3C", 1, 2.0),
            ("v100", "ResNet-50 (batch size 64)", 1, 4.0),
            ("k80", "ResNet-50 (batch size 64)", 1, 1.0),
            ("v100", "ResNet-50 (batch size 64)", 2, 8.0),
            ("v100_unconsolidated", "ResNet-50 (batch size 64)", 2, 6.0),
            ("k80", "ResNet-50 (batch size 64)", 2, 3.0),
            ("v100", "LM (batch size 20)", 2, 10.0),
            ("k80", "LM (batch size 20)", 2, 4.0),
            ("v100_unconsolidated", "LM (batch size 20)", 2, 5.0),
            ("k80_unconsolidated", "LM (batch size 20)", 2, 1.0),
        ] {
            t.insert(kind, jt, scale, rate).unwrap();
        }
        t
    }

    fn gavel_row(id: &str, gpus: u32, model: &str, batch: Option<u32>) -> TraceJob {
        let mut r = TraceJob::new(id, 0.0, gpus);
        r.model = Some(model.into());
        r.batch_size = batch;
        r.duration_s = Some(100.0);
        r
    }

    #[test]
    fn gavel_rows_keep_their_type_and_compare_by_consolidation() {
        let t = table();
        let one = GavelConversion {
            gpu: "v100".into(),
            gpus_per_machine: 1,
        };
        let rows = [
            gavel_row("a", 1, "A3C", None),
            gavel_row("lm", 2, "LM", Some(20)),
            // No k80_unconsolidated rate for ResNet-50 on 2 GPUs.
            gavel_row("r", 2, "ResNet-50", Some(64)),
        ];
        let out = assign_gavel_speeds(&rows, &t, &one, &["v100", "k80"], 0).unwrap();
        assert_eq!(out.jobs.len(), 2);
        assert_eq!(out.jobs[0].gpu_speeds["k80"], 0.25);
        assert!(!out.jobs[0].model_is_synthetic);
        // Spread over 1-GPU machines: 1.0 / 5.0 on the unconsolidated rates.
        assert_eq!(out.jobs[1].gpu_speeds["k80"], 0.2);
        assert_eq!(out.jobs[1].gpu_speeds["v100"], 1.0);
        assert_eq!(out.skipped[0].index, 2);
        assert_eq!(
            out.skipped[0].cause,
            SkipCause::NoMeasuredRate {
                gpu: "k80_unconsolidated".into(),
                job_type: "ResNet-50 (batch size 64)".into(),
                scale_factor: 2
            }
        );
        // On 2-GPU machines the same rows fit one machine.
        let two = GavelConversion {
            gpus_per_machine: 2,
            ..one
        };
        let out = assign_gavel_speeds(&rows, &t, &two, &["v100", "k80"], 0).unwrap();
        assert_eq!(out.jobs.len(), 3);
        assert_eq!(out.jobs[1].gpu_speeds["k80"], 0.4);
        assert_eq!(out.jobs[2].gpu_speeds["k80"], 3.0 / 8.0);
    }

    #[test]
    fn rows_without_a_type_draw_one_measured_everywhere() {
        let t = table();
        let conv = GavelConversion {
            gpu: "v100".into(),
            gpus_per_machine: 8,
        };
        let rows: Vec<TraceJob> = (0..40)
            .map(|i| {
                let mut r = TraceJob::new(format!("p{i}"), 0.0, [1, 3, 16][i % 3]);
                r.duration_s = Some(60.0);
                r
            })
            .collect();
        let out = assign_gavel_speeds(&rows, &t, &conv, &["k80"], 7).unwrap();
        assert!(out.skipped.is_empty());
        let mut seen = std::collections::BTreeSet::new();
        for (row, job) in rows.iter().zip(&out.jobs) {
            assert!(job.model_is_synthetic);
            let jt = gavel_job_type(job).unwrap();
            // 3 and 16 GPUs are compared at scale 2, with the consolidated
            // (3 ≤ 8) or unconsolidated (16 > 8) rates.
            let scale = if row.num_gpus == 1 { 1 } else { 2 };
            let suffix = if row.num_gpus > 8 {
                "_unconsolidated"
            } else {
                ""
            };
            let k80 = t.rate(&format!("k80{suffix}"), &jt, scale).unwrap();
            let v100 = t.rate(&format!("v100{suffix}"), &jt, scale).unwrap();
            assert_eq!(job.gpu_speeds["k80"], k80 / v100, "{jt}");
            assert_eq!(job.gpu_speeds.len(), 1);
            seen.insert((row.num_gpus, jt));
        }
        // Both 1-GPU types and both 2-GPU types of the table are drawn,
        // ResNet-50 never for 16 GPUs (no unconsolidated K80 rate).
        assert!(seen.contains(&(1, "A3C".into())));
        assert!(seen.contains(&(1, "ResNet-50 (batch size 64)".into())));
        assert!(seen.contains(&(3, "ResNet-50 (batch size 64)".into())));
        assert!(!seen.contains(&(16, "ResNet-50 (batch size 64)".into())));
        // Seeded: the same seed draws the same types, another seed others.
        let again = assign_gavel_speeds(&rows, &t, &conv, &["k80"], 7).unwrap();
        assert_eq!(again, out);
        let other = assign_gavel_speeds(&rows, &t, &conv, &["k80"], 8).unwrap();
        assert_ne!(other.jobs, out.jobs);
    }

    #[test]
    fn errors_and_job_type_names() {
        let t = table();
        let conv = GavelConversion::default();
        let e = assign_gavel_speeds(&[], &t, &conv, &["a100"], 0).unwrap_err();
        assert!(e.to_string().contains("`a100`"), "{e}");
        let zero = GavelConversion {
            gpus_per_machine: 0,
            ..conv
        };
        assert!(assign_gavel_speeds(&[], &t, &zero, &["k80"], 0).is_err());
        assert_eq!(
            split_job_type("ResNet-50 (batch size 64)"),
            ("ResNet-50".into(), Some(64))
        );
        assert_eq!(split_job_type("A3C"), ("A3C".into(), None));
        assert_eq!(
            split_job_type("X (batch size y)"),
            ("X (batch size y)".into(), None)
        );
    }
}
