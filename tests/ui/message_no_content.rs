use a2a_kit::prelude::*;

struct Pinger;

/// Pings.
#[a2a_agent]
impl Pinger {
    /// Do nothing, as a Message.
    #[skill(message)]
    async fn ping(&self) {}
}

fn main() {
    let _ = Pinger::agent_card("http://localhost");
}
