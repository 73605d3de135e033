#!/usr/bin/env bash
# mpirun's contract: PMIx exchange at 1..8 ranks (8 oversubscribes this
# machine), exit codes, a rank killed by a signal, a rank that never
# finalizes, abort, --timeout, SIGTERM forwarding, ranks that outlive a
# killed mpirun, -x and --tag-output, what PMIx says of where ranks are
# (one host and several), --bind-to; each
# with the expected status, within the expected time, and no rank process or
# temporary directory left behind. Usage: mpirun_check.sh MPIRUN PMIX_RANKS
set -uo pipefail
mpirun=$1 prog=$2 pname=$(basename "$2")
fails=0 n=0
segs() { ls /dev/shm 2>/dev/null | grep -c "^mbx-$(id -u)-" || true; }
segs_before=$(segs)
# Only directories this run leaves count: another launcher (a demo run before
# the suite, a test running beside it) may own the ones already here.
rundirs() { ls -d /tmp/mbxrun.* 2>/dev/null | sort; }
rundirs_before=$(rundirs)
check() { # name, expected status, max seconds, command...
  local name=$1 want=$2 max=$3; shift 3
  local t0 t1 rc left
  n=$((n + 1))
  t0=$(date +%s.%N)
  "$@" >/tmp/mpirun_check.out 2>&1; rc=$?
  t1=$(date +%s.%N)
  sleep 0.2
  left=$(pgrep -x "$pname" | wc -l)
  if [ "$rc" != "$want" ] || awk -v a="$t0" -v b="$t1" -v m="$max" 'BEGIN{exit !(b-a > m)}' || [ "$left" != 0 ]; then
    echo "FAIL $name: status $rc (want $want), $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s (max $max), $left leftover"
    sed 's/^/    /' /tmp/mpirun_check.out | tail -5
    pkill -9 -x "$pname"; fails=$((fails + 1))
  else
    echo "ok   $name (status $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s)"
  fi
}
expect_out() { # name, pattern
  n=$((n + 1))
  if grep -q -- "$2" /tmp/mpirun_check.out; then echo "ok   $1"; else echo "FAIL $1: no '$2' in output"; fails=$((fails + 1)); fi
}
for np in 1 2 3 4 8; do
  check "exchange at $np ranks" 0 30 "$mpirun" -n $np "$prog" ok
  [ "$(grep -c ' ok$' /tmp/mpirun_check.out)" = $np ] || { echo "FAIL $np ranks: not every rank reported"; fails=$((fails + 1)); }
done
check "exit code of the first failing rank" 7 10 "$mpirun" -n 3 "$prog" exit 7 1
check "rank killed by SIGKILL" 137 5 "$mpirun" -n 4 "$prog" kill 2
expect_out "message names the killed rank" "rank 2 "
check "rank exits without finalizing" 1 5 "$mpirun" -n 3 "$prog" nofinalize 1
expect_out "message says it did not finalize" "without finalizing"
check "abort ends every rank with its code" 5 5 "$mpirun" -n 4 "$prog" abort 5
check "--timeout" 124 6 "$mpirun" -n 2 --timeout 2 "$prog" hang
n=$((n + 1))
"$mpirun" -n 3 "$prog" hang >/tmp/mpirun_check.out 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
t0=$(date +%s)
wait $pid; rc=$?
sleep 0.2
if [ $rc = 143 ] && [ $(( $(date +%s) - t0 )) -le 3 ] && [ "$(pgrep -x "$pname" | wc -l)" = 0 ]; then
  echo "ok   SIGTERM reaches the ranks (status $rc)"
else
  echo "FAIL SIGTERM: status $rc"; pkill -9 -x "$pname"; fails=$((fails + 1))
fi
# A killed mpirun cannot end its ranks: each must notice the lost PMIx
# server and end by itself, even one that never calls MPI again. What the
# killed launcher could not clean up (its directory, the ranks' segments,
# which the provider's next endpoint on this node would reap) is removed
# here, so the checks below count only the rest.
# Only libmpi watches the server (t_launch is the MPI program; pmix_ranks
# is PMIx alone).
if [ "$pname" = t_launch ]; then
  n=$((n + 1))
  dirs_pre=$(rundirs)
  "$mpirun" -n 3 "$prog" sleep >/tmp/mpirun_check.out 2>&1 &
  pid=$!
  sleep 1.5
  ranks=$(pgrep -x "$pname")
  kill -KILL $pid
  wait $pid 2>/dev/null
  for _ in $(seq 50); do [ "$(pgrep -x "$pname" | wc -l)" = 0 ] && break; sleep 0.1; done
  left=$(pgrep -x "$pname" | wc -l)
  if [ "$left" = 0 ]; then
    echo "ok   the ranks of a killed mpirun end by themselves"
  else
    echo "FAIL $left ranks outlive a killed mpirun"; pkill -9 -x "$pname"; fails=$((fails + 1))
  fi
  # Segments are named mbx-UID-PID-...: those of this job's ranks.
  for r in $ranks; do rm -f /dev/shm/mbx-"$(id -u)-$r"-*; done
  comm -13 <(echo "$dirs_pre") <(rundirs) | grep . | xargs -r rm -rf
fi
check "-x and --tag-output" 0 10 "$mpirun" -n 2 -x MBX_CHECK=forwarded --tag-output sh -c 'echo "$MBX_CHECK"'
expect_out "rank 0 output tagged" "\[1,0\]<stdout>:forwarded"
expect_out "rank 1 output tagged" "\[1,1\]<stdout>:forwarded"
# Where PMIx says each rank is, on one host and spread over three by
# --ppn 2 (the prefix only sets a variable: every "host" is this one);
# pmix_ranks asks.
if [ "$pname" = pmix_ranks ]; then
  check "PMIx: one host" 0 10 "$mpirun" -n 2 "$prog" where
  expect_out "rank 1 is local rank 1 of the only node" "where 1 lrank 1 nrank 1 node 0 host $(hostname) peers 0,1 nodes 1"
  check "PMIx: 5 ranks on 3 hosts" 0 10 "$mpirun" -n 5 --ppn 2 --host-prefix 'env MBX_HOST=node%h' "$prog" where
  expect_out "rank 0 on node0 with rank 1" "where 0 lrank 0 nrank 0 node 0 host node0 peers 0,1 nodes 3"
  expect_out "rank 3 is local rank 1 on node1" "where 3 lrank 1 nrank 1 node 1 host node1 peers 2,3 nodes 3"
  expect_out "rank 4 alone on node2" "where 4 lrank 0 nrank 0 node 2 host node2 peers 4 nodes 3"
fi
# Binding: each rank's allowed CPUs as the kernel reports them.
cpus_of() { # rank -> its Cpus_allowed_list in the last output
  sed -n "s/^\[1,$1\]<stdout>:Cpus_allowed_list:[[:space:]]*//p" /tmp/mpirun_check.out
}
show_cpus='grep Cpus_allowed_list /proc/self/status'
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
check "unbound by default" 0 10 "$mpirun" -n 2 --tag-output sh -c "$show_cpus"
n=$((n + 1))
if [ "$(cpus_of 0)" = "$mine" ] && [ "$(cpus_of 1)" = "$mine" ]; then echo "ok   ranks keep mpirun's CPUs ($mine)"
else echo "FAIL unbound ranks have '$(cpus_of 0)' and '$(cpus_of 1)', not '$mine'"; fails=$((fails + 1)); fi
check "--bind-to core" 0 10 "$mpirun" -n 2 --bind-to core --report-bindings --tag-output sh -c "$show_cpus"
n=$((n + 1))
c0=$(cpus_of 0) c1=$(cpus_of 1)
if [ "$(nproc)" -ge 2 ] && { [ "$c0" = "$c1" ] || [ "$c0" = "$mine" ]; }; then
  echo "FAIL bound ranks have CPUs '$c0' and '$c1' of '$mine'"; fails=$((fails + 1))
elif ! grep -q "rank 1 bound to core 1 (cpus $c1)" /tmp/mpirun_check.out; then
  echo "FAIL --report-bindings does not say rank 1 has '$c1'"; fails=$((fails + 1))
else echo "ok   one core each ($c0 and $c1), as reported"; fi
last=$(taskset -pc $$ | sed 's/.*: //; s/.*[-,]//')  # the last CPU this shell may use
check "--bind-to core stays inside mpirun's own binding" 0 10 taskset -c "$last" "$mpirun" -n 2 \
  --bind-to core --tag-output sh -c "$show_cpus"
n=$((n + 1))
if [ "$(cpus_of 0)" = "$last" ] && [ "$(cpus_of 1)" = "$last" ]; then echo "ok   both ranks on CPU $last"
else echo "FAIL ranks under taskset -c $last have '$(cpus_of 0)' and '$(cpus_of 1)'"; fails=$((fails + 1)); fi
check "--bind-to with a bad word starts nothing" 2 5 "$mpirun" -n 2 --bind-to cores sh -c 'echo started'
n=$((n + 1))
if grep -q started /tmp/mpirun_check.out; then echo "FAIL a rank started"; fails=$((fails + 1)); else echo "ok   no rank started"; fi
n=$((n + 1))
left_dirs=$(comm -13 <(echo "$rundirs_before") <(rundirs) | grep . || true)
if [ -n "$left_dirs" ]; then echo "FAIL temporary directories left: $left_dirs"; fails=$((fails + 1)); else echo "ok   no temporary directories left"; fi
n=$((n + 1))
if [ "$(segs)" -gt "$segs_before" ]; then echo "FAIL shared-memory segments left: $(ls /dev/shm | grep "^mbx-$(id -u)-")"; fails=$((fails + 1)); else echo "ok   no shared-memory segments left"; fi
echo "mpirun: $((n - fails)) of $n checks passed"
[ $fails = 0 ]
