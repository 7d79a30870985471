//! A minimal XML tree for assertions (quick-xml underneath).

use quick_xml::Reader;
use quick_xml::events::Event;

/// One element: its local name, its text, its children.
#[derive(Debug, Default, Clone)]
pub struct Node {
    pub name: String,
    pub text: String,
    pub children: Vec<Node>,
}

impl Node {
    /// The first child called `name`; panics when there is none.
    pub fn child(&self, name: &str) -> &Node {
        self.children
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("<{}> has no <{name}>: {self:?}", self.name))
    }

    /// Every child called `name`.
    pub fn all(&self, name: &str) -> Vec<&Node> {
        self.children.iter().filter(|c| c.name == name).collect()
    }
}

/// Parses a whole document; panics on malformed XML.
pub fn parse(s: &str) -> Node {
    let mut reader = Reader::from_str(s);
    let mut stack: Vec<Node> = vec![Node::default()];
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => stack.push(Node {
                name: AsRef::<str>::as_ref(&e.local_name()).to_string(),
                ..Default::default()
            }),
            Event::Empty(e) => {
                let node = Node {
                    name: AsRef::<str>::as_ref(&e.local_name()).to_string(),
                    ..Default::default()
                };
                stack.last_mut().unwrap().children.push(node);
            }
            Event::Text(t) => {
                let text = t.into_inner();
                let text = quick_xml::escape::unescape(&text).unwrap().into_owned();
                stack.last_mut().unwrap().text.push_str(&text);
            }
            Event::GeneralRef(r) => {
                let name = r.into_inner();
                let text = quick_xml::escape::unescape(&format!("&{name};"))
                    .unwrap()
                    .into_owned();
                stack.last_mut().unwrap().text.push_str(&text);
            }
            Event::End(_) => {
                let node = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(node);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    let mut root = stack.pop().unwrap();
    assert_eq!(root.children.len(), 1, "one root element");
    root.children.pop().unwrap()
}
