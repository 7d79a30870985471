//! A region's last answers to the read-only operations whose answer is a function of the
//! region's records and the request alone: a poller repeating a describe while nothing
//! changes gets the text answered before, with its own request id, without the operation
//! running again.
//!
//! Sound by construction, not by bookkeeping in each operation:
//! - only operations whose semantics take the region read-only (`&Region`: the compiler
//!   keeps them from changing it) and read no clock are kept ([`KEPT_OPERATIONS`]);
//! - the region's [`Generation`] moves on whenever anything else could have changed it: every
//!   other operation served, a transition applied, every `Fake::with_region`; and a region
//!   handed out whole (`Fake::region`) turns the keeping off for good;
//! - a generation is never reused (one counter for the process), so a region made anew
//!   (`Fake::reset`, a state file) cannot take an answer of the one it replaced;
//! - nothing is kept or answered while eventual consistency has anything to do or fault
//!   rules are armed, whose answers depend on the clock and on counts.

use std::sync::atomic::{AtomicU64, Ordering};

/// The EC2 operations whose answers are kept (ELB's are not: its DescribeTags is another
/// operation of the same name): each is served by a function taking `&Region`, and reads no
/// clock (`crate::ec2::mod`'s `impl Api for Region`).
pub const KEPT_OPERATIONS: &[&str] = &[
    "DescribeAccountAttributes",
    "DescribeAvailabilityZones",
    "DescribeInternetGateways",
    "DescribeNetworkAcls",
    "DescribeRegions",
    "DescribeSubnets",
    "DescribeTags",
    "DescribeVpcAttribute",
    "DescribeVpcs",
];

/// The largest answer kept, and the largest request whose answer is: pollers repeat small
/// describes.
const MAX_KEPT: usize = 64 * 1024;

/// How many answers a region keeps (the oldest goes first).
const KEPT: usize = 8;

/// Every generation handed out so far, in the process.
static GENERATIONS: AtomicU64 = AtomicU64::new(0);

/// A value no region has had before.
fn fresh() -> u64 {
    GENERATIONS.fetch_add(1, Ordering::Relaxed) + 1
}

/// Which state of its records a region is in: a new value after every change that could
/// matter to an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

impl Default for Generation {
    fn default() -> Self {
        Generation(fresh())
    }
}

/// One kept answer.
#[derive(Debug)]
struct Kept {
    action: &'static str,
    generation: Generation,
    /// The request as it came: its query string and its body.
    query: Vec<u8>,
    body: Vec<u8>,
    /// The answer's text, and where its request id lies in it.
    answer: String,
    id_at: usize,
    id_len: usize,
}

/// `text`, an answer whose request id lies at `(at, len)`, with `request_id` in its place.
pub(crate) fn with_request_id(
    text: &str,
    (at, len): (usize, usize),
    request_id: &str,
) -> Option<String> {
    let mut out = String::with_capacity(text.len() - len + request_id.len());
    out.push_str(text.get(..at)?);
    out.push_str(request_id);
    out.push_str(text.get(at + len..)?);
    Some(out)
}

/// A region's kept answers and its generation.
#[derive(Debug, Default)]
pub struct Answers {
    generation: Generation,
    kept: Vec<Kept>,
}

impl Answers {
    /// The region may have changed: no answer kept so far is given again.
    pub fn changed(&mut self) {
        self.generation = Generation::default();
        self.kept.clear();
    }

    /// How many answers are kept.
    #[cfg(test)]
    pub fn kept(&self) -> usize {
        self.kept.len()
    }

    /// The region's generation now.
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The answer kept for this request of `action` (its query string and body), written
    /// with `request_id`; `None` when none is, or when the region changed since.
    pub fn answer(
        &self,
        action: &str,
        (query, body): (&[u8], &[u8]),
        request_id: &str,
    ) -> Option<String> {
        let k = self.kept.iter().find(|k| {
            k.action == action
                && k.generation == self.generation
                && k.body == body
                && k.query == query
        })?;
        with_request_id(&k.answer, (k.id_at, k.id_len), request_id)
    }

    /// Keeps `answer` (written with `request_id`, whose text it holds once) for this request
    /// of `action`, when the region is still at `generation`, the generation the answer was
    /// made at. Which operations are kept is the caller's to decide (`Fake::dispatch`, by
    /// [`KEPT_OPERATIONS`]).
    pub fn keep(
        &mut self,
        action: &'static str,
        generation: Generation,
        (query, body): (&[u8], &[u8]),
        answer: &str,
        request_id: &str,
    ) {
        if generation != self.generation
            || answer.len() > MAX_KEPT
            || query.len() + body.len() > MAX_KEPT
        {
            return;
        }
        let Some(id_at) = answer.find(request_id) else {
            return;
        };
        // EC2 writes the request id first, before any record: the first place it is found
        // is the place.
        let kept = Kept {
            action,
            generation,
            query: query.to_vec(),
            body: body.to_vec(),
            answer: answer.to_string(),
            id_at,
            id_len: request_id.len(),
        };
        self.kept.retain(|k| k.action != action);
        if self.kept.len() >= KEPT {
            self.kept.remove(0);
        }
        self.kept.push(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "5b3e0a4c-0000-4000-8000-000000000001";

    fn answer_with(id: &str) -> String {
        format!("<DescribeVpcsResponse><requestId>{id}</requestId><vpcSet/></DescribeVpcsResponse>")
    }

    #[test]
    fn a_kept_answer_comes_back_with_the_new_request_id() {
        let mut a = Answers::default();
        let request = (&b""[..], &b"Action=DescribeVpcs&Version=2016-11-15"[..]);
        let at = a.generation();
        a.keep("DescribeVpcs", at, request, &answer_with(ID), ID);
        let other = "5b3e0a4c-0000-4000-8000-000000000002";
        assert_eq!(
            a.answer("DescribeVpcs", request, other),
            Some(answer_with(other))
        );
        // Another request, another action: nothing kept for them.
        let filtered = (
            &b""[..],
            &b"Action=DescribeVpcs&Version=2016-11-15&VpcId.1=x"[..],
        );
        assert_eq!(a.answer("DescribeVpcs", filtered, other), None);
        assert_eq!(a.answer("DescribeSubnets", request, other), None);
    }

    #[test]
    fn a_change_forgets_every_answer_and_a_late_one_is_not_kept() {
        let mut a = Answers::default();
        let request = (&b""[..], &b"Action=DescribeVpcs"[..]);
        let before = a.generation();
        a.keep("DescribeVpcs", before, request, &answer_with(ID), ID);
        a.changed();
        assert_ne!(a.generation(), before);
        assert_eq!(a.answer("DescribeVpcs", request, ID), None);
        // Made before the change, written after it: not kept.
        a.keep("DescribeVpcs", before, request, &answer_with(ID), ID);
        assert_eq!(a.answer("DescribeVpcs", request, ID), None);
    }

    #[test]
    fn generations_are_never_reused() {
        let a = Answers::default();
        let b = Answers::default();
        assert_ne!(a.generation(), b.generation());
    }
}
