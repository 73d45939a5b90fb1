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
echo "== running the tests"
# Serially: integration suites measure performance, inject faults into real agents and time how fast they are
# noticed; sharing the 2 cores with other suites would make those measurements (not the product) unreliable.
swift test --skip-build --no-parallel "$@"
