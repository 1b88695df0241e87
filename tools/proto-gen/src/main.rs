//! Compiles `a2a-kit/proto/a2a.proto` with protox (no system `protoc`) and writes the prost
//! messages, tonic stubs and encoded descriptor set a2a-kit commits (`a2a-kit/src/grpc/gen/`).
//!
//! `a2a-proto-gen ROOT OUT`: ROOT is the workspace, OUT the directory written.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let root = PathBuf::from(args.next().ok_or("usage: a2a-proto-gen ROOT OUT")?);
    let out = PathBuf::from(args.next().ok_or("usage: a2a-proto-gen ROOT OUT")?);
    let fds = protox::compile(["a2a.proto"], [root.join("a2a-kit/proto")])?;
    std::fs::create_dir_all(&out)?;
    // The descriptor set itself: what a reflection service or a test oracle reads.
    std::fs::write(out.join("a2a.bin"), prost::Message::encode_to_vec(&fds))?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // The kit brings its own transport (one listener for every binding; the client's
        // channel is built where it is used).
        .build_transport(false)
        .out_dir(&out)
        // Part.raw as `Bytes`: handed on without a copy.
        .bytes(".lf.a2a.v1.Part.raw")
        // Decode errors are INVALID_ARGUMENT, not tonic's INTERNAL.
        .codec_path("crate::grpc::ProtoCodec")
        .emit_rerun_if_changed(false)
        .compile_fds(fds)?;
    Ok(())
}
