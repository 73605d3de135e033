#!/bin/bash
# Instructions to pack and unpack 1 MiB of a strided field (a vector of
# blocks of B doubles, two doubles apart; bench/mpi/cgpack.c under
# valgrind --tool=callgrind), ours against Open MPI 4.1's convertor, for
# blocks of 1, 3 and 16 doubles. Repeatable run to run, unlike times here.
# Writes bench/results/callgrind_pack.txt.
# usage: bench/callgrind_pack.sh [BUILD_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d /tmp/cgpack.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/results"
. "$here/progs.sh"
progs cgpack.c cg -O2
vg=(valgrind -q --tool=callgrind --collect-atstart=no)

count() { # callgrind output -> its total
	callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}

{
	echo "instructions to pack and unpack 1 MiB of a vector of blocks of B doubles"
	printf "%-10s %12s %12s %8s\n" B ours open-mpi ratio
	for bl in 1 3 16; do
		"$b/mpi/mpirun" -n 1 "${vg[@]}" --callgrind-out-file="$tmp/ours.$bl" \
			"$tmp/cg.ours" "$bl" >/dev/null 2>&1
		ours=$(count "$tmp/ours.$bl")
		theirs=-
		if [ $have_ompi = 1 ]; then
			timeout 300 mpirun.openmpi --allow-run-as-root -n 1 "${vg[@]}" \
				--callgrind-out-file="$tmp/ompi.$bl" "$tmp/cg.ompi" "$bl" >/dev/null 2>&1
			theirs=$(count "$tmp/ompi.$bl")
		fi
		ratio=$(awk -v a="${ours:-0}" -v b="$theirs" 'BEGIN {
			if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
		printf "%-10s %12s %12s %8s\n" "$bl" "${ours:-failed}" "$theirs" "$ratio"
	done
} | tee "$here/results/callgrind_pack.txt"
