//! Properties of the timing models:
//! linearity invariants of PS-L and RAR-C, the max-of-linear invariant of the
//! PS-L placement-level form, and the bounds and monotonicity of PS-W.

use dmlsched::model::{Degradation, Layer, RingParams, SyncMode};
use dmlsched::timing::*;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const REL: f64 = 1e-12;

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `a == b` to `REL` relative.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= REL * a.abs().max(b.abs())
}

/// A PS-L model with arbitrary valid parameters.
fn ps_locality() -> impl Strategy<Value = PsLocality> {
    (
        0.0..1.0f64,
        0.0..1e9f64,
        1e8..1e11f64,
        1e7..1e10f64,
        1e7..1e10f64,
        0.0..0.01f64,
    )
        .prop_map(|(t, s, bi, bw, bs, x)| PsLocality::new(t, s, bi, bw, bs, x).unwrap())
}

/// A placement with at least one worker and one PS.
fn placement() -> impl Strategy<Value = PsPlacement> {
    proptest::collection::vec((0u32..5, 0u32..3), 1..8).prop_map(|mut machines| {
        let last = machines.len() - 1;
        machines[0].0 = machines[0].0.max(1);
        machines[last].1 = machines[last].1.max(1);
        PsPlacement { machines }
    })
}

/// A parameter vector for the placement-level form: `(t_c, 1/b_int, 1/b_w,
/// 1/B_s, ξ₂)`.
fn theta5() -> impl Strategy<Value = Vec<f64>> {
    (
        0.0..1.0f64,
        1e-11..1e-8f64,
        1e-11..1e-7f64,
        1e-11..1e-7f64,
        0.0..0.01f64,
    )
        .prop_map(|(a, b, c, d, e)| vec![a, b, c, d, e])
}

/// A RAR-C model and a valid configuration for it.
fn rar() -> impl Strategy<Value = (RarTiming, RarConfig)> {
    (
        (0.0..1e9f64, 1u32..33, 1u32..65, 0.0..1.0f64, 1e9..1e11f64),
        (1e8..1e10f64, 1e9..1e11f64, 0.0..0.01f64),
        (prop::option::of(0.0..0.5f64), any::<bool>()),
        (1u32..9, 1.0..8.0f64),
    )
        .prop_map(
            |((m, w, mb, tc, bi), (be, c, x2), (alpha, single), (n, k))| {
                let mut ring = RingParams::default();
                ring.external_bandwidth_bps = be;
                ring.reduction_speed_bps = c;
                ring.overhead_per_server_s = x2;
                ring.contender_ratio = 1.0;
                ring.degradation = alpha.map_or(Degradation::FairShare, |alpha| {
                    Degradation::Linear { alpha }
                });
                let model = RarTiming::new(m, w, mb, tc, bi, &ring)
                    .unwrap()
                    .with_single_gpu_overhead(single);
                let cfg = RarConfig {
                    servers: n.min(w),
                    contenders: k,
                };
                (model, cfg)
            },
        )
}

/// At most 6 layers with times up to 10 ms, sizes up to 30 MB and optional
/// PS update work.
fn layers(with_update: bool) -> impl Strategy<Value = Vec<Layer>> {
    proptest::collection::vec(
        (0.0..0.01f64, 0.0..0.01f64, 0.0..3e7f64, 0.0..0.005f64),
        1..=6,
    )
    .prop_map(move |v| {
        v.into_iter()
            .map(|(f, g, m, u)| Layer {
                forward_s: f,
                backward_s: g,
                bytes: m,
                update_s: if with_update { u } else { 0.0 },
            })
            .collect()
    })
}

fn layered(with_update: bool, sync: SyncMode) -> impl Strategy<Value = PsLayered> {
    (
        layers(with_update),
        1e8..1e10f64,
        1e8..1e10f64,
        0.0..0.001f64,
    )
        .prop_map(move |(l, bw, bs, lat)| PsLayered::new(l, bw, bs, lat, 32, sync).unwrap())
}

fn sync_mode() -> impl Strategy<Value = SyncMode> {
    prop_oneof![Just(SyncMode::Synchronous), Just(SyncMode::Asynchronous)]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/timing.txt"))),
        ..ProptestConfig::default()
    })]

    /// PS-L two-configuration form: `τ = θ·φ(cfg)`, and `with_params(θ)`
    /// gives back the same times.
    #[test]
    fn ps_locality_two_config_is_linear(m in ps_locality(), local in any::<bool>(), w in 1u32..64) {
        let cfg = if local { PsConfig::Local { workers: w } } else { PsConfig::Distributed { workers: w } };
        let tau = m.iteration_time_s(&cfg).unwrap();
        prop_assert!(close(tau, dot(&m.params(), &m.features(&cfg).unwrap())));
        let back = LinearInParameters::with_params(&m, &LinearInParameters::params(&m)).unwrap();
        prop_assert!(close(tau, back.iteration_time_s(&cfg).unwrap()));
        prop_assert_eq!(m.samples_per_iteration(&cfg), f64::from(w));
    }

    /// PS-L placement-level form: `τ = θ·features_at(cfg, θ)`; the term that
    /// binds under any other θ' is no larger under θ; and a model built from
    /// θ' has time `θ'·features_at(cfg, θ')`.
    #[test]
    fn ps_locality_placement_is_max_of_linear(m in ps_locality(), cfg in placement(), other in theta5()) {
        let pl = m.placement_level();
        let theta = pl.params();
        let tau = pl.iteration_time_s(&cfg).unwrap();
        prop_assert!(close(tau, dot(&theta, &pl.features_at(&cfg, &theta).unwrap())));
        let phi_other = pl.features_at(&cfg, &other).unwrap();
        prop_assert!(dot(&theta, &phi_other) <= tau * (1.0 + REL));
        let moved = pl.with_params(&other).unwrap();
        prop_assert!(close(moved.iteration_time_s(&cfg).unwrap(), dot(&other, &phi_other)));
        // The LOCAL placement reduces to the two-configuration form plus ξ₂.
        let local = PsPlacement { machines: vec![(cfg.workers() as u32, 1)] };
        prop_assert!(close(pl.iteration_time_s(&local).unwrap(), m.tau_local() + m.overhead_per_machine_s));
    }

    /// RAR-C: `τ = θ·φ(cfg)` in the linear calibration parametrisation
    /// (features: multi-server exchange, extra contenders, single-server
    /// exchange, servers, 1), for both
    /// degradations and both single-GPU rules; τ is non-decreasing in k.
    #[test]
    fn rar_is_linear((m, cfg) in rar()) {
        let tau = IterationTime::iteration_time_s(&m, &cfg).unwrap();
        prop_assert!(close(tau, dot(&m.params(), &m.features(&cfg).unwrap())));
        prop_assert!(close(tau, m.iteration_time_s(cfg.servers, cfg.contenders)));
        prop_assert!(tau >= m.compute_s);
        let more = m.iteration_time_s(cfg.servers, cfg.contenders + 1.0);
        prop_assert!(more >= tau * (1.0 - REL));
        prop_assert_eq!(m.samples_per_iteration(&cfg), f64::from(m.workers) * f64::from(m.minibatch_size));
    }

    /// PS-W (synchronous): the lower bounds (layer 1's gradient is produced
    /// last; the push channel carries every layer) and the no-overlap upper
    /// bound `Σ f + Σ g + Σ (2π_l + u_l/p)`.
    #[test]
    fn layered_bounds(m in layered(true, SyncMode::Synchronous), w in 1u32..16, p in 1u32..8) {
        let t = m.trace(w, p).unwrap();
        let tau = m.iteration_time_s(&(w, p)).unwrap();
        prop_assert!(close(tau, t.iteration_time_s()));
        let pf = f64::from(p);
        let f: f64 = m.layers.iter().map(|l| l.forward_s).sum();
        let g: f64 = m.layers.iter().map(|l| l.backward_s).sum();
        let pi_sum: f64 = t.transfer_s.iter().sum();
        let u_sum: f64 = m.layers.iter().map(|l| l.update_s / pf).sum();
        let (pi1, u1) = (t.transfer_s[0], m.layers[0].update_s / pf);
        let g_last = m.layers[m.layers.len() - 1].backward_s;
        let upper = f + g + 2.0 * pi_sum + u_sum;
        let tol = REL * upper;
        prop_assert!(tau >= f + g + 2.0 * pi1 + u1 - tol);
        prop_assert!(tau >= f + g_last + pi_sum + u1 + pi1 - tol);
        prop_assert!(tau <= upper + tol);
    }

    /// PS-W: τ is non-increasing in p and non-decreasing in w (both modes).
    #[test]
    fn layered_monotone(m in (sync_mode(), any::<bool>()).prop_flat_map(|(s, u)| layered(u, s)), w in 1u32..16, p in 1u32..8) {
        let tau = m.iteration_time_s(&(w, p)).unwrap();
        let more_ps = m.iteration_time_s(&(w, p + 1)).unwrap();
        let more_workers = m.iteration_time_s(&(w + 1, p)).unwrap();
        prop_assert!(more_ps <= tau * (1.0 + REL));
        prop_assert!(more_workers >= tau * (1.0 - REL));
    }

    /// PS-W: without PS update work, asynchronous training is never slower
    /// than synchronous.
    #[test]
    fn layered_async_not_slower(m in layered(false, SyncMode::Synchronous), w in 1u32..16, p in 1u32..8) {
        let asyn = PsLayered { sync: SyncMode::Asynchronous, ..m.clone() };
        let ts = m.iteration_time_s(&(w, p)).unwrap();
        let ta = asyn.iteration_time_s(&(w, p)).unwrap();
        prop_assert!(ta <= ts * (1.0 + REL));
        prop_assert!(asyn.throughput(&(w, p)).unwrap() >= m.throughput(&(w, p)).unwrap() * (1.0 - REL));
    }
}
