#!/usr/bin/env bash
# One line per agent of a fleet dir: name, address:port, sshd PID, state, open connections.
#   alive    the recorded sshd holds the agent's listening socket and runs
#   frozen   it does, but is stopped (SIGSTOP): connections hang
#   dead     nothing of ours listens there (never started, stopped, or killed)
#   foreign  another process listens on that address:port
# Exit status: 0 when every agent is alive, 1 otherwise, 2 when DIR holds no fleet.
set -euo pipefail
FLEET_PROG=status.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fleet-lib.sh
source "$here/fleet-lib.sh"

dir=$FLEET_DEFAULT_DIR
while (($#)); do
  case $1 in
    -h | --help) echo "usage: status.sh [--dir DIR]   (default $FLEET_DEFAULT_DIR)"; exit 0 ;;
    --dir) dir=${2-}; shift 2 || fleet_die "--dir needs a value" ;;
    --dir=*) dir=${1#*=}; shift ;;
    *) fleet_die "unknown argument $1 (usage: status.sh [--dir DIR])" ;;
  esac
done
dir=$(fleet_abs_dir "$dir")
[[ -e $dir/$FLEET_MARKER ]] || { fleet_say "no fleet in $dir"; exit 2; }

rc=0 count=0
while read -r adir; do
  count=$((count + 1))
  fleet_agent_status "$adir"
  printf '%-10s %-22s pid %-8s %-8s connections %s\n' "$A_NAME" "$A_ADDR:$A_PORT" "$S_PID" "$S_STATE" "$S_CONNS"
  [[ $S_STATE == alive ]] || rc=1
done < <(fleet_agent_dirs "$dir")
((count)) || { fleet_say "no agents in $dir"; exit 2; }
exit "$rc"
