//! Decoding of the form body shared by ec2Query and awsQuery into typed inputs.
//!
//! A `FormReader` holds the request's parameters and hands them out as the generated
//! decoders ask for them; whatever is left at the end was not in the model
//! (`UnknownParameter`). Lists are `Key.N` (ec2Query, always flattened) or
//! `Key.member.N` (awsQuery); structures are `Key.Member`.

use std::borrow::Cow;

use aws_smithy_types::date_time::Format;
use aws_smithy_types::{Blob, DateTime};

use crate::protocol::error::ApiError;
use crate::protocol::error::Common;

/// Parameters that belong to the request envelope rather than to an operation's input.
const ENVELOPE_KEYS: [&str; 15] = [
    "Action",
    "Version",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
    "AWSAccessKeyId",
    "SignatureVersion",
    "SignatureMethod",
    "Signature",
    "Timestamp",
    "Expires",
];

/// Where `Action` is in [`ENVELOPE_KEYS`].
const ACTION: usize = 0;
/// Where `Version` is in [`ENVELOPE_KEYS`].
const VERSION: usize = 1;

/// One item of a list, as [`FormReader::list_items`] finds it.
#[derive(Debug)]
struct ListItem {
    /// Its index (`N` of `name.N`).
    index: u32,
    /// Where the key `name.N` itself is in `params`.
    exact: Option<usize>,
    /// The range of `params` under `name.N.`.
    under: Option<(usize, usize)>,
    /// Whether any of its keys is untaken.
    live: bool,
}

/// The parameters of one request, consumed as they are decoded.
#[derive(Debug, Default)]
pub struct FormReader {
    /// Every decoded key and value of the operation's input, one after another: one buffer
    /// for the request rather than two strings per parameter. A value is copied out of it
    /// when it is taken.
    text: String,
    /// The operation's input, sorted by key, one entry per key (the last value given); a
    /// value is `None` once taken. A sorted vector rather than a map: a request holds a few
    /// dozen keys at most, read one by one (a binary search over contiguous keys), and taking
    /// one is clearing its slot, where a map would rebalance.
    params: Vec<Param>,
    /// How many values in `params` are not taken yet.
    left: usize,
    /// The first bytes of the input's keys, as bits: a member whose name starts otherwise is
    /// absent without a search (most of an operation's members are absent from a request).
    firsts: [u64; 4],
    /// The keys under the structures last read (`at.`...): the range of `params` they fill,
    /// and the length of `at`. Their members are looked up within that range alone, by what
    /// follows `at.`. Several, since a structure's lists nest other structures between its
    /// members (`IpPermissions.1`, then `IpPermissions.1.IpRanges.1`, then back).
    scopes: [Option<(usize, usize, usize)>; SCOPES],
    /// Where the next scope found is kept in `scopes` (the oldest is replaced).
    next_scope: usize,
    /// Where the member last found is in `params`: taking it needs no search.
    hit: Option<usize>,
    /// The envelope (`Action`, `Version`, a presigned request's `X-Amz-*`): set aside as it
    /// is read, since every request carries it and no operation decodes it.
    /// Each at its key's place in [`ENVELOPE_KEYS`]; a served action's name and an API
    /// version, as nearly every request gives them, are the fake's own copies.
    envelope: [Option<Cow<'static, str>>; ENVELOPE_KEYS.len()],
    /// How a value outside the model's constraints is reported: EC2 says
    /// `InvalidParameterValue`, awsQuery services (ELB) say `ValidationError`.
    constraint: Constraint,
}

/// How many structures' key ranges a reader keeps ([`FormReader::scope_of`]).
const SCOPES: usize = 4;

/// Where a text lies in [`FormReader::text`]: its start and end.
type Span = (usize, usize);

/// One parameter of the input: where its key and its value (until taken) lie in the text.
#[derive(Debug, Clone, Copy)]
struct Param {
    key: Span,
    value: Option<Span>,
}

/// The text at `span` of `text`.
fn spanned(text: &str, (start, end): Span) -> &str {
    text.get(start..end).unwrap_or_default()
}

/// The error style of a model-constraint violation (range, length, count).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Constraint {
    /// EC2: `InvalidParameterValue`.
    #[default]
    Ec2,
    /// awsQuery (ELB): `ValidationError` with "1 validation error detected: ...".
    AwsQuery,
}

/// A value that can be read from the form at a key.
pub trait Decode: Sized {
    /// Reads the value at `key` (a structure: every key under `key.`); `None` when absent.
    fn decode(r: &mut FormReader, key: &str) -> Result<Option<Self>, ApiError>;

    /// Reads the member `name` of the structure (or the item `name` of the list) at `at`,
    /// which the reader has `found`: the key is built only when the value is more than the
    /// one parameter there.
    fn decode_member(
        r: &mut FormReader,
        found: Found,
        at: &str,
        name: &str,
    ) -> Result<Option<Self>, ApiError> {
        let mut buf = [0u8; 256];
        match join_into(&mut buf, at, name) {
            Some(key) => Self::decode_item(r, found, key),
            None => Self::decode_item(r, found, &join(at, name)),
        }
    }

    /// Reads the value at `key`, which the reader has `found` (a list's item, or a member
    /// whose key is built).
    fn decode_item(r: &mut FormReader, found: Found, key: &str) -> Result<Option<Self>, ApiError> {
        r.hit = Some(found.index);
        Self::decode(r, key)
    }
}

/// A member that a request gives, as [`FormReader::members`] finds it: its first untaken
/// parameter (its own key, or the first under it), and whether that is its own key. Only the
/// reader makes one, for the reader that holds that parameter.
#[derive(Debug, Clone, Copy)]
pub struct Found {
    /// Where the parameter is in the reader's `params`.
    index: usize,
    /// Whether its key is the member's own (not one under it).
    own: bool,
}

/// `at.name` (or `name` at the root) written into `buf`, when it fits: the key of a member
/// whose presence is checked before it is read, without an allocation for the many members a
/// request leaves out.
fn join_into<'b>(buf: &'b mut [u8; 256], at: &str, name: &str) -> Option<&'b str> {
    let dot: &[u8] = if at.is_empty() { b"" } else { b"." };
    let mut len = 0;
    for part in [at.as_bytes(), dot, name.as_bytes()] {
        buf.get_mut(len..len + part.len())?.copy_from_slice(part);
        len += part.len();
    }
    std::str::from_utf8(buf.get(..len)?).ok()
}

/// Whether `k` sorts before `at` followed by the byte `sep`.
fn below(k: &str, at: &str, sep: u8) -> bool {
    let (k, at) = (k.as_bytes(), at.as_bytes());
    match k.get(..at.len()) {
        Some(head) => match head.cmp(at) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => k.get(at.len()).is_none_or(|b| *b < sep),
        },
        // Shorter than `at`: before it unless it sorts after `at`'s start.
        None => at.get(..k.len()).is_some_and(|start| k <= start),
    }
}

/// Where the envelope key `key` (its bytes as given, or decoded) is in [`ENVELOPE_KEYS`].
fn envelope_key(key: &[u8]) -> Option<usize> {
    ENVELOPE_KEYS.iter().position(|k| k.as_bytes() == key)
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        return name.to_string();
    }
    let mut key = String::with_capacity(at.len() + 1 + name.len());
    key.push_str(at);
    key.push('.');
    key.push_str(name);
    key
}

/// Appends `n` in decimal (a list item's index), without the formatting machinery: it is
/// written once per item of every list a request holds.
fn push_index(out: &mut String, n: u32) {
    if n >= 10 {
        push_index(out, n / 10);
    }
    out.push(char::from(b'0' + u8::try_from(n % 10).unwrap_or(0)));
}

/// Text shorter than this is searched byte by byte: memchr's setup costs more on it.
const SHORT: usize = 16;

/// Where `a` or `b` first is in `hay`.
fn find(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < SHORT {
        hay.iter().position(|x| *x == a || *x == b)
    } else {
        memchr::memchr2(a, b, hay)
    }
}

/// Where `a` first is in `hay`.
fn find_byte(a: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < SHORT {
        hay.iter().position(|x| *x == a)
    } else {
        memchr::memchr(a, hay)
    }
}

/// The pairs of a form: the text between one '&' and the next (empty ones included).
struct Pairs<'a>(Option<&'a [u8]>);

impl<'a> Iterator for Pairs<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.0?;
        match find_byte(b'&', rest) {
            Some(at) => {
                self.0 = rest.get(at + 1..);
                rest.get(..at)
            }
            None => {
                self.0 = None;
                Some(rest)
            }
        }
    }
}

/// Appends the bytes form component `bytes` stands for to `out`: '+' is a space, `%XX` the
/// byte XX, a '%' without two hex digits after it itself. A component with neither '+' nor
/// '%' (nearly all an SDK sends) is copied as it is.
fn decode_into(out: &mut Vec<u8>, bytes: &[u8]) {
    fn hex(b: Option<&u8>) -> Option<u8> {
        char::from(*b?)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    }
    // The text between one '+' or '%' and the next is copied whole (an SDK's base64 user data
    // holds an escape every few dozen bytes).
    let mut rest = bytes;
    while let Some(at) = find(b'+', b'%', rest) {
        out.extend_from_slice(rest.get(..at).unwrap_or_default());
        let next = match rest.get(at) {
            Some(b'+') => {
                out.push(b' ');
                at + 1
            }
            _ => match (hex(rest.get(at + 1)), hex(rest.get(at + 2))) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    at + 3
                }
                _ => {
                    out.push(b'%');
                    at + 1
                }
            },
        };
        rest = rest.get(next..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
}

/// The value of the envelope parameter at `index` in [`ENVELOPE_KEYS`], given as `raw`: a
/// served action's name or an API version given as it is (as every SDK gives them) is the
/// generated code's own text, without a copy; anything else is decoded.
fn envelope_value(index: usize, raw: &[u8]) -> Cow<'static, str> {
    use crate::generated::{ec2, elb};
    // Names and versions are letters, digits and dashes: nothing to decode. (One pass over a
    // few bytes; memchr's setup costs more on text this short.)
    let known = Some(raw)
        .filter(|raw| raw.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-'))
        .and_then(|raw| std::str::from_utf8(raw).ok())
        .and_then(|v| match index {
            ACTION => ec2::Action::from_name(v)
                .map(|a| a.name())
                .or_else(|| elb::Action::from_name(v).map(|a| a.name())),
            VERSION => [ec2::API_VERSION, elb::API_VERSION]
                .into_iter()
                .find(|known| *known == v),
            _ => None,
        });
    match known {
        Some(v) => Cow::Borrowed(v),
        None => Cow::Owned(decode_component(raw)),
    }
}

/// Decodes one form component as `form_urlencoded` does ([`decode_into`], then UTF-8 that
/// does not decode replaced by U+FFFD).
fn decode_component(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    decode_into(&mut out, bytes);
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

impl FormReader {
    /// A reader over `x-www-form-urlencoded` bytes (the body, or the query string).
    pub fn from_urlencoded(parts: &[&[u8]]) -> Self {
        // Every component decoded into one buffer, checked as UTF-8 once. When that fails, or
        // when the buffer decodes only across the components' edges, each component is
        // decoded on its own (invalid UTF-8 replaced within it).
        Self::parse(parts, false).unwrap_or_else(|| Self::parse(parts, true).unwrap_or_default())
    }

    /// [`from_urlencoded`](Self::from_urlencoded) decoding the components into one buffer:
    /// as they are (`None` unless the whole is UTF-8 and each component is), or each one
    /// with its invalid UTF-8 replaced (`lossy`).
    fn parse(parts: &[&[u8]], lossy: bool) -> Option<Self> {
        let mut r = FormReader::default();
        // Nothing is reserved for a request of the envelope alone (a describe without
        // parameters); at the input's first key, room for all of its text, and for the pairs
        // an SDK sends (a request of more, or of empty ones: `&&&`, grows it as it needs).
        let mut bytes = Vec::new();
        let mut input: Vec<(Span, Span)> = Vec::new();
        let reserve = |bytes: &mut Vec<u8>, input: &mut Vec<(Span, Span)>| {
            bytes.reserve(parts.iter().map(|p| p.len()).sum());
            let pairs = parts
                .iter()
                .map(|p| memchr::memchr_iter(b'&', p).count() + 1)
                .sum::<usize>();
            input.reserve(pairs.min(256));
        };
        let decode = |bytes: &mut Vec<u8>, component: &[u8]| -> Span {
            let start = bytes.len();
            if lossy {
                bytes.extend_from_slice(decode_component(component).as_bytes());
            } else {
                decode_into(bytes, component);
            }
            (start, bytes.len())
        };
        for part in parts {
            // As `form_urlencoded::parse` splits: pairs between '&'s (empty ones skipped),
            // the key up to the first '=', a pair without one an empty value.
            for pair in Pairs(Some(part)) {
                if pair.is_empty() {
                    continue;
                }
                let (key, value) = match find_byte(b'=', pair) {
                    Some(at) => (
                        pair.get(..at).unwrap_or_default(),
                        pair.get(at + 1..).unwrap_or_default(),
                    ),
                    None => (pair, &[][..]),
                };
                // An envelope key, nearly always given as it is, is matched before it would be
                // copied; one given encoded, once decoded.
                if let Some(k) = envelope_key(key) {
                    r.set_envelope(k, envelope_value(k, value));
                    continue;
                }
                if bytes.capacity() == 0 {
                    reserve(&mut bytes, &mut input);
                }
                let k = decode(&mut bytes, key);
                if let Some(e) = bytes.get(k.0..k.1).and_then(envelope_key) {
                    bytes.truncate(k.0);
                    r.set_envelope(e, envelope_value(e, value));
                    continue;
                }
                let v = decode(&mut bytes, value);
                input.push((k, v));
            }
        }
        let text = String::from_utf8(bytes).ok()?;
        let edges = |(s, e): Span| text.is_char_boundary(s) && text.is_char_boundary(e);
        if !lossy && !input.iter().all(|(k, v)| edges(*k) && edges(*v)) {
            return None;
        }
        r.set_params(text, input);
        Some(r)
    }

    /// Sets the envelope parameter at `index` in [`ENVELOPE_KEYS`] (the last value given
    /// stays).
    fn set_envelope(&mut self, index: usize, value: Cow<'static, str>) {
        if let Some(slot) = self.envelope.get_mut(index) {
            *slot = Some(value);
        }
    }

    /// Takes the input's parameters (their keys and values in `text`), in the order given: a
    /// key given twice keeps its last value.
    fn set_params(&mut self, text: String, mut input: Vec<(Span, Span)>) {
        // Stable: of the pairs with one key, the last given stays last.
        input.sort_by(|a, b| spanned(&text, a.0).cmp(spanned(&text, b.0)));
        let mut params: Vec<Param> = Vec::with_capacity(input.len());
        let mut firsts = [0u64; 4];
        for (k, v) in input {
            match params.last_mut() {
                Some(last) if spanned(&text, last.key) == spanned(&text, k) => last.value = Some(v),
                _ => {
                    if let Some(&b) = spanned(&text, k).as_bytes().first()
                        && let Some(word) = firsts.get_mut(usize::from(b >> 6))
                    {
                        *word |= 1 << (b & 63);
                    }
                    params.push(Param {
                        key: k,
                        value: Some(v),
                    });
                }
            }
        }
        self.left = params.len();
        self.params = params;
        self.firsts = firsts;
        self.text = text;
    }

    /// The key of `p`.
    fn key(&self, p: &Param) -> &str {
        spanned(&self.text, p.key)
    }

    /// Where `key` is in `params`, taken or not.
    fn position(&self, key: &str) -> Option<usize> {
        if let Some(i) = self
            .hit
            .filter(|i| self.params.get(*i).is_some_and(|p| self.key(p) == key))
        {
            return Some(i);
        }
        self.params.binary_search_by(|p| self.key(p).cmp(key)).ok()
    }

    /// The range of `params` whose keys lie under `at.` (`at` not the root), when any do.
    fn scope_of(&mut self, at: &str) -> Option<(usize, usize)> {
        if let Some(range) = self.cached_scope(at) {
            return Some(range);
        }
        // The keys from `at.` up to `at/` ('/' follows '.').
        let lo = self
            .params
            .partition_point(|p| below(self.key(p), at, b'.'));
        let hi = self
            .params
            .partition_point(|p| below(self.key(p), at, b'/'));
        if lo >= hi {
            return None;
        }
        self.keep_scope(lo, hi, at.len());
        Some((lo, hi))
    }

    /// The range of `params` under `at.` when it is one of the scopes kept.
    fn cached_scope(&self, at: &str) -> Option<(usize, usize)> {
        // The newest first: a list keeps its item's range just before the item is read.
        let mut newest = (1..=SCOPES).filter_map(|back| {
            self.scopes
                .get((self.next_scope + SCOPES - back) % SCOPES)
                .copied()
                .flatten()
        });
        newest.find_map(|(lo, hi, len)| {
            // A non-empty range of keys under `x.`, with `x` as long as `at`, whose first key
            // starts with `at`, is `at`'s.
            let first = self.params.get(lo).map(|p| self.key(p).as_bytes());
            (len == at.len() && first.and_then(|k| k.get(..len)) == Some(at.as_bytes()))
                .then_some((lo, hi))
        })
    }

    /// Keeps `lo..hi`, not empty, as the range of `params` under a key of `len` bytes and a
    /// dot (the oldest scope kept is replaced).
    fn keep_scope(&mut self, lo: usize, hi: usize, len: usize) {
        if let Some(slot) = self.scopes.get_mut(self.next_scope) {
            *slot = Some((lo, hi, len));
        }
        self.next_scope = (self.next_scope + 1) % SCOPES;
    }

    /// The untaken parameters from the first key not below `from`, in key order.
    fn keys_from<'a>(&'a self, from: &str) -> impl Iterator<Item = &'a str> + 'a {
        let start = self.params.partition_point(|p| self.key(p) < from);
        self.params
            .get(start..)
            .unwrap_or_default()
            .iter()
            .filter(|p| p.value.is_some())
            .map(|p| self.key(p))
    }

    /// A reader over already decoded pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut r = FormReader::default();
        let mut text = String::new();
        let mut input = Vec::new();
        for (k, v) in pairs {
            let (k, v) = (k.into(), v.into());
            match envelope_key(k.as_bytes()) {
                Some(e) => r.set_envelope(e, Cow::Owned(v)),
                None => {
                    let start = text.len();
                    text.push_str(&k);
                    let mid = text.len();
                    text.push_str(&v);
                    input.push(((start, mid), (mid, text.len())));
                }
            }
        }
        r.set_params(text, input);
        r
    }

    /// Sets how constraint violations are reported (EC2 by default).
    pub fn set_constraint(&mut self, c: Constraint) {
        self.constraint = c;
    }

    fn violation(&self, key: &str, value: &str, constraint: &str) -> ApiError {
        match self.constraint {
            Constraint::Ec2 => ApiError::invalid_parameter(key, value, constraint),
            Constraint::AwsQuery => ApiError::new(
                Common::ValidationError,
                format!(
                    "1 validation error detected: Value '{value}' at '{key}' failed to satisfy constraint: {constraint}"
                ),
            ),
        }
    }

    /// The value of a parameter, of the input or of the envelope (`Action`, `Version`, ...),
    /// without consuming it.
    pub fn peek(&self, key: &str) -> Option<&str> {
        // An envelope key is never one of the input's: it is set aside as it is read.
        if let Some(index) = envelope_key(key.as_bytes()) {
            return self.envelope.get(index)?.as_deref();
        }
        let i = self.position(key)?;
        Some(spanned(&self.text, self.params.get(i)?.value?))
    }

    /// Every parameter: the operation's input in key order, then the envelope (until it is
    /// stripped).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params
            .iter()
            .filter_map(|p| Some((self.key(p), spanned(&self.text, p.value?))))
            .chain(
                ENVELOPE_KEYS
                    .iter()
                    .zip(&self.envelope)
                    .filter_map(|(k, v)| Some((*k, v.as_deref()?))),
            )
    }

    /// The first parameter, in key order, holding a character XML 1.0 forbids (in its key or
    /// its value), and that character. One pass over the request's text finds none in nearly
    /// every request; the parameters are looked at one by one only when it does.
    pub fn first_non_xml(&self) -> Option<(&str, char)> {
        use crate::protocol::xml::first_non_xml_char;
        if first_non_xml_char(&self.text).is_none()
            && self
                .envelope
                .iter()
                .flatten()
                // The fake's own names and versions are clean.
                .filter(|v| matches!(v, Cow::Owned(_)))
                .all(|v| first_non_xml_char(v).is_none())
        {
            return None;
        }
        self.pairs()
            .filter_map(|(k, v)| {
                first_non_xml_char(k)
                    .or_else(|| first_non_xml_char(v))
                    .map(|c| (k, c))
            })
            .min_by_key(|(k, _)| *k)
    }

    /// Removes the envelope parameters, leaving only the operation's input.
    pub fn strip_envelope(&mut self) {
        self.envelope = Default::default();
    }

    /// Takes the raw value at exactly `key`.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let i = self.position(key)?;
        let value = self.params.get_mut(i)?.value.take()?;
        self.left -= 1;
        Some(spanned(&self.text, value).to_owned())
    }

    /// Whether any parameter is `at` itself or lies under `at.` (always true for the root).
    pub fn has_prefix(&self, at: &str) -> bool {
        let Some(&first) = at.as_bytes().first() else {
            return true;
        };
        let word = self
            .firsts
            .get(usize::from(first >> 6))
            .copied()
            .unwrap_or(0);
        if word & (1 << (first & 63)) == 0 {
            return false;
        }
        // A list's item, whose keys the list has just found: no search.
        if let Some((lo, hi)) = self.cached_scope(at)
            && self
                .params
                .get(lo..hi)
                .is_some_and(|under| under.iter().any(|p| p.value.is_some()))
        {
            return true;
        }
        self.keys_from(at)
            .take_while(|k| k.starts_with(at))
            .any(|k| k.len() == at.len() || k.as_bytes().get(at.len()) == Some(&b'.'))
    }

    /// The member `name` of `at` as the request gives it: its first untaken parameter, the
    /// member's own key or one under it; `None` when no untaken key is either. Looked up on
    /// its own: the definition a proptest holds [`members`](Self::members) to.
    #[cfg(test)]
    fn member_index(&mut self, at: &str, name: &str) -> Option<Found> {
        // Nothing left to read (a describe without parameters, or a request whose members
        // were all read): no search per member.
        if self.left == 0 {
            return None;
        }
        let (lo, hi, skip) = if at.is_empty() {
            if !self.has_prefix(name) {
                return None;
            }
            (0, self.params.len(), 0)
        } else {
            let (lo, hi) = self.scope_of(at)?;
            (lo, hi, at.len() + 1)
        };
        let under = self.params.get(lo..hi).unwrap_or_default();
        let text = self.text.as_str();
        fn rest(k: &str, skip: usize) -> &[u8] {
            k.get(skip..).unwrap_or_default().as_bytes()
        }
        let name = name.as_bytes();
        let start = under.partition_point(|p| rest(spanned(text, p.key), skip) < name);
        under
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|p| rest(spanned(text, p.key), skip).starts_with(name))
            .position(|p| {
                let r = rest(spanned(text, p.key), skip);
                p.value.is_some() && (r.len() == name.len() || r.get(name.len()) == Some(&b'.'))
            })
            .map(|i| {
                let index = lo + start + i;
                let own = self
                    .params
                    .get(index)
                    .is_some_and(|p| p.key.1 - p.key.0 == skip + name.len());
                Found { index, own }
            })
    }

    /// Whether any parameter is the member `name` of `at`, or lies under it.
    #[cfg(test)]
    fn has_member(&mut self, at: &str, name: &str) -> bool {
        self.member_index(at, name).is_some()
    }

    /// The members of the structure at `at` that the request gives, each found at its first
    /// untaken parameter (as a lookup of that member alone finds it), in one pass over the
    /// structure's keys: `names` are the keys of its members, sorted (none holds a dot).
    /// `None` when no untaken key is `at` or lies under it (the root, `at` empty, is always
    /// there).
    pub fn members<const N: usize>(
        &mut self,
        at: &str,
        names: &[&str; N],
    ) -> Option<[Option<Found>; N]> {
        let mut found = [None; N];
        let (lo, hi, skip) = if at.is_empty() {
            (0, self.params.len(), 0)
        } else if self.left == 0 {
            return None;
        } else {
            match self.scope_of(at) {
                Some((lo, hi)) => (lo, hi, at.len() + 1),
                // Only `at` itself can be there (and is, when untaken).
                None => return self.untaken(at).then_some(found),
            }
        };
        let text = self.text.as_str();
        // The key of the last member found: the keys under one member lie together, so a key
        // that starts with it is under it, without a search.
        let mut last: Option<&[u8]> = None;
        let mut any = false;
        for (index, p) in (lo..).zip(self.params.get(lo..hi).unwrap_or_default()) {
            if p.value.is_none() {
                continue;
            }
            any = true;
            let rest = spanned(text, p.key)
                .as_bytes()
                .get(skip..)
                .unwrap_or_default();
            if let Some(name) = last
                && let Some(after) = rest.strip_prefix(name)
                && after.first().is_none_or(|b| *b == b'.')
            {
                continue;
            }
            let seg = match rest.iter().position(|b| *b == b'.') {
                Some(dot) => rest.get(..dot).unwrap_or_default(),
                None => rest,
            };
            last = None;
            if let Ok(j) = names.binary_search_by(|n| n.as_bytes().cmp(seg))
                && let Some(slot) = found.get_mut(j)
            {
                if slot.is_none() {
                    *slot = Some(Found {
                        index,
                        own: seg.len() == rest.len(),
                    });
                }
                last = Some(seg);
            }
        }
        if !any && !at.is_empty() {
            return self.untaken(at).then_some(found);
        }
        Some(found)
    }

    /// Whether `key` itself is a parameter not taken yet.
    fn untaken(&self, key: &str) -> bool {
        self.position(key)
            .and_then(|i| self.params.get(i))
            .is_some_and(|p| p.value.is_some())
    }

    /// The value of the parameter `found`, taken, when it is the member's own key (a scalar
    /// has no keys under it).
    pub fn take_found(&mut self, found: Found) -> Option<String> {
        if !found.own {
            return None;
        }
        let value = self.params.get_mut(found.index)?.value.take()?;
        self.left -= 1;
        Some(spanned(&self.text, value).to_owned())
    }

    /// How many parameters lie under `at.` (the members of a list such as `InstanceId`).
    pub fn count_under(&self, at: &str) -> usize {
        let prefix = format!("{at}.");
        self.keys_from(&prefix)
            .take_while(|k| k.starts_with(&prefix))
            .count()
    }

    /// Reads member `name` of the structure at `at`, which [`members`](Self::members) found
    /// (or not: absent).
    pub fn field_at<T: Decode>(
        &mut self,
        found: Option<Found>,
        at: &str,
        name: &str,
    ) -> Result<Option<T>, ApiError> {
        match found {
            // Nothing at or under the key: absent, without walking the member's own members
            // (a request sets few of the many its model allows).
            None => Ok(None),
            Some(found) => T::decode_member(self, found, at, name),
        }
    }

    /// Reads the list member `name` of the structure at `at` (looked up on its own: the
    /// tests' way in; generated decoders use [`list_at`](Self::list_at)).
    #[cfg(test)]
    fn list_field<T: Decode>(
        &mut self,
        at: &str,
        name: &str,
        item: Option<&str>,
    ) -> Result<Option<Vec<T>>, ApiError> {
        let found = self.member_index(at, name);
        self.list_at(found, at, name, item)
    }

    /// Reads the list member `name` of the structure at `at`, which
    /// [`members`](Self::members) found (or not: absent): `name.N` when `item` is `None`
    /// (ec2Query), `name.item.N` otherwise (awsQuery). A bare `name=` is an empty list.
    pub fn list_at<T: Decode>(
        &mut self,
        found: Option<Found>,
        at: &str,
        name: &str,
        item: Option<&str>,
    ) -> Result<Option<Vec<T>>, ApiError> {
        let Some(found) = found else {
            return Ok(None);
        };
        let mut present = false;
        // A bare `name=`: the member's own key, the first of its keys when untaken.
        if found.own
            && self
                .params
                .get(found.index)
                .and_then(|p| p.value)
                .is_some_and(|(start, end)| start == end)
        {
            self.take_found(found);
            present = true;
        }
        // `name.item.N` (awsQuery), or `name.N`.
        let mut prefix = join(at, name);
        if let Some(item) = item {
            prefix.push('.');
            prefix.push_str(item);
            if self.peek(&prefix).is_some_and(str::is_empty) {
                self.take(&prefix);
                present = true;
            }
        }
        prefix.push('.');
        let items = self.list_items(&prefix, found.index);
        if items.is_empty() && !present {
            return Ok(None);
        }
        // One key, `prefix.N`, its index cut and written again for each item.
        let mut key = prefix;
        let dotted = key.len();
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            // Where the item's keys are is known: its decoding searches for none of them.
            let (own, first) = match (item.exact, item.under) {
                (Some(at), _) => (true, at),
                (None, Some((lo, _))) => (false, lo),
                // Only another spelling of the index (`+1`) is there: not the item's key.
                (None, None) => continue,
            };
            key.truncate(dotted);
            push_index(&mut key, item.index);
            if let Some((lo, hi)) = item.under {
                self.keep_scope(lo, hi, key.len());
            }
            let found = Found { index: first, own };
            if let Some(v) = T::decode_item(self, found, &key)? {
                out.push(v);
            }
        }
        Ok(Some(out))
    }

    /// The items of the list whose keys start with `dotted` (`name.`, or `name.item.`), in the
    /// order of their indices: each index given by an untaken key (`dotted` then a number
    /// without leading zeros, alone or before a dot), with where its keys are in `params`.
    /// Keys before `from` are not looked at: none of them is untaken and under `dotted`.
    fn list_items(&self, dotted: &str, from: usize) -> Vec<ListItem> {
        let start = from
            + self
                .params
                .get(from..)
                .unwrap_or_default()
                .partition_point(|p| self.key(p) < dotted);
        let mut items: Vec<ListItem> = Vec::new();
        let under = self.params.get(start..).unwrap_or_default();
        for (at, p) in (start..).zip(under) {
            let Some(rest) = self.key(p).strip_prefix(dotted) else {
                break;
            };
            // The index runs to the next dot: a few bytes, searched as bytes (a `char`
            // search costs more on text this short).
            let (seg, nested) = match rest.bytes().position(|b| b == b'.') {
                Some(dot) => (rest.get(..dot).unwrap_or_default(), true),
                None => (rest, false),
            };
            if seg.starts_with('0') {
                continue;
            }
            let Ok(index) = seg.parse::<u32>() else {
                continue;
            };
            // Only the index's own spelling (`1`, not `+1`) is where its keys are; the keys
            // under `dotted` and one index lie together, as they sort.
            let canonical = seg.bytes().all(|b| b.is_ascii_digit());
            if !items.last().is_some_and(|i| i.index == index && canonical) {
                items.push(ListItem {
                    index,
                    exact: None,
                    under: None,
                    live: false,
                });
            }
            let Some(item) = items.last_mut() else {
                continue;
            };
            item.live |= p.value.is_some();
            if !canonical {
                continue;
            }
            if nested {
                item.under = Some(item.under.map_or((at, at + 1), |(lo, _)| (lo, at + 1)));
            } else {
                item.exact = Some(at);
            }
        }
        items.retain(|i| i.live);
        // Lexical order (`10` before `2`) to the order of the indices; an index spelled two
        // ways (`1`, `+1`) is read once.
        items.sort_by_key(|i| i.index);
        items.dedup_by(|later, first| {
            if later.index != first.index {
                return false;
            }
            first.exact = first.exact.or(later.exact);
            first.under = first.under.or(later.under);
            true
        });
        items
    }

    /// Turns an absent required member into `MissingParameter`.
    pub fn required<T>(value: Option<T>, at: &str, name: &str) -> Result<T, ApiError> {
        value.ok_or_else(|| ApiError::missing_parameter(&join(at, name)))
    }

    /// Checks an integer member against the model's `min`/`max`.
    pub fn check_range(
        &self,
        value: Option<i64>,
        at: &str,
        name: &str,
        min: Option<i64>,
        max: Option<i64>,
    ) -> Result<(), ApiError> {
        let Some(v) = value else { return Ok(()) };
        if let Some(min) = min.filter(|m| v < *m) {
            return Err(self.violation(
                &join(at, name),
                &v.to_string(),
                &format!("Member must have value greater than or equal to {min}"),
            ));
        }
        if let Some(max) = max.filter(|m| v > *m) {
            return Err(self.violation(
                &join(at, name),
                &v.to_string(),
                &format!("Member must have value less than or equal to {max}"),
            ));
        }
        Ok(())
    }

    /// Checks a string member's length against the model's `min`/`max`.
    pub fn check_length(
        &self,
        value: Option<&str>,
        at: &str,
        name: &str,
        min: Option<i64>,
        max: Option<i64>,
    ) -> Result<(), ApiError> {
        let Some(v) = value else { return Ok(()) };
        let len = i64::try_from(v.chars().count()).unwrap_or(i64::MAX);
        if min.is_some_and(|m| len < m) || max.is_some_and(|m| len > m) {
            return Err(self.violation(
                &join(at, name),
                v,
                &format!(
                    "Member must have length between {} and {}",
                    min.unwrap_or(0),
                    max.map_or_else(|| "unbounded".to_string(), |m| m.to_string())
                ),
            ));
        }
        Ok(())
    }

    /// Checks a list member's length against the model's `min`/`max`.
    pub fn check_count(
        &self,
        value: Option<usize>,
        at: &str,
        name: &str,
        min: Option<i64>,
        max: Option<i64>,
    ) -> Result<(), ApiError> {
        let Some(n) = value else { return Ok(()) };
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
            return Err(self.violation(
                &join(at, name),
                &format!("{n} members"),
                &format!(
                    "Member must have between {} and {} members",
                    min.unwrap_or(0),
                    max.map_or_else(|| "unbounded".to_string(), |m| m.to_string())
                ),
            ));
        }
        Ok(())
    }

    /// Fails with `NotImplemented` when the request sets a member fakeaws does not serve.
    pub fn reject_unsupported(&self, op: &str, keys: &[&str]) -> Result<(), ApiError> {
        match keys.iter().find(|k| self.has_prefix(k)) {
            Some(k) => Err(ApiError::not_implemented(format!(
                "fakeaws does not implement the parameter {k} of {op}"
            ))),
            None => Ok(()),
        }
    }

    /// Fails with `UnknownParameter` when a parameter was not part of the operation's input.
    pub fn finish(&mut self) -> Result<(), ApiError> {
        match self.params.iter().find(|p| p.value.is_some()) {
            Some(p) => Err(ApiError::unknown_parameter(self.key(p))),
            None => Ok(()),
        }
    }
}

/// Where a value was read, for the errors that name it: a key as given, or the member `name`
/// of the structure at `at` (joined only when an error names it).
#[derive(Debug, Clone, Copy)]
pub enum KeyText<'a> {
    /// A whole key.
    Whole(&'a str),
    /// The member `.1` of the structure (or list) at `.0`.
    Member(&'a str, &'a str),
}

impl KeyText<'_> {
    /// The key as text.
    pub fn text(&self) -> Cow<'_, str> {
        match *self {
            KeyText::Whole(key) => Cow::Borrowed(key),
            KeyText::Member(at, name) => Cow::Owned(join(at, name)),
        }
    }
}

/// A value that is one parameter (a string, a number, a boolean, a timestamp, a blob, an
/// enum): read from its raw text.
pub trait Scalar: Sized {
    /// The value `raw` stands for; `key` names it when it stands for none.
    fn parse(raw: String, key: KeyText<'_>) -> Result<Self, ApiError>;
}

/// The scalar `raw` stands for, when there is one; `key` names it when it stands for none.
pub fn scalar<T: Scalar>(raw: Option<String>, key: KeyText<'_>) -> Result<Option<T>, ApiError> {
    raw.map(|raw| T::parse(raw, key)).transpose()
}

/// Implements [`Decode`] for a [`Scalar`]: its value is the one parameter at its key.
macro_rules! scalar_decode {
    ($t:ty) => {
        impl $crate::protocol::query::Decode for $t {
            fn decode(
                r: &mut $crate::protocol::query::FormReader,
                key: &str,
            ) -> Result<Option<Self>, $crate::protocol::error::ApiError> {
                use $crate::protocol::query::{KeyText, scalar};
                scalar(r.take(key), KeyText::Whole(key))
            }

            fn decode_member(
                r: &mut $crate::protocol::query::FormReader,
                found: $crate::protocol::query::Found,
                at: &str,
                name: &str,
            ) -> Result<Option<Self>, $crate::protocol::error::ApiError> {
                use $crate::protocol::query::{KeyText, scalar};
                scalar(r.take_found(found), KeyText::Member(at, name))
            }

            fn decode_item(
                r: &mut $crate::protocol::query::FormReader,
                found: $crate::protocol::query::Found,
                key: &str,
            ) -> Result<Option<Self>, $crate::protocol::error::ApiError> {
                use $crate::protocol::query::{KeyText, scalar};
                scalar(r.take_found(found), KeyText::Whole(key))
            }
        }
    };
}
pub(crate) use scalar_decode;

/// `raw` (trimmed) as a `T`, or `InvalidParameterValue` saying it was expected to be `what`.
fn parsed<T: std::str::FromStr>(raw: String, key: KeyText<'_>, what: &str) -> Result<T, ApiError> {
    raw.trim()
        .parse::<T>()
        .map_err(|_| ApiError::invalid_parameter(&key.text(), &raw, &format!("Expected {what}.")))
}

impl Scalar for String {
    fn parse(raw: String, _key: KeyText<'_>) -> Result<Self, ApiError> {
        Ok(raw)
    }
}

/// Implements [`Scalar`] for number types, each read as `FromStr` reads it.
macro_rules! number_scalar {
    ($($t:ty: $what:literal),*) => {$(
        impl Scalar for $t {
            fn parse(raw: String, key: KeyText<'_>) -> Result<Self, ApiError> {
                parsed(raw, key, $what)
            }
        }
    )*};
}
number_scalar!(i32: "an integer", i64: "an integer", f64: "a number", f32: "a number");

impl Scalar for crate::protocol::Float {
    fn parse(raw: String, key: KeyText<'_>) -> Result<Self, ApiError> {
        parsed(raw, key, "a number").map(crate::protocol::Float)
    }
}

impl Scalar for bool {
    fn parse(raw: String, key: KeyText<'_>) -> Result<Self, ApiError> {
        if raw.eq_ignore_ascii_case("true") {
            Ok(true)
        } else if raw.eq_ignore_ascii_case("false") {
            Ok(false)
        } else {
            Err(ApiError::invalid_parameter(
                &key.text(),
                &raw,
                "Expected true or false.",
            ))
        }
    }
}

impl Scalar for DateTime {
    fn parse(raw: String, key: KeyText<'_>) -> Result<Self, ApiError> {
        DateTime::from_str(&raw, Format::DateTimeWithOffset)
            .or_else(|_| DateTime::from_str(&raw, Format::EpochSeconds))
            .map_err(|_| {
                ApiError::invalid_parameter(&key.text(), &raw, "Expected an ISO 8601 timestamp.")
            })
    }
}

impl Scalar for Blob {
    fn parse(raw: String, key: KeyText<'_>) -> Result<Self, ApiError> {
        aws_smithy_types::base64::decode(raw.trim())
            .map(Blob::new)
            .map_err(|_| ApiError::invalid_parameter(&key.text(), "(blob)", "Expected base64."))
    }
}

scalar_decode!(String);
scalar_decode!(i32);
scalar_decode!(i64);
scalar_decode!(f64);
scalar_decode!(f32);
scalar_decode!(crate::protocol::Float);
scalar_decode!(bool);
scalar_decode!(DateTime);
scalar_decode!(Blob);

/// An enum's value: one of `values` (the model's), as `parse` reads it; anything else is
/// `InvalidParameterValue` listing (the first twenty of) them.
pub fn enum_scalar<T>(
    raw: String,
    key: KeyText<'_>,
    parse: fn(&str) -> Option<T>,
    values: &[&str],
) -> Result<T, ApiError> {
    if let Some(v) = parse(&raw) {
        return Ok(v);
    }
    let shown: Vec<&str> = values.iter().take(20).copied().collect();
    let more = if values.len() > shown.len() {
        ", ..."
    } else {
        ""
    };
    Err(ApiError::invalid_parameter(
        &key.text(),
        &raw,
        &format!("Valid values: {}{more}", shown.join(", ")),
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    proptest::proptest! {
        /// The form is split and decoded as `form_urlencoded` does it: the same pairs, the
        /// last value of a key given twice kept (the envelope's too), whatever the bytes.
        #[test]
        fn decodes_as_form_urlencoded_does(
            raw in proptest::collection::vec(
                proptest::sample::select(
                    b"&=+%aF0 9Ag.\xc3\xa9\xff\x01Action".to_vec()
                ),
                0..48,
            )
        ) {
            let r = FormReader::from_urlencoded(&[&raw]);
            let ours: BTreeMap<&str, &str> = r.pairs().collect();
            let theirs: BTreeMap<String, String> = form_urlencoded::parse(&raw)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            let theirs: BTreeMap<&str, &str> =
                theirs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            proptest::prop_assert_eq!(ours, theirs);
        }
    }

    proptest::proptest! {
        /// A member is found, through the range of its structure's keys or at the root, when
        /// and only when an untaken key is it or lies under it; whatever was looked up before.
        #[test]
        fn members_are_found_as_their_definition_says(
            keys in proptest::collection::vec("[AB.1/-]{0,6}", 0..12),
            taken in proptest::collection::vec(0usize..12, 0..4),
            lookups in proptest::collection::vec(("[AB.1/-]{0,3}", "[AB.1/-]{1,3}"), 1..12),
        ) {
            let mut r = FormReader::from_pairs(keys.iter().map(|k| (k.as_str(), "v")));
            for i in taken {
                if let Some(k) = keys.get(i) {
                    r.take(k);
                }
            }
            let left: Vec<String> = r.pairs().map(|(k, _)| k.to_string()).collect();
            for (at, name) in lookups {
                let member = join(&at, &name);
                let expected = left.iter().any(|k| {
                    k.strip_prefix(member.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
                });
                proptest::prop_assert_eq!(r.has_member(&at, &name), expected, "{} {}", at, name);
            }
        }
    }

    proptest::proptest! {
        /// A structure's members found in one pass are what looking each up finds: the same
        /// parameter, or none; and the structure is there when and only when an untaken key
        /// is it or lies under it (the root always).
        #[test]
        fn members_found_together_are_found_one_by_one(
            keys in proptest::collection::vec("[AB.1/-]{0,6}", 0..12),
            taken in proptest::collection::vec(0usize..12, 0..4),
            ats in proptest::collection::vec("[AB.1/-]{0,3}", 1..6),
        ) {
            let mut r = FormReader::from_pairs(keys.iter().map(|k| (k.as_str(), "v")));
            for i in taken {
                if let Some(k) = keys.get(i) {
                    r.take(k);
                }
            }
            let names = ["A", "AB", "B", "B1", "BA"];
            for at in ats {
                let together = r.members(&at, &names);
                let there = at.is_empty() || r.has_prefix(&at);
                proptest::prop_assert_eq!(together.is_some(), there, "{}", at);
                let Some(together) = together else { continue };
                for (name, found) in names.iter().zip(together) {
                    let alone = r.member_index(&at, name);
                    proptest::prop_assert_eq!(
                        found.map(|f| (f.index, f.own)),
                        alone.map(|f| (f.index, f.own)),
                        "{} {}",
                        at,
                        name
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// A list of structures is read as its definition says, whatever its keys: an item
        /// for each index an untaken key gives (`L.N` or `L.N.member`, `N` a number without
        /// leading zeros, `+1` being 1), in the order of the indices, read at `L.N` when an
        /// untaken key is there or under it; the members of each as given there.
        #[test]
        fn list_items_are_read_as_their_definition_says(
            keys in proptest::collection::vec(
                ("(1|2|10|01|\\+1|x)", "(|\\.Key|\\.Value|\\.Other|-x)"),
                0..10,
            ),
            taken in proptest::collection::vec(0usize..10, 0..3),
        ) {
            use crate::generated::ec2::Tag;
            let keys: Vec<String> = keys.iter().map(|(i, m)| format!("L.{i}{m}")).collect();
            // Each value is its key.
            let mut r = FormReader::from_pairs(keys.iter().map(|k| (k.as_str(), k.as_str())));
            for i in taken {
                if let Some(k) = keys.get(i) {
                    r.take(k);
                }
            }
            let left: std::collections::BTreeSet<String> =
                r.pairs().map(|(k, _)| k.to_string()).collect();
            let indices: std::collections::BTreeSet<u32> = left
                .iter()
                .filter_map(|k| {
                    let seg = k.strip_prefix("L.")?.split('.').next()?;
                    if seg.starts_with('0') {
                        return None;
                    }
                    seg.parse().ok()
                })
                .collect();
            let expected: Vec<(Option<String>, Option<String>)> = indices
                .iter()
                .filter_map(|i| {
                    let at = format!("L.{i}");
                    let dotted = format!("{at}.");
                    left.iter()
                        .any(|k| *k == at || k.starts_with(&dotted))
                        .then(|| {
                            (
                                left.get(&format!("{at}.Key")).cloned(),
                                left.get(&format!("{at}.Value")).cloned(),
                            )
                        })
                })
                .collect();
            let got: Option<Vec<Tag>> = r.list_field("", "L", None).unwrap();
            let got: Vec<_> = got
                .unwrap_or_default()
                .into_iter()
                .map(|t| (t.key, t.value))
                .collect();
            proptest::prop_assert_eq!(got, expected, "{:?}", left);
        }
    }

    #[test]
    fn a_component_is_decoded_on_its_own_even_when_the_whole_would_be_utf8() {
        // `%C3` ends the key and `%A9` starts the value: together they are `é`, but each
        // component alone is invalid UTF-8, replaced within it as `form_urlencoded` does.
        let raw = b"K%C3=%A9v&Ok=%C3%A9";
        let r = FormReader::from_urlencoded(&[raw]);
        let ours: BTreeMap<&str, &str> = r.pairs().collect();
        let theirs: BTreeMap<String, String> = form_urlencoded::parse(raw)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let theirs: BTreeMap<&str, &str> = theirs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(ours, theirs);
        assert_eq!(r.peek("Ok"), Some("é"));
        assert_eq!(r.peek("K\u{FFFD}"), Some("\u{FFFD}v"));
    }

    #[test]
    fn the_first_parameter_holding_a_forbidden_character_is_named() {
        let r = FormReader::from_urlencoded(&[b"Action=X&B=%01&A.2=ok&A.1=%EF%BF%BE&C=\t"]);
        assert_eq!(r.first_non_xml(), Some(("A.1", '\u{FFFE}')));
        let r = FormReader::from_urlencoded(&[b"Action=X&B=fine&A=%09%0A%0D"]);
        assert_eq!(r.first_non_xml(), None);
        // A value given twice: only the one kept counts.
        let r = FormReader::from_urlencoded(&[b"B=%01&B=fine"]);
        assert_eq!(r.first_non_xml(), None);
        let r = FormReader::from_urlencoded(&[b"Version=%01&B=fine"]);
        assert_eq!(r.first_non_xml(), Some(("Version", '\u{1}')));
    }

    #[test]
    fn lists_are_ordered_by_index_and_bare_key_is_empty() {
        let mut r = FormReader::from_pairs([("Id.10", "c"), ("Id.2", "b"), ("Id.1", "a")]);
        let v: Vec<String> = r.list_field("", "Id", None).unwrap().unwrap();
        assert_eq!(v, ["a", "b", "c"]);
        let mut r = FormReader::from_pairs([("Id", "")]);
        let v: Option<Vec<String>> = r.list_field("", "Id", None).unwrap();
        assert_eq!(v, Some(vec![]));
        r.finish().unwrap();
    }

    #[test]
    fn members_are_found_by_the_same_key_with_or_without_the_stack_buffer() {
        let long = "M".repeat(300);
        for (at, name) in [("", "Id"), ("Filter.1", "Name"), ("", ""), ("A.b", &long)] {
            let mut buf = [0u8; 256];
            match join_into(&mut buf, at, name) {
                Some(k) => assert_eq!(k, join(at, name)),
                None => assert!(join(at, name).len() > 256),
            }
        }
        let key = format!("A.b.{long}");
        let mut r = FormReader::from_pairs([("Filter.1.Name", "x"), (key.as_str(), "y")]);
        assert!(r.has_member("Filter.1", "Name"));
        assert!(r.has_member("", "Filter"));
        assert!(!r.has_member("Filter", "Name"));
        assert!(r.has_member("A.b", &long));
        assert!(!r.has_member("A", "b.M"));
    }

    #[test]
    fn prefix_matching_respects_segment_boundaries() {
        let r = FormReader::from_pairs([("Filter.1-x", "a"), ("Filter.10.Name", "b")]);
        assert!(!r.has_prefix("Filter.1"));
        assert!(r.has_prefix("Filter.10"));
    }

    #[test]
    fn the_envelope_is_read_until_stripped_and_never_decoded() {
        let mut r = FormReader::from_urlencoded(&[
            b"Action=DescribeVpcs&Version=2016-11-15&VpcId.1=vpc-1",
            b"Action=DescribeSubnets",
        ]);
        // A key given twice keeps its last value, as it does in the input.
        assert_eq!(r.peek("Action"), Some("DescribeSubnets"));
        assert_eq!(r.peek("VpcId.1"), Some("vpc-1"));
        let mut keys: Vec<&str> = r.pairs().map(|(k, _)| k).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["Action", "Version", "VpcId.1"]);
        r.strip_envelope();
        assert_eq!(r.peek("Action"), None);
        assert_eq!(r.pairs().count(), 1);
        assert_eq!(r.take("VpcId.1").as_deref(), Some("vpc-1"));
        assert!(r.finish().is_ok());
    }

    #[test]
    fn list_indices_are_written_as_display_writes_them() {
        for n in [0, 7, 10, 99, 100, 65_536, u32::MAX] {
            let mut key = String::from("Tag.");
            push_index(&mut key, n);
            assert_eq!(key, format!("Tag.{n}"));
        }
    }

    #[test]
    fn the_envelope_names_are_where_their_constants_say() {
        assert_eq!(ENVELOPE_KEYS.get(ACTION), Some(&"Action"));
        assert_eq!(ENVELOPE_KEYS.get(VERSION), Some(&"Version"));
    }

    #[test]
    fn leftovers_are_unknown_parameters() {
        let mut r = FormReader::from_pairs([("Bogus", "1")]);
        assert_eq!(r.finish().unwrap_err().code, "UnknownParameter");
    }
}
