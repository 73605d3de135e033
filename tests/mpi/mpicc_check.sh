#!/bin/bash
# mpicc's contract: -show prints the real command; -c, -o and other flags
# pass through; the program runs under mpirun and as a singleton with no
# LD_LIBRARY_PATH or FI_PROVIDER_PATH, from the build tree and after
# `meson install` into a fresh prefix (and there, mpif90 with `use mpi_f08`).
# usage: mpicc_check.sh SOURCE_ROOT MPICC MPIRUN
set -u
src=$1 mpicc=$2 mpirun=$3
tmp=$(mktemp -d /tmp/mpicc_check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
cat >"$tmp/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	int r, n, one = 1, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("hello %d of %d sum %d flag %d\n", r, n, sum, MBX_FLAG);
	MPI_Finalize();
	return sum == n ? 0 : 1;
}
C
run_clean() { env -u LD_LIBRARY_PATH -u FI_PROVIDER_PATH "$@"; }

check_wrapper() { # label, mpicc, mpirun
	local label=$1 cc=$2 run=$3 out
	out=$("$cc" -show -DMBX_FLAG=3 "$tmp/hello.c" -o "$tmp/hello")
	case "$out" in
	*"-DMBX_FLAG=3"*"-o $tmp/hello"*-lmpi*) ok "$label: -show prints the command" ;;
	*) bad "$label: -show printed: $out" ;;
	esac
	[ ! -e "$tmp/hello" ] && ok "$label: -show runs nothing" || bad "$label: -show compiled"
	if "$cc" -DMBX_FLAG=3 -O2 -c "$tmp/hello.c" -o "$tmp/hello.o" && [ -f "$tmp/hello.o" ] &&
	   "$cc" "$tmp/hello.o" -o "$tmp/hello"; then
		ok "$label: -c then link"
	else
		bad "$label: -c then link"
	fi
	out=$(run_clean "$run" -n 2 "$tmp/hello" 2>&1)
	if [ "$(echo "$out" | grep -c 'sum 2 flag 3')" = 2 ]; then
		ok "$label: runs under mpirun with a clean environment"
	else
		bad "$label: mpirun run: $out"
	fi
	out=$(run_clean "$tmp/hello" 2>&1)
	[ "$out" = "hello 0 of 1 sum 1 flag 3" ] && ok "$label: runs as a singleton" || bad "$label: singleton: $out"
	rm -f "$tmp/hello" "$tmp/hello.o"
}

check_wrapper "build tree" "$mpicc" "$mpirun"

# The benchmark program the comparison scripts run (bench/mpi/mbench.c)
# builds warning-free with the wrapper, and its sizes and CPU-state fields
# are what bench/rounds.sh parses: a list, a sweep (0, powers of 4, the
# top), and "fast V N mid V N slow V N" with at most 16 slices in all.
if "$mpicc" -O2 -Wall -Wextra -Werror "$src/bench/mpi/mbench.c" -o "$tmp/mbench" 2>"$tmp/mbench.log"; then
	ok "bench/mpi/mbench.c builds with -Wall -Wextra -Werror"
	out=$("$mpirun" -n 2 "$tmp/mbench" lat 0:64 2 2>&1; "$mpirun" -n 2 "$tmp/mbench" rate 8,4096 2 2>&1)
	sizes=$(echo "$out" | awk '{printf "%s%s:%s", (NR > 1 ? " " : ""), $1, $2}')
	bad_lines=$(echo "$out" | awk '$5 != "fast" || $8 != "mid" || $11 != "slow" || NF != 13 ||
		$7 + $10 + $13 > 16 || ($7 > 0) != ($6 != "nan") || ($10 > 0) != ($9 != "nan") ||
		($13 > 0) != ($12 != "nan") || $3 + 0 <= 0' | wc -l)
	if [ "$sizes" = "lat:0 lat:1 lat:4 lat:16 lat:64 rate:8 rate:4096" ] && [ "$bad_lines" = 0 ]; then
		ok "mbench: a sweep, a list, and the CPU-state fields"
	else
		bad "mbench output: $out"
	fi
else
	cat "$tmp/mbench.log"
	bad "bench/mpi/mbench.c builds with -Wall -Wextra -Werror"
fi

# Installed: a separate build into a fresh prefix.
if meson setup --prefix="$tmp/inst" -Dtests=false "$tmp/b" "$src" >"$tmp/setup.log" 2>&1 &&
   ninja -C "$tmp/b" install >"$tmp/install.log" 2>&1; then
	ok "meson install into $tmp/inst"
	check_wrapper "installed" "$tmp/inst/bin/mpicc" "$tmp/inst/bin/mpirun"
	lib=$(ldd "$tmp/inst/bin/mpirun" >/dev/null; "$tmp/inst/bin/mpicc" "$tmp/hello.c" -DMBX_FLAG=0 -o "$tmp/h2" && env -u LD_LIBRARY_PATH ldd "$tmp/h2" | awk '/libmpi/ {print $3}')
	case "$lib" in
	"$tmp/inst/"*) ok "installed program uses the installed libmpi" ;;
	*) bad "installed program's libmpi: $lib" ;;
	esac
	# Fortran 2008: the installed module and libmpi_f08.
	if [ -x "$tmp/inst/bin/mpif90" ]; then
		cat >"$tmp/hello08.f90" <<'F'
program hello08
  use mpi_f08
  implicit none
  integer :: r, n, s
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  call MPI_Allreduce(1, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  print '(a,i0,a,i0,a,i0)', 'f08 ', r, ' of ', n, ' sum ', s
  call MPI_Finalize()
end program hello08
F
		out=$("$tmp/inst/bin/mpif90" "$tmp/hello08.f90" -o "$tmp/h08" 2>&1 && run_clean "$tmp/h08" 2>&1)
		[ "$out" = "f08 0 of 1 sum 1" ] && ok "installed mpif90: use mpi_f08" ||
			bad "installed mpif90, use mpi_f08: $out"
	fi
else
	tail -20 "$tmp/setup.log" "$tmp/install.log"
	bad "meson install"
fi
echo "mpicc: $fails failed"
[ $fails = 0 ]
