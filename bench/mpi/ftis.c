/*
 * The communication of NAS FT and IS reduced to what stressed Open MPI's
 * shared receive queue in Shipman et al.: every rank sends a block to every
 * other rank, and the blocks arrive before their receives are posted
 * (unexpected), iteration after iteration. For bench/ftis.sh, which runs it
 * with the receive queue sized generously, by default, and starved, and
 * compares the times.
 *
 *   ftis BYTES ITERS   (BYTES per pair per iteration)
 *
 * Rank 0 prints "ftis BYTES N us_per_iter credit_waits srq_max" where the
 * last two are summed / maximised over the ranks (matchbox counters; 0
 * under another provider).
 */
#include <mpi.h>
#include <rdma/fi_ext_matchbox.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 0) : 8192;
	int iters = argc > 2 ? atoi(argv[2]) : 20, rank, size, i, k, n;
	struct fi_matchbox_net_stats ns;
	unsigned long long waits = 0, srq = 0, w, q;
	size_t len = sizeof(ns);
	MPI_Request *rq;
	char *s, *r;
	double t0 = 0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	s = malloc(bytes * (size_t)size);
	r = malloc(bytes * (size_t)size);
	rq = malloc(2 * (size_t)size * sizeof(*rq));
	memset(s, rank, bytes * (size_t)size);
	for (i = -2; i < iters; i++) {	/* two rounds to warm up */
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		n = 0;
		for (k = 1; k < size; k++) {
			int to = (rank + k) % size;

			MPI_Isend(s + (size_t)to * bytes, (int)bytes, MPI_CHAR, to, i & 0xff,
				  MPI_COMM_WORLD, &rq[n++]);
		}
		/* Everything is in flight before any receive exists. */
		MPI_Barrier(MPI_COMM_WORLD);
		for (k = 1; k < size; k++) {
			int from = (rank + size - k) % size;

			MPI_Irecv(r + (size_t)from * bytes, (int)bytes, MPI_CHAR, from, i & 0xff,
				  MPI_COMM_WORLD, &rq[n++]);
		}
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		for (k = 1; k < size; k++) {
			int from = (rank + size - k) % size;

			if (r[(size_t)from * bytes] != (char)from ||
			    r[(size_t)from * bytes + bytes - 1] != (char)from) {
				fprintf(stderr, "ftis: rank %d: wrong data from %d\n", rank, from);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	t = (MPI_Wtime() - t0) / iters;
	memset(&ns, 0, sizeof(ns));
#ifdef MPIX_FABRIC_GETOPT
	if (MPIX_Fabric_getopt(FI_MATCHBOX_OPT_NET_STATS, &ns, &len) != MPI_SUCCESS)
		memset(&ns, 0, sizeof(ns));
#endif
	w = ns.credit_waits;
	q = ns.srq_posted;
	MPI_Reduce(&w, &waits, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&q, &srq, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(rank ? &t : MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (!rank)
		printf("ftis %zu %d %.1f %llu %llu\n", bytes, size, t * 1e6, waits, srq);
	free(s);
	free(r);
	free(rq);
	MPI_Finalize();
	return 0;
}
