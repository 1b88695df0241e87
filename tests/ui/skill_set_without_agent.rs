//! A skill set needs the type's `#[a2a_agent]` block.
use a2a_kit::prelude::*;

struct Travel;

#[a2a_agent(skill_set = hotels)]
impl Travel {
    /// Book a hotel.
    #[skill]
    async fn hotel(&self, Text(city): Text) -> String {
        format!("hotel in {city}")
    }
}

fn main() {}
