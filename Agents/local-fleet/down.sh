#!/usr/bin/env bash
# Stops exactly what up.sh started in one fleet dir: each agent's sshd master, its per-connection sshd processes and
# the remote commands still running (and the sessions / process groups they lead), all by PID: SIGTERM (+ SIGCONT for
# a frozen agent), a short wait, then SIGKILL for what is left. Never kills by name. Safe to run any number of times.
set -euo pipefail
FLEET_PROG=down.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fleet-lib.sh
source "$here/fleet-lib.sh"

usage() {
  cat <<USAGE
usage: down.sh [--dir DIR] [--clean]

  --dir DIR   the fleet dir given to up.sh (default $FLEET_DEFAULT_DIR)
  --clean     also remove DIR (keys, configs, logs, work dirs); without it the logs stay for reading
USAGE
}

dir=$FLEET_DEFAULT_DIR clean=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --dir) dir=${2-}; shift 2 || fleet_die "--dir needs a value" ;;
    --dir=*) dir=${1#*=}; shift ;;
    --clean) clean=1; shift ;;
    *) usage >&2; fleet_die "unknown argument $1" ;;
  esac
done
dir=$(fleet_abs_dir "$dir")

if [[ ! -d $dir ]]; then
  fleet_say "no fleet dir $dir: nothing to stop"
  exit 0
fi
[[ -e $dir/$FLEET_MARKER ]] || fleet_die "$dir is not a fleet dir (no $FLEET_MARKER): refusing to touch it"
[[ $(id -u) == 0 ]] || fleet_die "run as root (the agents run as root and as their login user)"

exec 9>"$dir/.lock"
flock -w 30 9 || fleet_die "another up.sh or down.sh holds $dir/.lock"

rc=0 count=0
while read -r adir; do
  count=$((count + 1))
  fleet_stop_agent "$adir" || rc=1
done < <(fleet_agent_dirs "$dir")
((count)) || fleet_say "no agents in $dir"

if ((rc)); then
  fleet_die "some processes of the fleet in $dir survived SIGKILL (see above); $dir is kept"
fi
if ((${FLEET_ZOMBIES:-0})); then
  # Seen on machines whose PID 1 reaps orphans lazily (here: ~2 s): the processes are dead and hold no port.
  fleet_say "note: $FLEET_ZOMBIES exited process(es) remain as zombies until PID 1 reaps them (they hold no port)"
fi
if ((clean)); then
  rm -rf -- "$dir"
  fleet_say "removed $dir"
else
  fleet_say "fleet in $dir is down (logs kept: $dir/agents/*/sshd.log; --clean removes the dir)"
fi
