#!/usr/bin/env bash
# A private PostgreSQL server for benchmarks (queue mode), never the system's service:
#   scripts/private-postgres.sh start DIR   initdb into DIR/data, start on a free port of 127.0.0.1 (as `nobody` when
#                                           run as root: PostgreSQL refuses root), make the role `bench` with a random
#                                           password in DIR/pgpass (mode 0600) and its database `queue`; prints
#                                           "URL PGPASSFILE" on one line
#   scripts/private-postgres.sh stop DIR    stops it by the PID in DIR/data/postmaster.pid (fast shutdown, then SIGKILL
#                                           after 20 s) and removes DIR
# The tests start theirs from Swift (Tests/FanoutTestSupport/PrivatePostgres.swift: TLS and several roles).
set -euo pipefail
die() { echo "private-postgres: $*" >&2; exit 1; }
(($# == 2)) || die "usage: private-postgres.sh start|stop DIR"
what=$1 dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[[ -x $bin/postgres ]] || die "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin): run scripts/setup.sh"
as=()
if ((EUID == 0)); then as=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi

case $what in
  start)
    [[ ! -e $dir/data ]] || die "$dir/data exists: stop that server first"
    mkdir -p "$dir/socket"
    password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
    printf 'bench-admin\n' >"$dir/admin.pw"
    chmod 0755 "$dir"
    if ((EUID == 0)); then chown -R 65534:65534 "$dir"; fi
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U fanout --pwfile="$dir/admin.pw" -A scram-sha-256 --no-sync -E UTF8 \
      --no-locale >"$dir/initdb.log" 2>&1 || die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
    printf 'local all fanout trust\nhost all bench 127.0.0.1/32 scram-sha-256\n' >"$dir/data/pg_hba.conf"
    for _ in 1 2 3 4 5; do
      port=$((20000 + RANDOM % 20000))
      "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-p $port -k $dir/socket -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=300" \
        start >/dev/null 2>&1 && break
      port=
    done
    [[ -n ${port:-} ]] || die "the server did not start (see $dir/server.log)"
    psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" -p "$port" -U fanout -d postgres)
    "${psql[@]}" -c "CREATE ROLE bench LOGIN PASSWORD '$password'" >/dev/null
    "${psql[@]}" -c "CREATE DATABASE queue OWNER bench" >/dev/null
    printf '127.0.0.1:%s:queue:bench:%s\n' "$port" "$password" >"$dir/pgpass"
    chmod 0600 "$dir/pgpass"
    echo "postgres://bench@127.0.0.1:$port/queue?sslmode=disable $dir/pgpass"
    ;;
  stop)
    pidfile=$dir/data/postmaster.pid
    if [[ -f $pidfile ]]; then
      pid=$(head -n 1 "$pidfile")
      if [[ $pid =~ ^[0-9]+$ ]] && kill -INT "$pid" 2>/dev/null; then
        for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
      fi
    fi
    rm -rf "$dir"
    ;;
  *) die "usage: private-postgres.sh start|stop DIR" ;;
esac
