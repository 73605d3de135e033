#!/bin/bash
# Where a message's time goes in the kernel between two namespace hosts
# (tests/netns/cluster.sh), for matchbox alone (fi_pingpong -p matchbox) and
# for our MPI's tagged and host engines over it (bench/mpi/mbench.c lat):
# the same provider, the same connection, the same system calls per message,
# yet the MPI runs are slower from 2 to 16 KiB (bench/net_floor.sh; why:
# bench/net_state.sh, a small message puts the connection in a slower
# state, and the MPI's barriers send small messages). Each
# configuration runs twice under perf: once recording every system call's
# entry and exit on both ranks (one clock, so the two timelines merge), once
# sampling the call stacks. Printed per configuration:
#   one-way     the program's own figure in the traced run (inflated by the
#               tracing; compare the rows, not with net_floor.sh);
#   recv p50/p90  how long the receive that returns a message's bytes takes
#               (recvfrom on the tcp provider's socket), us;
#   early       the share of messages read before the sender's sendmsg has
#               returned (the sender's socket is then still busy, and the
#               acknowledgement the read sends waits in its backlog);
#   ack share   the share of the receive's kernel time spent transmitting
#               (an acknowledgement sent from inside the read, through the
#               veth pair, the bridge and the peer's TCP input).
# BYTES must fit the tcp provider's 9000-byte receive buffer (one read a
# message). Needs root and perf (linux-perf). Writes bench/results/net_trace.txt.
# usage: bench/net_trace.sh [BUILD_DIR] [BYTES]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
bytes=${2:-4096}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)"; exit 1; }
[ "$bytes" -le 8192 ] || { echo "BYTES at most 8192 (one read a message)"; exit 1; }
cluster=$here/../tests/netns/cluster.sh
tmp=$(mktemp -d /tmp/nettrace.XXXXXX)
trap '"$cluster" down >/dev/null; rm -rf "$tmp"' EXIT
"$cluster" up 2 >/dev/null || exit 1
h1=$("$cluster" addr 1)
"$b/mpi/mpicc" -O2 "$here/mpi/mbench.c" -o "$tmp/mb" || exit 1

# The wrapper each rank runs under: MODE sys or stack, files per rank.
cat > "$tmp/rec" <<EOF
#!/bin/sh
if [ "\$MODE" = sys ]; then
	exec perf record -q -k CLOCK_MONOTONIC -e raw_syscalls:sys_enter,raw_syscalls:sys_exit \
		-o "$tmp/\$CFG.sys.\$PMIX_RANK" "\$@"
fi
exec perf record -q -g -e cpu-clock -F 20000 -o "$tmp/\$CFG.stack.\$PMIX_RANK" "\$@"
EOF
chmod +x "$tmp/rec"

run() { # config mode -> one-way us
	local c=$1
	export CFG=$1 MODE=$2
	case $c in
	matchbox)
		ip netns exec mbx-h1 env PMIX_RANK=1 FI_PROVIDER_PATH="$b/prov/matchbox" timeout 60 \
			"$tmp/rec" fi_pingpong -p matchbox -e rdm -S "$bytes" -I 30000 >/dev/null 2>&1 &
		sleep 0.5
		ip netns exec mbx-h0 env PMIX_RANK=0 FI_PROVIDER_PATH="$b/prov/matchbox" timeout 60 \
			"$tmp/rec" fi_pingpong -p matchbox -e rdm -S "$bytes" -I 30000 "$h1" 2>/dev/null |
			awk 'END { print $7 }'
		wait ;;
	tagged | host)
		MATCHBOX_MPI_ENGINE=$c ip netns exec mbx-h0 "$b/mpi/mpirun" -n 2 --ppn 1 \
			--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 \
			-x MATCHBOX_MPI_ENGINE -x CFG -x MODE --timeout 60 \
			"$tmp/rec" "$tmp/mb" lat "$bytes" 2000 2>/dev/null |
			awk '$1 == "lat" { printf "%.2f\n", $3 }' ;;
	esac
}

# Both ranks' system calls on one timeline: time(us) rank in|out nr value.
timeline() { # config
	for r in 0 1; do
		perf script --ns -i "$tmp/$1.sys.$r" -F time,event,trace 2>/dev/null | awk -v r="$r" '
		{ t = $1; sub(":", "", t)
		  printf "%.3f %d %s %s %s\n", t * 1e6, r, ($2 ~ /enter/ ? "in" : "out"), $4, ($2 ~ /enter/ ? $5 : $6) }'
	done | sort -n -k1,1
}

# The receives that bring a message in (recvfrom, nr 45, returning at least
# BYTES): their durations' median and 90th percentile, then the share read
# while the sender's sendmsg (nr 46) had not yet returned.
recv_stats() { # config
	local early
	early=$(timeline "$1" | awk -v bytes="$bytes" -v durs="$tmp/$1.durs" '
	$3 == "in" { start[$2] = $1 }
	$3 == "in" && $4 == 46 { pend[$2] = 1 }
	$3 == "out" && $4 == 46 && pend[$2] == 1 { pend[$2] = 2 }
	$3 == "out" && $4 == 45 && $5 + 0 >= bytes {
		o = 1 - $2
		if (pend[o]) { n++; early += pend[o] == 1 }
		pend[o] = 0
		print $1 - start[$2] > durs
	}
	END { printf "%.0f", n ? 100 * early / n : 0 }')
	sort -n "$tmp/$1.durs" 2>/dev/null |
		awk '{ a[NR] = $1 } END { if (NR) printf "%.1f %.1f", a[int(NR * .5) + 1], a[int(NR * .9) + 1]; else printf "- -" }'
	echo " $early"
}

# Of the samples inside the read, the share sending an acknowledgement
# (bench/perf_acks.awk), both ranks together.
ack_share() { # config
	for r in 0 1; do
		perf script -i "$tmp/$1.stack.$r" -F time,ip,sym 2>/dev/null
	done | awk -f "$here/perf_acks.awk" | awk '{ sub("%", "", $3); print $3 }'
}

mkdir -p "$here/results"
{
	printf "kernel time per %s-byte message between two namespace hosts (traced runs)\n" "$bytes"
	printf "%-9s %8s %9s %9s %7s %10s\n" config one-way "recv p50" "recv p90" "early%" "ack share%"
	for c in matchbox tagged host; do
		us=$(run "$c" sys)
		run "$c" stack >/dev/null
		read -r p50 p90 early <<<"$(recv_stats "$c")"
		printf "%-9s %8s %9s %9s %7s %10s\n" "$c" "${us:--}" "$p50" "$p90" "$early" "$(ack_share "$c")"
	done
} | tee "$here/results/net_trace.txt"
