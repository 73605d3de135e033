/*
 * MPI micro-benchmarks in the style of the usual suites, written against the
 * standard API only, so the same source builds with our mpicc, Open MPI's and
 * MPICH's and the figures compare like with like. One program, one test per
 * run: mbench lat|warm|bw|bibw|rate|late|allreduce|bcast|alltoall|barrier|halo|vhalo|cg|init
 * [bytes].
 * Rank 0 prints "test bytes value unit" lines (late: rank 1, the receiver);
 * init prints every rank's time.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64

static int rank, size;

static double now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int iters_for(size_t bytes, int small)
{
	if (bytes <= 4096)
		return small;
	if (bytes <= 65536)
		return small / 4;
	if (bytes <= 1 << 20)
		return 400;
	return 100;
}

/* One ping-pong between ranks 0 and 1. */
static void round_trip(char *b, size_t bytes)
{
	if (rank == 0) {
		MPI_Send(b, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
		MPI_Recv(b, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Recv(b, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(b, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
	}
}

static void lat(size_t bytes)
{
	char *b = malloc(bytes + 1);
	int it = iters_for(bytes, 100000), warm = it / 10 + 10;
	double t0 = 0;

	memset(b, 1, bytes + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < it + warm; i++) {
		if (i == warm)
			t0 = MPI_Wtime();
		round_trip(b, bytes);
	}
	if (rank == 0)
		printf("lat %zu %.3f us\n", bytes, (MPI_Wtime() - t0) * 1e6 / (2.0 * it));
	free(b);
}

/* The first round trips of a new pair, timed in blocks of 500 with no
 * warm-up: what a program's first messages, and a benchmark's first size,
 * see before the steady state. One line, the one-way latency of each of
 * the first 24 blocks. */
static void warm(size_t bytes)
{
	enum { BLOCKS = 24, PER = 500 };
	char *b = malloc(bytes + 1);
	double t[BLOCKS];

	memset(b, 1, bytes + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int k = 0; k < BLOCKS; k++) {
		double t0 = MPI_Wtime();

		for (int i = 0; i < PER; i++)
			round_trip(b, bytes);
		t[k] = (MPI_Wtime() - t0) * 1e6 / (2.0 * PER);
	}
	if (rank == 0) {
		printf("warm %zu", bytes);
		for (int k = 0; k < BLOCKS; k++)
			printf(" %.2f", t[k]);
		printf(" us\n");
	}
	free(b);
}

/* Window of non-blocking sends, one reused buffer (OSU style); bidirectional
 * when both ranks send. */
static void bw(size_t bytes, int bidir)
{
	char *s = malloc(bytes + 1), *r = malloc(bytes * (bidir ? 1 : 1) + 1);
	int it = iters_for(bytes, 2000) / 4 + 5, warm = 5, ack = 0;
	MPI_Request rq[2 * WINDOW];

	/* A slow wire (bench/rails.sh shapes NICs to 1 Gb/s) needs fewer
	 * windows than memory speed does. */
	if (getenv("MBENCH_ITERS")) {
		it = atoi(getenv("MBENCH_ITERS"));
		warm = 1;
		if (it < 1)
			it = 1;
	}
	double t0 = 0;

	memset(s, 2, bytes + 1);
	memset(r, 0, bytes + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < it + warm; i++) {
		int n = 0;
		if (i == warm)
			t0 = MPI_Wtime();
		if (rank == 0 || (bidir && rank == 1)) {
			int peer = 1 - rank;
			for (int w = 0; w < WINDOW; w++)
				MPI_Isend(s, (int)bytes, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[n++]);
			if (bidir)
				for (int w = 0; w < WINDOW; w++)
					MPI_Irecv(r, (int)bytes, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[n++]);
			MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
			if (!bidir)
				MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Irecv(r, (int)bytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &rq[n++]);
			MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
		}
		if (bidir)
			MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0) {
		double t = MPI_Wtime() - t0;
		printf("%s %zu %.4g GB/s\n", bidir ? "bibw" : "bw", bytes,
		       (double)bytes * WINDOW * it * (bidir ? 2 : 1) / t / 1e9);
	}
	free(s);
	free(r);
}

static void rate(void)
{
	char s[8] = {0}, r[8 * WINDOW];
	int it = 10000, warm = 500, ack = 0;
	MPI_Request rq[WINDOW];
	double t0 = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < it + warm; i++) {
		if (i == warm)
			t0 = MPI_Wtime();
		if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Isend(s, 8, MPI_CHAR, 1, 4, MPI_COMM_WORLD, &rq[w]);
			MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Irecv(r + 8 * w, 8, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &rq[w]);
			MPI_Waitall(WINDOW, rq, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("rate 8 %.3f Mmsg/s\n", (double)WINDOW * it / (MPI_Wtime() - t0) / 1e6);
}

/* Receiving messages that are already there (the unexpected path): rank 0
 * sends a window of 8-byte messages and a last one that says so; once
 * rank 1 has that last one, it times MPI_Recv of the window alone. Prints
 * the receiver's time per message. */
static void late(void)
{
	char s[8] = {0}, r[8 * WINDOW];
	int it = 5000, warm = 500, ack = 0;
	double spent = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < it + warm; i++) {
		if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Send(s, 8, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
			MPI_Send(s, 8, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
			MPI_Recv(&ack, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			double t0;

			MPI_Recv(r, 8, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			t0 = MPI_Wtime();
			for (int w = 0; w < WINDOW; w++)
				MPI_Recv(r + 8 * w, 8, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (i >= warm)
				spent += MPI_Wtime() - t0;
			MPI_Send(&ack, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
		}
	}
	if (rank == 1)
		printf("late 8 %.1f ns/msg\n", spent / ((double)WINDOW * it) * 1e9);
}

static void coll_once(const char *what, double *a, double *b, int n)
{
	if (!strcmp(what, "allreduce"))
		MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	else if (!strcmp(what, "bcast"))
		MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	else if (!strcmp(what, "alltoall"))
		MPI_Alltoall(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD);
	else
		MPI_Barrier(MPI_COMM_WORLD);
}

static void coll(const char *what, size_t bytes)
{
	int nn = (int)(bytes / sizeof(double)), it = bytes <= 4096 ? 30000 : 1000, warm = it / 10;
	double *a = calloc((size_t)(nn ? nn : 1) * (size_t)size, sizeof(double));
	double *b = calloc((size_t)(nn ? nn : 1) * (size_t)size, sizeof(double));
	double t0 = 0, t, tmax;

	if (!strcmp(what, "barrier"))
		it = 30000;
	/* Bounded by time too: a busy-polling MPI oversubscribed takes
	 * milliseconds per call, and every rank must run the same count. */
	for (int pass = 0; pass < 2; pass++) {
		int n = pass ? it + warm : 20;
		if (pass) {
			double per = (MPI_Wtime() - t0) / 20, lim = 0.5 / (per > 0 ? per : 1e-9);
			if (lim < it)
				it = lim < 20 ? 20 : (int)lim;
			warm = it / 10;
			MPI_Bcast(&it, 1, MPI_INT, 0, MPI_COMM_WORLD);
			MPI_Bcast(&warm, 1, MPI_INT, 0, MPI_COMM_WORLD);
			n = it + warm;
		}
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < n; i++) {
			if (pass && i == warm)
				t0 = MPI_Wtime();
			coll_once(what, a, b, nn);
		}
	}
	t = (MPI_Wtime() - t0) / it;
	MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s %zu %.3f us\n", what, bytes, tmax * 1e6);
	free(a);
	free(b);
}

/* Application-shaped loops. halo: a 2-D periodic grid of ranks, each
 * iteration a 5-point sweep over a 64x64 local block and an exchange of
 * `bytes` with each of the four neighbours (Irecv, Isend, Waitall).
 * vhalo: the same with a real grid's boundaries, bytes / 8 doubles a side:
 * rows go as they lie, columns as an MPI_Type_vector straight from the grid
 * (what a stencil code does), into ghost rows and columns.
 * cg: the shape of a conjugate-gradient step, two local dot products over
 * 4096 doubles each followed by an 8-byte MPI_Allreduce. Both print the
 * time per iteration, the slowest rank's, bounded to about half a second
 * like the collectives. */
#define APP_N 64

static volatile double app_sink;	/* keeps the sweeps from being optimized away */

static double app_work(double *u, double *v)
{
	double sum = 0;

	for (int i = 1; i < APP_N - 1; i++)
		for (int j = 1; j < APP_N - 1; j++) {
			v[i * APP_N + j] = 0.25 * (u[(i - 1) * APP_N + j] + u[(i + 1) * APP_N + j] +
						   u[i * APP_N + j - 1] + u[i * APP_N + j + 1]);
			sum += v[i * APP_N + j];
		}
	return sum;
}

static void app(const char *what, size_t bytes)
{
	int dims[2] = {0, 0}, periods[2] = {1, 1}, nb[4], it = 20000, warm;
	double *u = calloc(APP_N * APP_N, sizeof(double)), *v = calloc(APP_N * APP_N, sizeof(double));
	char *sb = calloc(4, bytes + 1), *rb = calloc(4, bytes + 1);
	double t0 = 0, t, tmax, acc = 0;
	MPI_Comm grid;
	/* vhalo: a (side + 2) x (side + 2) grid with ghosts; the column type */
	int side = (int)(bytes / sizeof(double)), w = side + 2;
	double *fld = !strcmp(what, "vhalo") ? calloc((size_t)w * (size_t)w, sizeof(double)) : NULL;
	MPI_Datatype col = MPI_DATATYPE_NULL;

	if (fld) {
		MPI_Type_vector(side, 1, w, MPI_DOUBLE, &col);
		MPI_Type_commit(&col);
	}
	MPI_Dims_create(size, 2, dims);
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
	MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]);
	MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]);
	for (int pass = 0; pass < 2; pass++) {
		int n = 20;

		if (pass) {
			double per = (MPI_Wtime() - t0) / 20, lim = 0.5 / (per > 0 ? per : 1e-9);

			if (lim < it)
				it = lim < 20 ? 20 : (int)lim;
			MPI_Bcast(&it, 1, MPI_INT, 0, grid);
			warm = it / 10;
			n = it + warm;
		} else {
			warm = 0;
		}
		MPI_Barrier(grid);
		t0 = MPI_Wtime();
		for (int i = 0; i < n; i++) {
			if (pass && i == warm)
				t0 = MPI_Wtime();
			if (!strcmp(what, "halo")) {
				MPI_Request rq[8];

				acc += app_work(u, v);
				for (int k = 0; k < 4; k++)
					MPI_Irecv(rb + k * (bytes + 1), (int)bytes, MPI_CHAR, nb[k], k ^ 1, grid,
						  &rq[k]);
				for (int k = 0; k < 4; k++)
					MPI_Isend(sb + k * (bytes + 1), (int)bytes, MPI_CHAR, nb[k], k, grid,
						  &rq[4 + k]);
				MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
			} else if (fld) {
				MPI_Request rq[8];

				acc += app_work(u, v);
				/* ghost row 0 and side + 1, ghost column 0 and side + 1 */
				MPI_Irecv(fld + 1, side, MPI_DOUBLE, nb[0], 1, grid, &rq[0]);
				MPI_Irecv(fld + (size_t)(side + 1) * w + 1, side, MPI_DOUBLE, nb[1], 0, grid, &rq[1]);
				MPI_Irecv(fld + w, 1, col, nb[2], 3, grid, &rq[2]);
				MPI_Irecv(fld + w + side + 1, 1, col, nb[3], 2, grid, &rq[3]);
				MPI_Isend(fld + w + 1, side, MPI_DOUBLE, nb[0], 0, grid, &rq[4]);
				MPI_Isend(fld + (size_t)side * w + 1, side, MPI_DOUBLE, nb[1], 1, grid, &rq[5]);
				MPI_Isend(fld + w + 1, 1, col, nb[2], 2, grid, &rq[6]);
				MPI_Isend(fld + w + side, 1, col, nb[3], 3, grid, &rq[7]);
				MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
			} else {
				double d = app_work(u, v), g;

				MPI_Allreduce(&d, &g, 1, MPI_DOUBLE, MPI_SUM, grid);
				d = app_work(v, u);
				MPI_Allreduce(&d, &g, 1, MPI_DOUBLE, MPI_SUM, grid);
				acc += g;
			}
		}
	}
	t = (MPI_Wtime() - t0) / it;
	MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, grid);
	if (rank == 0)
		printf("%s %zu %.3f us\n", what, bytes, tmax * 1e6);
	app_sink = acc;
	MPI_Comm_free(&grid);
	if (fld) {
		MPI_Type_free(&col);
		free(fld);
	}
	free(u);
	free(v);
	free(sb);
	free(rb);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "lat";
	size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 8;
	double t_start = now_real();

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(what, "init")) {
		MPI_Finalize();
		/* Each rank: its own MPI_Init to MPI_Finalize; the script takes the max. */
		printf("init %d %.3f ms\n", size, (now_real() - t_start) * 1e3);
		return 0;
	}
	if (!strcmp(what, "lat"))
		lat(bytes);
	else if (!strcmp(what, "warm"))
		warm(bytes);
	else if (!strcmp(what, "bw"))
		bw(bytes, 0);
	else if (!strcmp(what, "bibw"))
		bw(bytes, 1);
	else if (!strcmp(what, "rate"))
		rate();
	else if (!strcmp(what, "late"))
		late();
	else if (!strcmp(what, "halo") || !strcmp(what, "vhalo") || !strcmp(what, "cg"))
		app(what, bytes);
	else
		coll(what, bytes);
	MPI_Finalize();
	return 0;
}
