//! AWS-style resource ids (`vpc-` + 17 hex digits) and request ids from a seeded generator,
//! so a run with the same seed and the same requests gives the same ids.

use std::sync::atomic::{AtomicU64, Ordering};

/// A deterministic generator of ids (splitmix64).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IdGen {
    state: u64,
    /// The resource ids made since `record`, while recording.
    #[serde(skip)]
    recorded: Option<Vec<String>>,
}

impl IdGen {
    /// A generator for `seed`, mixed with `salt` (such as the region's name).
    pub fn new(seed: u64, salt: &str) -> Self {
        let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
        for b in salt.bytes() {
            state = state.rotate_left(5) ^ u64::from(b);
            state = state.wrapping_mul(0x100_0000_01B3);
        }
        IdGen {
            state,
            recorded: None,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(STEP);
        mix(self.state)
    }

    /// A new id such as `vpc-0a1b2c3d4e5f60718`: `prefix-` and 17 hex digits.
    pub fn resource(&mut self, prefix: &str) -> String {
        let hi = self.next_u64() & 0xF;
        let lo = self.next_u64();
        self.made(prefix, &[(hi, 1), (lo, 16)])
    }

    /// A new short id such as `sir-0a1b2c3d`: `prefix-` and 8 hex digits (Spot requests').
    pub fn short(&mut self, prefix: &str) -> String {
        let v = self.next_u64();
        self.made(prefix, &[(v, 8)])
    }

    /// The id `prefix-` and the hex digits of `parts` (value, digits), recorded when
    /// recording. Written digit by digit: an id is made for every resource, and the
    /// formatting machinery cost several times the rest of the call.
    fn made(&mut self, prefix: &str, parts: &[(u64, u32)]) -> String {
        let digits: u32 = parts.iter().map(|(_, d)| d).sum();
        let mut id = String::with_capacity(prefix.len() + 1 + digits as usize);
        id.push_str(prefix);
        id.push('-');
        for &(v, d) in parts {
            push_hex(&mut id, v, d);
        }
        if let Some(recorded) = &mut self.recorded {
            recorded.push(id.clone());
        }
        id
    }

    /// Starts recording the resource ids made (the consistency layer hides them).
    pub fn record(&mut self) {
        self.recorded = Some(Vec::new());
    }

    /// Stops recording and returns the ids made since [`record`](Self::record).
    pub fn take_recorded(&mut self) -> Vec<String> {
        self.recorded.take().unwrap_or_default()
    }

    /// A number of `digits` decimal digits (for ELB DNS names).
    pub fn digits(&mut self, digits: u32) -> String {
        let modulus = 10u64.pow(digits.min(18));
        format!(
            "{:0width$}",
            self.next_u64() % modulus,
            width = digits as usize
        )
    }

    /// A UUID-shaped request id.
    pub fn request_id(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        uuid_text(a, b)
    }
}

/// How far the generator's state moves per 64 bits drawn (splitmix64's increment).
const STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// The 64 bits drawn at state `z` (splitmix64's output function).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The account's request ids, drawn by any thread without a lock: each id takes the
/// generator's next two steps in one atomic addition, so that one caller after another gets
/// the ids [`IdGen::request_id`] would give from the same state.
#[derive(Debug)]
pub struct RequestIds {
    state: AtomicU64,
}

impl RequestIds {
    /// Ids that continue from `from`'s state.
    pub fn new(from: &IdGen) -> Self {
        RequestIds {
            state: AtomicU64::new(from.state),
        }
    }

    /// The next request id.
    pub fn next(&self) -> String {
        let s = self
            .state
            .fetch_add(STEP.wrapping_mul(2), Ordering::Relaxed);
        uuid_text(
            mix(s.wrapping_add(STEP)),
            mix(s.wrapping_add(STEP).wrapping_add(STEP)),
        )
    }

    /// A generator at the current state (what the state file keeps).
    pub fn generator(&self) -> IdGen {
        IdGen {
            state: self.state.load(Ordering::Relaxed),
            recorded: None,
        }
    }

    /// Continues from `from`'s state (a restored account).
    pub fn restore(&self, from: &IdGen) {
        self.state.store(from.state, Ordering::Relaxed);
    }
}

/// The UUID (version 4, RFC 4122 variant) made of `a` and `b`: 8-4-4-4-12 hex digits of a's
/// high half, a's next 16 bits, the version and a's low 12 bits, the variant and b's top 14
/// bits, and b's low 48 bits. Written digit by digit (one per answer, so the formatting
/// machinery is worth avoiding).
fn uuid_text(a: u64, b: u64) -> String {
    let mut id = String::with_capacity(36);
    push_hex(&mut id, a >> 32, 8);
    id.push('-');
    push_hex(&mut id, (a >> 16) & 0xFFFF, 4);
    id.push('-');
    push_hex(&mut id, 0x4000 | (a & 0xFFF), 4);
    id.push('-');
    push_hex(&mut id, 0x8000 | ((b >> 48) & 0x3FFF), 4);
    id.push('-');
    push_hex(&mut id, b & 0xFFFF_FFFF_FFFF, 12);
    id
}

/// Appends the low `digits` hex digits of `v`, in lower case, zero-padded.
fn push_hex(out: &mut String, v: u64, digits: u32) {
    for i in (0..digits).rev() {
        let nibble = ((v >> (4 * i)) & 0xF) as u8;
        out.push(char::from(if nibble < 10 {
            b'0' + nibble
        } else {
            b'a' + nibble - 10
        }));
    }
}

/// `n` written as `len` characters of `alphabet` (least significant first): the short
/// random parts of names such as a VPC endpoint's DNS names or a hosted zone's id.
pub fn spell(mut n: u64, alphabet: &[u8], len: usize) -> String {
    let base = alphabet.len().max(1) as u64;
    let mut out = String::with_capacity(len);
    for _ in 0..len {
        let i = usize::try_from(n % base).unwrap_or(0);
        out.extend(alphabet.get(i).map(|&b| char::from(b)));
        n /= base;
    }
    out
}

/// Whether `id` is shaped like an id with `prefix`: `prefix-` and 8 or 17 hex digits (an EC2
/// Fleet's: `fleet-` and a UUID).
pub fn is_well_formed(id: &str, prefix: &str) -> bool {
    if prefix == "fleet" {
        let Some(uuid) = id.strip_prefix("fleet-") else {
            return false;
        };
        let parts: Vec<&str> = uuid.split('-').collect();
        return parts.len() == 5
            && parts
                .iter()
                .zip([8, 4, 4, 4, 12])
                .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    id.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|hex| {
            (hex.len() == 8 || hex.len() == 17) && hex.bytes().all(|b| b.is_ascii_hexdigit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_reproducible_and_well_formed() {
        let mut a = IdGen::new(7, "us-east-1");
        let mut b = IdGen::new(7, "us-east-1");
        let id = a.resource("vpc");
        assert_eq!(id, b.resource("vpc"));
        assert!(is_well_formed(&id, "vpc"), "{id}");
        assert_ne!(id, a.resource("vpc"));
        assert!(!is_well_formed("vpc-xyz", "vpc"));
        assert_eq!(a.request_id().len(), 36);
        let short = a.short("sir");
        assert!(
            is_well_formed(&short, "sir") && short.len() == 12,
            "{short}"
        );
    }

    #[test]
    fn spelled_least_significant_first() {
        assert_eq!(spell(0, b"ab", 3), "aaa");
        // 6 is 110 in binary: written from its lowest digit.
        assert_eq!(spell(6, b"ab", 3), "abb");
        assert_eq!(spell(35, b"0123456789abcdefghijklmnopqrstuvwxyz", 2), "z0");
    }

    #[test]
    fn lock_free_request_ids_follow_the_generator() {
        let mut generator = IdGen::new(7, "request-ids");
        let ids = RequestIds::new(&generator);
        for _ in 0..5 {
            assert_eq!(ids.next(), generator.request_id());
        }
        assert_eq!(ids.generator().state, generator.state);
        let other = RequestIds::new(&IdGen::new(8, "x"));
        other.restore(&generator);
        assert_eq!(other.next(), generator.request_id());
    }

    proptest::proptest! {
        #[test]
        fn resource_ids_are_what_format_writes(state: u64, prefix in "[a-z-]{1,24}") {
            let mut ids = IdGen { state, recorded: None };
            let mut drawn = ids.clone();
            let (hi, lo) = (drawn.next_u64() & 0xF, drawn.next_u64());
            proptest::prop_assert_eq!(ids.resource(&prefix), format!("{prefix}-{hi:x}{lo:016x}"));
        }

        #[test]
        fn request_ids_are_the_uuids_format_writes(a: u64, b: u64) {
            let formatted = format!(
                "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
                a >> 32,
                (a >> 16) & 0xFFFF,
                a & 0xFFF,
                0x8000 | ((b >> 48) & 0x3FFF),
                b & 0xFFFF_FFFF_FFFF
            );
            proptest::prop_assert_eq!(uuid_text(a, b), formatted);
        }
    }
}
