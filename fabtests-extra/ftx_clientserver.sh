#!/usr/bin/env bash
# Runs a fabtests-extra client/server program the way libfabric's fabtests
# are run: the server first, then the client naming the server on the
# command line. Usage: ftx_clientserver.sh PROGRAM SERVER_NODE ARGS...
# Passes when both exit 0 within the time limit.
set -u
prog=$1 node=$2; shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
timeout 60 "$prog" "$@" >"$out/server" 2>&1 &
spid=$!
sleep 0.3
timeout 60 "$prog" "$@" "$node" >"$out/client" 2>&1
crc=$?
wait "$spid"; src=$?
cat "$out/server" "$out/client"
if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
  echo "client exit $crc, server exit $src"
  exit 1
fi
