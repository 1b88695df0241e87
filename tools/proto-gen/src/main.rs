//! Compiles a2a-kit's protos with protox (no system `protoc`) and writes the prost messages,
//! tonic stubs and encoded descriptor sets a2a-kit commits (`a2a-kit/src/grpc/gen/`):
//! `a2a.proto` (A2A v1.0, package `lf.a2a.v1`: `lf.a2a.v1.rs`, `a2a.bin`) and `a2a_v03.proto`
//! (A2A v0.3, package `a2a.v1`: `a2a.v1.rs`, `a2a_v03.bin`).
//!
//! `a2a-proto-gen ROOT OUT`: ROOT is the workspace, OUT the directory written.

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let root = PathBuf::from(args.next().ok_or("usage: a2a-proto-gen ROOT OUT")?);
    let out = PathBuf::from(args.next().ok_or("usage: a2a-proto-gen ROOT OUT")?);
    std::fs::create_dir_all(&out)?;
    let protos = root.join("a2a-kit/proto");
    generate(
        &protos,
        &out,
        "a2a.proto",
        "a2a.bin",
        // Part.raw as `Bytes`: handed on without a copy.
        &[".lf.a2a.v1.Part.raw"],
    )?;
    // v0.3's file bytes carry base64 text (as its SDKs send them): decoded anyway, so plain
    // `Vec<u8>`.
    generate(&protos, &out, "a2a_v03.proto", "a2a_v03.bin", &[])?;
    Ok(())
}

/// One proto: its descriptor set as `bin`, its code as `{package}.rs`.
fn generate(
    protos: &Path,
    out: &Path,
    proto: &str,
    bin: &str,
    bytes: &[&str],
) -> Result<(), Box<dyn std::error::Error>> {
    let fds = protox::compile([proto], [protos])?;
    // The descriptor set itself: what a reflection service or a test oracle reads.
    std::fs::write(out.join(bin), prost::Message::encode_to_vec(&fds))?;
    let mut builder = tonic_prost_build::configure();
    for path in bytes {
        builder = builder.bytes(path);
    }
    builder
        .build_server(true)
        .build_client(true)
        // The kit brings its own transport (one listener for every binding; the client's
        // channel is built where it is used).
        .build_transport(false)
        .out_dir(out)
        // Decode errors are INVALID_ARGUMENT, not tonic's INTERNAL.
        .codec_path("crate::grpc::ProtoCodec")
        .emit_rerun_if_changed(false)
        .compile_fds(fds)?;
    Ok(())
}
