use a2a_kit::prelude::*;

/// Says hello.
#[a2a_agent]
struct Hello;

fn main() {
    let _ = Hello;
}
