#!/usr/bin/env bash
# The main job: sets up what it needs, builds Fanout and the demo suite, and runs Fanout on the demo suite.
# Run it twice: the second run plans from the timing history of the first and shows estimated vs actual per class.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

bash scripts/setup.sh
echo "== building Fanout"
swift build --product fanout 2>&1 | tail -1
fanout="$(swift build --show-bin-path)/fanout"

echo "== running Fanout on the demo suite (it builds the suite first)"
set +e
"$fanout" run --package Tests/Fixtures/DemoSuite "$@"
code=$?
set -e
echo "fanout exited $code (0 all passed, 1 test failures, 2 usage/config/build error, 3 infrastructure, 130/143 interrupted)"
exit $code
