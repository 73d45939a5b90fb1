#!/usr/bin/env bash
# Builds the demo suite's test product and prints its path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
demo="$root/Tests/Fixtures/DemoSuite"
configuration=${1:-debug}
swift build --build-tests --package-path "$demo" -c "$configuration" >&2
bin=$(swift build --build-tests --package-path "$demo" -c "$configuration" --show-bin-path)
echo "$bin/DemoSuitePackageTests.xctest"
