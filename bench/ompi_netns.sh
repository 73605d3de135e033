# Sourced by the bench scripts that run Open MPI across the namespace hosts
# of tests/netns/cluster.sh (the caller has set `here`). `ompi_netns
# TIMEOUT HOSTS NP [mpirun arguments...]` starts mpirun.openmpi on host 0
# under that host's own name (its daemons tell the hosts apart by name),
# reaching the others through tests/netns/nsrsh, out-of-band over eth0.
ompi_netns() {
	local t=$1 hosts=$2 np=$3
	shift 3
	ip netns exec mbx-h0 unshare --uts sh -c 'hostname mbx-h0 && exec "$@"' sh \
		timeout "$t" mpirun.openmpi --allow-run-as-root --bind-to none --host "$hosts" \
		-n "$np" --mca plm_rsh_agent "$here/../tests/netns/nsrsh" \
		--mca rtc_hwloc_vmhole none --mca oob_tcp_if_include eth0 "$@"
}
