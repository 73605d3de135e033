#!/bin/bash
# CPU availability (bench/mpi/avail.c: post, compute a fixed amount of work,
# wait; the share of the transfer that overlapped with the work), send side
# and receive side, 8 B to 4 MiB, for our MPI with manual progress and with
# the provider's progress thread (MATCHBOX_MPI_PROGRESS=thread), under both
# engines and with both large-message paths of matchbox (the default, which
# pipelines through shared memory from 256 KiB and needs the sender's
# progress, and single-copy CMA, where the receiver pulls), and for Open MPI
# (OB1 over vader, its default here). Rounds are interleaved; each figure is
# the median over rounds. Prints the table and writes
# bench/results/availability.csv.
# usage: bench/availability.sh [BUILD_DIR] [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
reps=${2:-3}
tmp=$(mktemp -d /tmp/avail.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$here/results
mkdir -p "$out"

"$b/mpi/mpicc" -O2 "$here/mpi/avail.c" -o "$tmp/av.ours" || exit 1
have_ompi=0
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 "$here/mpi/avail.c" -o "$tmp/av.ompi"; then
	have_ompi=1
fi

configs=(tagged tagged-thread tagged-cma tagged-cma-thread host host-thread)
[ $have_ompi = 1 ] && configs+=(ompi)
launch() { # config
	local eng=tagged pg=manual proto=auto
	case $1 in
	ompi)
		timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$tmp/av.ompi"
		return ;;
	host*) eng=host ;;
	esac
	case $1 in *thread) pg=thread ;; esac
	case $1 in *cma*) proto=cma ;; esac
	MATCHBOX_MPI_ENGINE=$eng MATCHBOX_MPI_PROGRESS=$pg FI_MATCHBOX_LARGE_PROTO=$proto \
		"$b/mpi/mpirun" -n 2 --timeout 300 -x MATCHBOX_MPI_ENGINE -x MATCHBOX_MPI_PROGRESS \
		-x FI_MATCHBOX_LARGE_PROTO "$tmp/av.ours"
}

for ((i = 0; i < reps; i++)); do
	for c in "${configs[@]}"; do
		launch "$c" 2>/dev/null | awk -v c="$c" '{print c, $0}' >>"$tmp/all"
	done
done

# config side bytes base over avail -> medians per (side, bytes, config)
awk -v cfgs="${configs[*]}" -v csv="$out/availability.csv" "$(cat "$here/median.awk")"'
{
	k = $2 " " $3
	av[k, $1] = av[k, $1] " " $6
	bs[k, $1] = bs[k, $1] " " $4
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
}
END {
	nc = split(cfgs, c, " ")
	printf "%-4s %8s", "side", "bytes"
	for (i = 1; i <= nc; i++) printf " %17s", c[i]
	printf "\n"
	printf "side,bytes" > csv
	for (i = 1; i <= nc; i++) printf ",%s_avail_pct,%s_base_us", c[i], c[i] > csv
	printf "\n" > csv
	for (n = 1; n <= nk; n++) {
		split(order[n], kk, " ")
		printf "%-4s %8s", kk[1], kk[2]
		printf "%s,%s", kk[1], kk[2] > csv
		for (i = 1; i <= nc; i++) {
			a = med(av[order[n], c[i]], "nan"); t = med(bs[order[n], c[i]], "nan")
			printf " %5s%% %9s us", a, t
			printf ",%s,%s", a, t > csv
		}
		printf "\n"; printf "\n" > csv
	}
}' "$tmp/all"
echo "availability: share of the transfer that overlapped with computation (median of $reps rounds;"
echo "base = post + wait alone, on the measured rank). 2 ranks on this machine's 2 cores: a progress"
echo "thread has no core of its own here. wrote $out/availability.csv"
