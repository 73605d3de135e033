/*
 * Instructions per one-sided operation with its completion, as osu_put_latency
 * and osu_get_latency time them: rank 0 holds a shared lock on rank 1 of a
 * window from MPI_Win_allocate and runs N times one 8-byte operation and
 * MPI_Win_flush. Only that loop is measured (valgrind --tool=callgrind
 * --collect-atstart=no; bench/callgrind_rma.sh runs it). A warm-up loop first,
 * so the measured one is the steady state. Operations: put, get, acc
 * (MPI_Accumulate of one int64 with MPI_SUM) and fop (MPI_Fetch_and_op).
 * Without valgrind it still runs and prints the time per operation.
 * usage: cgrma [N [put|get|acc|fop]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

enum { PUT, GET, ACC, FOP };

static void loop(int op, int n, MPI_Win win)
{
	int64_t x = 1, y = 0;

	for (int i = 0; i < n; i++) {
		switch (op) {
		case GET:
			MPI_Get(&y, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
			break;
		case ACC:
			MPI_Accumulate(&x, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, MPI_SUM, win);
			break;
		case FOP:
			MPI_Fetch_and_op(&x, &y, MPI_INT64_T, 1, 0, MPI_SUM, win);
			break;
		default:
			MPI_Put(&x, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
		}
		MPI_Win_flush(1, win);
	}
}

int main(int argc, char **argv)
{
	int rank, size, n = argc > 1 ? atoi(argv[1]) : 1000;
	const char *name = argc > 2 ? argv[2] : "put";
	int op = !strcmp(name, "get") ? GET : !strcmp(name, "acc") ? ACC : !strcmp(name, "fop") ? FOP : PUT;
	int64_t *base;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (!rank)
			fprintf(stderr, "cgrma: needs 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	if (rank == 0) {
		double t;

		MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
		loop(op, n, win);
		t = MPI_Wtime();
		CALLGRIND_TOGGLE_COLLECT;
		loop(op, n, win);
		CALLGRIND_TOGGLE_COLLECT;
		t = MPI_Wtime() - t;
		MPI_Win_unlock(1, win);
		printf("%s %.3f us\n", name, t / n * 1e6);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}
