//! The SMD-style scheduler's continuous form (`solve_continuous`): known
//! answers, concave pieces against a grid, typed errors. The epoch
//! program's internals (candidate generation, wait charges, the knapsack
//! LP and its rounding, the outer selection) are tested by the library's
//! unit tests (`src/algorithms/smd/tests_internal.rs`).

mod continuous_form {
    use dmlsched::algorithms::smd::SmdError;
    use dmlsched::algorithms::smd::continuous::*;

    #[test]
    fn linear_known_answer() {
        // θ_i(x) = x, V = (1, 4), C = 3, x_min = 0.01: x* ∝ √V = (1, 2),
        // F* = (Σ √V_i)² / C = 3.
        let jobs = [
            ContinuousJob::linear(1.0, 1.0, 0.01),
            ContinuousJob::linear(4.0, 1.0, 0.01),
        ];
        let mut opts = ContinuousOptions::default();
        opts.epsilon = 1e-3;
        opts.max_iterations = 2000;
        let s = solve_continuous(&jobs, 3.0, &opts).unwrap();
        assert!(s.gap <= 1e-3 * s.objective);
        assert!((s.allocation[0] - 1.0).abs() <= 1e-2, "{:?}", s.allocation);
        assert!((s.allocation[1] - 2.0).abs() <= 1e-2, "{:?}", s.allocation);
        assert!((s.objective - 3.0).abs() <= 3e-3);
        for w in s.history.windows(2) {
            assert!(w[1].0 <= w[0].0 + 1e-12, "F rose: {:?}", s.history);
        }
        for &(f, g) in &s.history {
            assert!(f - g <= 3.0 + 1e-9, "bound {} above F*", f - g);
        }
        assert!(s.allocation.iter().sum::<f64>() <= 3.0 + 1e-9);
    }

    /// Concave two-piece throughputs against a fine grid.
    #[test]
    fn concave_pieces_against_a_grid() {
        let job = |v: f64, s1: f64, s2: f64| ContinuousJob {
            work: v,
            x_min: 0.1,
            theta_min: 0.1 * s1,
            segments: vec![(1.0, s1), (f64::INFINITY, s2)],
        };
        let jobs = [job(3.0, 2.0, 0.5), job(5.0, 1.0, 0.8), job(1.0, 4.0, 0.1)];
        let c = 4.0;
        let s = solve_continuous(&jobs, c, &ContinuousOptions::default()).unwrap();
        // Grid over the simplex (step 0.005).
        let mut best = f64::INFINITY;
        let n = 760;
        for a in 0..=n {
            for b in 0..=(n - a) {
                let (x0, x1) = (0.1 + a as f64 * 0.005, 0.1 + b as f64 * 0.005);
                let x2 = c - x0 - x1;
                if x2 < 0.1 {
                    continue;
                }
                let f: f64 = [x0, x1, x2]
                    .iter()
                    .zip(&jobs)
                    .map(|(x, j)| j.work / j.theta(*x))
                    .sum();
                best = best.min(f);
            }
        }
        assert!(s.lower_bound <= best + 1e-9, "{} > {best}", s.lower_bound);
        assert!(
            s.objective <= best * (1.0 + 1e-3),
            "{} vs {best}",
            s.objective
        );
        for (j, (x, t)) in jobs.iter().zip(s.allocation.iter().zip(&s.throughput)) {
            assert!(*t <= j.theta(*x) + 1e-12);
        }
    }

    #[test]
    fn invalid_inputs_are_typed() {
        let ok = ContinuousJob::linear(1.0, 1.0, 0.5);
        let o = ContinuousOptions::default();
        let bad_jobs = [
            ContinuousJob::linear(f64::NAN, 1.0, 0.5),
            ContinuousJob::linear(1.0, 1.0, 0.0),
            ContinuousJob {
                segments: vec![(1.0, 1.0), (1.0, 2.0)],
                ..ok.clone()
            },
        ];
        for j in bad_jobs {
            assert!(matches!(
                solve_continuous(&[j], 1.0, &o),
                Err(SmdError::InvalidInput { .. })
            ));
        }
        assert!(solve_continuous(&[], 1.0, &o).is_err());
        assert!(solve_continuous(&[ok.clone(), ok.clone()], 0.9, &o).is_err());
        assert!(solve_continuous(std::slice::from_ref(&ok), f64::INFINITY, &o).is_err());
        let mut eps = o;
        eps.epsilon = f64::NAN;
        assert!(matches!(
            solve_continuous(&[ok], 1.0, &eps),
            Err(SmdError::InvalidOption { .. })
        ));
    }
}
