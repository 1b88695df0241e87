//! a2a-kit: build A2A v1.0 agents in Rust.
pub mod protocol;
