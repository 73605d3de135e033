#!/bin/bash
# A cluster on one machine: N "hosts", each a network namespace (mbx-h0 ...)
# with one interface, eth0, at 198.51.100.(10+K)/24 (a documentation range no
# real network here uses). The hosts are joined by veth pairs to a bridge that
# lives in a namespace of its own (mbx-sw), so the machine's own network is
# never touched. Needs root (CI runs as root).
#
#   cluster.sh up N          create hosts 0..N-1 (removing any old cluster)
#   cluster.sh down          remove every mbx-* namespace (and with it the links)
#   cluster.sh addr K        print host K's address
#   cluster.sh exec K CMD..  run CMD on host K
#   cluster.sh run N CMD..   up N, run CMD (it sees MBX_HOSTS=N), then down,
#                            also when CMD fails or the script is interrupted
#   cluster.sh link K up|down  plug host K's cable back in (waiting until the
#                            bridge forwards again) or pull it, at the bridge
set -u
NET=198.51.100
SW=mbx-sw

down() {
	local ns pids
	for ns in $(ip netns list 2>/dev/null | awk '/^mbx-/ {print $1}'); do
		# Whatever still runs on a host goes with it (a rank a timed-out
		# launcher left spinning would slow every later run).
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
}

up() {
	local n=$1 k
	down
	ip netns add "$SW" || return 1
	ip -n "$SW" link add br0 type bridge || return 1
	ip -n "$SW" link set br0 up
	ip -n "$SW" link set lo up
	for ((k = 0; k < n; k++)); do
		ip netns add "mbx-h$k" || return 1
		# IPv4 only: an interface just brought up holds a tentative IPv6
		# link-local address for about a second (duplicate address
		# detection), and Open MPI's launcher, built with IPv6, would
		# offer it to its daemons as a way to reach this host.
		ip netns exec "mbx-h$k" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
		ip link add "mbxh${k}" netns "mbx-h$k" type veth peer name "port$k" netns "$SW" || return 1
		ip -n "mbx-h$k" link set "mbxh${k}" name eth0
		ip -n "mbx-h$k" addr add "$NET.$((10 + k))/24" dev eth0
		ip -n "mbx-h$k" link set eth0 up
		ip -n "mbx-h$k" link set lo up
		ip -n "$SW" link set "port$k" master br0
		ip -n "$SW" link set "port$k" up
	done
	# The bridge forwards once its ports are up (no STP); wait for that.
	for ((k = 0; k < 50; k++)); do
		[ "$(ip -n "$SW" -d link show master br0 | grep -c 'state forwarding')" = "$n" ] && return 0
		sleep 0.1
	done
	echo "cluster: bridge ports never reached forwarding" >&2
	return 1
}

link() {
	local k=$1 i
	ip -n "$SW" link set "port$k" "$2" || return 1
	[ "$2" = down ] && return 0
	for ((i = 0; i < 50; i++)); do
		ip -n "$SW" -d link show "port$k" | grep -q 'state forwarding' && return 0
		sleep 0.1
	done
	echo "cluster: port$k never reached forwarding" >&2
	return 1
}

case "${1:-}" in
up) up "${2:?N}" ;;
link) link "${2:?K}" "${3:?up|down}" ;;
down) down ;;
addr) echo "$NET.$((10 + ${2:?K}))" ;;
exec)
	k=${2:?K}
	shift 2
	exec ip netns exec "mbx-h$k" "$@"
	;;
run)
	n=${2:?N}
	shift 2
	trap down EXIT INT TERM
	up "$n" || exit 1
	MBX_HOSTS=$n "$@"
	;;
*)
	sed -n '2,17p' "$0" >&2
	exit 2
	;;
esac
