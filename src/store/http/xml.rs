//! Just enough XML for the stores' answers (S3's ListObjectsV2 and errors, Azure's List Blobs and
//! errors): a document read into a tree of elements. The input comes from the network, so every
//! path returns a value or a `MalformedResponse` error; nothing indexes, unwraps or recurses on it
//! (the depth cap also keeps dropping a hostile tree from overflowing the stack).

use crate::base::error::quoted;
use crate::store::{FailureKind, StoreError};

/// Deeper than any store's document (they nest three or four levels).
const MAX_DEPTH: usize = 32;

pub(crate) fn malformed(detail: impl Into<String>) -> StoreError {
    StoreError::new(FailureKind::Fatal, Some("MalformedResponse"), None, format!("unreadable XML: {}", detail.into()))
}

/// An element: its local name (namespace prefix dropped), its own text, its child elements.
#[derive(Debug, Default)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
}

impl Element {
    pub(crate) fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    pub(crate) fn child_text(&self, name: &str) -> Option<&str> {
        self.children.iter().find(|c| c.name == name).map(|c| c.text.as_str())
    }
}

/// Parse a whole document into its root element: prolog, comments, processing instructions and a
/// DOCTYPE are skipped; CDATA is text; attributes are ignored (S3 puts only `xmlns` there).
pub(crate) fn parse_document(body: &[u8]) -> Result<Element, StoreError> {
    let text = std::str::from_utf8(body).map_err(|_| malformed("not UTF-8"))?;
    // Some servers start with a byte-order mark, which is not whitespace to `trim`.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut rest = text;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            append_text(&mut stack, root.is_some(), rest)?;
            break;
        };
        let (before, markup) = crate::base::text::split_at(rest, lt);
        append_text(&mut stack, root.is_some(), before)?;
        rest = if let Some(after) = markup.strip_prefix("<!--") {
            skip_past(after, "-->")?
        } else if let Some(after) = markup.strip_prefix("<![CDATA[") {
            let (data, after) = split_at_marker(after, "]]>")?;
            push_raw_text(&mut stack, data)?;
            after
        } else if let Some(after) = markup.strip_prefix("<?") {
            skip_past(after, "?>")?
        } else if let Some(after) = markup.strip_prefix("<!") {
            skip_past(after, ">")?
        } else if let Some(after) = markup.strip_prefix("</") {
            let (tag, after) = split_at_marker(after, ">")?;
            close_element(&mut stack, &mut root, local_name(tag.trim()))?;
            after
        } else {
            let after = markup.get(1..).unwrap_or("");
            let (tag, after) = split_tag(after)?;
            open_element(&mut stack, &mut root, tag)?;
            after
        };
    }
    if let Some(open) = stack.last() {
        return Err(malformed(format!("<{}> is never closed", open.name)));
    }
    root.ok_or_else(|| malformed("no root element"))
}

/// Text between tags: entity-decoded onto the open element; outside the root only whitespace.
fn append_text(stack: &mut [Element], root_done: bool, raw: &str) -> Result<(), StoreError> {
    match stack.last_mut() {
        Some(open) => {
            open.text.push_str(&decode_entities(raw)?);
            Ok(())
        }
        None if raw.trim().is_empty() => Ok(()),
        None if root_done => Err(malformed("content after the root element")),
        None => Err(malformed("text before the root element")),
    }
}

fn push_raw_text(stack: &mut [Element], raw: &str) -> Result<(), StoreError> {
    match stack.last_mut() {
        Some(open) => {
            open.text.push_str(raw);
            Ok(())
        }
        None => Err(malformed("CDATA outside an element")),
    }
}

/// `tag` is everything between `<` and `>`: a name, maybe attributes, maybe a closing `/`.
fn open_element(stack: &mut Vec<Element>, root: &mut Option<Element>, tag: &str) -> Result<(), StoreError> {
    let self_closing = tag.ends_with('/');
    let tag = tag.strip_suffix('/').unwrap_or(tag);
    let name = tag.split(|c: char| c.is_ascii_whitespace()).next().unwrap_or("");
    if name.is_empty()
        || !name.chars().all(|c| !c.is_ascii() || c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    {
        return Err(malformed(format!("bad tag name {}", quoted(name))));
    }
    if stack.is_empty() && root.is_some() {
        return Err(malformed("a second root element"));
    }
    if stack.len() >= MAX_DEPTH {
        return Err(malformed("elements nested too deeply"));
    }
    stack.push(Element { name: local_name(name).to_owned(), ..Element::default() });
    if self_closing {
        let name = local_name(name).to_owned();
        close_element(stack, root, &name)?;
    }
    Ok(())
}

fn close_element(stack: &mut Vec<Element>, root: &mut Option<Element>, name: &str) -> Result<(), StoreError> {
    let Some(element) = stack.pop() else {
        return Err(malformed(format!("</{name}> closes nothing")));
    };
    if element.name != name {
        return Err(malformed(format!("<{}> closed by </{name}>", element.name)));
    }
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None => *root = Some(element),
    }
    Ok(())
}

/// Drop a namespace prefix: `s3:Key` is `Key`. (The crate's own search: `str::rsplit` by a `char`
/// brought its own searcher into the wasm for this one use.)
fn local_name(name: &str) -> &str {
    crate::base::text::rsplit_once(name, ":").map_or(name, |(_, local)| local)
}

/// Split a start tag at its closing `>`, skipping any `>` inside quoted attribute values.
fn split_tag(s: &str) -> Result<(&str, &str), StoreError> {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Ok((s.get(..i).unwrap_or(""), s.get(i + 1..).unwrap_or(""))),
            (None, '<') => return Err(malformed("'<' inside a tag")),
            (None, _) => {}
        }
    }
    Err(malformed("unterminated tag"))
}

fn split_at_marker<'a>(s: &'a str, marker: &str) -> Result<(&'a str, &'a str), StoreError> {
    crate::base::text::split_once(s, marker).ok_or_else(|| malformed(format!("missing {}", quoted(marker))))
}

fn skip_past<'a>(s: &'a str, marker: &str) -> Result<&'a str, StoreError> {
    split_at_marker(s, marker).map(|(_, after)| after)
}

/// Decode the five predefined entities and numeric character references; anything else is an error
/// (S3 never sends other entities, and guessing would corrupt a key).
pub fn decode_entities(raw: &str) -> Result<String, StoreError> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        let (before, from_amp) = crate::base::text::split_at(rest, amp);
        out.push_str(before);
        let after_amp = from_amp.get(1..).unwrap_or("");
        let (entity, after) = after_amp.split_once(';').ok_or_else(|| malformed("'&' without ';'"))?;
        out.push(decode_entity(entity)?);
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

fn decode_entity(entity: &str) -> Result<char, StoreError> {
    let code = match entity {
        "amp" => return Ok('&'),
        "lt" => return Ok('<'),
        "gt" => return Ok('>'),
        "quot" => return Ok('"'),
        "apos" => return Ok('\''),
        _ => {
            if let Some(hex) = entity.strip_prefix("#x").or_else(|| entity.strip_prefix("#X")) {
                parse_digits(hex, 16)
            } else if let Some(decimal) = entity.strip_prefix('#') {
                parse_digits(decimal, 10)
            } else {
                None
            }
        }
    };
    code.filter(|c| *c != 0)
        .and_then(char::from_u32)
        .ok_or_else(|| malformed(format!("unknown or invalid entity &{};", truncate(entity, 16))))
}

/// Digits only (`u32::from_str_radix` alone would accept a leading `+`).
fn parse_digits(digits: &str, radix: u32) -> Option<u32> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

fn truncate(s: &str, max_chars: usize) -> String {
    s.chars().take(max_chars).collect()
}
