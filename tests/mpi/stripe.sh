#!/bin/bash
# Striped rendezvous reads in the host engine, on one node.
#   providers: the node's provider (shm) and the other (tcp;ofi_rxm) both
#     reach the two ranks, with every message from 64 KiB read over both;
#     the ranks' counts (MATCHBOX_MPI_VERBOSE=2) must show bytes read over
#     tcp;ofi_rxm, which on one node carries nothing but striped reads.
#   nics: tcp;ofi_rxm opened twice on the loopback (two rails on one NIC, as
#     two NICs would be), with MATCHBOX_MPI_ENGINE left at auto, which must
#     take the host engine for it; each rank must read over both rails, and
#     the second must carry no frame.
# The program checks its data in both.
# usage: stripe.sh MPIRUN PROGRAM [providers|nics]
set -u
mpirun=$1 prog=$2 mode=${3:-providers}
if [ "$mode" = nics ]; then
	export "MATCHBOX_MPI_HOST_PROVIDERS=tcp;ofi_rxm" MATCHBOX_MPI_HOST_NET_DOMAINS=lo,lo
	unset MATCHBOX_MPI_ENGINE
else
	export MATCHBOX_MPI_ENGINE=host "MATCHBOX_MPI_HOST_PROVIDERS=shm,tcp;ofi_rxm" \
		MATCHBOX_MPI_HOST_NET_DOMAINS=auto
fi
export MATCHBOX_MPI_HOST_STRIPE=65536 MATCHBOX_MPI_VERBOSE=2
out=$("$mpirun" -n 2 --timeout 120 -x MATCHBOX_MPI_ENGINE -x MATCHBOX_MPI_HOST_PROVIDERS \
	-x MATCHBOX_MPI_HOST_NET_DOMAINS -x MATCHBOX_MPI_HOST_STRIPE -x MATCHBOX_MPI_VERBOSE \
	"$prog" 2>&1)
st=$?
echo "$out" | grep -v '^libfabric:' | tail -n 12
[ $st = 0 ] || { echo "FAIL: exited $st"; exit 1; }
if [ "$mode" = nics ]; then
	grep -q "host engine over tcp;ofi_rxm (auto: MATCHBOX_MPI_HOST_NET_DOMAINS" <<<"$out" ||
		{ echo "FAIL: auto did not take the host engine for two NICs"; exit 1; }
	n=$(grep -c "host engine: tcp;ofi_rxm on lo: [1-9][0-9]* frames sent, .* [1-9][0-9]* bytes read" <<<"$out")
	[ "$n" = 2 ] || { echo "FAIL: $n ranks of 2 sent frames and read over the first rail"; exit 1; }
	n=$(grep -c "host engine: tcp;ofi_rxm on lo: 0 frames sent, 0 received, [1-9][0-9]* bytes read" <<<"$out")
	[ "$n" = 2 ] || { echo "FAIL: $n ranks of 2 read over the second rail alone"; exit 1; }
	echo "striped reads over two rails on lo"
	exit 0
fi
for p in 'shm' 'tcp;ofi_rxm'; do
	grep -q "host engine: $p: .* [1-9][0-9]* bytes read" <<<"$out" ||
		{ echo "FAIL: no rank read a byte over $p"; exit 1; }
done
echo "striped reads over shm and tcp;ofi_rxm"
