#!/usr/bin/env bash
# Benchmark (not a test): the demo suite with warm timing history at 4 and 8 local slots, against
# `swift test --parallel --num-workers N` on the same suite, measured in the same run on this machine.
# Prints per case: wall time (build excluded), makespan, the lower bound LB, makespan / LB, wall - LB.
#   scripts/bench.sh [--repeat K]      (K runs per case, the median is printed; default 1)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
repeat=1
[[ ${1:-} == --repeat ]] && repeat=${2:-1}

bash scripts/setup.sh
swift build -c release --product fanout >/dev/null
fanout="$(swift build -c release --show-bin-path)/fanout"
bundle=$(bash scripts/build-demo.sh debug 2>/dev/null)
demo="$root/Tests/Fixtures/DemoSuite"
work=$(mktemp -d /tmp/fanout-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
history="$work/history.sqlite"

now() { date +%s.%N; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(swift --version 2>/dev/null | head -1)"
echo "warming the timing history (2 runs at 4 slots)…"
for _ in 1 2; do "$fanout" run --bundle "$bundle" --slots 4 --history "$history" --report-dir "$work/warm" >/dev/null || true; done

printf '\n%-6s %-28s %9s %9s %9s %9s %9s %10s\n' slots runner wall makespan LB mk/LB wall-LB "vs fanout"
for slots in 4 8; do
  walls=(); mks=(); lbs=()
  for i in $(seq "$repeat"); do
    t0=$(now)
    "$fanout" run --bundle "$bundle" --slots "$slots" --history "$history" --report-dir "$work/r$slots-$i" >/dev/null || true
    t1=$(now)
    walls+=("$(echo "$t1 - $t0" | bc -l)")
    mks+=("$(field "$work/r$slots-$i/report.json" "r['timing']['makespan']")")
    lbs+=("$(field "$work/r$slots-$i/report.json" "r['timing']['lowerBound']")")
  done
  wall=$(printf '%s\n' "${walls[@]}" | median); mk=$(printf '%s\n' "${mks[@]}" | median); lb=$(printf '%s\n' "${lbs[@]}" | median)
  printf '%-6s %-28s %8.2fs %8.2fs %8.2fs %9.3f %8.2fs %10s\n' "$slots" "fanout (warm history)" "$wall" "$mk" "$lb" \
    "$(echo "$mk / $lb" | bc -l)" "$(echo "$wall - $lb" | bc -l)" "1.00"

  alt=()
  for i in $(seq "$repeat"); do
    t0=$(now)
    swift test --package-path "$demo" --skip-build --parallel --num-workers "$slots" >/dev/null 2>&1 || true
    t1=$(now)
    alt+=("$(echo "$t1 - $t0" | bc -l)")
  done
  altwall=$(printf '%s\n' "${alt[@]}" | median)
  printf '%-6s %-28s %8.2fs %9s %9s %9s %8.2fs %9.2fx\n' "$slots" "swift test --parallel" "$altwall" - - - \
    "$(echo "$altwall - $lb" | bc -l)" "$(echo "$altwall / $wall" | bc -l)"
done

# --- The same suite across 4 real sshd agents on loopback (Agents/local-fleet), as root only (the fleet's user).
if [[ $(id -u) -eq 0 ]]; then
  fleet="$work/fleet"
  config=$(bash Agents/local-fleet/up.sh 4 --dir "$fleet" --port 2722 --slots 2 --no-check \
    --hide "$demo/.build" 2>/dev/null | tail -n1)
  trap 'bash Agents/local-fleet/down.sh --dir "$fleet" >/dev/null 2>&1; rm -rf "$work"' EXIT
  echo
  echo "4 SSH agents × 2 slots (sshd on 127.0.1.1-4, libssh2): connection setup and dispatch latency"
  "$fanout" agents check --config "$config" --latency 100 | sed -n '3,$p' | awk 'NF {print "  " $0}'
  deploy() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); a=r['agents']; print('%.3f %d' % (max(x.get('deploySeconds',0) for x in a), sum(x.get('deployedBytes',0) for x in a)))" "$1"; }
  ssh_hist="$work/ssh-history.sqlite"
  cp "$history" "$ssh_hist"
  t0=$(now); "$fanout" run --config "$config" --bundle "$bundle" --history "$ssh_hist" --report-dir "$work/ssh-cold" >/dev/null || true; t1=$(now)
  read -r cold_s cold_b <<<"$(deploy "$work/ssh-cold/report.json")"
  walls=(); mks=(); lbs=(); warm_s=0; warm_b=0
  for i in $(seq "$repeat"); do
    t0=$(now); "$fanout" run --config "$config" --bundle "$bundle" --history "$ssh_hist" --report-dir "$work/ssh-$i" >/dev/null || true; t1=$(now)
    walls+=("$(echo "$t1 - $t0" | bc -l)")
    mks+=("$(field "$work/ssh-$i/report.json" "r['timing']['makespan']")")
    lbs+=("$(field "$work/ssh-$i/report.json" "r['timing']['lowerBound']")")
    read -r warm_s warm_b <<<"$(deploy "$work/ssh-$i/report.json")"
  done
  wall=$(printf '%s\n' "${walls[@]}" | median); mk=$(printf '%s\n' "${mks[@]}" | median); lb=$(printf '%s\n' "${lbs[@]}" | median)
  printf '  deploy cold: %.2f s, %d bytes sent in all · warm: %.2f s, %d bytes sent\n' "$cold_s" "$cold_b" "$warm_s" "$warm_b"
  printf '%-6s %-28s %8.2fs %8.2fs %8.2fs %9.3f %8.2fs\n' 8 "fanout, 4 SSH agents (warm)" "$wall" "$mk" "$lb" \
    "$(echo "$mk / $lb" | bc -l)" "$(echo "$wall - $lb" | bc -l)"
else
  echo "(the SSH fleet case needs root to create the fleet's user; skipped)"
fi

echo
echo "wall: the whole fanout command with --bundle (discovery, planning, reports and history included; no build)."
echo "LB: max(total class time / slots, longest class) from the durations measured in that run."
echo "vs fanout: the alternative's wall time / fanout's wall time (above 1 means fanout is faster)."
