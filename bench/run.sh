#!/usr/bin/env bash
# The benchmarks of issue #9 in one command (see BENCHMARKS.md):
#
#   bash bench/run.sh            # full run, rewrites BENCHMARKS.md (about 20-30 minutes)
#   bash bench/run.sh --quick    # smoke run of the harness, writes target/bench/quick.md
#
# Any other argument goes to the driver (`target/production/bench-driver --help`), e.g.
#
#   bash bench/run.sh --only instr,llm --servers hello,hello-llm,llm --out target/bench/llm.md
#
# runs only the W1 instruction counts with and without the `llm` feature and the model token
# latency (a few minutes after the build), into a file of its own. The workloads (`--only`):
# w1, instr, w2, w3, xrep, abuse (#18), fair (#29), llm; all of them by default.
#
#   bash bench/run.sh --only fair --servers stream --out target/bench/fair.md
#
# runs only the fair share workload (#29: normal clients alone, then beside one abusive client
# of each kind, `--fair-kinds hog,filler,holder,lists,push`, `--fair-seconds` each; about 5
# minutes after the build).
#
#   bash bench/run.sh --only w1,instr,w2 --servers hello,limit,stream,hello-grpc,stream-grpc,grpc-limit
#
# runs W1, its instructions and W2 over JSON-RPC and over gRPC (the servers `hello-grpc`,
# `stream-grpc`: the same agents called with tonic's client; `grpc-limit`: a bare tonic handler).
#
#   bash bench/run.sh --only w1,instr --servers hello,hello-otel --out target/bench/otel.md
#
# runs W1 and its instructions with no subscriber and with OTLP export on (#33: `hello-otel`,
# exporting spans and metrics to an OTLP/HTTP sink in the driver).
# It installs what it needs: oha (crates.io, `cargo install --locked`, into target/bench-tools/)
# and a virtualenv target/bench-venv/ with the official Python SDK (and SQLAlchemy + asyncpg
# for its PostgreSQL task store), pinned. Not part of `cargo test` or `.ci/run`.
set -euo pipefail
cd "$(dirname "$0")/.."

OHA_VERSION=1.16.0
# The `postgresql` extra (SQLAlchemy async + asyncpg) is for echo_agent.py's --database-url.
PY_PACKAGES=("a2a-sdk[http-server,postgresql]==1.3.0" "sqlalchemy==2.1.9" "asyncpg==0.32.0" "greenlet==3.5.6"
             "uvicorn==0.54.0" "uvloop==0.23.0" "httptools==0.9.0")
TOOLS=target/bench-tools
VENV=target/bench-venv

args=()
for a in "$@"; do
    if [[ $a == --quick ]]; then
        args+=(--runs 1 --w1-runs 1 --duration 3 --warmup 1 --tasks 10000 --tasks-slow 2000 --open-streams 200 --streams-per-run 1 --chunks 1000,3000 --llm-tokens 500
               --fair-seconds 5 --fair-prefill 10000
               --out target/bench/quick.md --command "bash bench/run.sh --quick")
    else
        args+=("$a")
    fi
done

# 1. The load generator.
if ! "$TOOLS/bin/oha" --version 2>/dev/null | grep -q "$OHA_VERSION"; then
    echo "== installing oha $OHA_VERSION into $TOOLS" >&2
    cargo install --locked --quiet oha --version "$OHA_VERSION" --root "$TOOLS"
fi

# 2. The Python SDK.
if ! "$VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("a2a-sdk") != "1.3.0")' 2>/dev/null; then
    echo "== creating $VENV with ${PY_PACKAGES[*]}" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check "${PY_PACKAGES[@]}"

# 3. PostgreSQL for the `hello-postgres` row: a fresh database on the server at
#    127.0.0.1:5432, or a private cluster under target/ (.ci/postgres.sh), gone at the end.
eval "$(bash .ci/postgres.sh start)"
trap 'bash .ci/postgres.sh stop' EXIT

# 4. The servers and the driver.
# The `production` profile (Cargo.toml): release, fat LTO, one codegen unit, for every server.
echo "== building the bench binaries (--profile production; a few minutes)" >&2
# Every one with the `grpc` feature (a2a-kit's gRPC binding: the agents serve gRPC on their
# port too, `bench-grpc-limit` and the driver's gRPC client are built; on by default, named here
# so the JSON-RPC rows are always of agents that serve gRPC as well).
# First with the `llm` feature: `bench-llm` (the token latency), and `bench-hello` with a2a-kit's
# `llm` compiled in, kept as `bench-hello-llm` (the W1 instructions row "llm feature compiled
# in"); then every server without it, `bench-hello` included.
cargo build --profile production --quiet -p a2a-bench --features llm,grpc --bin bench-hello --bin bench-llm
cp target/production/bench-hello target/production/bench-hello-llm
# With the `otel` feature (#33): `bench-hello-otel`, the macro hello exporting its spans and
# metrics over OTLP to the driver's sink (the W1 rows "OTLP export on").
cargo build --profile production --quiet -p a2a-bench --features otel,grpc --bin bench-hello-otel
cargo build --profile production --quiet -p a2a-bench --features grpc --bins

# 5. Run. 1,000 open streams need 2,000+ descriptors on each side.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [[ $(nproc --all) -ge 2 ]] && command -v taskset >/dev/null; then
    # Servers on CPU 0 (the driver starts them under `taskset -c 0`), the driver and every
    # client it starts (oha, the SSE client) on CPU 1.
    pin=(taskset -c 1)
    server_cpu=0
else
    echo "== fewer than 2 CPUs (or no taskset): nothing is pinned" >&2
    pin=()
    server_cpu=""
fi
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine distorts the figures)" >&2
"${pin[@]}" target/production/bench-driver \
    --oha "$TOOLS/bin/oha" --python "$VENV/bin/python" --server-cpu "$server_cpu" "${args[@]}"
