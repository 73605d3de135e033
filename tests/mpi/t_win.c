/*
 * One-sided communication, each result checked: put and get under fences
 * between every pair, derived datatypes on either side, accumulates from
 * every rank at once onto one location (their sum proves atomicity),
 * fetch-and-add tickets that must all differ, a compare-and-swap that
 * exactly one rank wins, MINLOC/MAXLOC accumulates on pair types from every
 * rank at once (no update may be lost), in allocated and created windows,
 * dynamic windows (regions attached, announced, reached, detached and
 * replaced; an address outside them refused), read-modify-write under exclusive locks that must
 * not lose an update, post/start/complete/wait around a ring, request-based
 * operations, a shared-memory window read and written with loads and stores
 * and with accumulates, window attributes, and the errors: an access outside an
 * epoch, outside the window, a bad lock type, and a window error handler
 * that is given the window.
 */
#include "mt.h"

#include <stdint.h>

static int rank, size;

static void fences(void)
{
	int *base, n = size;
	MPI_Win win;

	CHECK_MPI(MPI_Win_allocate(sizeof(int) * (MPI_Aint)n * 2, sizeof(int), MPI_INFO_NULL,
				   MPI_COMM_WORLD, &base, &win));
	for (int i = 0; i < 2 * n; i++)
		base[i] = -1;
	CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	/* The origin buffer is the program's until the fence: one per put. */
	for (int t = 0; t < size; t++) {
		base[n + t] = rank * 100 + t;
		CHECK_MPI(MPI_Put(&base[n + t], 1, MPI_INT, t, rank, 1, MPI_INT, win));
	}
	CHECK_MPI(MPI_Win_fence(0, win));
	{
		int ok = 1;
		for (int i = 0; i < n; i++)
			ok &= base[i] == i * 100 + rank;
		CHECK(ok);
	}
	/* Get the whole first half of the next rank's window. */
	{
		int *got = malloc(sizeof(int) * (size_t)n), ok = 1, t = (rank + 1) % size;

		CHECK_MPI(MPI_Get(got, n, MPI_INT, t, 0, n, MPI_INT, win));
		CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
		for (int i = 0; i < n; i++)
			ok &= got[i] == i * 100 + t;
		CHECK(ok);
		free(got);
	}
	/* Contiguous types whose data does not start at the buffer, on both
	 * sides (the one-copy path of a window in shared memory): an int 8
	 * bytes into the origin's buffer, 4 into the target's. Only this rank
	 * touches t's window now. */
	{
		int got[3] = { -1, -1, -1 }, put[3] = { 0, 0, 7000 + rank }, back = -1;
		int one = 1, t = (rank + 1) % size;
		MPI_Aint at4 = 4, at8 = 8;
		MPI_Datatype off4, off8;

		CHECK_MPI(MPI_Type_create_hindexed(1, &one, &at4, MPI_INT, &off4));
		CHECK_MPI(MPI_Type_create_hindexed(1, &one, &at8, MPI_INT, &off8));
		MPI_Type_commit(&off4);
		MPI_Type_commit(&off8);
		CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
		CHECK_MPI(MPI_Get(got, 1, off8, t, 0, 1, off4, win));
		CHECK_MPI(MPI_Win_flush(t, win));
		CHECK_MPI(MPI_Put(put, 1, off8, t, 0, 1, off4, win));
		CHECK_MPI(MPI_Win_flush(t, win));
		CHECK_MPI(MPI_Get(&back, 1, MPI_INT, t, 1, 1, MPI_INT, win));
		CHECK_MPI(MPI_Win_unlock(t, win));
		/* t's int 1: 1 * 100 + t, or with one rank the second half's
		 * first entry, 0. */
		CHECK(got[0] == -1 && got[1] == -1 && got[2] == (n > 1 ? 100 + t : 0));
		CHECK(back == 7000 + rank);
		MPI_Type_free(&off4);
		MPI_Type_free(&off8);
	}
	{
		void *b;
		MPI_Aint *sz;
		int *du, *fl, flag;

		MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag);
		CHECK(flag && b == base);
		MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
		CHECK(flag && *sz == (MPI_Aint)sizeof(int) * n * 2);
		MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag);
		CHECK(flag && *du == (int)sizeof(int));
		MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag);
		CHECK(flag && *fl == MPI_WIN_FLAVOR_ALLOCATE);
	}
	CHECK_MPI(MPI_Win_free(&win));
	CHECK(win == MPI_WIN_NULL);
}

/* A strided origin into a contiguous target and back the other way. */
static void datatypes(void)
{
	int mem[64], src[64], back[64], ok = 1, t = (rank + 1) % size;
	MPI_Datatype every2;
	MPI_Win win;

	for (int i = 0; i < 64; i++) {
		mem[i] = -1;
		src[i] = rank * 1000 + i;
		back[i] = -1;
	}
	MPI_Type_vector(16, 1, 2, MPI_INT, &every2);
	MPI_Type_commit(&every2);
	CHECK_MPI(MPI_Win_create(mem, sizeof(mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_Win_fence(0, win);
	/* src[0], src[2], ... src[30] to t's mem[4..19] (byte displacement). */
	CHECK_MPI(MPI_Put(src, 1, every2, t, 4 * sizeof(int), 16, MPI_INT, win));
	MPI_Win_fence(0, win);
	{
		int from = (rank - 1 + size) % size;
		for (int i = 0; i < 16; i++)
			ok &= mem[4 + i] == from * 1000 + 2 * i;
		ok &= mem[3] == -1 && mem[20] == -1;
	}
	/* t's mem[4..19] into every other element of back. */
	CHECK_MPI(MPI_Get(back, 1, every2, t, 4 * sizeof(int), 16, MPI_INT, win));
	MPI_Win_fence(0, win);
	for (int i = 0; i < 32; i++)
		ok &= back[i] == (i % 2 ? -1 : rank * 1000 + i);
	CHECK(ok);
	MPI_Win_free(&win);
	MPI_Type_free(&every2);
}

static void atomics(void)
{
	int64_t *base;
	MPI_Win win;
	int rounds = 50;

	MPI_Win_allocate(8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	memset(base, 0, 8 * sizeof(int64_t));
	MPI_Barrier(MPI_COMM_WORLD);
	/* Every rank at once: sums, tickets and a race for one slot. */
	MPI_Win_lock_all(0, win);
	{
		int64_t one = 1, *tickets = malloc(sizeof(int64_t) * (size_t)rounds);
		double dmax = rank + 0.5;

		for (int i = 0; i < rounds; i++) {
			CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, MPI_SUM, win));
			CHECK_MPI(MPI_Fetch_and_op(&one, &tickets[i], MPI_INT64_T, size - 1, 1, MPI_SUM, win));
			CHECK_MPI(MPI_Win_flush(size - 1, win));
		}
		{
			int64_t mine = rank + 1, cmp = 0, old = -1;
			CHECK_MPI(MPI_Compare_and_swap(&mine, &cmp, &old, MPI_INT64_T, 0, 2, win));
			MPI_Win_flush(0, win);
			/* One winner: the rank that saw 0. */
			int won = old == 0, winners = 0;
			MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
			CHECK(winners == 1);
			CHECK(old == 0 || (old >= 1 && old <= size));
		}
		CHECK_MPI(MPI_Accumulate(&dmax, 1, MPI_DOUBLE, 0, 3, 1, MPI_DOUBLE, MPI_MAX, win));
		MPI_Win_unlock_all(win);
		/* Tickets: all different across all ranks, 0 .. rounds*size-1. */
		{
			int64_t *all = malloc(sizeof(int64_t) * (size_t)rounds * (size_t)size);
			char *seen = calloc((size_t)rounds * (size_t)size, 1);
			int ok = 1;

			MPI_Allgather(tickets, rounds, MPI_INT64_T, all, rounds, MPI_INT64_T, MPI_COMM_WORLD);
			for (int i = 0; i < rounds * size; i++) {
				if (all[i] < 0 || all[i] >= rounds * size || seen[all[i]])
					ok = 0;
				else
					seen[all[i]] = 1;
			}
			CHECK(ok);
			free(all);
			free(seen);
		}
		free(tickets);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		double d;
		CHECK(base[0] == (int64_t)rounds * size);
		CHECK(base[2] >= 1 && base[2] <= size);
		memcpy(&d, &base[3], sizeof(d));
		CHECK(d == size - 1 + 0.5);
	}
	if (rank == size - 1)
		CHECK(base[1] == (int64_t)rounds * size);
	/* Get_accumulate: fetch the old value while adding; NO_OP reads. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	{
		int64_t add = 2, old = -1, now = -1;
		CHECK_MPI(MPI_Get_accumulate(&add, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, 0, 4, 1, MPI_INT64_T,
					     MPI_SUM, win));
		MPI_Win_flush(0, win);
		CHECK(old >= 0 && old <= 2 * (size - 1) && old % 2 == 0);
		CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &now, 1, MPI_INT64_T, 0, 4, 1,
					     MPI_INT64_T, MPI_NO_OP, win));
		MPI_Win_flush(0, win);
		CHECK(now >= old + 2);
	}
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(base[4] == 2 * size);
	MPI_Win_free(&win);
}

/* MAXLOC and MINLOC on pair types, which no provider has atomics for,
 * from every rank at once onto one target: each rank's values rise round
 * by round and differ from every other rank's, so a lost update shows as a
 * final maximum below the largest value sent. Both kinds of window (memory
 * the library allocates, on one node a shared segment; memory the program
 * gives, reached through the provider), a derived type of pairs, the
 * fetching and request-based forms, and REPLACE on a pair. */
struct dint { double v; int i; };

static void pair_accumulates(void)
{
	enum { ROUNDS = 40 };

	for (int kind = 0; kind < 2; kind++) {
		struct dint *d, mem[4];
		MPI_Win win;
		MPI_Datatype two;

		if (kind == 0)
			MPI_Win_allocate(4 * sizeof(*d), sizeof(*d), MPI_INFO_NULL, MPI_COMM_WORLD,
					 &d, &win);
		else
			MPI_Win_create(d = mem, sizeof(mem), sizeof(*d), MPI_INFO_NULL, MPI_COMM_WORLD,
				       &win);
		for (int k = 0; k < 4; k++)
			d[k] = (struct dint){k < 2 ? -1e300 : 1e300, -1};
		MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two);
		MPI_Type_commit(&two);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock_all(0, win);
		for (int r = 0; r < ROUNDS; r++) {
			/* Interleaved so that the largest comes from a different
			 * rank at different times. */
			struct dint hi = {r * size + (rank + r) % size, rank}, old = {0, 0};
			struct dint lo2[2] = {{-hi.v, rank}, {-hi.v - 0.5, rank}};
			MPI_Request rq;

			if (r % 2)
				CHECK_MPI(MPI_Accumulate(&hi, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT,
							 MPI_MAXLOC, win));
			else
				CHECK_MPI(MPI_Get_accumulate(&hi, 1, MPI_DOUBLE_INT, &old, 1,
							     MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT,
							     MPI_MAXLOC, win));
			CHECK_MPI(MPI_Raccumulate(lo2, 1, two, 0, 2, 1, two, MPI_MINLOC, win, &rq));
			CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
			MPI_Win_flush(0, win);
			CHECK(old.v < hi.v || r % 2 || old.i != rank);
		}
		MPI_Win_unlock_all(win);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			double top = (ROUNDS - 1) * size + (size - 1);
			int who = (int)(((size - 1) - (ROUNDS - 1)) % size + size) % size;

			CHECK(d[0].v == top && d[0].i == who);
			CHECK(d[2].v == -top && d[2].i == who);
			CHECK(d[3].v == -top - 0.5 && d[3].i == who);
			CHECK(d[1].v == -1e300 && d[1].i == -1);
		}
		/* REPLACE and a fetching NO_OP on a pair, then a plain get. */
		MPI_Win_fence(0, win);
		{
			struct dint put = {7.5, 42}, got = {0, 0};

			/* Accumulates from one origin to one place are ordered. */
			if (rank == size - 1) {
				CHECK_MPI(MPI_Accumulate(&put, 1, MPI_DOUBLE_INT, 0, 1, 1,
							 MPI_DOUBLE_INT, MPI_REPLACE, win));
				CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &got, 1,
							     MPI_DOUBLE_INT, 0, 1, 1, MPI_DOUBLE_INT,
							     MPI_NO_OP, win));
			}
			MPI_Win_fence(0, win);
			if (rank == size - 1)
				CHECK(got.v == 7.5 && got.i == 42);
			if (rank == 0)
				CHECK(d[1].v == 7.5 && d[1].i == 42);
		}
		MPI_Type_free(&two);
		MPI_Win_free(&win);
	}
}

/* A dynamic window: every rank attaches two regions, announces their
 * addresses, and the ranks put, get, accumulate and fetch into each other's
 * regions by absolute address; then one region is detached and another
 * attached in its place, announced, and reached after MPI_Win_sync. */
static void dynamic(void)
{
	enum { N = 16 };
	int right = (rank + 1) % size, left = (rank + size - 1) % size, cls = 0, flavor = 0;
	int *a = calloc(N, sizeof(int)), *b = calloc(N, sizeof(int)), *c = calloc(N, sizeof(int));
	int64_t *sum = calloc(2, sizeof(int64_t));
	MPI_Aint mine[3], *all = malloc(3 * sizeof(MPI_Aint) * (size_t)size);
	void *attr;
	int flag = 0;
	MPI_Win win;

	CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &attr, &flag);
	if (flag)
		flavor = *(int *)attr;
	CHECK(flag && flavor == MPI_WIN_FLAVOR_DYNAMIC);
	MPI_Win_get_attr(win, MPI_WIN_BASE, &attr, &flag);
	CHECK(flag && attr == MPI_BOTTOM);
	CHECK_MPI(MPI_Win_attach(win, a, N * sizeof(int)));
	CHECK_MPI(MPI_Win_attach(win, sum, 2 * sizeof(int64_t)));
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Win_attach(win, a + 2, sizeof(int)), &cls);
	CHECK(cls == MPI_ERR_RMA_ATTACH);	/* overlaps a */
	CHECK(MPI_Win_detach(win, c) != MPI_SUCCESS);
	MPI_Get_address(a, &mine[0]);
	MPI_Get_address(sum, &mine[1]);
	MPI_Get_address(b, &mine[2]);
	MPI_Allgather(mine, 3, MPI_AINT, all, 3, MPI_AINT, MPI_COMM_WORLD);

	MPI_Win_lock_all(0, win);
	{
		int v[2] = {rank, rank * 10}, got[2] = {-1, -1};
		int64_t one = 1, ticket = -1;

		CHECK_MPI(MPI_Put(v, 2, MPI_INT, right, all[3 * right] + 2 * (MPI_Aint)sizeof(int), 2,
				  MPI_INT, win));
		CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, all[1], 1, MPI_INT64_T, MPI_SUM,
					 win));
		CHECK_MPI(MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, 0,
					   all[1] + (MPI_Aint)sizeof(int64_t), MPI_SUM, win));
		MPI_Win_flush_all(win);
		CHECK(ticket >= 0 && ticket < size);
		/* Nothing is attached there: refused, nothing done. */
		MPI_Error_class(MPI_Put(v, 1, MPI_INT, right, all[3 * right] + N * (MPI_Aint)sizeof(int),
					1, MPI_INT, win), &cls);
		CHECK(cls == MPI_ERR_RMA_RANGE);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_sync(win);
		CHECK(a[2] == left && a[3] == left * 10);
		CHECK_MPI(MPI_Get(got, 2, MPI_INT, left, all[3 * left] + 2 * (MPI_Aint)sizeof(int), 2,
				  MPI_INT, win));
		MPI_Win_flush(left, win);
		CHECK(got[0] == (left + size - 1) % size && got[1] == got[0] * 10);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(sum[0] == size && sum[1] == size);
	/* a goes, b comes in its place; the origins see it after a sync. */
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_Win_detach(win, a));
	CHECK_MPI(MPI_Win_attach(win, b, N * sizeof(int)));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_sync(win);
	{
		int v = 100 + rank;

		CHECK_MPI(MPI_Put(&v, 1, MPI_INT, right, all[3 * right + 2] + 5 * (MPI_Aint)sizeof(int),
				  1, MPI_INT, win));
		MPI_Win_flush(right, win);
		MPI_Error_class(MPI_Put(&v, 1, MPI_INT, right, all[3 * right], 1, MPI_INT, win), &cls);
		CHECK(cls == MPI_ERR_RMA_RANGE);	/* a is detached */
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK(b[5] == 100 + left);
	CHECK_MPI(MPI_Win_detach(win, b));
	CHECK_MPI(MPI_Win_detach(win, sum));
	MPI_Win_free(&win);
	{
		MPI_Win plain;
		int mem;

		MPI_Win_create(&mem, sizeof(mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &plain);
		MPI_Win_set_errhandler(plain, MPI_ERRORS_RETURN);
		MPI_Error_class(MPI_Win_attach(plain, a, sizeof(int)), &cls);
		CHECK(cls == MPI_ERR_RMA_FLAVOR);
		MPI_Win_free(&plain);
	}
	free(a);
	free(b);
	free(c);
	free(sum);
	free(all);
}

/* Get, add, put back: only the exclusive lock keeps updates from being lost. */
static void exclusive(void)
{
	int *base, rounds = 20;
	MPI_Win win;

	MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	*base = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < rounds; i++) {
		int v = -1;

		CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
		MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
		MPI_Win_flush(0, win);
		v++;
		MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
		CHECK_MPI(MPI_Win_unlock(0, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK(*base == rounds * size);
	MPI_Win_free(&win);
}

/* Each rank exposes its window to its left neighbour and writes into its
 * right neighbour's, with request-based calls. */
static void pscw(void)
{
	int mem[2] = {-1, -1}, left = (rank - 1 + size) % size, right = (rank + 1) % size;
	MPI_Group world, lg, rg;
	MPI_Win win;
	MPI_Request rq[2];
	int v = rank + 7, got = -1, flag = 0;

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &left, &lg);
	MPI_Group_incl(world, 1, &right, &rg);
	MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	for (int round = 0; round < 3; round++) {
		CHECK_MPI(MPI_Win_post(lg, 0, win));
		CHECK_MPI(MPI_Win_start(rg, 0, win));
		CHECK_MPI(MPI_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq[0]));
		CHECK_MPI(MPI_Rget(&got, 1, MPI_INT, right, 1, 1, MPI_INT, win, &rq[1]));
		CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		CHECK_MPI(MPI_Win_complete(win));
		if (round == 2) {
			int err = MPI_SUCCESS;

			while (!flag && err == MPI_SUCCESS)
				err = MPI_Win_test(win, &flag);
			CHECK(err == MPI_SUCCESS && flag);
		} else {
			CHECK_MPI(MPI_Win_wait(win));
		}
		CHECK(mem[0] == left + 7);
		mem[1] = round;
		MPI_Barrier(MPI_COMM_WORLD);
		CHECK(round == 0 || got == round - 1);
	}
	MPI_Win_free(&win);
	MPI_Group_free(&lg);
	MPI_Group_free(&rg);
	MPI_Group_free(&world);
}

/* Every rank's part of a shared window, reached by pointer. */
static void shared(void)
{
	MPI_Comm node;
	MPI_Win win;
	int nr, ns, *mine, *prev = NULL, one = 1;

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &nr);
	MPI_Comm_size(node, &ns);
	CHECK_MPI(MPI_Win_allocate_shared(sizeof(int) * (MPI_Aint)(nr + 1), sizeof(int), MPI_INFO_NULL,
					  node, &mine, &win));
	MPI_Win_lock_all(0, win);
	for (int i = 0; i <= nr; i++)
		mine[i] = nr * 100 + i;
	MPI_Win_sync(win);
	MPI_Barrier(node);
	MPI_Win_sync(win);
	for (int q = 0; q < ns; q++) {
		MPI_Aint sz;
		int du, *p;

		CHECK_MPI(MPI_Win_shared_query(win, q, &sz, &du, &p));
		CHECK(sz == (MPI_Aint)sizeof(int) * (q + 1) && du == (int)sizeof(int));
		CHECK(p[0] == q * 100 && p[q] == q * 100 + q);
		/* Contiguous: each part right after the one before. */
		CHECK(!prev || p == prev + q);
		prev = p;
	}
	MPI_Barrier(node);
	CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
	CHECK_MPI(MPI_Win_flush(0, win));
	MPI_Win_sync(win);
	MPI_Barrier(node);
	MPI_Win_sync(win);
	if (nr == 0)
		CHECK(mine[0] == ns);
	MPI_Win_unlock_all(win);
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
}

static int handler_calls;
static MPI_Win handler_win;

static void on_error(MPI_Win *win, int *code, ...)
{
	handler_calls++;
	handler_win = *win;
	(void)code;
}

static void errors(void)
{
	int mem[4], v = 1, cls = 0;
	MPI_Win win;
	MPI_Errhandler eh;

	MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), &cls);
	CHECK(cls == MPI_ERR_RMA_SYNC);
	MPI_Win_fence(0, win);
	MPI_Error_class(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, win), &cls);
	CHECK(cls == MPI_ERR_RMA_RANGE);
	MPI_Error_class(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), &cls);
	CHECK(cls == MPI_ERR_RANK);
	MPI_Error_class(MPI_Put(&v, 1, MPI_INT, 0, -1, 1, MPI_INT, win), &cls);
	CHECK(cls == MPI_ERR_DISP);
	MPI_Error_class(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win), &cls);
	CHECK(cls == MPI_ERR_OP);
	/* MINLOC is for pair types only. */
	MPI_Error_class(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_MINLOC, win), &cls);
	CHECK(cls == MPI_ERR_OP);
	CHECK_MPI(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	{
		MPI_Aint sz;
		int du;
		void *p;
		MPI_Error_class(MPI_Win_shared_query(win, 0, &sz, &du, &p), &cls);
		CHECK(cls == MPI_ERR_RMA_FLAVOR);
	}
	MPI_Error_class(MPI_Win_lock(99, 0, 0, win), &cls);
	CHECK(cls == MPI_ERR_LOCKTYPE);
	MPI_Error_class(MPI_Win_unlock(0, win), &cls);
	CHECK(cls == MPI_ERR_RMA_SYNC);
	MPI_Win_create_errhandler(on_error, &eh);
	MPI_Win_set_errhandler(win, eh);
	MPI_Errhandler_free(&eh);
	MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
	CHECK(handler_calls == 1 && handler_win == win);
	MPI_Win_free(&win);
	{
		MPI_Win bad = MPI_WIN_NULL;
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		MPI_Error_class(MPI_Win_fence(0, bad), &cls);
		CHECK(cls == MPI_ERR_WIN);
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	}
}

/* A target type of more runs than the library lists one by one (a vector
 * kept as one block and a repeat count): every other int of the next
 * rank's window, put from and gotten into contiguous buffers. */
static void repeated_type(void)
{
	enum { N = 66000 };
	int *base, *src = malloc(sizeof(int) * N), *got = malloc(sizeof(int) * N), ok = 1;
	int t = (rank + 1) % size, from = (rank - 1 + size) % size;
	MPI_Datatype every2;
	MPI_Win win;
	CHECK_MPI(MPI_Win_allocate(sizeof(int) * 2 * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
				   &base, &win));
	for (int i = 0; i < 2 * N; i++)
		base[i] = -1;
	for (int i = 0; i < N; i++) {
		src[i] = rank * 1000000 + i;
		got[i] = -1;
	}
	MPI_Type_vector(N, 1, 2, MPI_INT, &every2);
	MPI_Type_commit(&every2);
	CHECK_MPI(MPI_Win_fence(0, win));
	CHECK_MPI(MPI_Put(src, N, MPI_INT, t, 0, 1, every2, win));
	CHECK_MPI(MPI_Win_fence(0, win));
	for (int i = 0; i < N; i++)
		ok &= base[2 * i] == from * 1000000 + i && base[2 * i + 1] == -1;
	CHECK(ok);
	CHECK_MPI(MPI_Get(got, N, MPI_INT, t, 0, 1, every2, win));
	CHECK_MPI(MPI_Win_fence(0, win));
	ok = 1;
	for (int i = 0; i < N; i++)
		ok &= got[i] == rank * 1000000 + i;
	CHECK(ok);
	MPI_Type_free(&every2);
	CHECK_MPI(MPI_Win_free(&win));
	free(src);
	free(got);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	fences();
	datatypes();
	repeated_type();
	atomics();
	pair_accumulates();
	dynamic();
	exclusive();
	pscw();
	shared();
	errors();
	return mt_finish("t_win");
}
