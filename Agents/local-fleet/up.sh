#!/usr/bin/env bash
# Starts N real OpenSSH sshd agents on loopback addresses (127.0.1.1, 127.0.1.2, ...), each with its own host key,
# config, log and work directory, all logging in as the dedicated user fanout-agent. Writes a ready-to-use Fanout
# config (fleet.yml), a known_hosts file and a client key into the fleet dir, and prints the config's path last.
# The system sshd and /etc/ssh are never touched. Stop the fleet with down.sh.
set -euo pipefail
FLEET_PROG=up.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fleet-lib.sh
source "$here/fleet-lib.sh"

usage() {
  cat <<EOF
usage: up.sh N [--dir DIR] [--slots S] [--port P] [--first-address A] [--user U] [--toolchain T] [--wait SECONDS]
             [--hide PATH]... [--no-check]

Starts N OpenSSH sshd agents on loopback: agent i listens on A+i-1 (127.0.1.1, 127.0.1.2, ... by default), port P.

  N                    number of agents (1..254)
  --dir DIR            fleet directory (default $FLEET_DEFAULT_DIR); holds keys, configs, logs, work dirs
  --slots S            slots per agent written into fleet.yml (default 2)
  --port P             TCP port of every agent (default 2222); a second fleet needs another port or --first-address
  --first-address A    address of agent-1 (default 127.0.1.1); must be in 127.0.0.0/8, loopback only
  --user U             login user of the agents (default $FLEET_DEFAULT_USER; created with useradd if missing)
  --toolchain T        Swift toolchain the agents must be able to run (default /opt/swift)
  --wait SECONDS       how long each agent may take to accept connections (default 10)
  --hide PATH          make PATH invisible to the agents (repeatable): each sshd runs in a private mount namespace
                       with an empty tmpfs over PATH. Use it for the coordinator's build tree (e.g. --hide \$PWD/.build)
                       so that agents, like real remote hosts, see only what was deployed to them
  --no-check           skip the final ssh login check of every agent (saves ~0.3 s)

Prints progress on stderr and the path of fleet.yml as the last line on stdout:
  config=\$(bash Agents/local-fleet/up.sh 4 | tail -n1)
EOF
}

n= dir=$FLEET_DEFAULT_DIR slots=2 port=2222 first=127.0.1.1 user=$FLEET_DEFAULT_USER toolchain=/opt/swift wait=10 check=1
hide=()
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --dir) dir=${2-}; shift 2 || fleet_die "--dir needs a value" ;;
    --dir=*) dir=${1#*=}; shift ;;
    --slots) slots=${2-}; shift 2 || fleet_die "--slots needs a value" ;;
    --slots=*) slots=${1#*=}; shift ;;
    --port) port=${2-}; shift 2 || fleet_die "--port needs a value" ;;
    --port=*) port=${1#*=}; shift ;;
    --first-address) first=${2-}; shift 2 || fleet_die "--first-address needs a value" ;;
    --first-address=*) first=${1#*=}; shift ;;
    --user) user=${2-}; shift 2 || fleet_die "--user needs a value" ;;
    --user=*) user=${1#*=}; shift ;;
    --toolchain) toolchain=${2-}; shift 2 || fleet_die "--toolchain needs a value" ;;
    --toolchain=*) toolchain=${1#*=}; shift ;;
    --wait) wait=${2-}; shift 2 || fleet_die "--wait needs a value" ;;
    --wait=*) wait=${1#*=}; shift ;;
    --hide) hide+=("${2-}"); shift 2 || fleet_die "--hide needs a path" ;;
    --hide=*) hide+=("${1#*=}"); shift ;;
    --no-check) check=0; shift ;;
    -*) usage >&2; fleet_die "unknown option $1" ;;
    *) [[ -z $n ]] || fleet_die "one agent count only (got '$n' and '$1')"; n=$1; shift ;;
  esac
done

# ---- arguments -------------------------------------------------------------------------------------------------
[[ -n $n ]] || { usage >&2; fleet_die "give the number of agents, e.g. up.sh 4"; }
[[ $n =~ ^[1-9][0-9]*$ ]] && ((n <= 254)) || fleet_die "N must be 1..254 (got '$n')"
[[ $slots =~ ^[1-9][0-9]*$ ]] || fleet_die "--slots must be a positive integer (got '$slots')"
[[ $port =~ ^[1-9][0-9]*$ ]] && ((port <= 65535)) || fleet_die "--port must be 1..65535 (got '$port')"
# A port inside the ephemeral range could be taken at random by any outgoing connection, and would make a client
# socket look like one of the agent's (down.sh tells them apart by local address:port).
if read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && ((port >= eph_lo && port <= eph_hi)); then
  fleet_die "--port $port lies in the ephemeral port range $eph_lo-$eph_hi: choose a port below $eph_lo (e.g. 2222)"
fi
[[ $wait =~ ^[1-9][0-9]*$ ]] || fleet_die "--wait must be a positive number of seconds (got '$wait')"
[[ $user =~ ^[a-z_][a-z0-9_-]*$ ]] || fleet_die "--user '$user' is not a valid user name"
# The network rule: loopback only. Distinct 127.x addresses act as separate hosts; nothing else is ever used.
[[ $first =~ ^127\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] ||
  fleet_die "--first-address must be a loopback address 127.x.y.z (got '$first'); the fleet never uses other networks"
fb=${BASH_REMATCH[1]} fc=${BASH_REMATCH[2]} fd=${BASH_REMATCH[3]}
((fb <= 255 && fc <= 255 && fd >= 1 && fd <= 254)) || fleet_die "--first-address '$first' is not a usable address"
((fd + n - 1 <= 254)) ||
  fleet_die "$n agents from $first would run past 127.$fb.$fc.254: lower N or the last number of --first-address"
sshd_max_sessions=32
((slots + 4 <= sshd_max_sessions)) || fleet_die "--slots $slots needs MaxSessions >= $((slots + 4)); the agents allow $sshd_max_sessions"

[[ $(id -u) == 0 ]] || fleet_die "run as root: the fleet creates the user '$user' and starts sshd, which must switch to it"
[[ -x $FLEET_SSHD ]] || fleet_die "$FLEET_SSHD is missing: apt-get install openssh-server (or run scripts/setup.sh)"
command -v ssh-keygen >/dev/null || fleet_die "ssh-keygen is missing: apt-get install openssh-client"
command -v setsid >/dev/null || fleet_die "setsid is missing (util-linux)"
command -v flock >/dev/null || fleet_die "flock is missing (util-linux)"

dir=$(fleet_abs_dir "$dir")
hidden=
for h in "${hide[@]}"; do
  [[ $h == /* && $h =~ ^/[A-Za-z0-9._/-]+$ ]] || fleet_die "--hide '$h': give an absolute path of letters, digits and . _ - /"
  h=$(realpath -m -- "$h")
  [[ -d $h ]] || fleet_die "--hide $h: no such directory (a build folder that does not exist yet: mkdir -p it first, then it stays hidden once filled)"
  [[ $h != / && $dir/ != "$h"/* && $toolchain/ != "$h"/* && $FLEET_SSHD != "$h"/* ]] ||
    fleet_die "--hide $h would hide the fleet dir, the toolchain or sshd itself"
  hidden+="${hidden:+ }$h"
done
((${#hide[@]} == 0)) || command -v unshare >/dev/null || fleet_die "--hide needs unshare (util-linux)"
addr_of() { printf '127.%s.%s.%s\n' "$fb" "$fc" $((fd + $1 - 1)); }

# ---- the fleet dir, locked against a concurrent up.sh / down.sh on the same dir -----------------------------------
if [[ -d $dir && ! -e $dir/$FLEET_MARKER ]] && [[ -n $(ls -A "$dir") ]]; then
  fleet_die "$dir exists, is not empty and is not a fleet dir: choose another --dir"
fi
created_dir=0
[[ -d $dir ]] || created_dir=1
mkdir -p "$dir"
# Until the first agent starts, a failure removes a fleet dir that this run created (nothing in it yet).
trap '((created_dir)) && rm -rf -- "$dir"' EXIT
exec 9>"$dir/.lock"
flock -n 9 || fleet_die "another up.sh or down.sh is working on $dir right now"
[[ -e $dir/$FLEET_MARKER ]] || : >"$dir/$FLEET_MARKER"

while read -r adir; do
  fleet_agent_status "$adir"
  if [[ $S_STATE == alive || $S_STATE == frozen ]]; then
    fleet_die "a fleet is already running in $dir ($A_NAME, PID $S_PID on $A_ADDR:$A_PORT, $S_STATE): run
  bash $here/down.sh --dir $dir
first (or give another --dir and --port for a second fleet)"
  fi
  # A previous fleet's agent that was killed may have left connections or remote commands behind.
  fleet_collect "$adir" "$A_ADDR" "$A_PORT"
  ((${#AG_SET[@]} == 0)) || fleet_die "$A_NAME of the previous fleet in $dir left processes behind ($(fleet_remaining | tr '\n' ' ')): run
  bash $here/down.sh --dir $dir"
done < <(fleet_agent_dirs "$dir")

for ((i = 1; i <= n; i++)); do
  if why=$(fleet_port_taken "$(addr_of "$i")" "$port"); then
    fleet_die "$why; pick another --port or --first-address"
  fi
done

# ---- system prerequisites (idempotent) ------------------------------------------------------------------------------
# /run/sshd is sshd's privilege-separation directory: it must exist, be owned by root and not be writable by others.
if [[ ! -d /run/sshd ]]; then
  mkdir -p /run/sshd
  chown root:root /run/sshd
  chmod 0755 /run/sshd
fi
[[ $(stat -c '%u %a' /run/sshd) == "0 755" ]] || fleet_die "/run/sshd must be owned by root with mode 0755 (is $(stat -c '%U %a' /run/sshd))"

if ! getent passwd "$user" >/dev/null; then
  fleet_say "creating the system user $user (login shell /bin/sh)"
  # Two fleets started at once may both try: the loser's useradd fails, the user exists all the same.
  useradd --system --create-home --shell /bin/sh "$user" 2>/dev/null || getent passwd "$user" >/dev/null ||
    fleet_die "useradd --system --create-home --shell /bin/sh $user failed"
fi
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd "$user")
[[ $uid != 0 ]] || fleet_die "user $user has UID 0: the agent user must not be root"
[[ $shell == /bin/sh ]] || fleet_die "user $user has login shell $shell; the agents need /bin/sh (no rc files, fast start):
  usermod --shell /bin/sh $user"
if [[ ! -d $home ]]; then
  # sshd would print "Could not chdir to home directory" on the stderr of every remote command.
  mkdir -p "$home" && chown "$uid:$gid" "$home" && chmod 0755 "$home"
fi
# With UsePAM no, sshd refuses accounts whose shadow password starts with '!' ("account is locked"), and useradd
# creates exactly that. '*' means "no password can match" without counting as locked: key login works, passwords never.
pw=$(getent shadow "$user" | cut -d: -f2)
if [[ $pw == '!'* ]]; then
  usermod -p '*' "$user"
fi

# ---- keys, configs and work dirs ------------------------------------------------------------------------------------
umask 022
mkdir -p "$dir/agents"
chmod 0755 "$dir" "$dir/agents"
if [[ ! -s $dir/id_ed25519 || ! -s $dir/id_ed25519.pub ]]; then
  rm -f "$dir/id_ed25519" "$dir/id_ed25519.pub"
  ssh-keygen -q -t ed25519 -N '' -C "fanout-fleet-client@$(hostname)" -f "$dir/id_ed25519"
fi
chmod 0600 "$dir/id_ed25519"
read -r client_type client_key _ <"$dir/id_ed25519.pub"

# Agents of a previous, larger fleet in this dir: nothing of them runs (checked above); remove them.
while read -r adir; do
  k=${adir##*/agent-}
  [[ $k =~ ^[0-9]+$ ]] && ((k > n)) && rm -rf -- "$adir"
done < <(fleet_agent_dirs "$dir")

for ((i = 1; i <= n; i++)); do
  name=agent-$i adir=$dir/agents/agent-$i addr=$(addr_of "$i")
  mkdir -p "$adir/work"
  chmod 0755 "$adir"
  chown "$uid:$gid" "$adir/work"
  chmod 0755 "$adir/work"
  if [[ ! -s $adir/ssh_host_ed25519_key || ! -s $adir/ssh_host_ed25519_key.pub ]]; then
    rm -f "$adir/ssh_host_ed25519_key" "$adir/ssh_host_ed25519_key.pub"
    ssh-keygen -q -t ed25519 -N '' -C "$name@fanout-fleet" -f "$adir/ssh_host_ed25519_key"
  fi
  chmod 0600 "$adir/ssh_host_ed25519_key"
  # Read by sshd with the user's privileges: it must be readable by the agent user.
  printf '%s %s fanout-fleet-client\n' "$client_type" "$client_key" >"$adir/authorized_keys"
  chmod 0644 "$adir/authorized_keys"
  printf 'name=%s\naddress=%s\nport=%s\nhide=%s\n' "$name" "$addr" "$port" "$hidden" >"$adir/agent.conf"
  cat >"$adir/sshd_config" <<EOF
# Written by Agents/local-fleet/up.sh: $name of the local fleet in $dir.
# Not the system sshd: started as "$FLEET_SSHD -D -f $adir/sshd_config -E $adir/sshd.log".
Port $port
ListenAddress $addr
AddressFamily inet
HostKey $adir/ssh_host_ed25519_key
PidFile $adir/sshd.pid
AuthorizedKeysFile $adir/authorized_keys
AllowUsers $user
PermitRootLogin no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
UsePAM no
# The keys live under /tmp (world-writable): StrictModes would refuse them.
StrictModes no
PermitUserRC no
PermitUserEnvironment no
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
AllowAgentForwarding no
AllowTcpForwarding no
PermitTunnel no
Subsystem sftp internal-sftp
# One connection per agent, one channel per slot (+ lease, sampling, kill and deploy channels): MaxSessions >= slots + 4.
MaxSessions $sshd_max_sessions
MaxStartups 100:30:200
LoginGraceTime 30
ClientAliveInterval 0
LogLevel VERBOSE
# Every remote command carries these: down.sh finds leftover remote processes by FANOUT_AGENT_DIR.
SetEnv FANOUT_AGENT=$name FANOUT_AGENT_DIR=$adir FANOUT_AGENT_WORKDIR=$adir/work
EOF
  chmod 0644 "$adir/sshd_config"
  out=$("$FLEET_SSHD" -t -f "$adir/sshd_config" 2>&1) || fleet_die "sshd rejects $adir/sshd_config: $out"
  rm -f "$adir/sshd.pid"
done

# The agent user must reach every file it reads: authorized_keys and its work dir.
if ! runuser -u "$user" -- test -r "$dir/agents/agent-1/authorized_keys" -a -w "$dir/agents/agent-1/work"; then
  fleet_die "user $user cannot read $dir/agents/agent-1/authorized_keys or write its work dir: a parent of $dir is not
  searchable by others (mode 0755 needed on every directory above it); choose a --dir under /tmp"
fi

# known_hosts: the exact host keys, not a keyscan (nothing to trust on first use).
{
  for ((i = 1; i <= n; i++)); do
    read -r t k _ <"$dir/agents/agent-$i/ssh_host_ed25519_key.pub"
    if ((port == 22)); then h=$(addr_of "$i"); else h="[$(addr_of "$i")]:$port"; fi
    printf '%s %s %s\n' "$h" "$t" "$k"
  done
} >"$dir/known_hosts.tmp"
chmod 0644 "$dir/known_hosts.tmp"
mv -f "$dir/known_hosts.tmp" "$dir/known_hosts"

# ---- start ------------------------------------------------------------------------------------------------------
started=0 finished=0
cleanup_on_failure() {
  ((finished)) && return 0
  ((started)) || return 0
  fleet_say "stopping the agents started so far (logs are kept in $dir/agents/*/sshd.log)"
  while read -r adir; do fleet_stop_agent "$adir" || true; done < <(fleet_agent_dirs "$dir")
}
created_dir=0
trap cleanup_on_failure EXIT

t0=$(date +%s%N)
started=1
for ((i = 1; i <= n; i++)); do fleet_start_agent "$dir/agents/agent-$i"; done
for ((i = 1; i <= n; i++)); do
  adir=$dir/agents/agent-$i
  if ! fleet_wait_ready "$adir" "$wait"; then
    msg="agent-$i ($(addr_of "$i"):$port) failed to start: $FLEET_WAIT_ERROR"
    [[ -s $adir/sshd.log ]] && msg+=$'\n'"--- last lines of $adir/sshd.log:"$'\n'"$(tail -n 5 "$adir/sshd.log")"
    [[ -s $adir/sshd.out ]] && msg+=$'\n'"--- $adir/sshd.out:"$'\n'"$(tail -n 5 "$adir/sshd.out")"
    fleet_die "$msg"
  fi
done
t1=$(date +%s%N)
fleet_say "$n agent(s) accept connections ($(((t1 - t0) / 1000000)) ms)"

# ---- the Fanout config and env ------------------------------------------------------------------------------------
{
  printf '# Written by Agents/local-fleet/up.sh: %s local sshd agents on loopback.\n' "$n"
  printf 'known_hosts: %s/known_hosts\n' "$dir"
  printf 'host_key_policy: strict\n'
  printf 'agents:\n'
  for ((i = 1; i <= n; i++)); do
    printf '  - name: agent-%s\n' "$i"
    printf '    host: %s\n' "$(addr_of "$i")"
    printf '    port: %s\n' "$port"
    printf '    user: %s\n' "$user"
    printf '    identity: %s/id_ed25519\n' "$dir"
    printf '    slots: %s\n' "$slots"
    printf '    workdir: %s/agents/agent-%s/work\n' "$dir" "$i"
  done
} >"$dir/fleet.yml.tmp"
mv -f "$dir/fleet.yml.tmp" "$dir/fleet.yml"

addresses=$(for ((i = 1; i <= n; i++)); do addr_of "$i"; done | tr '\n' ' ')
cat >"$dir/env.tmp" <<EOF
# Written by Agents/local-fleet/up.sh. Use: . $dir/env
export FANOUT_FLEET_DIR=$dir
export FANOUT_FLEET_CONFIG=$dir/fleet.yml
export FANOUT_FLEET_SIZE=$n
export FANOUT_FLEET_PORT=$port
export FANOUT_FLEET_ADDRESSES="${addresses% }"
export FANOUT_FLEET_USER=$user
export FANOUT_FLEET_IDENTITY=$dir/id_ed25519
export FANOUT_FLEET_KNOWN_HOSTS=$dir/known_hosts
export FANOUT_FLEET_SLOTS=$slots
EOF
mv -f "$dir/env.tmp" "$dir/env"
printf 'size=%s\nport=%s\nfirst_address=%s\nuser=%s\nslots=%s\n' "$n" "$port" "$first" "$user" "$slots" >"$dir/$FLEET_MARKER"

# ---- prove it: a real login on every agent, and the toolchain on agent-1 ----------------------------------------------
if ((check)); then
  if command -v ssh >/dev/null; then
    tmpc=$(mktemp -d) ssh_pids=()
    remote_tc="test -x $toolchain/usr/bin/swift && test -r $toolchain/usr/lib/swift/linux/libswiftCore.so && $toolchain/usr/bin/swift --version 2>&1 | head -n1"
    for ((i = 1; i <= n; i++)); do
      cmd='echo fanout-ok'
      ((i == 1)) && cmd+="; $remote_tc || echo toolchain-missing"
      ssh -F /dev/null -i "$dir/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=5 \
        -o UserKnownHostsFile="$dir/known_hosts" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes \
        -p "$port" "$user@$(addr_of "$i")" "$cmd" >"$tmpc/$i.out" 2>"$tmpc/$i.err" </dev/null &
      ssh_pids+=($!)
    done
    wait "${ssh_pids[@]}" || true # only these: the agents are background jobs of this shell too
    bad=0
    for ((i = 1; i <= n; i++)); do
      if [[ $(head -n1 "$tmpc/$i.out") != fanout-ok ]]; then
        fleet_say "agent-$i ($(addr_of "$i")): ssh login as $user failed: $(tr '\n' ' ' <"$tmpc/$i.err")"
        bad=1
      elif [[ -s $tmpc/$i.err ]]; then
        fleet_say "warning: agent-$i prints on stderr of every command: $(tr '\n' ' ' <"$tmpc/$i.err")"
      fi
    done
    tc=$(sed -n 2p "$tmpc/1.out")
    rm -rf "$tmpc"
    ((bad == 0)) || fleet_die "the login check failed (see $dir/agents/agent-*/sshd.log)"
    if [[ -z $tc || $tc == toolchain-missing ]]; then
      fleet_say "warning: user $user cannot run $toolchain/usr/bin/swift (or read $toolchain/usr/lib/swift/linux):
  test binaries link against that path (RUNPATH) and will not start on these agents; pass --toolchain or fix permissions"
    else
      fleet_say "login checked on $n agent(s) as $user with strict host keys; toolchain: $tc"
    fi
  else
    fleet_say "warning: no ssh client: login not checked"
  fi
fi

finished=1
fleet_say "fleet of $n in $dir; stop it with: bash $here/down.sh --dir $dir"
printf '%s\n' "$dir/fleet.yml"
