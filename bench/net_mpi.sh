#!/bin/bash
# MPI point-to-point across two network-namespace hosts (one rank each), the
# same bench/mpi/mbench.c in the same run under:
#   matchbox      our MPI over matchbox's net wire (adaptive mode)
#   rxm           our MPI over libfabric's tcp;ofi_rxm
#   ompi-tcp      Open MPI's ob1 with its tcp BTL (launched by its mpirun,
#                 daemons started through tests/netns/nsrsh)
#   ompi-cm-mbx   Open MPI's CM path over matchbox
# Latency (us, lower is better), bandwidth (GB/s) and message rate (Mmsg/s)
# per configuration, median of the rounds (interleaved), and the ratio of
# matchbox to the better of rxm and ompi-tcp.
# usage: bench/net_mpi.sh BUILD_DIR [ROUNDS]   (root)
# NET_MPI_CONFIGS picks the configurations (default: all four). Open MPI
# runs with --bind-to none: every namespace "host" is the same machine, and
# Open MPI binds each host's first rank to core 0, which put both ranks on
# one core (about 2 ms per message, the scheduler's time slice). Its tcp BTL
# also needs IPv6 off (btl_tcp_disable_family 6) to connect here, and its
# daemons, which share a hostname and so a session directory here, no
# shared topology file (rtc_hwloc_vmhole none: writing it crashed one).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build dir}" && pwd)
rounds=${2:-3}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
command -v mpicc.openmpi >/dev/null || { echo "needs Open MPI (scripts/install-deps)"; exit 1; }
cluster=$here/../tests/netns/cluster.sh
tmp=$(mktemp -d /tmp/mbx-netmpi.XXXXXX)
trap '"$cluster" down; rm -rf "$tmp"' EXIT
"$build/mpi/mpicc" -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ours" || exit 1
mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ompi" || exit 1
"$cluster" up 2 || exit 1
hosts="$("$cluster" addr 0):1,$("$cluster" addr 1):1"

launch() { # config test bytes
	local c=$1
	shift
	case $c in
	matchbox | rxm)
		local x=()
		[ "$c" = rxm ] && x=(-x "MATCHBOX_MPI_PROVIDER=tcp;ofi_rxm" -x FI_TCP_IFACE=eth0)
		ip netns exec mbx-h0 "$build/mpi/mpirun" -n 2 --ppn 1 \
			--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 "${x[@]}" --timeout 120 \
			"$tmp/mb.ours" "$@" ;;
	ompi-*)
		local x=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_disable_family 6)
		[ "$c" = ompi-cm-mbx ] && x=(--mca pml cm --mca mtl ofi
			--mca mtl_ofi_provider_include matchbox -x FI_PROVIDER_PATH="$build/prov/matchbox")
		ip netns exec mbx-h0 timeout 120 mpirun.openmpi --allow-run-as-root --bind-to none \
			--host "$hosts" \
			-n 2 --mca plm_rsh_agent "$here/../tests/netns/nsrsh" --mca rtc_hwloc_vmhole none \
			--mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 "${x[@]}" \
			"$tmp/mb.ompi" "$@" ;;
	esac 2>/dev/null | awk -v t="$1" '$1 == t {print $3}'
}

figures=("lat 8" "lat 1024" "lat 65536" "bw 65536" "bw 1048576" "rate 8")
read -ra configs <<<"${NET_MPI_CONFIGS:-matchbox rxm ompi-tcp ompi-cm-mbx}"
for ((r = 1; r <= rounds; r++)); do
	for f in "${figures[@]}"; do
		for c in "${configs[@]}"; do
			echo "$f $c $(launch "$c" $f)"
		done
	done
done >"$tmp/all"
awk "$(cat "$here/median.awk")"'
	NF == 4 { v[$1 " " $2 " " $3] = v[$1 " " $2 " " $3] " " $4 }
	END {
		printf "%-5s %8s %10s %10s %10s %12s %7s\n", "test", "bytes", "matchbox", "rxm",
		       "ompi-tcp", "ompi-cm-mbx", "ratio"
		n = split("lat 8,lat 1024,lat 65536,bw 65536,bw 1048576,rate 8", f, ",")
		for (i = 1; i <= n; i++) {
			m = med(v[f[i] " matchbox"]); x = med(v[f[i] " rxm"])
			o = med(v[f[i] " ompi-tcp"]); c = med(v[f[i] " ompi-cm-mbx"])
			split(f[i], tb, " ")
			lower = tb[1] == "lat"
			best = x; if (o != "" && (best == "" || (lower ? o < best : o > best))) best = o
			printf "%-5s %8s %10s %10s %10s %12s %7s\n", tb[1], tb[2], m, x, o, c,
			       (best > 0 && m != "") ? sprintf("%.2f", m / best) : "-"
		}
		print "(lat: us one way; bw: GB/s; rate: Mmsg/s; ratio: matchbox over the better of rxm and ompi-tcp)"
	}' "$tmp/all"
