#!/bin/bash
# Another MPI on our provider: the MPI test programs, built with Open MPI's
# mpicc, run under Open MPI's CM PML with its OFI MTL restricted to matchbox
# (Open MPI matches nothing itself; every MPI message is a matchbox tagged
# message). Each run must pass its own checks and Open MPI must report that
# it picked matchbox. usage: openmpi_cm.sh SRC_DIR PROVIDER_DIR
set -u
src=$1 prov=$2
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
	{ echo "no Open MPI"; exit 77; }
tmp=$(mktemp -d /tmp/mbx-ompicm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0
progs="t_p2p t_coll t_comm t_dtype t_errors"
for p in $progs; do
	mpicc.openmpi -O1 -I"$src" -o "$tmp/$p" "$src/$p.c" ||
		{ echo "FAIL: $p does not build with mpicc.openmpi"; exit 1; }
done
for p in $progs; do
	for np in 2 4; do
		out=$(timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n $np \
			--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include matchbox \
			--mca mtl_base_verbose 1 --mca opal_common_ofi_verbose 1 -x FI_PROVIDER_PATH="$prov" "$tmp/$p" 2>&1)
		st=$?
		picked=$(echo "$out" | grep -c 'mtl:ofi:prov: matchbox')
		summary=$(echo "$out" | grep -E "^$p: $np ranks, [0-9]+ checks, 0 failed")
		if [ $st = 0 ] && [ "$picked" = $np ] && [ -n "$summary" ]; then
			echo "ok   $summary (Open MPI CM over matchbox)"
		else
			echo "FAIL $p at $np ranks: status $st, matchbox picked by $picked of $np ranks"
			echo "$out" | tail -n 8 | sed 's/^/    /'
			rc=1
		fi
	done
done
exit $rc
