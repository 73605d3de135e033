#!/bin/bash
# Runs one MPI test program under a launcher at each of several job sizes.
# usage: run.sh MPIRUN PROGRAM "NP..." [VAR=VALUE...]
# The environment assignments go to the ranks (mpirun -x). Afterwards no
# rank may be left running and no shared-memory segment of ours left behind.
set -u
mpirun=$1 prog=$2 nps=$3
shift 3
xs=()
for kv in "$@"; do
	export "${kv?}"
	xs+=(-x "${kv%%=*}")
done
name=$(basename "$prog")
rc=0
for np in $nps; do
	out=$("$mpirun" -n "$np" --timeout 120 "${xs[@]}" "$prog" 2>&1)
	st=$?
	echo "$out" | tail -n 20
	if [ $st -ne 0 ]; then
		echo "FAIL: $name at $np ranks exited $st"
		rc=1
	fi
	# The library names the first provider failure on stderr; a program that
	# meets no failure must not make it speak (a probe finding nothing once did).
	if grep -q "an operation failed in the provider" <<<"$out"; then
		echo "FAIL: $name at $np ranks: the library reported a provider failure"
		rc=1
	fi
	# By full path, so other jobs running the same program elsewhere do not count.
	if pgrep -f "^$prog( |$)" >/dev/null; then
		echo "FAIL: $name left processes behind at $np ranks"
		pkill -9 -f "^$prog( |$)"
		rc=1
	fi
	# mpirun names the segments a rank that finalized and exited 0 left
	# behind (counting /dev/shm here would count the jobs meson runs beside
	# this one).
	if grep -q "shared-memory segments\? behind" <<<"$out"; then
		echo "FAIL: $name left shared-memory segments behind at $np ranks"
		rc=1
	fi
done
exit $rc
