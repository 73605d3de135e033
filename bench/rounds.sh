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
