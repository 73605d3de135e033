#!/bin/bash
# mpirun --params lists the MPI layer's variables from the table the library
# is meant to read them through (mpi/lib/mbmpi_params.h). Every
# MATCHBOX_MPI_* name the library's or mpirun's source reads must be in that
# list, so that a variable added to the code and not to the table fails here
# rather than stays hidden from users.
# usage: params_check.sh MPIRUN SOURCE_DIR
set -u
mpirun=$1 src=$2
listed=$("$mpirun" --params | awk 'NR > 1 {print $1}') || { echo "FAIL: mpirun --params"; exit 1; }
[ -n "$listed" ] || { echo "FAIL: mpirun --params listed nothing"; exit 1; }
read_=$(grep -rhoE '"MATCHBOX_MPI_[A-Z0-9_]+"' "$src/mpi/lib" "$src/mpi/mpirun" --include=*.c |
	tr -d '"' | sort -u)
missing=0
for v in $read_; do
	grep -qx "$v" <<<"$listed" || { echo "FAIL: $v is read but not in mpirun --params"; missing=1; }
done
[ $missing = 0 ] || exit 1
echo "all $(wc -w <<<"$read_") variables the code reads are listed"
