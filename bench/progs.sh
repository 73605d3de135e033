# Sourced by the bench scripts that measure one program of bench/mpi/ in
# our library and, where it is installed, in Open MPI: `progs SRC NAME
# FLAGS...` builds $tmp/NAME.ours with our mpicc (or ends the script) and
# $tmp/NAME.ompi with Open MPI's, and sets have_ompi to 1 when that worked.
# The caller has set `here`, `b` (our build folder) and `tmp`.
progs() { # source name flags...
	local src=$1 name=$2
	shift 2
	"$b/mpi/mpicc" "$@" "$here/mpi/$src" -o "$tmp/$name.ours" || exit 1
	have_ompi=0
	command -v mpicc.openmpi >/dev/null && mpicc.openmpi "$@" "$here/mpi/$src" -o "$tmp/$name.ompi" &&
		have_ompi=1
}
