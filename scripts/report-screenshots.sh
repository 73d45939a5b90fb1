#!/usr/bin/env bash
# The screenshots of report.html in docs/ (report-html-failures.png, report-html-timeline.png,
# report-html-trend.png), taken with headless Chromium from a real run of the demo suite on local slots:
#   1. a run with a planted failure and a planted crash (DEMO_FAIL=1 DEMO_CRASH=1), its performance test's result
#      accepted as the baseline; three more like it; then one with the performance test slowed down
#      (DEMO_PERF_SLOW=1), all recorded in one history, so its report carries a trend of five earlier runs;
#   2. that run's report.html, copied once per shot with a <style> that shows only the section the shot is of (and
#      the first unit log opened, as a click would). The page fanout wrote is not changed.
#   scripts/report-screenshots.sh [--out DIR]      (default docs/)
# Environment: FANOUT=PATH uses that fanout executable instead of building one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=docs
if [[ ${1:-} == --out ]]; then out=${2:?--out needs a folder}; fi
mkdir -p "$out"

bash scripts/setup.sh >/dev/null
if [[ -n ${FANOUT:-} ]]; then
  fanout=$FANOUT
else
  swift build --product fanout 2>&1 | tail -1
  fanout="$(swift build --show-bin-path)/fanout"
fi
bundle=$(bash scripts/build-demo.sh debug 2>/dev/null)
work=$(mktemp -d /tmp/fanout-shots.XXXXXX)
trap 'rm -rf "$work"' EXIT

run() { # run NAME ENV…: one recorded run of the demo suite (exit 1 is expected: it has planted failures)
  local name=$1; shift
  local env=() kv
  for kv in "$@"; do env+=("${kv%%=*}: \"${kv#*=}\""); done
  (IFS=,; printf 'destination:\n  name: linux\n  environment: { %s }\n' "${env[*]}") >"$work/$name.yml"
  local rc=0
  "$fanout" run --config "$work/$name.yml" --bundle "$bundle" --skip 'SessionTimeout|Straggler' --slots 4 \
    --history "$work/history.sqlite" --baselines "$work/baselines.json" --report-dir "$work/$name" >/dev/null || rc=$?
  [[ $rc == 0 || $rc == 1 ]] || { echo "report-screenshots: run $name ended with exit $rc" >&2; exit 1; }
}
echo "== six runs of the demo suite (local slots), recorded in one history"
run r1 DEMO_FAIL=1 DEMO_CRASH=1
"$fanout" baseline accept --from "$work/r1/report.json" --test PerformanceTests/ --baselines "$work/baselines.json" >/dev/null
for i in 2 3 4 5; do run "r$i" DEMO_FAIL=1 DEMO_CRASH=1; done
run r6 DEMO_FAIL=1 DEMO_CRASH=1 DEMO_PERF_SLOW=1
page="$work/r6/report.html"

shot() { # shot NAME WIDTHxHEIGHT CSS [SED]: a copy of the page showing only what CSS leaves, as docs/NAME.png
  local name=$1 size=$2 css=$3 edit=${4:-}
  sed -e "s|</style>|$css</style>|" ${edit:+-e "$edit"} "$page" >"$work/$name.html"
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile-$name" \
    --window-size="$size" --screenshot="$out/$name.png" "file://$work/$name.html" 2>/dev/null
  echo "$out/$name.png: $(stat -c %s "$out/$name.png") bytes"
}
echo "== screenshots"
shot report-html-failures 1280,900 'header > :not(h1), nav, body > section:not(#failures), footer { display: none; }' \
  '0,/<details class="log">/s//<details class="log" open>/'
shot report-html-timeline 1280,330 'body > :not(#timeline) { display: none; }'
shot report-html-trend 1280,440 'body > :not(#performance) { display: none; }'
