#!/usr/bin/env bash
# A suite that shares a database, run in parallel: a private PostgreSQL server (scripts/private-postgres.sh: its own
# folder, a free port on 127.0.0.1, no system service, stopped by PID at the end) and Tests/Fixtures/DatabaseSuite,
# whose 30 tests empty, fill and count a table in the database DATABASE_URL names.
#   1. `fanout run --slots 8` on ONE shared database: tests count each other's rows and fail (shown);
#   2. the same with a database per worker: DATABASE_URL: …/app_test_${FANOUT_WORKER} and slot hooks that create and
#      drop it: every test passes, and no app_test_ database is left (listed).
#   scripts/demo-database.sh [fanout run options…]
# Environment (for tests): FANOUT_DEMO_FANOUT=PATH uses that fanout executable instead of building one;
# FANOUT_DEMO_DATABASE_DIR is where the server and the reports live (default: a new temporary folder).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [[ -n ${FANOUT_DEMO_FANOUT:-} ]]; then
  fanout=$FANOUT_DEMO_FANOUT
  [[ -x $fanout ]] || { echo "demo-database: FANOUT_DEMO_FANOUT=$fanout is not an executable" >&2; exit 2; }
else
  source scripts/dev-packages.sh # Debian's -dev packages, fetched without root when missing: sets `flags`
  echo "== building Fanout"
  swift build --product fanout "${flags[@]}" 2>&1 | tail -1
  fanout="$(swift build --show-bin-path)/fanout"
fi
work=${FANOUT_DEMO_DATABASE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fanout-demo-database.XXXXXX")}
echo "== starting a private PostgreSQL server in $work/postgres"
source scripts/database-fixture.sh
database_fixture_up "$work"

echo
echo "== 1. eight slots, ONE shared database ($work/shared.yml): expect failures"
code=0
"$fanout" run --bundle "$bundle" --slots 8 --config "$work/shared.yml" --history "$work/history.sqlite" \
  --report-dir "$work/shared-report" "$@" || code=$?
echo "(exit $code: the tests of different slots emptied and filled one table at once)"
echo
echo "== 2. eight slots, a database per worker ($work/per-worker.yml): expect every test to pass"
cat "$work/per-worker.yml"
"$fanout" run --bundle "$bundle" --slots 8 --config "$work/per-worker.yml" --history "$work/history.sqlite" \
  --report-dir "$work/per-worker-report" "$@"
echo
echo "== the cluster's databases now (every app_test_ database was dropped by its slot's teardown):"
psql -X -q -t -A "$admin" -c "SELECT datname FROM pg_database WHERE datname NOT LIKE 'template%' ORDER BY 1"
echo "reports: $work/shared-report, $work/per-worker-report"
