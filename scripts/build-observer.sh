#!/usr/bin/env bash
# Builds libFanoutObserve.so, the library selective testing preloads into test processes to observe what they use
# at run time (Sources/FanoutObserve; docs/selective.md, "What is observed"), into Fanout's build folder beside the
# fanout executable, where fanout looks for it. Linux only (elsewhere it prints nothing and does nothing).
#
# Usage: scripts/build-observer.sh [debug|release]     prints the library's path
#
# Not built by SwiftPM: a SwiftPM library links the Swift runtime, and the runtime's crash handlers would then be in
# every process the library enters. clang (shipped with Swift) or cc, with warnings as errors.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
configuration=${1:-debug}
case "$configuration" in
  debug) optimize=(-O1 -g) ;;
  release) optimize=(-O2) ;;
  *) echo "build-observer.sh: the configuration is debug or release (got '$configuration')" >&2; exit 2 ;;
esac
[[ $(uname -s) == Linux ]] || exit 0
if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
  export PATH=/opt/swift/usr/bin:$PATH
fi
compiler=${CC:-}
if [[ -z $compiler ]]; then
  swift_bin=$(dirname "$(command -v swift 2>/dev/null || echo /usr/bin/swift)")
  if [[ -x $swift_bin/clang ]]; then compiler=$swift_bin/clang
  elif command -v cc >/dev/null 2>&1; then compiler=cc
  else echo "build-observer.sh: no C compiler (clang comes with Swift; or apt-get install gcc)" >&2; exit 2
  fi
fi
bin=$(swift build -c "$configuration" --show-bin-path)
mkdir -p "$bin"
out=$bin/libFanoutObserve.so
source=Sources/FanoutObserve/observe.c
if [[ ! -f $out || $source -nt $out || Sources/FanoutObserve/include/fanout_observe.h -nt $out || $0 -nt $out ]]; then
  "$compiler" -shared -fPIC "${optimize[@]}" -std=gnu11 -Wall -Wextra -Werror -fvisibility=default \
    -ISources/FanoutObserve/include -o "$out.tmp" "$source" -ldl
  mv "$out.tmp" "$out"
fi
echo "$out"
