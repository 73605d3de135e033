// A C++ program through mpicxx: mpi.h must compile as C++ (warnings as
// errors) and link, and the C API behave as from C. Checks a ring of
// messages, a reduction, a derived type and a non-blocking collective.
#include <mpi.h>
#include <cstdio>
#include <vector>

static int rank_;

static void check(bool ok, const char *what)
{
	if (!ok) {
		std::fprintf(stderr, "x_mpi: rank %d failed: %s\n", rank_, what);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

int main(int argc, char **argv)
{
	int np, provided;

	check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS, "init");
	MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int next = (rank_ + 1) % np, prev = (rank_ + np - 1) % np;

	std::vector<double> out(64, rank_), in(64, -1);
	MPI_Status st;
	check(MPI_Sendrecv(out.data(), 64, MPI_DOUBLE, next, 1, in.data(), 64, MPI_DOUBLE, prev, 1,
			   MPI_COMM_WORLD, &st) == MPI_SUCCESS, "sendrecv");
	check(st.MPI_SOURCE == prev && in[63] == prev, "ring data");

	long sum = 0, mine = rank_ + 1;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	check(sum == (long)np * (np + 1) / 2, "allreduce");

	struct P { int i; double d; } p[2] = {{rank_, 0.5 * rank_}, {-rank_, 2.0}}, q[2] = {};
	int bl[2] = {1, 1};
	MPI_Aint d[2] = {offsetof(P, i), offsetof(P, d)};
	MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE}, t, tr;
	MPI_Type_create_struct(2, bl, d, ts, &t);
	MPI_Type_create_resized(t, 0, sizeof(P), &tr);
	MPI_Type_commit(&tr);
	MPI_Sendrecv(p, 2, tr, next, 2, q, 2, tr, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	check(q[0].i == prev && q[0].d == 0.5 * prev && q[1].i == -prev && q[1].d == 2.0, "struct");
	MPI_Type_free(&t);
	MPI_Type_free(&tr);

	std::vector<int> all(np, -1);
	MPI_Request r;
	MPI_Iallgather(&rank_, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD, &r);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
	for (int i = 0; i < np; i++)
		check(all[i] == i, "iallgather");

	if (rank_ == 0)
		std::printf("x_mpi: %d ranks: all checks passed\n", np);
	MPI_Finalize();
	return 0;
}
