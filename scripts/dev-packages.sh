# Sourced by scripts/install.sh and scripts/demo.sh (not run): makes sure Debian's development files Fanout builds
# against are there, and sets `flags` (extra `swift build` arguments) and PKG_CONFIG_PATH to use them.
#   libssh2-1-dev (the SSH transport), libsqlite3-dev (the timing history, through GRDB), and libssl-dev and zlib1g-dev
#   (libssh2.pc requires their .pc files; Fanout itself links neither)
# Root: the missing ones are installed with apt-get. Not root: they are downloaded (`apt-get download` needs no root)
# and unpacked into ${XDG_CACHE_HOME:-~/.cache}/fanout/dev-packages (FANOUT_DEV_PACKAGES moves it); the runtime
# libraries come with Swift's own dependencies (libcurl pulls in libssh2-1 and libssl3; libsqlite3-0 is one of them).
# Exits 2 with what to do when neither works.
flags=()
missing=()
for entry in libssh2-1-dev:libssh2 libsqlite3-dev:sqlite3 libssl-dev:openssl zlib1g-dev:zlib; do
  pkg-config --exists "${entry#*:}" 2>/dev/null || missing+=("${entry%%:*}")
done
if ((${#missing[@]})) && ((EUID == 0)) && command -v apt-get >/dev/null 2>&1; then
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config) # how SwiftPM finds libssh2
  echo "== installing ${missing[*]} with apt-get (you are root)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
elif ((${#missing[@]})); then
  # Not root: Debian's packages, downloaded (apt-get download needs no root) and unpacked into a private folder.
  if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1 || ! command -v pkg-config >/dev/null 2>&1; then
    echo "fanout dev-packages: the development files of ${missing[*]} are missing, and this is not a Debian system with apt-get," \
      "dpkg-deb and pkg-config to fetch them without root: install them (e.g. sudo apt-get install ${missing[*]})" >&2
    exit 2
  fi
  private=${FANOUT_DEV_PACKAGES:-${XDG_CACHE_HOME:-$HOME/.cache}/fanout/dev-packages}
  echo "== fetching ${missing[*]} (Debian packages, no root needed) into $private"
  mkdir -p "$private/debs" "$private/root"
  (cd "$private/debs" && apt-get download "${missing[@]}") >/dev/null \
    || { echo "fanout dev-packages: apt-get download ${missing[*]} failed (see above); install them with sudo apt-get install instead" >&2; exit 2; }
  for deb in "$private"/debs/*.deb; do dpkg-deb -x "$deb" "$private/root"; done
  triplet=$(gcc -dumpmachine 2>/dev/null || echo "$(uname -m)-linux-gnu")
  libdir=$private/root/usr/lib/$triplet
  # Their libX.so links name the runtime library beside them, which the system has: point them there.
  for link in "$libdir"/*.so; do
    [[ -L $link && ! -e $link ]] && ln -sfn "/usr/lib/$triplet/$(basename "$(readlink "$link")")" "$link"
  done
  # Their .pc files say prefix=/usr: this folder instead.
  sed -i "s|^prefix=.*|prefix=$private/root/usr|" "$libdir"/pkgconfig/*.pc
  export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  flags=(-Xcc "-I$private/root/usr/include" -Xcc "-I$private/root/usr/include/$triplet" -Xlinker "-L$libdir")
  for entry in libssh2-1-dev:libssh2 libsqlite3-dev:sqlite3 libssl-dev:openssl zlib1g-dev:zlib; do
    pkg-config --exists "${entry#*:}" || { echo "fanout dev-packages: ${entry%%:*} unpacked into $private but pkg-config does not find ${entry#*:}" >&2; exit 2; }
  done
fi

