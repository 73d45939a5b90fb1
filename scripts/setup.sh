#!/usr/bin/env bash
# Installs what Fanout needs on a fresh Debian machine of this kind (Swift is already at /opt/swift).
# Safe to run again: it installs only what is missing.
# --demo: only what scripts/demo.sh needs (the -dev packages Fanout builds against, and sshd for its fleet); without it,
# also what the tests and benchmarks use.
set -euo pipefail
demo=0
if [[ ${1:-} == --demo ]]; then demo=1; fi
need=()
command -v swift >/dev/null 2>&1 || { echo "setup: swift is not on PATH (expected a Swift 6 toolchain)" >&2; exit 1; }
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need+=(libsqlite3-dev)
dpkg -s libssh2-1-dev >/dev/null 2>&1 || need+=(libssh2-1-dev)     # the SSH transport (libssh2 1.10)
dpkg -s libssl-dev >/dev/null 2>&1 || need+=(libssl-dev)           # libssh2.pc requires libssl.pc (Fanout links no OpenSSL)
dpkg -s zlib1g-dev >/dev/null 2>&1 || need+=(zlib1g-dev)           # and zlib.pc
[[ -x /usr/sbin/sshd ]] || need+=(openssh-server)                  # the local fleet of real sshd agents
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)  # also `ssh -G`: resolves agents' ~/.ssh/config aliases
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if ((!demo)); then
command -v socat >/dev/null 2>&1 || need+=(socat)                 # the bastion lab: a bastion's sshd per connection
command -v ip >/dev/null 2>&1 || need+=(iproute2)                 # the bastion lab: loopback up in its namespaces
command -v strace >/dev/null 2>&1 || need+=(strace)               # selective testing observes what tests use at run time
command -v bc >/dev/null 2>&1 || need+=(bc)                       # scripts/bench.sh arithmetic
command -v jq >/dev/null 2>&1 || need+=(jq)                       # scripts/bench.sh --database reads report.json
command -v chromium >/dev/null 2>&1 || need+=(chromium)           # the tests open report.html in a real (headless) browser
command -v groff >/dev/null 2>&1 || need+=(groff-base)           # the tests render the installed man page
[[ -x /usr/bin/python3 ]] || need+=(python3)                      # the tests' stand-in xcodebuild/xcrun (replay harness)
# Queue mode's tests start a private PostgreSQL server (its own folder, a temporary port, TLS certificates made with
# openssl), never the system's service. The package brings libpq5, which fanout loads for --queue.
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
fi

if ((${#need[@]})); then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  echo "setup: installing ${need[*]} with apt-get$([[ -n $SUDO ]] && echo ' (through sudo: it needs root)')"
  $SUDO apt-get update -qq
  if [[ " ${need[*]} " == *" postgresql "* ]]; then
    # Debian's package would create (and start) a system cluster: the tests need none, so none is made.
    $SUDO mkdir -p /etc/postgresql-common/createcluster.d
    echo 'create_main_cluster = false' | $SUDO tee /etc/postgresql-common/createcluster.d/fanout-no-main-cluster.conf >/dev/null
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
