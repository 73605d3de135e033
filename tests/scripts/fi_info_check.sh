#!/usr/bin/env bash
# fi_info (Debian's libfabric-bin) must list the matchbox provider, and every
# parameter the provider defines (fi_info -g matchbox) must be documented in
# the man page given as $1.
set -euo pipefail
man=$1
out=$(fi_info -p matchbox)
grep -q "provider: matchbox" <<<"$out" || { echo "fi_info -p matchbox does not list matchbox"; exit 1; }
grep -q "type: FI_EP_RDM" <<<"$out" || { echo "no FI_EP_RDM endpoint listed"; exit 1; }
params=$(fi_info -g matchbox | sed -n 's/^# \(FI_MATCHBOX_[A-Z_]*\):.*/\1/p')
[ -n "$params" ] || { echo "fi_info -g matchbox lists no parameters"; exit 1; }
missing=0
for p in $params; do
  if ! grep -q "$p" "$man"; then echo "parameter $p is missing from $man"; missing=1; fi
done
# And nothing documented that the provider no longer defines.
for p in $(grep -o '^\*FI_MATCHBOX_[A-Z_]*' "$man" | tr -d '*' | sort -u); do
  grep -qx "$p" <<<"$params" || { echo "$man documents $p, which the provider does not define"; missing=1; }
done
[ $missing = 0 ] && echo "fi_info: provider listed, $(wc -w <<<"$params") parameters all documented"
exit $missing
