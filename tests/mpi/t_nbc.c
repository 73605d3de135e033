/*
 * Non-blocking collectives and MPI_Alltoallw, each result checked against
 * what every rank contributed: every root, sizes from 0 to large, MPI_IN_PLACE,
 * a non-contiguous type, a non-commutative op (2x2 matrix product) whose
 * result depends on rank order, several collectives outstanding at once and
 * completed out of order beside a blocking one, progress made by MPI_Test
 * alone while the program computes, a barrier that cannot finish before its
 * last rank enters, bad arguments under MPI_ERRORS_RETURN, and persistent
 * collectives (MPI-4): started again and again, two of them started in
 * opposite orders on odd and even ranks, their types freed after the init.
 */
#include "mt.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

static int rank, size;

static int val(int r, int i)
{
	return (r * 31 + i * 7) % 1000 - 300;
}

static int sum_upto(int last, int i)
{
	int e = 0;

	for (int r = 0; r <= last; r++)
		e += val(r, i);
	return e;
}

static void wait1(MPI_Request *r)
{
	CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
	CHECK(*r == MPI_REQUEST_NULL);
}

/* The product of matrices first..last (element j), lower ranks left. */
static void product(int first, int last, int j, int *e)
{
	int one = 1, in[4], t[4];

	mt_mat_of(first + j, e);
	for (int r = first + 1; r <= last; r++) {
		mt_mat_of(r + j, t);
		memcpy(in, e, sizeof(in));
		memcpy(e, t, sizeof(t));
		mt_matmul(in, e, &one, NULL);
	}
}

static void barrier(void)
{
	MPI_Request r;

	CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r));
	wait1(&r);
	if (size == 1)
		return;
	/* Nobody leaves before rank 0, 200 ms late, has entered. The ranks
	 * share one host and CLOCK_MONOTONIC (MPI_Wtime), so rank 0's entry
	 * time, sent afterwards, is comparable with each rank's exit time
	 * whatever the skew between their starts. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		nanosleep(&(struct timespec){0, 200000000}, NULL);
	{
		double entered = MPI_Wtime(), left;

		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r));
		wait1(&r);
		left = MPI_Wtime();
		CHECK_MPI(MPI_Bcast(&entered, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		if (left < entered)
			fprintf(stderr, "rank %d: left the barrier %.6f s before rank 0 entered\n", rank,
				entered - left);
		CHECK(left >= entered);
	}
}

static void bcast(void)
{
	int counts[] = {0, 1, 5, 1000, 70000};
	MPI_Datatype v;

	for (int k = 0; k < 5; k++)
		for (int root = 0; root < size; root++) {
			int n = counts[k], *b = malloc(sizeof(int) * (size_t)(n + 1)), ok = 1;
			MPI_Request r;

			for (int i = 0; i < n; i++)
				b[i] = rank == root ? val(root, i) : -1;
			CHECK_MPI(MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &r));
			wait1(&r);
			for (int i = 0; i < n; i++)
				ok &= b[i] == val(root, i);
			CHECK(ok);
			free(b);
		}
	/* Every other int: the holes stay as they were. */
	MPI_Type_vector(500, 1, 2, MPI_INT, &v);
	MPI_Type_commit(&v);
	{
		int b[1000], ok = 1;
		MPI_Request r;

		for (int i = 0; i < 1000; i++)
			b[i] = rank == size - 1 || i % 2 ? i : -1;
		CHECK_MPI(MPI_Ibcast(b, 1, v, size - 1, MPI_COMM_WORLD, &r));
		MPI_Type_free(&v); /* still in use: freed when the call is done */
		wait1(&r);
		for (int i = 0; i < 1000; i++)
			ok &= b[i] == i;
		CHECK(ok);
	}
}

static void reductions(void)
{
	int counts[] = {0, 1, 1000, 65536 + 3};
	MPI_Op mop;

	for (int k = 0; k < 4; k++) {
		int n = counts[k], *in = malloc(sizeof(int) * (size_t)(n + 1)),
		    *out = malloc(sizeof(int) * (size_t)(n + 1)), ok = 1;
		MPI_Request r;

		for (int i = 0; i < n; i++)
			in[i] = val(rank, i);
		CHECK_MPI(MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < n; i++)
			ok &= out[i] == sum_upto(size - 1, i);
		memcpy(out, in, sizeof(int) * (size_t)n);
		CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < n; i++)
			ok &= out[i] == sum_upto(size - 1, i);
		CHECK(ok);
		for (int root = 0; root < size; root++) {
			memset(out, 0, sizeof(int) * (size_t)(n + 1));
			if (rank == root)
				memcpy(out, in, sizeof(int) * (size_t)n);
			CHECK_MPI(MPI_Ireduce(rank == root && root % 2 ? MPI_IN_PLACE : in, out, n, MPI_INT,
					      MPI_SUM, root, MPI_COMM_WORLD, &r));
			wait1(&r);
			if (rank == root)
				for (int i = 0; i < n; i++)
					ok &= out[i] == sum_upto(size - 1, i);
			CHECK(ok);
		}
		free(in);
		free(out);
	}
	/* Rank order, every root, in and out of place, and all-reduce. */
	MPI_Op_create(mt_matmul, 0, &mop);
	{
		MPI_Datatype m2;
		int in[3][4], out[3][4], e[4], ok = 1;
		MPI_Request r;

		MPI_Type_contiguous(4, MPI_INT, &m2);
		MPI_Type_commit(&m2);
		for (int j = 0; j < 3; j++)
			mt_mat_of(rank + j, in[j]);
		for (int root = 0; root < size; root++) {
			if (rank == root)
				memcpy(out, in, sizeof(in));
			CHECK_MPI(MPI_Ireduce(rank == root && root % 2 ? MPI_IN_PLACE : in, out, 3, m2, mop,
					      root, MPI_COMM_WORLD, &r));
			wait1(&r);
			for (int j = 0; j < 3 && rank == root; j++) {
				product(0, size - 1, j, e);
				ok &= !memcmp(out[j], e, sizeof(e));
			}
		}
		CHECK_MPI(MPI_Iallreduce(in, out, 3, m2, mop, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int j = 0; j < 3; j++) {
			product(0, size - 1, j, e);
			ok &= !memcmp(out[j], e, sizeof(e));
		}
		/* Scan and exscan keep rank order too. */
		CHECK_MPI(MPI_Iscan(in, out, 3, m2, mop, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int j = 0; j < 3; j++) {
			product(0, rank, j, e);
			ok &= !memcmp(out[j], e, sizeof(e));
		}
		memcpy(out, in, sizeof(in));
		CHECK_MPI(MPI_Iexscan(MPI_IN_PLACE, out, 3, m2, mop, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int j = 0; j < 3 && rank > 0; j++) {
			product(0, rank - 1, j, e);
			ok &= !memcmp(out[j], e, sizeof(e));
		}
		/* The op and the type freed before the wait: the reduction
		 * still has them (a use after free here shows under ASan). */
		{
			MPI_Op tmp_op;
			MPI_Datatype tmp_t;

			MPI_Op_create(mt_matmul, 0, &tmp_op);
			MPI_Type_dup(m2, &tmp_t);
			CHECK_MPI(MPI_Iallreduce(in, out, 3, tmp_t, tmp_op, MPI_COMM_WORLD, &r));
			CHECK_MPI(MPI_Op_free(&tmp_op));
			CHECK_MPI(MPI_Type_free(&tmp_t));
			CHECK(tmp_op == MPI_OP_NULL);
			wait1(&r);
			for (int j = 0; j < 3; j++) {
				product(0, size - 1, j, e);
				ok &= !memcmp(out[j], e, sizeof(e));
			}
		}
		CHECK(ok);
		MPI_Type_free(&m2);
	}
	MPI_Op_free(&mop);
	/* Reduce-scatter: rank i gets i + 1 elements of the sum. */
	{
		int *counts = malloc(sizeof(int) * (size_t)size), total = 0, ok = 1, off = 0;
		int *in, *out;
		MPI_Request r;

		for (int i = 0; i < size; i++)
			total += counts[i] = i + 1;
		in = malloc(sizeof(int) * (size_t)total);
		out = malloc(sizeof(int) * (size_t)total);
		for (int i = 0; i < total; i++)
			in[i] = val(rank, i);
		for (int i = 0; i < rank; i++)
			off += counts[i];
		CHECK_MPI(MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < counts[rank]; i++)
			ok &= out[i] == sum_upto(size - 1, off + i);
		memcpy(out, in, sizeof(int) * (size_t)total);
		CHECK_MPI(MPI_Ireduce_scatter_block(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
						    &r));
		wait1(&r);
		ok &= out[0] == sum_upto(size - 1, rank);
		CHECK(ok);
		free(in);
		free(out);
		free(counts);
	}
}

static void gathers(void)
{
	int per = 3, n = size * per, *all = malloc(sizeof(int) * (size_t)n * 2), mine[3];
	int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
	MPI_Request r;

	for (int i = 0; i < per; i++)
		mine[i] = val(rank, i);
	for (int i = 0; i < size; i++) {
		counts[i] = i % 3 + 1;   /* Gatherv: i%3+1 values from rank i, */
		displs[i] = 2 * per * i; /* spread out with gaps */
	}
	for (int root = 0; root < size; root++) {
		int ok = 1;

		memset(all, -1, sizeof(int) * (size_t)n * 2);
		if (rank == root)
			memcpy(all + root * per, mine, sizeof(mine));
		CHECK_MPI(MPI_Igather(rank == root && root % 2 ? MPI_IN_PLACE : mine, per, MPI_INT, all, per,
				      MPI_INT, root, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < n && rank == root; i++)
			ok &= all[i] == val(i / per, i % per);
		memset(all, -1, sizeof(int) * (size_t)n * 2);
		CHECK_MPI(MPI_Igatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, root,
				       MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < size && rank == root; i++)
			for (int j = 0; j < 2 * per; j++)
				ok &= all[displs[i] + j] == (j < counts[i] ? val(i, j) : -1);
		/* Scatter back what the root holds. */
		if (rank == root)
			for (int i = 0; i < n; i++)
				all[i] = val(i / per, i % per) + 1;
		memset(mine, -1, sizeof(mine));
		CHECK_MPI(MPI_Iscatter(all, per, MPI_INT, rank == root && root % 2 ? MPI_IN_PLACE : mine,
				       per, MPI_INT, root, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < per && !(rank == root && root % 2); i++)
			ok &= mine[i] == val(rank, i) + 1;
		if (rank == root)
			for (int i = 0; i < size; i++)
				for (int j = 0; j < counts[i]; j++)
					all[displs[i] + j] = val(i, j) + 2;
		memset(mine, -1, sizeof(mine));
		CHECK_MPI(MPI_Iscatterv(all, counts, displs, MPI_INT, mine, counts[rank], MPI_INT, root,
					MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < per; i++)
			ok &= mine[i] == (i < counts[rank] ? val(rank, i) + 2 : -1);
		CHECK(ok);
		for (int i = 0; i < per; i++)
			mine[i] = val(rank, i);
	}
	/* Allgather, out of place and in place, and allgatherv with gaps. */
	{
		int ok = 1;

		memset(all, -1, sizeof(int) * (size_t)n * 2);
		CHECK_MPI(MPI_Iallgather(mine, per, MPI_INT, all, per, MPI_INT, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < n; i++)
			ok &= all[i] == val(i / per, i % per);
		memset(all, -1, sizeof(int) * (size_t)n * 2);
		memcpy(all + rank * per, mine, sizeof(mine));
		CHECK_MPI(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, per, MPI_INT,
					 MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < n; i++)
			ok &= all[i] == val(i / per, i % per);
		memset(all, -1, sizeof(int) * (size_t)n * 2);
		CHECK_MPI(MPI_Iallgatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT,
					  MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < size; i++)
			for (int j = 0; j < 2 * per; j++)
				ok &= all[displs[i] + j] == (j < counts[i] ? val(i, j) : -1);
		CHECK(ok);
	}
	free(all);
	free(counts);
	free(displs);
}

/* Element [from][to][k] of an all-to-all. */
static int a2a(int from, int to, int k)
{
	return from * 10000 + to * 100 + k;
}

static void alltoalls(void)
{
	int per = 2, n = size * per, *s = malloc(sizeof(int) * (size_t)n),
	    *d = malloc(sizeof(int) * (size_t)n * 2), ok = 1;
	int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size),
	    *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size),
		     *rt = malloc(sizeof(MPI_Datatype) * (size_t)size), pair;
	MPI_Request r;

	for (int p = 0; p < size; p++)
		for (int k = 0; k < per; k++)
			s[p * per + k] = a2a(rank, p, k);
	memset(d, -1, sizeof(int) * (size_t)n * 2);
	CHECK_MPI(MPI_Ialltoall(s, per, MPI_INT, d, per, MPI_INT, MPI_COMM_WORLD, &r));
	wait1(&r);
	for (int p = 0; p < size; p++)
		for (int k = 0; k < per; k++)
			ok &= d[p * per + k] == a2a(p, rank, k);
	memcpy(d, s, sizeof(int) * (size_t)n);
	CHECK_MPI(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, d, per, MPI_INT, MPI_COMM_WORLD, &r));
	wait1(&r);
	for (int p = 0; p < size; p++)
		for (int k = 0; k < per; k++)
			ok &= d[p * per + k] == a2a(p, rank, k);
	CHECK(ok);
	/* v: rank p gets (p % 2) + 1 values, placed with a gap of one. */
	for (int p = 0; p < size; p++) {
		sc[p] = p % 2 + 1;
		sd[p] = p * per;
		rc[p] = rank % 2 + 1;
		rd[p] = p * (per + 1);
	}
	memset(d, -1, sizeof(int) * (size_t)n * 2);
	CHECK_MPI(MPI_Ialltoallv(s, sc, sd, MPI_INT, d, rc, rd, MPI_INT, MPI_COMM_WORLD, &r));
	wait1(&r);
	for (int p = 0; p < size; p++)
		for (int k = 0; k < per + 1; k++)
			ok &= d[p * (per + 1) + k] == (k < rc[p] ? a2a(p, rank, k) : -1);
	CHECK(ok);
	/* w: per-peer types and byte displacements; each block goes as two
	 * MPI_INTs and arrives as one pair type. */
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	for (int p = 0; p < size; p++) {
		sc[p] = 2;
		sd[p] = p * per * (int)sizeof(int);
		st[p] = MPI_INT;
		rc[p] = 1;
		rd[p] = (size - 1 - p) * per * (int)sizeof(int); /* reversed */
		rt[p] = pair;
	}
	memset(d, -1, sizeof(int) * (size_t)n * 2);
	CHECK_MPI(MPI_Ialltoallw(s, sc, sd, st, d, rc, rd, rt, MPI_COMM_WORLD, &r));
	wait1(&r);
	for (int p = 0; p < size; p++)
		for (int k = 0; k < per; k++)
			ok &= d[(size - 1 - p) * per + k] == a2a(p, rank, k);
	memset(d, -1, sizeof(int) * (size_t)n * 2);
	CHECK_MPI(MPI_Alltoallw(s, sc, sd, st, d, rc, rd, rt, MPI_COMM_WORLD));
	for (int p = 0; p < size; p++)
		for (int k = 0; k < per; k++)
			ok &= d[(size - 1 - p) * per + k] == a2a(p, rank, k);
	/* In place, with the pair type both ways. */
	for (int p = 0; p < size; p++) {
		rd[p] = p * per * (int)sizeof(int);
		memcpy(d + p * per, s + p * per, sizeof(int) * (size_t)per);
	}
	CHECK_MPI(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, d, rc, rd, rt, MPI_COMM_WORLD));
	for (int p = 0; p < size; p++)
		for (int k = 0; k < per; k++)
			ok &= d[p * per + k] == a2a(p, rank, k);
	CHECK(ok);
	MPI_Type_free(&pair);
	free(s);
	free(d);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(st);
	free(rt);
}

/* Several at once, completed in another order, a blocking collective
 * between them, one freed by MPI_Request_free. */
static void together(void)
{
	int b = rank == 1 % size ? 77 : 0, x = rank + 1, sum = -1, bsum = -1, y = 5;
	static volatile int ysum;
	MPI_Request rs[3], rf;

	CHECK_MPI(MPI_Ibcast(&b, 1, MPI_INT, 1 % size, MPI_COMM_WORLD, &rs[0]));
	CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rs[1]));
	CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rs[2]));
	CHECK_MPI(MPI_Allreduce(&x, &bsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK_MPI(MPI_Iallreduce(&y, (int *)&ysum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rf));
	CHECK_MPI(MPI_Request_free(&rf));
	CHECK(rf == MPI_REQUEST_NULL);
	wait1(&rs[2]);
	wait1(&rs[1]);
	wait1(&rs[0]);
	CHECK(b == 77);
	CHECK(sum == size * (size + 1) / 2);
	CHECK(bsum == sum);
	/* The freed one finishes in the background, moved on by other calls. */
	{
		double t0 = MPI_Wtime();
		int flag;

		while (ysum != 5 * size && MPI_Wtime() - t0 < 30)
			MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		CHECK(ysum == 5 * size);
	}
}

/* Progress by MPI_Test alone: started, then computation with a test now
 * and then, and the collective must be found complete by a test, without
 * MPI_Wait. */
static void overlap(void)
{
	int n = 16384, *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
	int flag = 0, tests = 0, ok = 1;
	volatile double acc = 0;
	double t0 = MPI_Wtime();
	MPI_Request r;

	for (int i = 0; i < n; i++)
		in[i] = val(rank, i);
	CHECK_MPI(MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
	while (!flag && MPI_Wtime() - t0 < 60) {
		for (int i = 0; i < 2000; i++)
			acc += i * 0.5;
		CHECK_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
		tests++;
	}
	CHECK(flag);
	CHECK(r == MPI_REQUEST_NULL);
	for (int i = 0; i < n; i++)
		ok &= out[i] == sum_upto(size - 1, i);
	CHECK(ok);
	free(in);
	free(out);
}

static void errors(void)
{
	MPI_Request r = MPI_REQUEST_NULL;
	int x = 0, y = 0, cls = 0;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &r), &cls);
	CHECK(cls == MPI_ERR_ROOT && r == MPI_REQUEST_NULL);
	MPI_Error_class(MPI_Iallreduce(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), &cls);
	CHECK(cls == MPI_ERR_COUNT && r == MPI_REQUEST_NULL);
	MPI_Error_class(MPI_Iallreduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD, &r), &cls);
	CHECK(cls == MPI_ERR_TYPE && r == MPI_REQUEST_NULL);
	MPI_Error_class(MPI_Ibarrier(MPI_COMM_NULL, &r), &cls);
	CHECK(cls == MPI_ERR_COMM && r == MPI_REQUEST_NULL);
	MPI_Error_class(MPI_Ibarrier(MPI_COMM_WORLD, NULL), &cls);
	CHECK(cls == MPI_ERR_REQUEST);
	MPI_Error_class(MPI_Ialltoallv(&x, NULL, NULL, MPI_INT, &y, NULL, NULL, MPI_INT, MPI_COMM_WORLD,
				       &r),
			&cls);
	CHECK(cls == MPI_ERR_ARG && r == MPI_REQUEST_NULL);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* On a communicator of the odd ranks, so tags and ranks are its own. */
static void on_subcomm(void)
{
	MPI_Comm odd;
	int x, sum = 0, nsub, srank;
	MPI_Request r;

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd);
	MPI_Comm_size(odd, &nsub);
	MPI_Comm_rank(odd, &srank);
	x = rank;
	CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, odd, &r));
	wait1(&r);
	{
		int e = 0;

		for (int i = rank % 2; i < size; i += 2)
			e += i;
		CHECK(sum == e);
	}
	MPI_Comm_free(&odd);
}

#if MPI_VERSION >= 4 || defined(MBMPI_HANDLE)	/* MPI-4; Open MPI 4.1 has MPIX_ names */
static void persistent(void)
{
	MPI_Request ar, br, rq[2];
	MPI_Datatype two;
	MPI_Status st;
	int in[2], out[2], b[2], flag;

	/* Inactive until started: a test completes at once, empty. */
	CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &two));
	CHECK_MPI(MPI_Type_commit(&two));
	CHECK_MPI(MPI_Allreduce_init(in, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
				     &ar));
	CHECK_MPI(MPI_Bcast_init(b, 1, two, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &br));
	CHECK_MPI(MPI_Type_free(&two));	/* the request keeps it */
	CHECK_MPI(MPI_Test(&ar, &flag, &st));
	CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
	for (int it = 0; it < 5; it++) {
		in[0] = rank + it;
		in[1] = val(rank, it);
		b[0] = b[1] = rank == size - 1 ? it * 100 + 1 : -1;
		/* Starts in either order: each request's tags were fixed at
		 * its init. */
		rq[0] = rank % 2 ? ar : br;
		rq[1] = rank % 2 ? br : ar;
		CHECK_MPI(MPI_Start(&rq[0]));
		CHECK_MPI(MPI_Start(&rq[1]));
		CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL);
		CHECK(out[0] == size * (size - 1) / 2 + size * it);
		CHECK(out[1] == sum_upto(size - 1, it));
		CHECK(b[0] == it * 100 + 1 && b[1] == it * 100 + 1);
	}
	CHECK_MPI(MPI_Startall(1, &ar));
	CHECK_MPI(MPI_Wait(&ar, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Request_free(&ar));
	CHECK_MPI(MPI_Request_free(&br));
	CHECK(ar == MPI_REQUEST_NULL && br == MPI_REQUEST_NULL);
	/* A barrier over and over, with Start/Test, and one freed while active. */
	CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &ar));
	for (int it = 0; it < 20; it++) {
		CHECK_MPI(MPI_Start(&ar));
		do
			CHECK_MPI(MPI_Test(&ar, &flag, MPI_STATUS_IGNORE));
		while (!flag);
	}
	CHECK_MPI(MPI_Start(&ar));
	CHECK_MPI(MPI_Request_free(&ar));
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}
#else
static void persistent(void)
{
}
#endif

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	barrier();
	bcast();
	reductions();
	gathers();
	alltoalls();
	together();
	overlap();
	errors();
	on_subcomm();
	persistent();
	return mt_finish("t_nbc");
}
