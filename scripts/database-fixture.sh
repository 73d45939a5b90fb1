# Sourced by scripts/demo-database.sh and scripts/bench.sh --database: the database fixture's set-up, one recipe for
# both. `database_fixture_up WORK` starts a private PostgreSQL server in WORK/postgres (scripts/private-postgres.sh;
# stopped by PID when the calling shell exits), creates its database `shared`, builds Tests/Fixtures/DatabaseSuite,
# and writes WORK/shared.yml (every test on `shared`) and WORK/per-worker.yml (README's recipe: a database per
# worker, made and dropped by slot hooks). Sets `admin` (a URI of the server's `postgres` database) and `bundle`, and
# defines `database_url NAME` (a URI of the server's database NAME).
# shellcheck shell=bash
database_fixture_up() {
  local work=$1 url
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null ||
    { echo "PostgreSQL's server is not installed: run scripts/setup.sh (as root) first" >&2; return 2; }
  command -v psql >/dev/null || { echo "psql is not installed: run scripts/setup.sh first" >&2; return 2; }
  mkdir -p "$work"
  chmod 0755 "$work" # as root the server runs as nobody: it must reach its folder
  bash scripts/private-postgres.sh stop "$work/postgres" # one a killed run left behind, by its PID file
  read -r url _ < <(bash scripts/private-postgres.sh start "$work/postgres")
  # shellcheck disable=SC2064 # the folder is fixed now
  trap "bash scripts/private-postgres.sh stop '$work/postgres'" EXIT
  database_port=${url##*:}; database_port=${database_port%%/*}
  database_socket=$work/postgres/socket
  database_url() { echo "postgresql://fanout@/$1?host=$database_socket&port=$database_port"; }
  admin=$(database_url postgres)
  psql -X -q -v ON_ERROR_STOP=1 "$admin" -c "CREATE DATABASE shared"
  echo "== building Tests/Fixtures/DatabaseSuite"
  swift build --build-tests --package-path Tests/Fixtures/DatabaseSuite 2>&1 | tail -1
  bundle="$(swift build --build-tests --package-path Tests/Fixtures/DatabaseSuite --show-bin-path)/DatabaseSuitePackageTests.xctest"
  printf '%s\n' 'destination:' '  environment:' "    DATABASE_URL: $(database_url shared)" >"$work/shared.yml"
  # The hooks' $ADMIN_URL and $FANOUT_WORKER are their shell's.
  # shellcheck disable=SC2016
  printf '%s\n' 'destination:' '  environment:' "    DATABASE_URL: $(database_url 'app_test_${FANOUT_WORKER}')" \
    "    ADMIN_URL: $admin" 'hooks:' '  slot:' \
    '    set_up: psql "$ADMIN_URL" -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE app_test_$FANOUT_WORKER"' \
    '    tear_down: psql "$ADMIN_URL" -X -q -c "DROP DATABASE IF EXISTS app_test_$FANOUT_WORKER"' >"$work/per-worker.yml"
}
