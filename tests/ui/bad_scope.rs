use a2a_kit::prelude::*;

struct Travel;

/// Books trips.
#[a2a_agent]
impl Travel {
    /// Book a trip.
    #[skill(scopes = ["travel:book", "travel read", ""])]
    async fn book(&self, Text(to): Text) -> String {
        format!("Booked: {to}")
    }
}

fn main() {
    let _ = Travel::agent_card("http://localhost");
}
