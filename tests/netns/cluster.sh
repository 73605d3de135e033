#!/bin/bash
# A cluster on one machine: N "hosts", each a network namespace (mbx-h0 ...)
# with one interface, eth0, at 198.51.100.(10+K)/24 (a documentation range no
# real network here uses). The hosts are joined by veth pairs to a bridge that
# lives in a namespace of its own (mbx-sw), so the machine's own network is
# never touched. With MBX_RAILS=2 (or 3) each host has a second (third) NIC,
# eth1 at 203.0.113.(10+K)/24 (eth2 at 192.0.2.(10+K)/24) on a bridge of its
# own: two networks, as a cluster with two rails has. Needs root (CI runs
# as root).
#
#   cluster.sh up N          create hosts 0..N-1 (removing any old cluster)
#   cluster.sh shape R RATE  limit what every host sends on ethR to RATE (tc
#                            rate, e.g. 2gbit; "off" lifts it): a NIC's speed,
#                            where the veth otherwise runs at memory speed
#   cluster.sh down          remove every mbx-* namespace (and with it the links)
#   cluster.sh addr K [R]    print host K's address (on ethR)
#   cluster.sh exec K CMD..  run CMD on host K
#   cluster.sh run N CMD..   up N, run CMD (it sees MBX_HOSTS=N), then down,
#                            also when CMD fails or the script is interrupted
#   cluster.sh link K up|down  plug host K's cable back in (waiting until the
#                            bridge forwards again) or pull it, at the bridge
#   cluster.sh acks quick|delayed  every host's eth0 route acknowledges TCP
#                            data at once (quickack 1) or as Linux does by
#                            default, delayed
#   cluster.sh cc NAME       every host's TCP congestion control (up sets
#                            MBX_TCP_CC, by default cubic, Linux's own)
set -u
NETS=(198.51.100 203.0.113 192.0.2)
RAILS=${MBX_RAILS:-1}
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
	local n=$1 k r
	case $RAILS in 1|2|3) ;; *) echo "cluster: MBX_RAILS=$RAILS: 1, 2 or 3" >&2; return 1 ;; esac
	down
	ip netns add "$SW" || return 1
	for ((r = 0; r < RAILS; r++)); do
		ip -n "$SW" link add br$r type bridge || return 1
		ip -n "$SW" link set br$r up
	done
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
		ip -n "mbx-h$k" addr add "${NETS[0]}.$((10 + k))/24" dev eth0
		ip -n "mbx-h$k" link set eth0 up
		ip -n "mbx-h$k" link set lo up
		ip -n "$SW" link set "port$k" master br0
		ip -n "$SW" link set "port$k" up
		for ((r = 1; r < RAILS; r++)); do
			ip link add "mbxh${k}r$r" netns "mbx-h$k" type veth peer name "port${k}r$r" \
				netns "$SW" || return 1
			ip -n "mbx-h$k" link set "mbxh${k}r$r" name eth$r
			ip -n "mbx-h$k" addr add "${NETS[r]}.$((10 + k))/24" dev eth$r
			ip -n "mbx-h$k" link set eth$r up
			ip -n "$SW" link set "port${k}r$r" master br$r
			ip -n "$SW" link set "port${k}r$r" up
		done
	done
	# Linux's default congestion control, whatever this machine's own
	# network uses: this VM's image runs bbr, whose pacing, after a
	# ping-pong's small messages, held back the large frames behind a
	# small one (a 66000-byte message 80-240 us one-way against 27-39
	# under cubic, in about half the jobs), which a cluster's hosts, on
	# cubic, do not see. MBX_TCP_CC=bbr keeps that case.
	cc "${MBX_TCP_CC:-cubic}" ||
		echo "cluster: the hosts keep this machine's TCP congestion control" >&2
	# The bridges forward once their ports are up (no STP); wait for that.
	for ((k = 0; k < 50; k++)); do
		[ "$(ip -n "$SW" -d link show | grep -c 'state forwarding')" = "$((n * RAILS))" ] && return 0
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

# A token bucket on each host's ethR: what leaves a host on that NIC goes
# at RATE, with at most 4 MiB queued (a NIC's buffers, not a drop on every
# burst of a large message). The bucket holds 32 KiB: a larger one lets a
# NIC that sat idle send its first 256 KiB at memory speed, which no wire
# does, and which a sender that measures its rails would take for speed.
shape() {
	local r=$1 rate=$2 ns
	for ns in $(ip netns list 2>/dev/null | awk '/^mbx-h/ {print $1}'); do
		ip -n "$ns" link show "eth$r" >/dev/null 2>&1 || { echo "cluster: $ns has no eth$r" >&2; return 1; }
		tc -n "$ns" qdisc del dev "eth$r" root 2>/dev/null
		[ "$rate" = off ] && continue
		tc -n "$ns" qdisc add dev "eth$r" root tbf rate "$rate" burst 32kb limit 4mb || return 1
	done
}

# A namespace takes only a congestion control the machine allows, so NAME
# joins the allowed list first.
cc() {
	local ns allowed
	allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control) || return 1
	case " $allowed " in
	*" $1 "*) ;;
	*) sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed $1" || return 1 ;;
	esac
	for ns in $(ip netns list 2>/dev/null | awk '/^mbx-h/ {print $1}'); do
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control="$1" || return 1
	done
}

acks() {
	local ns route
	for ns in $(ip netns list 2>/dev/null | awk '/^mbx-h/ {print $1}'); do
		route=$(ip -n "$ns" -4 route show dev eth0 | head -1 | sed 's/ quickack 1//')
		[ -n "$route" ] || { echo "cluster: $ns has no eth0 route" >&2; return 1; }
		# shellcheck disable=SC2086 # the route's words, one argument each
		ip -n "$ns" route change $route dev eth0 $([ "$1" = quick ] && echo quickack 1) ||
			return 1
	done
}

case "${1:-}" in
up) up "${2:?N}" ;;
acks) acks "${2:?quick|delayed}" ;;
cc) cc "${2:?NAME}" ;;
shape) shape "${2:?R}" "${3:?RATE}" ;;
link) link "${2:?K}" "${3:?up|down}" ;;
down) down ;;
addr) echo "${NETS[${3:-0}]}.$((10 + ${2:?K}))" ;;
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
	sed -n '2,26p' "$0" >&2
	exit 2
	;;
esac
