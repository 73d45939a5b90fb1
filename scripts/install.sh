#!/usr/bin/env bash
# Installs the `fanout` command for your own packages:
#   PREFIX/bin/fanout                                        (a release build)
#   PREFIX/lib/fanout/libFanoutObserve.so                    (Linux: what --selective preloads into test processes)
#   PREFIX/share/man/man1/fanout.1                           (generated from the argument parser: `man fanout`)
#   PREFIX/share/bash-completion/completions/fanout          (bash)
#   PREFIX/share/zsh/site-functions/_fanout                  (zsh)
#   PREFIX/share/fish/vendor_completions.d/fanout.fish       (fish)
#
# Usage: scripts/install.sh [--debug] [PREFIX]       PREFIX defaults to /usr/local (sudo is used when it is not writable)
#   --debug   install a debug build instead of a release build (faster to build; for trying out and for the tests)
#
# Needs Swift 6 (swift on PATH or /opt/swift/usr/bin) and Debian's libssh2-1-dev, libsqlite3-dev and libssl-dev: as root
# it installs those with apt-get; otherwise it downloads them (apt-get download, no root) into
# ${XDG_CACHE_HOME:-~/.cache}/fanout/dev-packages (FANOUT_DEV_PACKAGES moves it) and builds against that copy.
# Exit codes: 0 installed · 2 usage error (bad flag, PREFIX not absolute) or missing development files · other: the failing step's own code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

configuration=release
prefix=/usr/local
while (($#)); do
  case "$1" in
    --debug) configuration=debug ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "install.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
    *) prefix=$1 ;;
  esac
  shift
done
case "$prefix" in
  /*) ;;
  *) echo "install.sh: PREFIX must be an absolute path (got '$prefix'), e.g. /usr/local or \$HOME/.local" >&2; exit 2 ;;
esac
prefix=${prefix%/}

if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
  export PATH=/opt/swift/usr/bin:$PATH
fi
command -v swift >/dev/null 2>&1 || { echo "install.sh: swift not found: install Swift 6 (see README, Quickstart)" >&2; exit 2; }
# Debian's development files (fetched without root when missing): sets `flags`, exports PKG_CONFIG_PATH.
source "$root/scripts/dev-packages.sh"

echo "== building fanout ($configuration)"
swift build -c "$configuration" --product fanout "${flags[@]}" 2>&1 | grep -v '^\[' || true
swift build -c "$configuration" --product fanout "${flags[@]}" >/dev/null
binary=$(swift build -c "$configuration" --show-bin-path)/fanout
[[ -x $binary ]] || { echo "install.sh: the build left no $binary" >&2; exit 1; }
# The observer selective testing preloads into test processes (Linux): fanout finds it in ../lib/fanout/.
observer=$(bash scripts/build-observer.sh "$configuration")

echo "== generating the man page and shell completions"
staging=$(mktemp -d "${TMPDIR:-/tmp}/fanout-install.XXXXXX")
trap 'rm -rf "$staging"' EXIT
# swift-argument-parser's own generator (the GenerateManual plugin) writes fanout.1 from the commands' help texts.
manual=$root/.build/plugins/GenerateManual/outputs/fanout/fanout.1
rm -f "$manual"
swift package "${flags[@]}" --disable-sandbox plugin generate-manual --configuration "$configuration" >"$staging/manual.log" 2>&1 \
  || { cat "$staging/manual.log" >&2; echo "install.sh: generating the man page failed" >&2; exit 1; }
[[ -s $manual ]] || { echo "install.sh: the manual generator wrote no $manual" >&2; exit 1; }
"$binary" --generate-completion-script bash >"$staging/fanout.bash"
"$binary" --generate-completion-script zsh >"$staging/_fanout"
"$binary" --generate-completion-script fish >"$staging/fanout.fish"

sudo=()
probe=$prefix
while [[ ! -e $probe ]]; do probe=$(dirname "$probe"); done
if [[ ! -w $probe ]] && ((EUID != 0)); then
  command -v sudo >/dev/null 2>&1 || { echo "install.sh: $prefix is not writable; choose a PREFIX you own, e.g. \$HOME/.local" >&2; exit 2; }
  sudo=(sudo)
fi

echo "== installing into $prefix"
"${sudo[@]}" install -d "$prefix/bin" "$prefix/share/man/man1" "$prefix/share/bash-completion/completions" \
  "$prefix/share/zsh/site-functions" "$prefix/share/fish/vendor_completions.d"
"${sudo[@]}" install -m 0755 "$binary" "$prefix/bin/fanout"
if [[ -n $observer ]]; then
  "${sudo[@]}" install -d "$prefix/lib/fanout"
  "${sudo[@]}" install -m 0755 "$observer" "$prefix/lib/fanout/libFanoutObserve.so"
fi
"${sudo[@]}" install -m 0644 "$manual" "$prefix/share/man/man1/fanout.1"
"${sudo[@]}" install -m 0644 "$staging/fanout.bash" "$prefix/share/bash-completion/completions/fanout"
"${sudo[@]}" install -m 0644 "$staging/_fanout" "$prefix/share/zsh/site-functions/_fanout"
"${sudo[@]}" install -m 0644 "$staging/fanout.fish" "$prefix/share/fish/vendor_completions.d/fanout.fish"

echo "installed fanout $("$prefix/bin/fanout" --version) into $prefix/bin"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on your PATH; add it: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
