#!/usr/bin/env bash
# The PostgreSQL server of a test run.
#
#   eval "$(bash .ci/postgres.sh start)"   # prints `export A2A_KIT_TEST_DATABASE_URL=…`
#   bash .ci/postgres.sh stop              # drops the run's database / stops its cluster
#
# With A2A_KIT_TEST_DATABASE_URL set, that server is used as it is. Otherwise, if a server
# answers on 127.0.0.1:5432 (user `postgres`), the run gets a fresh database there. Otherwise
# Debian's `postgresql` package is installed (when missing) and a private cluster is created
# under target/ci-postgres (initdb, trust auth, 127.0.0.1 only) on a free port, and stopped
# by `stop`. A2A_KIT_CI_PRIVATE_POSTGRES=1 makes the private cluster even when 5432 answers.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="$PWD/target/ci-postgres"
state="$dir/state"

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "PostgreSQL is needed for the tests and this user cannot install it: start one," >&2
        echo "or set A2A_KIT_TEST_DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/DB" >&2
        exit 1
    fi
}

# Run a PostgreSQL server program as a user it accepts (never root).
as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
    if [ -n "${A2A_KIT_TEST_DATABASE_URL:-}" ]; then
        echo "export A2A_KIT_TEST_DATABASE_URL='$A2A_KIT_TEST_DATABASE_URL'"
        return
    fi
    mkdir -p "$dir"
    local db="a2a_kit_test_$(date +%s)_$$"
    if [ "${A2A_KIT_CI_PRIVATE_POSTGRES:-0}" != 1 ] && answers 5432 && command -v psql >/dev/null; then
        if psql -h 127.0.0.1 -U postgres -d postgres -qAtc "CREATE DATABASE $db" >/dev/null 2>&1 ||
            PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -qAtc "CREATE DATABASE $db" >/dev/null; then
            echo "shared 5432 $db" >"$state"
            echo "export A2A_KIT_TEST_DATABASE_URL='postgres://postgres:postgres@127.0.0.1:5432/$db'"
            return
        fi
    fi
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$bin" ]; then
        echo "installing PostgreSQL (Debian's postgresql package)" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    fi
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    rm -rf "$dir/data"
    mkdir -p "$dir/data" "$dir/socket"
    if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; fi
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log"
    as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir/socket -c listen_addresses=127.0.0.1 -c fsync=off" start >&2
    echo "private $port $bin" >"$state"
    echo "export A2A_KIT_TEST_DATABASE_URL='postgres://postgres@127.0.0.1:$port/postgres'"
}

stop() {
    [ -f "$state" ] || return 0
    read -r kind a b <"$state"
    case "$kind" in
        shared)
            psql -h 127.0.0.1 -U postgres -d postgres -qAtc "DROP DATABASE IF EXISTS $b WITH (FORCE)" >/dev/null 2>&1 ||
                PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -qAtc "DROP DATABASE IF EXISTS $b WITH (FORCE)" >/dev/null 2>&1 || true
            ;;
        private)
            as_postgres "$b/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
            ;;
    esac
    rm -f "$state"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: bash .ci/postgres.sh start|stop" >&2; exit 2 ;;
esac
