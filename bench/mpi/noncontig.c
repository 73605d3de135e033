/*
 * A large non-contiguous message between two ranks, as a halo of columns or
 * a strided field is sent: a vector of 3-double blocks 5 doubles apart,
 * sent by rank 0 and received by rank 1 into the same layout, ITERS times
 * (after one warm-up). Prints the bandwidth of the message's data and how
 * far each rank's peak resident memory rose above what its own buffers take
 * (ru_maxrss after they were touched, before the first message): a library
 * that stages the message through a whole packed copy shows that copy
 * there. With "contig", rank 0 sends the same bytes as contiguous doubles
 * (a packed column arriving into a strided field). usage: noncontig MIB
 * [ITERS] [contig]. bench/noncontig.sh runs it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static long maxrss_kb(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 64;
	int iters = argc > 2 ? atoi(argv[2]) : 5, rank, blocks;
	int contig = argc > 3 && !strcmp(argv[3], "contig");
	double *buf, t0, dt;
	long base, peak, rise, rise1;
	MPI_Datatype vec;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	blocks = (int)(mib * 1048576 / (3 * sizeof(double)));
	buf = malloc(sizeof(double) * 5 * (size_t)blocks);
	for (size_t i = 0; i < 5 * (size_t)blocks; i++)
		buf[i] = (double)i;
	MPI_Type_vector(blocks, 3, 5, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	base = maxrss_kb();
	MPI_Barrier(MPI_COMM_WORLD);
	for (int it = -1; it < iters; it++) {
		if (it == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0 && contig)
			MPI_Send(buf, 3 * blocks, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
		else if (rank == 0)
			MPI_Send(buf, 1, vec, 1, 0, MPI_COMM_WORLD);
		else if (rank == 1)
			MPI_Recv(buf, 1, vec, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	dt = MPI_Wtime() - t0;
	peak = maxrss_kb();
	rise = peak - base;
	MPI_Reduce(&rise, &rise1, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%zu MiB %.0f MB/s rise %ld KiB (send) %ld KiB (max)\n", mib,
		       (double)mib * 1048576 * iters / dt / 1e6, rise, rise1);
	MPI_Type_free(&vec);
	free(buf);
	MPI_Finalize();
	return 0;
}
