//! The idempotency ledger: `ClientToken` of a create call -> the request it came with and the
//! resource it made. The same token with the same request answers the same resource; with
//! another request it is `IdempotentParameterMismatch`, as AWS documents.

use std::collections::BTreeMap;

use crate::ec2::error::Code;
use crate::protocol::error::ApiError;

/// Tokens seen by one region, per operation.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Ledger {
    /// Operation -> token -> (request fingerprint, resource id).
    entries: BTreeMap<String, BTreeMap<String, (String, String)>>,
}

impl Ledger {
    /// The resource an earlier call with `token` made, if any; `fingerprint` is the request
    /// without its token.
    pub fn replay(
        &self,
        op: &'static str,
        token: Option<&str>,
        fingerprint: &str,
    ) -> Result<Option<String>, ApiError> {
        let Some(token) = token else { return Ok(None) };
        if token.len() > 64 || !token.is_ascii() {
            return Err(ApiError::invalid_parameter(
                "ClientToken",
                token,
                "A client token is at most 64 ASCII characters.",
            ));
        }
        match self.entries.get(op).and_then(|tokens| tokens.get(token)) {
            None => Ok(None),
            Some((seen, id)) if seen == fingerprint => Ok(Some(id.clone())),
            Some(_) => Err(ApiError::new(
                Code::IdempotentParameterMismatch,
                format!(
                    "The client token '{token}' was used in an earlier {op} request with \
                     different parameters."
                ),
            )),
        }
    }

    /// Records what a call with `token` made.
    pub fn record(&mut self, op: &'static str, token: Option<&str>, fingerprint: &str, id: &str) {
        if let Some(token) = token {
            self.entries
                .entry(op.to_string())
                .or_default()
                .insert(token.to_string(), (fingerprint.to_string(), id.to_string()));
        }
    }
}
