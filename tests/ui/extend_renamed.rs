//! `#[a2a_agent(extend)]` became `#[a2a_agent(skill_set = name)]`: the error says so.
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

#[a2a_agent(extend)]
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
