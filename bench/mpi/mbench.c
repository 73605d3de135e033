/*
 * MPI micro-benchmarks in the style of the usual suites, written against the
 * standard API only, so the same source builds with our mpicc, Open MPI's and
 * MPICH's and the figures compare like with like. One program, one test per
 * run: mbench lat|warm|bw|bibw|rate|late|allreduce|bcast|alltoall|barrier|halo|vhalo|cg|init
 * [bytes].
 * Rank 0 prints "test bytes value unit" lines (late: rank 1, the receiver);
 * init prints every rank's time.
 * lat, bw, bibw and rate also take a list of sizes ("0,8,4096") or a sweep
 * (LO:HI: LO, powers of 4 from there, and HI), a line each, and then a
 * time per size in milliseconds: "mbench lat 0:4194304 50" measures 0, 1,
 * 4, 16, ... 4 MiB in one job, each size for about 50 ms after its warm-up
 * (rank 0 times the warm-up and tells the others how many iterations). A
 * curve then costs one start-up, and a slow wire (two hosts) gets as many
 * milliseconds per size as shared memory does.
 *
 * The two CPUs of a small VM are not always equally close: the hypervisor
 * places them as it likes and moves them every few seconds. On the
 * reference VM a cache line passed between them in about 150-200 ns, or
 * 300-370, or 500-800 (three placements), and every figure of every
 * library moves with it, so runs taken seconds apart compare placements
 * as often as libraries. lat, bw, bibw and rate therefore time their
 * iterations in 16 slices, and between slices ranks 0 and 1 pass a cache
 * line of a shared file back and forth 100 times (no MPI involved). A slice
 * whose probes before and after fall in the same band of MBENCH_STATE_NS
 * (thresholds in ns, "250,450" by default: the states fast, mid and slow;
 * one threshold gives fast and slow) ran in that state; a slice that
 * straddles two is left out. The line then ends with "fast V N mid V N
 * slow V N": the median slice of each state in the line's unit (nan for
 * none) and how many slices it had. The figure itself (third field) is
 * still the whole run. MBENCH_STATE=0 turns the probe off.
 */
#include <mpi.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64

static int rank, size;
/* Milliseconds per size in a sweep; 0: the fixed iteration counts. */
static double per_size_ms;

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

/* Iterations that fill per_size_ms, from the time rank 0 took for `warm`
 * of them; every rank gets rank 0's answer (all of them call this). At
 * most `it` (the fixed count), at least 10. */
static int fit_iters(double t_warm, int warm, int it)
{
	int n = it;

	if (per_size_ms <= 0)
		return it;
	if (rank == 0 && t_warm > 0) {
		double want = per_size_ms * 1e-3 / (t_warm / warm);

		n = want < 10 ? 10 : want > it ? it : (int)want;
	}
	MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return n;
}

/* The cache-line probe between ranks 0 and 1 (see the top). */
static _Atomic int *probe_line;
static int probe_seq;

/* Rank 0 makes the shared file and tells everyone its name, or "" when the
 * probe is off; rank 1 maps it; the probe runs only if both did. */
static void probe_setup(void)
{
	char name[64] = "";
	int ok = 1, all = 0;
	void *p = MAP_FAILED;
	const char *e = getenv("MBENCH_STATE");

	if (size < 2)
		return;
	if (rank == 0 && !(e && !strcmp(e, "0"))) {
		int fd;

		strcpy(name, "/dev/shm/mbench.XXXXXX");
		fd = mkstemp(name);
		if (fd < 0 || ftruncate(fd, 4096) ||
		    (p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
			name[0] = 0;
		if (fd >= 0)
			close(fd);
	}
	MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, MPI_COMM_WORLD);
	if (!name[0])
		return;
	if (rank == 1) {
		int fd = open(name, O_RDWR);

		if (fd < 0 ||
		    (p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
			ok = 0;
		if (fd >= 0)
			close(fd);
	}
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == 0)
		unlink(name);
	if (all && rank <= 1)
		probe_line = p;
	else if (p != MAP_FAILED)
		munmap(p, 4096);
}

/* Waits for the line to read v; gives up (and the probe for good) after
 * a second, so that a descheduled peer cannot hang the benchmark. */
static int probe_wait(int v)
{
	double t0 = 0;

	for (unsigned long n = 1; atomic_load_explicit(probe_line, memory_order_acquire) != v; n++) {
		if (n % 4096)
			continue;
		if (!t0)
			t0 = now_real();
		else if (now_real() - t0 > 1.0)
			return -1;
	}
	return 0;
}

/* 100 round trips of one cache line; rank 0 returns ns per round trip,
 * rank 1 0, both -1 once the probe is off. Both ranks call it at the same
 * point of their loops. */
static double probe(void)
{
	enum { R = 100 };
	double t0 = now_real();

	if (!probe_line)
		return -1;
	for (int i = 0; i < R; i++) {
		int v = probe_seq + 2 * i;

		if (rank == 0) {
			atomic_store_explicit(probe_line, v + 1, memory_order_release);
			if (probe_wait(v + 2))
				goto off;
		} else {
			if (probe_wait(v + 1))
				goto off;
			atomic_store_explicit(probe_line, v + 2, memory_order_release);
		}
	}
	probe_seq += 2 * R;
	return rank == 0 ? (now_real() - t0) * 1e9 / R : 0;
off:
	probe_line = NULL;
	return -1;
}

/* One step of a timed loop (a round trip, a window) and its argument. */
typedef void (*step_fn)(void *arg);

enum { SLICES = 16 };

/* The CPU states a probe tells apart: below the first of MBENCH_STATE_NS's
 * thresholds, between them, above the last (see the top). */
enum { MAX_STATES = 3 };
static const char *const state_name[MAX_STATES] = {"fast", "mid", "slow"};
static double state_thr[MAX_STATES - 1] = {250, 450};
static int nstates = MAX_STATES;

static void states_setup(void)
{
	const char *e = getenv("MBENCH_STATE_NS");
	char *end;
	int n = 0;

	if (!e)
		return;
	for (const char *q = e; *q && n < MAX_STATES - 1; q = *end ? end + 1 : end) {
		double v = strtod(q, &end);

		if (end == q || v <= 0 || (n && v <= state_thr[n - 1]))
			return;	/* malformed: keep the defaults */
		state_thr[n++] = v;
	}
	if (n)
		nstates = n + 1;
}

static int state_of(double ns)
{
	int k = 0;

	while (k < nstates - 1 && ns >= state_thr[k])
		k++;
	return k;
}

/* Seconds per iteration: of the whole loop, and the median slice of each
 * CPU state with the number of slices in it (0: none; see the top). */
struct timing {
	double all, st[MAX_STATES];
	int n[MAX_STATES];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* `it` steps in slices, with a probe between slices when it is on. */
static struct timing timed(step_fn step, void *arg, int it)
{
	struct timing t = {0};
	double per_state[MAX_STATES][SLICES], total = 0;
	int ns = it < SLICES ? it : SLICES;
	double before = probe();

	for (int k = 0, done = 0; k < ns; k++) {
		int upto = (int)((long long)it * (k + 1) / ns);
		double t0 = MPI_Wtime(), dt, after;

		for (; done < upto; done++)
			step(arg);
		dt = MPI_Wtime() - t0;
		after = probe();
		total += dt;
		if (before > 0 && after > 0 && state_of(before) == state_of(after)) {
			int q = state_of(before);

			per_state[q][t.n[q]++] = dt / (upto - (int)((long long)it * k / ns));
		}
		before = after;
	}
	t.all = total / it;
	for (int q = 0; q < nstates; q++)
		t.st[q] = t.n[q] ? median_of(per_state[q], t.n[q]) : 0;
	return t;
}

/* A test's loop: `warm` steps, then as many as fill per_size_ms (at most
 * `it`; see fit_iters), timed in slices. */
static struct timing measure(step_fn step, void *arg, int warm, int it)
{
	double t0 = MPI_Wtime();

	for (int i = 0; i < warm; i++)
		step(arg);
	return timed(step, arg, fit_iters(MPI_Wtime() - t0, warm, it));
}

/* Rank 0's line: "test bytes figure unit", and the states when probed.
 * conv turns seconds per iteration into the figure. */
static void report(const char *what, size_t bytes, const char *fmt, const char *unit,
		   struct timing t, double (*conv)(double s, size_t bytes))
{
	if (rank != 0)
		return;
	printf("%s %zu ", what, bytes);
	printf(fmt, conv(t.all, bytes));
	printf(" %s", unit);
	for (int q = 0; probe_line && q < nstates; q++) {
		printf(" %s ", nstates == 2 && q == 1 ? "slow" : state_name[q]);
		if (t.n[q])
			printf(fmt, conv(t.st[q], bytes));
		else
			printf("nan");
		printf(" %d", t.n[q]);
	}
	printf("\n");
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

struct rt_arg {
	char *b;
	size_t bytes;
};

static void rt_step(void *a)
{
	struct rt_arg *x = a;

	round_trip(x->b, x->bytes);
}

static double one_way_us(double s, size_t bytes)
{
	(void)bytes;
	return s * 1e6 / 2.0;
}

static void lat(size_t bytes)
{
	struct rt_arg a = {malloc(bytes + 1), bytes};
	int it = iters_for(bytes, 100000), warm = it / 10 + 10;

	if (per_size_ms > 0 && warm > 1000)
		warm = 1000;
	memset(a.b, 1, bytes + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	report("lat", bytes, "%.3f", "us", measure(rt_step, &a, warm, it), one_way_us);
	free(a.b);
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

/* One window of non-blocking sends (OSU style), acknowledged by the
 * receiver; bidirectional when both ranks send (then a barrier ends it).
 * The receiver's buffer r holds `rstride` bytes per receive: 0 reuses one
 * buffer (osu_bw), the message size gives each receive its own (a rate
 * test's distinct messages). */
static void window(char *s, char *r, size_t bytes, size_t rstride, int bidir)
{
	MPI_Request rq[2 * WINDOW];
	int n = 0, ack = 0;

	if (rank == 0 || (bidir && rank == 1)) {
		int peer = 1 - rank;
		for (int w = 0; w < WINDOW; w++)
			MPI_Isend(s, (int)bytes, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[n++]);
		if (bidir)
			for (int w = 0; w < WINDOW; w++)
				MPI_Irecv(r + rstride * w, (int)bytes, MPI_CHAR, peer, 2,
					  MPI_COMM_WORLD, &rq[n++]);
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		if (!bidir)
			MPI_Recv(&ack, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		for (int w = 0; w < WINDOW; w++)
			MPI_Irecv(r + rstride * w, (int)bytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &rq[n++]);
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		MPI_Send(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
	}
	if (bidir)
		MPI_Barrier(MPI_COMM_WORLD);
}

struct win_arg {
	char *s, *r;
	size_t bytes, rstride;
	int bidir;
};

static void win_step(void *a)
{
	struct win_arg *x = a;

	window(x->s, x->r, x->bytes, x->rstride, x->bidir);
}

static double gbps(double s, size_t bytes)
{
	return (double)bytes * WINDOW / s / 1e9;
}

static double gbps2(double s, size_t bytes)
{
	return 2 * gbps(s, bytes);
}

static double mmsgs(double s, size_t bytes)
{
	(void)bytes;
	return WINDOW / s / 1e6;
}

/* Windows into one reused buffer: bandwidth (bw, bibw); or, for `rate`,
 * into a buffer per receive, in messages per second. */
static void windows(const char *what, size_t bytes, int bidir, int is_rate)
{
	size_t rstride = is_rate ? bytes : 0;
	struct win_arg a = {malloc(bytes + 1), malloc(rstride * WINDOW + bytes + 1), bytes, rstride,
			    bidir};
	int it = is_rate ? 10000 : iters_for(bytes, 2000) / 4 + 5, warm = is_rate ? 500 : 5;
	struct timing t;

	/* A slow wire (bench/rails.sh shapes NICs to 1 Gb/s) needs fewer
	 * windows than memory speed does. */
	if (getenv("MBENCH_ITERS")) {
		it = atoi(getenv("MBENCH_ITERS"));
		warm = 1;
		if (it < 1)
			it = 1;
	}
	if (per_size_ms > 0 && warm > 50)
		warm = 50;
	memset(a.s, 2, bytes + 1);
	memset(a.r, 0, rstride * WINDOW + bytes + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t = measure(win_step, &a, warm, it);
	if (is_rate)
		report(what, bytes, "%.3f", "Mmsg/s", t, mmsgs);
	else
		report(what, bytes, "%.4g", "GB/s", t, bidir ? gbps2 : gbps);
	free(a.s);
	free(a.r);
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

/* One run of a test that takes a size. */
static void sized(const char *what, size_t bytes)
{
	if (!strcmp(what, "lat"))
		lat(bytes);
	else if (!strcmp(what, "warm"))
		warm(bytes);
	else if (!strcmp(what, "bw"))
		windows(what, bytes, 0, 0);
	else if (!strcmp(what, "bibw"))
		windows(what, bytes, 1, 0);
	else if (!strcmp(what, "rate"))
		windows(what, bytes, 0, 1);
	else if (!strcmp(what, "halo") || !strcmp(what, "vhalo") || !strcmp(what, "cg"))
		app(what, bytes);
	else
		coll(what, bytes);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "lat";
	const char *spec = argc > 2 ? argv[2] : "8";
	char *end;
	size_t lo = strtoull(spec, &end, 0), hi = lo;
	double t_start = now_real();

	if (*end == ':')
		hi = strtoull(end + 1, NULL, 0);
	if (argc > 3)
		per_size_ms = atof(argv[3]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(what, "init")) {
		MPI_Finalize();
		/* Each rank: its own MPI_Init to MPI_Finalize; the script takes the max. */
		printf("init %d %.3f ms\n", size, (now_real() - t_start) * 1e3);
		return 0;
	}
	if (!strcmp(what, "lat") || !strcmp(what, "bw") || !strcmp(what, "bibw") ||
	    !strcmp(what, "rate")) {
		states_setup();
		probe_setup();
	}
	if (!strcmp(what, "late")) {
		late();
	} else if (*end == ',') {
		/* A list: every size named, in order. */
		for (const char *q = spec; *q; q = *end ? end + 1 : end) {
			sized(what, strtoull(q, &end, 0));
			fflush(stdout);
		}
	} else if (hi > lo) {
		/* A sweep: LO (0 included), powers of 4 from there, and HI. */
		if (lo == 0)
			sized(what, 0);
		for (size_t b = lo ? lo : 1; b < hi; b *= 4) {
			sized(what, b);
			fflush(stdout);
		}
		sized(what, hi);
	} else {
		sized(what, lo);
	}
	MPI_Finalize();
	return 0;
}
