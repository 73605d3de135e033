# Sourced by the bench scripts that time one rank a host on two network-
# namespace hosts (tests/netns/cluster.sh) (the caller has set `here` and
# `b`, its build directory). `netns_hosts NAME` checks for root, brings
# the hosts up and down again at exit and sets `cluster`, `tmp` (NAME
# names it), `h0` and `h1`; `netns_pair NAME` also builds
# bench/mpi/mbench.c into $tmp/mb.ours with our mpicc and sources
# ompi_netns.sh.
netns_hosts() {
	[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
	cluster=$here/../tests/netns/cluster.sh
	tmp=$(mktemp -d "/tmp/$1.XXXXXX")
	trap '"$cluster" down >/dev/null; rm -rf "$tmp"' EXIT
	"$cluster" up 2 >/dev/null || exit 1
	h0=$("$cluster" addr 0) h1=$("$cluster" addr 1)
}
netns_pair() {
	netns_hosts "$1"
	"$b/mpi/mpicc" -O2 "$here/mpi/mbench.c" -o "$tmp/mb.ours" || exit 1
	. "$here/ompi_netns.sh"
}
