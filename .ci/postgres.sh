#!/usr/bin/env bash
# Make sure the tests have a PostgreSQL server: the one A2A_TEST_DATABASE_URL names, else one
# on 127.0.0.1:5432 where user `postgres` may log in with password `postgres`. When nothing
# answers there, install Debian's `postgresql` package, start it and set that password.
set -euo pipefail

if [ -n "${A2A_TEST_DATABASE_URL:-}" ]; then
    exit 0
fi
answers() { (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
if answers; then
    exit 0
fi

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "PostgreSQL is needed on 127.0.0.1:5432 and this user cannot install it:" >&2
        echo "start one, or set A2A_TEST_DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/DB" >&2
        exit 1
    fi
}

if ! command -v pg_ctlcluster >/dev/null; then
    echo "installing PostgreSQL (Debian's postgresql package)" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version=$(ls /etc/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
    as_root pg_createcluster "$version" main >/dev/null
fi
as_root pg_ctlcluster "$version" main start || true
for _ in $(seq 1 60); do
    answers && break
    sleep 0.5
done
if ! answers; then
    echo "PostgreSQL $version did not start on 127.0.0.1:5432" >&2
    exit 1
fi
as_root su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\""
