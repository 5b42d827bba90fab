//! Portable shuffles, hold-out splits and k-fold cross-validation.

use super::{CalibrateError, Calibration, Sample, evaluate};
use crate::pcip::{trial_rng, uniform};

/// The indices `0..n` in a seeded random order: a Fisher–Yates pass
/// (`i` from `n − 1` down to 1, swap `i` with `⌊U·(i+1)⌋`) with the crate's
/// portable uniform `U = (next_u64 >> 11)·2⁻⁵³` on stream 0 of
/// `ChaCha8Rng::seed_from_u64(seed)`. The same seed gives the same order on
/// every platform.
///
/// ```
/// use dmlsched::calibrate::shuffled_indices;
/// let order = shuffled_indices(6, 42);
/// assert_eq!(order, shuffled_indices(6, 42));
/// let mut sorted = order.clone();
/// sorted.sort();
/// assert_eq!(sorted, vec![0, 1, 2, 3, 4, 5]);
/// ```
pub fn shuffled_indices(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = trial_rng(seed, 0);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = ((uniform(&mut rng) * (i + 1) as f64) as usize).min(i);
        order.swap(i, j);
    }
    order
}

/// A `(train, test)` split of samples.
pub type TrainTest<C> = (Vec<Sample<C>>, Vec<Sample<C>>);

/// Splits `samples` into `(train, test)`: the first
/// `round(fraction·n)` (clamped to `1..=n−1`) indices of
/// [`shuffled_indices`] are the test part; both parts keep the samples'
/// original order.
///
/// # Errors
///
/// [`CalibrateError::BadOption`] if `fraction` is not in `(0, 1)` or there
/// are fewer than 2 samples.
///
/// ```
/// use dmlsched::calibrate::{Sample, split_holdout};
///
/// let samples: Vec<Sample<u32>> = (0..10).map(|i| Sample::new(i, 1.0 + f64::from(i))).collect();
/// let (train, test) = split_holdout(&samples, 0.2, 7)?;
/// assert_eq!((train.len(), test.len()), (8, 2));
/// // Each part keeps the samples' order, and every sample is in one part.
/// assert!(train.windows(2).all(|w| w[0].config < w[1].config));
/// let mut all: Vec<u32> = train.iter().chain(&test).map(|s| s.config).collect();
/// all.sort();
/// assert_eq!(all, (0..10).collect::<Vec<_>>());
/// assert_eq!(split_holdout(&samples, 0.2, 7)?, (train, test)); // the same seed, the same split
/// assert!(split_holdout(&samples, 1.0, 7).is_err());
/// # Ok::<(), dmlsched::calibrate::CalibrateError>(())
/// ```
pub fn split_holdout<C: Clone>(
    samples: &[Sample<C>],
    fraction: f64,
    seed: u64,
) -> Result<TrainTest<C>, CalibrateError> {
    let n = samples.len();
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(CalibrateError::BadOption {
            option: "holdout fraction",
            reason: format!("must be in (0, 1), got {fraction}"),
        });
    }
    if n < 2 {
        return Err(CalibrateError::BadOption {
            option: "holdout fraction",
            reason: format!("a hold-out split needs at least 2 samples, got {n}"),
        });
    }
    let n_test = ((fraction * n as f64).round() as usize).clamp(1, n - 1);
    let mut is_test = vec![false; n];
    for &i in &shuffled_indices(n, seed)[..n_test] {
        is_test[i] = true;
    }
    let pick = |test: bool| {
        samples
            .iter()
            .zip(&is_test)
            .filter(|(_, t)| **t == test)
            .map(|(s, _)| s.clone())
            .collect()
    };
    Ok((pick(false), pick(true)))
}

/// The fold (`0..k`) of every sample index `0..n`: position `i` of
/// [`shuffled_indices`] goes to fold `i mod k`, so fold sizes differ by at
/// most one.
///
/// # Errors
///
/// [`CalibrateError::BadOption`] unless `2 ≤ k ≤ n`.
///
/// ```
/// use dmlsched::calibrate::k_fold;
/// let folds = k_fold(10, 5, 3)?;
/// assert_eq!(folds.len(), 10);
/// assert!((0..5).all(|f| folds.iter().filter(|&&x| x == f).count() == 2));
/// # Ok::<(), dmlsched::calibrate::CalibrateError>(())
/// ```
pub fn k_fold(n: usize, k: usize, seed: u64) -> Result<Vec<usize>, CalibrateError> {
    if k < 2 || k > n {
        return Err(CalibrateError::BadOption {
            option: "folds",
            reason: format!("need 2 ≤ k ≤ n, got k = {k} for n = {n} samples"),
        });
    }
    let mut fold = vec![0; n];
    for (pos, &i) in shuffled_indices(n, seed).iter().enumerate() {
        fold[i] = pos % k;
    }
    Ok(fold)
}

/// The result of k-fold cross-validation: per fold, the model fitted on
/// the other folds and evaluated on this one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CvReport {
    /// Held-out MAPE of every fold, percent.
    pub fold_mape_pct: Vec<f64>,
    /// Mean of the fold MAPEs, percent.
    pub mean_mape_pct: f64,
    /// Largest fold MAPE, percent.
    pub max_fold_mape_pct: f64,
    /// Mean held-out `R²` over the folds that have one (`None` if none
    /// does: every fold's measurements are all equal).
    pub mean_r2: Option<f64>,
}

/// k-fold cross-validation of a [`Calibration`] on `samples`, folds from
/// [`k_fold`].
///
/// # Errors
///
/// As [`k_fold`]; [`CalibrateError::EmptyFold`] if a training part has
/// fewer than `q + 1` samples; any error of the fit or the evaluation of a
/// fold.
///
/// # Complexity
///
/// `k` fits on about `n(k−1)/k` samples each.
///
/// ```
/// use dmlsched::calibrate::{FitOptions, Linear, cross_validate, synthetic};
///
/// let samples = synthetic::rar_c_samples(100, 0.05, 11)?;
/// let fit = Linear::new(synthetic::rar_c_template(), FitOptions::default());
/// let cv = cross_validate(&fit, &samples, 5, 0)?;
/// assert_eq!(cv.fold_mape_pct.len(), 5);
/// // With 5% log-normal noise, the held-out error is about 0.8 × 5%.
/// assert!(cv.mean_mape_pct < 6.0);
/// assert!(cv.max_fold_mape_pct >= cv.mean_mape_pct);
/// assert!(cross_validate(&fit, &samples, 1, 0).is_err()); // at least 2 folds
/// # Ok::<(), dmlsched::calibrate::CalibrateError>(())
/// ```
pub fn cross_validate<K: Calibration>(
    calibration: &K,
    samples: &[Sample<K::Config>],
    k: usize,
    seed: u64,
) -> Result<CvReport, CalibrateError> {
    let folds = k_fold(samples.len(), k, seed)?;
    let needed = calibration.num_params() + 1;
    let mut fold_mape_pct = Vec::with_capacity(k);
    let mut r2s = Vec::new();
    for f in 0..k {
        let part = |inside: bool| -> Vec<Sample<K::Config>> {
            samples
                .iter()
                .zip(&folds)
                .filter(|(_, g)| (**g == f) == inside)
                .map(|(s, _)| s.clone())
                .collect()
        };
        let (train, test) = (part(false), part(true));
        if train.len() < needed {
            return Err(CalibrateError::EmptyFold {
                fold: f,
                train: train.len(),
                needed,
            });
        }
        let (model, _) = calibration.fit(&train)?;
        let acc = evaluate(&model, &test)?;
        fold_mape_pct.push(acc.mape_pct);
        r2s.extend(acc.r2);
    }
    let mean_mape_pct = fold_mape_pct.iter().sum::<f64>() / k as f64;
    let max_fold_mape_pct = fold_mape_pct.iter().copied().fold(0.0, f64::max);
    let mean_r2 = (!r2s.is_empty()).then(|| r2s.iter().sum::<f64>() / r2s.len() as f64);
    Ok(CvReport {
        fold_mape_pct,
        mean_mape_pct,
        max_fold_mape_pct,
        mean_r2,
    })
}
