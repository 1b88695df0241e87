//! One `#[skill]` method: its attributes, its signature checks and its generated code.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Ident, ImplItemFn, Meta, ReturnType, Type};

use crate::args::{Errors, Keys, StrValue, doc_comment, str_slice};

pub(crate) const SKILL_KEYS: Keys = Keys {
    attr: "#[skill]",
    allowed: &[
        "id",
        "name",
        "description",
        "tags",
        "examples",
        "input_modes",
        "output_modes",
        "default",
        "message",
        "scopes",
        "extended_only",
    ],
};

/// Whether `attr` is `#[skill]` / `#[a2a_kit::skill]`.
pub(crate) fn is_skill_attr(attr: &Attribute) -> bool {
    last_segment_is(attr, "skill")
}

/// Whether `attr` is `#[streaming]` / `#[a2a_kit::streaming]`.
pub(crate) fn is_streaming_attr(attr: &Attribute) -> bool {
    last_segment_is(attr, "streaming")
}

fn last_segment_is(attr: &Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
}

/// A parsed, checked skill.
pub(crate) struct Skill {
    pub(crate) method: Ident,
    pub(crate) id: String,
    /// Where the id comes from (the `id = ".."` literal or the method name), for errors.
    pub(crate) id_span: Span,
    pub(crate) name: StrValue,
    pub(crate) description: StrValue,
    pub(crate) tags: Vec<StrValue>,
    pub(crate) examples: Vec<StrValue>,
    pub(crate) input_modes: Vec<StrValue>,
    pub(crate) output_modes: Vec<StrValue>,
    /// The `default` key, when set.
    pub(crate) default: Option<Span>,
    /// The `message` key, when set: the skill answers with a direct Message (no task).
    pub(crate) message: Option<Span>,
    /// Scopes a caller needs.
    pub(crate) scopes: Vec<StrValue>,
    /// Listed on the extended card only.
    pub(crate) extended_only: bool,
    pub(crate) streaming: bool,
    /// Argument types after `&self`, in order.
    pub(crate) args: Vec<Type>,
    /// The declared return type (`None`: `()`).
    pub(crate) ret: Option<Type>,
}

/// The values of a `#[skill(..)]` attribute's keys.
#[derive(Default)]
struct SkillArgs {
    /// The id and where it is written.
    id: Option<(String, Span)>,
    name: Option<StrValue>,
    description: Option<StrValue>,
    tags: Vec<StrValue>,
    examples: Vec<StrValue>,
    input_modes: Vec<StrValue>,
    output_modes: Vec<StrValue>,
    default: Option<Span>,
    message: Option<Span>,
    scopes: Vec<StrValue>,
    extended_only: bool,
}

impl SkillArgs {
    /// Read the keys of `attr` (`#[skill]` or `#[skill(key = value, ...)]`).
    fn parse(attr: &Attribute, errors: &mut Errors) -> SkillArgs {
        let entries = match &attr.meta {
            Meta::Path(_) => Vec::new(),
            Meta::List(list) => SKILL_KEYS.parse(list.tokens.clone(), errors),
            Meta::NameValue(nv) => {
                errors.spanned(nv, "expected `#[skill]` or `#[skill(key = value, ...)]`");
                Vec::new()
            }
        };
        let mut a = SkillArgs::default();
        for e in &entries {
            match e.key.as_str() {
                "id" => {
                    if let Some(lit) = e.lit_str(errors) {
                        let value = lit.value();
                        if value.is_empty()
                            || value.chars().any(|c| c.is_whitespace() || c.is_control())
                        {
                            errors.spanned(
                                &lit,
                                "a skill id must be non-empty and contain no whitespace",
                            );
                        }
                        a.id = Some((value, lit.span()));
                    }
                }
                "name" => a.name = e.string(errors),
                "description" => a.description = e.string(errors),
                "tags" => a.tags = e.strings(errors).unwrap_or_default(),
                "examples" => a.examples = e.strings(errors).unwrap_or_default(),
                "input_modes" => a.input_modes = e.strings(errors).unwrap_or_default(),
                "output_modes" => a.output_modes = e.strings(errors).unwrap_or_default(),
                "default" => {
                    if e.flag(errors) == Some(true) {
                        a.default = Some(e.meta.path().span());
                    }
                }
                "message" => {
                    if e.flag(errors) == Some(true) {
                        a.message = Some(e.meta.path().span());
                    }
                }
                "scopes" => {
                    a.scopes = e.strings(errors).unwrap_or_default();
                    check_scopes(&a.scopes, errors);
                }
                "extended_only" => a.extended_only = e.flag(errors) == Some(true),
                _ => unreachable!("key list and match agree"),
            }
        }
        a
    }
}

/// Scopes are OAuth scope tokens: non-empty, no whitespace.
fn check_scopes(scopes: &[StrValue], errors: &mut Errors) {
    for scope in scopes {
        if let StrValue::Lit(lit) = scope {
            let v = lit.value();
            if v.is_empty() || v.chars().any(char::is_whitespace) {
                errors.spanned(
                    lit,
                    "a scope must be non-empty and contain no whitespace (OAuth scopes are space-separated tokens)",
                );
            }
        }
    }
}

impl Skill {
    /// Read the skill from `method`, removing its `#[skill]` and `#[streaming]` attributes.
    /// Returns `None` when the method is not a skill (or the skill is too broken to use; the
    /// errors say why).
    pub(crate) fn take(method: &mut ImplItemFn, errors: &mut Errors) -> Option<Skill> {
        let (attr, streaming) = take_attrs(method, errors)?;
        // The kit imposes `async` and `&self`: a skill that does not use them is fine.
        method
            .attrs
            .push(syn::parse_quote!(#[allow(clippy::unused_async, clippy::unused_self)]));
        let args = SkillArgs::parse(&attr, errors);
        let sig = &method.sig;
        let method_name = sig.ident.to_string();
        let (id, id_span) = args
            .id
            .unwrap_or_else(|| (method_name.clone(), sig.ident.span()));
        let name = args
            .name
            .unwrap_or_else(|| StrValue::lit(&humanize(&method_name), sig.ident.span()));
        let description = description(args.description, method, &id, errors);
        check_signature(sig, streaming, errors);
        let arg_types = arg_types(sig, errors);
        let ret = return_type(sig, streaming, errors);
        if let Some(span) = args.message {
            check_message(span, streaming, ret.as_ref(), errors);
        }
        Some(Skill {
            method: sig.ident.clone(),
            id,
            id_span,
            name,
            description,
            tags: args.tags,
            examples: args.examples,
            input_modes: args.input_modes,
            output_modes: args.output_modes,
            default: args.default,
            message: args.message,
            scopes: args.scopes,
            extended_only: args.extended_only,
            streaming,
            args: arg_types,
            ret,
        })
    }

    /// The return type as written, `()` when omitted.
    fn ret_type(&self) -> TokenStream {
        match &self.ret {
            Some(t) => quote!(#t),
            None => quote!(()),
        }
    }

    /// The `SkillInfo { .. }` literal, plus the nested items it needs. `subst` replaces `Self`
    /// (these items live inside a function body, where `Self` is not available).
    pub(crate) fn info(
        &self,
        index: usize,
        subst: &dyn Fn(TokenStream) -> TokenStream,
    ) -> (TokenStream, TokenStream) {
        let Skill {
            id,
            name,
            description,
            default,
            streaming,
            ..
        } = self;
        let tags = str_slice(&self.tags);
        let examples = str_slice(&self.examples);
        let input_modes = str_slice(&self.input_modes);
        let output_modes = str_slice(&self.output_modes);
        let scopes = str_slice(&self.scopes);
        let extended_only = self.extended_only;
        let default = default.is_some();
        let input_fn = format_ident!("__a2a_input_schema_{}", index);
        let arg_schemas = self.args.iter().map(|ty| {
            let ty = subst(quote!(#ty));
            quote!(<#ty as ::a2a_kit::__private::FromSkillRequest>::input_schema)
        });
        let items = quote! {
            fn #input_fn() -> ::core::option::Option<::a2a_kit::__private::Value> {
                ::a2a_kit::__private::first_schema(&[#(#arg_schemas),*])
            }
        };
        let argument_media_types = self.args.iter().map(|ty| {
            let ty = subst(quote!(#ty));
            quote!(<#ty as ::a2a_kit::__private::FromSkillRequest>::MEDIA_TYPES)
        });
        let (direct, output, result_media_types) = if *streaming {
            (
                quote!(false),
                quote!(::a2a_kit::__private::no_schema),
                stream_media_types(self.ret.as_ref(), subst),
            )
        } else {
            let ret = subst(self.ret_type());
            let direct = if self.message.is_some() {
                quote!(true)
            } else {
                quote!(<#ret as ::a2a_kit::__private::IntoOutcome>::DIRECT_MESSAGE)
            };
            (
                direct,
                quote!(<#ret as ::a2a_kit::__private::IntoOutcome>::output_schema),
                quote!(<#ret as ::a2a_kit::__private::IntoOutcome>::MEDIA_TYPES),
            )
        };
        let info = quote! {
            ::a2a_kit::__private::SkillInfo {
                id: #id,
                name: #name,
                description: #description,
                tags: #tags,
                examples: #examples,
                input_modes: #input_modes,
                output_modes: #output_modes,
                default: #default,
                streaming: #streaming,
                direct_message: #direct,
                input_schema: #input_fn,
                output_schema: #output,
                argument_media_types: &[#(#argument_media_types),*],
                result_media_types: #result_media_types,
                scopes: #scopes,
                extended_only: #extended_only,
            }
        };
        (items, info)
    }

    /// The `match` arm of `Agent::prepare` for this skill; `receiver` is the `Arc` of the
    /// agent (`self`, or a local in an extension block's dispatch).
    pub(crate) fn prepare_arm(&self, receiver: &TokenStream) -> TokenStream {
        let id = &self.id;
        let method = &self.method;
        let vars: Vec<Ident> = (0..self.args.len())
            .map(|i| format_ident!("__a2a_arg{}", i))
            .collect();
        // Each argument is extracted through the trait path written on the user's type, so an
        // argument that is no extractor is one error on that type (the same obligation in the
        // card's schema function is deduplicated by the compiler).
        let extract = self.args.iter().zip(&vars).map(|(ty, var)| {
            quote! {
                let #var = ::a2a_kit::__private::extracted(
                    #id,
                    <#ty as ::a2a_kit::__private::FromSkillRequest>::from_request(__a2a_req),
                )?;
            }
        });
        let (setup, body) = if self.streaming {
            // Spanned on the return type: a result that is not a stream of chunks is one error
            // there (the `SkillStream` obligation).
            // The call expression's first token starts at the type's first token and its
            // parentheses end at the type's last one, so the error underlines the whole type.
            let (first, last) = match &self.ret {
                Some(ty) => first_last_span(quote!(#ty)),
                None => (method.span(), method.span()),
            };
            let mut args =
                proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, quote!(#(#vars),*));
            args.set_span(last);
            let call = quote_spanned!(first=> __a2a_this.#method #args);
            (
                quote!(let __a2a_ctx = ::core::clone::Clone::clone(__a2a_req.context());),
                quote_spanned!(first=> ::a2a_kit::__private::SkillStream::drive(#call, __a2a_ctx, #id).await),
            )
        } else {
            let ret = self.ret_type();
            let call = quote!(__a2a_this.#method(#(#vars),*));
            let outcome =
                quote!(<#ret as ::a2a_kit::__private::IntoOutcome>::into_outcome(#call.await));
            let body = if self.message.is_some() {
                quote!(::a2a_kit::__private::Outcome::into_reply(#outcome))
            } else {
                outcome
            };
            (quote!(), body)
        };
        // Spanned on the method name: a future that is not `Send` is reported at the skill.
        let future = quote_spanned! {method.span()=>
            ::a2a_kit::__private::SkillCall::new(::a2a_kit::__private::assert_send(async move {
                #body
            }))
        };
        quote! {
            #id => {
                #(#extract)*
                #setup
                let __a2a_this = #receiver;
                ::core::result::Result::Ok(#future)
            }
        }
    }
}

/// Remove `method`'s `#[skill]` and `#[streaming]` attributes: its `#[skill]` attribute and
/// whether it streams, or `None` if it has no `#[skill]`. Duplicates and a `#[streaming]`
/// with arguments or without `#[skill]` are errors.
fn take_attrs(method: &mut ImplItemFn, errors: &mut Errors) -> Option<(Attribute, bool)> {
    let mut skill_attrs = Vec::new();
    let mut streaming_attrs = Vec::new();
    method.attrs.retain(|a| {
        if is_skill_attr(a) {
            skill_attrs.push(a.clone());
            false
        } else if is_streaming_attr(a) {
            streaming_attrs.push(a.clone());
            false
        } else {
            true
        }
    });
    for extra in skill_attrs.iter().skip(1) {
        errors.spanned(extra, "duplicate `#[skill]` attribute");
    }
    for extra in streaming_attrs.iter().skip(1) {
        errors.spanned(extra, "duplicate `#[streaming]` attribute");
    }
    for s in &streaming_attrs {
        if !matches!(s.meta, Meta::Path(_)) {
            errors.spanned(&s.meta, "`#[streaming]` takes no arguments");
        }
    }
    let Some(attr) = skill_attrs.into_iter().next() else {
        if let Some(s) = streaming_attrs.first() {
            errors.spanned(s, "`#[streaming]` marks a skill's result as a stream: add `#[skill]` to this method too");
        }
        return None;
    };
    Some((attr, !streaming_attrs.is_empty()))
}

/// The skill's description: the `description` key, else the method's doc comment; A2A
/// requires one, so neither is an error (and an empty stand-in).
fn description(
    key: Option<StrValue>,
    method: &ImplItemFn,
    id: &str,
    errors: &mut Errors,
) -> StrValue {
    let ident = &method.sig.ident;
    if let Some(d) =
        key.or_else(|| doc_comment(&method.attrs).map(|d| StrValue::lit(&d, ident.span())))
    {
        return d;
    }
    let method_name = ident.to_string();
    errors.spanned(
        ident,
        format!(
            "skill `{id}`{} has no description (A2A requires one): add a `///` doc \
             comment to the method or `#[skill(description = \"...\")]`",
            if id == method_name {
                String::new()
            } else {
                format!(" (method `{method_name}`)")
            }
        ),
    );
    StrValue::lit("", ident.span())
}

/// What a skill's signature must be: not generic, const or unsafe; `async` unless it
/// streams (then a plain `fn` returning a `Stream`); `&self` first.
fn check_signature(sig: &syn::Signature, streaming: bool, errors: &mut Errors) {
    let method_name = sig.ident.to_string();
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            "skills cannot be generic: the kit must know every argument and result type to \
             extract arguments and describe the skill in the card",
        );
    } else if let Some(w) = &sig.generics.where_clause {
        errors.spanned(
            w,
            "skills cannot have a `where` clause: the kit needs concrete types",
        );
    }
    if let Some(c) = &sig.constness {
        errors.spanned(c, "a skill cannot be a `const fn`");
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(u, "a skill cannot be an `unsafe fn`");
    }
    match (streaming, &sig.asyncness) {
        (false, None) => errors.spanned(
            sig.fn_token,
            format!(
                "skill `{method_name}` must be an `async fn`; a method that returns a `Stream` \
                 (each item one artifact chunk) is a skill too when also marked `#[streaming]`"
            ),
        ),
        (true, Some(a)) => errors.spanned(
            a,
            "a `#[streaming]` skill is a plain (non-async) `fn` returning a `Stream`: remove `async` \
             and return `impl Stream<Item = T> + Send + 'static` (e.g. built with `a2a_kit::stream!`)",
        ),
        _ => {}
    }
    match sig.inputs.first() {
        Some(FnArg::Receiver(r)) if is_shared_self(r) => {}
        Some(FnArg::Receiver(r)) => errors.spanned(
            r,
            "skills take `&self`: the agent is shared between concurrent tasks (use interior \
             mutability such as a `Mutex` for state)",
        ),
        Some(FnArg::Typed(t)) => errors.spanned(
            t,
            format!("skill `{method_name}` must take `&self` as its first parameter, before its arguments"),
        ),
        None => errors.at(
            sig.paren_token.span.join(),
            format!("skill `{method_name}` must take `&self` as its first parameter"),
        ),
    }
}

/// The types of the skill's arguments after `&self`, in order (each one an extractor, named:
/// `impl Trait` is an error).
fn arg_types(sig: &syn::Signature, errors: &mut Errors) -> Vec<Type> {
    let mut args = Vec::new();
    for input in sig.inputs.iter().skip(1) {
        match input {
            FnArg::Typed(t) => {
                if contains_impl_trait(&t.ty) {
                    errors.spanned(
                        &t.ty,
                        "skills cannot be generic: `impl Trait` arguments are not supported, name the extractor type",
                    );
                }
                args.push((*t.ty).clone());
            }
            FnArg::Receiver(r) => errors.spanned(r, "unexpected `self`"),
        }
    }
    args
}

/// The declared return type (`None`: `()`); a non-streaming skill's must be named, since
/// the kit reads from it whether the skill answers with a Message and its output schema.
fn return_type(sig: &syn::Signature, streaming: bool, errors: &mut Errors) -> Option<Type> {
    let ret = match &sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    if !streaming
        && let Some(ty) = &ret
        && contains_impl_trait(ty)
    {
        let hint = if mentions(quote!(#ty), "Stream") {
            "; to answer with a stream (each item one artifact chunk), mark the skill \
                     `#[streaming]` below `#[skill]` and make it a plain `fn` (not `async`)"
        } else {
            ""
        };
        errors.spanned(
            ty,
            format!(
                "a skill's return type must be a named type, not `impl Trait`: the kit \
                         reads from it whether the skill answers with a Message and its output \
                         schema{hint}"
            ),
        );
    }
    ret
}

/// What `#[skill(message)]` requires: a whole result (no `#[streaming]`) with content.
fn check_message(span: Span, streaming: bool, ret: Option<&Type>, errors: &mut Errors) {
    if streaming {
        errors.at(
            span,
            "a `message` skill cannot be `#[streaming]`: a Message is sent whole, while a \
             stream's items are chunks of a task's artifact; remove `message` (the stream \
             becomes the task's artifact) or `#[streaming]` (return the whole content)",
        );
        return;
    }
    let unit = match ret {
        None => true,
        Some(Type::Tuple(t)) => t.elems.is_empty(),
        Some(_) => false,
    };
    if unit {
        errors.at(
            span,
            "a `message` skill answers with a Message holding what it returns, and `()` holds \
             nothing: return the content (`String`, `Data<T>`, `Vec<Part>`, ...)",
        );
    }
}

/// The card `outputModes` of a `#[streaming]` skill returning `impl Stream<Item = T>`: the
/// media types of `T` when its type is written as one that has them (`String`, `&str`,
/// `Data<_>`, or a `Result` of those), else none (the agent's defaults). Read from the
/// written type, not through a trait bound on `T`: an item that is no chunk is already one
/// error at the return type, and a second one would only repeat it.
fn stream_media_types(
    ret: Option<&Type>,
    subst: &dyn Fn(TokenStream) -> TokenStream,
) -> TokenStream {
    let Some(item) = ret.and_then(stream_item) else {
        return quote!(&[]);
    };
    if !has_media_types(item) {
        return quote!(&[]);
    }
    let item = subst(quote!(#item));
    quote!(<#item as ::a2a_kit::__private::IntoParts>::MEDIA_TYPES)
}

/// `T` of `impl .. Stream<Item = T> ..`.
fn stream_item(ret: &Type) -> Option<&Type> {
    let Type::ImplTrait(it) = ret else {
        return None;
    };
    it.bounds.iter().find_map(|b| {
        let syn::TypeParamBound::Trait(t) = b else {
            return None;
        };
        let last = t.path.segments.last()?;
        if last.ident != "Stream" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        args.args.iter().find_map(|a| match a {
            syn::GenericArgument::AssocType(at) if at.ident == "Item" => Some(&at.ty),
            _ => None,
        })
    })
}

/// Whether `ty` is written as a chunk type with known media types.
fn has_media_types(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => matches!(&*r.elem, Type::Path(p) if p.path.is_ident("str")),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            match last.ident.to_string().as_str() {
                "String" | "Data" => true,
                "Result" => match &last.arguments {
                    syn::PathArguments::AngleBracketed(args) => match args.args.first() {
                        Some(syn::GenericArgument::Type(ok)) => has_media_types(ok),
                        _ => false,
                    },
                    _ => false,
                },
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether `tokens` hold the identifier `name`.
fn mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

/// The spans of the first and last tokens of `tokens`.
fn first_last_span(tokens: TokenStream) -> (Span, Span) {
    let spans: Vec<Span> = tokens.into_iter().map(|t| t.span()).collect();
    match (spans.first(), spans.last()) {
        (Some(f), Some(l)) => (*f, *l),
        _ => (Span::call_site(), Span::call_site()),
    }
}

fn is_shared_self(r: &syn::Receiver) -> bool {
    match &*r.ty {
        Type::Reference(rt) => {
            rt.mutability.is_none()
                && matches!(&*rt.elem, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
        }
        _ => false,
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    fn walk(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == "impl",
            proc_macro2::TokenTree::Group(g) => walk(g.stream()),
            _ => false,
        })
    }
    walk(quote!(#ty))
}

/// `plan_trip` -> `Plan trip`.
fn humanize(method: &str) -> String {
    let words = method.trim_matches('_').replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => method.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::humanize;

    #[test]
    fn humanized_names() {
        assert_eq!(humanize("plan_trip"), "Plan trip");
        assert_eq!(humanize("greet"), "Greet");
        assert_eq!(humanize("_x"), "X");
    }
}
