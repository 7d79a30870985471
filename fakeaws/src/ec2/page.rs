//! `MaxResults` / `NextToken` pagination of EC2 Describe calls. Records are listed in a
//! stable order (by id); the token names the last record of the previous page.

use crate::ec2::error::Code;
use crate::protocol::error::ApiError;

/// Cuts one page out of `items` (sorted by `key`), returning the page and the next token.
pub fn page<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> &str,
    max_results: Option<i32>,
    next_token: Option<&str>,
) -> Result<(Vec<T>, Option<String>), ApiError> {
    let after = match next_token.filter(|t| !t.is_empty()) {
        Some(t) => Some(decode_token(t)?),
        None => None,
    };
    let mut rest: Vec<T> = match &after {
        Some(last) => items
            .into_iter()
            .filter(|i| key(i) > last.as_str())
            .collect(),
        None => items,
    };
    let Some(max) = max_results else {
        return Ok((rest, None));
    };
    let max = usize::try_from(max.max(1)).unwrap_or(1);
    if rest.len() <= max {
        return Ok((rest, None));
    }
    rest.truncate(max);
    let token = rest.last().map(|l| encode_token(key(l)));
    Ok((rest, token))
}

/// Checks a `MaxResults` the model leaves unbounded against the documented range.
pub fn check_max_results(v: Option<i32>, min: i32, max: i32) -> Result<(), ApiError> {
    match v {
        Some(n) if n < min || n > max => Err(ApiError::invalid_parameter(
            "MaxResults",
            &n.to_string(),
            &format!("Expecting a value between {min} and {max}."),
        )),
        _ => Ok(()),
    }
}

/// The token naming `last`, the last record of a page.
pub(crate) fn encode_token(last: &str) -> String {
    let hex: String = last.bytes().map(|b| format!("{b:02x}")).collect();
    format!("eyJ2IjoxfQ{hex}")
}

/// The refusal of a token this fake did not give.
pub(crate) fn bad_token(token: &str) -> ApiError {
    ApiError::new(
        Code::InvalidPaginationToken,
        format!("The pagination token '{token}' is invalid or expired."),
    )
}

/// The last record a token names.
pub(crate) fn decode_token(token: &str) -> Result<String, ApiError> {
    let bad = || bad_token(token);
    let hex = token.strip_prefix("eyJ2IjoxfQ").ok_or_else(bad)?;
    if hex.len() % 2 != 0 {
        return Err(bad());
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes.ok_or_else(bad)?).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_everything_once() {
        let items: Vec<String> = (0..12).map(|i| format!("id-{i:02}")).collect();
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let (p, next) = page(items.clone(), |s| s.as_str(), Some(5), token.as_deref()).unwrap();
            seen.extend(p);
            match next {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        assert_eq!(seen, items);
        assert_eq!(
            page(items, |s| s.as_str(), Some(5), Some("garbage"))
                .unwrap_err()
                .code,
            "InvalidPaginationToken"
        );
    }
}
