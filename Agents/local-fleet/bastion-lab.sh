#!/usr/bin/env bash
# A bastion topology on this machine, for trying and testing ProxyJump: agents that can be reached ONLY through
# bastions, because they live in network namespaces of their own (loopback only, no veth, no other network).
#
#   coordinator (this host) ──> jump1 127.0.2.1:P ──> inner-1 127.0.1.1:P, inner-2 127.0.1.2:P   (namespace "inner")
#                                                └──> jump2 127.0.2.2:P ──> deep-1 127.0.1.3:P   (namespace "deep")
#
# Why namespaces: on one loopback every connection comes from 127.0.0.1 whatever address it goes to (measured), so
# sshd's address rules alone cannot tell a bastion's connection from the coordinator's. Here nothing on this host
# listens on the agents' addresses: going around the bastion is refused, and the agents' sshd allow only
# fanout-agent@127.0.0.1 (the bastion's side) besides. Each bastion is an sshd started per connection (sshd -i) by a
# socat listener: jump1's listens on this host and starts sshd inside "inner"; jump2's listens inside "inner" and
# starts sshd inside "deep". Stopping a bastion (stop-bastion) kills its listener and every connection through it.
#
# Writes into DIR: ssh_config (Host aliases and wildcards for all of the above), known_hosts (exact keys), id_ed25519
# (the client key), fanout.yml (the agents by alias). Needs root, sshd, socat, unshare, nsenter and ip.
set -euo pipefail
FLEET_PROG=bastion-lab.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=fleet-lib.sh
source "$here/fleet-lib.sh"

usage() {
  cat <<EOF
usage: bastion-lab.sh up --dir DIR [--port P]
       bastion-lab.sh stop-bastion jump1|jump2 --dir DIR
       bastion-lab.sh start-bastion jump1|jump2 --dir DIR
       bastion-lab.sh down --dir DIR
EOF
}

cmd=${1-}
shift || true
dir= port= which=
while (($#)); do
  case $1 in
    --dir) dir=${2-}; shift 2 ;;
    --port) port=${2-}; shift 2 ;;
    jump1 | jump2) which=$1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; fleet_die "unknown argument $1" ;;
  esac
done
[[ -n $dir ]] || { usage >&2; fleet_die "give --dir DIR"; }
# The port `up` chose is kept for the commands after it.
[[ -n $port ]] || port=$(cat "$dir/port" 2>/dev/null || echo 2701)
[[ $port =~ ^[1-9][0-9]*$ ]] && ((port < 32768)) || fleet_die "--port must be below the ephemeral range (got $port)"
user=$FLEET_DEFAULT_USER

# cmdline_of PID: its command line, words separated by spaces; nothing once the process is gone.
cmdline_of() { { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null || true; }

netns_of() { printf '/proc/%s/ns/net\n' "$(cat "$dir/$1.pid" 2>/dev/null || echo 0)"; }

# kill_group PIDFILE: SIGKILL to the process group the recorded PID leads (setsid made it a leader).
kill_group() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  # Only while the PID is still this lab's listener (a PID is reused once its process is gone).
  if [[ $pid =~ ^[1-9][0-9]*$ ]] && [[ $(cmdline_of "$pid") == *"-f $dir/jump"* ]]; then
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

# kill_namespace NAME: every process inside the namespace (its inode, compared in /proc), holder last.
kill_namespace() {
  local holder ino p
  holder=$(cat "$dir/$1.pid" 2>/dev/null) || return 0
  # Only a holder that is still ours (its PID may have been reused) and a namespace that is not this host's.
  if [[ ! $holder =~ ^[1-9][0-9]*$ ]] || [[ $(cmdline_of "$holder") != "sleep 2147483647 " ]]; then
    rm -f "$dir/$1.pid"
    return 0
  fi
  ino=$(readlink "/proc/$holder/ns/net" 2>/dev/null) || { rm -f "$dir/$1.pid"; return 0; }
  [[ $ino != "$(readlink /proc/self/ns/net)" ]] || { rm -f "$dir/$1.pid"; return 0; }
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/ns/net" 2>/dev/null) == "$ino" ]] && kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
  rm -f "$dir/$1.pid"
}

start_bastion() { # NAME: its socat listener, in this host's namespace (jump1) or inside "inner" (jump2)
  local name=$1 addr listen_ns target_ns
  case $name in
    jump1) addr=127.0.2.1 listen_ns= target_ns=$(netns_of inner) ;;
    jump2) addr=127.0.2.2 listen_ns=$(netns_of inner) target_ns=$(netns_of deep) ;;
  esac
  local old
  old=$(cat "$dir/$name.pid" 2>/dev/null || true)
  if [[ $old =~ ^[1-9][0-9]*$ ]] && kill -0 "$old" 2>/dev/null; then
    fleet_die "$name is running already (PID $old)"
  fi
  local exec_line="nsenter --net=$target_ns $FLEET_SSHD -i -f $dir/$name/sshd_config -E $dir/$name/sshd.log"
  (
    if [[ -n $listen_ns ]]; then
      exec setsid nsenter --net="$listen_ns" socat "TCP-LISTEN:$port,bind=$addr,reuseaddr,fork" "EXEC:$exec_line,nofork" \
        </dev/null >>"$dir/$name/socat.out" 2>&1
    fi
    exec setsid socat "TCP-LISTEN:$port,bind=$addr,reuseaddr,fork" "EXEC:$exec_line,nofork" \
      </dev/null >>"$dir/$name/socat.out" 2>&1
  ) &
  echo $! >"$dir/$name.pid"
  wait_banner "$name" "$addr" "$listen_ns"
}

wait_banner() { # NAME ADDR NETNS: until an SSH banner answers there (10 s)
  local deadline=$((SECONDS + 10)) probe="exec 3<>/dev/tcp/$2/$port && head -c 4 <&3"
  while ((SECONDS < deadline)); do
    if [[ -n $3 ]]; then
      [[ $(timeout 2 nsenter --net="$3" bash -c "$probe" 2>/dev/null) == SSH- ]] && return 0
    else
      [[ $(timeout 2 bash -c "$probe" 2>/dev/null) == SSH- ]] && return 0
    fi
    sleep 0.1
  done
  fleet_die "$1 ($2:$port) did not answer with an SSH banner within 10 s (see $dir/$1/)"
}

down() {
  kill_group "$dir/jump1.pid"
  # A listener whose PID file was lost (a start that failed half-way): found by the sshd config it starts.
  local p
  for p in /proc/[0-9]*; do
    [[ $(cmdline_of "${p#/proc/}") == socat\ *"-f $dir/jump1/sshd_config"* ]] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  kill_namespace deep
  kill_namespace inner
  rm -f "$dir"/*.pid
}

case $cmd in
  up) ;;
  down) down; exit 0 ;;
  stop-bastion) [[ -n $which ]] || fleet_die "which bastion? jump1 or jump2"
    if [[ $which == jump1 ]]; then kill_group "$dir/jump1.pid"; else
      # jump2's listener and its connections live inside "inner": kill its group there.
      kill_group "$dir/jump2.pid"
    fi
    exit 0 ;;
  start-bastion) [[ -n $which ]] || fleet_die "which bastion? jump1 or jump2"; start_bastion "$which"; exit 0 ;;
  *) usage >&2; fleet_die "unknown command '$cmd'" ;;
esac

[[ $(id -u) == 0 ]] || fleet_die "run as root (network namespaces, sshd)"
for tool in socat unshare nsenter ip setsid ssh-keygen; do
  command -v "$tool" >/dev/null || fleet_die "$tool is missing (scripts/setup.sh installs it)"
done
getent passwd "$user" >/dev/null || fleet_die "user $user is missing: start the local fleet once (up.sh) to create it"
mkdir -p "$dir"
chmod 0755 "$dir"
dir=$(cd "$dir" && pwd)
down
printf '%s\n' "$port" >"$dir/port"

# The namespaces: a holder process each, with its loopback up.
for ns in inner deep; do
  (exec setsid unshare --net /bin/sh -c 'ip link set lo up && exec sleep 2147483647' </dev/null >/dev/null 2>&1) &
  echo $! >"$dir/$ns.pid"
done
for ns in inner deep; do
  for _ in $(seq 50); do
    [[ $(nsenter --net="$(netns_of "$ns")" cat /sys/class/net/lo/operstate 2>/dev/null) == unknown ]] && break
    sleep 0.05
  done
done

[[ -s $dir/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C fanout-bastion-lab -f "$dir/id_ed25519"
chmod 0600 "$dir/id_ed25519"
cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
chmod 0644 "$dir/authorized_keys"
: >"$dir/known_hosts"

server_config() { # NAME ADDR ROLE
  local name=$1 addr=$2 role=$3 sdir=$dir/$1
  mkdir -p "$sdir/work"
  chown "$user" "$sdir/work"
  chmod 0755 "$sdir"
  [[ -s $sdir/host_key ]] || ssh-keygen -q -t ed25519 -N '' -C "$name@bastion-lab" -f "$sdir/host_key"
  read -r t k _ <"$sdir/host_key.pub"
  printf '[%s]:%s %s %s\n' "$addr" "$port" "$t" "$k" >>"$dir/known_hosts"
  {
    printf 'HostKey %s/host_key\nAuthorizedKeysFile %s/authorized_keys\nPubkeyAuthentication yes\n' "$sdir" "$dir"
    printf 'PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin no\n'
    printf 'UseDNS no\nPrintMotd no\nX11Forwarding no\nLogLevel VERBOSE\n'
    if [[ $role == bastion ]]; then
      printf '# A bastion: forwarding only.\nAllowUsers %s\nAllowTcpForwarding local\nPermitOpen any\nPermitTTY no\n' "$user"
    else
      printf 'Port %s\nListenAddress %s\nPidFile %s/sshd.pid\n' "$port" "$addr" "$sdir"
      printf '# Only connections from the bastion side of this namespace.\nAllowUsers %s@127.0.0.1\n' "$user"
      printf 'AllowTcpForwarding no\nSubsystem sftp internal-sftp\nMaxSessions 32\nMaxStartups 100:30:200\n'
    fi
  } >"$sdir/sshd_config"
  "$FLEET_SSHD" -t -f "$sdir/sshd_config" || fleet_die "sshd rejects $sdir/sshd_config"
}
server_config jump1 127.0.2.1 bastion
server_config jump2 127.0.2.2 bastion
server_config inner-1 127.0.1.1 agent
server_config inner-2 127.0.1.2 agent
server_config deep-1 127.0.1.3 agent

start_agent() { # NAME NAMESPACE ADDR
  (exec setsid nsenter --net="$(netns_of "$2")" "$FLEET_SSHD" -D -f "$dir/$1/sshd_config" -E "$dir/$1/sshd.log" \
    </dev/null >>"$dir/$1/sshd.out" 2>&1) &
  wait_banner "$1" "$3" "$(netns_of "$2")"
}
start_agent inner-1 inner 127.0.1.1
start_agent inner-2 inner 127.0.1.2
start_agent deep-1 deep 127.0.1.3
start_bastion jump1
start_bastion jump2

cat >"$dir/ssh_config" <<EOF
# Written by Agents/local-fleet/bastion-lab.sh. First value wins: specific hosts first, defaults last.
Host jump1
  HostName 127.0.2.1
Host jump2
  HostName 127.0.2.2
Host inner-1
  HostName 127.0.1.1
Host inner-2
  HostName 127.0.1.2
Host inner-*
  ProxyJump jump1
Host deep-1
  HostName 127.0.1.3
  ProxyJump jump1,jump2
Host *
  User $user
  Port $port
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
EOF
cat >"$dir/fanout.yml" <<EOF
# Written by Agents/local-fleet/bastion-lab.sh: agents by their ~/.ssh/config aliases (HOME must hold $dir/ssh_config
# as .ssh/config, or set ssh_config: $dir/ssh_config).
ssh_config: $dir/ssh_config
agents:
  - { host: inner-1, slots: 2, workdir: $dir/inner-1/work }
  - { host: inner-2, slots: 2, workdir: $dir/inner-2/work }
  - { host: deep-1, slots: 2, workdir: $dir/deep-1/work }
EOF
fleet_say "bastion lab up in $dir; stop it with: bash $here/bastion-lab.sh down --dir $dir"
printf '%s\n' "$dir/fanout.yml"
