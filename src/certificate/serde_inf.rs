//! Serde helpers: `f64`s that may be infinite, as JSON numbers when finite
//! and as strings otherwise.

/// `f64` as a JSON number when finite, else `"inf"`, `"-inf"` or `"nan"`.
pub(crate) mod serde_f64 {
    use serde::{Deserializer, Serializer, de};
    use std::fmt;

    pub(crate) fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        if x.is_finite() {
            s.serialize_f64(*x)
        } else if x.is_nan() {
            s.serialize_str("nan")
        } else if *x > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        d.deserialize_any(F64Visitor)
    }

    struct F64Visitor;

    impl de::Visitor<'_> for F64Visitor {
        type Value = f64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(r#"a number or one of "inf", "-inf", "nan""#)
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
            match v {
                "inf" | "+inf" | "infinity" | "Infinity" => Ok(f64::INFINITY),
                "-inf" | "-infinity" | "-Infinity" => Ok(f64::NEG_INFINITY),
                "nan" | "NaN" => Ok(f64::NAN),
                _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
            }
        }
    }

    /// Wrapper serializing through this module.
    pub(super) struct Wrapped(pub(super) f64);

    impl serde::Serialize for Wrapped {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            serialize(&self.0, s)
        }
    }

    impl<'de> serde::Deserialize<'de> for Wrapped {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize(d).map(Wrapped)
        }
    }
}

/// `Option<f64>` as `null` or as [`serde_f64`] does.
pub(super) mod serde_opt_f64 {
    use super::serde_f64::Wrapped;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(in crate::certificate) fn serialize<S: Serializer>(
        x: &Option<f64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        x.map(Wrapped).serialize(s)
    }

    pub(in crate::certificate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<f64>, D::Error> {
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }
}

#[cfg(test)]
mod tests {
    use crate::certificate::fixtures::*;
    use crate::certificate::*;

    #[test]
    fn serde_round_trip_with_infinities() {
        let mut c = full_min();
        c.relaxation_bound = Bound::none(Sense::Minimise);
        c.exact = Some(limit(None, f64::NEG_INFINITY, false));
        c.exact.as_mut().unwrap().rel_gap = f64::INFINITY;
        c.guarantees.push(
            Guarantee::probabilistic("P ≥ 0.5", "crate", 0.5, GuaranteeScope::FinalPoint)
                .with_ratio(f64::INFINITY)
                .with_value(1.0),
        );
        let mut f = FeasibilityReport::bicriteria(0.1);
        f.record(ConstraintClass::Linking, 2, 0.5, 0.0);
        c.feasibility = f;
        let json = serde_json::to_string_pretty(&c).unwrap();
        assert!(json.contains(r#""value": "-inf""#), "{json}");
        assert!(json.contains(r#""rel_gap": "inf""#), "{json}");
        assert!(json.contains(r#""max_relative": "inf""#), "{json}");
        assert!(json.contains(r#""incumbent": null"#), "{json}");
        let back: Certificate = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);

        // Plain numbers (integers too) and NaN strings are read.
        let b: Bound =
            serde_json::from_str(r#"{"value": 3, "kind": {"OnlineDual": {"valid": false}}}"#)
                .unwrap();
        assert_eq!(b, Bound::new(3.0, BoundKind::OnlineDual { valid: false }));
        let b: Bound = serde_json::from_str(r#"{"value": "nan", "kind": "Trivial"}"#).unwrap();
        assert!(b.value.is_nan());
        assert!(serde_json::from_str::<Bound>(r#"{"value": "big", "kind": "Trivial"}"#).is_err());
        let g: GuaranteeKind = serde_json::from_str(r#"{"WithProbability": 0.25}"#).unwrap();
        assert_eq!(g, GuaranteeKind::WithProbability(0.25));
    }
}
