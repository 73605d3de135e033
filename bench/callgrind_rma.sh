#!/bin/bash
# Instructions per 8-byte one-sided operation and its MPI_Win_flush on the
# origin (bench/mpi/cgrma.c under callgrind), for our library under each
# engine and for Open MPI 4.1 (osc/rdma over vader), with the ratio ours /
# Open MPI. The window comes from MPI_Win_allocate on one node, as in
# osu_put_latency and osu_get_latency. Writes bench/results/callgrind_rma.txt.
# usage: bench/callgrind_rma.sh [BUILD_DIR] [N]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
n=${2:-1000}
tmp=$(mktemp -d /tmp/cgrma.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/results"
. "$here/progs.sh"
progs cgrma.c cg -O2 -g

count() { # config op -> instructions per operation on rank 0, or "-"
	local out=$tmp/$1.$2.out vg
	vg="valgrind -q --tool=callgrind --collect-atstart=no --callgrind-out-file=$tmp/$1.$2.%q{PMIX_RANK}"
	case $1 in
	tagged | host)
		MATCHBOX_MPI_ENGINE=$1 "$b/mpi/mpirun" -n 2 --timeout 300 -x MATCHBOX_MPI_ENGINE \
			$vg "$tmp/cg.ours" "$n" "$2" ;;
	ompi)
		timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 \
			$vg "$tmp/cg.ompi" "$n" "$2" ;;
	esac >/dev/null 2>&1
	out=$tmp/$1.$2.0
	if [ -s "$out" ]; then
		awk -v n="$n" '/^summary:/ { printf "%d", $2 / n }' "$out"
	else
		echo -
	fi
}

{
	printf "instructions per 8-byte operation + MPI_Win_flush, origin side (N=%d)\n" "$n"
	printf "%-4s %8s %8s %8s %12s\n" op tagged host ompi tagged/ompi
	for op in put get acc fop; do
		t=$(count tagged $op)
		h=$(count host $op)
		o=-
		[ $have_ompi = 1 ] && o=$(count ompi $op)
		r=-
		[ "$t" != - ] && [ "$o" != - ] && [ "$o" -gt 0 ] && r=$(awk -v a="$t" -v b="$o" 'BEGIN { printf "%.2f", a / b }')
		printf "%-4s %8s %8s %8s %12s\n" "$op" "$t" "$h" "$o" "$r"
	done
} | tee "$here/results/callgrind_rma.txt"
