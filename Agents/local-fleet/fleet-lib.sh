# fleet-lib.sh: shared by up.sh, down.sh, status.sh and fault.sh of the local fleet. Sourced, never run.
#
# Every process is identified by PID, never by name. The processes of one agent are:
#   - its sshd master: the PID in agents/agent-i/sshd.pid, trusted only while that PID holds the agent's LISTENING
#     socket (a stale PID file can never make us signal an unrelated process that reused the number);
#   - the per-connection sshd processes: they hold TCP sockets whose local end is the agent's address:port;
#   - the remote commands: sshd puts FANOUT_AGENT_DIR=<agent dir> into their environment (SetEnv), which survives
#     the death of their sshd parent (remote commands are not killed when a session dies: no pty, no SIGHUP);
#   - everything descending from those, and every member of the sessions / process groups they lead
#     (sshd runs each remote command in a session of its own).
# Before each signal the process's start time is compared with the one collected, so a PID reused in between is
# left alone; the caller's own session, process group and ancestors are never touched.

FLEET_SSHD=/usr/sbin/sshd
FLEET_DEFAULT_DIR=/tmp/fanout-fleet
FLEET_DEFAULT_USER=fanout-agent
FLEET_MARKER=.fanout-fleet
FLEET_PROG=${FLEET_PROG:-local-fleet}

fleet_die() { printf '%s: error: %s\n' "$FLEET_PROG" "$*" >&2; exit 1; }
fleet_say() { printf '%s: %s\n' "$FLEET_PROG" "$*" >&2; }

# fleet_abs_dir DIR: the absolute, normalised form of DIR (it need not exist). Refuses paths that the generated
# sshd_config / SetEnv / YAML could not carry verbatim, and directories that must never be a fleet dir.
fleet_abs_dir() {
  local d=$1
  [[ -n $d ]] || fleet_die "--dir needs a value"
  [[ $d == /* ]] || d=$PWD/$d
  d=$(realpath -m -- "$d")
  case $d in
    / | /tmp | /root | /home | /etc | /usr | /var | /opt | /run | /work | /bin | /sbin | /lib | /proc | /sys | /dev)
      fleet_die "refusing to use '$d' as a fleet dir: give a dedicated directory, e.g. /tmp/fanout-fleet" ;;
  esac
  [[ $d =~ ^/[A-Za-z0-9._/-]+$ ]] ||
    fleet_die "fleet dir '$d': use only letters, digits and . _ - / (the path goes into sshd_config and YAML as is)"
  printf '%s\n' "$d"
}

# fleet_agent_dirs DIR: the agent directories of the fleet in DIR, in agent order.
fleet_agent_dirs() {
  local d
  [[ -d $1/agents ]] || return 0
  for d in "$1"/agents/agent-*; do
    if [[ -f $d/agent.conf ]]; then printf '%s\n' "$d"; fi
  done | sort -V
}

# fleet_read_agent ADIR: sets A_NAME, A_ADDR, A_PORT, A_HIDE (space-separated paths) from ADIR/agent.conf (key=value lines written by up.sh).
fleet_read_agent() {
  local k v
  A_NAME= A_ADDR= A_PORT= A_HIDE=
  while IFS='=' read -r k v; do
    case $k in name) A_NAME=$v ;; address) A_ADDR=$v ;; port) A_PORT=$v ;; hide) A_HIDE=$v ;; esac
  done <"$1/agent.conf"
  [[ -n $A_NAME && -n $A_ADDR && -n $A_PORT ]] || fleet_die "$1/agent.conf is incomplete"
}

# fleet_read_pidfile ADIR: the PID recorded by up.sh, or nothing.
fleet_read_pidfile() {
  local p=
  [[ -r $1/sshd.pid ]] && read -r p <"$1/sshd.pid" 2>/dev/null
  [[ $p =~ ^[0-9]+$ ]] && printf '%s\n' "$p"
  return 0
}

# fleet_sock_hex ADDR PORT: the local_address column of /proc/net/tcp for ADDR:PORT (kernel's byte order).
fleet_sock_hex() {
  local a b c d
  IFS=. read -r a b c d <<<"$1"
  if [[ ${FLEET_LITTLE_ENDIAN:=$([[ $(printf '\001\000' | od -An -tu2 | tr -d ' ') == 1 ]] && echo 1 || echo 0)} == 1 ]]; then
    printf '%02X%02X%02X%02X:%04X\n' "$d" "$c" "$b" "$a" "$2"
  else
    printf '%02X%02X%02X%02X:%04X\n' "$a" "$b" "$c" "$d" "$2"
  fi
}

# fleet_sockets HEX: "state inode" of every IPv4 TCP socket whose local end is HEX (0A = listening, 01 = established).
fleet_sockets() {
  local sl loc rem st inode _
  while read -r sl loc rem st _ _ _ _ _ inode _; do
    [[ $loc == "$1" ]] && printf '%s %s\n' "$st" "$inode"
  done </proc/net/tcp
  return 0
}

# fleet_socket_owners INODE...: PIDs of the processes holding any of these sockets.
fleet_socket_owners() {
  local i expr=()
  for i; do
    [[ $i == 0 ]] && continue # TIME_WAIT and friends belong to nobody
    ((${#expr[@]})) && expr+=(-o)
    expr+=(-lname "socket:\\[$i\\]")
  done
  ((${#expr[@]})) || return 0
  # find fails on processes that ended after the glob was expanded: that is expected, not an error.
  { find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \( "${expr[@]}" \) -printf '%h\n' 2>/dev/null || true; } |
    cut -d/ -f3 | sort -un
}

# fleet_listeners ADDR PORT: PIDs holding the listening socket ADDR:PORT.
fleet_listeners() {
  local st inode inodes=()
  while read -r st inode; do [[ $st == 0A ]] && inodes+=("$inode"); done < <(fleet_sockets "$(fleet_sock_hex "$1" "$2")")
  fleet_socket_owners "${inodes[@]}"
}

# fleet_port_taken ADDR PORT: succeeds (and prints a description) when something already listens on ADDR:PORT,
# on 0.0.0.0:PORT or on [::]:PORT, which would make sshd's bind fail.
fleet_port_taken() {
  local want any any6 sl loc rem st _ owners where inode
  want=$(fleet_sock_hex "$1" "$2")
  any=$(printf '00000000:%04X' "$2")
  any6=$(printf '00000000000000000000000000000000:%04X' "$2")
  while read -r sl loc rem st _ _ _ _ _ inode _; do
    if [[ $st == 0A && ($loc == "$want" || $loc == "$any") ]]; then
      owners=$(fleet_socket_owners "$inode" | tr '\n' ' ')
      [[ $loc == "$want" ]] && where=$1:$2 || where=0.0.0.0:$2
      printf '%s is already in use by PID %s\n' "$where" "$(fleet_describe_pids $owners)"
      return 0
    fi
  done </proc/net/tcp
  [[ -r /proc/net/tcp6 ]] || return 1
  while read -r sl loc rem st _ _ _ _ _ inode _; do
    if [[ $st == 0A && $loc == "$any6" ]]; then
      owners=$(fleet_socket_owners "$inode" | tr '\n' ' ')
      printf '[::]:%s (every address) is already in use by PID %s\n' "$2" "$(fleet_describe_pids $owners)"
      return 0
    fi
  done </proc/net/tcp6
  return 1
}

# fleet_describe_pids PID...: "123 (sshd: ...)" for messages.
fleet_describe_pids() {
  local p out=
  for p; do out+="${out:+, }$p ($(ps -o args= -p "$p" 2>/dev/null | cut -c1-60))"; done
  printf '%s\n' "${out:-unknown}"
}

# fleet_snapshot: a table of every process: PS_STATE, PS_PPID, PS_PGRP, PS_SID, PS_START (start time in ticks).
fleet_snapshot() {
  declare -gA PS_STATE=() PS_PPID=() PS_PGRP=() PS_SID=() PS_START=()
  local f line pid a
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue
    pid=${line%% *}
    read -ra a <<<"${line##*) }"
    PS_STATE[$pid]=${a[0]} PS_PPID[$pid]=${a[1]} PS_PGRP[$pid]=${a[2]} PS_SID[$pid]=${a[3]} PS_START[$pid]=${a[19]}
  done
}

# fleet_proc_state PID START: prints the state letter of PID if it is still the process that started at START.
fleet_proc_state() {
  local line a
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
  read -ra a <<<"${line##*) }"
  [[ ${a[19]} == "$2" ]] || return 1
  printf '%s\n' "${a[0]}"
}

# fleet_alive PID START: the process still exists (zombies count as dead).
fleet_alive() {
  local s
  s=$(fleet_proc_state "$1" "$2") || return 1
  [[ $s != Z && $s != X ]]
}

# fleet_collect ADIR ADDR PORT: finds every live process of one agent (see the top of this file).
# Sets AG_SET (PID -> start time), AG_MASTER (the verified master PID or empty) and AG_LISTENER (ours|other|none).
fleet_collect() {
  local adir=$1 addr=$2 port=$3
  local st inode listen_inodes=() conn_inodes=() listeners=() conns=() envs=() p c s g master
  fleet_snapshot
  while read -r st inode; do
    if [[ $st == 0A ]]; then listen_inodes+=("$inode"); else conn_inodes+=("$inode"); fi
  done < <(fleet_sockets "$(fleet_sock_hex "$addr" "$port")")
  mapfile -t listeners < <(fleet_socket_owners "${listen_inodes[@]}")
  mapfile -t conns < <(fleet_socket_owners "${conn_inodes[@]}")
  master=$(fleet_read_pidfile "$adir")

  declare -gA AG_SET=()
  AG_MASTER= AG_LISTENER=none
  if ((${#listeners[@]})); then
    if [[ -n $master && " ${listeners[*]} " == *" $master "* ]]; then
      AG_MASTER=$master AG_LISTENER=ours
      for p in "${listeners[@]}" "${conns[@]}"; do AG_SET[$p]=1; done
    else
      AG_LISTENER=other # another fleet serves this address:port now: its connections are not ours
    fi
  else
    # Nobody listens: connections still on our address:port are orphans of our (killed) master.
    for p in "${conns[@]}"; do AG_SET[$p]=1; done
  fi
  mapfile -t envs < <({ grep -lsFxz -- "FANOUT_AGENT_DIR=$adir" /proc/[0-9]*/environ 2>/dev/null || true; } | cut -d/ -f3)
  for p in "${envs[@]}"; do AG_SET[$p]=1; done

  # Close over children, and over the sessions / process groups led by a member.
  local -A kids=() never=()
  for p in "${!PS_PPID[@]}"; do kids[${PS_PPID[$p]}]+=" $p"; done
  p=$$
  while [[ -n $p && $p != 0 ]]; do never[$p]=1; p=${PS_PPID[$p]-}; done # ourselves and our ancestors
  never[1]=1
  [[ -n ${BASHPID-} ]] && never[$BASHPID]=1
  local my_sid=${PS_SID[$$]-x} my_pgrp=${PS_PGRP[$$]-x}
  local changed=1
  while ((changed)); do
    changed=0
    for p in "${!AG_SET[@]}"; do
      for c in ${kids[$p]-}; do
        [[ -z ${AG_SET[$c]-} ]] && { AG_SET[$c]=1; changed=1; }
      done
    done
    for p in "${!PS_SID[@]}"; do
      [[ -n ${AG_SET[$p]-} ]] && continue
      s=${PS_SID[$p]} g=${PS_PGRP[$p]}
      if [[ (-n ${AG_SET[$s]-} && $s != "$my_sid") || (-n ${AG_SET[$g]-} && $g != "$my_pgrp") ]]; then
        AG_SET[$p]=1 changed=1
      fi
    done
  done
  for p in "${!AG_SET[@]}"; do
    if [[ -n ${never[$p]-} || -z ${PS_START[$p]-} ]]; then unset "AG_SET[$p]"; else AG_SET[$p]=${PS_START[$p]}; fi
  done
}

# fleet_signal SIGNAL: sends SIGNAL to every process of AG_SET that is still the process we collected.
fleet_signal() {
  local p
  for p in "${!AG_SET[@]}"; do
    fleet_alive "$p" "${AG_SET[$p]}" && kill -s "$1" "$p" 2>/dev/null
  done
  return 0
}

# fleet_remaining: PIDs of AG_SET still alive.
fleet_remaining() {
  local p
  for p in "${!AG_SET[@]}"; do fleet_alive "$p" "${AG_SET[$p]}" && printf '%s\n' "$p"; done
  return 0
}

# fleet_wait_gone TENTHS: waits up to TENTHS/10 s for every process of AG_SET to end.
fleet_wait_gone() {
  local i
  for ((i = 0; i < $1; i++)); do
    [[ -z $(fleet_remaining) ]] && return 0
    sleep 0.1
  done
  [[ -z $(fleet_remaining) ]]
}

# fleet_stop_agent ADIR: stops every process of the agent in ADIR. SIGTERM (+ SIGCONT, so that a frozen agent
# gets it), up to 3 s, a second collection for anything forked meanwhile, SIGKILL, up to 2 s. Removes the PID file.
# Prints one line about what it did; fails if something survived.
fleet_stop_agent() {
  local adir=$1 master n left
  fleet_read_agent "$adir"
  fleet_collect "$adir" "$A_ADDR" "$A_PORT"
  master=$AG_MASTER
  n=${#AG_SET[@]}
  if ((n == 0)); then
    rm -f "$adir/sshd.pid"
    fleet_say "$A_NAME ($A_ADDR:$A_PORT): not running"
    [[ $AG_LISTENER == other ]] && fleet_say "  note: $A_ADDR:$A_PORT is served by an sshd that is not this fleet's: left alone"
    return 0
  fi
  local -A first=()
  local p others=$((n - ${AG_MASTER:+1}+0))
  for p in "${!AG_SET[@]}"; do first[$p]=${AG_SET[$p]}; done
  fleet_signal TERM
  fleet_signal CONT
  if ! fleet_wait_gone 30; then
    fleet_collect "$adir" "$A_ADDR" "$A_PORT"
    for p in "${!first[@]}"; do AG_SET[$p]=${first[$p]}; done
    fleet_signal KILL
    fleet_wait_gone 20 || true
  fi
  left=$(fleet_remaining | tr '\n' ' ')
  for p in "${!AG_SET[@]}"; do
    [[ $(fleet_proc_state "$p" "${AG_SET[$p]}" 2>/dev/null) == Z ]] && FLEET_ZOMBIES=$((${FLEET_ZOMBIES:-0} + 1))
  done
  rm -f "$adir/sshd.pid"
  if [[ -n $left ]]; then
    fleet_say "$A_NAME ($A_ADDR:$A_PORT): could not stop PID(s) $left"
    return 1
  fi
  if [[ -n $master ]]; then
    fleet_say "$A_NAME ($A_ADDR:$A_PORT): stopped sshd master $master and $others other process(es)"
  else
    fleet_say "$A_NAME ($A_ADDR:$A_PORT): sshd master already gone; stopped $others leftover process(es)"
  fi
}

# fleet_start_agent ADIR: starts the agent's sshd in a session of its own and records its PID.
# Every descriptor above stderr is closed first: an inherited pipe (e.g. of "$(up.sh)") or the fleet dir's lock
# would otherwise live as long as the agent. With hidden paths (up.sh --hide) sshd runs in a private mount namespace
# where each of them is covered by an empty read-only tmpfs; every exec keeps the PID, so the PID is sshd's.
fleet_start_agent() {
  local adir=$1 pid
  fleet_read_agent "$adir"
  : >"$adir/sshd.out"
  # sshd appends to its -E log without timestamps: mark where this run begins.
  printf -- '---- %s: %s starting (%s) ----\n' "$(date '+%F %T')" "$A_NAME" "$FLEET_PROG" >>"$adir/sshd.log"
  (
    for f in /proc/$BASHPID/fd/*; do
      f=${f##*/}
      ((f > 2)) && eval "exec $f>&-" 2>/dev/null
    done
    if [[ -n $A_HIDE ]]; then
      # shellcheck disable=SC2016,SC2086
      exec setsid unshare --mount --propagation private /bin/sh -c '
        sshd=$1 cfg=$2 log=$3; shift 3
        for p; do mount -t tmpfs -o ro,size=4k,mode=0755 fanout-hidden "$p" || { echo "cannot hide $p" >&2; exit 111; }; done
        exec "$sshd" -D -f "$cfg" -E "$log"' fanout-agent \
        "$FLEET_SSHD" "$adir/sshd_config" "$adir/sshd.log" $A_HIDE </dev/null >>"$adir/sshd.out" 2>&1
    fi
    exec setsid "$FLEET_SSHD" -D -f "$adir/sshd_config" -E "$adir/sshd.log" </dev/null >>"$adir/sshd.out" 2>&1
  ) &
  pid=$!
  printf '%s\n' "$pid" >"$adir/sshd.pid"
}

# fleet_wait_ready ADIR SECONDS: waits until the agent's recorded sshd holds its listening socket and answers with
# an SSH banner. Fails with a message if the process died or the time ran out.
fleet_wait_ready() {
  local adir=$1 secs=$2 pid start deadline banner fd
  fleet_read_agent "$adir"
  deadline=$((SECONDS + secs))
  # sshd rewrites the PID file up.sh wrote (its own PidFile, the same PID): truncated, then written. Read in that
  # moment, the file is empty, which is no reason to fail.
  pid=$(fleet_read_pidfile "$adir")
  while [[ -z $pid ]] && ((SECONDS < deadline)); do
    sleep 0.05
    pid=$(fleet_read_pidfile "$adir")
  done
  [[ -n $pid ]] || { FLEET_WAIT_ERROR="no PID file"; return 1; }
  while :; do
    if [[ ! -e /proc/$pid ]] || [[ $(fleet_proc_state "$pid" "$(fleet_start_of "$pid")" 2>/dev/null) == Z ]]; then
      FLEET_WAIT_ERROR="sshd (PID $pid) exited"
      return 1
    fi
    if grep -qx -- "$pid" <<<"$(fleet_listeners "$A_ADDR" "$A_PORT")"; then
      banner=
      # (an "exec 2>/dev/null" would silence this shell's stderr for good: the braces keep it temporary)
      if { exec {fd}<>"/dev/tcp/$A_ADDR/$A_PORT"; } 2>/dev/null; then
        read -r -t 2 banner <&"$fd" || true
        exec {fd}>&-
      fi
      [[ $banner == SSH-2.0-* ]] && return 0
    fi
    if ((SECONDS >= deadline)); then
      FLEET_WAIT_ERROR="sshd (PID $pid) did not accept connections on $A_ADDR:$A_PORT within ${secs}s"
      return 1
    fi
    sleep 0.05
  done
}

# fleet_start_of PID: the start time of PID (empty if gone).
fleet_start_of() {
  local line a
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
  read -ra a <<<"${line##*) }"
  printf '%s\n' "${a[19]}"
}

# fleet_agent_status ADIR: sets A_NAME/A_ADDR/A_PORT, S_PID (recorded PID or -), S_STATE (alive|frozen|dead|
# foreign: someone else listens on the address) and S_CONNS (established connections on the agent's socket).
fleet_agent_status() {
  local adir=$1 pid st inode listeners
  fleet_read_agent "$adir"
  pid=$(fleet_read_pidfile "$adir")
  S_PID=${pid:--} S_CONNS=0 S_STATE=dead
  local inodes=()
  while read -r st inode; do
    if [[ $st == 0A ]]; then inodes+=("$inode"); elif [[ $st == 01 ]]; then S_CONNS=$((S_CONNS + 1)); fi
  done < <(fleet_sockets "$(fleet_sock_hex "$A_ADDR" "$A_PORT")")
  listeners=$(fleet_socket_owners "${inodes[@]}")
  if [[ -n $pid ]] && grep -qx -- "$pid" <<<"$listeners"; then
    case $(fleet_proc_state "$pid" "$(fleet_start_of "$pid")") in
      T | t) S_STATE=frozen ;;
      Z | X | '') S_STATE=dead ;;
      *) S_STATE=alive ;;
    esac
  elif [[ -n $listeners ]]; then
    S_STATE=foreign
  fi
}

# fleet_resolve_agent DIR NAME|NUMBER: prints the agent dir.
fleet_resolve_agent() {
  local name=$2
  [[ $name =~ ^[0-9]+$ ]] && name=agent-$name
  [[ -f $1/agents/$name/agent.conf ]] || fleet_die "no agent '$2' in $1 (see status.sh --dir $1)"
  printf '%s\n' "$1/agents/$name"
}
