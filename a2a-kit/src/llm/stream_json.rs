//! The text of one string field of a JSON object, decoded as the object's text streams in:
//! a tool call's arguments arrive in fragments cut anywhere (inside a key, an escape or a
//! `\u` sequence), and the artifact tool's `content` goes out as it arrives, each character
//! exactly once.

/// Where the scanner is in the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the object's `{`.
    Start,
    /// In the object, expecting a key (or `}`).
    Key,
    /// Inside a key's string.
    InKey,
    /// After a key, expecting `:`.
    Colon,
    /// After `:`, expecting the value.
    Value,
    /// Inside the wanted field's string value: decoding it out.
    Field,
    /// Inside another value (a string, an object, an array or a scalar).
    Skip,
    /// After a value, expecting `,` or `}`.
    Next,
    /// The object ended, or is not an object.
    End,
}

/// Decodes one top-level string field of a streamed JSON object.
#[derive(Debug)]
pub(super) struct StringField {
    field: &'static str,
    at: At,
    key: String,
    /// Inside a skipped value: bracket depth, whether in a string, after a backslash.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// In the field: an escape being read (`\` and what followed so far).
    escape: String,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    /// Whether the field's value has been seen whole.
    done: bool,
}

impl StringField {
    pub(super) fn new(field: &'static str) -> Self {
        StringField {
            field,
            at: At::Start,
            key: String::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            escape: String::new(),
            high: None,
            done: false,
        }
    }

    /// Whether the field's closing quote was seen.
    #[cfg(test)]
    fn is_done(&self) -> bool {
        self.done
    }

    /// Feed the next fragment; returns the field's text it completed (possibly empty).
    pub(super) fn feed(&mut self, fragment: &str) -> String {
        let mut out = String::new();
        for c in fragment.chars() {
            self.step(c, &mut out);
        }
        out
    }

    fn step(&mut self, c: char, out: &mut String) {
        match self.at {
            At::Start => match c {
                '{' => self.at = At::Key,
                c if c.is_whitespace() => {}
                _ => self.at = At::End,
            },
            At::Key => match c {
                '"' => {
                    self.key.clear();
                    self.at = At::InKey;
                }
                '}' => self.at = At::End,
                _ => {}
            },
            At::InKey => {
                if self.escaped {
                    self.key.push(c);
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '"' {
                    self.at = At::Colon;
                } else {
                    self.key.push(c);
                }
            }
            At::Colon => {
                if c == ':' {
                    self.at = At::Value;
                }
            }
            At::Value => match c {
                c if c.is_whitespace() => {}
                '"' if self.key == self.field && !self.done => self.at = At::Field,
                '"' => {
                    self.at = At::Skip;
                    self.depth = 0;
                    self.in_string = true;
                }
                '{' | '[' => {
                    self.at = At::Skip;
                    self.depth = 1;
                    self.in_string = false;
                }
                _ => {
                    // A scalar: it ends at the next `,` or `}`.
                    self.at = At::Next;
                }
            },
            At::Field => self.field_char(c, out),
            At::Skip => self.skip_char(c),
            At::Next => match c {
                ',' => self.at = At::Key,
                '}' => self.at = At::End,
                _ => {}
            },
            At::End => {}
        }
    }

    fn skip_char(&mut self, c: char) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                self.in_string = false;
                if self.depth == 0 {
                    self.at = At::Next;
                }
            }
            return;
        }
        match c {
            '"' => self.in_string = true,
            '{' | '[' => self.depth += 1,
            '}' | ']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.at = At::Next;
                }
            }
            _ => {}
        }
    }

    fn field_char(&mut self, c: char, out: &mut String) {
        if self.escape.is_empty() {
            match c {
                '\\' => self.escape.push('\\'),
                '"' => {
                    self.done = true;
                    self.at = At::Next;
                }
                c => self.push(c, out),
            }
            return;
        }
        self.escape.push(c);
        if self.escape.len() == 2 {
            let decoded = match c {
                '"' => Some('"'),
                '\\' => Some('\\'),
                '/' => Some('/'),
                'b' => Some('\u{8}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                'u' => return,
                _ => Some(c),
            };
            self.escape.clear();
            if let Some(d) = decoded {
                self.push(d, out);
            }
            return;
        }
        // `\uXXXX`
        if self.escape.len() < 6 {
            return;
        }
        let unit = u16::from_str_radix(&self.escape[2..], 16).ok();
        self.escape.clear();
        let Some(unit) = unit else {
            out.push(char::REPLACEMENT_CHARACTER);
            return;
        };
        match (self.high.take(), unit) {
            (None, 0xD800..=0xDBFF) => self.high = Some(unit),
            (Some(high), 0xDC00..=0xDFFF) => {
                let code =
                    0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            (high, unit) => {
                if high.is_some() {
                    out.push(char::REPLACEMENT_CHARACTER);
                }
                out.push(char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }

    fn push(&mut self, c: char, out: &mut String) {
        if self.high.take().is_some() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(json: &str, cut: usize) -> String {
        let mut f = StringField::new("content");
        let chars: Vec<char> = json.chars().collect();
        let mut out = String::new();
        for piece in chars.chunks(cut.max(1)) {
            out.push_str(&f.feed(&piece.iter().collect::<String>()));
        }
        out
    }

    #[test]
    fn the_field_decodes_the_same_however_the_text_is_cut() {
        let value = "Hello \"world\"\n\ttab \\ slash / é 😀 \u{1}";
        let json =
            serde_json::json!({"title": "x, \"y\"}", "nested": {"content": "no", "a": [1, "]"]},
            "n": 3, "content": value, "after": "z"})
            .to_string();
        for cut in 1..json.chars().count() {
            assert_eq!(decode_in_pieces(&json, cut), value, "cut every {cut}");
        }
        // Escaped non-ASCII, as some servers send it.
        let json = r#"{"content": "caf\u00e9 \ud83d\ude00"}"#;
        for cut in 1..json.len() {
            assert_eq!(decode_in_pieces(json, cut), "café 😀", "cut every {cut}");
        }
    }

    #[test]
    fn other_shapes_give_nothing() {
        assert_eq!(decode_in_pieces(r#"{"content": 5}"#, 2), "");
        assert_eq!(decode_in_pieces(r#"["content", "x"]"#, 2), "");
        assert_eq!(decode_in_pieces(r#"{"text": "x"}"#, 2), "");
        let mut f = StringField::new("content");
        f.feed(r#"{"content": "ab"#);
        assert!(!f.is_done());
        f.feed(r#"c"}"#);
        assert!(f.is_done());
    }
}
