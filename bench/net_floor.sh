#!/bin/bash
# What each layer costs on the wires between two namespace hosts
# (tests/netns/cluster.sh), one process a host, a ping-pong at each size,
# one-way microseconds, median of interleaved rounds:
#   socket    a plain TCP socket (bench/sockpp.c): the kernel's floor, on
#             which Open MPI's tcp BTL sits directly;
#   tcp, net  libfabric 1.17's core providers, FI_EP_MSG (fi_pingpong from
#             libfabric-bin), on which matchbox's connections sit;
#   send, write  one `tcp` connection in one program (bench/ringpp.c):
#             fi_send into posted receives (a completion, and tcp's
#             wake-up signal, per message), or fi_write into a ring the
#             peer polls in memory (no completion at the target);
#   matchbox  matchbox's RDM endpoint (fi_pingpong -p matchbox);
#   tagged    our MPI's tagged engine over matchbox (bench/mpi/mbench.c lat);
#   host      our MPI's host engine over matchbox (libmpi matches);
#   ob1       Open MPI 4.1's OB1 with its tcp BTL (the same program), when
#             Open MPI is installed.
# The last columns are tagged and host against ob1 (their times, so below
# 1.0 ours is faster). Writes bench/results/net_floor.txt.
# usage: bench/net_floor.sh [BUILD_DIR] [ROUNDS] [SIZES]   (root)
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
sizes=${3:-1024 4096 16384 65536 262144}
. "$here/netns_pair.sh"
netns_pair netfloor
configs=(socket tcp)
fi_info -p net >/dev/null 2>&1 && configs+=(net)
configs+=(send write matchbox tagged host)
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ompi"; then
	configs+=(ob1)
fi

iters() { # bytes -> ping-pong iterations (about half a second)
	if [ "$1" -ge 65536 ]; then echo 1500; else echo 8000; fi
}
# A server on host 1, its client on host 0; prints the client's figure.
pair() { # awk-field command...
	local f=$1
	shift
	ip netns exec mbx-h1 timeout 60 "$@" >/dev/null 2>&1 &
	sleep 0.3
	ip netns exec mbx-h0 timeout 60 "$@" "$h1" 2>/dev/null | awk -v f="$f" 'END { print $f }'
	wait
}
once() { # config bytes
	local n
	n=$(iters "$2")
	case $1 in
	socket) pair 2 "$b/bench/sockpp" -S "$2" -I "$n" ;;
	send | write) pair 2 "$b/bench/ringpp" -m "$1" -S "$2" -I "$n" ;;
	tcp | net) pair 7 fi_pingpong -p "$1" -e msg -S "$2" -I "$n" ;;
	matchbox) pair 7 env FI_PROVIDER_PATH="$b/prov/matchbox" fi_pingpong -p matchbox -e rdm \
		-S "$2" -I "$n" ;;
	tagged | host) MATCHBOX_MPI_ENGINE=$1 ip netns exec mbx-h0 "$b/mpi/mpirun" -n 2 --ppn 1 \
		--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x MATCHBOX_MPI_ENGINE \
		--timeout 60 "$tmp/mb.ours" lat "$2" 300 2>/dev/null | awk '$1 == "lat" { print $3 }' ;;
	ob1) ompi_netns 60 "$h0:1,$h1:1" 2 --mca pml ob1 --mca btl tcp,self \
		--mca btl_tcp_if_include eth0 --mca btl_tcp_disable_family 6 \
		"$tmp/mb.ompi" lat "$2" 300 2>/dev/null | awk '$1 == "lat" { print $3 }' ;;
	esac
}

for ((r = 1; r <= rounds; r++)); do
	for s in $sizes; do
		for c in "${configs[@]}"; do
			echo "$c $s $(once "$c" "$s")"
		done
	done
done > "$tmp/raw"

{
	echo "one-way latency between two namespace hosts, us, median of $rounds interleaved rounds"
	awk -v configs="${configs[*]}" -v sizes="$sizes" "$(cat "$here/median.awk")"'
	NF == 3 && $3 != "" { v[$1 " " $2] = v[$1 " " $2] " " $3 }
	END {
		nc = split(configs, c, " "); ns = split(sizes, s, " ")
		printf "%8s", "bytes"
		for (i = 1; i <= nc; i++) printf " %9s", c[i]
		print "   tagged/ob1 host/ob1"
		for (k = 1; k <= ns; k++) {
			printf "%8s", s[k]
			for (i = 1; i <= nc; i++) { m[c[i]] = med(v[c[i] " " s[k]]); printf " %9s", m[c[i]] == "" ? "-" : m[c[i]] }
			printf "   %10s %8s\n", (m["ob1"] + 0 > 0 ? sprintf("%.2f", m["tagged"] / m["ob1"]) : "-"),
				(m["ob1"] + 0 > 0 ? sprintf("%.2f", m["host"] / m["ob1"]) : "-")
		}
	}' "$tmp/raw"
} | tee "$here/results/net_floor.txt"
