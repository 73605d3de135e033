#!/bin/bash
# The usual benchmark suites, built unmodified with our wrappers, Debian's
# Open MPI and MPICH side by side, and run in one session: the OSU
# micro-benchmarks (7.x, or 5.x whose point-to-point and one-sided
# programs take no size or iteration options and print every size), the
# Intel MPI Benchmarks and the NAS Parallel
# Benchmarks (MPI, Fortran and C). Their sources are not in this tree (CI
# cannot fetch): give the directories of checkouts made elsewhere
# (github.com/intel/mpi-benchmarks, an OSU 7.x tarball or mirror, NPB3.4-MPI).
# Each suite is built once per MPI under a temporary directory; every
# figure is the best of REPEATS interleaved rounds (bench/rounds.sh). The
# table gives ours against the best peer (speed-up: above 1.0 ours is
# faster) and bench/results/suites.csv the raw figures. The rows include
# issue 19's targets: osu_put/get_latency at 8 B, osu_put_bw at 1 MiB and
# osu_iallreduce's overlap at 64 KiB on 4 ranks.
# SUITES_ERRLOG=FILE keeps the runs' stderr.
# usage: bench/suites.sh [--osu DIR] [--imb DIR] [--npb DIR] [--class S|W|A] [BUILD_DIR] [REPEATS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
osu="" imb="" npb="" class=W
while [ $# -gt 0 ]; do
	case $1 in
	--osu) osu=$(cd "$2" && pwd); shift 2 ;;
	--imb) imb=$(cd "$2" && pwd); shift 2 ;;
	--npb) npb=$(cd "$2" && pwd); shift 2 ;;
	--class) class=$2; shift 2 ;;
	*) break ;;
	esac
done
b=$(cd "${1:-build}" && pwd)
reps=${2:-3}
[ -n "$osu$imb$npb" ] || { sed -n "2,17p" "$0" | sed 's/^# \{0,1\}//'; exit 2; }
tmp=$(mktemp -d /tmp/suites.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$here/results
mkdir -p "$out"

configs=(ours ompi mpich)
declare -A CC=([ours]=$b/mpi/mpicc [ompi]=mpicc.openmpi [mpich]=mpicc.mpich)
# Open MPI's C++ bindings header does not build under IMB's -Werror.
declare -A CXX=([ours]=$b/mpi/mpicxx [ompi]="mpicxx.openmpi -DOMPI_SKIP_MPICXX" [mpich]=mpicxx.mpich)
declare -A FC=([ours]=$b/mpi/mpif90 [ompi]=mpif90.openmpi [mpich]=mpif90.mpich)

# Builds one suite for one MPI; a failure is reported and that suite's
# figures for that MPI come out as nan.
build() { # suite config
	local s=$1 c=$2 d=$tmp/$2/$1
	mkdir -p "$d"
	case $s in
	# cp -a: a copy newer than its configure.ac would make automake run.
	osu) cp -a "$osu/." "$d/src" && (cd "$d/src" && ./configure -q CC="${CC[$c]}" \
		CXX="${CXX[$c]}" --prefix="$d/inst" && make -s -j2 && make -s install) ;;
	imb) cp -r "$imb/." "$d/src" && make -s -C "$d/src" CC="${CC[$c]}" CXX="${CXX[$c]}" \
		IMB-MPI1 IMB-NBC IMB-RMA ;;
	npb) cp -r "$npb/." "$d/src" && mkdir -p "$d/src/bin" &&
		printf 'MPIFC = %s\nFLINK = $(MPIFC)\nFFLAGS = -O2 %s\nFLINKFLAGS = $(FFLAGS)\nMPICC = %s\nCLINK = $(MPICC)\nCFLAGS = -O2\nCLINKFLAGS = $(CFLAGS)\nCC = gcc\nBINDIR = ../bin\nRAND = randi8\n' \
			"${FC[$c]}" "-fallow-argument-mismatch" "${CC[$c]}" >"$d/src/config/make.def" &&
		for k in cg ep ft is lu mg; do make -s -C "$d/src" "$k" CLASS="$class" || return 1; done ;;
	esac >"$d/build.log" 2>&1 || echo "suites: building $s with $c failed (see $d/build.log)" >&2
}

run() { # config np program args...
	local c=$1 np=$2
	shift 2
	case $c in
	ours) "$b/mpi/mpirun" -n "$np" --timeout 120 "$@" ;;
	ompi) timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" "$@" ;;
	mpich) timeout 120 mpiexec.mpich -n "$np" "$@" ;;
	esac 2>>"${SUITES_ERRLOG:-/dev/null}"
}

# TEST names suite:program[:column]; BYTES is the message size (NPB: 0).
launch() { # config np test bytes
	local c=$1 np=$2 t=$3 by=$4 s p
	s=${t%%:*} p=${t#*:} p=${p%%:*}
	case $s in
	# Non-blocking collectives call MPI_Test 8 times while they compute
	# (-t 8): without it no library without a progress thread overlaps.
	osu) local prog
		prog=$(find "$tmp/$c/osu/inst" -name "$p" -type f | head -1)
		if [ "$osu_v" -lt 7 ] && [ "${prog#*/collective/}" = "$prog" ]; then
			run "$c" "$np" "$prog"
		else
			run "$c" "$np" "$prog" -m "$by:$by" -i "$(iters "$np")" -x 100 \
				$([ "${p#osu_i}" != "$p" ] && echo -t 8)
		fi ;;
	imb) run "$c" "$np" "$tmp/$c/imb/src/IMB-$(imb_suite "$p")" "$p" -msglog "$(msglog "$by")" \
		-npmin "$np" -iter "$(iters "$np")" -time 10 ;;
	npb) run "$c" "$np" "$tmp/$c/npb/src/bin/$p.$class.x" ;;
	esac
}

# More ranks than cores: peers that never yield (MPICH here) take
# milliseconds a collective, so those runs are kept short.
iters() { if [ "$1" -gt "$(nproc)" ]; then echo 200; else echo 2000; fi; }
imb_suite() { case $1 in I*) echo NBC ;; Unidir* | Bidir* | *_put | *_get | *Accumulate | Fetch* | Compare* | Get_* | Put_* | Truly* | One_*) echo RMA ;; *) echo MPI1 ;; esac; }
msglog() { local n=0 v=$1; while [ "$v" -gt 1 ]; do v=$((v / 2)); n=$((n + 1)); done; echo "$n:$n"; }

. "$here/rounds.sh"

# OSU: "size value..." (column 2, or the one named); IMB: the row of the
# size (t_avg for collectives, t or Mbytes/sec for PingPong, overall time
# for NBC); NPB: the total time.
extract() { # test bytes
	local t=$1 by=$2 col=""
	[ "${t#*:*:}" != "$t" ] && col=${t##*:}
	case $t in
	# osu_barrier prints its latency alone on the line.
	osu:osu_barrier) awk '/^ *[0-9.]+ *$/ {print $1}' ;;
	osu:*) awk -v b="$by" -v c="${col:-2}" '$1 == b {print $c}' ;;
	imb:*) awk -v b="$by" -v c="${col:-5}" '$1 == b && NF >= c {print $c; exit}' ;;
	npb:*) awk '/Time in seconds/ {print $NF}' ;;
	esac | sort -g | head -1
}

# The OSU major version, from its configure script (7 if not found).
osu_v=7
if [ -n "$osu" ]; then
	osu_v=$(sed -n "s/^PACKAGE_VERSION='\([0-9]*\)\..*/\1/p" "$osu/configure" | head -1)
	osu_v=${osu_v:-7}
fi

for s in osu imb npb; do
	[ -n "${!s}" ] || continue
	for c in "${configs[@]}"; do build "$s" "$c" & done
	wait
done

printf "%-28s %8s %3s %10s %10s %10s %7s  %s\n" test bytes np ours ompi mpich speedup unit
echo "test,bytes,ranks,unit,higher_is_better,ours,ompi,mpich,speedup_vs_best_peer" >"$out/suites.csv"
row() { # test bytes np higher_is_better unit
	local t=$1 by=$2 np=$3 hib=$4 unit=$5 best sp
	best_of_rounds "$t" "$by" "$np" "$hib"
	best=${vals[1]}
	if [ "$best" = nan ] || { [ "${vals[2]}" != nan ] && better "${vals[2]}" "$best" "$hib"; }; then
		best=${vals[2]}
	fi
	sp=$(ratio "${vals[0]}" "$best" "$hib")
	printf "%-28s %8s %3s %10s %10s %10s %7s  %s\n" "$t" "$by" "$np" "${vals[@]}" "$sp" "$unit"
	echo "$t,$by,$np,$unit,$hib,${vals[0]},${vals[1]},${vals[2]},$sp" >>"$out/suites.csv"
}

if [ -n "$osu" ]; then
	row osu:osu_latency 8 2 0 us
	row osu:osu_latency 65536 2 0 us
	row osu:osu_bw 8 2 1 MB/s
	row osu:osu_mbw_mr:3 8 2 1 msg/s
	row osu:osu_bw 1048576 2 1 MB/s
	row osu:osu_put_latency 8 2 0 us
	row osu:osu_get_latency 8 2 0 us
	row osu:osu_put_bw 1048576 2 1 MB/s
	# Issue 17's small collectives, at 2 ranks and 4 (oversubscribed).
	row osu:osu_allreduce 8 2 0 us
	row osu:osu_allreduce 8 4 0 us
	row osu:osu_bcast 8 4 0 us
	row osu:osu_barrier 0 4 0 us
	row osu:osu_alltoall 64 4 0 us
	row osu:osu_reduce 8 4 0 us
	row osu:osu_allgather 8 4 0 us
	row osu:osu_gather 8 4 0 us
	row osu:osu_scatter 8 4 0 us
	row osu:osu_allreduce 4096 4 0 us
	row osu:osu_bcast 4096 4 0 us
	row osu:osu_allreduce 65536 4 0 us
	# osu_iallreduce prints: size, overall, compute, pure comm, overlap (%).
	row osu:osu_iallreduce:5 65536 2 1 %overlap
	row osu:osu_iallreduce:5 65536 4 1 %overlap
	row osu:osu_iallreduce:2 65536 4 0 us
	row osu:osu_bcast 65536 4 0 us
	row osu:osu_alltoall 4096 4 0 us
fi
if [ -n "$imb" ]; then
	row imb:PingPong:3 8 2 0 us
	row imb:PingPong:4 4194304 2 1 MB/s
	row imb:Allreduce 65536 4 0 us
	row imb:Alltoall 4096 4 0 us
	row imb:Ibcast:3 65536 4 0 us
fi
if [ -n "$npb" ]; then
	for k in cg ep ft is lu mg; do row "npb:$k" 0 4 0 s; done
fi
echo "speedup: ours against the better of Open MPI and MPICH (above 1.0: ours faster)"
echo "wrote $out/suites.csv"
