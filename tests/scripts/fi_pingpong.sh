#!/usr/bin/env bash
# Debian's fi_pingpong (an independent libfabric client) against matchbox:
# RDM endpoints, FI_MSG and FI_TAGGED modes, sizes 1 B .. 1 MiB, data checked.
set -euo pipefail
port=$((20000 + RANDOM % 20000))
for mode in msg tagged; do
  for size in 1 64 4096 65536 1048576; do
    fi_pingpong -p matchbox -e rdm -m $mode -S $size -I 200 -c -B $port >/tmp/mbx_pp_srv.$$ 2>&1 &
    srv=$!
    sleep 0.3
    if ! timeout 60 fi_pingpong -p matchbox -e rdm -m $mode -S $size -I 200 -c -P $port 127.0.0.1 >/tmp/mbx_pp_cli.$$ 2>&1; then
      echo "fi_pingpong client failed (mode $mode, size $size):"; cat /tmp/mbx_pp_cli.$$ /tmp/mbx_pp_srv.$$
      kill $srv 2>/dev/null || true; exit 1
    fi
    wait $srv || { echo "fi_pingpong server failed (mode $mode, size $size)"; cat /tmp/mbx_pp_srv.$$; exit 1; }
    echo "$mode $size: $(tail -1 /tmp/mbx_pp_cli.$$)"
    port=$((port + 1))
  done
done
rm -f /tmp/mbx_pp_srv.$$ /tmp/mbx_pp_cli.$$
