#!/bin/bash
# A Slurm cluster on the namespace hosts (cluster.sh), for launching MPI
# programs with Slurm's own launcher: slurmctld on host 0, one slurmd per
# host, each in a UTS namespace of its own so that it is known by the host's
# name, and a munged of our own on a private socket for authentication.
# Every daemon runs inside a host namespace (so cluster.sh down ends them
# too) and keeps its state in one directory; the machine's own munge or
# Slurm, if any, is never touched.
#
#   slurm.sh start N DIR   start the daemons for hosts 0..N-1, state in DIR
#   slurm.sh stop DIR      stop them
#   slurm.sh env DIR       print the environment srun and sinfo need
# Needs root, a cluster of at least N hosts, and Debian's slurmd, slurmctld,
# slurm-client, munge and slurm-wlm-basic-plugins (mpi_pmix_v4).
set -u
NET=198.51.100

conf() { # n dir
	local n=$1 d=$2 k
	cat <<-EOF
		ClusterName=mbx
		SlurmctldHost=mbx-h0($NET.10)
		SlurmctldPort=16817
		SlurmdPort=16818
		SlurmUser=root
		SlurmdUser=root
		AuthType=auth/munge
		AuthInfo=socket=$d/munge.sock
		CredType=cred/munge
		StateSaveLocation=$d/ctld
		SlurmdSpoolDir=$d/%n
		TmpFS=$d/%n/tmp
		SlurmctldPidFile=$d/ctld.pid
		SlurmdPidFile=$d/%n.pid
		SlurmctldLogFile=$d/ctld.log
		SlurmdLogFile=$d/%n.log
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core
		MpiDefault=pmix
		ReturnToService=2
		SchedulerType=sched/builtin
		JobCompType=jobcomp/none
		AccountingStorageType=accounting_storage/none
		MailProg=/bin/true
		SlurmdTimeout=30
		InactiveLimit=0
		KillWait=5
	EOF
	for ((k = 0; k < n; k++)); do
		echo "NodeName=mbx-h$k NodeAddr=$NET.$((10 + k)) NodeHostname=mbx-h$k CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 State=UNKNOWN"
	done
	echo "PartitionName=mbx Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4"
}

start() { # n dir
	local n=$1 d=$2 k i
	mkdir -p "$d/ctld" || return 1
	for ((k = 0; k < n; k++)); do mkdir -p "$d/mbx-h$k/tmp"; done
	conf "$n" "$d" >"$d/slurm.conf"
	# slurmd opens its cgroup plugin even with proctrack/linuxproc; this
	# machine has cgroup v1 hierarchies under a tmpfs, which autodetection
	# misreads.
	echo "CgroupPlugin=cgroup/v1" >"$d/cgroup.conf"
	dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 status=none
	chmod 0400 "$d/munge.key"
	# munged lives on host 0 too, so that cluster.sh down takes it with the
	# rest; its socket is a file, reachable from every namespace.
	ip netns exec mbx-h0 munged --force --key-file="$d/munge.key" --socket="$d/munge.sock" \
		--pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munge.seed" ||
		return 1
	ip netns exec mbx-h0 unshare --uts sh -c "hostname mbx-h0 && exec slurmctld -f '$d/slurm.conf'" ||
		return 1
	for ((k = 0; k < n; k++)); do
		ip netns exec "mbx-h$k" unshare --uts sh -c \
			"hostname mbx-h$k && exec slurmd -f '$d/slurm.conf'" || return 1
	done
	# Ready once every node is idle.
	for ((i = 0; i < 300; i++)); do
		[ "$(SLURM_CONF=$d/slurm.conf ip netns exec mbx-h0 sinfo -h -N -o '%t' 2>/dev/null |
			grep -c '^idle')" = "$n" ] && return 0
		sleep 0.1
	done
	echo "slurm: nodes never became idle" >&2
	SLURM_CONF=$d/slurm.conf ip netns exec mbx-h0 sinfo -N >&2
	tail -n 5 "$d"/*.log >&2
	return 1
}

stop() { # dir
	local d=$1 f
	for f in "$d"/*.pid; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	sleep 0.5
	for f in "$d"/*.pid; do
		[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	return 0
}

case ${1:-} in
start) start "$2" "$3" ;;
stop) stop "$2" ;;
env) echo "SLURM_CONF=$2/slurm.conf" ;;
*) sed -n 's/^#   //p' "$0"; exit 2 ;;
esac
