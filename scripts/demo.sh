#!/usr/bin/env bash
# The main job: sets up what it needs, builds Fanout, starts a fleet of 4 real sshd agents on loopback
# (Agents/local-fleet), and runs Fanout on the demo suite across them on two destinations at once (a debug and a
# release build, side by side in one report). The fleet is stopped at the end, by PID.
# Run it twice: the second run plans from the timing history of the first and shows estimated vs actual per class.
#   scripts/demo.sh [--local] [fanout run options…]     (--local: local worker slots instead of the SSH fleet)
# Environment (for tests; a person needs none): FANOUT_DEMO_FANOUT=PATH uses that fanout executable instead of building
# one; FANOUT_DEMO_FLEET_DIR and FANOUT_DEMO_PORT move the fleet (default /tmp/fanout-demo-fleet, ports 2222+).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

mode=fleet
if [[ ${1:-} == --local ]]; then mode=local; shift; fi
if [[ $mode == fleet && $(id -u) -ne 0 ]]; then
  echo "demo: the local fleet creates a dedicated agent user and needs root; running on local slots instead" >&2
  mode=local
fi

bash scripts/setup.sh
if [[ -n ${FANOUT_DEMO_FANOUT:-} ]]; then
  fanout=$FANOUT_DEMO_FANOUT
  [[ -x $fanout ]] || { echo "demo: FANOUT_DEMO_FANOUT=$fanout is not an executable" >&2; exit 2; }
else
  echo "== building Fanout"
  swift build --product fanout 2>&1 | tail -1
  bash scripts/build-observer.sh debug >/dev/null # what --selective preloads to observe run-time inputs
  fanout="$(swift build --show-bin-path)/fanout"
fi

args=(run --package Tests/Fixtures/DemoSuite)
if [[ $mode == fleet ]]; then
  fleet=${FANOUT_DEMO_FLEET_DIR:-/tmp/fanout-demo-fleet}
  echo "== starting 4 sshd agents on 127.0.1.1-4 (Agents/local-fleet/up.sh)"
  bash Agents/local-fleet/down.sh --dir "$fleet" >/dev/null 2>&1 || true
  # --hide: the agents must not see this build tree, so deployment is really tested (nothing read from here).
  # On a fresh clone the suite's build folder does not exist yet (fanout builds it below): make it, so that it
  # can be hidden now and stays hidden once the build fills it.
  mkdir -p "$root/Tests/Fixtures/DemoSuite/.build"
  config=$(bash Agents/local-fleet/up.sh 4 --dir "$fleet" --port "${FANOUT_DEMO_PORT:-2222}" --slots 2 \
    --hide "$root/Tests/Fixtures/DemoSuite/.build" | tail -n1)
  trap 'bash Agents/local-fleet/down.sh --dir "$fleet" >/dev/null 2>&1 || true' EXIT
  # The fleet's agents plus two destinations: each build setting is built once and deployed as its own product.
  cp "$config" "$fleet/demo.yml"
  cat >>"$fleet/demo.yml" <<'YML'
destinations:
  - name: debug
    configuration: debug
  - name: release
    configuration: release
YML
  args+=(--config "$fleet/demo.yml")
else
  args+=(--slots 4)
fi

echo "== running Fanout on the demo suite (it builds the suite first)"
# Where the report goes: --report-dir when given, else a new run folder under .fanout/reports (the newest one
# written after this mark).
report_dir=
previous=
for arg in "$@"; do
  if [[ $previous == --report-dir ]]; then report_dir=$arg; fi
  case $arg in --report-dir=*) report_dir=${arg#--report-dir=} ;; esac
  previous=$arg
done
mark=$(mktemp)
set +e
"$fanout" "${args[@]}" "$@"
code=$?
set -e
echo "fanout exited $code (0 all passed, 1 test failures, 2 usage/config/build error, 3 infrastructure, 130/143 interrupted)"
if [[ -z $report_dir ]]; then
  report_dir=$(ls -1dt .fanout/reports/*/ 2>/dev/null | head -n1 || true)
  report_dir=${report_dir%/}
fi
if [[ -n $report_dir && -f $report_dir/report.html && $report_dir/report.html -nt $mark ]]; then
  echo "Open the report: $(cd "$report_dir" && pwd)/report.html"
fi
rm -f "$mark"
exit $code
