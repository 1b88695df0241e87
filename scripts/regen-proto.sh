#!/usr/bin/env bash
# Regenerates a2a-kit's gRPC code (prost messages, tonic stubs) from a2a-kit/proto/a2a.proto
# (A2A v1.0, lf.a2a.v1) and a2a-kit/proto/a2a_v03.proto (A2A v0.3, a2a.v1) with a Rust
# protobuf compiler (protox): no system `protoc`. The code is committed, so building a2a-kit
# never runs this.
#   bash scripts/regen-proto.sh          write a2a-kit/src/grpc/gen/
#   bash scripts/regen-proto.sh --check  fail if the committed code differs from the protos
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/a2a-kit/src/grpc/gen"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cargo run --quiet --locked --release --manifest-path "$root/tools/proto-gen/Cargo.toml" \
    --target-dir "$root/target/proto-gen" -- "$root" "$out"
# (tonic-prost-build formats the code itself: no rustfmt needed)
if [[ "${1:-}" == "--check" ]]; then
    if ! diff -ru "$dest" "$out"; then
        echo "a2a-kit's generated gRPC code is stale: run bash scripts/regen-proto.sh" >&2
        exit 1
    fi
    echo "generated gRPC code matches a2a-kit/proto (a2a.proto, a2a_v03.proto)"
else
    mkdir -p "$dest"
    cp "$out"/*.rs "$out"/*.bin "$dest"/
    echo "wrote $dest"
fi
