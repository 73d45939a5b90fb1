#!/bin/bash
# What keeping the order of tests costs (docs/order-dependence.md): a real suite run 3 times by each of two Fanout
# binaries (one built before the order was kept, one after), interleaved (before 1, after 1, before 2, ...), on 4
# slots, each Fanout recording into a history of its own. Prints each run's wall seconds, the history's size after
# it and its report.json's size, then the medians with their ranges.
#
#   scripts/order-cost.sh BEFORE_FANOUT AFTER_FANOUT [BUNDLE]
#
# BUNDLE: a built <Package>PackageTests.xctest (default: GRDB.swift 7.10.0's, as scripts/bench.sh --real builds it
# in $BENCH_DIR/real). Build the binaries with `swift build -c release --product fanout` at the two commits.
set -u
if [ $# -lt 2 ] || [ "$1" = "--help" ]; then sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit $([ "${1:-}" = "--help" ] && echo 0 || echo 2); fi
before=$1 after=$2
bundle=${3:-${BENCH_DIR:-/tmp/fanout-bench}/real/GRDB.swift-7.10.0/.build/debug/GRDBPackageTests.xctest}
[ -x "$bundle" ] || { echo "no test product at $bundle: build it, or give BUNDLE" >&2; exit 2; }
work=$(mktemp -d /tmp/fanout-order-cost.XXXXXX)
for i in 1 2 3; do
  for label in before after; do
    if [ $label = before ]; then fanout=$before; else fanout=$after; fi
    mkdir -p "$work/$label"
    start=$(date +%s.%N)
    "$fanout" run --bundle "$bundle" --slots 4 --history "$work/$label/h.sqlite" --report-dir "$work/$label/r$i" \
      > "$work/$label/out$i.txt" 2>&1
    rc=$?
    end=$(date +%s.%N)
    sqlite3 "$work/$label/h.sqlite" "PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null 2>&1
    printf "%s %d rc=%d wall=%.1f history=%d report=%d\n" $label $i $rc "$(echo "$end - $start" | bc)" \
      "$(stat -c %s "$work/$label/h.sqlite")" "$(stat -c %s "$work/$label/r$i/report.json")" | tee -a "$work/runs.txt"
  done
done
for label in before after; do
  grep "^$label " "$work/runs.txt" | sed 's/.*wall=\([0-9.]*\).*/\1/' | sort -n | tr '\n' ' ' \
    | awk -v l=$label '{ printf "%s: wall median %s s (range %s-%s s)", l, $2, $1, $3 }'
  grep "^$label 3 " "$work/runs.txt" | sed 's/.*history=\([0-9]*\).*/ · history after 3 runs \1 bytes/'
done
rm -rf "$work"
