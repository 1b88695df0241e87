use a2a_kit::prelude::*;

struct Hello<T>(T);

/// Says hello.
#[a2a_agent]
impl<T: Send + Sync + 'static> Hello<T> {
    /// Greet.
    #[skill]
    async fn greet(&self, Text(name): Text) -> String {
        format!("Hello, {name}!")
    }
}

fn main() {}
