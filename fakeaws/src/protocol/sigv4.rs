//! Routing by the SigV4 credential scope: `AKID/DATE/REGION/SERVICE/aws4_request`, from the
//! `Authorization` header or the presigned `X-Amz-Credential` parameter. The signature itself
//! is not verified: any credentials are accepted, as the fake holds no secrets.

/// The parts of a credential scope the fake routes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The region, such as `us-east-1`.
    pub region: String,
    /// The signing name, such as `ec2` or `elasticloadbalancing`.
    pub service: String,
}

/// Parses the scope out of an `Authorization` header value.
pub fn from_authorization(header: &str) -> Option<Scope> {
    let rest = header.trim().strip_prefix("AWS4-HMAC-SHA256")?;
    let cred = rest
        .split(',')
        .map(str::trim)
        .find_map(|p| p.strip_prefix("Credential="))?;
    from_credential(cred)
}

/// Parses the scope out of a credential `AKID/DATE/REGION/SERVICE/aws4_request`.
pub fn from_credential(cred: &str) -> Option<Scope> {
    let parts: Vec<&str> = cred.trim().split('/').collect();
    match parts.as_slice() {
        [_key, _date, region, service, "aws4_request"]
            if !region.is_empty() && !service.is_empty() =>
        {
            Some(Scope {
                region: (*region).to_string(),
                service: (*service).to_string(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sdk_header() {
        let h = "AWS4-HMAC-SHA256 Credential=AKID/20261129/eu-west-1/ec2/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature=abc";
        assert_eq!(
            from_authorization(h),
            Some(Scope {
                region: "eu-west-1".into(),
                service: "ec2".into()
            })
        );
        assert_eq!(from_authorization("Bearer x"), None);
        assert_eq!(from_credential("AKID/20261129//ec2/aws4_request"), None);
    }
}
