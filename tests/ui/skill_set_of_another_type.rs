use a2a_kit::prelude::*;
use a2a_kit::server::AgentService;

struct Travel;

/// Books trips.
#[a2a_agent]
impl Travel {
    /// Book a trip.
    #[skill(default)]
    async fn book(&self, Text(to): Text) -> String {
        format!("Booked {to}")
    }
}

#[a2a_agent(skill_set = hotels)]
impl Travel {
    /// Book a hotel.
    #[skill]
    async fn hotel(&self, Text(city): Text) -> String {
        format!("Hotel in {city}")
    }
}

struct Weather;

/// Tells the weather.
#[a2a_agent]
impl Weather {
    /// Tell the weather.
    #[skill(default)]
    async fn tell(&self, Text(city): Text) -> String {
        format!("Sunny in {city}")
    }
}

fn main() {
    // A set belongs to the type whose impl block declares it.
    let _ = AgentService::builder_with(Weather, Travel::hotels());
}
