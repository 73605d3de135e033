#!/usr/bin/env bash
# Point-to-point comparison on one node, two processes on the two cores:
# matchbox, libfabric's shm and tcp;ofi_rxm measured in the same run with the
# same programs (fabtests-extra/ftx_pingpong and ftx_bw), each figure with
# its ratio to shm. Usage: bench/pt2pt.sh [builddir]
set -euo pipefail
b=${1:-build}
export FI_PROVIDER_PATH=${FI_PROVIDER_PATH:-$(cd "$b" && pwd)/prov/matchbox}
provs=("matchbox" "shm" "tcp;ofi_rxm")
lat_sizes="1,8,64,512,4096,16384,65536,262144,1048576,4194304"
bw_sizes="8,4096,65536,262144,1048576,4194304"
declare -A lat bw bwhot rate
for p in "${provs[@]}"; do
  while read -r sz v; do lat[$p,$sz]=$v; done < <("$b/fabtests-extra/ftx_pingpong" -p "$p" -S $lat_sizes -I 2000 | grep -E '^[0-9]')
  while read -r sz mbs mr; do bw[$p,$sz]=$mbs; rate[$p,$sz]=$mr; done < <("$b/fabtests-extra/ftx_bw" -p "$p" -S $bw_sizes -T 0.5 | grep -E '^[0-9]')
  while read -r sz mbs mr; do bwhot[$p,$sz]=$mbs; done < <("$b/fabtests-extra/ftx_bw" -p "$p" -R 1 -S $bw_sizes -T 0.5 | grep -E '^[0-9]')
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
table() { # title, array name, sizes
  local -n v=$2
  echo "$1"
  printf "%-9s %10s %10s %12s %8s\n" bytes matchbox shm "tcp;ofi_rxm" ratio
  for s in ${3//,/ }; do
    printf "%-9s %10s %10s %12s %8s\n" "$s" "${v[matchbox,$s]}" "${v[shm,$s]}" "${v[tcp;ofi_rxm,$s]}" "$(ratio "${v[matchbox,$s]}" "${v[shm,$s]}")"
  done
  echo
}
table "Latency (half round trip, us; ratio = matchbox / shm, lower is better)" lat "$lat_sizes"
table "Streaming bandwidth, 64 distinct buffers per window (MB/s; ratio = matchbox / shm, higher is better)" bw "$bw_sizes"
table "Streaming bandwidth, one buffer reused as OSU does (MB/s; ratio = matchbox / shm)" bwhot "$bw_sizes"
echo "Message rate at 8 bytes (millions/s): matchbox ${rate[matchbox,8]}  shm ${rate[shm,8]}  tcp;ofi_rxm ${rate[tcp;ofi_rxm,8]}  ratio $(ratio "${rate[matchbox,8]}" "${rate[shm,8]}")"
