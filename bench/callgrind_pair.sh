#!/bin/bash
# Instructions per 8-byte message on the sending and on the receiving side
# (bench/mpi/cgpair.c under valgrind --tool=callgrind), split by where they
# are spent: the MPI library, the matchbox provider, libfabric itself (with
# its built-in providers such as shm, tcp, rxm), libc, and the rest.
# Instruction counts repeat run to run, unlike times on this machine.
# N stays small (32) so that every sender's messages fit what the receiver's
# side holds while it sleeps: a sender that has to wait would count its spin.
# Configurations: our tagged and host engines over matchbox, and Open MPI
# 4.1 over vader (OB1: Open MPI matches) and CM over matchbox (the provider
# matches). Writes bench/results/callgrind_pair.txt.
# With "posted", the receives are posted before the messages arrive (the
# expected path, as in osu_bw) and the sends are MPI_Send.
# With "vectorK", the default shape with a vector of K doubles (every other
# one) for the message: the cost of packing and unpacking on each side.
# With "idle", the receiving side is N MPI_Test calls that find nothing (a
# rank polling for a neighbour's message), per call; the send side is 0.
# With CG_CACHE=1, valgrind also simulates the caches and branch predictor
# (a model, not this CPU, but the same every run) and a second table gives
# per message the first-level data misses, last-level misses and
# mispredicted branches: what instruction counts leave out.
# CG_BYTES=0 (0 to 8) sets the message size of the default, blocking and
# posted loops: the 0-byte latency row's path.
# CG_CONFIGS="tagged host" limits the run to our engines named there (no
# Open MPI rows), to compare two builds of ours quickly.
# usage: bench/callgrind_pair.sh [BUILD_DIR] [N] [blocking|posted|idle|vectorK]
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
n=${2:-32}
mode=${3:-}  # blocking, posted, idle, vectorK or nothing (see above)
bytes=${CG_BYTES:-8}
args="$n ${mode:-default} $bytes"
tmp=$(mktemp -d /tmp/cgpair.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$here/results
mkdir -p "$out"
. "$here/progs.sh"
progs cgpair.c cg -O2 -g

vg() { # tag -> the valgrind command line for one configuration
	echo valgrind -q --tool=callgrind --collect-atstart=no \
		$([ "${CG_CACHE:-0}" = 1 ] && echo --cache-sim=yes --branch-sim=yes) \
		--callgrind-out-file="$tmp/$1.%q{PMIX_RANK}.out"
}

run() { # config
	case $1 in
	tagged | host)
		MATCHBOX_MPI_ENGINE=$1 "$b/mpi/mpirun" -n 2 --timeout 300 -x MATCHBOX_MPI_ENGINE \
			$(vg "$1") "$tmp/cg.ours" $args ;;
	ompi-ob1)
		timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 --mca pml ob1 \
			$(vg "$1") "$tmp/cg.ompi" $args ;;
	ompi-cm)
		timeout 300 mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 --mca pml cm \
			--mca mtl ofi --mca mtl_ofi_provider_include matchbox \
			-x FI_PROVIDER_PATH="$b/prov/matchbox" $(vg "$1") "$tmp/cg.ompi" $args ;;
	esac >/dev/null 2>&1
}

# Self cost of each object in one callgrind output, in instructions.
by_object() {
	awk '
	# Names are compressed: "(id) path" the first time, "(id)" after,
	# and the first time may be in a callee line (cob=).
	function obname(s) {
		if (!match(s, /^\([0-9]+\)/)) return s
		id = substr(s, 1, RLENGTH); rest = substr(s, RLENGTH + 2)
		if (rest != "") name[id] = rest
		return name[id]
	}
	/^ob=/ { ob = obname(substr($0, 4)); next }
	/^cob=/ { obname(substr($0, 5)); next }
	/^calls=/ { skip = 1; next }
	/^[0-9+*-]/ { if (skip) { skip = 0; next } cost[ob] += $2; next }
	END { for (o in cost) print cost[o], o }' "$1"
}

classify() { # object path -> class
	case $1 in
	*libmatchbox-fi*) echo provider ;;
	*libfabric*) echo libfabric ;;
	*/libc.so* | *libc-*) echo libc ;;
	*/libmpi.so* | *openmpi/lib/* | *libopen-pal* | *libopen-rte* | *mca_*) echo mpi ;;
	*) echo other ;;
	esac
}

configs=(${CG_CONFIGS:-tagged host})
[ $have_ompi = 1 ] && [ -z "${CG_CONFIGS:-}" ] && configs+=(ompi-ob1 ompi-cm)
{
	printf "instructions per %s (N=%d, steady state%s), by library\n" \
		"$(case $mode in vector*) echo "${mode#vector}-double vector message" ;;
		   idle) echo "MPI_Test that finds nothing" ;; *) echo "$bytes-byte message" ;; esac)" \
		"$n" "${mode:+, $mode}"
	printf "%-9s %-8s %9s %9s %9s %9s %9s %9s\n" config side total mpi provider libfabric libc other
	for c in "${configs[@]}"; do
		run "$c"
		for r in 0 1; do
			f=$tmp/$c.$r.out
			side=$([ $r = 0 ] && echo send || echo receive)
			if [ ! -s "$f" ]; then
				printf "%-9s %-8s %9s\n" "$c" "$side" "no data"
				continue
			fi
			declare -A sum=([mpi]=0 [provider]=0 [libfabric]=0 [libc]=0 [other]=0)
			while read -r cost obj; do
				k=$(classify "$obj")
				sum[$k]=$((${sum[$k]} + cost))
			done < <(by_object "$f")
			tot=$((sum[mpi] + sum[provider] + sum[libfabric] + sum[libc] + sum[other]))
			printf "%-9s %-8s %9d %9d %9d %9d %9d %9d\n" "$c" "$side" $((tot / n)) \
				$((sum[mpi] / n)) $((sum[provider] / n)) $((sum[libfabric] / n)) \
				$((sum[libc] / n)) $((sum[other] / n))
			unset sum
		done
	done
	[ "${CG_CACHE:-0}" = 1 ] || exit 0
	echo
	echo "per message, simulated: D1 misses (reads + writes), LL misses, mispredicted branches"
	printf "%-9s %-8s %9s %9s %9s\n" config side D1miss LLmiss mispred
	for c in "${configs[@]}"; do
		for r in 0 1; do
			f=$tmp/$c.$r.out
			[ -s "$f" ] || continue
			awk -v c="$c" -v side="$([ $r = 0 ] && echo send || echo receive)" -v n="$n" '
			/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
			/^(summary|totals):/ { for (i = 2; i <= NF; i++) v[i] = $i }
			END {
				d1 = v[col["D1mr"]] + v[col["D1mw"]]; ll = v[col["DLmr"]] + v[col["DLmw"]] + v[col["ILmr"]]
				bm = v[col["Bcm"]] + v[col["Bim"]]
				printf "%-9s %-8s %9.1f %9.1f %9.1f\n", c, side, d1 / n, ll / n, bm / n
			}' "$f"
		done
	done
} | tee "$out/callgrind_pair${mode:+_$mode}$([ "$bytes" = 8 ] || echo "_${bytes}B")$([ "${CG_CACHE:-0}" = 1 ] && echo _cache).txt"
