#!/bin/bash
# Receiving 8-byte messages that are already there (bench/mpi/mbench.c
# late): the receiver's time per MPI_Recv, ours (tagged and host engines
# over matchbox) against Open MPI 4.1's OB1 (vader), interleaved in each
# round on this noisy machine; the ratio is ours over Open MPI in the same
# round. Writes bench/results/late.txt.
# usage: bench/late.sh [BUILD_DIR] [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
tmp=$(mktemp -d /tmp/late.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$b/mpi/mpicc" -O2 "$here/mpi/mbench.c" -o "$tmp/ours" || exit 1
mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/ompi" || exit 1
one() { # config -> ns per message
	case $1 in
	tagged | host)
		MATCHBOX_MPI_ENGINE=$1 "$b/mpi/mpirun" -n 2 --timeout 120 -x MATCHBOX_MPI_ENGINE \
			"$tmp/ours" late ;;
	ob1)
		timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 \
			--mca pml ob1 "$tmp/ompi" late ;;
	esac 2>/dev/null | awk '/^late/ {print $3}'
}
{
	printf "%-6s %10s %10s %10s %12s %12s\n" round tagged host ob1 tagged/ob1 host/ob1
	for r in $(seq "$rounds"); do
		t=$(one tagged) h=$(one host) o=$(one ob1)
		printf "%-6s %10s %10s %10s %12s %12s\n" "$r" "$t" "$h" "$o" \
			"$(awk -v a="$t" -v b="$o" 'BEGIN{ if (b > 0) printf "%.2f", a / b }')" \
			"$(awk -v a="$h" -v b="$o" 'BEGIN{ if (b > 0) printf "%.2f", a / b }')"
	done
	echo "(ns per message on the receiver; lower is better)"
} | tee "$here/results/late.txt"
