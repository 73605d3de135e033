#!/bin/bash
# Point-to-point across two network-namespace hosts (tests/netns/cluster.sh):
# matchbox's net wire against libfabric's tcp;ofi_rxm, the same fabtests-extra
# programs in the same run, one rank per host. Prints each figure and the
# ratio matchbox / tcp;ofi_rxm (latency: lower is better; bandwidth: higher).
# usage: bench/net_p2p.sh BUILD_DIR [ROUNDS]   (root)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build dir}" && pwd)
rounds=${2:-3}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
sizes=8,1024,65536,1048576
run() { # provider program args...
	local prov=$1 prog=$2
	shift 2
	FI_TCP_IFACE=eth0 FTX_HOSTS=2 "$build/fabtests-extra/$prog" -p "$prov" "$@" 2>/dev/null |
		awk '/^[0-9]/ {print $1, $2}'
}
bench() {
	local r prov
	for ((r = 1; r <= rounds; r++)); do
		for prov in matchbox "tcp;ofi_rxm"; do
			run "$prov" ftx_pingpong -S $sizes -I 1000 | sed "s/^/lat $prov /"
			run "$prov" ftx_bw -S $sizes -T 0.3 | sed "s/^/bw $prov /"
		done
	done
}
export -f run bench
export build sizes rounds
"$here/../tests/netns/cluster.sh" run 2 bash -c bench | awk "$(cat "$here/median.awk")"'
	{ v[$1 " " $2 " " $3] = v[$1 " " $2 " " $3] " " $4 }
	END {
		printf "%-5s %9s %14s %14s %7s\n", "what", "bytes", "matchbox", "tcp;ofi_rxm", "ratio"
		n = split("8 1024 65536 1048576", s, " ")
		for (k = 1; k <= 2; k++) {
			w = k == 1 ? "lat" : "bw"
			for (i = 1; i <= n; i++) {
				a = med(v[w " matchbox " s[i]]); b = med(v[w " tcp;ofi_rxm " s[i]])
				printf "%-5s %9s %14.2f %14.2f %7.2f\n", w, s[i], a, b, b ? a / b : 0
			}
		}
		print "(lat: one-way microseconds, median of rounds; bw: MB/s as ftx_bw prints it)"
	}'
