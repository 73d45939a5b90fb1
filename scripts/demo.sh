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
  echo "demo: not root, so no SSH fleet (it creates a dedicated agent user and starts sshd processes, which needs root):" \
    "running on local slots, both destinations all the same (scripts/demo.sh --local says this is what you want)" >&2
  mode=local
elif [[ $mode == fleet ]]; then
  echo "demo: as root: installs Debian packages it lacks (scripts/setup.sh --demo), creates the agent user fanout-agent" \
    "and starts 4 private sshd agents on 127.0.1.1-4 (Agents/local-fleet), stopped at the end; --local needs none of it"
fi

if [[ $mode == fleet ]]; then bash scripts/setup.sh --demo; fi
if [[ -n ${FANOUT_DEMO_FANOUT:-} ]]; then
  fanout=$FANOUT_DEMO_FANOUT
  [[ -x $fanout ]] || { echo "demo: FANOUT_DEMO_FANOUT=$fanout is not an executable" >&2; exit 2; }
else
  source scripts/dev-packages.sh # Debian's -dev packages, fetched without root when missing: sets `flags`
  echo "== building Fanout"
  swift build --product fanout "${flags[@]}" 2>&1 | tail -1
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
  # Local slots: the same two destinations, one queue over this machine's slots.
  local_config=$(mktemp -d "${TMPDIR:-/tmp}/fanout-demo.XXXXXX")
  trap 'rm -rf "$local_config"' EXIT
  printf '%s\n' 'slots: 4' 'destinations:' '  - name: debug' '    configuration: debug' '  - name: release' \
    '    configuration: release' >"$local_config/demo.yml"
  args+=(--config "$local_config/demo.yml")
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
