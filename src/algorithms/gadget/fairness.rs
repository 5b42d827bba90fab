//! Jain's fairness index, over jobs or tenants.

/// Jain's fairness index `J(x) = (Σ x)² / (n·Σ x²)` of non-negative
/// values: 1 when all are equal, `1/n` when one holds everything. `None`
/// for no values or when all are 0 (undefined).
///
/// ```
/// use dmlsched::algorithms::gadget::jain_index;
/// assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
/// assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
/// assert!((jain_index(&[1.0, 0.5]).unwrap() - 0.9).abs() < 1e-12);
/// assert_eq!(jain_index(&[0.0, 0.0]), None);
/// ```
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}
