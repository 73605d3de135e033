#!/bin/bash
# Striped rendezvous reads in the host engine: two ranks of one node, which
# the node's provider (shm) and the other (tcp;ofi_rxm) both reach, with
# every message from 64 KiB read over both. The program checks its data;
# here the ranks' counts (MATCHBOX_MPI_VERBOSE=2) must show bytes read over
# tcp;ofi_rxm, which on one node carries nothing but striped reads.
# usage: stripe.sh MPIRUN PROGRAM
set -u
mpirun=$1 prog=$2
export MATCHBOX_MPI_ENGINE=host "MATCHBOX_MPI_HOST_PROVIDERS=shm,tcp;ofi_rxm" \
	MATCHBOX_MPI_HOST_STRIPE=65536 MATCHBOX_MPI_VERBOSE=2
out=$("$mpirun" -n 2 --timeout 120 -x MATCHBOX_MPI_ENGINE -x MATCHBOX_MPI_HOST_PROVIDERS \
	-x MATCHBOX_MPI_HOST_STRIPE -x MATCHBOX_MPI_VERBOSE "$prog" 2>&1)
st=$?
echo "$out" | grep -v '^libfabric:' | tail -n 12
[ $st = 0 ] || { echo "FAIL: exited $st"; exit 1; }
for p in 'shm' 'tcp;ofi_rxm'; do
	grep -q "host engine: $p: .* [1-9][0-9]* bytes read" <<<"$out" ||
		{ echo "FAIL: no rank read a byte over $p"; exit 1; }
done
echo "striped reads over shm and tcp;ofi_rxm"
