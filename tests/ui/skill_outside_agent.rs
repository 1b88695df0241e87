use a2a_kit::prelude::*;

struct Hello;

impl Hello {
    /// Greet.
    #[skill]
    #[streaming]
    fn greet(&self, Text(name): Text) -> impl Stream<Item = String> + Send + 'static {
        futures::stream::iter([format!("Hello, {name}!")])
    }
}

fn main() {
    let _ = Hello.greet(Text("Ada".into()));
}
