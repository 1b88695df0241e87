//! Card fields belong on the main block, not on an extension block.
use a2a_kit::prelude::*;

struct Travel;

/// Books trips.
#[a2a_agent]
impl Travel {
    /// Book a flight.
    #[skill]
    async fn flight(&self, Text(to): Text) -> String {
        format!("flight to {to}")
    }
}

#[a2a_agent(extend, name = "Hotels")]
impl Travel {
    /// Book a hotel.
    #[skill]
    async fn hotel(&self, Text(city): Text) -> String {
        format!("hotel in {city}")
    }
}

fn main() {
    let _ = Travel::agent_card("http://localhost");
}
