#!/usr/bin/env bash
# The project's tests: unit tests of every module and integration tests against real test binaries
# (the demo suite is built first). Ends with swift test's own summary line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh
echo "== building the demo suite (a real package the integration tests run)"
FANOUT_DEMO_BUNDLE=$(bash scripts/build-demo.sh debug)
export FANOUT_DEMO_BUNDLE
echo "== building Fanout and its tests"
swift build --build-tests 2>&1 | grep -v '^\[' || true
swift build --build-tests >/dev/null
echo "== building the run-time observer selective testing preloads (scripts/build-observer.sh)"
bash scripts/build-observer.sh debug
# scripts/install.sh as a user runs it (a debug build, into a scratch prefix): InstallTests check what it installed.
# It runs here, not inside the tests, because swift test holds the build folder's lock while they run.
echo "== installing fanout into a scratch prefix (scripts/install.sh --debug)"
FANOUT_INSTALL_PREFIX=$(mktemp -d "${TMPDIR:-/tmp}/fanout-install-test.XXXXXX")
trap 'rm -rf "$FANOUT_INSTALL_PREFIX"' EXIT
bash scripts/install.sh --debug "$FANOUT_INSTALL_PREFIX" | sed 's/^/  /'
export FANOUT_INSTALL_PREFIX
echo "== running the tests"
# Serially: integration suites measure performance, inject faults into real agents and time how fast they are
# noticed; sharing the 2 cores with other suites would make those measurements (not the product) unreliable.
swift test --skip-build --no-parallel "$@"
