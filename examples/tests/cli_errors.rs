//! The example binaries report a mistake on their command line as a message and a hint, not
//! as a `Debug` structure (`Os { code: 98, .. }`), and exit with an error status.

use std::process::Command;

const HELLO: &str = env!("CARGO_BIN_EXE_hello");

#[test]
fn an_address_in_use_is_a_message_with_a_hint() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = taken.local_addr().unwrap();
    let out = Command::new(HELLO)
        .args(["--bind", &addr.to_string()])
        .output()
        .expect("run hello");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("could not listen on {addr}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint:") && stderr.contains("--bind"),
        "{stderr}"
    );
    assert!(!stderr.contains("Os {"), "{stderr}");
}

#[test]
fn a_bad_public_url_names_the_setting() {
    let out = Command::new(HELLO)
        .args(["--print-card", "--public-url", "localhost:3000"])
        .output()
        .expect("run hello");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("public_url `localhost:3000`") && !stderr.contains("PublicUrl {"),
        "{stderr}"
    );
}
