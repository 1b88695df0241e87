//! `Part`: one piece of message or artifact content.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Metadata;
use super::serde_util::{oneof_conflict, oneof_missing};
use super::unique_json::UniqueValue;

/// A piece of content: text, inline bytes, a URL, or structured JSON.
///
/// On the wire a part is flat (`{"text":"hi","mediaType":"text/plain"}`):
/// the content member is the discriminator, there is no `kind` in v1.0.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// What the part carries; exactly one kind per part.
    pub content: PartContent,
    /// Free-form data for extensions, kept per part.
    pub metadata: Option<Metadata>,
    /// Lets a receiver save or display file content under a sensible name.
    pub filename: Option<String>,
    /// MIME type of the content, valid on every kind of part.
    pub media_type: Option<String>,
}

/// The `content` oneof of a [`Part`].
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// Plain text (`"text"`).
    Text(String),
    /// Inline file bytes (`"raw"`), base64 on the wire.
    Raw(Vec<u8>),
    /// A reference to file content hosted elsewhere (`"url"`).
    Url(String),
    /// Any JSON value (`"data"`), including `null`.
    Data(Value),
}

impl PartContent {
    /// The JSON member names of the `content` oneof in proto field order.
    pub const MEMBERS: &'static [&'static str] = &["text", "raw", "url", "data"];

    /// The JSON member name of this content, for logging and dispatch.
    pub fn member_name(&self) -> &'static str {
        match self {
            Self::Text(_) => "text",
            Self::Raw(_) => "raw",
            Self::Url(_) => "url",
            Self::Data(_) => "data",
        }
    }
}

impl Part {
    fn new(content: PartContent) -> Self {
        Self {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }

    /// A text part, the common case for chat-style agents.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }

    /// A structured-data part, for typed inputs and outputs.
    pub fn data(value: Value) -> Self {
        Self::new(PartContent::Data(value))
    }

    /// An inline-bytes part; pair it with [`Part::with_media_type`].
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Self::new(PartContent::Raw(bytes.into()))
    }

    /// A part that points at content by URL instead of inlining it.
    pub fn url(url: impl Into<String>) -> Self {
        Self::new(PartContent::Url(url.into()))
    }

    /// Sets the MIME type so the receiver knows how to interpret the content.
    #[must_use]
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// Sets the file name shown or used by the receiver.
    #[must_use]
    pub fn with_filename(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }

    /// Attaches extension metadata to this part.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The text, if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The JSON value, if this is a data part.
    pub fn as_data(&self) -> Option<&Value> {
        match &self.content {
            PartContent::Data(value) => Some(value),
            _ => None,
        }
    }

    /// The bytes, if this is an inline-bytes part.
    pub fn as_raw(&self) -> Option<&[u8]> {
        match &self.content {
            PartContent::Raw(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// The URL, if this is a URL part.
    pub fn as_url(&self) -> Option<&str> {
        match &self.content {
            PartContent::Url(url) => Some(url),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = 1
            + usize::from(self.metadata.is_some())
            + usize::from(self.filename.is_some())
            + usize::from(self.media_type.is_some());
        let mut map = s.serialize_map(Some(len))?;
        match &self.content {
            PartContent::Text(text) => map.serialize_entry("text", text)?,
            PartContent::Raw(bytes) => map.serialize_entry("raw", &STANDARD.encode(bytes))?,
            PartContent::Url(url) => map.serialize_entry("url", url)?,
            PartContent::Data(value) => map.serialize_entry("data", value)?,
        }
        if let Some(metadata) = &self.metadata {
            map.serialize_entry("metadata", metadata)?;
        }
        if let Some(filename) = &self.filename {
            map.serialize_entry("filename", filename)?;
        }
        if let Some(media_type) = &self.media_type {
            map.serialize_entry("mediaType", media_type)?;
        }
        map.end()
    }
}

/// Decodes standard or URL-safe base64, padded or not, as ProtoJSON readers must.
pub(crate) fn decode_base64(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let unpadded = s.trim_end_matches('=');
    if unpadded.contains(['-', '_']) {
        URL_SAFE_NO_PAD.decode(unpadded)
    } else {
        STANDARD_NO_PAD.decode(unpadded)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PartVisitor)
    }
}

struct PartVisitor;

/// A Part member name, read without allocating (serde's derive does the same for structs).
enum PartKey {
    Text,
    Raw,
    Url,
    Data,
    Metadata,
    Filename,
    MediaType,
    Other,
}

impl<'de> Deserialize<'de> for PartKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = PartKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part member name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<PartKey, E> {
                Ok(match key {
                    "text" => PartKey::Text,
                    "raw" => PartKey::Raw,
                    "url" => PartKey::Url,
                    "data" => PartKey::Data,
                    "metadata" => PartKey::Metadata,
                    "filename" => PartKey::Filename,
                    "mediaType" | "media_type" => PartKey::MediaType,
                    _ => PartKey::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

impl PartVisitor {
    fn set<E: de::Error>(slot: &mut Option<PartContent>, content: PartContent) -> Result<(), E> {
        if let Some(first) = slot {
            let (first, second) = (first.member_name(), content.member_name());
            return Err(if first == second {
                E::duplicate_field(first)
            } else {
                oneof_conflict(PartContent::MEMBERS, first, second)
            });
        }
        *slot = Some(content);
        Ok(())
    }
}

fn no_duplicate<T, E: de::Error>(slot: &Option<T>, name: &'static str) -> Result<(), E> {
    if slot.is_some() {
        Err(E::duplicate_field(name))
    } else {
        Ok(())
    }
}

impl<'de> Visitor<'de> for PartVisitor {
    type Value = Part;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Part object with exactly one of `text`, `raw`, `url`, `data`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
        let mut content = None;
        let mut metadata: Option<Option<Metadata>> = None;
        let mut filename: Option<Option<String>> = None;
        let mut media_type: Option<Option<String>> = None;
        while let Some(key) = map.next_key::<PartKey>()? {
            match key {
                // A `null` text/raw/url is "unset" in ProtoJSON; a `null` data is a value.
                PartKey::Text => {
                    if let Some(text) = map.next_value::<Option<String>>()? {
                        Self::set(&mut content, PartContent::Text(text))?;
                    }
                }
                PartKey::Raw => {
                    if let Some(encoded) = map.next_value::<Option<String>>()? {
                        let bytes = decode_base64(&encoded).map_err(|e| {
                            de::Error::custom(format_args!("invalid base64 in `raw`: {e}"))
                        })?;
                        Self::set(&mut content, PartContent::Raw(bytes))?;
                    }
                }
                PartKey::Url => {
                    if let Some(url) = map.next_value::<Option<String>>()? {
                        Self::set(&mut content, PartContent::Url(url))?;
                    }
                }
                PartKey::Data => {
                    // Any JSON, its objects naming each key once.
                    let UniqueValue(value) = map.next_value()?;
                    Self::set(&mut content, PartContent::Data(value))?;
                }
                PartKey::Metadata => {
                    no_duplicate(&metadata, "metadata")?;
                    metadata = Some(map.next_value()?);
                }
                PartKey::Filename => {
                    no_duplicate(&filename, "filename")?;
                    filename = Some(map.next_value()?);
                }
                PartKey::MediaType => {
                    no_duplicate(&media_type, "mediaType")?;
                    media_type = Some(map.next_value()?);
                }
                PartKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let content = content.ok_or_else(|| oneof_missing(PartContent::MEMBERS))?;
        let non_empty = |s: Option<Option<String>>| s.flatten().filter(|s| !s.is_empty());
        Ok(Part {
            content,
            metadata: metadata.flatten(),
            filename: non_empty(filename),
            media_type: non_empty(media_type),
        })
    }
}

/// Whether a media type (a `Content-Type` value or a part's `mediaType`, parameters allowed)
/// is JSON: `application/json`, `application/a2a+json` or any `application/*+json`, without
/// regard to case.
///
/// ```
/// use a2a_kit::protocol::is_json_media_type;
/// assert!(is_json_media_type("application/json"));
/// assert!(is_json_media_type(" Application/JSON ; charset=utf-8"));
/// assert!(is_json_media_type("application/a2a+json"));
/// assert!(!is_json_media_type("text/plain"));
/// assert!(!is_json_media_type("application/jsonl"));
/// assert!(!is_json_media_type("text/x+json"));
/// ```
pub fn is_json_media_type(value: &str) -> bool {
    // The media type, before any parameters; compared without case and without allocating.
    let media = value.as_bytes().split(|b| *b == b';').next().unwrap_or(b"");
    let media = media.trim_ascii();
    let prefix = b"application/";
    media.eq_ignore_ascii_case(b"application/json")
        || (media.len() >= prefix.len() + 5
            && media[..prefix.len()].eq_ignore_ascii_case(prefix)
            && media[media.len() - 5..].eq_ignore_ascii_case(b"+json"))
}
