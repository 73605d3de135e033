/*
 * Collectives, each checked against a local computation of what every rank
 * contributed: sizes from 0 to large (so the size-based algorithm choice
 * takes each path), every root, MPI_IN_PLACE, a derived datatype with gaps,
 * every predefined op on every type it is defined for, and a non-commutative
 * user op (2x2 matrix product) whose result depends on rank order.
 */
#include "mt.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

static int rank, size;

static int val(int r, int i)
{
	return (r * 31 + i * 7) % 1000 - 300;
}

/* The expected reduction of val(0..last, i): '+' sum, '>' max, '<' min. */
static int fold(char op, int last, int i)
{
	int e = val(0, i);

	for (int r = 1; r <= last; r++) {
		int x = val(r, i);
		e = op == '+' ? e + x : op == '>' ? (x > e ? x : e) : (x < e ? x : e);
	}
	return e;
}

static void barrier_bcast(void)
{
	int counts[] = {0, 1, 5, 1000, 70000};

	for (int k = 0; k < 5; k++) {
		CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
		for (int root = 0; root < size; root++) {
			int n = counts[k], *b = malloc(sizeof(int) * (size_t)(n + 1)), ok = 1;
			for (int i = 0; i < n; i++)
				b[i] = rank == root ? val(root, i) : -1;
			CHECK_MPI(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
			for (int i = 0; i < n; i++)
				ok &= b[i] == val(root, i);
			CHECK(ok);
			free(b);
			if (n > 1000 && root > 1)
				break;
		}
	}
	/* Bcast of a non-contiguous type, large enough for scatter-allgather. */
	{
		MPI_Datatype v;
		int n = 40000, *b = malloc(sizeof(int) * 2 * (size_t)n), ok = 1;
		MPI_Type_vector(n, 1, 2, MPI_INT, &v);
		MPI_Type_commit(&v);
		for (int i = 0; i < 2 * n; i++)
			b[i] = rank == 0 || i % 2 ? i : -1;
		MPI_Bcast(b, 1, v, 0, MPI_COMM_WORLD);
		for (int i = 0; i < 2 * n; i++)
			ok &= b[i] == i;
		CHECK(ok);
		MPI_Type_free(&v);
		free(b);
	}
}

/* The ordered product of ranks 0..last's matrices for element j. */
static void product_upto(int last, int j, int *e)
{
	int one = 1, in[4], t[4];

	mt_mat_of(j, e);
	for (int r = 1; r <= last; r++) {
		mt_mat_of(r + j, t);
		memcpy(in, e, sizeof(in));
		memcpy(e, t, sizeof(t));
		mt_matmul(in, e, &one, NULL); /* e = in * t: lower ranks on the left */
	}
}

static void reductions(void)
{
	int counts[] = {0, 1, 3, 1000, 65536 + 3};
	MPI_Op mop;
	MPI_Datatype m2;

	for (int k = 0; k < 5; k++) {
		int n = counts[k], *in = malloc(sizeof(int) * (size_t)(n + 1)),
		    *out = malloc(sizeof(int) * (size_t)(n + 1)), ok = 1, okr = 1;
		for (int i = 0; i < n; i++)
			in[i] = val(rank, i);
		CHECK_MPI(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			ok &= out[i] == fold('+', size - 1, i);
		CHECK(ok);
		/* In place. */
		memcpy(out, in, sizeof(int) * (size_t)n);
		CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			ok &= out[i] == fold('>', size - 1, i);
		CHECK(ok);
		for (int root = 0; root < size; root += (size > 3 ? 2 : 1)) {
			memset(out, 0, sizeof(int) * (size_t)n);
			CHECK_MPI(MPI_Reduce(in, out, n, MPI_INT, MPI_MIN, root, MPI_COMM_WORLD));
			if (rank == root)
				for (int i = 0; i < n; i++)
					okr &= out[i] == fold('<', size - 1, i);
			if (rank == root) {
				memcpy(out, in, sizeof(int) * (size_t)n);
				CHECK_MPI(MPI_Reduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
				for (int i = 0; i < n; i++)
					okr &= out[i] == fold('+', size - 1, i);
			} else {
				CHECK_MPI(MPI_Reduce(in, NULL, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
			}
		}
		CHECK(okr);
		free(in);
		free(out);
	}
	/* Non-commutative user op: ordered product of every rank's matrix. */
	MPI_Type_contiguous(4, MPI_INT, &m2);
	MPI_Type_commit(&m2);
	CHECK_MPI(MPI_Op_create(mt_matmul, 0, &mop));
	{
		int comm;
		MPI_Op_commutative(mop, &comm);
		CHECK(!comm);
	}
	for (int cnt = 1; cnt <= 5000; cnt *= 70) {
		int *a = malloc(sizeof(int) * 4 * (size_t)cnt), *res = malloc(sizeof(int) * 4 * (size_t)cnt);
		int e[4], ok = 1;
		for (int j = 0; j < cnt; j++)
			mt_mat_of(rank + j, a + 4 * j);
		for (int root = 0; root < size; root += size > 2 ? size - 1 : 1) {
			MPI_Reduce(a, res, cnt, m2, mop, root, MPI_COMM_WORLD);
			if (rank == root)
				for (int j = 0; j < cnt; j += 13) {
					product_upto(size - 1, j, e);
					ok &= !memcmp(res + 4 * j, e, sizeof(e));
				}
		}
		CHECK(ok);
		MPI_Allreduce(a, res, cnt, m2, mop, MPI_COMM_WORLD);
		for (int j = 0; j < cnt; j += 13) {
			product_upto(size - 1, j, e);
			ok &= !memcmp(res + 4 * j, e, sizeof(e));
		}
		CHECK(ok);
		/* Scan with the same op: prefix products. */
		MPI_Scan(a, res, cnt, m2, mop, MPI_COMM_WORLD);
		for (int j = 0; j < cnt; j += 13) {
			product_upto(rank, j, e);
			ok &= !memcmp(res + 4 * j, e, sizeof(e));
		}
		CHECK(ok);
		free(a);
		free(res);
	}
	MPI_Op_free(&mop);
	CHECK(mop == MPI_OP_NULL);
	MPI_Type_free(&m2);
	/* Reduction over a strided type: only the covered ints change. MPICH and
	 * we allow a predefined op on a type built from one basic type; Open MPI
	 * refuses it, so when this file is built with mpicc.openmpi (the CM
	 * cross-check) the case is left out. */
#ifndef OPEN_MPI
	{
		MPI_Datatype v;
		int b[12], r[12], ok = 1;
		MPI_Type_vector(4, 1, 3, MPI_INT, &v);
		MPI_Type_commit(&v);
		for (int i = 0; i < 12; i++) {
			b[i] = rank + i;
			r[i] = -7;
		}
		MPI_Allreduce(b, r, 1, v, MPI_SUM, MPI_COMM_WORLD);
		for (int i = 0; i < 12; i++)
			ok &= r[i] == (i % 3 || i > 9 ? -7 : size * (size - 1) / 2 + size * i);
		CHECK(ok);
		MPI_Type_free(&v);
	}
#endif
}

/* Every predefined op on every type it is defined for. */
#define OPS_INT(T, MT)                                                                     \
	do {                                                                               \
		MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR,    \
				MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};                    \
		for (int o = 0; o < 10; o++) {                                             \
			T in[3], out[3], e[3];                                             \
			for (int i = 0; i < 3; i++) {                                      \
				in[i] = (T)((rank + i) % 3 + (i == 1));                    \
				e[i] = (T)(i % 3 + (i == 1));                              \
			}                                                                  \
			for (int r = 1; r < size; r++)                                     \
				for (int i = 0; i < 3; i++) {                              \
					T x = (T)((r + i) % 3 + (i == 1)), y = e[i];        \
					switch (o) {                                       \
					case 0: e[i] = (T)(x + y); break;                  \
					case 1: e[i] = (T)(x * y); break;                  \
					case 2: e[i] = x > y ? x : y; break;               \
					case 3: e[i] = x < y ? x : y; break;               \
					case 4: e[i] = (T)(x && y); break;                 \
					case 5: e[i] = (T)(x || y); break;                 \
					case 6: e[i] = (T)(!x != !y); break;               \
					case 7: e[i] = (T)(x & y); break;                  \
					case 8: e[i] = (T)(x | y); break;                  \
					case 9: e[i] = (T)(x ^ y); break;                  \
					}                                                  \
				}                                                          \
			CHECK_MPI(MPI_Allreduce(in, out, 3, MT, ops[o], MPI_COMM_WORLD));  \
			CHECK(!memcmp(out, e, sizeof(e)));                                 \
		}                                                                          \
	} while (0)

/* Sum and product (also complex), then max and min (real types only). */
#define OPS_FLOAT(T, MT, ORDERED)                                                          \
	do {                                                                               \
		MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};                      \
		for (int o = 0; o < (ORDERED ? 4 : 2); o++) {                              \
			T in[3], out[3], e[3];                                             \
			for (int i = 0; i < 3; i++) {                                      \
				in[i] = (T)((rank + i) % 3 + 1);                           \
				e[i] = (T)(i % 3 + 1);                                     \
			}                                                                  \
			for (int r = 1; r < size; r++)                                     \
				for (int i = 0; i < 3; i++) {                              \
					T x = (T)((r + i) % 3 + 1);                         \
					if (o == 0)                                        \
						e[i] = x + e[i];                           \
					else if (o == 1)                                   \
						e[i] = x * e[i];                           \
					else                                               \
						ORDER_STEP(e[i], x, o);                    \
				}                                                          \
			CHECK_MPI(MPI_Allreduce(in, out, 3, MT, ops[o], MPI_COMM_WORLD));  \
			/* == not memcmp: long double has padding bytes */                 \
			CHECK(out[0] == e[0] && out[1] == e[1] && out[2] == e[2]);         \
		}                                                                          \
	} while (0)
#define ORDER_STEP(e, x, o) ((e) = (o) == 2 ? ((x) > (e) ? (x) : (e)) : ((x) < (e) ? (x) : (e)))
#define NO_ORDER_STEP(e, x, o) ((void)0)

static void all_ops(void)
{
	/* Lean: one type per size and kind (the arithmetic is per type; the
	 * path through the collective is the same for all). */
	bool lean = mt_lean();

	OPS_INT(signed char, MPI_SIGNED_CHAR);
	OPS_INT(unsigned short, MPI_UNSIGNED_SHORT);
	OPS_INT(int, MPI_INT);
	OPS_INT(unsigned long long, MPI_UNSIGNED_LONG_LONG);
	if (!lean) {
		OPS_INT(unsigned char, MPI_UNSIGNED_CHAR);
		OPS_INT(short, MPI_SHORT);
		OPS_INT(unsigned, MPI_UNSIGNED);
		OPS_INT(long, MPI_LONG);
		OPS_INT(unsigned long, MPI_UNSIGNED_LONG);
		OPS_INT(long long, MPI_LONG_LONG);
		OPS_INT(int8_t, MPI_INT8_T);
		OPS_INT(int16_t, MPI_INT16_T);
		OPS_INT(int32_t, MPI_INT32_T);
		OPS_INT(int64_t, MPI_INT64_T);
		OPS_INT(uint8_t, MPI_UINT8_T);
		OPS_INT(uint16_t, MPI_UINT16_T);
		OPS_INT(uint32_t, MPI_UINT32_T);
		OPS_INT(uint64_t, MPI_UINT64_T);
		OPS_INT(MPI_Aint, MPI_AINT);
		OPS_INT(MPI_Offset, MPI_OFFSET);
		OPS_INT(MPI_Count, MPI_COUNT);
#ifdef MPI_INTEGER16	/* Fortran's INTEGER(16): absent or null in some MPIs */
		if (MPI_INTEGER16 != MPI_DATATYPE_NULL)
			OPS_INT(__int128, MPI_INTEGER16);
#endif
		OPS_FLOAT(float, MPI_FLOAT, 1);
	}
	OPS_FLOAT(double, MPI_DOUBLE, 1);
	OPS_FLOAT(long double, MPI_LONG_DOUBLE, 1);
#undef ORDER_STEP
#define ORDER_STEP NO_ORDER_STEP
	if (!lean)
		OPS_FLOAT(float complex, MPI_C_FLOAT_COMPLEX, 0);
	OPS_FLOAT(double complex, MPI_C_DOUBLE_COMPLEX, 0);
	if (!lean)
		OPS_FLOAT(long double complex, MPI_C_LONG_DOUBLE_COMPLEX, 0);
	{
		bool in = rank % 2, out;
		MPI_Allreduce(&in, &out, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
		CHECK(out == (size > 1));
		MPI_Allreduce(&in, &out, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
		CHECK(!out);
		MPI_Allreduce(&in, &out, 1, MPI_C_BOOL, MPI_LXOR, MPI_COMM_WORLD);
		CHECK(out == (size / 2) % 2);
	}
	{
		unsigned char in = (unsigned char)(1u << (rank % 8)), out;
		MPI_Allreduce(&in, &out, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
		CHECK(out == (unsigned char)((1u << (size < 8 ? size : 8)) - 1));
		MPI_Allreduce(&in, &out, 1, MPI_BYTE, MPI_BAND, MPI_COMM_WORLD);
		CHECK(out == (size == 1 ? 1 : 0));
		MPI_Allreduce(&in, &out, 1, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD);
		unsigned char x = 0;
		for (int r = 0; r < size; r++)
			x ^= (unsigned char)(1u << (r % 8));
		CHECK(out == x);
	}
	/* MINLOC/MAXLOC on each pair type; ties go to the smaller index. */
#define LOC(T, MT)                                                                           \
	do {                                                                                 \
		struct {                                                                     \
			T v;                                                                 \
			int i;                                                               \
		} in[2], out[2];                                                             \
		in[0].v = (T)(rank % 3);                                                     \
		in[0].i = rank;                                                              \
		in[1].v = (T)(-(rank % 2));                                                  \
		in[1].i = rank;                                                              \
		MPI_Allreduce(in, out, 2, MT, MPI_MAXLOC, MPI_COMM_WORLD);                   \
		CHECK(out[0].v == (T)(size >= 3 ? 2 : size - 1) && out[0].i == (size >= 3 ? 2 : size - 1)); \
		CHECK(out[1].v == 0 && out[1].i == 0);                                       \
		MPI_Allreduce(in, out, 2, MT, MPI_MINLOC, MPI_COMM_WORLD);                   \
		CHECK(out[0].v == 0 && out[0].i == 0);                                       \
		CHECK(out[1].v == (T)(size > 1 ? -1 : 0) && out[1].i == (size > 1 ? 1 : 0)); \
	} while (0)
	LOC(double, MPI_DOUBLE_INT);
	LOC(int, MPI_2INT);
	if (!lean) {
		LOC(float, MPI_FLOAT_INT);
		LOC(long, MPI_LONG_INT);
		LOC(short, MPI_SHORT_INT);
		LOC(long double, MPI_LONG_DOUBLE_INT);
	}
	/* Reduce_local and REPLACE/NO_OP. */
	{
		int a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
		CHECK_MPI(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_SUM));
		CHECK(b[0] == 11 && b[2] == 33);
#ifndef OPEN_MPI /* Open MPI takes REPLACE/NO_OP only in accumulates */
		CHECK_MPI(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_REPLACE));
		CHECK(b[1] == 2);
		CHECK_MPI(MPI_Reduce_local(b, a, 3, MPI_INT, MPI_NO_OP));
		CHECK(a[1] == 2);
#endif
	}
}

static void gathers(void)
{
	int n = 3, big = 9000;
	for (int m = 0; m < 2; m++) {
		int cnt = m ? big : n, *s = malloc(sizeof(int) * (size_t)cnt),
		    *r = malloc(sizeof(int) * (size_t)cnt * (size_t)size), ok = 1;
		for (int i = 0; i < cnt; i++)
			s[i] = val(rank, i);
		for (int root = 0; root < size; root++) {
			memset(r, 0, sizeof(int) * (size_t)cnt * (size_t)size);
			CHECK_MPI(MPI_Gather(s, cnt, MPI_INT, r, cnt, MPI_INT, root, MPI_COMM_WORLD));
			if (rank == root)
				for (int q = 0; q < size; q++)
					for (int i = 0; i < cnt; i++)
						ok &= r[q * cnt + i] == val(q, i);
			/* Scatter it back. */
			memset(s, 0, sizeof(int) * (size_t)cnt);
			CHECK_MPI(MPI_Scatter(r, cnt, MPI_INT, s, cnt, MPI_INT, root, MPI_COMM_WORLD));
			for (int i = 0; i < cnt; i++)
				ok &= s[i] == val(rank, i);
			if (m && root > 0)
				break;
		}
		CHECK(ok);
		/* In-place gather at the root. */
		for (int q = 0; q < size; q++)
			for (int i = 0; i < cnt; i++)
				r[q * cnt + i] = q == rank ? val(rank, i) : 0;
		if (rank == 0)
			MPI_Gather(MPI_IN_PLACE, cnt, MPI_INT, r, cnt, MPI_INT, 0, MPI_COMM_WORLD);
		else
			MPI_Gather(s, cnt, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
		if (rank == 0)
			for (int q = 0; q < size; q++)
				for (int i = 0; i < cnt; i++)
					ok &= r[q * cnt + i] == val(q, i);
		CHECK(ok);
		/* Allgather, and in place. */
		memset(r, 0, sizeof(int) * (size_t)cnt * (size_t)size);
		CHECK_MPI(MPI_Allgather(s, cnt, MPI_INT, r, cnt, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < size; q++)
			for (int i = 0; i < cnt; i++)
				ok &= r[q * cnt + i] == val(q, i);
		CHECK(ok);
		for (int q = 0; q < size; q++)
			for (int i = 0; i < cnt; i++)
				r[q * cnt + i] = q == rank ? val(rank, i) : -1;
		CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < size; q++)
			for (int i = 0; i < cnt; i++)
				ok &= r[q * cnt + i] == val(q, i);
		CHECK(ok);
		free(s);
		free(r);
	}
	/* The v-variants with uneven counts (rank q contributes q+1 ints, with gaps). */
	{
		int *cnts = malloc(sizeof(int) * (size_t)size), *dis = malloc(sizeof(int) * (size_t)size);
		int tot = 0, s[64], *r, ok = 1;
		for (int q = 0; q < size; q++) {
			cnts[q] = q + 1;
			dis[q] = tot + q; /* one-int gap before each block */
			tot += q + 1 + q;
		}
		r = malloc(sizeof(int) * (size_t)(tot + 1));
		for (int i = 0; i <= rank; i++)
			s[i] = val(rank, i);
		for (int i = 0; i < tot; i++)
			r[i] = -9;
		CHECK_MPI(MPI_Gatherv(s, rank + 1, MPI_INT, r, cnts, dis, MPI_INT, size - 1, MPI_COMM_WORLD));
		if (rank == size - 1)
			for (int q = 0; q < size; q++) {
				for (int i = 0; i <= q; i++)
					ok &= r[dis[q] + i] == val(q, i);
				if (q)
					ok &= r[dis[q] - 1] == -9;
			}
		CHECK(ok);
		for (int i = 0; i < tot; i++)
			r[i] = -9;
		CHECK_MPI(MPI_Allgatherv(s, rank + 1, MPI_INT, r, cnts, dis, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < size; q++) {
			for (int i = 0; i <= q; i++)
				ok &= r[dis[q] + i] == val(q, i);
			if (q)
				ok &= r[dis[q] - 1] == -9;
		}
		CHECK(ok);
		memset(s, 0, sizeof(s));
		CHECK_MPI(MPI_Scatterv(r, cnts, dis, MPI_INT, s, rank + 1, MPI_INT, 0, MPI_COMM_WORLD));
		for (int i = 0; i <= rank; i++)
			ok &= s[i] == val(rank, i);
		CHECK(ok);
		free(cnts);
		free(dis);
		free(r);
	}
}

static void alltoalls(void)
{
	int sizes[] = {0, 1, 2, 40, 5000};
	for (int k = 0; k < 5; k++) {
		int b = sizes[k], *s = malloc(sizeof(int) * (size_t)(b * size + 1)),
		    *r = malloc(sizeof(int) * (size_t)(b * size + 1)), ok = 1;
		for (int q = 0; q < size; q++)
			for (int i = 0; i < b; i++)
				s[q * b + i] = rank * 10000 + q * 100 + i;
		CHECK_MPI(MPI_Alltoall(s, b, MPI_INT, r, b, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < size; q++)
			for (int i = 0; i < b; i++)
				ok &= r[q * b + i] == q * 10000 + rank * 100 + i;
		CHECK(ok);
		CHECK_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, b, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < size; q++)
			for (int i = 0; i < b; i++)
				ok &= s[q * b + i] == q * 10000 + rank * 100 + i;
		CHECK(ok);
		free(s);
		free(r);
	}
	/* Alltoallv: rank p sends q+1 ints to rank q. */
	{
		int *sc = malloc(sizeof(int) * 4 * (size_t)size), *sd = sc + size, *rc = sd + size,
		    *rd = rc + size, st = 0, rt = 0, ok = 1;
		for (int q = 0; q < size; q++) {
			sc[q] = q + 1;
			sd[q] = st;
			st += q + 1;
			rc[q] = rank + 1;
			rd[q] = rt;
			rt += rank + 1;
		}
		int *s = malloc(sizeof(int) * (size_t)st), *r = malloc(sizeof(int) * (size_t)rt);
		for (int q = 0; q < size; q++)
			for (int i = 0; i <= q; i++)
				s[sd[q] + i] = rank * 1000 + q * 10 + i;
		CHECK_MPI(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
		for (int q = 0; q < size; q++)
			for (int i = 0; i <= rank; i++)
				ok &= r[rd[q] + i] == q * 1000 + rank * 10 + i;
		CHECK(ok);
		free(s);
		free(r);
		free(sc);
	}
}

static void scatters_and_scans(void)
{
	int per[] = {0, 1, 3, 5000};
	for (int k = 0; k < 4; k++) {
		int n = per[k], *s = malloc(sizeof(int) * (size_t)(n * size + 1)),
		    *r = malloc(sizeof(int) * (size_t)(n * size + 1)), ok = 1;
		for (int i = 0; i < n * size; i++)
			s[i] = val(rank, i);
		CHECK_MPI(MPI_Reduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			ok &= r[i] == fold('+', size - 1, rank * n + i);
		CHECK(ok);
		CHECK_MPI(MPI_Reduce_scatter_block(MPI_IN_PLACE, s, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			ok &= s[i] == r[i];
		CHECK(ok);
		free(s);
		free(r);
	}
	/* Uneven Reduce_scatter: rank q gets q ints (rank 0 none). */
	{
		int *cnts = malloc(sizeof(int) * (size_t)size), tot = 0, off = 0, ok = 1;
		for (int q = 0; q < size; q++) {
			cnts[q] = q;
			tot += q;
		}
		for (int q = 0; q < rank; q++)
			off += q;
		int *s = malloc(sizeof(int) * (size_t)(tot + 1)), r[64];
		for (int i = 0; i < tot; i++)
			s[i] = val(rank, i);
		CHECK_MPI(MPI_Reduce_scatter(s, r, cnts, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		for (int i = 0; i < rank; i++)
			ok &= r[i] == fold('>', size - 1, off + i);
		CHECK(ok);
		free(s);
		free(cnts);
	}
	/* Scan and Exscan. */
	{
		int n = 100, s[100], r[100], ok = 1;
		for (int i = 0; i < n; i++)
			s[i] = val(rank, i);
		CHECK_MPI(MPI_Scan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			ok &= r[i] == fold('+', rank, i);
		CHECK(ok);
		for (int i = 0; i < n; i++)
			r[i] = -5;
		CHECK_MPI(MPI_Exscan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		if (rank > 0)
			for (int i = 0; i < n; i++)
				ok &= r[i] == fold('+', rank - 1, i);
		CHECK(ok);
		memcpy(r, s, sizeof(s));
		CHECK_MPI(MPI_Scan(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			ok &= r[i] == fold('>', rank, i);
		CHECK(ok);
	}
}

/* The same collectives on a sub-communicator of odd size. */
static void on_subcomm(void)
{
	MPI_Comm c;
	int r, s, v, sum = 0;

	MPI_Comm_split(MPI_COMM_WORLD, rank < (size + 1) / 2, rank, &c);
	MPI_Comm_rank(c, &r);
	MPI_Comm_size(c, &s);
	v = r + 1;
	MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c);
	CHECK(sum == s * (s + 1) / 2);
	MPI_Bcast(&v, 1, MPI_INT, s - 1, c);
	CHECK(v == s);
	MPI_Barrier(c);
	MPI_Comm_free(&c);
}

/* Max over the two ints the type below holds, at 2 and 4 ints from its
 * origin (one instance: its extent starts at the first of them). Predefined
 * operations are for predefined types only, so the derived type takes a
 * user operation. */
static void max_2_4(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	const int *a = in;
	int *b = inout;

	(void)dt;
	for (int i = 0; i < *len; i++)
		for (int k = 2; k <= 4; k += 2)
			b[3 * i + k] = a[3 * i + k] > b[3 * i + k] ? a[3 * i + k] : b[3 * i + k];
}

/* Collectives back to back with no barrier between them, more of them than
 * the node-local path has slots (so slots are reused while a slow rank may
 * still be behind), roots moving, each result checked; data just inside and
 * just beyond a shared region; a reduction on a datatype that starts past
 * its lower bound, whose gaps must stay untouched. */
static void back_to_back(void)
{
	enum { ROUNDS = 40 };
	int ok = 1, okg = 1, okr = 1, okb = 1;

	for (int k = 0; k < ROUNDS; k++) {
		int root = k % size, b[3] = {-1, -1, -1}, x = val(rank, k), sum = 0, *all;

		if (rank == root)
			for (int i = 0; i < 3; i++)
				b[i] = val(root, k + i);
		CHECK_MPI(MPI_Bcast(b, 3, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; i < 3; i++)
			ok &= b[i] == val(root, k + i);
		CHECK_MPI(MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, (root + 1) % size, MPI_COMM_WORLD));
		if (rank == (root + 1) % size)
			okr &= sum == fold('+', size - 1, k);
		all = malloc(sizeof(int) * (size_t)size);
		CHECK_MPI(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
		for (int r = 0; r < size; r++)
			okg &= all[r] == val(r, k);
		free(all);
		if (k % 7 == 0)
			CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	}
	CHECK(ok);
	CHECK(okr);
	CHECK(okg);
	/* 16384 bytes a rank is the default region; one int more goes point to point. */
	for (int n = 4095; n <= 4097; n++) {
		int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);

		for (int i = 0; i < n; i++)
			in[i] = val(rank, i);
		CHECK_MPI(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			okb &= out[i] == fold('+', size - 1, i);
		for (int i = 0; i < n; i++)
			out[i] = rank == 1 % size ? val(7, i) : 0;
		CHECK_MPI(MPI_Bcast(out, n, MPI_INT, 1 % size, MPI_COMM_WORLD));
		for (int i = 0; i < n; i++)
			okb &= out[i] == val(7, i);
		free(in);
		free(out);
	}
	CHECK(okb);
	/* Every other int from the third: true_lb is 8 bytes in. */
	{
		MPI_Datatype t;
		MPI_Op mx;
		int blens[2] = {1, 1}, disps[2] = {2, 4}, in[6], out[6];

		MPI_Type_indexed(2, blens, disps, MPI_INT, &t);
		MPI_Type_commit(&t);
		MPI_Op_create(max_2_4, 1, &mx);
		for (int i = 0; i < 6; i++) {
			in[i] = val(rank, i);
			out[i] = -7;
		}
		CHECK_MPI(MPI_Allreduce(in, out, 1, t, mx, MPI_COMM_WORLD));
		CHECK(out[0] == -7 && out[1] == -7 && out[3] == -7 && out[5] == -7);
		CHECK(out[2] == fold('>', size - 1, 2) && out[4] == fold('>', size - 1, 4));
		MPI_Op_free(&mx);
		MPI_Type_free(&t);
	}
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	barrier_bcast();
	reductions();
	all_ops();
	gathers();
	alltoalls();
	scatters_and_scans();
	on_subcomm();
	back_to_back();
	return mt_finish("t_coll");
}
