//! Attribute arguments (`key = value, flag, nested(..)`), doc comments and error collection.

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Token};

/// Errors collected while expanding, reported together (one `compile_error!` each).
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, err: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(err),
            None => self.0 = Some(err),
        }
    }

    /// An error on the tokens of `at` (their whole span where the compiler allows it).
    pub(crate) fn spanned(&mut self, at: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(at, msg));
    }

    /// An error at one span.
    pub(crate) fn at(&mut self, span: Span, msg: impl Display) {
        self.push(syn::Error::new(span, msg));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.0
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// A string-valued argument: a literal, or a macro call producing a `&'static str`
/// (`env!(..)`, `concat!(..)`, `include_str!(..)`).
#[derive(Clone)]
pub(crate) enum StrValue {
    Lit(LitStr),
    Macro(Expr),
}

impl StrValue {
    pub(crate) fn lit(value: &str, span: Span) -> Self {
        StrValue::Lit(LitStr::new(value, span))
    }
}

impl ToTokens for StrValue {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            StrValue::Lit(l) => l.to_tokens(tokens),
            StrValue::Macro(e) => e.to_tokens(tokens),
        }
    }
}

/// `&[a, b, c]` for a `&'static [&'static str]` field.
pub(crate) fn str_slice(values: &[StrValue]) -> TokenStream {
    quote!(&[#(#values),*])
}

/// One `key ...` entry of an attribute.
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) meta: Meta,
}

/// The keys accepted by one attribute, for parsing and for error messages.
pub(crate) struct Keys {
    /// How the attribute is written in messages, e.g. "#[skill]".
    pub(crate) attr: &'static str,
    pub(crate) allowed: &'static [&'static str],
}

impl Keys {
    /// Parse `tokens` as comma-separated entries: unknown and duplicate keys are reported
    /// (and skipped), the rest returned in order.
    pub(crate) fn parse(&self, tokens: TokenStream, errors: &mut Errors) -> Vec<Entry> {
        let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                return Vec::new();
            }
        };
        self.entries(metas, errors)
    }

    pub(crate) fn entries(
        &self,
        metas: Punctuated<Meta, Token![,]>,
        errors: &mut Errors,
    ) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        for meta in metas {
            let Some(ident) = meta.path().get_ident() else {
                errors.spanned(
                    meta.path(),
                    format!(
                        "expected a key of `{}`, one of: {}",
                        self.attr,
                        self.expected()
                    ),
                );
                continue;
            };
            let key = ident.to_string();
            if !self.allowed.contains(&key.as_str()) {
                let mut msg = format!(
                    "unknown key `{key}` in `{}`; expected one of: {}",
                    self.attr,
                    self.expected()
                );
                if let Some(close) = did_you_mean(&key, self.allowed) {
                    msg.push_str(&format!(" (did you mean `{close}`?)"));
                }
                errors.spanned(ident, msg);
                continue;
            }
            if out.iter().any(|e| e.key == key) {
                errors.spanned(ident, format!("duplicate key `{key}` in `{}`", self.attr));
                continue;
            }
            out.push(Entry { key, meta });
        }
        out
    }

    fn expected(&self) -> String {
        self.allowed
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The allowed key closest to `key`, if it is plausibly a typo.
fn did_you_mean<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (levenshtein(key, a), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

impl Entry {
    fn value(&self, errors: &mut Errors, form: &str) -> Option<&Expr> {
        match &self.meta {
            Meta::NameValue(nv) => Some(&nv.value),
            other => {
                errors.spanned(other, format!("`{}` expects a value: `{}`", self.key, form));
                None
            }
        }
    }

    /// `key = "literal"`.
    pub(crate) fn lit_str(&self, errors: &mut Errors) -> Option<LitStr> {
        let form = format!("{} = \"...\"", self.key);
        match self.value(errors, &form)? {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Some(s.clone()),
            other => {
                errors.spanned(
                    other,
                    format!("`{}` expects a string literal: `{form}`", self.key),
                );
                None
            }
        }
    }

    /// `key = "literal"` or `key = some_macro!(..)`.
    pub(crate) fn string(&self, errors: &mut Errors) -> Option<StrValue> {
        let form = format!("{} = \"...\"", self.key);
        let value = self.value(errors, &form)?;
        let s = string_value(value);
        if s.is_none() {
            errors.spanned(value, format!("`{}` expects a string: `{form}`", self.key));
        }
        s
    }

    /// `key = ["a", "b"]`.
    pub(crate) fn strings(&self, errors: &mut Errors) -> Option<Vec<StrValue>> {
        let form = format!("{} = [\"...\", \"...\"]", self.key);
        let value = self.value(errors, &form)?;
        let Expr::Array(array) = value else {
            errors.spanned(
                value,
                format!("`{}` expects an array of strings: `{form}`", self.key),
            );
            return None;
        };
        let mut out = Vec::new();
        let mut ok = true;
        for elem in &array.elems {
            match string_value(elem) {
                Some(s) => out.push(s),
                None => {
                    errors.spanned(
                        elem,
                        format!("`{}` expects an array of strings: `{form}`", self.key),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// `key` (true) or `key = true|false`.
    pub(crate) fn flag(&self, errors: &mut Errors) -> Option<bool> {
        match &self.meta {
            Meta::Path(_) => Some(true),
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }) => Some(b.value),
                other => {
                    errors.spanned(other, format!("`{}` expects `true` or `false`", self.key));
                    None
                }
            },
            Meta::List(l) => {
                errors.spanned(
                    l,
                    format!(
                        "`{0}` is a flag: write `{0}` or `{0} = true|false`",
                        self.key
                    ),
                );
                None
            }
        }
    }

    /// `key(a = .., b = ..)`.
    pub(crate) fn nested(&self, keys: &Keys, errors: &mut Errors) -> Option<Vec<Entry>> {
        match &self.meta {
            Meta::List(list) => Some(keys.parse(list.tokens.clone(), errors)),
            other => {
                errors.spanned(
                    other,
                    format!(
                        "`{0}` expects a list: `{0}({1} = \"...\")`",
                        self.key,
                        keys.allowed.join(" = \"...\", ")
                    ),
                );
                None
            }
        }
    }
}

fn string_value(expr: &Expr) -> Option<StrValue> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(StrValue::Lit(s.clone())),
        Expr::Macro(_) => Some(StrValue::Macro(expr.clone())),
        Expr::Group(g) => string_value(&g.expr),
        _ => None,
    }
}

/// The text of the `///` doc comments among `attrs`: one leading space per line removed,
/// surrounding blank lines trimmed, `None` when empty.
pub(crate) fn doc_comment(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            for line in s.value().split('\n') {
                let line = line.strip_prefix(' ').unwrap_or(line);
                lines.push(line.trim_end().to_string());
            }
        }
    }
    let text = lines.join("\n");
    let text = text.trim_matches('\n').trim();
    (!text.is_empty()).then(|| text.to_string())
}
