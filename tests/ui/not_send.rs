use std::rc::Rc;

use a2a_kit::prelude::*;

struct Hello;

/// Says hello.
#[a2a_agent]
impl Hello {
    /// Greet.
    #[skill]
    async fn greet(&self, ctx: TaskContext, Text(name): Text) -> Result<String, SkillError> {
        let greeting = Rc::new(format!("Hello, {name}!"));
        ctx.status("greeting").await?;
        Ok(greeting.to_string())
    }
}

fn main() {
    let _ = Hello::agent_card("http://localhost");
}
