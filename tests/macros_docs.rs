//! The examples of `a2a-macros`' rustdoc (marked `ignore` there: a proc-macro crate cannot use
//! a2a-kit), compiled and run here. Keep them in sync.

mod a2a_agent_doc {
    use a2a_kit::prelude::*;

    #[derive(Clone, Default)]
    struct HelloAgent;

    /// A friendly agent that greets people.
    #[a2a_agent(
        name = "Hello Agent",
        provider(organization = "Example", url = "https://example.com")
    )]
    impl HelloAgent {
        /// Greet the user by name.
        #[skill(tags = ["greeting"], examples = ["Alice"])]
        async fn greet(&self, Text(name): Text) -> String {
            format!("Hello, {name}!")
        }
    }

    #[test]
    fn example() {
        let card = HelloAgent::agent_card("http://127.0.0.1:3000");
        assert_eq!(card.name, "Hello Agent");
        assert_eq!(card.description, "A friendly agent that greets people.");
        assert_eq!(card.skills[0].id, "greet");
    }
}

mod skill_doc {
    use a2a_kit::prelude::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct BookFlight {
        from: String,
        to: String,
    }

    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Booking {
        reference: String,
    }

    struct TravelAgent;

    /// Books trips.
    #[a2a_agent]
    impl TravelAgent {
        /// Book a flight.
        #[skill(id = "book-flight", tags = ["travel"], default)]
        async fn book(&self, Data(req): Data<BookFlight>) -> Result<Data<Booking>, SkillError> {
            Ok(Data(Booking {
                reference: format!("{}-{}", req.from, req.to),
            }))
        }

        /// Plan a trip, reporting progress.
        #[skill]
        async fn plan_trip(
            &self,
            ctx: TaskContext,
            Text(goal): Text,
        ) -> Result<String, SkillError> {
            ctx.status("Planning").await?;
            Ok(format!("Plan for {goal}"))
        }
    }

    #[test]
    fn example() {
        let info = TravelAgent::agent_info();
        assert_eq!(info.skills[0].id, "book-flight");
        assert_eq!(info.skills[1].id, "plan_trip");
        assert_eq!(info.skills[1].name, "Plan trip");
    }
}

mod message_doc {
    use a2a_kit::prelude::*;

    struct Greeter;

    /// Greets.
    #[a2a_agent]
    impl Greeter {
        /// Greet the user by name.
        #[skill(message)]
        async fn greet(&self, Text(name): Text) -> String {
            format!("Hello, {name}!")
        }
    }

    #[test]
    fn example() {
        assert!(Greeter::agent_info().skills[0].direct_message);
    }
}

mod streaming_doc {
    use a2a_kit::prelude::*;

    struct Counter;

    /// Counts.
    #[a2a_agent]
    impl Counter {
        /// Count to N.
        #[skill]
        #[streaming]
        fn count(&self, Text(n): Text) -> impl Stream<Item = String> + Send + 'static {
            let n: u32 = n.trim().parse().unwrap_or(5);
            a2a_kit::stream! { for i in 1..=n { yield format!("{i}\n"); } }
        }
    }

    #[test]
    fn example() {
        assert!(Counter::agent_info().skills[0].streaming);
    }
}
