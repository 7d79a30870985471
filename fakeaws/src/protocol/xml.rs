//! XML encoding of typed outputs: the ec2Query response (root `<OpResponse>`, members
//! directly under it, `<requestId>`) and the awsQuery response (`<OpResult>` first, then
//! `<ResponseMetadata>`).

use std::borrow::Cow;

use aws_smithy_types::date_time::Format;
use aws_smithy_types::{Blob, DateTime};

/// Whether XML 1.0 allows `c` in a document (its `Char` production): no control
/// character but tab, newline and carriage return, no surrogate, no U+FFFE or U+FFFF.
pub fn is_xml_char(c: char) -> bool {
    matches!(c,
        '\t' | '\n' | '\r'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// The first character of `s` that XML 1.0 forbids, if any. Text of bytes that are neither
/// control characters nor 0xEF (which starts U+FFFE and U+FFFF, and some allowed characters)
/// holds none, and is passed over without decoding a character.
pub fn first_non_xml_char(s: &str) -> Option<char> {
    // A fold rather than `all`: no early exit, so the compiler checks many bytes at a time
    // (a request's user data is kilobytes of text, and nearly every text is clean).
    if s.bytes().fold(true, |clean, b| clean & xml_clean(b)) {
        return None;
    }
    s.chars().find(|c| !is_xml_char(*c))
}

/// Whether `b`, wherever it stands in UTF-8 text, cannot start or be part of a character XML
/// 1.0 forbids: not a control character other than tab, line feed and carriage return, and
/// not 0xEF (the first byte of U+FFFE and U+FFFF, and of some allowed characters).
const fn xml_clean(b: u8) -> bool {
    (b >= 0x20) & (b != 0xEF) | (b == b'\t') | (b == b'\n') | (b == b'\r')
}

/// Whether [`escape`] leaves `b` as it is: an [`xml_clean`] byte that is neither markup
/// (`<>&"'`) nor a carriage return.
const fn plain_byte(b: u8) -> bool {
    xml_clean(b)
        & (b != b'<')
        & (b != b'>')
        & (b != b'&')
        & (b != b'"')
        & (b != b'\'')
        & (b != b'\r')
}

/// [`plain_byte`] of each byte value: the text written into answers is mostly short (ids,
/// names, tag values), which one lookup per byte, stopping at the first byte to escape,
/// serves best.
static PLAIN_BYTES: [bool; 256] = plain_bytes();

// Every index is below 256 (the loop's bound), which a const fn cannot say with `get_mut`.
#[allow(clippy::indexing_slicing)]
const fn plain_bytes() -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = plain_byte(b as u8);
        b += 1;
    }
    t
}

/// Escapes text for an XML element or attribute. A character XML 1.0 forbids (which no
/// request can store, but a message may quote) becomes U+FFFD, so that every answer parses;
/// a carriage return is written `&#13;`, since an XML reader turns a literal one (and CR LF)
/// into a line feed, and the value would not read back as stored.
pub fn escape(s: &str) -> Cow<'_, str> {
    if is_plain(s) {
        Cow::Borrowed(s)
    } else {
        let mut out = String::with_capacity(s.len() + 16);
        escape_into(&mut out, s);
        Cow::Owned(out)
    }
}

/// Whether `s` holds nothing [`escape`] changes: no markup character, no carriage return, no
/// other control character but tab and line feed, and no U+FFFE or U+FFFF (whose UTF-8 starts
/// with 0xEF, as some allowed characters' does too: those take the slow path, unharmed).
fn is_plain(s: &str) -> bool {
    s.bytes()
        .all(|b| PLAIN_BYTES.get(usize::from(b)).copied().unwrap_or(false))
}

/// Appends `s` to `out` escaped as [`escape`] escapes it, in one pass: the text as it is when
/// it holds nothing to escape (the common case), else character by character.
pub fn escape_into(out: &mut String, s: &str) {
    if is_plain(s) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            c if is_xml_char(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
}

/// What an answer's buffer starts with: a describe of a few resources fits, a larger one
/// grows from there.
const ANSWER_CAPACITY: usize = 4096;

/// A growing XML document.
#[derive(Debug, Default)]
pub struct XmlWriter {
    buf: String,
}

/// A value that writes itself as the element `name`.
pub trait Encode {
    /// Appends `<name>...</name>` to `w`.
    fn encode(&self, w: &mut XmlWriter, name: &str);
}

/// A structure that writes its members as a sequence of elements.
pub trait EncodeMembers {
    /// Appends one element per set member.
    fn encode_members(&self, w: &mut XmlWriter);
}

impl<T: EncodeMembers> Encode for T {
    fn encode(&self, w: &mut XmlWriter, name: &str) {
        w.open(name);
        self.encode_members(w);
        w.close(name);
    }
}

impl XmlWriter {
    /// A writer whose buffer holds a typical answer without growing.
    pub fn for_answer() -> Self {
        XmlWriter {
            buf: String::with_capacity(ANSWER_CAPACITY),
        }
    }

    /// The declaration and `<OpResponse xmlns="ns">`.
    fn open_response(&mut self, op: &str, ns: &str) {
        for part in [XML_DECL, "<", op, "Response xmlns=\"", ns, "\">"] {
            self.buf.push_str(part);
        }
    }

    /// `</OpResponse>`.
    fn close_response(&mut self, op: &str) {
        for part in ["</", op, "Response>"] {
            self.buf.push_str(part);
        }
    }

    /// Opens the element `name`.
    pub fn open(&mut self, name: &str) {
        self.buf.push('<');
        self.buf.push_str(name);
        self.buf.push('>');
    }

    /// Closes the element `name`.
    pub fn close(&mut self, name: &str) {
        self.buf.push_str("</");
        self.buf.push_str(name);
        self.buf.push('>');
    }

    /// Writes `<name>text</name>`, escaped.
    pub fn text(&mut self, name: &str, text: &str) {
        // Room for the whole element once, rather than a check per piece.
        self.buf.reserve(2 * name.len() + text.len() + 5);
        self.open(name);
        escape_into(&mut self.buf, text);
        self.close(name);
    }

    /// Writes `<name>text</name>` for a text that holds nothing to escape (an enum's wire
    /// value, a number, a boolean, a timestamp): no scan of it.
    pub fn plain(&mut self, name: &str, text: &str) {
        self.buf.reserve(2 * name.len() + text.len() + 5);
        self.open(name);
        self.buf.push_str(text);
        self.close(name);
    }

    /// Writes an optional member.
    pub fn field<T: Encode>(&mut self, name: &str, value: &Option<T>) {
        if let Some(v) = value {
            v.encode(self, name);
        }
    }

    /// Writes a required member.
    pub fn value<T: Encode>(&mut self, name: &str, value: &T) {
        value.encode(self, name);
    }

    /// Writes an optional list member: `<name><item>..</item>..</name>`.
    pub fn list_field<T: Encode>(&mut self, name: &str, item: &str, value: &Option<Vec<T>>) {
        if let Some(items) = value {
            self.list_value(name, item, items);
        }
    }

    /// Writes a required list member.
    pub fn list_value<T: Encode>(&mut self, name: &str, item: &str, items: &[T]) {
        if items.is_empty() {
            self.buf.push('<');
            self.buf.push_str(name);
            self.buf.push_str("/>");
            return;
        }
        self.open(name);
        for v in items {
            v.encode(self, item);
        }
        self.close(name);
    }

    /// The document so far.
    pub fn into_string(self) -> String {
        self.buf
    }
}

impl Encode for String {
    fn encode(&self, w: &mut XmlWriter, name: &str) {
        w.text(name, self);
    }
}

impl Encode for bool {
    fn encode(&self, w: &mut XmlWriter, name: &str) {
        w.plain(name, if *self { "true" } else { "false" });
    }
}

macro_rules! encode_display {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, w: &mut XmlWriter, name: &str) {
                w.plain(name, &self.to_string());
            }
        }
    )*};
}
encode_display!(i32, i64, f32, f64);

impl Encode for crate::protocol::Float {
    fn encode(&self, w: &mut XmlWriter, name: &str) {
        w.plain(name, &self.0.to_string());
    }
}

impl Encode for DateTime {
    fn encode(&self, w: &mut XmlWriter, name: &str) {
        w.plain(name, &format_timestamp(*self));
    }
}

impl Encode for Blob {
    fn encode(&self, w: &mut XmlWriter, name: &str) {
        w.plain(name, &aws_smithy_types::base64::encode(self.as_ref()));
    }
}

/// Formats a timestamp as AWS does: `2026-11-29T14:18:20.000Z`.
pub fn format_timestamp(t: DateTime) -> String {
    let millis = t.subsec_nanos() / 1_000_000;
    let whole = DateTime::from_secs(t.secs());
    match whole.fmt(Format::DateTime) {
        Ok(s) => format!("{}.{millis:03}Z", s.trim_end_matches('Z')),
        Err(_) => "1970-01-01T00:00:00.000Z".to_string(),
    }
}

const XML_DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

/// The ec2Query success body of `op`.
pub fn ec2_response<T: EncodeMembers>(op: &str, ns: &str, request_id: &str, out: &T) -> String {
    let mut w = XmlWriter::for_answer();
    w.open_response(op, ns);
    w.text("requestId", request_id);
    out.encode_members(&mut w);
    w.close_response(op);
    w.into_string()
}

/// The ec2Query success body of an operation without output: `<return>true</return>`.
pub fn ec2_return_true(op: &str, ns: &str, request_id: &str) -> String {
    let mut w = XmlWriter::for_answer();
    w.open_response(op, ns);
    w.text("requestId", request_id);
    w.text("return", "true");
    w.close_response(op);
    w.into_string()
}

/// The awsQuery success body of `op`: `<OpResult>` first, then `<ResponseMetadata>`.
pub fn query_response<T: EncodeMembers>(
    op: &str,
    ns: &str,
    request_id: &str,
    out: Option<&T>,
) -> String {
    let mut w = XmlWriter::for_answer();
    w.open_response(op, ns);
    let result = format!("{op}Result");
    match out {
        Some(o) => o.encode(&mut w, &result),
        None => {
            w.buf.push_str(&format!("<{result}/>"));
        }
    }
    w.open("ResponseMetadata");
    w.text("RequestId", request_id);
    w.close("ResponseMetadata");
    w.close_response(op);
    w.into_string()
}

impl EncodeMembers for () {
    fn encode_members(&self, _w: &mut XmlWriter) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The byte table says what the definitions say, for any text.
        #[test]
        fn the_byte_table_classes_text_as_the_definitions_do(s in "\\PC*|[\\x00-\\x20<>&\"'\u{FFFE}\u{FFFF}\u{E000}\u{FFFD}a]*") {
            let plain = s.chars().all(|c| is_xml_char(c) && !matches!(c, '<' | '>' | '&' | '"' | '\'' | '\r'));
            // A character whose UTF-8 starts with 0xEF takes the slow path, unharmed.
            let slow = s.bytes().any(|b| b == 0xEF);
            proptest::prop_assert_eq!(is_plain(&s), plain && !slow);
            proptest::prop_assert_eq!(first_non_xml_char(&s), s.chars().find(|c| !is_xml_char(*c)));
            let mut out = String::new();
            escape_into(&mut out, &s);
            proptest::prop_assert_eq!(out == s, plain);
        }
    }

    #[test]
    fn escaping_appends_each_character_as_xml_needs_it() {
        for (s, want) in [
            ("", ""),
            ("plain text, 10.0.0.0/16", "plain text, 10.0.0.0/16"),
            (
                "<a href=\"x\">'&'</a>",
                "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;",
            ),
            ("line\r\nnext\ttab", "line&#13;\nnext\ttab"),
            ("bell\u{7}nul\u{0}", "bell\u{FFFD}nul\u{FFFD}"),
            (
                "not a char: \u{FFFE}\u{FFFF}, fine: \u{FFFD}\u{E000}\u{1F600}",
                "not a char: \u{FFFD}\u{FFFD}, fine: \u{FFFD}\u{E000}\u{1F600}",
            ),
            ("é ü 日本", "é ü 日本"),
        ] {
            let mut out = String::from("prefix:");
            escape_into(&mut out, s);
            assert_eq!(out, format!("prefix:{want}"), "{s:?}");
            assert_eq!(escape(s), want, "{s:?}");
        }
    }

    #[test]
    fn carriage_returns_are_written_as_references() {
        assert_eq!(escape("a\r\nb"), "a&#13;\nb");
        assert_eq!(escape("plain"), "plain");
    }

    #[test]
    fn characters_xml_forbids_never_reach_an_answer() {
        assert_eq!(escape("a\u{1}b\u{FFFE}c<"), "a\u{FFFD}b\u{FFFD}c&lt;");
        assert_eq!(escape("tab\tok"), "tab\tok");
        assert!(!is_xml_char('\u{0}') && !is_xml_char('\u{FFFF}'));
        assert!(is_xml_char('\u{10FFFF}') && is_xml_char('é'));
        for (text, first) in [
            ("", None),
            ("plain, é, \u{FFFD}, \u{EFFF}, \t\r\n", None),
            ("a\u{1}b\u{0}", Some('\u{1}')),
            ("ok \u{FFFE}", Some('\u{FFFE}')),
            ("\u{EFFF}\u{FFFF}", Some('\u{FFFF}')),
            ("\u{7F}", None),
        ] {
            assert_eq!(first_non_xml_char(text), first, "{text:?}");
        }
    }

    #[test]
    fn timestamps_have_milliseconds() {
        let t = DateTime::from_millis(1_795_961_900_123);
        assert_eq!(format_timestamp(t), "2026-11-29T14:18:20.123Z");
    }
}
