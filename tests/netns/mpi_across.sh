#!/bin/bash
# The MPI test programs across hosts: 2 and 4 network-namespace hosts
# (cluster.sh) with 2 ranks each, launched by our mpirun from host 0 (its
# PMIx server listens on eth0), over tcp;ofi_rxm. Until matchbox has its net
# wire (issue 4) this is the path across hosts; the test bed, the launch and
# the address exchange are the same ones matchbox will use.
# usage: mpi_across.sh MPIRUN PROGRAM...   (needs root; exits 77 to skip)
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] && command -v ip >/dev/null || { echo "needs root and ip(8)"; exit 77; }
mpirun=$1
shift
rc=0
for hosts in 2 4; do
	np=$((2 * hosts))
	for prog in "$@"; do
		out=$("$here/cluster.sh" run "$hosts" ip netns exec mbx-h0 "$mpirun" -n "$np" --ppn 2 \
			--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x FI_TCP_IFACE=eth0 \
			-x "MATCHBOX_MPI_PROVIDER=tcp;ofi_rxm" --timeout 120 "$prog" 2>&1)
		st=$?
		echo "$out" | tail -n 3
		if [ $st -ne 0 ]; then
			echo "FAIL: $(basename "$prog") on $hosts hosts: status $st"
			rc=1
		else
			echo "ok   $(basename "$prog") on $hosts hosts x 2 ranks"
		fi
	done
done
if ip netns list | grep -q '^mbx-'; then
	echo "FAIL: namespaces left behind"
	rc=1
fi
exit $rc
