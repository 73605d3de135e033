/* CPU availability in the manner of the Sandia overhead benchmark (as Graham
 * et al. used it to compare Open MPI's CM and OB1): post a send or a receive,
 * compute, then wait. The computation is a fixed amount of work (calibrated
 * once), not a fixed time, so whatever communication work lands on the
 * rank's core while it computes, a progress thread's included, lengthens it
 * and counts as overhead. For each side and size:
 *   base     = post + wait with nothing in between (the transfer as seen by
 *              the measured rank),
 *   work W   = about twice base,
 *   overhead = (post + W + wait) - W, W's own time measured beside it,
 *   avail    = 1 - overhead / base, clamped to [0, 1]: the fraction of the
 *              transfer that overlapped with the computation.
 * Each figure is the median over iterations. Rank 0 is measured; rank 1 is its peer. Prints one line per side and size:
 * "side bytes base_us overhead_us avail_percent". Any MPI: it uses MPI-1 only.
 * usage: avail [MAX_BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* Dependent arithmetic a compiler cannot fold or vectorise away. */
static void work(long n)
{
	double x = 1.0;

	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	sink = x;
}

/* Work units per microsecond: the fastest of several trials. */
static double calibrate(void)
{
	double best = 0;

	for (int t = 0; t < 5; t++) {
		long n = 2000000;
		double t0 = MPI_Wtime();

		work(n);
		double r = n / ((MPI_Wtime() - t0) * 1e6);
		if (r > best)
			best = r;
	}
	return best;
}

/* One measured iteration: rank 0 posts (a send, or a receive), works for n
 * units, waits; rank 1 answers with the blocking opposite. Returns rank 0's
 * time from post to completion. */
static double once(int send_side, char *buf, int len, long n, int rank)
{
	MPI_Request r;
	double t0 = 0, t = 0;

	if (rank == 0) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		if (send_side)
			MPI_Isend(buf, len, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &r);
		else
			MPI_Irecv(buf, len, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &r);
		if (n)
			work(n);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		t = MPI_Wtime() - t0;
	} else if (rank == 1) {
		/* The peer's receive is posted before the barrier, so the send
		 * side's message is expected; the receive side's arrives while
		 * rank 0 computes. */
		if (send_side) {
			MPI_Irecv(buf, len, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &r);
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Send(buf, len, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
		}
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
	}
	/* Both sides done before the next round's barrier starts the clock. */
	MPI_Barrier(MPI_COMM_WORLD);
	return t;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The work's own time, measured beside each figure rather than taken from
 * the calibration: this machine's clock speed drifts. */
static double work_alone(long n, int rank)
{
	double t[15], m = 0;

	if (rank == 0) {
		for (int i = 0; i < 15; i++) {
			double t0 = MPI_Wtime();

			work(n);
			t[i] = MPI_Wtime() - t0;
		}
		qsort(t, 15, sizeof(t[0]), cmp);
		m = t[7];
	}
	MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return m;
}

/* The median over iterations: this machine's occasional descheduling would
 * dominate a mean. */
static double median(int send_side, char *buf, int len, long n, int rank, int iters)
{
	double t[256], m;

	for (int i = 0; i < 2; i++)
		once(send_side, buf, len, n, rank);	/* warm-up */
	for (int i = 0; i < iters; i++)
		t[i] = once(send_side, buf, len, n, rank);
	qsort(t, (size_t)iters, sizeof(t[0]), cmp);
	m = t[iters / 2];
	MPI_Bcast(&m, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return m;
}

int main(int argc, char **argv)
{
	int rank, size, max = argc > 1 ? atoi(argv[1]) : 4 << 20;
	double per_us;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		fprintf(stderr, "avail: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	buf = malloc((size_t)max);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 1, (size_t)max);
	per_us = calibrate();
	MPI_Bcast(&per_us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	for (int side = 1; side >= 0; side--) {
		for (int len = 8; len <= max; len *= 8) {
			int iters = len <= 65536 ? 200 : 30;
			double base = median(side, buf, len, 0, rank, iters);
			double w = 2 * base + 5e-6;	/* seconds of work */
			long n = (long)(w * per_us * 1e6);
			double alone = work_alone(n, rank);
			double with = median(side, buf, len, n, rank, iters);
			double over = with - (alone + work_alone(n, rank)) / 2;
			double avail = base > 0 ? 1 - over / base : 0;

			if (avail < 0)
				avail = 0;
			if (avail > 1)
				avail = 1;
			if (rank == 0)
				printf("%s %d %.2f %.2f %.0f\n", side ? "send" : "recv", len,
				       base * 1e6, over * 1e6, avail * 100);
			if (len == max)
				break;
			if (len * 8 > max)
				len = max / 8;
		}
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
