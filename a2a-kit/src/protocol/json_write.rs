//! A direct JSON writer for the parts of a task document that a store serializes on every
//! finished task (messages, artifacts, parts), byte for byte what serde_json writes.
//!
//! Why not serde_json: its string escaping looks at one byte at a time and escapes every key
//! again on every call; on a small finished task (~1.3 KB, nearly all strings) that was the
//! largest single cost of a blocking `SendMessage`. Here strings are scanned eight bytes at a
//! time and keys are written as constants. Free-form values (metadata, data parts, extension
//! lists) still go through serde_json, which writes them rarely.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Artifact, Message, Part, PartContent};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether any of the eight bytes needs escaping in a JSON string: a control character
/// (below 0x20), `"` or `\`. Exact as a whole-word test (the classic has-zero-byte tricks).
#[inline]
fn word_needs_escape(w: u64) -> bool {
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * u64::from(b'"'));
    let quote = q.wrapping_sub(ONES) & !q;
    let b = w ^ (ONES * u64::from(b'\\'));
    let backslash = b.wrapping_sub(ONES) & !b;
    (control | quote | backslash) & HIGH != 0
}

/// Whether a byte must be escaped in a JSON string.
#[inline]
fn byte_needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// How many leading bytes of `s` need no escaping.
#[inline]
fn clean_prefix_len(s: &[u8]) -> usize {
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if word_needs_escape(u64::from_le_bytes(w)) {
            break;
        }
        i += 8;
    }
    while i < s.len() && !byte_needs_escape(s[i]) {
        i += 1;
    }
    i
}

/// Append `s` as a JSON string, escaped exactly as serde_json escapes it (`\"`, `\\`, the
/// short escapes `\b \t \n \f \r`, `\u00xx` in lowercase hex for other control characters;
/// everything else, non-ASCII included, as is).
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut rest = s.as_bytes();
    out.reserve(rest.len() + 2);
    out.push(b'"');
    loop {
        let clean = clean_prefix_len(rest);
        out.extend_from_slice(&rest[..clean]);
        let Some(&b) = rest.get(clean) else { break };
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            b'\t' => b't',
            b'\n' => b'n',
            0x0c => b'f',
            b'\r' => b'r',
            _ => 0,
        };
        if short != 0 {
            out.extend_from_slice(&[b'\\', short]);
        } else {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
        }
        rest = &rest[clean + 1..];
    }
    out.push(b'"');
}

/// Append a timestamp's JSON string, as its `Serialize` impl writes it (its wire form never
/// needs escaping).
pub(crate) fn write_timestamp(out: &mut Vec<u8>, ts: &super::Timestamp) -> serde_json::Result<()> {
    match ts.wire_bytes() {
        Some(b) => {
            out.push(b'"');
            out.extend_from_slice(&b);
            out.push(b'"');
            Ok(())
        }
        None => serde_json::to_writer(&mut *out, ts),
    }
}

/// `,"key":` then the string.
fn field_str(out: &mut Vec<u8>, key: &[u8], value: &str) {
    out.extend_from_slice(key);
    write_str(out, value);
}

/// `,"key":` then the value through serde_json.
fn field_serde<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    key: &[u8],
    value: &T,
) -> serde_json::Result<()> {
    out.extend_from_slice(key);
    serde_json::to_writer(&mut *out, value)
}

/// Append a message's JSON, as `serde_json::to_writer(out, message)` would.
pub(crate) fn write_message(out: &mut Vec<u8>, m: &Message) -> serde_json::Result<()> {
    field_str(out, br#"{"messageId":"#, &m.message_id);
    if let Some(c) = &m.context_id {
        field_str(out, br#","contextId":"#, c);
    }
    if let Some(t) = &m.task_id {
        field_str(out, br#","taskId":"#, t);
    }
    out.extend_from_slice(br#","role":""#);
    out.extend_from_slice(m.role.as_str().as_bytes());
    out.extend_from_slice(br#"","parts":"#);
    write_parts(out, &m.parts)?;
    if let Some(md) = &m.metadata {
        field_serde(out, br#","metadata":"#, md)?;
    }
    if !m.extensions.is_empty() {
        field_serde(out, br#","extensions":"#, &m.extensions)?;
    }
    if !m.reference_task_ids.is_empty() {
        field_serde(out, br#","referenceTaskIds":"#, &m.reference_task_ids)?;
    }
    out.push(b'}');
    Ok(())
}

/// Append a list of artifacts' JSON, as serde_json would.
pub(crate) fn write_artifacts(out: &mut Vec<u8>, artifacts: &[Artifact]) -> serde_json::Result<()> {
    out.push(b'[');
    for (i, a) in artifacts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        field_str(out, br#"{"artifactId":"#, &a.artifact_id);
        if let Some(n) = &a.name {
            field_str(out, br#","name":"#, n);
        }
        if let Some(d) = &a.description {
            field_str(out, br#","description":"#, d);
        }
        out.extend_from_slice(br#","parts":"#);
        write_parts(out, &a.parts)?;
        if let Some(md) = &a.metadata {
            field_serde(out, br#","metadata":"#, md)?;
        }
        if !a.extensions.is_empty() {
            field_serde(out, br#","extensions":"#, &a.extensions)?;
        }
        out.push(b'}');
    }
    out.push(b']');
    Ok(())
}

fn write_parts(out: &mut Vec<u8>, parts: &[Part]) -> serde_json::Result<()> {
    out.push(b'[');
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_part(out, p)?;
    }
    out.push(b']');
    Ok(())
}

/// A part as its `Serialize` impl writes it: the content member first, then metadata,
/// filename and media type.
fn write_part(out: &mut Vec<u8>, p: &Part) -> serde_json::Result<()> {
    match &p.content {
        PartContent::Text(t) => field_str(out, br#"{"text":"#, t),
        PartContent::Url(u) => field_str(out, br#"{"url":"#, u),
        PartContent::Raw(bytes) => {
            // Base64 needs no escaping.
            out.extend_from_slice(br#"{"raw":""#);
            out.extend_from_slice(STANDARD.encode(bytes).as_bytes());
            out.push(b'"');
        }
        PartContent::Data(v) => field_serde(out, br#"{"data":"#, v)?,
    }
    if let Some(md) = &p.metadata {
        field_serde(out, br#","metadata":"#, md)?;
    }
    if let Some(f) = &p.filename {
        field_str(out, br#","filename":"#, f);
    }
    if let Some(mt) = &p.media_type {
        field_str(out, br#","mediaType":"#, mt);
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn same_str(s: &str) {
        let mut ours = Vec::new();
        write_str(&mut ours, s);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(s).unwrap(),
            "{s:?}"
        );
    }

    #[test]
    fn strings_escape_as_serde_json_does() {
        for s in [
            "",
            "plain ascii text longer than eight bytes",
            "\"quoted\" and \\back\\slashed\\",
            "\u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f} \u{7f}",
            "héllo wörld — ünïcödé 🎉 and more",
            "exactly8",
            "1234567\"",
            "\"1234567",
        ] {
            same_str(s);
        }
        // Every single byte value that can appear in a str, at every offset in a word.
        for b in 0u8..0x80 {
            for at in 0..40 {
                let mut s = "x".repeat(at);
                s.push(char::from(b));
                s.push_str("tail of it");
                same_str(&s);
            }
        }
    }

    #[test]
    fn timestamps_write_as_serde_json_does() {
        use chrono::TimeZone;
        let far = chrono::Utc.with_ymd_and_hms(12345, 1, 2, 3, 4, 5).unwrap();
        for ts in [super::super::Timestamp::now(), far.into()] {
            let mut ours = Vec::new();
            write_timestamp(&mut ours, &ts).unwrap();
            assert_eq!(ours, serde_json::to_vec(&ts).unwrap());
        }
    }

    proptest! {
        #[test]
        fn any_string_escapes_as_serde_json_does(s in any::<String>()) {
            same_str(&s);
        }

        #[test]
        fn texts_with_escapes_write_as_serde_json_does(s in "[a-z\"\\\\\n\t\u{1}\u{1f}é]{0,40}") {
            same_str(&s);
        }
    }

    #[test]
    fn messages_and_artifacts_write_as_serde_json_does() {
        let mut full = Message::agent(vec![
            Part::text("a \"quoted\"\nline")
                .with_media_type("text/plain")
                .with_filename("f.txt"),
            Part::raw(vec![0u8, 1, 2, 250, 255]).with_media_type("application/octet-stream"),
            Part::url("https://example.com/x?y=\"z\""),
            Part::data(json!({"k": [1, "two", null], "nested": {"a": "\u{1}"}})),
            Part::data(serde_json::Value::Null),
            Part::text("with meta").with_metadata(
                json!({"m": 1})
                    .as_object()
                    .cloned()
                    .unwrap()
                    .into_iter()
                    .collect(),
            ),
        ])
        .with_task_id("t-1")
        .with_context_id("c-1");
        full.metadata = Some(
            json!({"x": "y"})
                .as_object()
                .cloned()
                .unwrap()
                .into_iter()
                .collect(),
        );
        full.extensions = vec!["https://ext/1".into()];
        full.reference_task_ids = vec!["r1".into(), "r2".into()];
        let bare = Message::user_text("hi");
        for m in [&full, &bare] {
            let mut ours = Vec::new();
            write_message(&mut ours, m).unwrap();
            assert_eq!(ours, serde_json::to_vec(m).unwrap());
        }

        let mut a = Artifact::new(full.parts.clone())
            .with_name("result")
            .with_description("the \"answer\"");
        a.metadata = full.metadata.clone();
        a.extensions = vec!["e".into()];
        let artifacts = [
            a,
            Artifact::new(vec![Part::text("x")]),
            Artifact::new(vec![]),
        ];
        for list in [&artifacts[..], &artifacts[..1], &[]] {
            let mut ours = Vec::new();
            write_artifacts(&mut ours, list).unwrap();
            assert_eq!(ours, serde_json::to_vec(list).unwrap());
        }
    }
}
