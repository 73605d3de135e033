#!/bin/bash
# Our MPI programs under Open MPI's mpirun (a PMIx server too): they must run
# unchanged, at 2 and 4 ranks (4 oversubscribes this machine).
set -u
ompi=$1
shift
rc=0
for prog in "$@"; do
	for np in 2 4; do
		out=$(timeout 120 "$ompi" --allow-run-as-root --oversubscribe -n $np "$prog" 2>&1)
		st=$?
		echo "$out" | tail -n 3
		[ $st -eq 0 ] || { echo "FAIL: $(basename "$prog") at $np ranks under $(basename "$ompi"): $st"; rc=1; }
	done
done
exit $rc
