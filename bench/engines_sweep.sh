# Sourced by engines.sh in its sweep mode (see there): the latency,
# bandwidth and message-rate curves of every configuration by CPU state
# (bench/rounds.sh's state_rounds and state_table), and the plot. Uses
# engines.sh's configs, reps, launch, tmp, out and across.

ms=${ENGINES_MS:-30}
raw=$tmp/sweep.raw
base=engines_sweep${across:+_across}
csv=$out/$base.csv
# The last ratio is the floor of the noise: over matchbox auto is the
# tagged engine, the same code measured twice in a round.
ratios=(tagged_vs_cm:tagged:ompi-cm host_vs_ob1:host:ompi-ob1 auto_vs_best_engine:auto:tagged+host
	host_vs_tagged:host:tagged auto_vs_tagged:auto:tagged)
: >"$raw"
state_rounds "$raw" "lat 0:4194304 $ms" "bw 1:4194304 $ms" "rate 1:8192 $ms"
cp "$raw" "$out/${base}_raw.txt"  # round, config, test, bytes, all, fast, n, slow, n
{
	state_header "${ratios[@]}"
	state_table "$raw" "${ratios[@]}"
} >"$csv"
column -t -s, "$csv"
echo "medians of $reps interleaved rounds, ENGINES_MS=$ms per size${across:+, across 2 namespace hosts};"
echo "ratios: medians of per-round speed-ups (above 1.0: the first faster); auto_vs_best_engine"
echo "is auto over the better of tagged and host in the same round (issue 18: at least 0.95);"
echo "auto_vs_tagged is the same code twice (auto is the tagged engine over matchbox): the noise"
state_misses "$csv" 14 0.95
echo "wrote $csv"

state_plot "$csv" "$out/$base.png" "Point-to-point, 2 ranks$([ -n "$across" ] && echo ", one on each of two namespace hosts" || echo ", one host"), median of $reps rounds; CPU states: see bench/mpi/mbench.c" 5
