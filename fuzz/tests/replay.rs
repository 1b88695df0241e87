//! Every seed (`seeds/<target>/`) and every input a fuzz run found a fault with
//! (`regressions/<target>/`) through its case, in a plain `cargo test`: the seeds stay valid
//! inputs the cases accept, and a fixed finding stays fixed.

use std::path::Path;

fn replay(target: &str, case: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .map(|e| e.expect("a directory entry").path())
            .collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).expect("read an input");
            eprintln!("{}", path.display());
            case(&data);
            seen += 1;
        }
    }
    assert!(seen > 0, "no seeds for {target}");
}

#[test]
fn jsonrpc() {
    replay("jsonrpc", a2a_fuzz::jsonrpc);
}

#[test]
fn v03() {
    replay("v03", a2a_fuzz::v03);
}

#[test]
fn grpc() {
    replay("grpc", a2a_fuzz::grpc);
}

#[test]
fn rest() {
    replay("rest", a2a_fuzz::rest);
}

#[test]
fn last_event_id() {
    replay("last_event_id", a2a_fuzz::last_event_id);
}

#[test]
fn push_config() {
    replay("push_config", a2a_fuzz::push_config);
}

#[test]
fn client_card() {
    replay("client_card", a2a_fuzz::client_card);
}

#[test]
fn client_stream() {
    replay("client_stream", a2a_fuzz::client_stream);
}

#[test]
fn card_signature() {
    replay("card_signature", a2a_fuzz::card_signature);
}

#[test]
fn webhook_signature() {
    replay("webhook_signature", a2a_fuzz::webhook_signature);
}

#[test]
fn bearer_jwt() {
    replay("bearer_jwt", a2a_fuzz::bearer_jwt);
}
