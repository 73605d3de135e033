#!/bin/bash
# RMA and atomics, matchbox against its peers measured in the same run with
# the same program (fabtests-extra/ftx_rmabench): on one host against
# libfabric's shm, and (as root) across two network-namespace hosts
# (tests/netns/cluster.sh) against tcp;ofi_rxm. Rounds interleave the
# providers; each figure is the median of the rounds, with the ratio
# matchbox / peer (latency: lower is better; bandwidth and rate: higher).
# usage: bench/rma.sh BUILD_DIR [ROUNDS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build dir}" && pwd)
rounds=${2:-3}
export FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-$build/prov/matchbox}
sizes=8,4096,65536,1048576,4194304
run() { # provider [env...]: lines "op bytes lat value" tagged with the provider
	local prov=$1
	shift
	env "$@" "$build/fabtests-extra/ftx_rmabench" -p "$prov" -S $sizes -I 300 -T 0.3 \
		2>/dev/null | awk -v p="$prov" '$1 ~ /^(write|read|atomic)$/ {print $1, p, $2, $3, $4}'
}
table() { # peer name; reads "op prov bytes lat value" lines
	awk -v peer="$1" "$(cat "$here/median.awk")"'
	{ k = $1 " " $2 " " $3; lat[k] = lat[k] " " $4; val[k] = val[k] " " $5; seen[$1 " " $3] = 1 }
	END {
		printf "%-6s %9s %12s %12s %7s %12s %12s %7s\n", "op", "bytes", "lat matchbox",
		       "lat " peer, "ratio", "matchbox", peer, "ratio"
		n = split("write read atomic", ops, " ")
		m = split("8 4096 65536 1048576 4194304", s, " ")
		for (o = 1; o <= n; o++) for (i = 1; i <= m; i++) {
			if (!((ops[o] " " s[i]) in seen)) continue
			a = med(lat[ops[o] " matchbox " s[i]]); b = med(lat[ops[o] " " peer " " s[i]])
			c = med(val[ops[o] " matchbox " s[i]]); d = med(val[ops[o] " " peer " " s[i]])
			# atomic rates are millions a second: three decimals
			f = ops[o] == "atomic" ? "%12.3f %12.3f" : "%12.1f %12.1f"
			printf "%-6s %9s %12.2f %12.2f %7.2f " f " %7.2f\n", ops[o], s[i], a, b,
			       b ? a / b : 0, c, d, d ? c / d : 0
		}
		print "(latency: microseconds from post to local completion, one at a time;"
		print " write/read: MB/s with 64 outstanding; atomic: 8-byte fetch-add latency and"
		print " millions of 8-byte atomic adds per second, 64 outstanding; medians of rounds)"
	}'
}
echo "== one host: matchbox against shm ($rounds rounds)"
for ((r = 1; r <= rounds; r++)); do
	run matchbox
	run shm
done | table shm
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
	echo
	echo "== two namespace hosts: matchbox against tcp;ofi_rxm ($rounds rounds)"
	across() {
		local r
		for ((r = 1; r <= rounds; r++)); do
			run matchbox FTX_HOSTS=2
			run "tcp;ofi_rxm" FTX_HOSTS=2 FI_TCP_IFACE=eth0
		done
	}
	export -f run across
	export build sizes rounds
	"$here/../tests/netns/cluster.sh" run 2 bash -c across | table "tcp;ofi_rxm"
fi
