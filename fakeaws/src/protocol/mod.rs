//! The wire layer's hand-written runtime: form decoding, XML encoding, error envelopes and
//! SigV4 routing. The per-operation code that uses it is generated (`crate::generated`).

pub mod error;
pub mod query;
pub mod sigv4;
pub mod xml;

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
