//! The SigV4 scope parser, which routes every request: from an `Authorization` header and from
//! a presigned `X-Amz-Credential`. Whatever comes in: no panic, and a scope it finds is made
//! of parts of its input (the region and service are between its slashes, never empty).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for scope in [
        fakeaws::protocol::sigv4::from_authorization(text),
        fakeaws::protocol::sigv4::from_credential(text),
    ]
    .into_iter()
    .flatten()
    {
        assert!(!scope.region.is_empty() && !scope.service.is_empty());
        assert!(text.contains(&format!("/{}/{}/", scope.region, scope.service)));
    }
});
