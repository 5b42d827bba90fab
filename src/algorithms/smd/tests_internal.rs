//! Unit tests of the epoch program's internals (candidate generation, wait
//! charges, the knapsack program, its LP, rounding and bound, the plan
//! evaluator and the outer selection), moved here from `tests/smd.rs`,
//! `tests/robust_smd.rs` and `tests/smd_sim.rs` when these items became
//! crate-private; plus the rounding example of the module docs and the
//! wait-charge example, formerly doctests.

/// The known answers, the LP and rounding properties on random programs,
/// pruning and typed errors (from `tests/smd.rs`).
mod program {
    use super::super::problem::{EpochOption, EpochProblem, Group, WaitJob, wait_charges};
    use super::super::select::{evaluate_plan, select};
    use super::super::solve::solve_mcmdk;
    use super::super::*;
    use crate::model::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    /// The three-layer parameter-server job of the hand-computed timing table:
    /// 62 500 mini-batches in one chunk of one epoch, layers of (forward ms,
    /// backward ms, MB) = (3, 6, 2), (3, 6, 4), (4, 8, 8); a worker holds 1 GPU
    /// and 2 cores, a PS 4 cores, and each has a NIC of `bw` B/s.
    fn layered_table_job(
        bw: f64,
        max_workers: u32,
        max_ps: u32,
        ps_at_most_workers: bool,
    ) -> crate::model::PsJob {
        use crate::model::{Layer, PsJob, Resources, SyncMode};
        let layer = |f: f64, g: f64, mb: f64| Layer {
            forward_s: f * 1e-3,
            backward_s: g * 1e-3,
            bytes: mb * 1e6,
            update_s: 0.0,
        };
        PsJob {
            epochs: 1,
            data_chunks: 1,
            minibatches_per_chunk: 62_500,
            worker: Resources::zero().gpus(1.0).cpu_cores(2.0).nic(bw),
            ps: Resources::zero().cpu_cores(4.0).nic(bw),
            max_workers,
            max_ps,
            ps_at_most_workers,
            sync: SyncMode::Synchronous,
            layers: Some(vec![
                layer(3.0, 6.0, 2.0),
                layer(3.0, 6.0, 4.0),
                layer(4.0, 8.0, 8.0),
            ]),
            ..PsJob::default()
        }
    }

    fn persisted(cases: u32) -> ProptestConfig {
        ProptestConfig {
            cases,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/smd.txt",
            ))),
            ..ProptestConfig::default()
        }
    }

    /// The three-layer job of the hand-computed table: B_w = B_s = `bw` B/s.
    fn table_job(bw: f64, max_workers: u32, max_ps: u32) -> Job {
        Job::new(
            JobId(0),
            0.0,
            layered_table_job(bw, max_workers, max_ps, false),
        )
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn candidates_reproduce_the_hand_computed_iteration_times() {
        let job = table_job(1e9, 8, 4);
        let cap = Resources::zero().gpus(8.0).cpu_cores(1e3).nic(1e12);
        let params = SmdParams {
            pw_rule: false,
            ..SmdParams::default()
        };
        // 2·10⁶ samples at 32 per worker mini-batch = 62 500 mini-batches.
        let c = candidates(&job, 62_500.0, &cap, &cap, &params).unwrap();
        assert_eq!(c.len(), 8 * 4);
        let table = [
            ((1, 1), 40.0, 800.0, 2500.0),
            ((1, 2), 40.0, 800.0, 2500.0),
            ((2, 1), 62.0, 1032.258, 1937.5),
            ((2, 2), 40.0, 1600.0, 1250.0),
            ((3, 1), 84.0, 1142.857, 1750.0),
            ((3, 2), 51.0, 1882.353, 1062.5),
            ((3, 3), 40.0, 2400.0, 833.333),
            ((4, 1), 106.0, 1207.547, 1656.25),
            ((4, 2), 62.0, 2064.516, 968.75),
            ((4, 4), 40.0, 3200.0, 625.0),
            ((8, 2), 106.0, 2415.094, 828.125),
        ];
        for (config, tau_ms, theta, rho) in table {
            let k = c.iter().find(|k| k.config == config).unwrap();
            assert!(close(k.iteration_s, tau_ms * 1e-3, 1e-12), "{config:?}");
            // Samples per second: 32 per worker mini-batch (table rounded to 3 decimals).
            assert!((32.0 * k.throughput - theta).abs() < 1e-3, "{config:?}");
            assert!((k.remaining_s - rho).abs() < 1e-3, "{config:?}");
            assert!(close(
                k.remaining_s,
                62_500.0 * tau_ms * 1e-3 / f64::from(config.0),
                1e-12
            ));
            assert!(k.fits_free);
        }
        // Fast network: 4 GB/s, (1, 1) → τ = 31 ms.
        let fast = candidates(&table_job(4e9, 1, 1), 1.0, &cap, &cap, &params).unwrap();
        assert!(close(fast[0].iteration_s, 0.031, 1e-12));
        // The PS rule drops p > w; a small free capacity marks what fits it.
        let ruled = candidates(&job, 1.0, &cap, &cap, &SmdParams::default()).unwrap();
        assert!(ruled.iter().all(|k| k.config.1 <= k.config.0));
        let small = Resources::zero().gpus(2.0).cpu_cores(8.0).nic(1e12);
        let c = candidates(&job, 1.0, &small, &cap, &params).unwrap();
        for k in &c {
            let (w, p) = k.config;
            assert_eq!(k.fits_free, w <= 2 && 2 * w + 4 * p <= 8, "{:?}", k.config);
        }
        // Powers of two only.
        let mut pow = params;
        pow.powers_of_two = true;
        let c = candidates(&job, 1.0, &cap, &cap, &pow).unwrap();
        let ws: std::collections::BTreeSet<u32> = c.iter().map(|k| k.config.0).collect();
        assert_eq!(ws.into_iter().collect::<Vec<_>>(), vec![1, 2, 4, 8]);
    }

    #[test]
    fn wait_charges_hand_example() {
        let a = WaitJob {
            job: JobId(0),
            arrival_s: 0.0,
            best_time_s: 4.0,
            best_share: 1.0,
            smallest_time_s: 10.0,
            reconfiguration_s: 0.0,
        };
        let b = WaitJob {
            job: JobId(1),
            best_time_s: 3.0,
            smallest_time_s: 8.0,
            ..a
        };
        let q = wait_charges(
            &[a, b],
            WaitCharge::Queue {
                share_weighted: true,
            },
        )
        .unwrap();
        assert_eq!(q, vec![13.0, 8.0]);
        let next = wait_charges(&[a, b], WaitCharge::NextEpoch { horizon_s: 1.0 }).unwrap();
        assert_eq!(next, vec![11.0, 9.0]);
        let par = wait_charges(&[a, b], WaitCharge::Parametric { beta: 1.5 }).unwrap();
        assert_eq!(par, vec![15.0, 12.0]);
        // Unweighted queue with half shares, and o added.
        let (a2, b2) = (
            WaitJob {
                best_share: 0.5,
                reconfiguration_s: 2.0,
                ..a
            },
            WaitJob {
                best_share: 0.5,
                ..b
            },
        );
        let w = wait_charges(
            &[a2, b2],
            WaitCharge::Queue {
                share_weighted: true,
            },
        )
        .unwrap();
        assert_eq!(w, vec![1.5 + 10.0 + 2.0, 8.0]);
        let u = wait_charges(
            &[a2, b2],
            WaitCharge::Queue {
                share_weighted: false,
            },
        )
        .unwrap();
        assert_eq!(u, vec![3.0 + 10.0 + 2.0, 8.0]);
        assert!(wait_charges(&[a], WaitCharge::Parametric { beta: 0.5 }).is_err());
        let nan = WaitJob {
            best_time_s: f64::NAN,
            ..a
        };
        assert!(matches!(
            wait_charges(&[nan], WaitCharge::default()),
            Err(SmdError::InvalidInput { .. })
        ));
        // Two charges of f64::MAX each: one is a number, their sum is not,
        // and the epoch's bound adds them up (found by robust_smd).
        let huge = WaitCharge::NextEpoch {
            horizon_s: f64::MAX,
        };
        assert!(wait_charges(&[a], huge).is_ok());
        let e = wait_charges(&[a, b], huge).unwrap_err();
        assert!(
            matches!(
                e,
                SmdError::InvalidOption {
                    name: "wait_charge",
                    ..
                }
            ),
            "{e}"
        );
    }

    fn opt(config: (u32, u32), usage: Vec<f64>, cost: f64) -> EpochOption {
        EpochOption {
            config,
            usage,
            cost,
        }
    }

    fn gpus(g: u32, cost: f64) -> EpochOption {
        opt((g, 1), vec![f64::from(g)], cost)
    }

    /// KAT-M1: one GPU row, jobs A and B.
    fn kat_m1(cap: f64) -> EpochProblem {
        let a = Group::new(
            JobId(0),
            20.0,
            vec![gpus(1, 10.0), gpus(2, 6.0), gpus(4, 4.0)],
        );
        let b = Group::new(
            JobId(1),
            16.0,
            vec![gpus(1, 8.0), gpus(2, 5.0), gpus(4, 3.5)],
        );
        EpochProblem::new(vec![cap], vec![cap], vec![a, b]).unwrap()
    }

    /// KAT-M2: two rows, capacity (7, 5), three jobs.
    fn kat_m2() -> EpochProblem {
        let g0 = Group::new(
            JobId(0),
            19.0,
            vec![
                opt((1, 1), vec![4.0, 3.0], 7.0),
                opt((1, 2), vec![1.0, 3.0], 8.0),
            ],
        );
        let g1 = Group::new(
            JobId(1),
            15.0,
            vec![
                opt((1, 1), vec![1.0, 4.0], 10.0),
                opt((1, 2), vec![3.0, 2.0], 8.0),
            ],
        );
        let g2 = Group::new(
            JobId(2),
            15.0,
            vec![
                opt((1, 1), vec![3.0, 1.0], 8.0),
                opt((1, 2), vec![1.0, 2.0], 7.0),
            ],
        );
        EpochProblem::new(vec![7.0, 5.0], vec![7.0, 5.0], vec![g0, g1, g2]).unwrap()
    }

    #[test]
    fn greedy_known_answers() {
        let greedy = SmdParams {
            selection: Selection::Greedy,
            ..SmdParams::default()
        };
        // KAT-M1, capacity 5: B first (cheapest 3.5) takes 4 GPUs, A gets its
        // 1-GPU option: 3.5 + 10; the capacity-free bound is 4 + 3.5.
        let s = solve_mcmdk(&kat_m1(5.0), &[false, false], true, &greedy).unwrap();
        assert_eq!(s.plan, vec![Some(0), Some(2)]);
        assert_eq!((s.objective, s.trivial_bound), (13.5, 7.5));
        assert!(s.lp.is_none() && s.guarantee_value.is_none());
        // KAT-M2: order 0, 2, 1 gives the optimum 29 directly.
        let s = solve_mcmdk(&kat_m2(), &[false; 3], true, &greedy).unwrap();
        assert_eq!(s.plan, vec![Some(0), None, Some(1)]);
        assert_eq!(s.objective, 29.0);
        assert_eq!(brute_force(&kat_m2()), 29.0);
        assert_eq!(brute_force(&kat_m1(5.0)), 11.0);
    }

    #[test]
    fn plan_evaluator_and_outer_selection_hand_example() {
        // Jobs A (ρ = 10, 6, 4 s) and B (8, 5, 3 s) on 1, 2, 4 of 4 GPUs, queue
        // charges ω = (13, 8). B's 1-GPU option costs ω_B: kept (ties go to
        // running), it changes no optimum here.
        let a = Group::new(
            JobId(0),
            13.0,
            vec![gpus(1, 10.0), gpus(2, 6.0), gpus(4, 4.0)],
        );
        let b = Group::new(
            JobId(1),
            8.0,
            vec![gpus(1, 8.0), gpus(2, 5.0), gpus(4, 3.0)],
        );
        let p = EpochProblem::new(vec![4.0], vec![4.0], vec![a, b]).unwrap();
        assert_eq!(p.pruned(), 0);
        assert_eq!(p.srpt_order(), &[1, 0]);
        // Joint optimum A2 + B2 (cost 11): B ends at 5, A at 6.
        let joint = vec![Some(1), Some(1)];
        assert_eq!(p.cost(&joint), 11.0);
        assert_eq!(evaluate_plan(&p, &joint), 11.0);
        // Prefix(1): B on 4 GPUs ends at 3, then A on 4 GPUs ends at 7.
        let prefix = vec![None, Some(2)];
        assert_eq!(evaluate_plan(&p, &prefix), 10.0);
        // A waiting job never starts at 0: A on 2 GPUs, B waits though it fits
        // 2 GPUs; B starts at 6 on 4 GPUs and ends at 9.
        assert_eq!(evaluate_plan(&p, &[Some(1), None]), 6.0 + 9.0);
        // Nothing runs and nothing can start: +∞ only when a job never fits.
        assert_eq!(evaluate_plan(&p, &[None, None]), f64::INFINITY);
        let greedy = SmdParams {
            selection: Selection::Greedy,
            ..SmdParams::default()
        };
        let s = select(&p, &greedy).unwrap();
        assert_eq!(s.mode, PlanMode::Greedy);
        assert!(p.fits(&s.solution.plan));
        #[cfg(feature = "highs")]
        {
            let best = select(&p, &SmdParams::default()).unwrap();
            assert_eq!(best.mode, PlanMode::Prefix { q: 1 });
            assert_eq!(best.estimate_s, 10.0);
            assert_eq!(best.evaluated, 2);
            let j = SmdParams {
                selection: Selection::Joint,
                ..SmdParams::default()
            };
            let joint = select(&p, &j).unwrap();
            assert_eq!((joint.mode, joint.estimate_s), (PlanMode::Joint, 11.0));
            assert_eq!(joint.solution.objective, 11.0);
            // Prefix(n) is the joint plan.
            let pre = SmdParams {
                selection: Selection::Prefix,
                ..SmdParams::default()
            };
            let s = select(&p, &pre).unwrap();
            assert_eq!(s.mode, PlanMode::Prefix { q: 1 });
            let n = solve_mcmdk(&p, &[false, false], false, &pre).unwrap();
            assert_eq!(n.plan, joint.solution.plan);
        }
    }

    #[cfg(feature = "highs")]
    mod with_lp {
        use super::*;

        fn exact_always() -> SmdParams {
            SmdParams {
                exact: ExactMode::Always,
                ..SmdParams::default()
            }
        }

        #[test]
        fn kat_m1_lp_rounding_and_bound() {
            let p = kat_m1(5.0);
            let s = solve_mcmdk(&p, &[false, false], false, &exact_always()).unwrap();
            let lp = s.lp.as_ref().unwrap();
            assert!((lp.value - 10.0).abs() < 1e-7);
            assert_eq!(lp.fractional, vec![0]);
            assert!((lp.x[0][1] - 0.5).abs() < 1e-7 && (lp.x[0][2] - 0.5).abs() < 1e-7);
            assert!((lp.x[1][1] - 1.0).abs() < 1e-7);
            assert!((lp.prices[0] - 1.0).abs() < 1e-7);
            assert!((lp.safe_bound - 10.0).abs() < 1e-7);
            assert_eq!(s.plan, vec![Some(1), Some(1)]);
            assert_eq!(s.objective, 11.0);
            assert!((s.guarantee_value.unwrap() - 26.0).abs() < 1e-7);
            let ex = s.exact.as_ref().unwrap();
            assert_eq!(ex.optimum(), Some(11.0));
            for (cap, value) in [(4.0, 11.0), (3.0, 14.0)] {
                let p = kat_m1(cap);
                let s = solve_mcmdk(&p, &[false, false], false, &exact_always()).unwrap();
                let lp = s.lp.as_ref().unwrap();
                assert!((lp.value - value).abs() < 1e-7, "{cap}");
                assert!(lp.fractional.is_empty());
                assert_eq!(s.objective, value);
                assert_eq!(s.exact.as_ref().unwrap().optimum(), Some(value));
            }
            assert_eq!(
                solve_mcmdk(&kat_m1(3.0), &[false, false], false, &SmdParams::default())
                    .unwrap()
                    .plan,
                vec![Some(1), Some(0)]
            );
        }

        #[test]
        fn kat_m2_rounding_orders_and_improvement() {
            let p = kat_m2();
            let mut none = exact_always();
            none.improvement_passes = 0;
            let s = solve_mcmdk(&p, &[false; 3], false, &none).unwrap();
            let lp = s.lp.as_ref().unwrap();
            assert!((lp.value - 27.0).abs() < 1e-7);
            assert_eq!(lp.fractional, vec![0, 1]);
            assert_eq!(lp.tight_rows, 2);
            // Best of the two orders: job 0 takes option 0, job 1 waits.
            assert_eq!(s.plan, vec![Some(0), None, Some(0)]);
            assert_eq!(s.objective, 30.0);
            assert!((s.guarantee_value.unwrap() - 46.0).abs() < 1e-7);
            let s = solve_mcmdk(&p, &[false; 3], false, &exact_always()).unwrap();
            assert_eq!(s.plan, vec![Some(0), None, Some(1)]);
            assert_eq!(s.objective, 29.0);
            assert_eq!(s.exact.as_ref().unwrap().optimum(), Some(29.0));
            // Forced waits add their charge to everything.
            let f = solve_mcmdk(&p, &[false, true, false], false, &exact_always()).unwrap();
            assert_eq!(f.plan[1], None);
            let lp = f.lp.as_ref().unwrap();
            assert!(lp.value >= 15.0 && lp.safe_bound <= lp.value + 1e-7);
            assert!(f.exact.as_ref().unwrap().optimum().unwrap() <= f.objective + 1e-9);
        }
    }

    // ----------------------------------------------------------------------
    // Random programs.

    /// A random program of the family: `n` groups of 1..=5 options over `d`
    /// rows, integer demands 1..5, costs in [1, 10], wait = the group's
    /// largest cost + [1, 5], capacities 0.2–0.6 of the total demand / |K|.
    fn random_problem(
        d: usize,
        groups: Vec<Vec<(Vec<u8>, f64)>>,
        wait_extra: Vec<f64>,
        cap_frac: Vec<f64>,
    ) -> (EpochProblem, Vec<Group>) {
        let mut totals = vec![0.0; d];
        let mut count = 0.0;
        let gs: Vec<Group> = groups
            .iter()
            .enumerate()
            .map(|(i, opts)| {
                let options: Vec<EpochOption> = opts
                    .iter()
                    .enumerate()
                    .map(|(k, (u, c))| {
                        let usage: Vec<f64> = u.iter().take(d).map(|&a| f64::from(a)).collect();
                        for (t, a) in totals.iter_mut().zip(&usage) {
                            *t += a;
                        }
                        count += 1.0;
                        opt((k as u32 + 1, 1), usage, *c)
                    })
                    .collect();
                let max = options.iter().map(|o| o.cost).fold(0.0, f64::max);
                Group::new(JobId(i as u32), max + wait_extra[i], options)
            })
            .collect();
        let per_k = count / groups.len() as f64;
        let cap: Vec<f64> = totals
            .iter()
            .zip(&cap_frac)
            .map(|(t, f)| (t * f / per_k).max(0.0))
            .collect();
        (EpochProblem::new(cap.clone(), cap, gs.clone()).unwrap(), gs)
    }

    fn problem_strategy(max_n: usize) -> impl Strategy<Value = EpochProblem> {
        raw_strategy(max_n).prop_map(|(p, _)| p)
    }

    /// A random program and its groups before pruning.
    fn raw_strategy(max_n: usize) -> impl Strategy<Value = (EpochProblem, Vec<Group>)> {
        (1usize..=4, 2usize..=max_n).prop_flat_map(|(d, n)| {
            let option = (prop::collection::vec(1u8..=5, 4), 1.0f64..=10.0);
            (
                Just(d),
                prop::collection::vec(prop::collection::vec(option, 1..=5), n),
                prop::collection::vec(1.0f64..=5.0, n),
                prop::collection::vec(0.2f64..=0.6, d),
            )
                .prop_map(|(d, g, w, c)| random_problem(d, g, w, c))
        })
    }

    /// The library's relative tolerance of capacity rows (crate-private):
    /// usage `a` fits `C` when `a ≤ C + 10⁻⁹·max(C, 1)`.
    #[cfg_attr(not(feature = "highs"), allow(dead_code))]
    const CAPACITY_TOL: f64 = 1e-9;

    /// The optimum by enumeration of the unpruned groups `gs` over the
    /// capacity of `p` (small programs only).
    #[cfg_attr(not(feature = "highs"), allow(dead_code))]
    fn brute_force_raw(p: &EpochProblem, gs: &[Group]) -> f64 {
        let mut best = f64::INFINITY;
        let n = gs.len();
        let mut idx = vec![0usize; n];
        loop {
            let mut used = vec![0.0; p.rows()];
            let mut cost = 0.0;
            for (g, &k) in gs.iter().zip(&idx) {
                if k == 0 {
                    cost += g.wait_cost;
                } else {
                    let o = &g.options[k - 1];
                    cost += o.cost;
                    for (u, a) in used.iter_mut().zip(&o.usage) {
                        *u += a;
                    }
                }
            }
            let fits = used
                .iter()
                .zip(p.capacity())
                .all(|(u, c)| *u <= c + CAPACITY_TOL * c.max(1.0));
            if fits {
                best = best.min(cost);
            }
            // Next combination.
            let mut i = 0;
            while i < n {
                idx[i] += 1;
                if idx[i] <= gs[i].options.len() {
                    break;
                }
                idx[i] = 0;
                i += 1;
            }
            if i == n {
                return best;
            }
        }
    }

    /// The optimum by enumeration (small programs only).
    fn brute_force(p: &EpochProblem) -> f64 {
        let n = p.groups().len();
        let mut plan: Vec<Option<usize>> = vec![None; n];
        let mut best = f64::INFINITY;
        fn rec(p: &EpochProblem, i: usize, plan: &mut Vec<Option<usize>>, best: &mut f64) {
            if i == plan.len() {
                if p.fits(plan) {
                    *best = best.min(p.cost(plan));
                }
                return;
            }
            for c in std::iter::once(None).chain((0..p.groups()[i].options.len()).map(Some)) {
                plan[i] = c;
                rec(p, i + 1, plan, best);
            }
            plan[i] = None;
        }
        rec(p, 0, &mut plan, &mut best);
        best
    }

    proptest! {
        #![proptest_config(persisted(256))]

        /// Greedy plans fit and cost at least the capacity-free bound; the
        /// evaluator is finite when every job has a fitting option.
        #[test]
        fn greedy_plans_fit(p in problem_strategy(14)) {
            let params = SmdParams {
                selection: Selection::Greedy,
                ..SmdParams::default()
            };
            let s = solve_mcmdk(&p, &vec![false; p.groups().len()], true, &params).unwrap();
            prop_assert!(p.fits(&s.plan));
            prop_assert!(s.trivial_bound <= s.objective + 1e-9);
            prop_assert_eq!(s.objective, p.cost(&s.plan));
            let all_fit = p.groups().iter().all(|g| {
                g.options.iter().any(|o| o.usage.iter().zip(p.capacity()).all(|(a, c)| a <= c))
            });
            let est = evaluate_plan(&p, &s.plan);
            prop_assert!(!all_fit || est.is_finite());
            prop_assert!(est >= 0.0);
        }
    }

    #[cfg(feature = "highs")]
    proptest! {
        #![proptest_config(persisted(400))]

        /// An optimal basic LP point has at most d (indeed at most the tight
        /// rows) fractional groups; the rounded plan fits, meets the additive
        /// bound, and the safe bound equals the LP value at the solver's prices.
        #[test]
        fn lp_vertex_rounding_and_bound(p in problem_strategy(14)) {
            let n = p.groups().len();
            let s = solve_mcmdk(&p, &vec![false; n], false, &SmdParams::default()).unwrap();
            let lp = s.lp.as_ref().unwrap();
            prop_assert!(lp.fractional.len() <= lp.tight_rows);
            prop_assert!(lp.fractional.len() <= p.rows());
            prop_assert!(p.fits(&s.plan));
            prop_assert!(s.objective <= s.guarantee_value.unwrap() + 1e-7 * s.objective.max(1.0));
            prop_assert!(lp.safe_bound <= lp.value + 1e-7 * lp.value.abs().max(1.0));
            prop_assert!((lp.safe_bound - lp.value).abs() <= 1e-7 * lp.value.abs().max(1.0));
            prop_assert!(lp.value <= s.objective + 1e-7 * s.objective.max(1.0));
            // LB at the solver's prices, and at random prices, never above LP.
            prop_assert_eq!(p.lagrangian_bound(&lp.prices).unwrap(), lp.safe_bound);
            for scale in [0.0, 0.1, 1.0, 10.0] {
                let y: Vec<f64> = (0..p.rows()).map(|r| scale * (1.0 + r as f64) / 2.0).collect();
                let lb = p.lagrangian_bound(&y).unwrap();
                prop_assert!(lb <= lp.value + 1e-7 * lp.value.abs().max(1.0), "{lb} > {}", lp.value);
            }
            prop_assert!(p.lagrangian_bound(&[]).is_err() || p.rows() == 0);
            // The additive bound in its weak, d-wide form.
            let delta = p.groups().iter().map(|g| g.wait_cost - g.min_cost()).fold(0.0, f64::max);
            prop_assert!(s.objective <= lp.value + p.rows() as f64 * delta + 1e-7 * s.objective.max(1.0));
            // Determinism.
            let mut again = solve_mcmdk(&p, &vec![false; n], false, &SmdParams::default()).unwrap();
            let mut first = s.clone();
            for x in [&mut again, &mut first] {
                if let Some(lp) = x.lp.as_mut() {
                    lp.seconds = 0.0;
                }
            }
            prop_assert_eq!(&again, &first);
        }

        /// On small programs: LB ≤ LP ≤ OPT (MIP) = OPT (enumeration of the
        /// unpruned options, so pruning kept the optimum) ≤ J.
        #[test]
        fn sandwich_with_exact_and_brute_force((p, raw) in raw_strategy(5)) {
            let n = p.groups().len();
            let params = SmdParams {
                exact: ExactMode::Always,
                ..SmdParams::default()
            };
            let s = solve_mcmdk(&p, &vec![false; n], false, &params).unwrap();
            let lp = s.lp.as_ref().unwrap();
            let opt = s.exact.as_ref().unwrap().optimum().unwrap();
            let tol = 1e-7 * s.objective.max(1.0);
            prop_assert!(lp.safe_bound <= lp.value + tol);
            prop_assert!(lp.value <= opt + tol);
            prop_assert!(opt <= s.objective + tol);
            prop_assert!((brute_force(&p) - opt).abs() <= tol);
            prop_assert!((brute_force_raw(&p, &raw) - opt).abs() <= tol);
        }
    }

    /// Pruning never changes the optimum: the same program with the dominated
    /// options put back (enumerated directly) has the same optimum.
    #[test]
    fn pruning_keeps_the_optimum_and_the_first_duplicate() {
        let dup = Group::new(
            JobId(0),
            9.0,
            vec![gpus(2, 4.0), gpus(2, 4.0), gpus(3, 5.0), gpus(1, 9.0)],
        );
        let p = EpochProblem::new(vec![3.0], vec![3.0], vec![dup]).unwrap();
        // The duplicate (second) goes, (3 GPUs, 5) is dominated by (2 GPUs, 4);
        // (1 GPU, 9) costs the wait charge and stays (ties go to running).
        assert_eq!(p.pruned(), 2);
        assert_eq!(p.groups()[0].options.len(), 2);
        assert_eq!(p.groups()[0].options[1].cost, 9.0);
        assert_eq!(brute_force(&p), 4.0);
        let costly = Group::new(JobId(0), 9.0, vec![gpus(1, 9.5)]);
        let p = EpochProblem::new(vec![3.0], vec![3.0], vec![costly]).unwrap();
        assert_eq!(p.pruned(), 1);
        // A tie with waiting runs, in the greedy and after the LP.
        let tie = Group::new(JobId(0), 9.0, vec![gpus(1, 9.0)]);
        let p = EpochProblem::new(vec![3.0], vec![3.0], vec![tie]).unwrap();
        for greedy in [true, false] {
            if !greedy && cfg!(not(feature = "highs")) {
                continue;
            }
            let s = solve_mcmdk(&p, &[false], greedy, &SmdParams::default()).unwrap();
            assert_eq!(s.plan, vec![Some(0)], "greedy {greedy}");
        }
    }

    #[test]
    fn bad_programs_are_typed_errors() {
        let g = |c: f64| Group::new(JobId(0), 1.0, vec![gpus(1, c)]);
        for cost in [f64::NAN, f64::INFINITY, -1.0] {
            assert!(matches!(
                EpochProblem::new(vec![1.0], vec![1.0], vec![g(cost)]),
                Err(SmdError::InvalidInput { .. })
            ));
        }
        assert!(EpochProblem::new(vec![1.0, 2.0], vec![1.0, 2.0], vec![g(1.0)]).is_err());
        assert!(EpochProblem::new(vec![f64::NAN], vec![1.0], vec![]).is_err());
        let p = EpochProblem::new(vec![1.0], vec![1.0], vec![g(0.5)]).unwrap();
        assert!(solve_mcmdk(&p, &[], false, &SmdParams::default()).is_err());
        let empty = EpochProblem::new(vec![1.0], vec![1.0], vec![]).unwrap();
        let s = select(&empty, &SmdParams::default()).unwrap();
        assert_eq!(s.solution.objective, 0.0);
        assert_eq!(s.estimate_s, 0.0);
    }
}

/// Robustness of the knapsack program, its solver, the outer selection,
/// the plan evaluator and the wait charges on extreme and invalid numbers:
/// a result or a typed error, never a panic, never a hang (from
/// `tests/robust_smd.rs`).
mod robust {
    use super::super::problem::{EpochOption, EpochProblem, Group, WaitJob, wait_charges};
    use super::super::select::{evaluate_plan, select};
    use super::super::solve::solve_mcmdk;
    use super::super::*;
    use crate::model::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    /// Runs `f` on its own thread and waits at most `secs` seconds for it.
    ///
    /// Returns `f`'s value; fails the test with `what` if `f` panicked or did
    /// not return in time (a hang). Robustness tests wrap every case in it, so
    /// that "a result or a typed error, never a panic, never a hang" is checked
    /// case by case.
    fn within<T: Send + 'static>(
        secs: u64,
        what: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
            Ok(v) => v,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("{what}: no answer within {secs} s (a hang)")
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let cause = handle
                    .join()
                    .err()
                    .and_then(|e| {
                        e.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    })
                    .unwrap_or_default();
                panic!("{what}: panicked: {cause}")
            }
        }
    }

    /// The watchdog of every robustness case, in seconds.
    const WATCHDOG_S: u64 = 60;

    fn extreme() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(5e-324),
            Just(1e-12),
            Just(1.0),
            Just(7.5),
            Just(1e12),
            Just(1e300),
            Just(f64::MAX),
            Just(f64::INFINITY),
            Just(f64::NAN),
            Just(-1.0),
        ]
    }

    fn params_strategy() -> impl Strategy<Value = SmdParams> {
        (
            0u8..4,
            0u8..3,
            prop_oneof![Just(0usize), Just(1), Just(5), Just(9)],
            prop_oneof![Just(0usize), Just(1), Just(10)],
            any::<bool>(),
            any::<bool>(),
            extreme(),
        )
            .prop_map(|(sel, wait, perm, passes, exact, pow, x)| SmdParams {
                selection: [
                    Selection::Best,
                    Selection::Joint,
                    Selection::Prefix,
                    Selection::Greedy,
                ][usize::from(sel)],
                wait_charge: match wait {
                    0 => WaitCharge::Queue {
                        share_weighted: pow,
                    },
                    1 => WaitCharge::NextEpoch { horizon_s: x },
                    _ => WaitCharge::Parametric { beta: x },
                },
                max_permutation_groups: perm,
                improvement_passes: passes,
                exact: if exact {
                    ExactMode::IfSmall { max_columns: 200 }
                } else {
                    ExactMode::Never
                },
                powers_of_two: pow,
                max_candidates_per_job: 256,
                ..SmdParams::default()
            })
    }

    /// A typed outcome: anything but a panic or a hang is fine here, except
    /// that a solver failure on a valid program would be a bug.
    fn no_solver_failure<T>(r: &Result<T, SmdError>) -> Result<(), TestCaseError> {
        if let Err(SmdError::LpNotOptimal { status }) = r {
            return Err(TestCaseError::fail(format!("LP not optimal: {status}")));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 128,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/robust_smd.txt",
            ))),
            ..ProptestConfig::default()
        })]

        /// Knapsack programs with extreme numbers: a typed refusal, or a plan
        /// that fits with a checked bound.
        #[test]
        fn programs_with_extreme_numbers(
            caps in proptest::collection::vec(extreme(), 0..3),
            groups in proptest::collection::vec(
                (extreme(), proptest::collection::vec((extreme(), extreme()), 0..4)),
                0..6,
            ),
            params in params_strategy(),
        ) {
            let d = caps.len();
            let gs: Vec<Group> = groups
                .iter()
                .enumerate()
                .map(|(i, (wait, opts))| {
                    let options = opts
                        .iter()
                        .map(|&(a, c)| EpochOption { config: (1, 1), usage: vec![a; d], cost: c })
                        .collect();
                    Group::new(JobId(i as u32), *wait, options)
                })
                .collect();
            let what = format!("{caps:?} {groups:?} {params:?}");
            let r = within(WATCHDOG_S, &what, move || {
                let p = EpochProblem::new(caps.clone(), caps, gs)?;
                let n = p.groups().len();
                let s = select(&p, &params)?;
                let e = evaluate_plan(&p, &s.solution.plan);
                let direct = solve_mcmdk(&p, &vec![false; n], true, &params)?;
                Ok::<_, SmdError>((p, s, e, direct))
            });
            no_solver_failure(&r)?;
            if let Ok((p, s, e, direct)) = r {
                prop_assert!(p.fits(&s.solution.plan));
                prop_assert!(p.fits(&direct.plan));
                prop_assert!(!e.is_nan());
                prop_assert!(s.solution.trivial_bound <= s.solution.objective * (1.0 + 1e-9) || s.solution.objective.is_infinite());
            }
        }

        /// Wait charges on extreme numbers.
        #[test]
        fn wait_charges_on_extreme_numbers(
            jobs in proptest::collection::vec((extreme(), extreme(), extreme(), extreme(), extreme()), 0..5),
            x in extreme(),
            mode in 0u8..3,
        ) {
            let jobs: Vec<WaitJob> = jobs
                .iter()
                .enumerate()
                .map(|(i, &(a, b, s, m, o))| WaitJob {
                    job: JobId(i as u32),
                    arrival_s: a,
                    best_time_s: b,
                    best_share: s,
                    smallest_time_s: m,
                    reconfiguration_s: o,
                })
                .collect();
            let mode = match mode {
                0 => WaitCharge::Queue { share_weighted: true },
                1 => WaitCharge::NextEpoch { horizon_s: x },
                _ => WaitCharge::Parametric { beta: x },
            };
            let r = within(WATCHDOG_S, "wait charges", move || wait_charges(&jobs, mode));
            if let Ok(w) = r {
                prop_assert!(w.iter().all(|v| !v.is_nan() && *v >= 0.0));
            }
        }
    }
}

/// Simulated runs against each job's standalone time (from
/// `tests/smd_sim.rs`).
mod runs {
    use super::super::*;
    use crate::model::*;
    use crate::sim::{SimOptions, simulate};
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    /// A layered job of `layers` equal layers (`f`, `2f` ms, `mb` MB each).
    fn layered(
        id: u32,
        arrival: f64,
        minibatches: u32,
        max_workers: u32,
        f_ms: f64,
        mb: f64,
    ) -> Job {
        let layers = (0..3)
            .map(|_| Layer {
                forward_s: f_ms * 1e-3,
                backward_s: 2.0 * f_ms * 1e-3,
                bytes: mb * 1e6,
                update_s: 0.0,
            })
            .collect();
        let ps = PsJob {
            epochs: 1,
            data_chunks: 1,
            minibatches_per_chunk: minibatches,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(1e9),
            ps: Resources::zero().cpu_cores(4.0).nic(1e9),
            max_workers,
            max_ps: max_workers.div_ceil(2).max(1),
            sync: SyncMode::Synchronous,
            layers: Some(layers),
            ..PsJob::default()
        };
        let mut j = Job::new(JobId(id), arrival, ps);
        j.reconfiguration_s = 1.0;
        j
    }

    fn cluster(machines: u32, gpus: f64, cpus: f64) -> Cluster {
        let cap = Resources::zero().gpus(gpus).cpu_cores(cpus).nic(1e11);
        Cluster::homogeneous(machines, cap, 1e11)
    }

    fn params() -> SmdParams {
        if cfg!(feature = "highs") {
            SmdParams::default()
        } else {
            SmdParams {
                selection: Selection::Greedy,
                ..SmdParams::default()
            }
        }
    }

    /// `(arrival, mini-batches, max workers, forward ms, MB per layer)`.
    type JobSpec = (f64, u32, u32, f64, f64);

    fn run(
        jobs: &[JobSpec],
        p: SmdParams,
    ) -> (crate::sim::SimResult, Vec<SmdEpochReport>, Instance) {
        let jobs = jobs
            .iter()
            .enumerate()
            .map(|(i, &(a, n, w, f, mb))| layered(i as u32, a, n, w, f, mb))
            .collect();
        let inst = Instance::new(cluster(2, 4.0, 16.0), jobs, 60.0, 1000).unwrap();
        let mut smd = SmdScheduler::new(p);
        let r = simulate(&inst, &mut smd, &SimOptions::default()).unwrap();
        (r, smd.reports().to_vec(), inst)
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 24,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/smd_sim.txt",
            ))),
            ..ProptestConfig::default()
        })]

        /// Every job finishes, never faster than alone on the empty cluster;
        /// every epoch's certificate checks; identical inputs give identical
        /// runs.
        #[test]
        fn simulated_runs_keep_the_invariants(
            jobs in prop::collection::vec(
                (0.0f64..200.0, 100u32..5000, 1u32..=4, 1.0f64..30.0, 0.1f64..20.0),
                1..=6,
            ),
            greedy in any::<bool>(),
        ) {
            let p = if greedy {
                { let mut built = params(); built.selection = Selection::Greedy; built }
            } else {
                params()
            };
            let (r, reports, inst) = run(&jobs, p);
            prop_assert!(!reports.is_empty());
            for rep in &reports {
                rep.check(1e-9).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(rep.certificate.relaxation_bound.value <= rep.certificate.objective + 1e-9 * rep.certificate.objective.max(1.0));
            }
            let total = inst.cluster().total_capacity();
            for (rec, job) in r.jobs.iter().zip(inst.jobs()) {
                let jct = rec.jct_s.expect("every job finishes");
                let work = crate::sim::total_work(job);
                let best = candidates(job, work, &total, &total, &p)
                    .unwrap()
                    .iter()
                    .map(|c| c.remaining_s)
                    .fold(f64::INFINITY, f64::min);
                prop_assert!(jct >= best * (1.0 - 1e-9), "{:?}: {} < {}", rec.job, jct, best);
                prop_assert!(rec.remaining_work <= 1e-6);
            }
            let (again, reports2, _) = run(&jobs, p);
            let fin = |r: &crate::sim::SimResult| r.jobs.iter().map(|j| (j.finish_s, j.reconfigurations)).collect::<Vec<_>>();
            prop_assert_eq!(fin(&r), fin(&again));
            prop_assert_eq!(reports.len(), reports2.len());
            for (a, b) in reports.iter().zip(&reports2) {
                prop_assert_eq!(a.certificate.objective, b.certificate.objective);
                prop_assert_eq!(a.mode, b.mode);
            }
        }
    }
}

/// The examples of the docs, formerly doctests: the rounding example of the
/// module docs and the wait charges of two jobs.
mod docs {
    use super::super::problem::{EpochOption, EpochProblem, Group, WaitJob, wait_charges};
    #[cfg(feature = "highs")]
    use super::super::solve::solve_mcmdk;
    use super::super::*;
    use crate::model::JobId;

    #[test]
    fn module_rounding_example() -> Result<(), SmdError> {
        let opt = |gpus: f64, cost: f64| EpochOption {
            config: (gpus as u32, 1),
            usage: vec![gpus],
            cost,
        };
        let a = Group::new(
            JobId(0),
            20.0,
            vec![opt(1.0, 10.0), opt(2.0, 6.0), opt(4.0, 4.0)],
        );
        let b = Group::new(
            JobId(1),
            16.0,
            vec![opt(1.0, 8.0), opt(2.0, 5.0), opt(4.0, 3.5)],
        );
        let p = EpochProblem::new(vec![5.0], vec![5.0], vec![a, b])?;
        #[cfg(feature = "highs")]
        {
            let s = solve_mcmdk(&p, &[false, false], false, &SmdParams::default())?;
            let lp = s.lp.as_ref().unwrap();
            assert!((lp.value - 10.0).abs() < 1e-7); // capacity rows carry a 10⁻⁹ relative tolerance
            assert_eq!(lp.fractional, vec![0]);
            assert_eq!(s.objective, 11.0);
            assert!((s.guarantee_value.unwrap() - 26.0).abs() < 1e-7);
        }
        #[cfg(not(feature = "highs"))]
        let _ = p;
        Ok(())
    }

    #[test]
    fn wait_charges_example() -> Result<(), SmdError> {
        // Job A: ρ = 10, 6, 4 s on 1, 2, 4 of 4 GPUs; job B: 8, 5, 3 s.
        let a = WaitJob {
            job: JobId(0),
            arrival_s: 0.0,
            best_time_s: 4.0,
            best_share: 1.0,
            smallest_time_s: 10.0,
            reconfiguration_s: 0.0,
        };
        let b = WaitJob {
            job: JobId(1),
            best_time_s: 3.0,
            smallest_time_s: 8.0,
            ..a
        };
        let queue = wait_charges(
            &[a, b],
            WaitCharge::Queue {
                share_weighted: true,
            },
        )?;
        assert_eq!(queue, vec![13.0, 8.0]);
        Ok(())
    }
}
