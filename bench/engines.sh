#!/bin/bash
# The two point-to-point engines side by side, in one session on one host:
# our tagged engine over matchbox (the provider matches), our host engine
# over matchbox and over shm for the ranks of a node with tcp;ofi_rxm for
# the others (host-mix: libmpi matches, the providers move bytes),
# and their Open MPI counterparts on the same machine: CM with mtl/ofi over
# matchbox (the provider matches) and OB1 over vader (Open MPI matches).
# Every figure is the best of REPEATS rounds, each round running every
# configuration once, so drift on this shared machine hits them alike.
# Prints a table with three ratios: tagged over CM, host over OB1 (the
# counterpart pairs the issue compares), and auto (MATCHBOX_MPI_ENGINE=auto)
# over the better of our two engines over matchbox, and writes bench/results/engines.csv. Rows: latency,
# bandwidth and message rate, small and large allreduce, and two
# application-shaped loops (mbench halo: a 2-D halo exchange with a stencil
# sweep; mbench cg: two dot products and two 8-byte allreduces a step).
# With ENGINES_HOSTS=2 (root) the same rows run across two network-namespace
# hosts (tests/netns/cluster.sh): 2-rank rows with one rank a host, 4-rank
# rows with two (host-mix then uses both of its providers), Open MPI's OB1
# uses its tcp BTL between the hosts (and vader within one), and the table
# goes to engines_across.csv.
# With "sweep" as the third argument, the curves instead: latency 0 B to
# 4 MiB, bandwidth 1 B to 4 MiB and message rate 1 B to 8 KiB (a window
# of 64 into a buffer each), powers of 4, each curve one job per
# configuration (mbench's sweep, ENGINES_MS milliseconds a size, 30 by
# default), split by CPU placement (bench/mpi/mbench.c). Every figure is
# the median of REPEATS rounds (5 by default) in each placement, and each
# ratio is paired within rounds (bench/rounds.sh, state_table). Writes
# engines_sweep.csv (engines_sweep_across.csv), the raw slices beside it
# and, with gnuplot (Debian's gnuplot-nox), engines_sweep.png
# (_across.png): the three curves of the five configurations.
# usage: [ENGINES_HOSTS=2] bench/engines.sh [BUILD_DIR] [REPEATS] [rows|sweep]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
mode=${3:-rows}
reps=${2:-$([ "$mode" = sweep ] && echo 5 || echo 3)}
across=${ENGINES_HOSTS:-}
tmp=$(mktemp -d /tmp/engines.XXXXXX)
cluster=$here/../tests/netns/cluster.sh
if [ -n "$across" ]; then
	[ "$across" = 2 ] || { echo "ENGINES_HOSTS: only 2"; exit 1; }
	[ "$(id -u)" = 0 ] || { echo "ENGINES_HOSTS needs root (network namespaces)"; exit 1; }
	trap '"$cluster" down; rm -rf "$tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi
out=$here/results
mkdir -p "$out"
csv=$out/engines${across:+_across}.csv

command -v mpicc.openmpi >/dev/null || { echo "missing mpicc.openmpi (scripts/install-deps)"; exit 1; }
"$b/mpi/mpicc" -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ours" || exit 1
mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ompi" || exit 1

configs=(tagged host host-mix ompi-cm ompi-ob1 auto)
# Across the hosts: every run starts on host 0. Our mpirun puts rank r on
# host r / ppn; Open MPI starts its daemon on host 1 through nsrsh. Each
# host has its own host name (a UTS namespace), as nsrsh gives the daemons.
launch_across() { # config np args...
	local c=$1 np=$2 ppn=$(($2 / 2))
	shift 2
	case $c in
	tagged | host | auto | host-mix)
		local e=$c x=()
		[ "$c" = host-mix ] && e=host x=(-x "MATCHBOX_MPI_HOST_PROVIDERS=shm,tcp;ofi_rxm"
			-x FI_TCP_IFACE=eth0)
		MATCHBOX_MPI_ENGINE=$e ip netns exec mbx-h0 "$b/mpi/mpirun" -n "$np" --ppn "$ppn" \
			--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x MATCHBOX_MPI_ENGINE \
			"${x[@]}" --timeout 120 "$tmp/mb.ours" "$@" ;;
	ompi-*)
		local x=(--mca pml ob1 --mca btl tcp,vader,self --mca btl_tcp_disable_family 6)
		[ "$c" = ompi-cm ] && x=(--mca pml cm --mca mtl ofi
			--mca mtl_ofi_provider_include matchbox -x FI_PROVIDER_PATH="$b/prov/matchbox")
		ip netns exec mbx-h0 unshare --uts sh -c 'hostname mbx-h0 && exec "$@"' sh \
			timeout 120 mpirun.openmpi --allow-run-as-root --bind-to none \
			--host "$hosts0:$ppn,$hosts1:$ppn" -n "$np" \
			--mca plm_rsh_agent "$here/../tests/netns/nsrsh" --mca rtc_hwloc_vmhole none \
			--mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 "${x[@]}" \
			"$tmp/mb.ompi" "$@" ;;
	esac 2>/dev/null
}
if [ -n "$across" ]; then
	"$cluster" up 2 >/dev/null || exit 1
	hosts0=$("$cluster" addr 0) hosts1=$("$cluster" addr 1)
fi
launch() { # config np args...
	[ -n "$across" ] && { launch_across "$@"; return; }
	local c=$1 np=$2
	shift 2
	case $c in
	tagged) MATCHBOX_MPI_ENGINE=tagged "$b/mpi/mpirun" -n "$np" --timeout 120 -x MATCHBOX_MPI_ENGINE \
		"$tmp/mb.ours" "$@" ;;
	host) MATCHBOX_MPI_ENGINE=host "$b/mpi/mpirun" -n "$np" --timeout 120 -x MATCHBOX_MPI_ENGINE \
		"$tmp/mb.ours" "$@" ;;
	auto) MATCHBOX_MPI_ENGINE=auto "$b/mpi/mpirun" -n "$np" --timeout 120 -x MATCHBOX_MPI_ENGINE \
		"$tmp/mb.ours" "$@" ;;
	host-mix) MATCHBOX_MPI_ENGINE=host MATCHBOX_MPI_HOST_PROVIDERS="shm,tcp;ofi_rxm" \
		"$b/mpi/mpirun" -n "$np" --timeout 120 -x MATCHBOX_MPI_ENGINE \
		-x MATCHBOX_MPI_HOST_PROVIDERS "$tmp/mb.ours" "$@" ;;
	ompi-cm) timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include matchbox \
		-x FI_PROVIDER_PATH="$b/prov/matchbox" "$tmp/mb.ompi" "$@" ;;
	ompi-ob1) timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" \
		--mca pml ob1 "$tmp/mb.ompi" "$@" ;;
	esac 2>/dev/null
}

. "$here/rounds.sh"

if [ "$mode" = sweep ]; then
	ms=${ENGINES_MS:-30}
	raw=$tmp/sweep.raw
	base=engines_sweep${across:+_across}
	csv=$out/$base.csv
	# The last ratio is the floor of the noise: over matchbox auto is the
	# tagged engine, the same code measured twice in a round.
	ratios=(tagged_vs_cm:tagged:ompi-cm host_vs_ob1:host:ompi-ob1
		auto_vs_best_engine:auto:tagged+host host_vs_tagged:host:tagged auto_vs_tagged:auto:tagged)
	: >"$raw"
	state_rounds "$raw" "lat 0:4194304 $ms" "bw 1:4194304 $ms" "rate 1:8192 $ms"
	cp "$raw" "$out/${base}_raw.txt"
	{
		state_header "${ratios[@]}"
		state_table "$raw" "${ratios[@]}"
	} >"$csv"
	column -t -s, "$csv"
	echo "medians of $reps interleaved rounds by CPU placement, ENGINES_MS=$ms per size"
	[ -n "$across" ] && echo "(across 2 namespace hosts, one rank a host)"
	echo "ratios: speed-ups (above 1.0: the first faster) paired by round against the"
	echo "configuration with the better median; auto_vs_best_engine is auto"
	echo "over the better of tagged and host (issue 18: at least 0.95); auto_vs_tagged is the"
	echo "same code twice (auto is the tagged engine over matchbox): the noise floor"
	state_misses "$csv" 14 0.95
	echo "wrote $csv"
	state_plot "$csv" "$out/$base.png" "Point-to-point, 2 ranks$([ -n "$across" ] &&
		echo ", one on each of two namespace hosts" || echo ", one host"), median of $reps rounds; CPU placements: see bench/mpi/mbench.c" 5
	exit 0
fi

printf "%-9s %8s %3s %9s %9s %9s %9s %9s %9s %8s %8s %9s  %s\n" test bytes np tagged host \
	"${configs[2]}" ompi-cm ompi-ob1 auto tag/cm host/ob1 auto/best unit
echo "test,bytes,ranks,unit,higher_is_better,tagged,host,${configs[2]//-/_},ompi_cm,ompi_ob1,auto,tagged_vs_cm,host_vs_ob1,auto_vs_best_engine" \
	>"$csv"
row() { # test bytes ranks higher_is_better unit
	local t=$1 by=$2 np=$3 hib=$4 unit=$5 r1 r2 r3 best
	best_of_rounds "$t" "$by" "$np" "$hib"
	r1=$(ratio "${vals[0]}" "${vals[3]}" "$hib")
	r2=$(ratio "${vals[1]}" "${vals[4]}" "$hib")
	# auto against the better of our two engines over matchbox
	best=${vals[0]}
	if [ "${vals[1]}" != nan ] && { [ "$best" = nan ] || better "${vals[1]}" "$best" "$hib"; }; then
		best=${vals[1]}
	fi
	r3=$(ratio "${vals[5]}" "$best" "$hib")
	printf "%-9s %8s %3s %9s %9s %9s %9s %9s %9s %8s %8s %9s  %s\n" "$t" "$by" "$np" "${vals[@]}" \
		"$r1" "$r2" "$r3" "$unit"
	echo "$t,$by,$np,$unit,$hib,${vals[0]},${vals[1]},${vals[2]},${vals[3]},${vals[4]},${vals[5]},$r1,$r2,$r3" \
		>>"$csv"
}

row lat 0 2 0 us
row lat 8 2 0 us
row lat 4096 2 0 us
row lat 16384 2 0 us
row lat 65536 2 0 us
row lat 1048576 2 0 us
row bw 8 2 1 GB/s
row bw 16384 2 1 GB/s
row bw 65536 2 1 GB/s
row bw 1048576 2 1 GB/s
row bw 4194304 2 1 GB/s
row rate 8 2 1 Mmsg/s
row allreduce 8 2 0 us
row allreduce 8 4 0 us
row allreduce 65536 4 0 us
row halo 1024 2 0 us
row halo 1024 4 0 us
row halo 65536 4 0 us
row cg 8 2 0 us
row cg 8 4 0 us
echo "ratios are speed-ups (above 1.0: ours faster): tagged engine over Open MPI CM on matchbox,"
echo "host engine over Open MPI OB1; auto over the better of tagged and host (issue 18: at"
echo "least 0.95); all in one session, best of $reps rounds"
[ -n "$across" ] && echo "across 2 namespace hosts: 2-rank rows one rank a host, 4-rank rows two"
echo "wrote $csv"
