//! The XML writer every answer goes through: whatever text goes in (any Unicode, characters
//! XML 1.0 forbids included), what comes out parses, and each text reads back as it went in,
//! with only the forbidden characters replaced (by U+FFFD).
//!
//! The input: texts separated by 0xFF bytes (never valid in UTF-8), each written as an
//! element, and all of them again as a list.

#![no_main]

use fakeaws::protocol::xml::{XmlWriter, is_xml_char};
use libfuzzer_sys::fuzz_target;
use quick_xml::XmlVersion;
use quick_xml::events::Event;

fuzz_target!(|data: &[u8]| {
    let texts: Vec<String> = data
        .split(|b| *b == 0xFF)
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .collect();
    let mut w = XmlWriter::default();
    w.open("Root");
    for t in &texts {
        w.text("value", t);
    }
    w.list_value("list", "item", &texts);
    w.close("Root");
    let xml = w.into_string();

    let want: Vec<String> = texts
        .iter()
        .map(|t| {
            t.chars()
                .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
                .collect()
        })
        .collect();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut got: Vec<String> = Vec::new();
    let mut open: Option<String> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                let name = e.name();
                if name.as_ref() == "value" || name.as_ref() == "item" {
                    open = Some(String::new());
                }
            }
            // As a conforming reader sees it: line ends normalized.
            Ok(Event::Text(t)) => {
                if let Some(o) = open.as_mut() {
                    o.push_str(&t.xml_content(XmlVersion::Implicit1_0));
                }
            }
            Ok(Event::GeneralRef(r)) => {
                let c = match r.resolve_char_ref() {
                    Ok(Some(c)) => c,
                    Ok(None) => match r.into_inner().as_ref() {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "apos" => '\'',
                        "quot" => '"',
                        other => panic!("unknown reference &{other}; in {xml:?}"),
                    },
                    Err(e) => panic!("a bad character reference ({e}) in {xml:?}"),
                };
                if let Some(o) = open.as_mut() {
                    o.push(c);
                }
            }
            Ok(Event::End(e)) => {
                let name = e.name();
                if (name.as_ref() == "value" || name.as_ref() == "item")
                    && let Some(o) = open.take()
                {
                    got.push(o);
                }
            }
            Ok(Event::Empty(e)) => {
                assert_eq!(e.name().as_ref(), "list", "{xml:?}");
            }
            Ok(_) => {}
            Err(e) => panic!("the document does not parse ({e}): {xml:?}"),
        }
    }
    // Splitting never gives no text, so the list is never the empty `<list/>`.
    let mut expected = want.clone();
    expected.extend(want);
    assert_eq!(got, expected, "{xml}");
});
