//! Routing by the SigV4 credential scope: `AKID/DATE/REGION/SERVICE/aws4_request`, from the
//! `Authorization` header or the presigned `X-Amz-Credential` parameter; and, for a fake given
//! credentials, the verification of a request's signature: the request is signed again with
//! the `aws-sigv4` crate (the SDK's own signer) over the headers it names, and the two
//! signatures compared. Without credentials any signature passes.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use aws_smithy_types::DateTime;
use aws_smithy_types::date_time::Format;

/// How far a request's timestamp may be from the server's time (AWS: 15 minutes).
pub const MAX_SKEW: Duration = Duration::from_secs(15 * 60);

/// A request as the signer sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `POST`, `GET`, ...
    pub method: &'a str,
    /// The path and query, as sent.
    pub path_and_query: &'a str,
    /// Every header, as sent.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body.
    pub body: &'a [u8],
}

impl Request<'_> {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization: AWS4-HMAC-SHA256 ...` header with a credential, signed headers, a
    /// signature and an `X-Amz-Date`.
    Incomplete(String),
    /// The access key is not one of the fake's.
    UnknownKey(String),
    /// The signature is not the one the secret gives.
    Mismatch,
    /// The request's time is more than [`MAX_SKEW`] from the server's.
    Expired {
        /// The request's `X-Amz-Date`.
        signed_at: String,
    },
}

/// The parts of an `Authorization` header.
struct Authorization<'a> {
    key: &'a str,
    signed_headers: Vec<&'a str>,
    signature: &'a str,
}

fn parse_authorization(header: &str) -> Option<Authorization<'_>> {
    let rest = header.trim().strip_prefix("AWS4-HMAC-SHA256")?;
    let mut key = None;
    let mut signed_headers = None;
    let mut signature = None;
    for part in rest.split(',').map(str::trim) {
        if let Some(c) = part.strip_prefix("Credential=") {
            key = c.split('/').next();
        } else if let Some(h) = part.strip_prefix("SignedHeaders=") {
            signed_headers = Some(h.split(';').collect());
        } else if let Some(s) = part.strip_prefix("Signature=") {
            signature = Some(s);
        }
    }
    Some(Authorization {
        key: key.filter(|k| !k.is_empty())?,
        signed_headers: signed_headers?,
        signature: signature?,
    })
}

/// `20261201T000000Z` as a time.
fn parse_amz_date(raw: &str) -> Option<SystemTime> {
    let b = raw.as_bytes();
    if b.len() != 16 || b.get(8) != Some(&b'T') || b.get(15) != Some(&b'Z') {
        return None;
    }
    let extended = format!(
        "{}-{}-{}T{}:{}:{}Z",
        raw.get(0..4)?,
        raw.get(4..6)?,
        raw.get(6..8)?,
        raw.get(9..11)?,
        raw.get(11..13)?,
        raw.get(13..15)?
    );
    let t = DateTime::from_str(&extended, Format::DateTime).ok()?;
    SystemTime::try_from(t).ok()
}

/// Verifies the signature of `request` against `credentials` (access key -> secret) at `now`.
pub fn verify(
    credentials: &BTreeMap<String, String>,
    request: &Request<'_>,
    now: SystemTime,
) -> Result<(), Refusal> {
    let header = |name: &str| request.header(name);
    let auth = header("authorization")
        .and_then(parse_authorization)
        .ok_or_else(|| {
            Refusal::Incomplete(
                "Authorization header requires a Credential, SignedHeaders and Signature \
                 (AWS4-HMAC-SHA256)"
                    .into(),
            )
        })?;
    let amz_date = header("x-amz-date")
        .ok_or_else(|| Refusal::Incomplete("the X-Amz-Date header is required".into()))?;
    let signed_at = parse_amz_date(amz_date)
        .ok_or_else(|| Refusal::Incomplete(format!("X-Amz-Date {amz_date:?} is not valid")))?;
    let secret = credentials
        .get(auth.key)
        .ok_or_else(|| Refusal::UnknownKey(auth.key.to_string()))?;
    let skew = now
        .duration_since(signed_at)
        .or_else(|_| signed_at.duration_since(now))
        .unwrap_or_default();
    if skew > MAX_SKEW {
        return Err(Refusal::Expired {
            signed_at: amz_date.to_string(),
        });
    }
    let scope_region = header("authorization")
        .and_then(super::sigv4::from_authorization)
        .ok_or_else(|| Refusal::Incomplete("the credential scope is not valid".into()))?;
    // The headers the client signed, as it sent them; the signer adds X-Amz-Date itself.
    let signed: Vec<(&str, &str)> = request
        .headers
        .iter()
        .filter(|(k, _)| {
            auth.signed_headers
                .iter()
                .any(|s| s.eq_ignore_ascii_case(k))
        })
        .copied()
        .collect();
    let identity: Identity = Credentials::new(auth.key, secret, None, None, "fakeaws").into();
    let mut settings = SigningSettings::default();
    settings.excluded_headers = Some(Vec::new());
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(scope_region.region)
        .name(scope_region.service)
        .time(signed_at)
        .settings(settings)
        .build()
        .map_err(|e| Refusal::Incomplete(e.to_string()))?
        .into();
    let signable = SignableRequest::new(
        request.method,
        request.path_and_query,
        signed.into_iter(),
        SignableBody::Bytes(request.body),
    )
    .map_err(|e| Refusal::Incomplete(e.to_string()))?;
    let (_, expected) = sign(signable, &params)
        .map_err(|e| Refusal::Incomplete(e.to_string()))?
        .into_parts();
    if expected == auth.signature {
        Ok(())
    } else {
        Err(Refusal::Mismatch)
    }
}

/// The parts of a credential scope the fake routes on, borrowed from the text they were
/// parsed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope<'a> {
    /// The region, such as `us-east-1`.
    pub region: &'a str,
    /// The signing name, such as `ec2` or `elasticloadbalancing`.
    pub service: &'a str,
}

/// Parses the scope out of an `Authorization` header value.
pub fn from_authorization(header: &str) -> Option<Scope<'_>> {
    // Spaces after a part are the credential's own to trim (from_credential does).
    let rest = header.trim_start().strip_prefix("AWS4-HMAC-SHA256")?;
    let cred = rest
        .split(',')
        .find_map(|p| p.trim_start().strip_prefix("Credential="))?;
    from_credential(cred)
}

/// Parses the scope out of a credential `AKID/DATE/REGION/SERVICE/aws4_request`: exactly
/// five parts, read in one pass over its bytes.
pub fn from_credential(cred: &str) -> Option<Scope<'_>> {
    let cred = cred.trim();
    // Where the four slashes are.
    let mut slashes = [0usize; 4];
    let mut n = 0;
    for (i, b) in cred.bytes().enumerate() {
        if b == b'/' {
            *slashes.get_mut(n)? = i;
            n += 1;
        }
    }
    let [_, date_end, region_end, service_end] = slashes;
    if n != 4 || cred.get(service_end + 1..)? != "aws4_request" {
        return None;
    }
    let region = cred.get(date_end + 1..region_end)?;
    let service = cred.get(region_end + 1..service_end)?;
    if region.is_empty() || service.is_empty() {
        return None;
    }
    Some(Scope { region, service })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scope as its definition reads it: five '/'-separated parts, the last
    /// `aws4_request`, region and service not empty.
    fn by_definition(cred: &str) -> Option<Scope<'_>> {
        let parts: Vec<&str> = cred.trim().split('/').collect();
        match parts.as_slice() {
            [_, _, region, service, "aws4_request"]
                if !region.is_empty() && !service.is_empty() =>
            {
                Some(Scope { region, service })
            }
            _ => None,
        }
    }

    proptest::proptest! {
        #[test]
        fn the_credential_parser_reads_as_the_definition_does(
            cred in "[ /a-z0-9_-]{0,12}(/[a-z0-9-]{0,3}){0,5}(/aws4_request)?[ /]?"
        ) {
            proptest::prop_assert_eq!(from_credential(&cred), by_definition(&cred));
        }
    }

    #[test]
    fn parses_the_sdk_header() {
        let h = "AWS4-HMAC-SHA256 Credential=AKID/20261129/eu-west-1/ec2/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature=abc";
        assert_eq!(
            from_authorization(h),
            Some(Scope {
                region: "eu-west-1",
                service: "ec2"
            })
        );
        assert_eq!(from_authorization("Bearer x"), None);
        assert_eq!(from_credential("AKID/20261129//ec2/aws4_request"), None);
        assert_eq!(
            from_credential("AKID/20261129/eu-west-1//aws4_request"),
            None
        );
        assert_eq!(
            from_credential("AKID/20261129/eu-west-1/ec2/aws4_request/x"),
            None
        );
        assert_eq!(from_credential("AKID/20261129/eu-west-1/ec2"), None);
        assert_eq!(
            from_credential("AKID/20261129/eu-west-1/ec2/aws4_requests"),
            None
        );
        assert_eq!(
            from_credential(" /d/eu-west-1/ec2/aws4_request "),
            Some(Scope {
                region: "eu-west-1",
                service: "ec2"
            })
        );
    }
}
