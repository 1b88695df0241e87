//! `a2a console URL`: the console page of a2a-kit-axum, served on this machine for an agent
//! anywhere, its calls forwarded to the agent.

use crate::{Failure, Global, Res, connect};

/// `a2a console URL`: the console page, served locally, for the agent at `url` (checked
/// first: its card must be readable), until Ctrl-C. `--ca-cert` reaches the agent the same
/// way; `--token`, `--api-key` and `-H` are sent with every call the page makes without its
/// own.
pub(crate) async fn serve(g: &Global, url: &str, bind: std::net::SocketAddr) -> Res {
    let client = connect(g, url).await?;
    let base = url.trim_end_matches('/');
    let base = base
        .strip_suffix(a2a_kit::binding::AGENT_CARD_PATH)
        .unwrap_or(base);
    let mut options = a2a_kit_axum::console::RemoteOptions::default();
    if let Some(path) = &g.ca_cert {
        options.root_certificates_pem = Some(
            std::fs::read(path)
                .map_err(|e| Failure::Usage(format!("--ca-cert {}: {e}", path.display())))?,
        );
    }
    let mut add = |name: &str, value: &str, flag: &str| -> Res {
        let name = http::HeaderName::try_from(name.trim())
            .map_err(|e| Failure::Usage(format!("{flag}: `{name}` is not a header name ({e})")))?;
        let value = http::HeaderValue::try_from(value.trim())
            .map_err(|e| Failure::Usage(format!("{flag}: not a header value ({e})")))?;
        options.headers.insert(name, value);
        Ok(())
    };
    for h in &g.headers {
        let Some((name, value)) = h.split_once(':') else {
            return Err(Failure::Usage(format!(
                "header `{h}` must look like `Name: value`"
            )));
        };
        add(name, value, "-H")?;
    }
    if let Some(token) = &g.token {
        add("authorization", &format!("Bearer {token}"), "--token")?;
    }
    if let Some(key) = &g.api_key {
        // Where the card says the key goes (a header), else X-API-Key.
        let header = client
            .card()
            .security_schemes
            .values()
            .find_map(|s| match s {
                a2a_kit::protocol::SecurityScheme::ApiKeySecurityScheme(k)
                    if k.location.eq_ignore_ascii_case("header") =>
                {
                    Some(k.name.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| "X-API-Key".to_string());
        add(&header, key, "--api-key")?;
    }
    let console = a2a_kit_axum::console::Console::remote_with(base, options)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| Failure::Usage(format!("could not listen on {bind} (--bind): {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    eprintln!(
        "console for {} ({base}) at http://{local}/_console/ (Ctrl-C to stop)",
        client.card().name
    );
    if !local.ip().is_loopback() {
        eprintln!(
            "warning: --bind {bind} is not a loopback address: anyone who reaches it can use the agent through this console{}",
            if options_have_credentials(g) {
                ", with the credentials given here"
            } else {
                ""
            }
        );
    }
    let app: axum::Router = console.router();
    axum::serve(listener, app)
        .with_graceful_shutdown(a2a_kit_axum::shutdown_signal())
        .await
        .map_err(|e| Failure::Usage(format!("the console server stopped: {e}")))
}

/// Whether the command line gives credentials the console would add to its calls.
fn options_have_credentials(g: &Global) -> bool {
    g.token.is_some() || g.api_key.is_some() || !g.headers.is_empty()
}
