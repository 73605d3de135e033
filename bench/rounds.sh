# Sourced by the comparison scripts (engines.sh, mpi_compare.sh): the
# interleaved rounds that make figures from different MPI libraries
# comparable on a shared machine. The caller defines `configs` (names),
# `reps` (rounds) and `launch CONFIG NP TEST BYTES` (one run), and may
# redefine `extract`.

# The figure in a run's output (mbench's "test bytes value" lines); a
# caller whose programs print otherwise defines its own after sourcing.
extract() { # test bytes < output
	awk -v t="$1" '$1 == t {print $3}' | sort -g | tail -1
}

# One run of one figure with one configuration.
once() { # config np test bytes
	local c=$1 np=$2
	shift 2
	launch "$c" "$np" "$@" | extract "$@"
}

better() { # a b higher_is_better -> true if a beats b
	awk -v a="$1" -v b="$2" -v h="$3" 'BEGIN{exit !(h ? a + 0 > b + 0 : a + 0 < b + 0)}'
}

ratio() { # ours peer higher_is_better -> speed-up of ours (>1 is better for ours)
	awk -v o="$1" -v p="$2" -v h="$3" 'BEGIN{
		if (o == "nan" || p == "nan" || o + 0 == 0 || p + 0 == 0) { print "nan"; exit }
		printf "%.2f", h ? o / p : p / o }'
}

# Best of $reps rounds into the array vals (one entry per config, nan where
# a configuration gave nothing). Within a round every configuration runs
# once, so a change in where the host puts this VM's vCPUs (siblings of one
# core or two cores: 0.17 vs 0.5 us latency) hits all of them alike.
best_of_rounds() { # test bytes np higher_is_better
	local t=$1 by=$2 np=$3 hib=$4 v i k
	vals=()
	for k in "${!configs[@]}"; do vals[$k]=nan; done
	for ((i = 0; i < reps; i++)); do
		for k in "${!configs[@]}"; do
			v=$(once "${configs[$k]}" "$np" "$t" "$by")
			[ -z "$v" ] && continue
			if [ "${vals[$k]}" = nan ] || better "$v" "${vals[$k]}" "$hib"; then
				vals[$k]=$v
			fi
		done
	done
}

# The CPU-state figures (mbench.c's probe: each line ends "fast V N mid V N
# slow V N"). state_rounds RAW TEST_SPEC... runs, for each of $reps rounds,
# every configuration once per spec ("lat 0:4194304 30", "lat 8", ...; np 2)
# and appends "round config test bytes all fast n mid n slow n" lines to RAW
# (nan 0 for a state the run did not see or the probe did not measure).
state_rounds() { # raw spec...
	local raw=$1 i c spec
	shift
	for ((i = 0; i < reps; i++)); do
		for c in "${configs[@]}"; do
			for spec in "$@"; do
				# shellcheck disable=SC2086 # a spec is several words
				launch "$c" 2 $spec | awk -v r="$i" -v c="$c" '
					$1 ~ /^(lat|bw|bibw|rate)$/ && NF >= 4 {
						delete v; delete n
						for (k = 5; k + 2 <= NF; k += 3) { v[$k] = $(k + 1); n[$k] = $(k + 2) }
						printf "%s %s %s %s %s", r, c, $1, $2, $3
						split("fast mid slow", st, " ")
						for (k = 1; k <= 3; k++)
							printf " %s %d", st[k] in v ? v[st[k]] : "nan", st[k] in n ? n[st[k]] : 0
						printf "\n" }' >>"$raw"
			done
		done
		echo "round $((i + 1)) of $reps: $(wc -l <"$raw") figures" >&2
	done
}

# state_table RAW RATIO... prints CSV rows (by test, then size) "test,bytes,state,unit,
# higher_is_better,<median per configuration>...,<median per ratio>..." for
# the states all (the whole run), fast, mid and slow (the probe's slices of
# that state). A median is over the rounds that gave the figure in that state; a
# ratio NAME:A:B1+B2 is the speed-up (above 1.0: A faster) of A over the B
# with the best median, taken per round (where both gave the figure in that
# state) and then the median over rounds: both sides of a ratio ran seconds
# apart, and a round that was slow for everyone cancels out.
# nan where there was nothing to take. The header is state_header's.
state_header() { # ratio...
	local h="test,bytes,state,unit,higher_is_better" c r
	for c in "${configs[@]}"; do h="$h,${c//-/_}"; done
	for r in "$@"; do h="$h,${r%%:*}"; done
	echo "$h"
}
state_table() { # raw ratio...
	local raw=$1
	shift
	awk -v cfgs="${configs[*]}" -v ratios="$*" '
	function med(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		if (n == 0) return "nan"
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function get(S, r, c, key) { return (S, r, c, key) in v ? v[S, r, c, key] : "" }
	function add(k, x) { if (x != "") acc[k] = acc[k] " " x }
	BEGIN { nc = split(cfgs, cf, " "); ns = split("all fast mid slow", st, " "); nr = split(ratios, rt, " ") }
	{
		key = $3 SUBSEP $4
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		v["all", $1, $2, key] = $5
		for (q = 2; q <= ns; q++) if ($(5 + 2 * (q - 1)) > 0) v[st[q], $1, $2, key] = $(4 + 2 * (q - 1))
		rounds[$1] = 1
	}
	END {
		for (k = 1; k <= nk; k++) for (q = 1; q <= ns; q++) {
			key = order[k]; split(key, tb, SUBSEP); hib = tb[1] != "lat"; S = st[q]
			delete acc
			delete md
			for (r in rounds)
				for (j = 1; j <= nc; j++) add(cf[j], get(S, r, cf[j], key))
			for (j = 1; j <= nc; j++) md[cf[j]] = med(acc[cf[j]])
			for (j = 1; j <= nr; j++) {
				# The best of the Bs is the one with the best median
				# here, not whichever was luckiest in each round.
				split(rt[j], part, ":"); nb = split(part[3], bs, "+"); b = ""
				for (m = 1; m <= nb; m++) {
					x = md[bs[m]]
					if (x != "nan" && x + 0 > 0 && (b == "" || (hib ? x + 0 > md[b] + 0 : x + 0 < md[b] + 0))) b = bs[m]
				}
				if (b == "") continue
				for (r in rounds) {
					a = get(S, r, part[2], key); x = get(S, r, b, key)
					if (a + 0 > 0 && x + 0 > 0) add("r" j, hib ? a / x : x / a)
				}
			}
			line = tb[1] "," tb[2] "," S "," (tb[1] == "lat" ? "us" : tb[1] == "rate" ? "Mmsg/s" : "GB/s") "," hib
			for (j = 1; j <= nc; j++) line = line "," md[cf[j]]
			for (j = 1; j <= nr; j++) { m = med(acc["r" j]); line = line "," (m == "nan" ? m : sprintf("%.2f", m)) }
			print line
		}
	}' "$raw" | sort -t, -k1,1 -k2,2n -k3,3
}

# state_misses CSV COLUMN LIMIT: per state, the figures whose ratio in
# COLUMN (1-based) is below LIMIT, on one line each.
state_misses() { # csv column limit
	local S
	for S in all fast mid slow; do
		awk -F, -v S="$S" -v c="$2" -v lim="$3" -v name="$(head -1 "$1" | cut -d, -f"$2")" '
			NR > 1 && $3 == S { m++; if ($c != "nan" && $c + 0 < lim) { n++; l = l " " $1 " " $2 " (" $c ")" } }
			END { printf "%s, %s below %s: %d of %d figures:%s\n", S, name, lim, n, m, l }' "$1"
	done
}

# state_plot CSV PNG TITLE N: with gnuplot (Debian's gnuplot-nox), the CSV
# of state_table as one PNG: latency, bandwidth and rate against size for
# the first N configurations, a row of panels for each CPU state that every
# test saw (fast on top, then mid, then slow). Sizes of 0 bytes sit at 0.5 on the log axis.
state_plot() { # csv png title n
	command -v gnuplot >/dev/null || { echo "(gnuplot missing: no plot; apt-get install gnuplot-nox)"; return 0; }
	local names d S t states=""
	names=$(head -1 "$1" | cut -d, -f6-$((5 + $4)) | tr , ' ')
	# A file per state and test, so that each curve's points are adjacent,
	# holding the rows with a figure; a placement a test never saw gets no
	# row of panels (gnuplot stops at a plot with no points).
	d=$(mktemp -d /tmp/state_plot.XXXXXX)
	for S in fast mid slow; do
		for t in lat bw rate; do
			awk -F, -v S="$S" -v t="$t" -v n="$4" '$1 == t && $3 == S {
				for (i = 6; i < 6 + n; i++) if ($i != "nan") { print; next } }' "$1" >"$d/$S.$t"
			[ -s "$d/$S.$t" ] || continue 2
		done
		states="$states${states:+ }$S"
	done
	[ -n "$states" ] || { echo "(no placement with every test: no plot)"; rm -rf "$d"; return 0; }
	gnuplot <<-EOF
		set terminal pngcairo size 1500,$((100 + 400 * $(echo $states | wc -w))) font ",10" noenhanced
		set output "$2"
		set datafile separator ","
		set key top left font ",9"
		set grid
		set logscale x 2
		set xtics ("0" 0.5, "1" 1, "16" 16, "256" 256, "4K" 4096, "64K" 65536, "1M" 1048576, "4M" 4194304)
		set xlabel "bytes"
		set multiplot layout $(echo $states | wc -w),3 title "$3"
		names = "$names"
		x(b) = b == 0 ? 0.5 : b
		do for [S in "$states"] {
			set key top left
			set title "Latency (us, lower is better), CPUs ".S
			set logscale y
			plot for [i=1:$4] "$d/".S.".lat" using (x(column(2))):(column(5+i)) \
				with linespoints title word(names,i)
			set title "Bandwidth (GB/s, window of 64), CPUs ".S
			plot for [i=1:$4] "$d/".S.".bw" using 2:(column(5+i)) with linespoints title word(names,i)
			set title "Message rate (million/s, window of 64), CPUs ".S
			unset logscale y
			set key top right
			plot for [i=1:$4] "$d/".S.".rate" using 2:(column(5+i)) with linespoints title word(names,i)
		}
		unset multiplot
	EOF
	rm -rf "$d"
	echo "plot: $2"
}
