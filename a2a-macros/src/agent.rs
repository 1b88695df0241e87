//! `#[a2a_agent]`: the impl block, the static `AgentInfo`, `impl Agent` and the card helpers.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, Item, ItemImpl, Type};

use crate::args::{Errors, Keys, StrValue, doc_comment, str_slice};
use crate::skill::{Skill, is_skill_attr, is_streaming_attr};

const AGENT_KEYS: Keys = Keys {
    attr: "#[a2a_agent]",
    allowed: &[
        "name",
        "description",
        "version",
        "provider",
        "documentation_url",
        "icon_url",
        "input_modes",
        "output_modes",
        "streaming",
        "push_notifications",
        "skill_set",
        "extend",
    ],
};

const PROVIDER_KEYS: Keys = Keys {
    attr: "provider(..)",
    allowed: &["organization", "url"],
};

/// The media types an agent accepts and produces unless told otherwise.
const DEFAULT_MODES: &[&str] = &["text/plain", "application/json"];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let item = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Impl(imp)) => imp,
        Ok(other) => {
            errors.at(
                item_span(&other),
                "`#[a2a_agent]` goes on the inherent impl block holding the skills: `impl MyAgent { ... }`",
            );
            return with_errors(&errors, other.into_token_stream());
        }
        Err(e) => {
            errors.push(e);
            return with_errors(&errors, item);
        }
    };
    expand_impl(attr, item, errors)
}

fn item_span(item: &Item) -> Span {
    match item {
        Item::Struct(s) => s.ident.span(),
        Item::Enum(e) => e.ident.span(),
        Item::Fn(f) => f.sig.ident.span(),
        Item::Trait(t) => t.ident.span(),
        _ => Span::call_site(),
    }
}

fn with_errors(errors: &Errors, item: TokenStream) -> TokenStream {
    let errors = errors.to_compile_errors();
    quote!(#errors #item)
}

/// The agent's attribute values.
struct AgentArgs {
    name: Option<StrValue>,
    description: Option<StrValue>,
    version: Option<StrValue>,
    provider: Option<(StrValue, StrValue)>,
    documentation_url: Option<StrValue>,
    icon_url: Option<StrValue>,
    input_modes: Option<Vec<StrValue>>,
    output_modes: Option<Vec<StrValue>>,
    streaming: bool,
    push_notifications: bool,
    /// `skill_set = name`: a skill-set block, generating `fn name() -> SkillSet<Self>`.
    skill_set: Option<syn::Ident>,
    /// Whether `skill_set` (or the old `extend`) is written, valid or not: the block is a set
    /// of skills, never the agent's own block, so one mistake in it is one error.
    set_form: bool,
}

fn parse_args(attr: TokenStream, errors: &mut Errors) -> AgentArgs {
    let mut a = AgentArgs {
        name: None,
        description: None,
        version: None,
        provider: None,
        documentation_url: None,
        icon_url: None,
        input_modes: None,
        output_modes: None,
        streaming: true,
        push_notifications: false,
        skill_set: None,
        set_form: false,
    };
    let entries = AGENT_KEYS.parse(attr, errors);
    for e in &entries {
        match e.key.as_str() {
            "name" => a.name = e.string(errors),
            "description" => a.description = e.string(errors),
            "version" => a.version = e.string(errors),
            "documentation_url" => a.documentation_url = e.string(errors),
            "icon_url" => a.icon_url = e.string(errors),
            "input_modes" => a.input_modes = e.strings(errors),
            "output_modes" => a.output_modes = e.strings(errors),
            "streaming" => a.streaming = e.flag(errors).unwrap_or(true),
            "push_notifications" => a.push_notifications = e.flag(errors).unwrap_or(false),
            "skill_set" => {
                a.set_form = true;
                a.skill_set = skill_set_name(e, errors);
            }
            "extend" => {
                a.set_form = true;
                errors.spanned(
                    e.meta.path(),
                    "`extend` is now `skill_set = name`: the block's skills become the value \
                 `Type::name()`, added with `AgentService::builder_with(agent, Type::name())`",
                );
            }
            "provider" => a.provider = provider(e, errors),
            _ => unreachable!("key list and match agree"),
        }
    }
    if a.set_form {
        refuse_card_keys(&entries, errors);
    }
    a
}

/// `provider(organization = .., url = ..)`: both, as A2A's AgentProvider needs.
fn provider(e: &crate::args::Entry, errors: &mut Errors) -> Option<(StrValue, StrValue)> {
    let entries = e.nested(&PROVIDER_KEYS, errors)?;
    let mut org = None;
    let mut url = None;
    for p in &entries {
        match p.key.as_str() {
            "organization" => org = p.string(errors),
            _ => url = p.string(errors),
        }
    }
    let missing: Vec<&str> = [("organization", org.is_none()), ("url", url.is_none())]
        .into_iter()
        .filter_map(|(k, m)| m.then_some(k))
        .collect();
    match (org, url) {
        (Some(o), Some(u)) => return Some((o, u)),
        _ if entries.len() < 2 => errors.spanned(
            &e.meta,
            format!(
                "A2A's AgentProvider needs both `organization` and `url`: missing {}",
                missing
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        ),
        _ => {}
    }
    None
}

/// A skill-set block only declares skills: each card key on it is an error.
fn refuse_card_keys(entries: &[crate::args::Entry], errors: &mut Errors) {
    for e in entries
        .iter()
        .filter(|e| e.key != "skill_set" && e.key != "extend")
    {
        errors.spanned(
            e.meta.path(),
            format!(
                "`{}` does not go on an `#[a2a_agent(skill_set = ..)]` block, which only \
                 declares skills: set card fields on the agent's `#[a2a_agent(..)]` block",
                e.key
            ),
        );
    }
}

/// `skill_set = name`: the name of the function to generate.
fn skill_set_name(e: &crate::args::Entry, errors: &mut Errors) -> Option<syn::Ident> {
    let value = match &e.meta {
        syn::Meta::NameValue(nv) => Some(&nv.value),
        _ => None,
    };
    if let Some(syn::Expr::Path(p)) = value
        && let (None, Some(ident)) = (&p.qself, p.path.get_ident())
    {
        return Some(ident.clone());
    }
    errors.spanned(
        &e.meta,
        "`skill_set` names the function that returns the block's skills: `skill_set = hotels` \
         generates `fn hotels() -> SkillSet<Self>`",
    );
    None
}

fn expand_impl(attr: TokenStream, mut imp: ItemImpl, mut errors: Errors) -> TokenStream {
    let args = parse_args(attr, &mut errors);
    let usable = check_block(&imp, &mut errors);
    let skills = take_skills(&mut imp, &mut errors);
    // A main block without skills is an error without the `inventory` feature (reported
    // through `require_skills!`, which knows the feature); with it, extension blocks may hold
    // them all.
    let mut no_skills = false;
    if skills.is_empty() && imp.trait_.is_none() {
        if args.set_form {
            errors.at(
                Span::call_site(),
                "this `#[a2a_agent(skill_set = ..)]` block has no skills: mark at least one \
                 `async fn` in the impl block with `#[skill]`",
            );
        } else {
            no_skills = true;
        }
    }
    check_skill_ids(&skills, &mut errors);

    let self_ty = (*imp.self_ty).clone();
    if args.set_form {
        return expand_skill_set(imp, &skills, args.skill_set, &errors);
    }
    let require_skills = if no_skills {
        quote! {
            ::a2a_kit::__private::require_skills!(
                "this agent has no skills: mark at least one `async fn` in the impl block with `#[skill]`"
            );
        }
    } else {
        quote!()
    };
    let description = args
        .description
        .clone()
        .or_else(|| doc_comment(&imp.attrs).map(|d| StrValue::lit(&d, Span::call_site())));
    if description.is_none() {
        errors.at(
            Span::call_site(),
            "the agent has no description (A2A requires one): add a `///` doc comment above \
             `#[a2a_agent]` or `#[a2a_agent(description = \"...\")]`",
        );
    }
    if !errors.is_empty() {
        let errs = errors.to_compile_errors();
        let fallback = if usable { fallback(&self_ty) } else { quote!() };
        // The skills are not called from the fallback: no dead-code noise next to the error.
        return quote! {
            #errs
            #[allow(dead_code)]
            #imp
            #fallback
            #require_skills
        };
    }
    let description = description.expect("checked above");

    let subst = |tokens: TokenStream| replace_self(tokens, &self_ty);
    let (skill_items, skill_infos) = skill_tokens(&skills, &subst);
    let info = agent_info(args, description, &self_ty, &skill_infos);
    let arms = skills.iter().map(|s| s.prepare_arm(&quote!(self)));
    agent_items(&imp, &self_ty, &skill_items, &info, arms, &require_skills)
}

/// Whether the block is one `#[a2a_agent]` goes on: an inherent impl that is not generic.
/// When it is not, the errors say why, and no fallback items for the type can be emitted.
fn check_block(imp: &ItemImpl, errors: &mut Errors) -> bool {
    let mut usable = true;
    if let Some((_, path, _)) = &imp.trait_ {
        errors.spanned(
            path,
            "`#[a2a_agent]` goes on an inherent impl block (`impl MyAgent { ... }`), not on a trait impl",
        );
        usable = false;
    }
    if !imp.generics.params.is_empty() || imp.generics.where_clause.is_some() {
        errors.spanned(
            &imp.generics,
            "`#[a2a_agent]` does not support generic impl blocks: the agent's card and skills are \
             static; use a concrete type (e.g. a type alias or a newtype) per agent",
        );
        usable = false;
    }
    usable
}

/// The block's skills, their attributes stripped from the methods (and misplaced ones from
/// the other items, with an error each).
fn take_skills(imp: &mut ItemImpl, errors: &mut Errors) -> Vec<Skill> {
    let mut skills: Vec<Skill> = Vec::new();
    for item in &mut imp.items {
        match item {
            ImplItem::Fn(method) => {
                if let Some(skill) = Skill::take(method, errors) {
                    skills.push(skill);
                }
            }
            ImplItem::Const(c) => strip_misplaced(&mut c.attrs, errors),
            ImplItem::Type(t) => strip_misplaced(&mut t.attrs, errors),
            ImplItem::Macro(m) => strip_misplaced(&mut m.attrs, errors),
            _ => {}
        }
    }
    skills
}

/// Skill ids are distinct within a block, and one skill at most is the default.
fn check_skill_ids(skills: &[Skill], errors: &mut Errors) {
    for (i, s) in skills.iter().enumerate() {
        if let Some(first) = skills[..i].iter().find(|o| o.id == s.id) {
            errors.at(
                s.id_span,
                format!(
                    "duplicate skill id `{}` (method `{}` uses it too): set a distinct `#[skill(id = \"...\")]`",
                    s.id, first.method
                ),
            );
        }
        if let Some(span) = s.default
            && let Some(first) = skills[..i].iter().find(|o| o.default.is_some())
        {
            errors.at(
                span,
                format!(
                    "only one skill can be the default, and `{}` already is: remove one `default`",
                    first.id
                ),
            );
        }
    }
}

/// Each skill's nested items and its `SkillInfo { .. }` literal, in order.
fn skill_tokens(
    skills: &[Skill],
    subst: &dyn Fn(TokenStream) -> TokenStream,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let mut skill_items = Vec::new();
    let mut skill_infos = Vec::new();
    for (i, s) in skills.iter().enumerate() {
        let (items, info) = s.info(i, subst);
        skill_items.push(items);
        skill_infos.push(info);
    }
    (skill_items, skill_infos)
}

/// The agent's `AgentInfo { .. }` literal: the card fields of its attribute, defaults filled
/// in, and its skills.
fn agent_info(
    args: AgentArgs,
    description: StrValue,
    self_ty: &Type,
    skill_infos: &[TokenStream],
) -> TokenStream {
    let name = args
        .name
        .unwrap_or_else(|| StrValue::lit(&type_name(self_ty), Span::call_site()));
    let version = match args.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    let provider = match args.provider {
        Some((o, u)) => quote!(::core::option::Option::Some((#o, #u))),
        None => quote!(::core::option::Option::None),
    };
    let opt = |v: Option<StrValue>| match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    };
    let documentation_url = opt(args.documentation_url);
    let icon_url = opt(args.icon_url);
    let default_modes = || {
        DEFAULT_MODES
            .iter()
            .map(|m| StrValue::lit(m, Span::call_site()))
            .collect::<Vec<_>>()
    };
    let input_modes = str_slice(&args.input_modes.unwrap_or_else(default_modes));
    let output_modes = str_slice(&args.output_modes.unwrap_or_else(default_modes));
    let streaming = args.streaming;
    let push = args.push_notifications;
    quote! {
        ::a2a_kit::__private::AgentInfo {
            name: #name,
            description: #description,
            version: #version,
            provider: #provider,
            documentation_url: #documentation_url,
            icon_url: #icon_url,
            default_input_modes: #input_modes,
            default_output_modes: #output_modes,
            streaming: #streaming,
            push_notifications: #push,
            skills: &[#(#skill_infos),*],
        }
    }
}

/// The agent's items: the impl block, `agent_card` and `agent_info`, `GeneratedAgent` (the
/// static `AgentInfo` literal `info`) and `Agent` (dispatching by the skills' `arms`), and
/// its registration.
fn agent_items(
    imp: &ItemImpl,
    self_ty: &Type,
    skill_items: &[TokenStream],
    info: &TokenStream,
    arms: impl Iterator<Item = TokenStream>,
    require_skills: &TokenStream,
) -> TokenStream {
    quote! {
        #imp

        impl #self_ty {
            /// This agent's card, served at `base_url` (JSON-RPC at `base_url`, HTTP+JSON below
            /// it). Generated by `#[a2a_agent]`.
            #[allow(dead_code)]
            pub fn agent_card(base_url: &str) -> ::a2a_kit::__private::AgentCard {
                Self::agent_info().card(base_url)
            }

            /// This agent's static description: card fields and the skills of this impl
            /// block (skill sets are added when a service is built). Generated by
            /// `#[a2a_agent]`.
            #[allow(dead_code)]
            pub fn agent_info() -> &'static ::a2a_kit::__private::AgentInfo {
                <Self as ::a2a_kit::__private::GeneratedAgent>::base_info()
            }
        }

        #[automatically_derived]
        impl ::a2a_kit::__private::GeneratedAgent for #self_ty {
            fn base_info() -> &'static ::a2a_kit::__private::AgentInfo {
                #(#skill_items)*
                static __A2A_AGENT_INFO: ::a2a_kit::__private::AgentInfo = #info;
                &__A2A_AGENT_INFO
            }
        }

        #[automatically_derived]
        impl ::a2a_kit::__private::Agent for #self_ty {
            fn info(&self) -> &'static ::a2a_kit::__private::AgentInfo {
                Self::agent_info()
            }


            #[allow(unused_variables)]
            fn prepare(
                self: ::a2a_kit::__private::Arc<Self>,
                __a2a_skill_id: &str,
                __a2a_req: &::a2a_kit::__private::SkillRequest,
            ) -> ::core::result::Result<::a2a_kit::__private::SkillCall, ::a2a_kit::__private::A2aError> {
                match __a2a_skill_id {
                    #(#arms)*
                    __a2a_other => ::core::result::Result::Err(
                        ::a2a_kit::__private::unknown_skill(Self::agent_info(), __a2a_other),
                    ),
                }
            }
        }

        ::a2a_kit::__private::register_agent!(#self_ty);
        #require_skills
    }
}

/// `#[a2a_agent(skill_set = name)]`: the impl block and `fn name() -> SkillSet<Self>`, its
/// skills' static metadata and dispatch as a value.
fn expand_skill_set(
    imp: ItemImpl,
    skills: &[Skill],
    name: Option<syn::Ident>,
    errors: &Errors,
) -> TokenStream {
    let (Some(name), true) = (name, errors.is_empty()) else {
        let errs = errors.to_compile_errors();
        return quote! {
            #errs
            #[allow(dead_code)]
            #imp
        };
    };
    let self_ty = (*imp.self_ty).clone();
    // The items below live in a function body, where `Self` does not exist.
    let subst = |tokens: TokenStream| replace_self(tokens, &self_ty);
    let (skill_items, skill_infos) = skill_tokens(skills, &subst);
    let arms = skills
        .iter()
        .map(|s| subst(s.prepare_arm(&quote!(__a2a_self))));
    let count = skills.len();
    let name_str = name.to_string();
    let doc = format!(
        " The skills of this impl block, as a value: add them to the agent's service with \
         `AgentService::builder_with(agent, {}::{name_str}())`. Generated by \
         `#[a2a_agent(skill_set = {name_str})]`.",
        type_name(&self_ty)
    );
    // A type without an `#[a2a_agent]` block is one error, at the type.
    let set = quote_spanned!(self_ty.span()=> ::a2a_kit::__private::skill_set::<#self_ty>);
    quote! {
        #imp

        impl #self_ty {
            #[doc = #doc]
            #[allow(dead_code)]
            pub fn #name() -> ::a2a_kit::__private::SkillSet<Self> {
                #(#skill_items)*

                static __A2A_SKILLS: [::a2a_kit::__private::SkillInfo; #count] = [#(#skill_infos),*];

                #[allow(unused_variables)]
                fn __a2a_prepare(
                    __a2a_self: ::a2a_kit::__private::Arc<#self_ty>,
                    __a2a_skill_id: &str,
                    __a2a_req: &::a2a_kit::__private::SkillRequest,
                ) -> ::core::result::Result<::a2a_kit::__private::SkillCall, ::a2a_kit::__private::A2aError> {
                    match __a2a_skill_id {
                        #(#arms)*
                        __a2a_other => ::core::result::Result::Err(
                            ::a2a_kit::__private::unknown_block_skill(&__A2A_SKILLS, __a2a_other),
                        ),
                    }
                }

                #set(#name_str, &__A2A_SKILLS, __a2a_prepare, ::core::file!(), ::core::line!())
            }
        }
    }
}

/// After an error: the items user code refers to, so one mistake is one error.
fn fallback(self_ty: &Type) -> TokenStream {
    quote! {
        impl #self_ty {
            #[allow(dead_code)]
            pub fn agent_card(_: &str) -> ::a2a_kit::__private::AgentCard {
                ::core::unreachable!("#[a2a_agent] failed to expand")
            }
            #[allow(dead_code)]
            pub fn agent_info() -> &'static ::a2a_kit::__private::AgentInfo {
                ::core::unreachable!("#[a2a_agent] failed to expand")
            }
        }
        impl ::a2a_kit::__private::GeneratedAgent for #self_ty {
            fn base_info() -> &'static ::a2a_kit::__private::AgentInfo {
                ::core::unreachable!("#[a2a_agent] failed to expand")
            }
        }
        impl ::a2a_kit::__private::Agent for #self_ty {
            fn info(&self) -> &'static ::a2a_kit::__private::AgentInfo {
                ::core::unreachable!("#[a2a_agent] failed to expand")
            }
            fn prepare(
                self: ::a2a_kit::__private::Arc<Self>,
                _: &str,
                _: &::a2a_kit::__private::SkillRequest,
            ) -> ::core::result::Result<::a2a_kit::__private::SkillCall, ::a2a_kit::__private::A2aError> {
                ::core::unreachable!("#[a2a_agent] failed to expand")
            }
        }
    }
}

/// `#[skill]` / `#[streaming]` on an associated const, type or macro: report and remove.
fn strip_misplaced(attrs: &mut Vec<syn::Attribute>, errors: &mut Errors) {
    attrs.retain(|a| {
        let misplaced = is_skill_attr(a) || is_streaming_attr(a);
        if misplaced {
            errors.spanned(
                a,
                "`#[skill]` and `#[streaming]` go on methods (`async fn name(&self, ..)`)",
            );
        }
        !misplaced
    });
}

/// The last path segment's name (`crate::agents::Travel` -> `Travel`).
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        other => other.to_token_stream().to_string(),
    }
}

/// Replace `Self` by the concrete type (for items nested in a function body, which cannot
/// name `Self`): `Self` -> `T`, `Self::X` -> `<T>::X`.
fn replace_self(tokens: TokenStream, self_ty: &Type) -> TokenStream {
    let mut out = TokenStream::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Ident(ref i) if i == "Self" => {
                let followed_by_path =
                    matches!(iter.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                if followed_by_path {
                    out.extend(quote!(<#self_ty>));
                } else {
                    self_ty.to_tokens(&mut out);
                }
            }
            TokenTree::Group(g) => {
                let mut ng =
                    proc_macro2::Group::new(g.delimiter(), replace_self(g.stream(), self_ty));
                ng.set_span(g.span());
                out.extend([TokenTree::Group(ng)]);
            }
            other => out.extend([other]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_is_replaced() {
        let ty: Type = syn::parse_quote!(Agent);
        let out = replace_self(quote!(Vec<Self>, Self::Out, Option<Data<Self>>), &ty);
        assert_eq!(
            out.to_string(),
            quote!(Vec<Agent>, <Agent>::Out, Option<Data<Agent>>).to_string()
        );
    }

    #[test]
    fn type_names() {
        assert_eq!(type_name(&syn::parse_quote!(crate::a::Travel)), "Travel");
    }
}

#[cfg(test)]
mod expansion_tests {
    use quote::quote;

    fn expand(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        super::expand(attr, item).to_string()
    }

    #[test]
    fn expansion_sample() {
        let out = expand(
            quote!(name = "Hello Agent"),
            quote! {
                /// A friendly agent.
                impl HelloAgent {
                    /// Greet the user by name.
                    #[skill(tags = ["greeting"])]
                    async fn greet(&self, Text(name): Text) -> String { format!("Hello, {name}!") }

                    /// Count.
                    #[streaming]
                    #[skill]
                    fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static { todo!() }
                }
            },
        );
        if std::env::var_os("A2A_PRINT_EXPANSION").is_some() {
            println!("{out}");
        }
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("# [skill"), "attributes are stripped: {out}");
        assert!(
            !out.contains("# [streaming"),
            "attributes are stripped: {out}"
        );
        assert!(out.contains("static __A2A_AGENT_INFO"));
        assert!(out.contains("\"greet\" =>"));
        assert!(out.contains("SkillStream :: drive"));
        assert!(out.contains("description : \"A friendly agent.\""));
        assert!(out.contains("env ! (\"CARGO_PKG_VERSION\")"));
    }

    #[test]
    fn skill_set_expansion() {
        let out = expand(
            quote!(skill_set = shouting),
            quote! {
                impl HelloAgent {
                    /// Shout.
                    #[skill(id = "shout")]
                    async fn shout(&self, Text(t): Text, d: Data<Self>) -> String { t }

                    fn helper(&self) {}
                }
            },
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("# [skill"), "attributes are stripped: {out}");
        assert!(out.contains("pub fn shouting ()"), "{out}");
        assert!(out.contains("skill_set :: < HelloAgent >"), "{out}");
        assert!(out.contains("\"shout\" =>"), "{out}");
        assert!(
            out.contains("Data < HelloAgent >"),
            "`Self` is replaced: {out}"
        );
        // A skill set has no card fields, no `impl Agent` and no registration of its own.
        assert!(!out.contains("fn agent_card"), "{out}");
        assert!(!out.contains("register_agent"), "{out}");
        assert!(
            !out.contains("impl :: a2a_kit :: __private :: Agent"),
            "{out}"
        );
    }

    #[test]
    fn blocks_without_skills() {
        let out = expand(
            quote!(),
            quote! { /// Doc.
            impl A {} },
        );
        assert_eq!(out.matches("compile_error").count(), 0, "{out}");
        assert!(out.contains("require_skills !"), "{out}");
        assert!(out.contains("register_agent !"), "{out}");

        let out = expand(quote!(skill_set = s), quote! { impl A {} });
        assert_eq!(out.matches("compile_error").count(), 1, "{out}");
        assert!(
            out.contains("this `#[a2a_agent(skill_set = ..)]` block has no skills"),
            "{out}"
        );
    }

    #[test]
    fn skill_set_takes_no_card_keys_and_extend_is_renamed() {
        let out = expand(
            quote!(skill_set = s, name = "X", version = "1"),
            quote! {
                impl A {
                    /// Skill.
                    #[skill]
                    async fn s(&self) {}
                }
            },
        );
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(
            out.contains("`name` does not go on an `#[a2a_agent(skill_set = ..)]` block"),
            "{out}"
        );
        assert!(out.contains("async fn s"), "{out}");

        let out = expand(
            quote!(skill_set = "s"),
            quote! { impl A { #[skill] async fn s(&self) {} } },
        );
        assert!(out.contains("`skill_set` names the function"), "{out}");
        let out = expand(
            quote!(extend),
            quote! { impl A { #[skill] async fn s(&self) {} } },
        );
        assert!(out.contains("`extend` is now `skill_set = name`"), "{out}");
    }

    #[test]
    fn errors_keep_the_item() {
        let out = expand(
            quote!(nmae = "x"),
            quote! {
                /// Doc.
                impl A {
                    /// Skill.
                    #[skill(bogus)]
                    async fn s(&self) {}
                }
            },
        );
        assert_eq!(out.matches("compile_error").count(), 2, "{out}");
        assert!(out.contains("async fn s"), "{out}");
        assert!(!out.contains("# [skill"), "{out}");
        assert!(out.contains("unreachable"), "fallback items: {out}");
    }
}
