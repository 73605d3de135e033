#!/bin/bash
# Does a short shared receive queue slow an FT/IS-like exchange down? (Shipman
# et al. saw NAS FT and IS run 2 to 20 times slower once Open MPI's SRQ ran
# dry.) bench/mpi/ftis.c (every rank sends a block to every other, all of
# them unexpected) on network-namespace hosts, 2 ranks a host, every pair
# connected (static), with the receive queue sized three ways in the same
# run, interleaved, median of the rounds:
#   generous  FI_MATCHBOX_SRQ_K=64 SRQ_B=4096: every window at its 16 frames
#   default   k=8, b=32: x = 8*ceil(log2(n+1)) + 32 buffers
#   starved   k=0, b=1 and 1-frame windows: one buffer per connection (+8)
# and prints microseconds per iteration and the ratios to generous, with the
# times senders waited for a credit. The data is checked every iteration.
# FTIS_ENV adds mpirun arguments to every run, e.g. "-x FI_MATCHBOX_NET_RMA=0"
# to move the large blocks by clear-to-send through the low-priority queue.
# usage: bench/ftis.sh BUILD_DIR [RANKS] [ROUNDS]   (root)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build dir}" && pwd)
ranks=${2:-16}
rounds=${3:-3}
sizes="1024 8192 30000 131072"
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
cluster=$here/../tests/netns/cluster.sh
tmp=$(mktemp -d /tmp/mbx-ftis.XXXXXX)
trap '"$cluster" down; rm -rf "$tmp"' EXIT
"$build/mpi/mpicc" -O2 -I"$here/../include" "$here/mpi/ftis.c" -o "$tmp/ftis" || exit 1
"$cluster" up $((ranks / 2)) || exit 1

run() { # config size
	local env=()
	case $1 in
	generous) env=(-x FI_MATCHBOX_SRQ_K=64 -x FI_MATCHBOX_SRQ_B=4096) ;;
	starved) env=(-x FI_MATCHBOX_SRQ_K=0 -x FI_MATCHBOX_SRQ_B=1 -x FI_MATCHBOX_NET_CREDITS=1) ;;
	esac
	ip netns exec mbx-h0 "$build/mpi/mpirun" -n "$ranks" --ppn 2 \
		--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x FI_MATCHBOX_CONN_MODE=static \
		"${env[@]}" ${FTIS_ENV:-} --timeout 300 "$tmp/ftis" "$2" 20 2>"$tmp/err" | sed -n "s/^ftis /$1 /p"
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "FAIL $1 $2" >&2; tail -n 3 "$tmp/err" >&2; }
}
for ((r = 1; r <= rounds; r++)); do
	for s in $sizes; do
		for c in generous default starved; do
			run "$c" "$s"
		done
	done
done | tee "$tmp/all" >/dev/null
awk -v sizes="$sizes" -v ranks="$ranks" "$(cat "$here/median.awk")"'
	{ t[$1 " " $2] = t[$1 " " $2] " " $4; w[$1 " " $2] += $5; q[$1 " " $2] = $6 }
	END {
		printf "%d ranks; us per iteration (median), ratio to generous; credit waits (all ranks, all rounds); SRQ buffers\n", ranks
		printf "%8s %10s %10s %10s %8s %8s %10s %10s %6s %6s\n", "bytes", "generous", "default",
		       "starved", "def/gen", "stv/gen", "waits def", "waits stv", "srq d", "srq s"
		n = split(sizes, s, " ")
		for (i = 1; i <= n; i++) {
			g = med(t["generous " s[i]]); d = med(t["default " s[i]]); v = med(t["starved " s[i]])
			printf "%8d %10.1f %10.1f %10.1f %8.2f %8.2f %10d %10d %6d %6d\n", s[i], g, d, v,
			       g ? d / g : 0, g ? v / g : 0, w["default " s[i]], w["starved " s[i]],
			       q["default " s[i]], q["starved " s[i]]
		}
	}' "$tmp/all"
