//! The wire layer's hand-written runtime: form decoding, XML encoding, error envelopes and
//! SigV4 routing. The per-operation code that uses it is generated (`crate::generated`).

pub mod error;
pub mod query;
pub mod sigv4;
pub mod xml;

/// A number of a model's `double` or `float` shape, compared and hashed by its bits: a
/// request holding one can be fingerprinted (`Hash`), and two answers that compare equal are
/// written alike (`0.0` and `-0.0` differ here, as their text does), which the answers a
/// server thread keeps rely on.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Float {}

impl std::hash::Hash for Float {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// Implements `Decode` and `Encode` for a generated enum with `VALUES`, `as_str` and
/// `from_wire`.
macro_rules! wire_enum {
    ($t:ty) => {
        impl $crate::protocol::query::Scalar for $t {
            fn parse(
                raw: String,
                key: $crate::protocol::query::KeyText<'_>,
            ) -> Result<Self, $crate::protocol::error::ApiError> {
                $crate::protocol::query::enum_scalar(raw, key, <$t>::from_wire, <$t>::VALUES)
            }
        }
        $crate::protocol::query::scalar_decode!($t);
        impl $crate::protocol::xml::Encode for $t {
            fn encode(&self, w: &mut $crate::protocol::xml::XmlWriter, name: &str) {
                w.plain(name, self.as_str());
            }
        }
        // Stored (in the state file) as the wire value, so a stored state reads like AWS's.
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                <$t>::from_wire(&raw)
                    .ok_or_else(|| serde::de::Error::unknown_variant(&raw, <$t>::VALUES))
            }
        }
    };
}
pub(crate) use wire_enum;

#[cfg(test)]
mod tests {
    use super::Float;
    use std::hash::{DefaultHasher, Hash, Hasher};

    fn hash(f: Float) -> u64 {
        let mut h = DefaultHasher::new();
        f.hash(&mut h);
        h.finish()
    }

    #[test]
    fn floats_are_equal_only_when_written_alike() {
        assert_eq!(Float(1.5), Float(1.5));
        assert_eq!(hash(Float(1.5)), hash(Float(1.5)));
        // Equal as numbers, written differently: not equal here.
        assert_ne!(Float(0.0), Float(-0.0));
        assert_ne!(Float(0.0).0.to_string(), Float(-0.0).0.to_string());
        // A NaN is itself, so an answer holding one is still kept and reused.
        assert_eq!(Float(f64::NAN), Float(f64::NAN));
    }
}
