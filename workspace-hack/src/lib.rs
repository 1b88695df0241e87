//! Nothing to use: this crate only asks for features (see its Cargo.toml), so that the
//! workspace's commands share one build of their dependencies.

#![forbid(unsafe_code)]
