#!/usr/bin/env bash
# A long fuzz run of the runners' parsers: the XCTest console parser, the Swift Testing event-stream parser, the
# line splitter and both listing parsers (Tests/FanoutRunnersTests/FuzzTests.swift). `swift test` runs the same
# fuzzer with 1,000,000 inputs and a fixed seed; this runs many more with a seed of your choice, or a random one.
#
# Usage:
#   scripts/fuzz.sh                          # 50,000,000 inputs, a random seed (printed first and last)
#   scripts/fuzz.sh 200000000                # as many inputs as you like (at least 1,000,000)
#   FANOUT_FUZZ_SEED=1234 scripts/fuzz.sh    # a given seed, decimal or 0x-hex
#   FANOUT_FUZZ_SEED=1234 FANOUT_FUZZ_SHARD=17 scripts/fuzz.sh
#                                            # replay one shard (20,000 inputs) of a failed run in a second or two
#   FANOUT_FUZZ_KIND=mutated-line scripts/fuzz.sh
#                                            # only one kind of input (random-bytes, line-buffer, mutated-line,
#                                            # xctest-fragment, testing-records, mutated-capture, xctest-stream,
#                                            # testing-stream, listing)
#
# Each exact oracle (well-formed streams, the line splitter, generated bundles, lists and .xctestrun files) must run
# its share of the inputs, or the run fails: a generator change cannot silently switch a check off.
# A failure names its shard and input, shows the bytes, and prints the command that replays it. Inputs run in shards
# of 20,000, each seeded from the run's seed and its number, so a shard replays alone and a run does not depend on
# how the shards were scheduled. The debug build runs ~55,000 inputs a second on 2 cores (50,000,000 in ~15 min).
# FANOUT_FUZZ_TIMEOUT (seconds, default: twice the expected time plus 10 minutes) stops a run that hangs.
# Exit status: the test run's (124 when it timed out: a parser may loop forever; replay the shards one by one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

inputs=${1:-${FANOUT_FUZZ_INPUTS:-50000000}}
seed=${FANOUT_FUZZ_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' \n')}
timeout_seconds=${FANOUT_FUZZ_TIMEOUT:-$(( inputs / 30000 + 600 ))}
export FANOUT_FUZZ_INPUTS=$inputs FANOUT_FUZZ_SEED=$seed
# Swift Testing captures a backtrace for every error thrown in the process; the parsers throw and catch one for each
# malformed JSON line or invalid UTF-8 sequence. Not capturing them makes the run ~15% faster and changes nothing else.
export SWT_SWIFT_ERROR_BACKTRACING_ENABLED=0

echo "== fuzzing the parsers: $inputs inputs, seed $seed${FANOUT_FUZZ_SHARD:+, shard $FANOUT_FUZZ_SHARD}${FANOUT_FUZZ_KIND:+, only $FANOUT_FUZZ_KIND}"
echo "== building the tests"
swift build --build-tests 2>&1 | grep -v '^\[' || true
swift build --build-tests >/dev/null
echo "== running (time limit ${timeout_seconds}s)"
status=0
timeout --foreground "${timeout_seconds}s" swift test --skip-build --filter FuzzTests || status=$?
if [ "$status" -eq 124 ]; then
  echo "== the fuzz run did not finish in ${timeout_seconds}s: a parser may hang on some input" >&2
fi
echo "== seed $seed, $inputs inputs: $([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)")"
echo "   replay: FANOUT_FUZZ_SEED=$seed${FANOUT_FUZZ_SHARD:+ FANOUT_FUZZ_SHARD=$FANOUT_FUZZ_SHARD}${FANOUT_FUZZ_KIND:+ FANOUT_FUZZ_KIND=$FANOUT_FUZZ_KIND} scripts/fuzz.sh $inputs"
exit "$status"
