//! Every algorithm's parameter struct reads from JSON (the command line's
//! `--params`): the defaults round-trip, `{}` is the defaults, a partial
//! object overrides only its fields, and an unknown field is an error that
//! names it.
#![cfg(feature = "serde")]

use std::fmt::Debug;

use dmlsched::algorithms::gadget::GadgetParams;
use dmlsched::algorithms::locality::{LocalityBatchParams, LocalityParams};
use dmlsched::algorithms::oasis::OasisParams;
use dmlsched::algorithms::sjf_bco::SjfBcoParams;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn round_trip<P: Default + Serialize + DeserializeOwned + PartialEq + Debug>() {
    let d = P::default();
    let text = serde_json::to_string(&d).unwrap();
    assert_eq!(serde_json::from_str::<P>(&text).unwrap(), d, "{text}");
    assert_eq!(serde_json::from_str::<P>("{}").unwrap(), d);
    let err = serde_json::from_str::<P>(r#"{"no_such_option": 1}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no_such_option"), "{err}");
}

#[test]
fn every_params_struct_round_trips() {
    round_trip::<OasisParams>();
    round_trip::<LocalityParams>();
    round_trip::<LocalityBatchParams>();
    round_trip::<GadgetParams>();
    round_trip::<SjfBcoParams>();
}

#[test]
fn a_partial_object_overrides_only_its_fields() {
    let p: OasisParams = serde_json::from_str(r#"{"u_scale": 2.0}"#).unwrap();
    assert_eq!(p.u_scale, 2.0);
    assert_eq!(p, {
        let mut built = OasisParams::default();
        built.u_scale = 2.0;
        built
    });
    let p: GadgetParams = serde_json::from_str(r#"{"headroom": true}"#).unwrap();
    assert!(p.headroom);
    assert_eq!(p.bounds, GadgetParams::default().bounds);
    let p: LocalityParams = serde_json::from_str(r#"{"pd": {"admission_epsilon": 0.5}}"#).unwrap();
    assert_eq!(p.pd.admission_epsilon, 0.5);
    assert!(p.pd.recompute_final_dual);
    // Limits given in part keep the formulation's other defaults.
    use dmlsched::algorithms::sjf_bco::formulation::DEFAULT_LIMITS;
    let text = r#"{"time_indexed_bound": {"limits": {"time_limit_s": 5}}}"#;
    let p: SjfBcoParams = serde_json::from_str(text).unwrap();
    let limits = p.time_indexed_bound.unwrap().limits;
    assert_eq!(limits, {
        let mut built = DEFAULT_LIMITS;
        built.time_limit_s = 5.0;
        built
    });
    assert_eq!(limits.max_columns, Some(20_000));
}

/// Every enum of every parameter struct the command line reads
/// (`--params`) serialises in snake case and reads back, so the defaults
/// of each struct, written out, use no CamelCase variant name.
#[test]
fn every_params_enum_is_written_in_snake_case() {
    use dmlsched::algorithms::smd::SmdParams;
    fn names<P: Default + Serialize>() -> String {
        serde_json::to_string(&P::default()).unwrap()
    }
    for text in [
        names::<OasisParams>(),
        names::<LocalityParams>(),
        names::<LocalityBatchParams>(),
        names::<GadgetParams>(),
        names::<SjfBcoParams>(),
        names::<SmdParams>(),
    ] {
        // A CamelCase variant name is a key or a string value starting
        // with an upper-case letter.
        let camel = text
            .split('"')
            .skip(1)
            .step_by(2)
            .find(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
        assert_eq!(camel, None, "a CamelCase name in {text}");
    }
}

/// The snake-case names of the README are read, as bare names (every field
/// at its default) or with fields; the CamelCase names stay readable.
#[test]
fn params_enums_read_snake_case_and_camel_case() {
    use dmlsched::algorithms::locality::{BatchObjective, InnerSolver};
    use dmlsched::online::BoundsChoice;
    let floor = |v| BoundsChoice::ValueFloor { v_floor: v };
    for (text, want) in [
        (r#"{"bounds": "value_floor"}"#, floor(None)),
        (r#"{"bounds": "ValueFloor"}"#, floor(None)),
        (
            r#"{"bounds": {"value_floor": {"v_floor": 3}}}"#,
            floor(Some(3.0)),
        ),
        (
            r#"{"bounds": {"ValueFloor": {"v_floor": 3}}}"#,
            floor(Some(3.0)),
        ),
        (r#"{"bounds": {"value_floor": null}}"#, floor(None)),
        (r#"{"bounds": "eta"}"#, BoundsChoice::Eta),
        (r#"{"bounds": "Eta"}"#, BoundsChoice::Eta),
    ] {
        let p: OasisParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.bounds, want, "{text}");
        let p: LocalityParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.bounds, want, "{text}");
    }
    for (text, want) in [
        (r#"{"inner": "lp_round"}"#, InnerSolver::lp_round()),
        (r#"{"inner": "exact_mip"}"#, InnerSolver::exact_mip()),
        (r#"{"inner": "ExactMip"}"#, InnerSolver::exact_mip()),
        (
            r#"{"inner": {"exact_mip": {"time_limit_s": 3}}}"#,
            InnerSolver::ExactMip { time_limit_s: 3.0 },
        ),
        (
            r#"{"inner": {"lp_round": {"draws": 2}}}"#,
            InnerSolver::LpRound {
                draws: 2,
                lambdas: dmlsched::algorithms::locality::DEFAULT_LAMBDAS,
            },
        ),
    ] {
        let p: LocalityParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.inner, want, "{text}");
        let p: LocalityBatchParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.inner, want, "{text}");
    }
    for (text, want) in [
        (
            r#"{"objective": "weighted_completion"}"#,
            BatchObjective::WeightedCompletion,
        ),
        (
            r#"{"objective": "WeightedCompletion"}"#,
            BatchObjective::WeightedCompletion,
        ),
        (r#"{"objective": "makespan"}"#, BatchObjective::Makespan),
    ] {
        let p: LocalityBatchParams = serde_json::from_str(text).unwrap();
        assert_eq!(p.objective, want, "{text}");
    }
    // Unknown names and fields are still errors that name them.
    for (text, needle) in [
        (r#"{"bounds": "bogus"}"#, "bogus"),
        (r#"{"bounds": {"value_floor": {"x": 1}}}"#, "`x`"),
        (r#"{"inner": {"lp_round": {"draws": -1}}}"#, "-1"),
    ] {
        let err = serde_json::from_str::<LocalityParams>(text)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
}
