#!/bin/bash
# Matchbox across hosts: the fabtests-extra programs and the MPI test
# programs on network-namespace hosts (cluster.sh), shm inside a host and the
# net wire between hosts, in every connection mode; connection counts; a
# connection storm; idle teardown and rebuild mid-run; 5% datagram loss; a
# link pulled mid-run; an all-to-all of unexpected messages with a starved
# receive queue; Open MPI's mpirun and its CM path over matchbox; the same
# bed under tcp;ofi_rxm as a cross-check; two NICs a host, striped over by
# the host engine. Each check prints one line;
# the last line is "across hosts: N passed, M failed".
# usage: across.sh BUILD_DIR   (needs root and ip(8); exits 77 to skip)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build dir}" && pwd)
[ "$(id -u)" = 0 ] && command -v ip >/dev/null || { echo "needs root and ip(8)"; exit 77; }
ftx=$build/fabtests-extra
mpirun=$build/mpi/mpirun
mt=$build/tests/mpi
pass=0 fail=0
modes="static ondemand adaptive partial"

check() { # name, command...
	local name=$1 t0 out st
	shift
	t0=$(date +%s.%N)
	out=$(timeout 150 bash -c '"$@"' check "$@" 2>&1)
	st=$?
	if [ $st = 0 ]; then
		pass=$((pass + 1))
		echo "$out" | grep -q "launching once more" && name+=" [Open MPI launched twice]"
		awk -v n="$name" -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "ok   %s (%.1f s)\n", n, b - a}'
	else
		fail=$((fail + 1))
		echo "FAIL $name: status $st"
		echo "$out" | grep -v "^libfabric:" | tail -n 8 | sed 's/^/    /'
	fi
}

mpi() { # hosts, program, env assignments...
	local hosts=$1 prog=$2 xs=() v
	shift 2
	for v in "$@"; do xs+=(-x "$v"); done
	ip netns exec mbx-h0 "$mpirun" -n $((2 * hosts)) --ppn 2 \
		--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 "${xs[@]}" \
		--timeout 120 "$mt/$prog"
}

conn() { # hosts, mode, ftx_conn args...
	local hosts=$1 mode=$2
	shift 2
	env FTX_HOSTS="$hosts" FI_MATCHBOX_CONN_MODE="$mode" "$ftx/ftx_conn" "$@"
}

# Verbs' default message threshold (over tcp/udp a busy peer is not
# connected unless asked): connections opened mid-traffic.
conn16() { # conn arguments...
	FI_MATCHBOX_CONN_THRESHOLD=16 conn "$@"
}

# A fabtests-style client/server program across hosts: the server bound at
# host 1's address, the client on host 0 naming it, as a user would run them.
cs_hosts() { # program, args...
	local prog=$ftx/$1 a0 a1 spid crc srv
	shift
	a0=$("$here/cluster.sh" addr 0)
	a1=$("$here/cluster.sh" addr 1)
	export FI_PROVIDER_PATH=$build/prov/matchbox
	ip netns exec mbx-h1 timeout 60 "$prog" "$@" -s "$a1" &
	spid=$!
	sleep 0.5
	ip netns exec mbx-h0 timeout 60 "$prog" "$@" -s "$a0" "$a1"
	crc=$?
	wait $spid
	srv=$?
	[ $crc = 0 ] && [ $srv = 0 ]
}

# Every rank reports the default threshold as none and no connection open.
dgram_default() {
	local out
	out=$(FTX_CONN_VERBOSE=1 conn 4 adaptive -n 8 -M 20 2>&1) || { echo "$out"; return 1; }
	grep "threshold" <<<"$out" | head -n 2
	[ "$(grep -c "adaptive, threshold 0: 0 open" <<<"$out")" = 8 ]
}

# The budget limits busy connections, so it is tested at threshold 16.
conn_budget() { # budget, conn arguments...
	FI_MATCHBOX_CONN_MAX=$1 conn16 "${@:2}"
}

# Drop 5% of UDP on every host (tc netem is not in every kernel; nftables'
# random numbers do the same job).
loss() { # on|off
	local k
	for ((k = 0; k < MBX_HOSTS; k++)); do
		if [ "$1" = on ]; then
			ip netns exec "mbx-h$k" nft -f - <<-EOF || return 1
				table inet mbxloss {
					chain in { type filter hook input priority 0; meta l4proto udp numgen random mod 100 < 5 drop; }
					chain out { type filter hook output priority 0; meta l4proto udp numgen random mod 100 < 5 drop; }
				}
			EOF
		else
			ip netns exec "mbx-h$k" nft delete table inet mbxloss 2>/dev/null
		fi
	done
	return 0
}

# The client/server programs between two hosts.
client_server() {
	check "ftx_addr: node/service and fi_getname, FI_ADDR_STR, 2 hosts" cs_hosts ftx_addr \
		-p matchbox -P 9501
	check "ftx_addr: FI_SOCKADDR_IN, 2 hosts" cs_hosts ftx_addr -p matchbox -P 9511 -F in
	check "ftx_rma: every call, access violations, RMA events, 2 hosts" cs_hosts ftx_rma \
		-p matchbox -P 9521 -E
	# Without counters the target offers its keys, and what follows goes by
	# the core's own fi_write/fi_read (-C); the regions then close and one
	# opens again under the same key (-K).
	check "ftx_rma with scalable keys and offsets (mr_mode none), core RMA, a key registered again, 2 hosts" \
		cs_hosts ftx_rma -p matchbox -P 9531 -m none -C -K
	check "ftx_rma with provider keys and virtual addresses, core RMA, a region registered again, 2 hosts" \
		cs_hosts ftx_rma -p matchbox -P 9535 -m prov_key,virt_addr -C -K
	# Every size by the core, in 4 KiB pieces with 32 KiB of them in flight:
	# operations wait for the window and scatter lists are cut in pieces
	# (a read alone too).
	check "ftx_rma by the core in small pieces, 2 hosts" bash -c 'FI_MATCHBOX_NET_RMA_CORE_MAX=1073741824 \
		FI_MATCHBOX_NET_RMA_CHUNK=4096 FI_MATCHBOX_NET_RMA_ALONE=0 cs_hosts ftx_rma -p matchbox \
		-P 9537 -m none -C -K'
	check "ftx_atomic: every operation and datatype against a model, 2 hosts" cs_hosts \
		ftx_atomic -p matchbox -P 9551 -S
	# Sleeping in epoll on the CQ's and counter's descriptors, and in a
	# wait set, while the messages come from the other host (the core
	# CQs' descriptors are in the epoll sets).
	check "ftx_wait: epoll on FI_GETWAIT descriptors after fi_trywait, 2 hosts" cs_hosts \
		ftx_wait -p matchbox -P 9561 -W fd
	check "ftx_wait: a wait set over a CQ and a counter, 2 hosts" cs_hosts ftx_wait \
		-p matchbox -P 9565 -W set
	# tcp;ofi_rxm does not enforce access rights at the target (1.17): -V.
	check "ftx_rma over tcp;ofi_rxm (the bed without matchbox), 2 hosts" cs_hosts ftx_rma \
		-p "tcp;ofi_rxm" -P 9541 -V
}

two_hosts() {
	local p mode t
	for mode in $modes; do
		for p in ftx_pingpong ftx_bw ftx_unexp ftx_wild ftx_peek ftx_multirecv ftx_trunc ftx_cancel; do
			check "$p $mode, 2 hosts" env FTX_HOSTS=2 FI_MATCHBOX_CONN_MODE=$mode "$ftx/$p" \
				$([ $p = ftx_pingpong ] && echo -S 1,64,4096,65536,1048576 -I 20)
		done
	done
	client_server
	# Large messages over a connection are pulled with fi_read (tcp has
	# FI_RMA); the clear-to-send path stays covered with it turned off.
	# Requests carry no head over tcp unless asked to (they did not pay);
	# the heads' paths stay covered with FI_MATCHBOX_NET_RTS_HEAD set.
	check "large messages by fi_read, no heads over tcp by default (ftx_pingpong, counted at close), 2 hosts" \
		by_read static
	check "large messages by fi_read, requests with their head (FI_MATCHBOX_NET_RTS_HEAD=65536), 2 hosts" \
		pingpong_counts ' [1-9][0-9]* large messages pulled by fi_read in [0-9]+ reads, [1-9][0-9]* sent with their head' \
		100000,1048576,4194304 20 FI_MATCHBOX_CONN_MODE=static FI_MATCHBOX_NET_RTS_HEAD=65536
	check "a stream of large messages: heads only where none is unfinished ahead, 2 hosts" stream_heads
	# A message with less left to read than a head carries none (a 64 KiB
	# head and a small read stalled tcp connections): of 70000 and 131072
	# bytes, 23 messages each, only the larger have heads.
	check "no head where less than it would be left to read, 2 hosts" \
		pingpong_counts ' 46 large messages pulled by fi_read in 46 reads, 23 sent with their head' \
		70000,131072 20 FI_MATCHBOX_NET_RTS_HEAD=65536
	# 20 round trips of 256 KiB and the 3 of the warm-up: each message's
	# 192 KiB after its head in one read, or two with pieces to the end.
	check "a ping-pong's message read alone: the rest after its head in one fi_read, 2 hosts" \
		pingpong_counts ' 23 large messages pulled by fi_read in 23 reads, 23 sent' 262144 20 \
		FI_MATCHBOX_NET_RTS_HEAD=65536 FI_MATCHBOX_NET_RMA_CHUNK=131072
	check "the same in pieces with FI_MATCHBOX_NET_RMA_ALONE=0, 2 hosts" \
		pingpong_counts ' 23 large messages pulled by fi_read in 46 reads, 23 sent' 262144 20 \
		FI_MATCHBOX_NET_RMA_ALONE=0 FI_MATCHBOX_NET_RMA_CHUNK=131072 FI_MATCHBOX_NET_RTS_HEAD=65536
	check "reads of 1 MiB over tcp on cubic (one alone up to 16 MiB), of 128 KiB under bbr, 2 hosts" \
		chunk_by_cc
	check "fi_read by the core: 256 KiB alone in one piece, in a window in two, 2 hosts" \
		rma_pieces alone
	check "fi_read by the core: every 256 KiB read in two with FI_MATCHBOX_NET_RMA_ALONE=0, 2 hosts" \
		rma_pieces pieces
	check "MPI t_stream, host engine: windows of 1 MiB read whole by the core, no datagram dropped, 2 hosts" \
		stream_lossless
	# A peer still on datagrams (under the message threshold, or past the
	# connection budget) gets the connection its data is read over, not
	# clear-to-send over a low-priority one (2.3x slower a MiB).
	check "large messages by fi_read from a peer on datagrams, no low-priority connection, 2 hosts" \
		by_read adaptive FI_MATCHBOX_CONN_THRESHOLD=1000000000
	check "clear-to-send data by the low-priority connection (counted at close), 2 hosts" by_cts
	# Sends from one buffer again, from one unmapped and mapped anew at its
	# address, given back, malloc'd and freed: every byte checked, and the
	# cache must have found the reused registration and dropped the stale.
	check "registration cache: reused, unmapped, remapped, freed buffers, 2 hosts" env \
		FTX_HOSTS=2 "$ftx/ftx_regcache" -C 1
	check "registration cache off (FI_MATCHBOX_MR_CACHE_MAX_COUNT=0), 2 hosts" env \
		FTX_HOSTS=2 FI_MATCHBOX_MR_CACHE_MAX_COUNT=0 "$ftx/ftx_regcache"
	# Small frames leave a connected peer's connection for datagrams once
	# the connection is drained; sizes either side of a datagram make them
	# switch back and forth, and ftx_wild checks the order.
	check "small frames by datagram to a connected peer (counted at close), 2 hosts" small_dgram
	check "a stream by connection ring writes (counted at close), 2 hosts" ring_counts \
		"[0-9]{4,} connection frames \([0-9]{4,} by ring write\)"
	check "no connection rings (FI_MATCHBOX_CONN_RING=0), 2 hosts" ring_counts \
		"[0-9]{4,} connection frames \(0 by ring write\)" FI_MATCHBOX_CONN_RING=0
	check "a ping-pong's lone frames go by send, not ring write, 2 hosts" pingpong_counts \
		"connection frames \(0 by ring write\)" 4096 200 FI_MATCHBOX_CONN_MODE=static
	check "lone frames by ring write (FI_MATCHBOX_CONN_RING_LONE), 2 hosts" pingpong_counts \
		"connection frames \([1-9][0-9]{2,} by ring write\)" 4096 200 \
		FI_MATCHBOX_CONN_MODE=static FI_MATCHBOX_CONN_RING_LONE=65536
	check "lone frames by ring write where the routes acknowledge at once, 2 hosts" quick_acks
	check "ftx_wild, sizes either side of a datagram, switching channels, 2 hosts x 2" env \
		FTX_HOSTS=2 FI_MATCHBOX_CONN_THRESHOLD=2 "$ftx/ftx_wild" -n 4 -M 2000 -L 3000
	check "ftx_wild, lone frames by ring write too, 2 hosts x 2" env FTX_HOSTS=2 \
		FI_MATCHBOX_CONN_THRESHOLD=2 FI_MATCHBOX_CONN_RING_LONE=65536 "$ftx/ftx_wild" -n 4 \
		-M 2000 -L 3000
	# Every rank reads from and writes to the next in bursts of 20000: a
	# target answers reads from transmit entries its own reads must not
	# take all of (the cycle stalled, and the peers declared each other
	# dead); by the core's RMA and by frames.
	check "ftx_rmaring, every rank reading the next at once, 2 hosts x 2" env FTX_HOSTS=2 \
		"$ftx/ftx_rmaring" -n 4
	check "ftx_rmaring by frames (FI_MATCHBOX_NET_RMA=0), 2 hosts x 2" env FTX_HOSTS=2 \
		FI_MATCHBOX_NET_RMA=0 "$ftx/ftx_rmaring" -n 4
	check "ranks with other net buffer sizes fail the pair at once, not hang, 2 hosts" mismatch
	for p in ftx_pingpong ftx_bw ftx_trunc ftx_unexp; do
		check "$p by clear-to-send (FI_MATCHBOX_NET_RMA=0), 2 hosts" env FTX_HOSTS=2 \
			FI_MATCHBOX_NET_RMA=0 "$ftx/$p" $([ $p = ftx_pingpong ] && echo -S 65536,1048576 -I 20)
	done
	for mode in $modes; do
		check "ftx_conn counts $mode, 2 hosts x 2" conn 2 "$mode" -n 4 -M 4
		for t in t_env t_p2p t_coll t_comm t_dtype t_errors; do
			check "MPI $t $mode, 2 hosts x 2" mpi 2 "$t" FI_MATCHBOX_CONN_MODE="$mode"
		done
	done
	check "MPI t_p2p, idle teardown every 20 ms" mpi 2 t_p2p FI_MATCHBOX_CONN_IDLE_MS=20 \
		FI_MATCHBOX_CONN_THRESHOLD=2
	check "MPI t_coll, every collective point to point among all ranks (no node leaders), 2 hosts x 2" \
		mpi 2 t_coll MATCHBOX_MPI_COLL_HIER=0
	check "MPI t_coll, idle teardown every 20 ms" mpi 2 t_coll FI_MATCHBOX_CONN_IDLE_MS=20 \
		FI_MATCHBOX_CONN_THRESHOLD=2
	check "MPI t_p2p, tagged engine: messages of 64-128 KiB pushed in pieces, 2 hosts x 2" \
		tagged_pushes yes
	check "MPI t_p2p, tagged engine: none pushed with MATCHBOX_MPI_TAGGED_PUSH_FRAMES=0, 2 hosts x 2" \
		tagged_pushes no MATCHBOX_MPI_TAGGED_PUSH_FRAMES=0
	check "MPI t_p2p, requests with heads (FI_MATCHBOX_NET_RTS_HEAD=65536), 2 hosts x 2" mpi 2 t_p2p \
		FI_MATCHBOX_NET_RTS_HEAD=65536
	check "MPI t_p2p by clear-to-send (both classes), idle teardown every 20 ms" mpi 2 t_p2p \
		FI_MATCHBOX_CONN_IDLE_MS=20 FI_MATCHBOX_CONN_THRESHOLD=2 FI_MATCHBOX_NET_RMA=0
	check "MPI t_p2p over tcp;ofi_rxm (the bed without matchbox; host engine)" mpi 2 t_p2p \
		"MATCHBOX_MPI_PROVIDER=tcp;ofi_rxm" FI_TCP_IFACE=eth0
	# The host engine across hosts: over matchbox (rendezvous read over the
	# net wire's RMA, and by clear-to-send), and the tagged engine over rxm.
	for t in t_p2p t_coll t_win t_dtype; do
		check "MPI $t, host engine over matchbox, 2 hosts x 2" mpi 2 "$t" MATCHBOX_MPI_ENGINE=host
	done
	# A rank computing for 8 s without an MPI call while its partner on the
	# other host waits on it (the default give-up was once 5 s).
	check "MPI t_quiet, a rank silent for 8 s, 2 hosts x 2" mpi 2 t_quiet
	check "MPI t_quiet, host engine, 2 hosts x 2" mpi 2 t_quiet MATCHBOX_MPI_ENGINE=host
	check "MPI t_p2p, host engine by clear-to-send, 2 hosts x 2" mpi 2 t_p2p \
		MATCHBOX_MPI_ENGINE=host MATCHBOX_MPI_HOST_RDMA=0
	# Partners on the two hosts each read 600 of the other's messages at
	# once: more than the transmit entries left for answering reads once
	# each side's own reads hold theirs (the reads the provider could not
	# answer once held up the data of its own, and both waited for ever).
	check "MPI t_p2p, host engine: 600 rendezvous each way before the receives, 2 hosts x 2" \
		mpi 2 t_p2p MATCHBOX_MPI_ENGINE=host MT_P2P_SBR=600
	# The tagged engine the same: past 256 gated non-contiguous sends each
	# way, waiting by match completion instead of acknowledgement receives.
	check "MPI t_p2p, tagged engine: 600 each way before the receives, 2 hosts x 2" \
		mpi 2 t_p2p MATCHBOX_MPI_ENGINE=tagged MT_P2P_SBR=600
	check "MPI t_p2p, tagged engine over tcp;ofi_rxm, 2 hosts x 2" mpi 2 t_p2p \
		"MATCHBOX_MPI_PROVIDER=tcp;ofi_rxm" MATCHBOX_MPI_ENGINE=tagged FI_TCP_IFACE=eth0
	host_rails
}
host_rails() {
	# t_mix: over ofi_rxm's multi-receive buffers it lost a fragment and
	# hung in 2 jobs of 3 here.
	for t in t_p2p t_coll t_win t_mix; do
		check "MPI $t, host engine by shm within a host and tcp;ofi_rxm between, 2 hosts x 2" \
			rails "$t"
	done
}

# t_p2p under the tagged engine, and then every rank's count of messages it
# pushed to the other host in pieces (MATCHBOX_MPI_VERBOSE=2): t_p2p sends
# its right-hand neighbour messages of 65537-130944 bytes (eager_limits,
# pushed), so ranks 1 and 3, whose neighbour is on the other host, push;
# ranks 0 and 2 push nothing (theirs is on their own host); nobody pushes
# with pushing off.
tagged_pushes() { # yes|no, env assignments...
	local want=$1 out n
	shift
	out=$(mpi 2 t_p2p MATCHBOX_MPI_ENGINE=tagged MATCHBOX_MPI_VERBOSE=2 "$@" 2>&1) ||
		{ echo "$out" | tail -n 8; return 1; }
	n=$(grep -cE "rank [02]: tagged engine: 0 messages pushed" <<<"$out")
	[ "$n" = 2 ] || { echo "$n of ranks 0 and 2 pushed nothing"; return 1; }
	if [ "$want" = yes ]; then
		n=$(grep -cE "rank [13]: tagged engine: [1-9][0-9]* messages pushed" <<<"$out")
		[ "$n" = 2 ] || { echo "$n of ranks 1 and 3 pushed"; return 1; }
	else
		n=$(grep -cE "rank [13]: tagged engine: 0 messages pushed" <<<"$out")
		[ "$n" = 2 ] || { echo "$n of ranks 1 and 3 pushed nothing"; return 1; }
	fi
}

# The host engine with a provider per class of peer: the program's own
# checks, and then every rank's count of frames sent and received on each
# provider (MATCHBOX_MPI_VERBOSE=2), which must both be non-zero: each
# rail carried the traffic of its peers.
rails() { # program
	local out n p
	out=$(mpi 2 "$1" MATCHBOX_MPI_ENGINE=host "MATCHBOX_MPI_HOST_PROVIDERS=shm,tcp;ofi_rxm" \
		FI_TCP_IFACE=eth0 MATCHBOX_MPI_VERBOSE=2 2>&1) || { echo "$out" | tail -n 8; return 1; }
	for p in 'shm' 'tcp;ofi_rxm'; do
		n=$(grep -c "host engine: $p: [1-9][0-9]* frames sent, [1-9][0-9]* received" <<<"$out")
		[ "$n" = 4 ] || { echo "$n ranks of 4 sent and received frames by $p"; return 1; }
	done
}

# Two NICs a host (MBX_RAILS=2): the host engine opens tcp;ofi_rxm on each
# and reads large messages from the other host over both. The programs check
# their data; then every rank that read from the other host must have read
# bytes over eth1 as well as eth0, and no rank sent a frame on eth1 (only
# rail 0 carries frames, so MPI's order stays the provider's).
net_rails() { # program
	local out n
	out=$(mpi 2 "$1" MATCHBOX_MPI_ENGINE=host "MATCHBOX_MPI_HOST_PROVIDERS=shm,tcp;ofi_rxm" \
		MATCHBOX_MPI_HOST_NET_DOMAINS=eth0,eth1 MATCHBOX_MPI_VERBOSE=2 2>&1) ||
		{ echo "$out" | tail -n 8; return 1; }
	n=$(grep -c "host engine: tcp;ofi_rxm on eth1: 0 frames sent, 0 received, [1-9][0-9]* bytes read" <<<"$out")
	[ "$n" -ge 2 ] || { echo "$n ranks of 4 read over eth1 (at least 2 should)"; return 1; }
	n=$(grep -c "host engine: tcp;ofi_rxm on eth0: [1-9][0-9]* frames sent, .* [1-9][0-9]* bytes read" <<<"$out")
	[ "$n" -ge 2 ] || { echo "$n ranks of 4 read over eth0 (at least 2 should)"; return 1; }
	! grep -q "on eth1: [1-9]" <<<"$out" || { echo "frames on eth1"; return 1; }
}
# The same two NICs under the tagged engine: matchbox's own rails
# (FI_MATCHBOX_NET_RAILS). Frames stay on eth0; large messages from the
# other host are read over both. Each rank prints its bytes read per rail at
# close (FI_LOG_LEVEL=info); with the policy given, at least two ranks must
# have read over eth1, and under striping over eth0 too, in the same run.
prov_rails() { # program, policy
	local out n
	out=$(mpi 2 "$1" MATCHBOX_MPI_ENGINE=tagged FI_MATCHBOX_NET_IFACE=eth0 \
		FI_MATCHBOX_NET_RAILS=eth1 FI_MATCHBOX_RAIL_POLICY="$2" FI_LOG_LEVEL=info 2>&1) ||
		{ echo "$out" | grep -v 'libfabric:' | tail -n 8; return 1; }
	n=$(grep -c "net rails: 2; bytes read over each: [0-9]* [1-9][0-9]* 0 0" <<<"$out")
	[ "$n" -ge 2 ] || { echo "$n ranks of 4 read over eth1 (at least 2 should)"; return 1; }
	if [ "$2" = stripe ]; then
		n=$(grep -c "net rails: 2; bytes read over each: [1-9][0-9]* [1-9][0-9]* 0 0" <<<"$out")
		[ "$n" -ge 2 ] || { echo "$n ranks of 4 read over both rails (at least 2 should)"; return 1; }
	fi
}
# MATCHBOX_MPI_ENGINE left at auto with two NICs named and no other
# provider for the host engine: the tagged engine, over matchbox's rails.
auto_rails() {
	local out n
	out=$(mpi 2 t_p2p MATCHBOX_MPI_HOST_NET_DOMAINS=eth0,eth1 MATCHBOX_MPI_VERBOSE=1 \
		FI_LOG_LEVEL=info 2>&1) || { echo "$out" | grep -v 'libfabric:' | tail -n 8; return 1; }
	grep -q "tagged engine over matchbox (auto: matchbox stripes over the NICs" <<<"$out" ||
		{ echo "auto did not take the tagged engine over matchbox's rails"; return 1; }
	n=$(grep -c "net rails: 2; bytes read over each: [1-9][0-9]* [1-9][0-9]* 0 0" <<<"$out")
	[ "$n" -ge 2 ] || { echo "$n ranks of 4 read over both rails (at least 2 should)"; return 1; }
}
two_rails() {
	check "MPI t_p2p, host engine striping over two NICs (eth0, eth1), 2 hosts x 2" net_rails t_p2p
	check "MPI t_p2p, tagged engine, matchbox striping over two NICs, 2 hosts x 2" \
		prov_rails t_p2p stripe
	check "MPI t_p2p, tagged engine, matchbox rails by binding, 2 hosts x 2" \
		prov_rails t_p2p binding
	check "MPI t_p2p, tagged engine, matchbox rails round robin, 2 hosts x 2" \
		prov_rails t_p2p round_robin
	check "MPI t_p2p, engine auto with two NICs named: tagged over matchbox's rails, 2 hosts x 2" \
		auto_rails
}

# ftx_pingpong on 2 hosts; both ranks' counts at close (FI_LOG_LEVEL=info)
# must match the pattern.
pingpong_counts() { # pattern, sizes, iterations, env assignments...
	local out re=$1 sizes=$2 iters=$3
	shift 3
	out=$(env FTX_HOSTS=2 FI_LOG_LEVEL=info FI_LOG_PROV=matchbox "$@" "$ftx/ftx_pingpong" \
		-S "$sizes" -I "$iters" 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -oE "net: .*"
	[ "$(echo "$out" | grep -cE "$re")" = 2 ]
}

by_read() { # mode, env assignments...
	pingpong_counts ' [1-9][0-9]* large messages pulled by fi_read in [0-9]+ reads, 0 sent with their head; 0 low-priority' \
		100000,1048576,4194304 20 FI_MATCHBOX_CONN_MODE="$1" "${@:2}"
}

# The close statistics' reads by the core and their pieces, of the rank
# that read most: "reads pieces".
core_reads() { # provider output
	grep -oE '\([0-9]+ reads in [0-9]+ pieces\)' <<<"$1" |
		awk '{ gsub(/\(/, "") } $1 > r { r = $1; p = $4 } END { print r + 0, p + 0 }'
}

# fi_read by the core: one alone on its connection goes whole up to
# FI_MATCHBOX_NET_RMA_ALONE, others in pieces (ftx_rmabench reads one at a
# time, then in windows of 64); with the parameter 0 every read in pieces.
# Pieces of 128 KiB (on cubic they are 1 MiB, which 256 KiB fits whole).
rma_pieces() { # alone|pieces
	local out reads pieces
	out=$(env FTX_HOSTS=2 FI_LOG_LEVEL=info FI_LOG_PROV=matchbox FI_MATCHBOX_NET_RMA_CHUNK=131072 \
		$([ "$1" = pieces ] && echo FI_MATCHBOX_NET_RMA_ALONE=0) "$ftx/ftx_rmabench" \
		-S 262144 -I 20 -T 0.01 2>&1) || { echo "$out"; return 1; }
	read -r reads pieces < <(core_reads "$out")
	echo "reads $reads, pieces $pieces"
	[ "$reads" -ge 20 ] || return 1
	if [ "$1" = pieces ]; then
		[ "$pieces" -eq $((2 * reads)) ]
	else
		[ "$pieces" -le $((2 * reads - 20)) ]
	fi
}

# The hosts' count of datagrams their sockets had no room for.
rcvbuf_drops() {
	local h sum=0 v
	for h in 0 1; do
		v=$(ip netns exec "mbx-h$h" awk '$1 == "Udp:" { if (!k) { for (i = 2; i <= NF; i++)
			if ($i == "RcvbufErrors") k = i } else { print $k; exit } }' /proc/net/snmp)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# Windows of 64 messages of 1 MiB each way between the hosts under the host
# engine, every word checked (t_stream): the core reads them in 1 MiB pieces
# on cubic, the hosts drop no datagram and a rank retransmits next to
# nothing. Before progress read every waiting datagram, libfabric's udp took
# one a call off a socket that calls lasting milliseconds let overflow, and
# cold channels went unread for up to 78 ms: 27-172 retransmissions a rank
# here, 500-1,500 and a third of the bandwidth in bench/mpi/mbench.c's stream.
stream_lossless() {
	local out d0 d1 r reads pieces
	d0=$(rcvbuf_drops)
	out=$(ip netns exec mbx-h0 "$mpirun" -n 2 --ppn 1 --host-prefix "ip netns exec mbx-h%h" \
		--pmix-if eth0 -x MATCHBOX_MPI_ENGINE=host -x MT_STREAM_ROUNDS=8 -x FI_LOG_LEVEL=info \
		-x FI_LOG_PROV=matchbox --timeout 120 "$mt/t_stream" 2>&1) || { echo "$out" | tail -n 8; return 1; }
	d1=$(rcvbuf_drops)
	grep -E "^t_stream: " <<<"$out"
	r=$(grep -oE '[0-9]+ retransmits' <<<"$out" | awk '$1 > m { m = $1 } END { print m + 0 }')
	read -r reads pieces < <(core_reads "$out")
	echo "datagrams dropped $((d1 - d0)), most retransmissions of a rank $r, reads $reads in $pieces pieces"
	[ "$d1" = "$d0" ] && [ "$r" -lt 16 ] && [ "$reads" -ge 128 ] || return 1
	[ "$(ip netns exec mbx-h0 sysctl -n net.ipv4.tcp_congestion_control)" != cubic ] ||
		[ "$pieces" = "$reads" ]
}

# A stream of large messages: only an RTS with none of ours unfinished
# ahead of it carries a head, so the sender's heads are a few of the
# messages the receiver pulled (one a window of 64, give or take).
stream_heads() {
	local out heads pulled
	out=$(env FTX_HOSTS=2 FI_LOG_LEVEL=info FI_LOG_PROV=matchbox FI_MATCHBOX_NET_RTS_HEAD=65536 \
		"$ftx/ftx_bw" -S 262144 -T 0.1 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -oE "net: .*"
	pulled=$(echo "$out" | grep -oE '[0-9]+ large messages pulled' | awk '$1 > m { m = $1 } END { print m + 0 }')
	heads=$(echo "$out" | grep -oE '[0-9]+ sent with their head' | awk '$1 > m { m = $1 } END { print m + 0 }')
	echo "pulled $pulled, heads $heads"
	[ "$heads" -ge 1 ] && [ "$pulled" -ge 64 ] && [ $((heads * 8)) -le "$pulled" ]
}

small_dgram() {
	pingpong_counts 'max 1 open; [0-9]{4,} datagram and [0-9]{1,2} connection frames' 8 1000 \
		FI_MATCHBOX_CONN_THRESHOLD=2
}

# With both hosts' routes acknowledging TCP data at once, the provider lets
# a ping-pong's 4 KiB frames into the ring unasked; 8 KiB ones still go by
# send.
# The read size follows the hosts' TCP congestion control: the 4128784
# bytes after a 4 MiB message's head in 4 reads of up to 1 MiB on cubic
# (the bed's default), under bbr in 31 (30 of 128 KiB, then the last 192
# KiB at once: a ping-pong's read is alone); 23 messages.
chunk_by_cc() {
	local ret
	# On cubic: pieces of 1 MiB, and a message read alone whole up to 16 MiB.
	pingpong_counts ' 23 large messages pulled by fi_read in 92 reads' 4194304 20 \
		FI_MATCHBOX_NET_RMA_ALONE=0 || return 1
	pingpong_counts ' 23 large messages pulled by fi_read in 23 reads' 4194304 20 || return 1
	"$here/cluster.sh" cc bbr || return 1
	pingpong_counts ' 23 large messages pulled by fi_read in 713 reads' 4194304 20
	ret=$?
	"$here/cluster.sh" cc "${MBX_TCP_CC:-cubic}" || return 1
	return $ret
}

quick_acks() {
	local ret
	"$here/cluster.sh" acks quick || return 1
	pingpong_counts "connection frames \([1-9][0-9]{2,} by ring write\)" 4096 200 \
		FI_MATCHBOX_CONN_MODE=static &&
		pingpong_counts "connection frames \(0 by ring write\)" 8192 200 \
			FI_MATCHBOX_CONN_MODE=static
	ret=$?
	"$here/cluster.sh" acks delayed || return 1
	return $ret
}

# A stream of 4 KiB messages goes into the receiver's connection ring (its
# answers, one a window, go by send: nothing of theirs is untaken); with
# the rings off, every frame goes by send. ftx_bw checks the data.
ring_counts() { # pattern the sender's line must match, env assignments...
	local out re=$1
	shift
	out=$(env FTX_HOSTS=2 FI_LOG_LEVEL=info FI_LOG_PROV=matchbox "$@" "$ftx/ftx_bw" -S 4096 \
		-T 0.1 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -oE "net: .*"
	grep -qE "$re" <<<"$out" && grep -q " 0 bad;" <<<"$out" && ! grep -qE " [1-9][0-9]* bad;" <<<"$out"
}

# A job whose ranks disagree on the net buffer sizes must not corrupt or
# hang: the connection is refused with a reason, both sides fail the pair
# (error completions, the MPI program aborts with the cause), within seconds.
mismatch() {
	local out st
	out=$(ip netns exec mbx-h0 "$mpirun" -n 2 --ppn 1 --host-prefix "ip netns exec mbx-h%h" \
		--pmix-if eth0 -x FI_MATCHBOX_CONN_MODE=static -x FI_LOG_LEVEL=warn \
		-x FI_LOG_PROV=matchbox --timeout 60 "$here/on_rank1" FI_MATCHBOX_NET_EAGER=4096 \
		"$mt/t_p2p" 2>&1)
	st=$?
	echo "$out" | grep -E "must match|failed in the provider" | head -n 4
	[ $st != 0 ] && [ $st != 124 ] && ! grep -q "exceeded --timeout" <<<"$out" &&
		grep -q "must match across the job" <<<"$out" &&
		grep -q "an operation failed in the provider" <<<"$out"
}

# Without fi_read the data follows a clear-to-send as DATA frames, which go
# by a second, low-priority connection into the large-buffer queue.
by_cts() {
	pingpong_counts ' [1-9][0-9]* low-priority connections, [1-9][0-9]* frames' 100000,1048576 20 \
		FI_MATCHBOX_CONN_MODE=static FI_MATCHBOX_NET_RMA=0
}

four_hosts() {
	local mode t
	for mode in $modes; do
		check "ftx_conn storm and counts $mode, 4 hosts x 2, 4 messages" conn 4 "$mode" -n 8 -M 4
		# At verbs' threshold of 16, adaptive and partial connect busy
		# peers in the middle of the storm, with datagrams in flight.
		check "ftx_conn storm and counts $mode, 4 hosts x 2, 20 messages, threshold 16" conn16 4 "$mode" \
			-n 8 -M 20
		# t_coll and t_comm are the slowest programs here (8 ranks on 2
		# cores); the storms above already cover each mode's connection
		# patterns, so t_coll skips ondemand and t_comm runs in static and
		# adaptive (the default) only.
		for t in t_p2p t_coll t_comm; do
			case $mode/$t in ondemand/t_coll | ondemand/t_comm | partial/t_comm) continue ;; esac
			check "MPI $t $mode, 4 hosts x 2" mpi 4 "$t" FI_MATCHBOX_CONN_MODE="$mode"
		done
	done
	# Intercommunicators whose local halves span nodes: their node
	# communicators cannot take the upper half of the local half's context
	# slot (hier_get in mbmpi_coll.c).
	check "MPI t_inter, 4 hosts x 2" mpi 4 t_inter
	# Over tcp/udp a busy peer is not connected by default: its small
	# messages are faster by datagram.
	check "ftx_conn storm adaptive by default over tcp/udp: datagrams only, 4 hosts x 2, 20 messages" \
		dgram_default
	# A connection budget below the peers that earn one: the rest stay on
	# datagrams, large frames still get the connections they need.
	check "ftx_conn storm, adaptive with a connection budget of 2, 4 hosts x 2, 20 messages" \
		conn_budget 2 4 adaptive -n 8 -M 20
	for t in t_p2p t_coll; do
		check "MPI $t adaptive with a connection budget of 1, 4 hosts x 2" mpi 4 "$t" \
			FI_MATCHBOX_CONN_MODE=adaptive FI_MATCHBOX_CONN_MAX=1 FI_MATCHBOX_CONN_THRESHOLD=2
	done
	for mode in $modes; do
		check "ftx_wild $mode, 4 hosts x 2" env FTX_HOSTS=4 FI_MATCHBOX_CONN_MODE=$mode \
			"$ftx/ftx_wild" -n 8 -M 100
	done
	# Flow control at its tightest: one buffer per connection and 1-frame
	# windows, every rank's blocks to every other arriving unexpected
	# (bench/mpi/ftis.c checks the data): slow, never dropped or stuck.
	local sz
	for sz in 8192 131072; do
		check "unexpected all-to-all of $sz B, starved receive queue, 4 hosts x 2" \
			ftis_starved 4 "$sz"
	done
	# The same with the data in low-priority frames: both queues starved.
	check "unexpected all-to-all of 131072 B by clear-to-send, both queues starved, 4 hosts x 2" \
		ftis_starved 4 131072 -x FI_MATCHBOX_NET_RMA=0
}
ftis_starved() { # hosts, bytes, extra mpirun arguments...
	local out hosts=$1 bytes=$2
	shift 2
	out=$(ip netns exec mbx-h0 "$mpirun" -n $((2 * hosts)) --ppn 2 \
		--host-prefix "ip netns exec mbx-h%h" --pmix-if eth0 -x FI_MATCHBOX_CONN_MODE=static \
		-x FI_MATCHBOX_SRQ_K=0 -x FI_MATCHBOX_SRQ_B=1 -x FI_MATCHBOX_NET_CREDITS=1 "$@" \
		--timeout 120 "$ftisbin" "$bytes" 5) || return 1
	echo "$out"
	grep -qE "^ftis $bytes $((2 * hosts)) " <<<"$out"
}

idle_and_loss() {
	local mode
	for mode in adaptive ondemand; do
		check "ftx_conn idle teardown and rebuild $mode, 4 hosts x 2" \
			env FI_MATCHBOX_CONN_IDLE_MS=100 FTX_HOSTS=4 FI_MATCHBOX_CONN_MODE=$mode \
			FI_MATCHBOX_CONN_THRESHOLD=16 "$ftx/ftx_conn" -n 8 -M 20 -W 100
	done
	if command -v nft >/dev/null && loss on; then
		for mode in adaptive ondemand; do
			check "5% UDP loss: ftx_conn storm $mode, 4 hosts x 2" conn16 4 "$mode" -n 8 -M 20
		done
		check "5% UDP loss: MPI t_coll adaptive, 4 hosts x 2" mpi 4 t_coll
		loss off
	else
		fail=$((fail + 1))
		echo "FAIL 5% UDP loss: nft missing or refused"
	fi
}

# A host's cable pulled mid-run (at the bridge): the ranks on both sides
# must get error completions for what they had under way with the other
# host within 30 s, and keep talking to their own host. Over a connection
# (static), over datagrams only, and in the default mode.
# FI_MATCHBOX_NET_TRIES=10: the cut is noticed in 5 to 7 s, where the
# default (a silent peer may be a computing one) waits about 10 minutes.
link_down() {
	local label args
	for label in "static" "adaptive, datagrams only" "adaptive"; do
		case $label in
		static) args=(env FI_MATCHBOX_CONN_MODE=static) ;;
		adaptive,*) args=(env FI_MATCHBOX_CONN_MODE=adaptive FI_MATCHBOX_CONN_THRESHOLD=1000000) ;;
		*) args=(env) ;;
		esac
		check "link down mid-run ($label): error completions, not a hang, 2 hosts x 2" \
			"${args[@]}" FTX_HOSTS=2 FI_MATCHBOX_NET_TRIES=10 "$ftx/ftx_linkdown" -T 30 \
			$([ "$label" = "adaptive, datagrams only" ] && echo -s 64) \
			-D "$here/cluster.sh link 1 down"
		"$here/cluster.sh" link 1 up || return 1
	done
}

# The net wire under AddressSanitizer and UBSan: run-tests runs this step
# alone on the sanitized build. Connection churn, datagram loss and a pulled
# link are where buffers and connections outlive each other.
sanitized() {
	check "ftx_pingpong (eager and fi_read), 2 hosts" env FTX_HOSTS=2 "$ftx/ftx_pingpong" \
		-S 1,4096,65536,1048576 -I 20
	check "registration cache and its monitor thread, 2 hosts" env FTX_HOSTS=2 \
		"$ftx/ftx_regcache" -C 1
	check "ftx_unexp by clear-to-send, 2 hosts" env FTX_HOSTS=2 FI_MATCHBOX_NET_RMA=0 \
		"$ftx/ftx_unexp"
	check "ftx_rma by the core's RMA, a key registered again, 2 hosts" cs_hosts ftx_rma \
		-p matchbox -P 9571 -m none -C -K
	# Core RMA while idle connections close: an operation must never start
	# on a connection whose close both sides agreed (3 runs in 12 failed
	# before the handshake counted them).
	check "MPI t_win, idle teardown every 20 ms, 2 hosts x 2" mpi 2 t_win \
		FI_MATCHBOX_CONN_IDLE_MS=20 FI_MATCHBOX_CONN_THRESHOLD=2
	check "MPI t_p2p, host engine (cached registrations, reads by the core), idle teardown every 20 ms, 2 hosts x 2" \
		mpi 2 t_p2p MATCHBOX_MPI_ENGINE=host FI_MATCHBOX_CONN_IDLE_MS=20 FI_MATCHBOX_CONN_THRESHOLD=2
	check "MPI t_p2p, idle teardown every 20 ms, 2 hosts x 2" mpi 2 t_p2p \
		FI_MATCHBOX_CONN_IDLE_MS=20 FI_MATCHBOX_CONN_THRESHOLD=2
	check "MPI t_p2p by clear-to-send, idle teardown every 20 ms, 2 hosts x 2" mpi 2 t_p2p \
		FI_MATCHBOX_CONN_IDLE_MS=20 FI_MATCHBOX_CONN_THRESHOLD=2 FI_MATCHBOX_NET_RMA=0
	# The hosts have a second NIC here: the rails' registrations and
	# reads, whose completions may outlive the message they served.
	check "MPI t_p2p, matchbox striping over two NICs, 2 hosts x 2" prov_rails t_p2p stripe
	check "ftx_conn idle teardown and rebuild, 2 hosts x 2" env FI_MATCHBOX_CONN_IDLE_MS=100 \
		FTX_HOSTS=2 FI_MATCHBOX_CONN_MODE=adaptive FI_MATCHBOX_CONN_THRESHOLD=16 \
		"$ftx/ftx_conn" -n 4 -M 20 -W 100
	if loss on; then
		check "5% UDP loss: MPI t_p2p on datagrams only, 2 hosts x 2" mpi 2 t_p2p \
			FI_MATCHBOX_CONN_THRESHOLD=1000000
		loss off
	else
		fail=$((fail + 1))
		echo "FAIL 5% UDP loss: nft missing or refused"
	fi
	check "link down mid-run: error completions, not a hang, 2 hosts x 2" \
		env FTX_HOSTS=2 FI_MATCHBOX_NET_TRIES=10 "$ftx/ftx_linkdown" -T 30 \
		-D "$here/cluster.sh link 1 down"
	"$here/cluster.sh" link 1 up
}

# Open MPI's mpirun as the launcher across the hosts: it runs on host 0 and
# starts its daemons on the others through nsrsh (its ssh stand-in). First our
# programs with Open MPI as their PMIx server, then Open MPI's own CM path over
# matchbox with the programs built by mpicc.openmpi.
ompi() { # hosts, program path, extra mpirun.openmpi args...
	local hosts=$1 prog=$2 list="" k
	shift 2
	for ((k = 0; k < hosts; k++)); do list+="${list:+,}$("$here/cluster.sh" addr $k):2"; done
	# --bind-to none: the "hosts" share this machine's cores, and Open MPI
	# would bind every host's first rank to core 0. rtc_hwloc_vmhole none:
	# when the hosts shared one hostname and so one session directory, each
	# host's daemon wrote the same shared topology file, and 1 start in 8 to
	# 20 under load crashed a daemon in hwloc_shmem_topology_write. Each
	# host now has its own name (mpirun here in a UTS namespace, the
	# daemons through nsrsh); the setting stays, as it costs nothing.
	local try out st
	for try in 1 2; do
		out=$(ip netns exec mbx-h0 unshare --uts sh -c 'hostname mbx-h0 && exec "$@"' sh \
			mpirun.openmpi --allow-run-as-root --bind-to none --host "$list" \
			-n $((2 * hosts)) --mca rtc_hwloc_vmhole none \
			--mca plm_rsh_agent "$here/nsrsh" --mca btl_tcp_if_include eth0 \
			--mca oob_tcp_if_include eth0 -x MT_LEAN="${MT_LEAN:-0}" "$@" "$prog" 2>&1)
		st=$?
		# Open MPI's own daemons, not the program, failed to connect to each
		# other (its out-of-band TCP layer): CI hit this on the first launch
		# on a fresh 4-host cluster, twice; never reproduced by hand. One
		# more launch, said aloud; any other failure counts as it is.
		if [ $st = 0 ] || [ $try = 2 ] ||
			! echo "$out" | grep -q "unable to complete a TCP connection"; then
			echo "$out"
			return $st
		fi
		echo "(Open MPI's daemons failed to connect; launching once more)"
	done
}
ompi_cm() { # hosts, program, mode
	local out st
	out=$(ompi "$1" "$ompibin/$2" --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include matchbox \
		--mca opal_common_ofi_verbose 1 -x FI_PROVIDER_PATH="$build/prov/matchbox" \
		-x FI_MATCHBOX_CONN_MODE="$3" 2>&1)
	st=$?
	echo "$out" | grep -v 'not in include list'
	[ $st = 0 ] && [ "$(echo "$out" | grep -c 'mtl:ofi:prov: matchbox')" = $((2 * $1)) ] &&
		echo "$out" | grep -qE "^$2: $((2 * $1)) ranks, [0-9]+ checks, 0 failed"
}
ompi_osc() { # hosts, program, extra mpirun.openmpi args...
	local h=$1 t=$2 out st
	shift 2
	out=$(ompi "$h" "$ompibin/$t" --mca osc rdma --mca btl self,ofi \
		--mca btl_ofi_provider_include matchbox --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include matchbox -x FI_PROVIDER_PATH="$build/prov/matchbox" \
		"$@" 2>&1)
	st=$?
	echo "$out"
	[ $st = 0 ] && echo "$out" | grep -qE "^t_osc: $((2 * h)) ranks, [0-9]+ checks, 0 failed"
}
openmpi_hosts() {
	local t mode
	for t in t_p2p t_coll t_comm; do
		check "MPI $t launched by Open MPI's mpirun, 2 hosts x 2" ompi 2 "$mt/$t" \
			-x FI_PROVIDER_PATH="$build/prov/matchbox"
	done
	# MPI one-sided from Open MPI: osc/rdma over btl/ofi on matchbox, whose
	# fi_write, fi_read and fi_atomic carry it between the hosts. Once with
	# the network atomics osc/rdma uses by default (fetch-and-add for its
	# locks and counters, sum and swap accumulates), without the MPI_MAX
	# accumulate that btl/ofi 4.1 aborts on (T_OSC_SKIP_MAX in t_osc.c);
	# once whole, with osc/rdma told to do accumulates by get and put under
	# its lock (osc_rdma_acc_use_amo false).
	check "Open MPI osc/rdma over btl/ofi on matchbox: t_osc without MPI_MAX, 2 hosts x 2" \
		ompi_osc 2 t_osc_nomax
	check "Open MPI osc/rdma over btl/ofi on matchbox: t_osc, accumulates by get and put, 2 hosts x 2" \
		ompi_osc 2 t_osc --mca osc_rdma_acc_use_amo false
	for mode in adaptive static; do
		for t in t_p2p t_coll t_comm t_dtype t_errors; do
			check "Open MPI CM over matchbox: $t $mode, 2 hosts x 2" ompi_cm 2 "$t" "$mode"
		done
	done
}

steps="2 two_hosts;4 four_hosts;4 idle_and_loss;2 link_down;2 two_rails 2"
tmpd=$(mktemp -d /tmp/mbx-across.XXXXXX)
trap 'rm -rf "$tmpd"' EXIT
ftisbin=$tmpd/ftis
"$build/mpi/mpicc" -O1 -I"$here/../../include" -o "$ftisbin" "$here/../../bench/mpi/ftis.c" || exit 1
ompibin=""
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
	ompibin=$tmpd/ompi
	mkdir -p "$ompibin"
	for t in t_p2p t_coll t_comm t_dtype t_errors; do
			mpicc.openmpi -O1 -I"$here/../mpi" -o "$ompibin/$t" \
			"$here/../mpi/$t.c" || exit 1
	done
	# Without MPI_Compare_and_swap: see T_OSC_SKIP_CAS in t_osc.c.
	mpicc.openmpi -O1 -DT_OSC_SKIP_CAS -I"$here/../mpi" -o "$ompibin/t_osc" \
		"$here/../mpi/t_osc.c" || exit 1
	mpicc.openmpi -O1 -DT_OSC_SKIP_CAS -DT_OSC_SKIP_MAX -I"$here/../mpi" \
		-o "$ompibin/t_osc_nomax" "$here/../mpi/t_osc.c" || exit 1
	steps+=";2 openmpi_hosts;4 openmpi_hosts4"
fi
slurm_progs=""
if command -v srun >/dev/null && command -v slurmd >/dev/null && command -v slurmctld >/dev/null &&
	command -v munged >/dev/null && compgen -G "/usr/lib/*/slurm*/mpi_pmix*.so" >/dev/null; then
	slurm_progs="t_env t_p2p t_coll t_comm t_dtype t_errors"
	steps+=";2 slurm_hosts;4 slurm_hosts"
fi
# ACROSS_STEPS="HOSTS FUNCTION;..." runs only those steps (while working on one).
steps=${ACROSS_STEPS:-$steps}
# Slurm's own launcher: srun --mpi=pmix starts the ranks through slurmd's
# PMIx server (our libmpi is a PMIx client), 2 ranks a host.
slurm_hosts() {
	local d t
	d=$(mktemp -d /tmp/mbx-slurm.XXXXXX)
	check "Slurm daemons up on $MBX_HOSTS hosts" "$here/slurm.sh" start "$MBX_HOSTS" "$d"
	for t in $slurm_progs; do
		check "MPI $t under srun --mpi=pmix, $MBX_HOSTS hosts x 2" env SLURM_CONF="$d/slurm.conf" \
			ip netns exec mbx-h0 timeout 120 srun --mpi=pmix -N "$MBX_HOSTS" \
			-n $((2 * MBX_HOSTS)) --ntasks-per-node=2 "$mt/$t"
	done
	"$here/slurm.sh" stop "$d"
	rm -rf "$d"
}
openmpi_hosts4() {
	check "Open MPI CM over matchbox: t_p2p adaptive, 4 hosts x 2" ompi_cm 4 t_p2p adaptive
	check "Open MPI CM over matchbox: t_coll adaptive, 4 hosts x 2" ompi_cm 4 t_coll adaptive
	check "MPI t_comm launched by Open MPI's mpirun, 4 hosts x 2" ompi 4 "$mt/t_comm" \
		-x FI_PROVIDER_PATH="$build/prov/matchbox"
}

export -f slurm_hosts check mpi tagged_pushes chunk_by_cc core_reads rcvbuf_drops stream_lossless rails host_rails net_rails prov_rails auto_rails two_rails cs_hosts client_server conn conn16 dgram_default conn_budget loss pingpong_counts by_read stream_heads rma_pieces by_cts small_dgram ring_counts quick_acks mismatch two_hosts four_hosts ftis_starved idle_and_loss link_down sanitized ompi ompi_cm ompi_osc openmpi_hosts \
	openmpi_hosts4
export ftx mpirun mt modes pass fail here build ompibin ftisbin slurm_progs

# With 8 ranks on this machine's 2 cores every collective takes tens of
# milliseconds (Open MPI's too): the test programs run their long loops
# lean there (MT_LEAN, tests/mpi/mt.h).
run_on() { # hosts, function, NICs a host
	MT_LEAN=$([ "$1" -ge 4 ] && echo 1 || echo 0) MBX_RAILS=${3:-1} \
		"$here/cluster.sh" run "$1" bash -c "$2; echo \"__counts \$pass \$fail\""
}

total_p=0 total_f=0
IFS=';' read -ra step_list <<<"$steps"
for step in "${step_list[@]}"; do
	set -- $step
	out=$(run_on "$1" "$2" "${3:-1}" | tee /dev/stderr | awk '/^__counts/ {print $2, $3}')
	read -r p f <<<"${out:-0 1}"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
done 2>&1
if ip netns list | grep -q '^mbx-'; then
	echo "FAIL namespaces left behind"
	total_f=$((total_f + 1))
fi
echo "across hosts: $total_p passed, $total_f failed"
[ "$total_f" = 0 ]
