use a2a_kit::prelude::*;

struct Trips;

#[derive(serde::Deserialize, serde::Serialize)]
struct Trip {
    from: String,
}

/// Plans trips.
#[a2a_agent]
impl Trips {
    /// Plan a trip.
    #[skill]
    async fn plan(&self, Data(trip): Data<Trip>) -> String {
        trip.from
    }

    /// Echo a trip.
    #[skill]
    async fn echo(&self, Text(from): Text) -> Data<Trip> {
        Data(Trip { from })
    }
}

fn main() {
    let _ = Trips::agent_card("http://localhost");
}
