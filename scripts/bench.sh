#!/usr/bin/env bash
# Benchmark (not a test).
#
#   scripts/bench.sh [--repeat K]          the demo suite with warm timing history at 4 and 8 local slots, against
#                                          `swift test --parallel --num-workers N` on the same suite in the same run, like
#                                          with like (`fanout run --bundle` vs `swift test --skip-build`, and `fanout run
#                                          --package` vs `swift test` with their no-op builds), exit codes and test counts
#                                          checked; and (as root) on 4 SSH agents on loopback. K runs per case, the median.
#   scripts/bench.sh --full [--repeat K]   all of the above, then (fanout-bench, Sources/FanoutBench; K runs per case too):
#                                          - six generated suites (lognormal, many-small, dominant, skewed: they sleep;
#                                            cpu-bound: it computes; mixed: waiting and computing classes, one of them
#                                            computing 40 s in 16 methods; fixed seeds), each run for real by Fanout (warm,
#                                            first run with no history, wrong history, on the package), split by count,
#                                            split by name, static longest-first from history and `swift test --parallel`
#                                            (prebuilt and with its build) on 8 local slots, and (as root) by Fanout and the
#                                            static splitters on 4 SSH agents × 2 slots (lognormal, dominant, skewed);
#                                          - lognormal as 4 CI jobs × 2 slots (`fanout run --shard I/4`) and their merge;
#                                            `fanout report merge` of 4 synthetic shard reports × 25,000 tests;
#                                          - the real Scheduler on a virtual clock: 100,000 classes, 1,000 agents × 4 slots,
#                                            20 % duration noise, then 5 % of the agents failing mid-run;
#                                          - (as root) 32 SSH agents on loopback: connection setup, dispatch latency, the
#                                            coordinator's CPU and memory over real runs;
#                                          - report.html of a 10,000-test run with 2,000 failures opened in headless
#                                            Chromium (fanout-bench report-page): load to rendered, in ms;
#                                          and writes docs/bench-results.json, and from it BENCHMARKS.md,
#                                          docs/bench-ratios.svg and README's figures; and docs/report-page-results.json,
#                                          and from it docs/report-html.md's page-load figures. About an hour here.
#   scripts/bench.sh --page [--repeat K]   only the report page case: K renders and K loads of the page and of each
#                                          control (5 by default, at least 3), every figure their median with its
#                                          min–max; writes docs/report-page-results.json and docs/report-html.md's
#                                          page-load figures.
#   scripts/bench.sh --hunt [--repeat K]   flake hunting: `fanout run --repeat 20` of a generated 200-test suite on 8
#                                          slots against 20 × `swift test` and 20 × `swift test --parallel`, K rounds
#                                          (default 3); prints medians with ranges and per-round ratios
#   scripts/bench.sh --selective [--repeat K]
#                                          selective testing on a generated package of 20 targets and ~2,000 files: a
#                                          one-file leaf change under --selective against --no-selective, the run with
#                                          nothing changed (and its hashing alone), and --feedback-first's first failure
#                                          and makespan; K rounds (default 3), medians with ranges. Its results go to
#                                          $BENCH_DIR/results/selective.json; `fanout-bench report --results
#                                          $BENCH_DIR/results --update` puts them into BENCHMARKS.md.
#   scripts/bench.sh --mutations [--repeat K]
#                                          selective testing's promise by mutation on three public packages pinned by tag
#                                          (swift-argument-parser 1.8.2, swift-http-structured-headers 1.7.0,
#                                          swift-openapi-generator 1.14.3, cloned into $BENCH_DIR/mutations-src): 50
#                                          mutations each (seed 1, side by side), every target Fanout skipped checked by
#                                          `swift test`; then, one package at a time, deciding with nothing changed and
#                                          the recording run with and without observation, K rounds (default 3). Results
#                                          in $BENCH_DIR/results/mutations-*.json and mutation-timings-*.json; `fanout-bench
#                                          report --results $BENCH_DIR/results --update` puts them into BENCHMARKS.md.
#   scripts/bench.sh --real [--repeat K]   public packages' own suites (GRDB.swift, FlyingFox, swift-collections), pinned
#                                          by tag and cloned into $BENCH_DIR/real: run serially by `swift test` (the verdict
#                                          oracle), by Fanout (first run, warm) and by `swift test --parallel`, K rounds (3 by
#                                          default), every verdict checked; their results replace the real suites of
#                                          docs/bench-results.json, and BENCHMARKS.md is written from it. Not run in CI.
#   scripts/bench.sh --performance [--repeat K]
#                                          suites with XCTest measure tests (the Benchmarks fixture, Yams 6.2.2,
#                                          ZIPFoundation 0.9.20, cloned into $BENCH_DIR/performance): serially by `swift
#                                          test` (the verdict oracle), by Fanout (first run; warm, performance classes
#                                          measured alone; warm with `not_exclusive: ['.*']`, nothing alone) on 8 slots, K
#                                          rounds (default 3), every verdict checked and every measurement's measuredAlone
#                                          counted. Results in $BENCH_DIR/results/performance-*.json; `fanout-bench report
#                                          --results $BENCH_DIR/results --update` puts them into BENCHMARKS.md.
#   scripts/bench.sh --queue [--repeat K]  queue mode's own cost (fanout-bench queue): a private PostgreSQL server
#                                          (scripts/private-postgres.sh, stopped after), one job seeding 100,000 items,
#                                          32 simulated jobs reserving and completing them until drained, every item done
#                                          exactly once; K rounds (default 3): seeding time, items per second, reserve
#                                          latency p50/p99, complete latency p99, medians with ranges
#   scripts/bench.sh --queue-jobs [--repeat K]
#                                          queue mode against static shards (fanout-bench queue-jobs) on a private
#                                          PostgreSQL: 4 jobs of 2 slots started 0, 5, 10 and 20 s apart, job 4 slow, a
#                                          lease of 10 s, on
#                                          the generated lognormal suite and GRDB 7.10.0; queue mode and static history
#                                          shards, then each with job 2 killed at half the bound; makespans against the
#                                          build's capacity bound, tests completed; K rounds (default 3), medians with
#                                          ranges, results in $BENCH_DIR/results/queue-jobs.json
#   scripts/bench.sh --database [--repeat K]
#                                          suites that share a database (Tests/Fixtures/DatabaseSuite, 30 tests that fill
#                                          and count a table) on a private PostgreSQL (scripts/private-postgres.sh): `swift
#                                          test --skip-build` serially on one database (what such teams do today) against
#                                          `fanout run --slots 8` with a database per worker made and dropped by slot hooks
#                                          (hook time included; warm history), and Fanout on one shared database (it
#                                          fails: shown, not timed); K rounds (default 3) interleaved, every verdict and
#                                          the dropped databases checked; medians with ranges and the ratio
#   scripts/bench.sh --suite SHAPE [--repeat K] [--cases S,S…]
#                                          only that generated suite (as in --full; repeatable), and with --cases only
#                                          those local strategies (`fanout-bench suite --help`); its results go to
#                                          $BENCH_DIR/results/suite-SHAPE.json and the console. `fanout-bench report
#                                          --results $BENCH_DIR/results --update` puts them into BENCHMARKS.md.
#
# Generated suites, histories, reports and fleets live in $BENCH_DIR (default /tmp/fanout-bench), never in the repo.
# Prints per case: wall time (build excluded), makespan, the lower bound LB, makespan / LB, wall - LB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
repeat=1 full=0 page=0 real=0 hunt=0 selective=0 mutations=0 performance=0 queue=0 queue_jobs=0 database=0 only=() cases=()
while (($#)); do
  case $1 in
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --full) full=1; shift ;;
    --page) page=1; shift ;;
    --real) real=1; shift ;;
    --hunt) hunt=1; shift ;;
    --selective) selective=1; shift ;;
    --mutations) mutations=1; shift ;;
    --performance) performance=1; shift ;;
    --queue) queue=1; shift ;;
    --queue-jobs) queue_jobs=1; shift ;;
    --database) database=1; shift ;;
    --suite) only+=("${2:?--suite needs a shape}"); shift 2 ;;
    --cases) cases=(--only "${2:?--cases needs strategies}"); shift 2 ;;
    -h | --help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
bench_dir=${BENCH_DIR:-/tmp/fanout-bench}
started=$(date +%s)

bash scripts/setup.sh
echo "building fanout (release)…"
swift build -c release --product fanout >/dev/null
bash scripts/build-observer.sh release >/dev/null # preloaded by --selective to observe run-time inputs
fanout="$(swift build -c release --show-bin-path)/fanout"

# ---- report.html of a large run in a real browser (fanout-bench report-page; --page runs only this) ----------------
# A measuring <script> goes into a copy of the page, never into the page fanout writes. Figures are not asserted
# anywhere (machines are shared and noisy); they are written to docs/report-page-results.json and from it into
# docs/report-html.md, which `fanout-bench report --check` (BenchFiguresTests) holds to the data.
report_page() {
  echo
  echo "== report.html: 10,000 tests, 2,000 failures, in headless Chromium =="
  swift build -c release --product fanout-bench >/dev/null
  "$(swift build -c release --show-bin-path)/fanout-bench" report-page --fanout "$fanout" --repeats "$1" \
    --dir "$bench_dir/report-page" --json "$root/docs/report-page-results.json" --doc "$root/docs/report-html.md" \
    --command "$2" --repo "$root"
}
if ((page)); then
  # --repeat 2 is refused by report-page (every figure is a median of at least 3); no --repeat means 5.
  report_page "$((repeat > 1 ? repeat : 5))" "scripts/bench.sh --page$( ((repeat > 1)) && echo " --repeat $repeat")"
  exit 0
fi

# A fanout-bench case measured apart, K rounds (3 by default): its results go to $bench_dir/results/NAME.json.
rounds_apart() {
  swift build -c release --product fanout-bench >/dev/null
  mkdir -p "$bench_dir/results"
  "$(swift build -c release --show-bin-path)/fanout-bench" "$1" --fanout "$fanout" --dir "$bench_dir" --repo "$root" \
    --rounds "$((repeat > 1 ? repeat : 3))" --json "$bench_dir/results/$2.json"
}
# ---- --queue: queue mode's cost at scale on a private PostgreSQL (fanout-bench queue) ---------------------------------
if ((queue)); then
  swift build -c release --product fanout-bench >/dev/null
  pg_dir=$bench_dir/postgres
  bash scripts/private-postgres.sh stop "$pg_dir" # a server a killed run left behind, by its PID file
  read -r pg_url pg_pass < <(bash scripts/private-postgres.sh start "$pg_dir")
  trap 'bash scripts/private-postgres.sh stop "$pg_dir"' EXIT
  PGPASSFILE=$pg_pass "$(swift build -c release --show-bin-path)/fanout-bench" queue --url "$pg_url" \
    --repeat "$((repeat > 1 ? repeat : 3))"
  exit 0
fi

# ---- --queue-jobs: queue mode against static shards, jobs apart, one slow, one killed (fanout-bench queue-jobs) ---
if ((queue_jobs)); then
  swift build -c release --product fanout-bench >/dev/null
  pg_dir=$bench_dir/postgres
  bash scripts/private-postgres.sh stop "$pg_dir"
  read -r pg_url pg_pass < <(bash scripts/private-postgres.sh start "$pg_dir")
  trap 'bash scripts/private-postgres.sh stop "$pg_dir"' EXIT
  mkdir -p "$bench_dir/results"
  PGPASSFILE=$pg_pass "$(swift build -c release --show-bin-path)/fanout-bench" queue-jobs --url "$pg_url" \
    --fanout "$fanout" --dir "$bench_dir" --repo "$root" --repeats "$((repeat > 1 ? repeat : 3))" \
    --json "$bench_dir/results/queue-jobs.json"
  exit 0
fi

# ---- --database: a suite that shares a database, serially against Fanout with a database per worker --------------
if ((database)); then
  rounds=$((repeat > 1 ? repeat : 3))
  work=$bench_dir/database
  rm -rf "$work"
  source scripts/database-fixture.sh
  database_fixture_up "$work" # the fixture (built in debug, as a developer runs it) and its two configs
  fixture=Tests/Fixtures/DatabaseSuite
  now() { date +%s.%N; }
  # One Fanout run: its wall time from outside (hooks, listing and reports included); the verdict checked.
  fanout_once() { # CONFIG EXPECTED-EXIT
    local t0 t1 code=0
    t0=$(now)
    "$fanout" run --bundle "$bundle" --slots 8 --config "$work/$1" --history "$work/history.sqlite" \
      --report-dir "$work/report" >"$work/out.txt" 2>&1 || code=$?
    t1=$(now)
    [[ $code == "$2" ]] || { tail -n 30 "$work/out.txt"; echo "bench: fanout with $1 exited $code, not $2" >&2; exit 1; }
    echo "$t1 - $t0" | bc
  }
  serial_once() {
    local t0 t1 code=0
    t0=$(now)
    DATABASE_URL=$(database_url shared) swift test --skip-build --package-path "$fixture" >"$work/serial.txt" 2>&1 || code=$?
    t1=$(now)
    [[ $code == 0 ]] || { tail -n 30 "$work/serial.txt"; echo "bench: swift test exited $code" >&2; exit 1; }
    grep -q "Executed 24 tests, with 0 failures" "$work/serial.txt" || { echo "bench: swift test ran other than 24 XCTest tests" >&2; exit 1; }
    grep -q "Test run with 6 tests in 1 suite passed" "$work/serial.txt" || { echo "bench: swift test ran other than 6 Swift Testing tests" >&2; exit 1; }
    echo "$t1 - $t0" | bc
  }
  fanout_once per-worker.yml 0 >/dev/null # the history's first run: the timed runs are warm
  serial=() fanout_runs=() hook_seconds=()
  for ((r = 1; r <= rounds; r++)); do
    serial+=("$(serial_once)")
    fanout_runs+=("$(fanout_once per-worker.yml 0)")
    hook_seconds+=("$(jq '[.hooks[].duration] | add' "$work/report/report.json")")
    left=$(psql -X -q -t -A "$admin" -c "SELECT count(*) FROM pg_database WHERE datname LIKE 'app_test_%'")
    [[ $left == 0 ]] || { echo "bench: $left per-worker databases were left behind" >&2; exit 1; }
    echo "round $r: serial ${serial[-1]} s · fanout 8 slots, a database per worker ${fanout_runs[-1]} s (hooks ${hook_seconds[-1]} s of slot time)"
  done
  shared_code=0
  "$fanout" run --bundle "$bundle" --slots 8 --config "$work/shared.yml" --history "$work/shared.sqlite" \
    --report-dir "$work/shared-report" >"$work/shared.txt" 2>&1 || shared_code=$?
  stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f s (%.2f–%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
  median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  echo
  echo "== a suite that shares a database: 30 tests, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg) =="
  echo "swift test, serially, one database:           $(stats "${serial[@]}")"
  echo "fanout --slots 8, a database per worker:      $(stats "${fanout_runs[@]}") (slot hooks $(stats "${hook_seconds[@]}") summed over 16 hooks)"
  echo "speed-up (median over median):                $(echo "scale=2; $(median "${serial[@]}") / $(median "${fanout_runs[@]}")" | bc)×"
  echo "fanout --slots 8 on one shared database:      exit $shared_code, $(jq '[.results[] | select(.outcome == "failed")] | length' "$work/shared-report/report.json") of 30 tests failed"
  exit 0
fi

# ---- --hunt: flake hunting, `fanout run --repeat 20` against the loops a user writes (fanout-bench repeat) --------
if ((hunt)); then
  rounds_apart repeat repeat
  exit 0
fi

# ---- --selective: selective testing on a generated 20-target package (fanout-bench selective) ----------------------
if ((selective)); then
  rounds_apart selective selective
  exit 0
fi

# ---- --mutations: selective testing's promise by mutation of real packages (fanout-bench selective-mutations) -------
if ((mutations)); then
  swift build -c release --product fanout-bench >/dev/null
  bench="$(swift build -c release --show-bin-path)/fanout-bench"
  mkdir -p "$bench_dir/results" "$bench_dir/mutations-src"
  packages=(apple/swift-argument-parser@1.8.2 apple/swift-http-structured-headers@1.7.0 apple/swift-openapi-generator@1.14.3)
  pids=()
  for spec in "${packages[@]}"; do
    repo=${spec%@*} tag=${spec#*@} name=${repo#*/}
    src="$bench_dir/mutations-src/$name"
    [[ -d $src ]] || git clone -q "https://github.com/$repo" "$src"
    git -C "$src" checkout -q "$tag"
    "$bench" selective-mutations --fanout "$fanout" --dir "$bench_dir" --package "$src" --name "$name-$tag" \
      --mutations 50 --seed 1 --overhead-rounds 0 --json "$bench_dir/results/mutations-$name.json" \
      >"$bench_dir/results/mutations-$name.log" 2>&1 &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  tail -n 8 "$bench_dir"/results/mutations-*.log
  for spec in "${packages[@]}"; do
    repo=${spec%@*} tag=${spec#*@} name=${repo#*/}
    "$bench" selective-mutations --fanout "$fanout" --dir "$bench_dir" --package "$bench_dir/mutations-src/$name" \
      --name "$name-$tag" --mutations 0 --overhead-rounds "$((repeat > 1 ? repeat : 3))" \
      --json "$bench_dir/results/mutation-timings-$name.json" || status=1
  done
  exit "$status"
fi

# ---- --performance: measure tests alone and beside other work (fanout-bench performance), apart from --full -------
if ((performance)); then
  swift build -c release --product fanout-bench >/dev/null
  bench="$(swift build -c release --show-bin-path)/fanout-bench"
  mkdir -p "$bench_dir/results"
  exec "$bench" performance --fanout "$fanout" --dir "$bench_dir" --repo "$root" \
    --repeats "$((repeat > 1 ? repeat : 3))" --json-dir "$bench_dir/results"
fi

# ---- --real: public packages' own suites (fanout-bench real), apart from --full ------------------------------------
if ((real)); then
  swift build -c release --product fanout-bench >/dev/null
  bench="$(swift build -c release --show-bin-path)/fanout-bench"
  "$bench" real --fanout "$fanout" --dir "$bench_dir" --repeats "$((repeat > 1 ? repeat : 3))" \
    --json-dir "$bench_dir/results" --data "$root/docs/bench-results.json"
  "$bench" report --from "$root/docs/bench-results.json" --markdown "$root/BENCHMARKS.md" \
    --svg "$root/docs/bench-ratios.svg" --readme "$root/README.md"
  exit 0
fi

bundle=$(bash scripts/build-demo.sh debug 2>/dev/null)
demo="$root/Tests/Fixtures/DemoSuite"
work=$(mktemp -d /tmp/fanout-bench.XXXXXX)
chmod 0755 "$work" # the fleet's agent user must reach its dir below it
history="$work/history.sqlite"
fleet=

# Everything this script started is stopped here, whatever happens: fleets by their own down.sh, by dir.
cleanup() {
  [[ -n $fleet ]] && bash Agents/local-fleet/down.sh --dir "$fleet" >/dev/null 2>&1 || true
  if ((full)); then
    for d in "$bench_dir"/fleet-*; do
      [[ -e $d/.fanout-fleet ]] && bash Agents/local-fleet/down.sh --dir "$d" >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# "median (min-max)" of the numbers on stdin, with FORMAT for each (%.2f by default); the median alone for one number.
spread() {
  sort -g | awk -v f="${1:-%.2f}" '{a[NR]=$1} END {
    m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
    if (NR < 2) printf f, m; else printf f " (" f "-" f ")", m, a[1], a[NR] }'
}
# A speed-up's spread (one ratio a line) and what it says: "faster" only when every round is above 1, "slower" when
# every round is below, "even" when the range spans 1 (judged at the two decimals shown).
speedup() {
  sort -g | awk '{a[NR]=$1} END {
    m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2
    lo = sprintf("%.2f", a[1]) + 0; hi = sprintf("%.2f", a[NR]) + 0
    v = lo > 1 ? "faster" : hi < 1 ? "slower" : "even"
    if (NR < 2) printf "%.2fx, 1 run", m; else printf "%.2fx (%.2fx-%.2fx), %s", m, a[1], a[NR], v }'
}
# Round-by-round ratios: the i-th number of the first list over the i-th of the second (two space-separated lists).
ratios() { paste -d' ' <(tr ' ' '\n' <<<"$1") <(tr ' ' '\n' <<<"$2") | awk 'NF == 2 && $2 > 0 {printf "%.4f\n", $1 / $2}'; }

# ---- The demo suite (the original cases). Its figures also go into BENCHMARKS.md with --full. --------------------
demo_cases() {
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(swift --version 2>/dev/null | head -1)"
  echo "warming the timing history (2 runs at 4 slots)…"
  for _ in 1 2; do "$fanout" run --bundle "$bundle" --slots 4 --history "$history" --report-dir "$work/warm" >/dev/null || true; done

  # Both runners' exit codes and test counts are checked: a row whose tests did not all run is marked, never a figure.
  tests_in() { field "$1" "len(r['results'])"; }
  failed_in() { field "$1" "sum(1 for t in r['results'] if t['outcome'] not in ('passed', 'skipped', 'flaky'))"; }
  expected=$(tests_in "$work/warm/report.json")
  xctests=$("$bundle" --list-tests 2>/dev/null | grep -c '/' || true)
  verdict() { # verdict EXIT RAN EXPECTED: "" when complete, else a mark for the row
    if [[ $1 == 0 && $2 -ge $3 ]]; then echo ""; else echo "  INCOMPLETE: $2/$3 tests, exit $1"; fi
  }
  echo "each figure: the median of $repeat run$( ((repeat > 1)) && echo "s, (min-max)"); vs fanout: round by round"
  printf '\n%-6s %-44s %-23s %-23s %14s %9s %9s %s\n' slots runner wall makespan "LB (per test)" mk/LB wall-LB "vs fanout"
  for slots in 4 8; do
    walls=(); mks=(); lbs=(); marks=""
    for i in $(seq "$repeat"); do
      t0=$(now)
      rc=0; "$fanout" run --bundle "$bundle" --slots "$slots" --history "$history" --report-dir "$work/r$slots-$i" >/dev/null || rc=$?
      t1=$(now)
      walls+=("$(echo "$t1 - $t0" | bc -l)")
      mks+=("$(field "$work/r$slots-$i/report.json" "r['timing']['makespan']")")
      lbs+=("$(field "$work/r$slots-$i/report.json" "r['timing']['lowerBound']")")
      marks+=$(verdict "$rc" "$(( $(tests_in "$work/r$slots-$i/report.json") - $(failed_in "$work/r$slots-$i/report.json") ))" "$expected")
    done
    wall=$(printf '%s\n' "${walls[@]}" | median); mk=$(printf '%s\n' "${mks[@]}" | median); lb=$(printf '%s\n' "${lbs[@]}" | median)
    printf '%-6s %-44s %-23s %-23s %13.2fs %9.3f %8.2fs %s%s\n' "$slots" "fanout run --bundle (warm history)" \
      "$(printf '%s\n' "${walls[@]}" | spread %.2fs)" "$(printf '%s\n' "${mks[@]}" | spread %.2fs)" "$lb" \
      "$(echo "$mk / $lb" | bc -l)" "$(echo "$wall - $lb" | bc -l)" "1.00" "$marks"

    # Like with like: `fanout run --package` against `swift test --parallel`, each with its no-op build; and the
    # prebuilt pair, `fanout run --bundle` (above) against `swift test --skip-build --parallel`.
    pwalls=(); marks=""
    for i in $(seq "$repeat"); do
      t0=$(now)
      rc=0; "$fanout" run --package "$demo" --slots "$slots" --history "$history" --report-dir "$work/p$slots-$i" >/dev/null || rc=$?
      t1=$(now)
      pwalls+=("$(echo "$t1 - $t0" | bc -l)")
      marks+=$(verdict "$rc" "$(( $(tests_in "$work/p$slots-$i/report.json") - $(failed_in "$work/p$slots-$i/report.json") ))" "$expected")
    done
    printf '%-6s %-44s %-23s %-23s %14s %9s %9s %s%s\n' "$slots" "fanout run --package (no-op build included)" \
      "$(printf '%s\n' "${pwalls[@]}" | spread %.2fs)" - - - - "1.00" "$marks"

    for build in skip build; do
      alt=(); marks=""
      for i in $(seq "$repeat"); do
        xunit="$work/st-$slots-$build-$i.xml"
        flags=(--parallel --num-workers "$slots" --xunit-output "$xunit")
        [[ $build == skip ]] && flags=(--skip-build "${flags[@]}")
        t0=$(now)
        rc=0; swift test --package-path "$demo" "${flags[@]}" >/dev/null 2>&1 || rc=$?
        t1=$(now)
        alt+=("$(echo "$t1 - $t0" | bc -l)")
        # (grep finds no <failure> in a green run: its status must not stop the script.)
        ran=$( (grep -o '<testcase' "$xunit" 2>/dev/null || true) | wc -l); bad=$( (grep -o '<failure' "$xunit" 2>/dev/null || true) | wc -l)
        marks+=$(verdict "$rc" "$((ran - bad))" "$xctests")
      done
      altwall=$(printf '%s\n' "${alt[@]}" | median)
      if [[ $build == skip ]]; then label="swift test --skip-build --parallel"; refs="${walls[*]}"; else label="swift test --parallel (no-op build included)"; refs="${pwalls[*]}"; fi
      printf '%-6s %-44s %-23s %-23s %14s %9s %8.2fs %s%s\n' "$slots" "$label" "$(printf '%s\n' "${alt[@]}" | spread %.2fs)" - - - \
        "$(echo "$altwall - $lb" | bc -l)" "$(ratios "${alt[*]}" "$refs" | speedup)" "$marks"
    done
  done

  # --- The same suite across 4 real sshd agents on loopback (Agents/local-fleet), as root only (the fleet's user).
  if [[ $(id -u) -eq 0 ]]; then
    fleet="$work/fleet"
    if ! config=$(bash Agents/local-fleet/up.sh 4 --dir "$fleet" --port 2722 --slots 2 --no-check \
      --hide "$demo/.build" 2>"$work/up.err" | tail -n1); then
      echo "(the 4-agent fleet did not start: $(tail -n2 "$work/up.err" | tr '\n' ' '); SSH case skipped)"
      return 0
    fi
    echo
    echo "4 SSH agents × 2 slots (sshd on 127.0.1.1-4, libssh2): connection setup and dispatch latency"
    "$fanout" agents check --config "$config" --latency 100 | sed -n '2,$p' | awk 'NF {print "  " $0}'
    deploy() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); a=r['agents']; print('%.3f %d' % (max(x.get('deploySeconds',0) for x in a), sum(x.get('deployedBytes',0) for x in a)))" "$1"; }
    ssh_hist="$work/ssh-history.sqlite"
    cp "$history" "$ssh_hist"
    "$fanout" run --config "$config" --bundle "$bundle" --history "$ssh_hist" --report-dir "$work/ssh-cold" >/dev/null || true
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
    printf '%-6s %-28s %-23s %-23s %8.2fs %9.3f %8.2fs\n' 8 "fanout, 4 SSH agents (warm)" \
      "$(printf '%s\n' "${walls[@]}" | spread %.2fs)" "$(printf '%s\n' "${mks[@]}" | spread %.2fs)" "$lb" \
      "$(echo "$mk / $lb" | bc -l)" "$(echo "$wall - $lb" | bc -l)"
    bash Agents/local-fleet/down.sh --dir "$fleet" >/dev/null 2>&1 || true
    fleet=
  else
    echo "(the SSH fleet case needs root to create the fleet's user; skipped)"
  fi

  echo
  echo "wall: the whole command (discovery, planning, reports and history included; builds only where the row says so)."
  echo "LB (per test): max(total test time / slots, longest test) from the per-test durations of that run (Fanout's report)."
  echo "vs fanout: the alternative's wall / the wall of fanout invoked the same way (--skip-build vs --bundle, a build vs"
  echo "--package); above 1 means fanout is faster: \"faster\" only when every round says so, \"even\" when the range"
  echo "spans 1. swift test's count is its xUnit file's test cases (XCTest only)."
}

if ((${#only[@]} == 0)); then
  # Not in a pipeline: the function runs in this shell (its fleet is this shell's to stop); tee gets a copy.
  demo_cases > >(tee "$work/demo.txt")
  wait $! 2>/dev/null || true
  if ((!full)); then
    mkdir -p "$bench_dir" && cp "$work/demo.txt" "$bench_dir/demo.txt"
    echo
    echo "These figures are in $bench_dir/demo.txt; \`fanout-bench report --results DIR --update --demo $bench_dir/demo.txt\`"
    echo "--command 'scripts/bench.sh --repeat $repeat' puts them into BENCHMARKS.md (DIR: any results folder, even empty)."
    exit 0
  fi
fi

# ---- --full: generated suites × strategies, simulation at scale, 32 SSH agents -------------------------------------
echo
echo "building fanout-bench (release)…"
swift build -c release --product fanout-bench >/dev/null
bench="$(swift build -c release --show-bin-path)/fanout-bench"
results="$bench_dir/results"
((${#only[@]})) || rm -rf "$results"
mkdir -p "$results"
fleet_args=(--fleet-agents 0)
if [[ $(id -u) -eq 0 ]]; then
  fleet_args=(--fleet-agents 4 --fleet-slots 2 --fleet-port 2731)
else
  echo "(not root: the SSH fleet cases and the 32-agent scale are skipped)"
fi

shapes=(lognormal many-small dominant skewed cpu-bound mixed)
((${#only[@]})) && shapes=("${only[@]}")
for shape in "${shapes[@]}"; do
  echo
  echo "== suite: $shape (seed 1) =="
  # The SSH fleet for the suites whose question it answers (packing, splitting, stealing over SSH).
  case $shape in many-small | cpu-bound | mixed) args=(--fleet-agents 0) ;; *) args=("${fleet_args[@]}") ;; esac
  # lognormal also runs as 4 CI jobs × 2 slots (`--shard I/4`) from its warm history, merged back into one report.
  ci=(); [[ $shape == lognormal ]] && ci=(--ci-shards 4)
  "$bench" suite --shape "$shape" --seed 1 --slots 8 --repeats "$repeat" --dir "$bench_dir" --fanout "$fanout" \
    --repo "$root" "${args[@]}" "${ci[@]}" "${cases[@]}" --json "$results/suite-$shape.json"
done
((${#only[@]})) && exit 0

echo
echo "== fanout report merge: 4 shard reports × 25,000 tests =="
"$bench" merge-scale --shards 4 --tests 25000 --repeats 3 --dir "$bench_dir" --fanout "$fanout" --json "$results/merge-scale.json" \
  || echo "(the merge-scale case did not complete: see above; the report goes on)"

echo
echo "== simulation: 100,000 classes, 1,000 agents × 4 slots, 20 % noise =="
"$bench" simulate --classes 100000 --agents 1000 --slots 4 --noise 0.2 --fail 0 --seed 1 --json "$results/simulate-0.json"
echo "== the same, 5 % of the agents failing mid-run =="
"$bench" simulate --classes 100000 --agents 1000 --slots 4 --noise 0.2 --fail 0.05 --seed 1 --json "$results/simulate-5.json"

if [[ $(id -u) -ne 0 ]]; then
  :
elif [[ ! -x /usr/bin/time ]]; then
  echo "(the 32-agent scale measures the coordinator with /usr/bin/time -v: apt-get install time; skipped)"
else
  echo
  echo "== 32 SSH agents on loopback =="
  "$bench" fleet-scale --agents 32 --slots 1 --port 2741 --latency 20 --dir "$bench_dir" --fanout "$fanout" \
    --repo "$root" --json "$results/fleet-scale.json" || echo "(the 32-agent scale failed: see above; the report goes on)"
fi

report_page 5 "scripts/bench.sh --full" || echo "(the report page case failed: see above; the report goes on)"

elapsed=$(($(date +%s) - started))
echo
"$bench" report --results "$results" --data "$root/docs/bench-results.json" --markdown "$root/BENCHMARKS.md" \
  --svg "$root/docs/bench-ratios.svg" --readme "$root/README.md" \
  --command "scripts/bench.sh --full" --demo "$work/demo.txt" --repo "$root" \
  --elapsed "$((elapsed / 60)) min $((elapsed % 60)) s"
