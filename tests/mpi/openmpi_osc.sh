#!/bin/bash
# MPI one-sided communication from another MPI over our provider: t_osc,
# built with Open MPI's mpicc, run under mpirun.openmpi with osc/rdma over
# btl/ofi restricted to matchbox (fi_write, fi_read and fi_atomic of
# matchbox carry every MPI_Put, MPI_Get and accumulate) and the two-sided
# part over the CM PML's OFI MTL on matchbox. Each run must pass its own
# checks. osc/rdma has no fallback: without a btl that reaches every peer
# (here only btl/ofi on matchbox; with btl self alone the window cannot be
# created) MPI_Win_allocate fails, so a pass means matchbox carried it.
# usage: openmpi_osc.sh SRC_DIR PROVIDER_DIR [mpirun.openmpi args...]
set -u
src=$1 prov=$2
shift 2
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null ||
	{ echo "no Open MPI"; exit 77; }
tmp=$(mktemp -d /tmp/mbx-ompiosc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# Without MPI_Compare_and_swap: see T_OSC_SKIP_CAS in t_osc.c.
mpicc.openmpi -O1 -DT_OSC_SKIP_CAS -I"$src" -o "$tmp/t_osc" "$src/t_osc.c" ||
	{ echo "FAIL: t_osc does not build with mpicc.openmpi"; exit 1; }
rc=0
for np in 2 4; do
	out=$(timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n $np "$@" \
		--mca osc rdma --mca btl self,ofi --mca btl_ofi_provider_include matchbox \
		--mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include matchbox -x FI_PROVIDER_PATH="$prov" "$tmp/t_osc" 2>&1)
	st=$?
	summary=$(echo "$out" | grep -E "^t_osc: $np ranks, [0-9]+ checks, 0 failed")
	if [ $st = 0 ] && [ -n "$summary" ]; then
		echo "ok   $summary (Open MPI osc/rdma over btl/ofi on matchbox)"
	else
		echo "FAIL t_osc at $np ranks: status $st"
		echo "$out" | grep -v "^\[vm" | tail -n 12 | sed 's/^/    /'
		rc=1
	fi
done
exit $rc
