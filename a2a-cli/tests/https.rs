//! The `a2a` command on an https:// agent: TLS works out of the box (rustls), `--ca-cert`
//! trusts a private CA, an untrusted certificate is an error with a hint, and a bad
//! `--ca-cert` file is a usage error naming it.

use std::path::PathBuf;
use std::process::Output;
use std::sync::Arc;

use a2a_kit::server::AgentService;
use a2a_tests::TestAgent;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio_rustls::rustls;

/// A CA, and a certificate it signed for localhost and 127.0.0.1.
struct TestPki {
    ca_pem: String,
    cert_der: Vec<u8>,
    key_der: Vec<u8>,
}

fn make_pki() -> TestPki {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "a2a-kit test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap()
            .signed_by(&key, &ca_cert, &ca_key)
            .unwrap();
    TestPki {
        ca_pem: ca_cert.pem(),
        cert_der: leaf.der().to_vec(),
        key_der: key.serialize_der(),
    }
}

/// Serve the TestAgent over TLS on a random port; its https:// base URL.
async fn serve_tls(pki: &TestPki) -> String {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.cert_der.clone().into()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!(
        "https://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    // Serving TLS itself, the agent knows its URL only if told (requests carry no scheme).
    let service = AgentService::builder(TestAgent)
        .public_url(base.clone())
        .build()
        .unwrap();
    let app = a2a_kit_axum::app(&service);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: not our error.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
                    .await;
            });
        }
    });
    base
}

async fn a2a(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("A2A_CA_CERT")
            .output()
            .expect("run a2a")
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("a2a-cli-https-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn an_https_agent_with_a_trusted_ca() {
    let pki = make_pki();
    let base = serve_tls(&pki).await;
    let ca = temp_file("ca.pem", &pki.ca_pem);
    let ca = ca.to_str().unwrap();

    let o = a2a(args(&["--ca-cert", ca, "card", &base])).await;
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    assert!(out.contains("Test Agent"), "{out}");

    for binding in ["jsonrpc", "rest"] {
        let o = a2a(args(&[
            "--ca-cert",
            ca,
            "--binding",
            binding,
            "--json",
            "send",
            &base,
            "over tls",
            "--skill",
            "echo",
        ]))
        .await;
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{binding}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            v["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{binding}: {v}"
        );
        assert_eq!(
            v["task"]["artifacts"][0]["parts"][0]["text"], "over tls",
            "{binding}: {v}"
        );
    }

    // The environment variable does the same.
    let o = tokio::task::spawn_blocking({
        let (ca, base) = (ca.to_string(), base.clone());
        move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_a2a"))
                .args(["card", &base])
                .env("A2A_CA_CERT", ca)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert_eq!(o.status.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_is_refused_with_a_hint() {
    let pki = make_pki();
    let base = serve_tls(&pki).await;
    let o = a2a(args(&["card", &base])).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("certificate"), "{err}");
    assert!(err.contains("hint:") && err.contains("--ca-cert"), "{err}");
    assert!(!err.contains("Os {") && !err.contains("panicked"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_ca_file_is_a_usage_error_naming_it() {
    let missing = std::env::temp_dir().join("a2a-cli-no-such-ca.pem");
    let not_pem = temp_file("not.pem", "hello");
    for (path, says) in [
        (missing.to_str().unwrap().to_string(), "No such file"),
        (not_pem.to_str().unwrap().to_string(), "no certificate"),
    ] {
        let o = a2a(args(&["--ca-cert", &path, "card", "https://127.0.0.1:9"])).await;
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("--ca-cert") && err.contains(&path), "{err}");
        assert!(err.contains(says), "{err}");
    }
}
