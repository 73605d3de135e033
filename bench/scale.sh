#!/bin/bash
# Scale, after Shipman et al.: the patterns of bench/mpi/scale.c (hello world,
# pairwise ping-pong, a 4-neighbour halo, all-to-all) at 4 to 64 ranks on
# network-namespace hosts (tests/netns/cluster.sh, 2 ranks a host, so N/2
# hosts; oversubscribed on this machine), in every connection mode. Per run
# it keeps every rank's line; it then prints, per mode, pattern and N, the
# connections per process, the peak memory per process (VmHWM) and the
# slowest MPI_Init, writes them to scale.csv and, when gnuplot is there,
# draws scale_conns.png, scale_memory.png and scale_init.png. Last, the
# memory growth from the smallest to the largest N, per rank added, and its
# ratio to static's in the same run.
# usage: bench/scale.sh BUILD_DIR [OUT_DIR]   (root; OUT_DIR: bench/results)
# SCALE_NS, SCALE_MODES, SCALE_PATTERNS narrow the sweep; SCALE_ENV="VAR=value
# ..." sets provider parameters in every rank (FI_MATCHBOX_CONN_THRESHOLD=16
# shows verbs' adaptive default here); SCALE_REPORT=1 only reports and plots
# the scale_raw.txt already in OUT_DIR.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build dir}" && pwd)
out=$(mkdir -p "${2:-$here/results}" && cd "${2:-$here/results}" && pwd)
ns=${SCALE_NS:-4 8 16 32 64}
modes=${SCALE_MODES:-static ondemand adaptive partial}
patterns=${SCALE_PATTERNS:-hello pairwise halo alltoall}
[ -n "${SCALE_REPORT:-}" ] || [ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
cluster=$here/../tests/netns/cluster.sh
tmp=$(mktemp -d /tmp/mbx-scale.XXXXXX)
trap '[ -n "${SCALE_REPORT:-}" ] || "$cluster" down; rm -rf "$tmp"' EXIT
raw=$out/scale_raw.txt
[ -n "${SCALE_REPORT:-}" ] || {
	"$build/mpi/mpicc" -O2 -I"$here/../include" "$here/mpi/scale.c" -o "$tmp/scale" || exit 1

	xs=()
	for v in ${SCALE_ENV:-}; do xs+=(-x "$v"); done
	: >"$raw"
	for n in $ns; do
		hosts=$((n / 2))
		"$cluster" up "$hosts" || exit 1
		for mode in $modes; do
			for pat in $patterns; do
				t0=$(date +%s.%N)
				ip netns exec mbx-h0 "$build/mpi/mpirun" -n "$n" --ppn 2 \
					--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 \
					-x FI_MATCHBOX_CONN_MODE="$mode" "${xs[@]}" --timeout 300 "$tmp/scale" "$pat" \
					>"$tmp/out" 2>"$tmp/err"
				st=$?
				got=$(grep -c '^scale ' "$tmp/out")
				awk -v a="$t0" -v b="$(date +%s.%N)" -v m="$mode" -v p="$pat" -v n="$n" \
					-v g="$got" -v s="$st" 'BEGIN {
					printf "%-9s %-9s %3d ranks: %3d lines, status %d, %.1f s\n", m, p, n, g, s, b - a }' >&2
				[ "$st" = 0 ] && [ "$got" = "$n" ] || { tail -n 3 "$tmp/err" >&2; continue; }
				sed "s/^/$mode /" "$tmp/out" >>"$raw"
			done
		done
	done
	"$cluster" down
}

# mode scale PATTERN N rank R init_s X settle_s X hwm_kb X conns_open X conns_max X ...
awk '$2 == "scale" {
	k = $1 " " $3 " " $4
	if (!(k in cnt)) order[++nk] = k
	cnt[k]++; conns[k] += $16; hwm[k] += $12
	if ($16 > cmax[k]) cmax[k] = $16
	if ($12 > hmax[k]) hmax[k] = $12
	if ($8 > imax[k]) imax[k] = $8
	if ($10 > smax[k]) smax[k] = $10
}
END {
	print "mode,pattern,ranks,conns_mean,conns_max,hwm_mean_mb,hwm_max_mb,init_max_s,settle_max_s"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, " ")
		printf "%s,%s,%d,%.1f,%d,%.2f,%.2f,%.3f,%.3f\n", f[1], f[2], f[3], conns[k] / cnt[k],
		       cmax[k], hwm[k] / cnt[k] / 1024, hmax[k] / 1024, imax[k], smax[k]
	}
}' "$raw" >"$out/scale.csv"

column -s, -t "$out/scale.csv"
echo
echo "memory growth per rank added (mean VmHWM, smallest to largest N), and its ratio to static's:"
awk -F, 'NR > 1 {
	k = $1 "," $2
	if (!(k in lo) || $3 < lon[k]) { lo[k] = $6; lon[k] = $3 }
	if (!(k in hi) || $3 > hin[k]) { hi[k] = $6; hin[k] = $3 }
	if (!seen[$1]++) mo[++nm] = $1
	if (!pseen[$2]++) po[++np] = $2
}
END {
	for (j = 1; j <= np; j++) for (i = 1; i <= nm; i++) {
		k = mo[i] "," po[j]; s = "static," po[j]
		if (!(k in hi) || hin[k] == lon[k]) continue
		g = (hi[k] - lo[k]) * 1024 / (hin[k] - lon[k])
		r = ""
		if ((s in hi) && hin[s] > lon[s]) {
			gs = (hi[s] - lo[s]) * 1024 / (hin[s] - lon[s])
			if (gs > 0) r = sprintf("%.2f x static", g / gs)
		}
		printf "  %-9s %-9s %8.1f KiB per rank   %s\n", po[j], mo[i], g, r
	}
}' "$out/scale.csv"

command -v gnuplot >/dev/null || { echo "(gnuplot missing: no plots)"; exit 0; }
for mode in $modes; do
	for pat in $patterns; do
		awk -F, -v m="$mode" -v p="$pat" '$1 == m && $2 == p {print $3, $4, $6, $8}' \
			"$out/scale.csv" >"$tmp/$mode-$pat.dat"
	done
done
plot() { # file, column, y label, title
	gnuplot <<-EOF
		set terminal pngcairo size 1400,420 font ",10"
		set output "$out/$1"
		set multiplot layout 1,$(echo $patterns | wc -w) title "$4"
		set logscale x 2
		set xrange [3:80]
		set yrange [0:*]
		set xtics (4, 8, 16, 32, 64)
		set xlabel "ranks (2 per namespace host)"
		set ylabel "$3"
		set key top left
		set grid
		do for [p in "$patterns"] {
			set title p
			plot for [m in "$modes"] sprintf("$tmp/%s-%s.dat", m, p) using 1:$2 with linespoints title m
		}
		unset multiplot
	EOF
}
plot scale_conns.png 2 "open connections per process (mean)" "Connections per process"
plot scale_memory.png 3 "VmHWM per process, MB (mean)" "Peak memory per process"
plot scale_init.png 4 "MPI_Init, s (slowest rank)" "MPI_Init time"
echo "plots: $out/scale_conns.png $out/scale_memory.png $out/scale_init.png"
