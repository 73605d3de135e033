#!/bin/bash
# Two NICs a host: what striping a large message over both buys, against
# Open MPI's OB1 on the same wires. Two namespace hosts (tests/netns/
# cluster.sh, MBX_RAILS=2), each NIC shaped to a speed (tc token bucket), so
# that the wire, not this machine's two cores, is what limits a transfer.
# Streaming bandwidth (mbench bw, a window of 64 messages) in each
# configuration, interleaved within every round:
#   host-1nic  host engine over tcp;ofi_rxm on eth0
#   host-2nic  host engine over tcp;ofi_rxm on eth0 and eth1, striped
#   ob1-1nic   Open MPI 4.1 OB1, btl tcp on eth0
#   ob1-2nic   OB1 with btl_tcp_if_include eth0,eth1 (it stripes too)
#   tagged-1nic  tagged engine over matchbox, its net wire on eth0
#   tagged-2nic  the same with matchbox's own rails (FI_MATCHBOX_NET_RAILS=
#              eth1): frames on eth0, large messages read over both
# in two set-ups: both NICs at RATE, and eth1 at half of it (OB1 weighs its
# interfaces by the speed they report, equal for two veths; the host
# engine by what it measured; matchbox's striping gives each piece to the
# rail with the fewest bytes in flight).
# usage: rails.sh BUILD_DIR [ROUNDS] [RATE]   (root; default 3 rounds, 1gbit)
# Prints min-max GB/s over the rounds per configuration and the ratios of
# the medians: host-2nic over host-1nic and over ob1-2nic, tagged-2nic over
# tagged-1nic and over ob1-2nic.
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:?usage: rails.sh BUILD_DIR [ROUNDS] [RATE]}" && pwd)
reps=${2:-3}
rate=${3:-1gbit}
cluster=$here/../tests/netns/cluster.sh
[ "$(id -u)" = 0 ] || { echo "rails.sh: needs root (network namespaces)"; exit 1; }
command -v mpicc.openmpi >/dev/null || { echo "missing mpicc.openmpi (scripts/install-deps)"; exit 1; }
tmp=$(mktemp -d /tmp/mbx-rails.XXXXXX)
trap '"$cluster" down; rm -rf "$tmp"' EXIT
"$b/mpi/mpicc" -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ours" || exit 1
mpicc.openmpi -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ompi" || exit 1
MBX_RAILS=2 "$cluster" up 2 >/dev/null || exit 1
a0=$("$cluster" addr 0) a1=$("$cluster" addr 1)
export FI_PROVIDER_PATH=$b/prov/matchbox

configs=(host-1nic host-2nic ob1-1nic ob1-2nic tagged-1nic tagged-2nic)
# About 256 MiB a run: long enough that start-up is noise, short enough
# at 1 Gb/s.
iters() { # bytes
	local n=$((256 * 1024 * 1024 / (64 * $1)))
	echo $((n < 1 ? 1 : n))
}
launch() { # config bytes
	local c=$1 by=$2 it
	it=$(iters "$by")
	case $c in
	host-* | tagged-*)
		local e=host d=eth0 r=
		[ "$c" = host-2nic ] && d=eth0,eth1
		[ "${c%-*}" = tagged ] && e=tagged
		[ "$c" = tagged-2nic ] && r=eth1
		ip netns exec mbx-h0 env MATCHBOX_MPI_ENGINE=$e "MATCHBOX_MPI_HOST_PROVIDERS=tcp;ofi_rxm" \
			MATCHBOX_MPI_HOST_NET_DOMAINS=$d FI_MATCHBOX_NET_IFACE=eth0 \
			FI_MATCHBOX_NET_RAILS=$r MBENCH_ITERS="$it" \
			"$b/mpi/mpirun" -n 2 --ppn 1 --host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 \
			-x MATCHBOX_MPI_ENGINE -x MATCHBOX_MPI_HOST_PROVIDERS -x MATCHBOX_MPI_HOST_NET_DOMAINS \
			-x FI_MATCHBOX_NET_IFACE -x FI_MATCHBOX_NET_RAILS -x MBENCH_ITERS --timeout 120 \
			"$tmp/mb.ours" bw "$by" ;;
	ob1-*)
		local i=eth0
		[ "$c" = ob1-2nic ] && i=eth0,eth1
		ip netns exec mbx-h0 unshare --uts sh -c 'hostname mbx-h0 && exec "$@"' sh \
			timeout 120 mpirun.openmpi --allow-run-as-root --bind-to none \
			--host "$a0:1,$a1:1" -n 2 --mca plm_rsh_agent "$here/../tests/netns/nsrsh" \
			--mca rtc_hwloc_vmhole none --mca pml ob1 --mca btl tcp,self \
			--mca btl_tcp_if_include "$i" --mca oob_tcp_if_include eth0 \
			--mca btl_tcp_disable_family 6 -x MBENCH_ITERS="$it" "$tmp/mb.ompi" bw "$by" ;;
	esac 2>/dev/null | awk '$1 == "bw" {print $3}' | tail -1
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "nan"}'; }
range() { tr ' ' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print NR ? lo "-" hi : "nan"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "nan" || b == "nan" || b + 0 == 0) print "nan"; else printf "%.2f", a / b}'; }

printf "%-10s %8s" setup bytes
for c in "${configs[@]}"; do printf " %13s" "$c"; done
printf " %9s %9s %9s %9s\n" h2/h1 h2/ob1-2 t2/t1 t2/ob1-2
for setup in "equal:$rate:$rate" "uneven:$rate:half"; do
	IFS=: read -r name r0 r1 <<<"$setup"
	if [ "$r1" = half ]; then
		r1=$(awk -v r="$r0" 'BEGIN {n = r + 0; u = substr(r, length(n "") + 1); print n / 2 u}')
	fi
	"$cluster" shape 0 "$r0" && "$cluster" shape 1 "$r1" || exit 1
	for by in 65536 1048576 4194304; do
		declare -A got=()
		for ((i = 0; i < reps; i++)); do
			for c in "${configs[@]}"; do
				got[$c]+=" $(launch "$c" "$by")"
			done
		done
		printf "%-10s %8s" "$name($r0,$r1)" "$by"
		for c in "${configs[@]}"; do printf " %13s" "$(range <<<"${got[$c]}")"; done
		m2=$(median <<<"${got[host-2nic]}")
		t2=$(median <<<"${got[tagged-2nic]}")
		o2=$(median <<<"${got[ob1-2nic]}")
		printf " %9s %9s %9s %9s\n" "$(ratio "$m2" "$(median <<<"${got[host-1nic]}")")" \
			"$(ratio "$m2" "$o2")" "$(ratio "$t2" "$(median <<<"${got[tagged-1nic]}")")" \
			"$(ratio "$t2" "$o2")"
		unset got
	done
done
echo "GB/s, min-max of $reps interleaved rounds; NICs shaped with tc tbf; ratios of medians"
