#!/bin/bash
# Connection rings (FI_MATCHBOX_CONN_RING) between two namespace hosts
# (tests/netns/cluster.sh), one rank a host: our MPI's tagged engine over
# matchbox with the defaults (`ring`: a frame that follows others untaken
# goes into the peer's ring; a lone one too up to 4 KiB where the route
# acknowledges TCP data at once, else by send), without rings (`send`,
# every frame by fi_send), with every lone frame into the ring (`lone`,
# FI_MATCHBOX_CONN_RING_LONE=1 MiB), and Open MPI's OB1 with its tcp BTL
# (`ob1`, when installed): the same program (bench/mpi/mbench.c) in the
# same interleaved rounds, each round once with the kernels' default
# delayed TCP acknowledgements (`delayed`) and once with both hosts'
# routes acknowledging every segment at once (`quick`, cluster.sh acks).
#   lat  one-way us of a ping-pong (lower is better);
#   bw   GB/s of a stream of windows of 64 messages (higher is better).
# The ratio columns are ring against send and against ob1, and lone
# against send, so above 1.0 the first is better for bw, below 1.0 for
# lat. Writes bench/results/net_ring.txt.
# usage: bench/net_ring.sh [BUILD_DIR] [ROUNDS] [SIZES]   (root)
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
sizes=${3:-2048 4096 16384 65536}
. "$here/netns_pair.sh"
netns_pair netring
configs=(ring send lone)
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ompi"; then
	configs+=(ob1)
fi
once() { # config what bytes -> the figure
	local xs=()
	case $1 in
	ring | send | lone)
		[ "$1" = send ] && xs=(-x FI_MATCHBOX_CONN_RING=0)
		[ "$1" = lone ] && xs=(-x FI_MATCHBOX_CONN_RING_LONE=1048576)
		ip netns exec mbx-h0 "$b/mpi/mpirun" -n 2 --ppn 1 \
			--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 "${xs[@]}" \
			--timeout 60 "$tmp/mb.ours" "$2" "$3" 300 2>/dev/null ;;
	ob1) ompi_netns 60 "$h0:1,$h1:1" 2 --mca pml ob1 --mca btl tcp,self \
		--mca btl_tcp_if_include eth0 --mca btl_tcp_disable_family 6 \
		"$tmp/mb.ompi" "$2" "$3" 300 2>/dev/null ;;
	esac | awk -v w="$2" '$1 == w { print $3 }'
}

for ((r = 1; r <= rounds; r++)); do
	for a in delayed quick; do
		"$cluster" acks $a || exit 1
		for s in $sizes; do
			for w in lat bw; do
				for c in "${configs[@]}"; do
					echo "$w $a $s $c $(once "$c" "$w" "$s")"
				done
			done
		done
	done
done > "$tmp/raw"
"$cluster" acks delayed

{
	echo "tagged engine over matchbox: connection rings as by default (ring), off (send),"
	echo "every lone frame into the ring (lone), and OB1; TCP acknowledgements delayed (Linux's"
	echo "default) or quick (route quickack 1); two namespace hosts, median of $rounds"
	echo "interleaved rounds"
	awk -v configs="${configs[*]}" -v sizes="$sizes" "$(cat "$here/median.awk")"'
	function ratio(a, b) { return b + 0 > 0 && a != "" ? sprintf("%.2f", a / b) : "-" }
	NF == 5 && $5 != "" { v[$1 " " $2 " " $3 " " $4] = v[$1 " " $2 " " $3 " " $4] " " $5 }
	END {
		nc = split(configs, c, " "); ns = split(sizes, s, " ")
		for (k = 1; k <= 4; k++) {
			w = k <= 2 ? "lat" : "bw"; a = k % 2 ? "delayed" : "quick"
			printf "%-4s %-8s %8s", w, "acks", "bytes"
			for (i = 1; i <= nc; i++) printf " %8s", c[i]
			print "  ring/send ring/ob1 lone/send"
			for (j = 1; j <= ns; j++) {
				printf "%-4s %-8s %8s", w, a, s[j]
				for (i = 1; i <= nc; i++) {
					m[c[i]] = med(v[w " " a " " s[j] " " c[i]])
					printf " %8s", m[c[i]] == "" ? "-" : m[c[i]]
				}
				printf "  %9s %8s %9s\n", ratio(m["ring"], m["send"]),
					ratio(m["ring"], m["ob1"]), ratio(m["lone"], m["send"])
			}
		}
	}' "$tmp/raw"
} | tee "$here/results/net_ring.txt"
