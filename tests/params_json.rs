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
    assert_eq!(
        p,
        OasisParams {
            u_scale: 2.0,
            ..OasisParams::default()
        }
    );
    let p: GadgetParams = serde_json::from_str(r#"{"headroom": true}"#).unwrap();
    assert!(p.headroom);
    assert_eq!(p.bounds, GadgetParams::default().bounds);
    let p: LocalityParams = serde_json::from_str(r#"{"pd": {"admission_epsilon": 0.5}}"#).unwrap();
    assert_eq!(p.pd.admission_epsilon, 0.5);
    assert!(p.pd.recompute_final_dual);
}
