#!/usr/bin/env bash
# Fault injection for tests, on one agent of a local fleet, by PID (never by name):
#   kill     SIGKILL the agent's sshd master, its connections and its remote commands (a dead host)
#   freeze   SIGSTOP all of them (a frozen host: TCP stays up, nothing answers)
#   thaw     SIGCONT all of them
#   revive   start the agent's sshd again (same config, same host key) and wait until it accepts connections
#   pids     print the PIDs of the agent's processes, one per line
set -euo pipefail
FLEET_PROG=fault.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fleet-lib.sh
source "$here/fleet-lib.sh"

usage() {
  echo "usage: fault.sh [--dir DIR] AGENT kill|freeze|thaw|revive|pids   (AGENT: agent-2 or 2; default DIR $FLEET_DEFAULT_DIR)"
}
dir=$FLEET_DEFAULT_DIR args=()
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --dir) dir=${2-}; shift 2 || fleet_die "--dir needs a value" ;;
    --dir=*) dir=${1#*=}; shift ;;
    -*) usage >&2; fleet_die "unknown option $1" ;;
    *) args+=("$1"); shift ;;
  esac
done
((${#args[@]} == 2)) || { usage >&2; exit 1; }
dir=$(fleet_abs_dir "$dir")
[[ -e $dir/$FLEET_MARKER ]] || fleet_die "no fleet in $dir"
[[ $(id -u) == 0 ]] || fleet_die "run as root"
adir=$(fleet_resolve_agent "$dir" "${args[0]}")
fleet_read_agent "$adir"

case ${args[1]} in
  kill | freeze | thaw | pids)
    fleet_collect "$adir" "$A_ADDR" "$A_PORT"
    case ${args[1]} in
      pids) fleet_remaining | sort -n ;;
      kill)
        ((${#AG_SET[@]})) || fleet_die "$A_NAME has no processes to kill"
        fleet_signal KILL
        fleet_wait_gone 20 || fleet_die "$A_NAME: PID(s) $(fleet_remaining | tr '\n' ' ')survived SIGKILL"
        fleet_say "$A_NAME ($A_ADDR:$A_PORT): killed ${#AG_SET[@]} process(es)" ;;
      freeze)
        [[ -n $AG_MASTER ]] || fleet_die "$A_NAME is not running"
        # The master first, so that no new connection slips in unfrozen.
        kill -s STOP "$AG_MASTER"
        fleet_signal STOP
        fleet_say "$A_NAME ($A_ADDR:$A_PORT): froze ${#AG_SET[@]} process(es)" ;;
      thaw)
        fleet_signal CONT
        fleet_say "$A_NAME ($A_ADDR:$A_PORT): resumed ${#AG_SET[@]} process(es)" ;;
    esac ;;
  revive)
    exec 9>"$dir/.lock"
    flock -w 30 9 || fleet_die "another up.sh or down.sh holds $dir/.lock"
    fleet_agent_status "$adir"
    [[ $S_STATE == dead ]] || fleet_die "$A_NAME is $S_STATE, not dead: nothing to revive"
    fleet_collect "$adir" "$A_ADDR" "$A_PORT"
    ((${#AG_SET[@]} == 0)) ||
      fleet_die "$A_NAME still has processes ($(fleet_remaining | tr '\n' ' ')): run fault.sh $A_NAME kill first"
    if why=$(fleet_port_taken "$A_ADDR" "$A_PORT"); then fleet_die "$why"; fi
    fleet_start_agent "$adir"
    fleet_wait_ready "$adir" 10 || fleet_die "$A_NAME failed to start: $FLEET_WAIT_ERROR (see $adir/sshd.log)"
    fleet_say "$A_NAME ($A_ADDR:$A_PORT): running again as PID $(fleet_read_pidfile "$adir")" ;;
  *) usage >&2; fleet_die "unknown action ${args[1]}" ;;
esac
