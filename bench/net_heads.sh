#!/bin/bash
# Matchbox alone (fabtests-extra's ftx_pingpong, one rank on each of two
# network-namespace hosts) with large messages of mixed sizes in one job,
# their requests with heads (FI_MATCHBOX_NET_RTS_HEAD=65536) and without
# (the default over tcp), in interleaved rounds. Sizes in one job
# matter here: a state a connection enters at one size lasts into the next
# (a 64 KiB head with little left to read once stalled tcp connections for
# the rest of the job, under bbr congestion control: MBX_TCP_CC=bbr runs
# the hosts with it, where by default they run cubic). Prints the median
# one-way us per size and the ratio heads/none (below 1.0 the heads are
# faster).
# usage: [OUT=net_heads] bench/net_heads.sh [BUILD_DIR] [ROUNDS] [SIZES] [ITERS]   (root)
# (writes bench/results/OUT.txt)
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
sizes=${3:-66000,70000,73728,81920,98304,131072,196608,262144}
iters=${4:-300}
. "$here/netns_pair.sh"
netns_hosts net_heads
cc=$(ip netns exec mbx-h0 sysctl -n net.ipv4.tcp_congestion_control)
for ((r = 1; r <= rounds; r++)); do
	for c in heads none; do
		h=(FI_MATCHBOX_NET_RTS_HEAD=65536)
		[ $c = none ] && h=(FI_MATCHBOX_NET_RTS_HEAD=0)
		env FTX_HOSTS=2 "${h[@]}" "$b/fabtests-extra/ftx_pingpong" -S "$sizes" -I "$iters" \
			2>/dev/null | awk -v c=$c '$1 ~ /^[0-9]+$/ { print $1, c, $2 }'
	done
done > "$tmp/raw"
{
	echo "ftx_pingpong between two namespace hosts (TCP congestion control $cc), sizes"
	echo "$sizes in one job, one-way us, median of $rounds interleaved rounds of $iters iterations"
	awk -v sizes="$sizes" "$(cat "$here/median.awk")"'
	{ v[$1 " " $2] = v[$1 " " $2] " " $3 }
	END {
		printf "%10s %10s %10s %12s\n", "bytes", "heads", "none", "heads/none"
		n = split(sizes, s, ",")
		for (i = 1; i <= n; i++) {
			x = med(v[s[i] " heads"]); z = med(v[s[i] " none"])
			printf "%10s %10s %10s %12s\n", s[i], x, z, (z + 0 > 0 ? sprintf("%.2f", x / z) : "-")
		}
	}' "$tmp/raw"
} | tee "$here/results/${OUT:-net_heads}.txt"
