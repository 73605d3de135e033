#!/bin/bash
# A non-contiguous message of 1 to 64 MiB between two ranks on one node
# (bench/mpi/noncontig.c): bandwidth and how far each rank's peak resident
# memory rose above its own buffers, for each engine moving it in fragments
# (host) or pieces (tagged), each engine with that off (packed whole:
# MATCHBOX_MPI_HOST_FRAG=0, MATCHBOX_MPI_TAGGED_FRAG=0) and Open MPI 4.1's
# OB1 (its convertor pipelines). Rounds
# interleave the configurations. Writes bench/results/noncontig.txt.
# With NC_HOSTS=2 (root, after tests/netns/cluster.sh up 2) the two ranks
# are on two namespace hosts, our configurations only, and it writes
# bench/results/noncontig_across.txt.
# With NC_SHAPE=contig, rank 0 sends the same bytes contiguous into rank 1's
# vector, and tagged-whole is MATCHBOX_MPI_TAGGED_WHOLE=0 (such a message
# in one piece); the results file's name gains _contig.
# usage: bench/noncontig.sh [BUILD_DIR] [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
tmp=$(mktemp -d /tmp/noncontig.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/results"
. "$here/progs.sh"
progs noncontig.c nc -O2

hosts=${NC_HOSTS:-1}
where="one node"
result=noncontig.txt
mpirun=("$b/mpi/mpirun" -n 2 --timeout 300)
if [ "$hosts" = 2 ]; then
	mpirun=(ip netns exec mbx-h0 "${mpirun[@]}" --ppn 1 --host-prefix "ip netns exec mbx-h%h"
		--pmix-if eth0)
	where="two namespace hosts"
	result=noncontig_across.txt
	have_ompi=0
fi

shape=${NC_SHAPE:-}
whole=MATCHBOX_MPI_TAGGED_FRAG=0
if [ "$shape" = contig ]; then
	whole=MATCHBOX_MPI_TAGGED_WHOLE=0
	result=${result%.txt}_contig.txt
fi

run() { # config MiB
	case $1 in
	host) "${mpirun[@]}" -x MATCHBOX_MPI_ENGINE=host "$tmp/nc.ours" "$2" 5 $shape ;;
	host-whole) "${mpirun[@]}" -x MATCHBOX_MPI_ENGINE=host -x MATCHBOX_MPI_HOST_FRAG=0 \
		"$tmp/nc.ours" "$2" 5 $shape ;;
	tagged) "${mpirun[@]}" -x MATCHBOX_MPI_ENGINE=tagged "$tmp/nc.ours" "$2" 5 $shape ;;
	tagged-whole) "${mpirun[@]}" -x MATCHBOX_MPI_ENGINE=tagged -x "$whole" \
		"$tmp/nc.ours" "$2" 5 $shape ;;
	ob1) timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 \
		--mca pml ob1 "$tmp/nc.ompi" "$2" 5 $shape ;;
	esac 2>/dev/null | grep MiB
}

configs="host host-whole tagged tagged-whole"
[ $have_ompi = 1 ] && configs+=" ob1"
{
	echo "non-contiguous message (vector of 3 doubles every 5$([ "$shape" = contig ] &&
		echo ", sent as contiguous doubles")), 2 ranks on $where, $rounds rounds"
	echo "config        MiB  MB/s   rise KiB (max over ranks)"
	for r in $(seq "$rounds"); do
		for mib in 1 16 64; do
			for c in $configs; do
				printf "%-12s %s\n" "$c" "$(run "$c" "$mib" | awk '{print $1, $3, $9}')"
			done
		done
	done
} | tee "$here/results/$result"
