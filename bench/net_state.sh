#!/bin/bash
# Two timings of one TCP connection between two namespace hosts
# (tests/netns/cluster.sh): a ping-pong of BYTES over matchbox alone (raw
# tagged calls, bench/mpi/netstate.c; MPI only swaps the names) runs
# in 12 blocks of 1000 round trips, and before block 6 the ranks trade one
# message of another size on another tag. Configurations, interleaved in
# each of ROUNDS rounds:
#   matchbox none     nothing traded (the control);
#   matchbox pp 8     an 8-byte round trip, as a barrier or a reduction sends
#                     (96 bytes on the wire with all headers);
#   matchbox pp 16    16 bytes (104 on the wire); a segment of 128 bytes or
#                     more grows the kernel's receive window, which a 32-byte
#                     message reaches (144 bytes: over 24 bytes a message
#                     takes the longer, tracked header);
#   matchbox pp 4095  a round trip of nearly the ping-pong's size;
#   tcp pp 8          the same 8 bytes over libfabric's tcp provider alone;
#   tcp pp 1024       1 KiB over it;
#   ours pp 1024      the loop and the trade in MPI_Send/MPI_Recv (NETSTATE_MPI),
#                     our MPI's tagged engine over matchbox;
#   ob1 pp 8, 1024    the same under Open MPI's OB1 and its tcp BTL (when
#                     Open MPI is installed).
# Printed per configuration: the medians of the blocks before and after, per
# round, and the median over rounds of after/before. With PERF=1, one more
# matchbox pp 32 run is sampled with call stacks on rank 1 (perf, CLOCK_REALTIME)
# and the second before and after the trade are split by where the kernel
# was (bench/perf_acks.awk): the share of the read's samples that transmit
# (an acknowledgement sent from inside recvfrom) and of the send's that
# process the socket's backlog (the peer's acknowledgement, taken in while
# sendmsg held the socket). Needs root; PERF=1 needs perf (linux-perf). Writes
# bench/results/net_state.txt.
# usage: bench/net_state.sh [BUILD_DIR] [ROUNDS] [BYTES]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
bytes=${3:-4096}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
cluster=$here/../tests/netns/cluster.sh
tmp=$(mktemp -d /tmp/netstate.XXXXXX)
trap '"$cluster" down >/dev/null; rm -rf "$tmp"' EXIT
"$cluster" up 2 >/dev/null || exit 1
"$b/mpi/mpicc" -O2 "$here/mpi/netstate.c" -o "$tmp/ns" -lfabric || exit 1
. "$here/ompi_netns.sh"

run() { # config kind other-bytes [wrapper...] -> "before after"
	local cfg=$1 kind=$2 other=$3 args
	shift 3
	args=("$bytes" 1000 12 6 "$kind" "$other")
	case $cfg in
	ob1) ompi_netns 60 "$h0:1,$h1:1" 2 --mca pml ob1 --mca btl tcp,self \
		--mca btl_tcp_if_include eth0 --mca btl_tcp_disable_family 6 \
		-x NETSTATE_MPI=1 "$tmp/ns.ompi" "${args[@]}" ;;
	ours) NETSTATE_MPI=1 ip netns exec mbx-h0 "$b/mpi/mpirun" -n 2 --ppn 1 \
		--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x NETSTATE_MPI \
		--timeout 120 "$tmp/ns" "${args[@]}" ;;
	*) NETSTATE_PROV=$cfg FI_TCP_IFACE=eth0 ip netns exec mbx-h0 "$b/mpi/mpirun" -n 2 \
		--ppn 1 --host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x NETSTATE_PROV \
		-x FI_TCP_IFACE -x NETSTATE_MARK --timeout 120 "$@" "$tmp/ns" "${args[@]}" ;;
	esac 2>"$tmp/err" | awk '/ before / { print $(NF - 2), $NF }'
}

h0=$("$cluster" addr 0)
h1=$("$cluster" addr 1)
configs=("matchbox none 0" "matchbox pp 8" "matchbox pp 16" "matchbox pp 4095" "tcp pp 8"
	"tcp pp 1024" "ours pp 1024")
command -v mpicc.openmpi >/dev/null &&
	mpicc.openmpi -O2 "$here/mpi/netstate.c" -o "$tmp/ns.ompi" -lfabric &&
	configs+=("ob1 pp 8" "ob1 pp 1024")
mkdir -p "$here/results"
{
	printf "%s-byte ping-pong between two namespace hosts, one-way us: medians of the\n" "$bytes"
	printf "6 blocks of 1000 round trips before and after one other message is traded\n"
	printf "%-18s %s | %s\n" config "before->after, per round" "after/before (median)"
	declare -A res
	for ((r = 0; r < rounds; r++)); do
		for c in "${configs[@]}"; do
			res[$c]+="$(run $c) "
		done
	done
	for c in "${configs[@]}"; do
		set -- ${res[$c]}
		line="" ratios=""
		while [ $# -ge 2 ]; do
			line+="$1->$2 "
			ratios+="$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b / a }') "
			shift 2
		done
		printf "%-18s %s| %s\n" "${c% 0}" "$line" \
			"$(awk -v l="$ratios" "$(cat "$here/median.awk")"'BEGIN { printf "%.2f", med(l, 0) }')"
	done

	[ "${PERF:-0}" = 1 ] || exit 0
	command -v perf >/dev/null || { echo "PERF=1 needs perf (apt-get install linux-perf)"; exit 0; }
	cat > "$tmp/rec" <<EOF
#!/bin/sh
[ "\$PMIX_RANK" = 1 ] || exec "\$@"
exec perf record -q -k CLOCK_REALTIME -g -e cpu-clock -F 20000 -o "$tmp/perf.data" "\$@"
EOF
	chmod +x "$tmp/rec"
	export NETSTATE_MARK=1
	echo
	echo "rank 1 profiled, matchbox pp 32: $(run matchbox pp 32 "$tmp/rec" | sed 's/ / -> /') us (inflated by the sampling)"
	mark=$(awk '/disturbance at/ { print $NF }' "$tmp/err")
	perf script -i "$tmp/perf.data" -F time,ip,sym 2>/dev/null |
		awk -v mark="${mark:-0}" -f "$here/perf_acks.awk" | awk '{
		printf "%-7s read samples %5d, transmitting %4s; send samples %5d, in the backlog %4s\n",
			$1, $3, $4, $6, $7 }'
} | tee "$here/results/net_state.txt"
