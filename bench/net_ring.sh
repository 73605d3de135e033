#!/bin/bash
# Our MPI's tagged engine over matchbox between two namespace hosts
# (tests/netns/cluster.sh), one rank a host, in configurations of the
# provider's net wire, and Open MPI's OB1 with its tcp BTL (`ob1`, when
# installed): the same program (bench/mpi/mbench.c) in the same interleaved
# rounds, each round once per TCP acknowledgement mode: the kernels' default
# delayed acknowledgements (`delayed`) and both hosts' routes acknowledging
# every segment at once (`quick`, cluster.sh acks). Configurations:
#   ring    the defaults: a frame that follows others untaken goes into the
#           peer's connection ring, a lone one too up to 4 KiB where the
#           route acknowledges at once (else by send), a large message's
#           request carries no head over tcp, and one read alone takes its
#           last 256 KiB or less at once;
#   send    without rings (FI_MATCHBOX_CONN_RING=0, every frame by fi_send);
#   lone    every lone frame into the ring (FI_MATCHBOX_CONN_RING_LONE=1 MiB);
#   nohead  large messages' requests without their head
#           (FI_MATCHBOX_NET_RTS_HEAD=0, the default over tcp);
#   head    with it (FI_MATCHBOX_NET_RTS_HEAD=65536: the first request to a
#           peer carries the message's first 64 KiB);
#   pieces  a message read alone in pieces of 128 KiB to its end
#           (FI_MATCHBOX_NET_RMA_ALONE=0);
#   host    our host engine over matchbox (MATCHBOX_MPI_ENGINE=host), whose
#           rendezvous reads by matchbox's RMA;
#   hpieces the host engine with its reads in pieces to the end too;
#   nopush  the tagged engine without pushed messages
#           (MATCHBOX_MPI_TAGGED_PUSH_FRAMES=0: 64-128 KiB by rendezvous);
#   chunk128 reads in pieces of 128 KiB (FI_MATCHBOX_NET_RMA_CHUNK=131072,
#           the default under bbr; 1 MiB otherwise);
#   hchunk128 the host engine with its reads in pieces of 128 KiB;
#   hpush3  the host engine pushing messages of up to 3 frames
#           (MATCHBOX_MPI_HOST_PUSH_FRAMES=3, against 2);
#   alone16m, halone16m  the tagged and the host engine with a message
#           read alone taken in one read up to 16 MiB
#           (FI_MATCHBOX_NET_RMA_ALONE=16777216);
#   alone256k, halone256k  the same up to 256 KiB (the default before
#           session 51);
#   ob1     Open MPI.
#   lat  one-way us of a ping-pong (lower is better);
#   bw   GB/s of a stream of windows of 64 messages (higher is better).
# The ratio columns are the defaults against each other configuration, so
# above 1.0 the defaults are better for bw, below 1.0 for lat.
# usage: bench/net_ring.sh [BUILD_DIR] [ROUNDS] [SIZES]   (root)
# CONFIGS (default "ring send lone", ob1 added when installed), ACKS
# (default "delayed quick") and OUT (default net_ring, the file
# bench/results/OUT.txt) choose another comparison, e.g. the heads:
#   CONFIGS="ring head pieces" ACKS=delayed OUT=net_head bench/net_ring.sh build 9 \
#     "65536 131072 262144 393216 1048576 4194304"
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
sizes=${3:-2048 4096 16384 65536}
acks=${ACKS:-delayed quick}
out=${OUT:-net_ring}
. "$here/netns_pair.sh"
netns_pair netring
read -r -a asked <<<"${CONFIGS:-ring send lone}"
configs=()
for c in "${asked[@]}"; do # ob1 comes once, below, when Open MPI is there
	[ "$c" = ob1 ] || configs+=("$c")
done
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ompi"; then
	configs+=(ob1)
fi
once() { # config what bytes -> the figure
	local xs=() h=(-x MATCHBOX_MPI_ENGINE=host)
	case $1 in
	ring | ob1) ;;
	send) xs=(-x FI_MATCHBOX_CONN_RING=0) ;;
	lone) xs=(-x FI_MATCHBOX_CONN_RING_LONE=1048576) ;;
	nohead) xs=(-x FI_MATCHBOX_NET_RTS_HEAD=0) ;;
	head) xs=(-x FI_MATCHBOX_NET_RTS_HEAD=65536) ;;
	pieces) xs=(-x FI_MATCHBOX_NET_RMA_ALONE=0) ;;
	host) xs=("${h[@]}") ;;
	hpieces) xs=("${h[@]}" -x FI_MATCHBOX_NET_RMA_ALONE=0) ;;
	nopush) xs=(-x MATCHBOX_MPI_TAGGED_PUSH_FRAMES=0) ;;
	chunk128) xs=(-x FI_MATCHBOX_NET_RMA_CHUNK=131072) ;;
	hchunk128) xs=("${h[@]}" -x FI_MATCHBOX_NET_RMA_CHUNK=131072) ;;
	hpush3) xs=("${h[@]}" -x MATCHBOX_MPI_HOST_PUSH_FRAMES=3) ;;
	alone16m) xs=(-x FI_MATCHBOX_NET_RMA_ALONE=16777216) ;;
	halone16m) xs=("${h[@]}" -x FI_MATCHBOX_NET_RMA_ALONE=16777216) ;;
	alone256k) xs=(-x FI_MATCHBOX_NET_RMA_ALONE=262144) ;;
	halone256k) xs=("${h[@]}" -x FI_MATCHBOX_NET_RMA_ALONE=262144) ;;
	*) echo "unknown configuration $1" >&2; return ;;
	esac
	if [ "$1" = ob1 ]; then
		ompi_netns 60 "$h0:1,$h1:1" 2 --mca pml ob1 --mca btl tcp,self \
			--mca btl_tcp_if_include eth0 --mca btl_tcp_disable_family 6 \
			"$tmp/mb.ompi" "$2" "$3" 300
	else
		ip netns exec mbx-h0 "$b/mpi/mpirun" -n 2 --ppn 1 \
			--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 "${xs[@]}" \
			--timeout 60 "$tmp/mb.ours" "$2" "$3" 300
	fi 2>/dev/null | awk -v w="$2" '$1 == w { print $3 }'
}

for ((r = 1; r <= rounds; r++)); do
	for a in $acks; do
		"$cluster" acks "$a" || exit 1
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
	echo "our MPI over matchbox: configurations ${configs[*]} (bench/net_ring.sh says"
	echo "what each is); TCP acknowledgements $acks (delayed: Linux's default; quick: route"
	echo "quickack 1); two namespace hosts (TCP congestion control"
	echo "$(ip netns exec mbx-h0 sysctl -n net.ipv4.tcp_congestion_control)), median of $rounds interleaved rounds"
	awk -v configs="${configs[*]}" -v sizes="$sizes" -v acks="$acks" "$(cat "$here/median.awk")"'
	function ratio(a, b) { return b + 0 > 0 && a != "" ? sprintf("%.2f", a / b) : "-" }
	NF == 5 && $5 != "" { v[$1 " " $2 " " $3 " " $4] = v[$1 " " $2 " " $3 " " $4] " " $5 }
	END {
		nc = split(configs, c, " "); ns = split(sizes, s, " "); na = split(acks, ak, " ")
		for (k = 1; k <= 2 * na; k++) {
			w = k <= na ? "lat" : "bw"; a = ak[(k - 1) % na + 1]
			printf "%-4s %-8s %8s", w, "acks", "bytes"
			for (i = 1; i <= nc; i++) printf " %8s", c[i]
			printf " "
			for (i = 2; i <= nc; i++) printf " %12s", c[1] "/" c[i]
			print ""
			for (j = 1; j <= ns; j++) {
				printf "%-4s %-8s %8s", w, a, s[j]
				for (i = 1; i <= nc; i++) {
					m[c[i]] = med(v[w " " a " " s[j] " " c[i]])
					printf " %8s", m[c[i]] == "" ? "-" : m[c[i]]
				}
				printf " "
				for (i = 2; i <= nc; i++) printf " %12s", ratio(m[c[1]], m[c[i]])
				print ""
			}
		}
	}' "$tmp/raw"
} | tee "$here/results/$out.txt"
