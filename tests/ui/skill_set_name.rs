//! `skill_set` names a function: a string is refused, with the form to use.
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

#[a2a_agent(skill_set = "hotels", name = "Hotels")]
impl Travel {
    /// Book a hotel.
    #[skill]
    async fn hotel(&self, Text(city): Text) -> String {
        format!("hotel in {city}")
    }
}

fn main() {}
