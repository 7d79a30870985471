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
        impl $crate::protocol::query::Decode for $t {
            fn decode(
                r: &mut $crate::protocol::query::FormReader,
                key: &str,
            ) -> Result<Option<Self>, $crate::protocol::error::ApiError> {
                r.enum_value(key, <$t>::from_wire, <$t>::VALUES)
            }
        }
        impl $crate::protocol::xml::Encode for $t {
            fn encode(&self, w: &mut $crate::protocol::xml::XmlWriter, name: &str) {
                w.text(name, self.as_str());
            }
        }
    };
}
pub(crate) use wire_enum;
