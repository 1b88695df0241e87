#!/usr/bin/env bash
# Run each fuzz target for a while: `bash fuzz/run.sh [SECONDS] [TARGET...]` (default 600 s,
# every target). Needs `cargo install cargo-fuzz`. Builds with libFuzzer's coverage
# instrumentation but no sanitizer (safe Rust; a panic is the finding), so the stable
# toolchain does. New inputs go to target/fuzz-corpus/<target> (seeded from fuzz/seeds),
# findings to target/fuzz-artifacts/<target>; a finding, once fixed, belongs in
# fuzz/regressions/<target>/ (replayed by `cargo test -p a2a-fuzz`).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(jsonrpc grpc rest v03 last_event_id push_config client_card client_stream card_signature webhook_signature bearer_jwt)
fi
command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz is missing: cargo install cargo-fuzz" >&2; exit 2; }
# cargo-fuzz expects a nightly compiler; this machine's stable one passes as one with this.
export RUSTC_BOOTSTRAP=1
build=(--fuzz-dir fuzz --features libfuzzer --sanitizer none --release --debug-assertions)
# Build every target first: the runs then fuzz the same code even if sources change meanwhile.
cargo fuzz build "${build[@]}"
bin=target/x86_64-unknown-linux-gnu/release
for t in "${targets[@]}"; do
  corpus=target/fuzz-corpus/$t
  artifacts=target/fuzz-artifacts/$t
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  log=target/fuzz-artifacts/$t.log
  echo "== $t: ${seconds}s"
  status=0
  "$bin/$t" "$corpus" "fuzz/seeds/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1 || status=$?
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^Done|^==.*ERROR|panicked" "$log" || true
  echo "   corpus: $(ls "$corpus" | wc -l) inputs; findings: $(ls "$artifacts" | wc -l); exit $status"
  if [ "$status" -ne 0 ]; then
    grep -A 3 panicked "$log" | head -8 || true
    failed=1
  fi
done
exit "${failed:-0}"
