//! Typed structured input and output: `Data<T>` in, `Data<T>` out, several skills and a default
//! skill for free text. The input and output JSON Schemas are published in the card.

use std::collections::BTreeMap;

use a2a_kit::prelude::*;
use a2a_kit::server::{AgentService, AgentServiceBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A flight to book.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FlightRequest {
    /// IATA code of the departure airport, e.g. "LIS".
    pub from: String,
    /// IATA code of the arrival airport, e.g. "AMS".
    pub to: String,
    /// Departure date, YYYY-MM-DD.
    pub date: String,
    /// How many people travel (1-9).
    pub passengers: u8,
}

/// A confirmed booking.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Booking {
    /// Booking reference.
    pub confirmation: String,
    /// Route, e.g. "LIS-AMS".
    pub route: String,
    /// Departure date.
    pub date: String,
    /// Passenger count.
    pub passengers: u8,
    /// Total price in euros.
    pub price_eur: u32,
}

/// An amount to convert.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Conversion {
    /// Amount in the source currency.
    pub amount: f64,
    /// Source currency code, e.g. "EUR".
    pub from: String,
    /// Target currency code, e.g. "USD".
    pub to: String,
}

/// A converted amount.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Converted {
    /// The amount in the target currency, rounded to cents.
    pub amount: f64,
    /// Target currency code.
    pub currency: String,
}

/// The travel agent holds its fare table and exchange rates: agents are values with state.
#[derive(Clone)]
pub struct TravelAgent {
    base_fare_eur: u32,
    eur_rates: BTreeMap<&'static str, f64>,
}

impl Default for TravelAgent {
    fn default() -> Self {
        TravelAgent {
            base_fare_eur: 89,
            eur_rates: BTreeMap::from([("EUR", 1.0), ("USD", 1.08), ("GBP", 0.85), ("JPY", 162.0)]),
        }
    }
}

/// Plans trips, books flights and converts currencies.
#[a2a_agent(
    name = "Travel Agent",
    provider(
        organization = "a2a-kit examples",
        url = "https://github.com/a2a-kit/a2a-kit"
    ),
    documentation_url = "https://docs.rs/a2a-kit"
)]
impl TravelAgent {
    /// Book a flight: send a data part with from, to, date and passengers.
    #[skill(id = "book-flight", tags = ["travel", "booking"])]
    async fn book(&self, Data(req): Data<FlightRequest>) -> Result<Data<Booking>, SkillError> {
        if !(1..=9).contains(&req.passengers) {
            return Err(SkillError::rejected("passengers must be between 1 and 9"));
        }
        if req.from.len() != 3 || req.to.len() != 3 {
            return Err(SkillError::rejected(
                "from and to must be 3-letter IATA codes",
            ));
        }
        let route = format!("{}-{}", req.from.to_uppercase(), req.to.to_uppercase());
        let confirmation = format!(
            "A2A{:05}",
            route.bytes().map(u32::from).sum::<u32>() * 7 % 100_000
        );
        Ok(Data(Booking {
            confirmation,
            route,
            date: req.date,
            passengers: req.passengers,
            price_eur: self.base_fare_eur * u32::from(req.passengers),
        }))
    }

    /// Convert an amount between currencies (EUR, USD, GBP, JPY).
    #[skill(tags = ["money"])]
    async fn convert(&self, Data(req): Data<Conversion>) -> Result<Data<Converted>, SkillError> {
        let rate = |c: &str| {
            self.eur_rates
                .get(c.to_uppercase().as_str())
                .copied()
                .ok_or_else(|| SkillError::rejected(format!("unknown currency {c}")))
        };
        let amount = req.amount / rate(&req.from)? * rate(&req.to)?;
        Ok(Data(Converted {
            amount: (amount * 100.0).round() / 100.0,
            currency: req.to.to_uppercase(),
        }))
    }

    /// Suggest destinations for a season or interest (the default skill for free text).
    #[skill(default, tags = ["travel", "ideas"], examples = ["somewhere warm in winter"])]
    async fn suggest(&self, Text(query): Text) -> String {
        let q = query.to_lowercase();
        let picks = if q.contains("warm") || q.contains("beach") {
            "Lisbon, Seville, the Canary Islands"
        } else if q.contains("snow") || q.contains("ski") {
            "Innsbruck, Chamonix, Hokkaido"
        } else {
            "Amsterdam, Kyoto, Porto"
        };
        format!("For \"{}\" I would look at {picks}.", query.trim())
    }
}

/// The agent, ready to configure or mount.
pub fn a2a() -> AgentServiceBuilder {
    AgentService::builder(TravelAgent::default())
}

/// A complete axum app serving the agent and its card.
pub fn app() -> axum::Router {
    a2a_kit_axum::app(a2a().build().expect("a valid configuration"))
}
