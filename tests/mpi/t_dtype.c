/*
 * Datatypes: sizes and extents of every constructor, non-contiguous sends
 * and receives through each one (checked element by element against the
 * typemap the standard defines, and that gaps are never written), mixed
 * send/receive types with the same signature, Pack/Unpack/Pack_size,
 * Get_elements on partial receives, and every predefined C type on the wire.
 * Then what a type remembers (envelopes and contents), subarrays and
 * darrays against the indices they must select, MPI-1's bound markers and
 * names, external32 packing, and the Fortran and C++ names of C's types.
 * Then vectors too long to list run by run (kept as one block repeated),
 * against the same layouts written as indexed types, and the sizes of a type
 * of over 2 GiB. Last, evenly spaced layouts (the strided copy) against
 * placements computed by the test, through every path a small message takes.
 */
#include "mt.h"

#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <wchar.h>

static int rank, size;

/* Sends `count` of `t` from a pattern and receives it into a poisoned buffer
 * as `count` of `t` (from the left neighbour); then compares byte masks. */
static void roundtrip(MPI_Datatype t, int count, const char *what)
{
	MPI_Aint lb, ext, tlb, text;
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, tsize, pos = 0, psize;
	size_t span;
	unsigned char *s, *r, *mask, *packed;

	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	MPI_Type_size(t, &tsize);
	span = (size_t)(tlb + (count - 1) * ext + text) + 64;
	s = malloc(span);
	r = malloc(span);
	mask = calloc(span, 1);
	for (size_t i = 0; i < span; i++)
		s[i] = (unsigned char)(i * 7 + 1 + left);
	/* Which bytes the type covers: pack a buffer of 0xff into a zeroed one. */
	MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize);
	CHECK(psize == tsize * count);
	packed = malloc((size_t)psize + 1);
	memset(packed, 0xff, (size_t)psize + 1);
	pos = 0;
	CHECK_MPI(MPI_Unpack(packed, psize, &pos, mask, count, t, MPI_COMM_WORLD));
	CHECK(pos == psize);
	memset(r, 0xee, span);
	{
		unsigned char *sl = malloc(span);
		for (size_t i = 0; i < span; i++)
			sl[i] = (unsigned char)(i * 7 + 1 + rank);
		CHECK_MPI(MPI_Sendrecv(sl, count, t, right, 1, r, count, t, left, 1, MPI_COMM_WORLD,
				       MPI_STATUS_IGNORE));
		free(sl);
	}
	int bad = 0;
	for (size_t i = 0; i < span; i++)
		if (mask[i] ? r[i] != s[i] : r[i] != 0xee)
			bad++;
	if (bad)
		fprintf(stderr, "rank %d: %s: %d bytes wrong\n", rank, what, bad);
	CHECK(bad == 0);
	/* Pack then unpack reproduces the covered bytes. */
	pos = 0;
	CHECK_MPI(MPI_Pack(s, count, t, packed, psize, &pos, MPI_COMM_WORLD));
	memset(r, 0xee, span);
	pos = 0;
	CHECK_MPI(MPI_Unpack(packed, psize, &pos, r, count, t, MPI_COMM_WORLD));
	bad = 0;
	for (size_t i = 0; i < span; i++)
		if (mask[i] ? r[i] != s[i] : r[i] != 0xee)
			bad++;
	CHECK(bad == 0);
	free(s);
	free(r);
	free(mask);
	free(packed);
}

static void constructors(void)
{
	MPI_Datatype t, t2, u;
	MPI_Aint lb, ext;
	int sz;

	CHECK_MPI(MPI_Type_contiguous(5, MPI_INT, &t));
	CHECK_MPI(MPI_Type_commit(&t));
	MPI_Type_size(t, &sz);
	MPI_Type_get_extent(t, &lb, &ext);
	CHECK(sz == 20 && lb == 0 && ext == 20);
	roundtrip(t, 3, "contiguous");
	MPI_Type_free(&t);

	CHECK_MPI(MPI_Type_vector(4, 2, 5, MPI_DOUBLE, &t));
	MPI_Type_commit(&t);
	MPI_Type_size(t, &sz);
	MPI_Type_get_extent(t, &lb, &ext);
	CHECK(sz == 64 && ext == (3 * 5 + 2) * 8);
	roundtrip(t, 1, "vector");
	roundtrip(t, 3, "vector x3");
	MPI_Type_free(&t);

	CHECK_MPI(MPI_Type_create_hvector(3, 1, 24, MPI_SHORT, &t));
	MPI_Type_commit(&t);
	MPI_Type_get_extent(t, &lb, &ext);
	CHECK(ext == 2 * 24 + 2);
	roundtrip(t, 2, "hvector");
	MPI_Type_free(&t);

	{
		int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 9};
		CHECK_MPI(MPI_Type_indexed(3, bl, dp, MPI_INT, &t));
		MPI_Type_commit(&t);
		MPI_Type_size(t, &sz);
		MPI_Type_get_extent(t, &lb, &ext);
		CHECK(sz == 24 && lb == 0 && ext == 48);
		roundtrip(t, 2, "indexed");
		MPI_Type_free(&t);
	}
	{
		int bl[2] = {1, 2};
		MPI_Aint dp[2] = {16, 2};
		CHECK_MPI(MPI_Type_create_hindexed(2, bl, dp, MPI_CHAR, &t));
		MPI_Type_commit(&t);
		MPI_Type_get_extent(t, &lb, &ext);
		CHECK(lb == 2 && ext == 15);
		roundtrip(t, 4, "hindexed");
		MPI_Type_free(&t);
	}
	{
		int dp[3] = {0, 4, 10};
		CHECK_MPI(MPI_Type_create_indexed_block(3, 2, dp, MPI_FLOAT, &t));
		MPI_Type_commit(&t);
		MPI_Type_size(t, &sz);
		CHECK(sz == 24);
		roundtrip(t, 2, "indexed_block");
		MPI_Type_free(&t);
	}
	{
		struct s {
			char c;
			double d;
			int i[3];
		};
		int bl[3] = {1, 1, 3};
		MPI_Aint dp[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
		MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
		CHECK_MPI(MPI_Type_create_struct(3, bl, dp, ty, &t));
		MPI_Type_commit(&t);
		MPI_Type_size(t, &sz);
		MPI_Type_get_extent(t, &lb, &ext);
		CHECK(sz == 1 + 8 + 12);
		/* Without resizing, the span is padded to the alignment of its strictest
		 * member (MPI epsilon), which here makes it sizeof(struct s). */
		CHECK(ext == (MPI_Aint)sizeof(struct s));
		CHECK_MPI(MPI_Type_create_resized(t, 0, sizeof(struct s), &t2));
		MPI_Type_commit(&t2);
		MPI_Type_get_extent(t2, &lb, &ext);
		CHECK(ext == sizeof(struct s));
		roundtrip(t2, 5, "struct resized");
		{
			MPI_Status st;
			MPI_Count n;
			struct s out[2], in[2];
			memset(out, 0, sizeof(out));
			out[0].c = 'x';
			out[1].i[2] = 42;
			int right = (rank + 1) % size, left = (rank - 1 + size) % size;
			MPI_Sendrecv(out, 2, t2, right, 3, in, 2, t2, left, 3, MPI_COMM_WORLD, &st);
			CHECK(in[0].c == 'x' && in[1].i[2] == 42);
			MPI_Get_elements_x(&st, t2, &n);
			CHECK(n == 10); /* 5 basic elements per struct */
		}
		{
			/* The unresized struct type now strides as the C array does. */
			MPI_Status st;
			struct s out[3], in[3];
			memset(out, 0, sizeof(out));
			memset(in, 0, sizeof(in));
			out[2].d = 2.5;
			out[2].i[1] = 7;
			int right = (rank + 1) % size, left = (rank - 1 + size) % size;
			MPI_Sendrecv(out, 3, t, right, 4, in, 3, t, left, 4, MPI_COMM_WORLD, &st);
			CHECK(in[2].d == 2.5 && in[2].i[1] == 7);
		}
		{
			/* Explicit bounds are not padded again by a type built on them. */
			MPI_Datatype r6, st6;
			int one = 1;
			MPI_Aint zero = 0;
			CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 6, &r6));
			CHECK_MPI(MPI_Type_create_struct(1, &one, &zero, &r6, &st6));
			MPI_Type_get_extent(st6, &lb, &ext);
			CHECK(ext == 6);
			MPI_Type_free(&st6);
			MPI_Type_free(&r6);
			/* A byte-strided hvector of doubles is padded to 8. */
			CHECK_MPI(MPI_Type_create_hvector(2, 1, 12, MPI_DOUBLE, &r6));
			MPI_Type_get_extent(r6, &lb, &ext);
			CHECK(ext == 24);
			MPI_Type_free(&r6);
		}
		MPI_Type_free(&t);
		MPI_Type_free(&t2);
	}
	/* Vector of a resized type, and a vector of vectors. */
	CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &u));
	CHECK_MPI(MPI_Type_vector(2, 2, 3, u, &t));
	MPI_Type_commit(&t);
	MPI_Type_size(t, &sz);
	CHECK(sz == 2 * 2 * 3 * 4);
	roundtrip(t, 2, "vector of vector");
	MPI_Type_free(&t);
	MPI_Type_free(&u);
	CHECK_MPI(MPI_Type_dup(MPI_INT, &t));
	MPI_Type_size(t, &sz);
	CHECK(sz == 4);
	roundtrip(t, 7, "dup");
	MPI_Type_free(&t);
	/* A zero-count type sends nothing and works. */
	CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &t));
	MPI_Type_commit(&t);
	MPI_Type_size(t, &sz);
	CHECK(sz == 0);
	MPI_Type_free(&t);
}

/* The same bytes through different types on each side: vector -> contiguous. */
static void mixed_signatures(void)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int m[6][6], flat[12];
	MPI_Datatype col;

	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 6; j++)
			m[i][j] = rank * 100 + i * 6 + j;
	MPI_Type_vector(6, 2, 6, MPI_INT, &col);
	MPI_Type_commit(&col);
	MPI_Sendrecv(&m[0][1], 1, col, right, 5, flat, 12, MPI_INT, left, 5, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (int i = 0; i < 6; i++) {
		CHECK(flat[2 * i] == left * 100 + i * 6 + 1);
		CHECK(flat[2 * i + 1] == left * 100 + i * 6 + 2);
	}
	MPI_Type_free(&col);
}

/* Get_elements on a partial receive of a struct type. */
static void partial_elements(void)
{
	struct p {
		int a;
		double b;
	} in[3];
	int bl[2] = {1, 1}, right = (rank + 1) % size, left = (rank - 1 + size) % size, cnt;
	MPI_Aint dp[2] = {offsetof(struct p, a), offsetof(struct p, b)};
	MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t, t2;
	MPI_Status st;
	MPI_Count n;
	char bytes[4 + 8 + 4] = {0};

	MPI_Type_create_struct(2, bl, dp, ty, &t);
	MPI_Type_create_resized(t, 0, sizeof(struct p), &t2);
	MPI_Type_commit(&t2);
	/* 16 bytes: one full (int, double) and the int of the next. */
	MPI_Sendrecv(bytes, 16, MPI_BYTE, right, 6, in, 3, t2, left, 6, MPI_COMM_WORLD, &st);
	MPI_Get_elements_x(&st, t2, &n);
	CHECK(n == 3);
	MPI_Get_count(&st, t2, &cnt);
	CHECK(cnt == MPI_UNDEFINED);
	MPI_Get_count(&st, MPI_BYTE, &cnt);
	CHECK(cnt == 16);
	MPI_Type_free(&t);
	MPI_Type_free(&t2);
}

/* Every predefined type crosses the wire intact. */
static void predefined(void)
{
	struct {
		MPI_Datatype t;
		size_t sz;
	} all[] = {
		{MPI_CHAR, sizeof(char)}, {MPI_SIGNED_CHAR, 1}, {MPI_UNSIGNED_CHAR, 1}, {MPI_BYTE, 1},
		{MPI_WCHAR, sizeof(wchar_t)}, {MPI_SHORT, sizeof(short)},
		{MPI_UNSIGNED_SHORT, sizeof(short)}, {MPI_INT, sizeof(int)}, {MPI_UNSIGNED, sizeof(int)},
		{MPI_LONG, sizeof(long)}, {MPI_UNSIGNED_LONG, sizeof(long)},
		{MPI_LONG_LONG_INT, sizeof(long long)}, {MPI_UNSIGNED_LONG_LONG, sizeof(long long)},
		{MPI_FLOAT, sizeof(float)}, {MPI_DOUBLE, sizeof(double)},
		{MPI_LONG_DOUBLE, sizeof(long double)}, {MPI_INT8_T, 1}, {MPI_INT16_T, 2},
		{MPI_INT32_T, 4}, {MPI_INT64_T, 8}, {MPI_UINT8_T, 1}, {MPI_UINT16_T, 2},
		{MPI_UINT32_T, 4}, {MPI_UINT64_T, 8}, {MPI_C_BOOL, sizeof(bool)},
		{MPI_C_FLOAT_COMPLEX, sizeof(float complex)}, {MPI_C_DOUBLE_COMPLEX, sizeof(double complex)},
		{MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double complex)}, {MPI_AINT, sizeof(MPI_Aint)},
		{MPI_OFFSET, sizeof(MPI_Offset)}, {MPI_COUNT, sizeof(MPI_Count)}, {MPI_PACKED, 1},
		{MPI_FLOAT_INT, sizeof(float) + sizeof(int)}, {MPI_DOUBLE_INT, sizeof(double) + sizeof(int)},
		{MPI_LONG_INT, sizeof(long) + sizeof(int)}, {MPI_2INT, 2 * sizeof(int)},
		{MPI_SHORT_INT, sizeof(short) + sizeof(int)},
		{MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int)},
	};
	for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
		int sz;
		char name[MPI_MAX_OBJECT_NAME];
		CHECK_MPI(MPI_Type_size(all[k].t, &sz));
		CHECK((size_t)sz == all[k].sz);
		CHECK_MPI(MPI_Type_get_name(all[k].t, name, &sz));
		CHECK(sz > 4 && !strncmp(name, "MPI_", 4));
		if (all[k].t == MPI_LONG_DOUBLE || all[k].t == MPI_C_LONG_DOUBLE_COMPLEX ||
		    all[k].t == MPI_LONG_DOUBLE_INT)
			continue; /* padding bytes in long double are not data */
		roundtrip(all[k].t, 9, "predefined");
	}
	{
		struct {
			double v;
			int i;
		} di[4], out[4];
		int right = (rank + 1) % size, left = (rank - 1 + size) % size;
		for (int i = 0; i < 4; i++) {
			out[i].v = rank + i * 0.5;
			out[i].i = i;
		}
		MPI_Sendrecv(out, 4, MPI_DOUBLE_INT, right, 7, di, 4, MPI_DOUBLE_INT, left, 7,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int i = 0; i < 4; i++)
			CHECK(di[i].v == left + i * 0.5 && di[i].i == i);
	}
}

/* The int offsets (in elements) a type selects from an int array, in
 * typemap order: packs an array holding 0, 1, 2, ... */
static int selected(MPI_Datatype t, int n_array, int *out, int max)
{
	int *a = malloc(sizeof(int) * (size_t)n_array), sz, pos = 0;

	for (int i = 0; i < n_array; i++)
		a[i] = i;
	MPI_Type_size(t, &sz);
	CHECK(sz / (int)sizeof(int) <= max);
	MPI_Pack(a, 1, t, out, max * (int)sizeof(int), &pos, MPI_COMM_WORLD);
	free(a);
	return sz / (int)sizeof(int);
}

/* Open MPI 4 builds this file too (tests/netns/across.sh) and, unless it was
 * configured with MPI-1 compatibility, turns the names MPI-3.0 removed into
 * compile errors. */
#if !defined(OPEN_MPI) || OMPI_ENABLE_MPI1_COMPAT
#define T_HAVE_MPI1 1
#endif
/* Debian's Open MPI 4.1 faults inside MPI_Type_get_contents on any derived
 * type (a vector of doubles is enough), so those checks are ours alone. */
#ifndef OPEN_MPI
#define T_HAVE_GET_CONTENTS 1
#endif

#ifdef T_HAVE_GET_CONTENTS
static void envelopes(void)
{
	MPI_Datatype v, s, d, r, got[2];
	int ni, na, nd, comb, ints[8];
	MPI_Aint aints[4];
	int bl[2] = {1, 2};
	MPI_Aint ds[2] = {0, 8};
	MPI_Datatype ts[2] = {MPI_CHAR, MPI_INT};

	CHECK_MPI(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);
	MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v);
	CHECK_MPI(MPI_Type_get_envelope(v, &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
	CHECK_MPI(MPI_Type_get_contents(v, 8, 4, 2, ints, aints, got));
	CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && got[0] == MPI_DOUBLE);
	MPI_Type_create_struct(2, bl, ds, ts, &s);
	CHECK_MPI(MPI_Type_get_envelope(s, &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2);
	CHECK_MPI(MPI_Type_get_contents(s, 8, 4, 2, ints, aints, got));
	CHECK(ints[0] == 2 && ints[2] == 2 && aints[1] == 8 && got[1] == MPI_INT);
	/* A derived type comes back as a handle the caller frees; the original
	 * lives on. */
	MPI_Type_dup(v, &d);
	MPI_Type_free(&v);
	CHECK_MPI(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_DUP && nd == 1);
	CHECK_MPI(MPI_Type_get_contents(d, 0, 0, 1, ints, aints, got));
	CHECK_MPI(MPI_Type_get_envelope(got[0], &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_VECTOR);
	MPI_Type_free(&got[0]);
	MPI_Type_create_resized(s, -4, 40, &r);
	CHECK_MPI(MPI_Type_get_envelope(r, &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_RESIZED && na == 2);
	CHECK_MPI(MPI_Type_get_contents(r, 0, 2, 1, ints, aints, got));
	CHECK(aints[0] == -4 && aints[1] == 40);
	MPI_Type_free(&got[0]);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	{
		int cls;

		MPI_Error_class(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, aints, got), &cls);
		CHECK(cls == MPI_ERR_TYPE);
		MPI_Error_class(MPI_Type_get_contents(s, 1, 4, 2, ints, aints, got), &cls);
		CHECK(cls == MPI_ERR_ARG);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Type_free(&s);
	MPI_Type_free(&d);
	MPI_Type_free(&r);
}
#endif

static void arrays(void)
{
	int sizes[3] = {4, 5, 6}, subs[3] = {2, 3, 2}, starts[3] = {1, 2, 3}, sel[120], n, ok;
	MPI_Datatype t;
	MPI_Aint lb, ext;

	/* C order: [i][j][k] at i*30 + j*6 + k. */
	CHECK_MPI(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
	MPI_Type_commit(&t);
	MPI_Type_get_extent(t, &lb, &ext);
	CHECK(lb == 0 && ext == 120 * (MPI_Aint)sizeof(int));
	n = selected(t, 120, sel, 120);
	CHECK(n == 12);
	ok = 1;
	for (int i = 0, m = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 2; k++)
				ok &= sel[m++] == (1 + i) * 30 + (2 + j) * 6 + (3 + k);
	CHECK(ok);
	MPI_Type_free(&t);
	/* Fortran order: (i, j, k) at i + j*4 + k*20. */
	CHECK_MPI(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
	MPI_Type_commit(&t);
	n = selected(t, 120, sel, 120);
	ok = n == 12;
	for (int k = 0, m = 0; k < 2; k++)
		for (int j = 0; j < 3; j++)
			for (int i = 0; i < 2; i++)
				ok &= sel[m++] == (1 + i) + (2 + j) * 4 + (3 + k) * 20;
	CHECK(ok);
	MPI_Type_free(&t);

	/* darray: a 7 x 10 array on a 2 x 3 grid, block rows, cyclic(2)
	 * columns; every element is held by exactly one of the six. */
	{
		int gs[2] = {7, 10}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
		int da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3}, owner[70];

		for (int i = 0; i < 70; i++)
			owner[i] = 0;
		ok = 1;
		for (int p = 0; p < 6; p++) {
			int pr = p / 3, pc = p % 3;

			CHECK_MPI(MPI_Type_create_darray(6, p, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
			MPI_Type_commit(&t);
			MPI_Type_get_extent(t, &lb, &ext);
			ok &= ext == 70 * (MPI_Aint)sizeof(int);
			n = selected(t, 70, sel, 70);
			for (int m = 0; m < n; m++) {
				int row = sel[m] / 10, col = sel[m] % 10;

				owner[sel[m]]++;
				ok &= row / 4 == pr && (col / 2) % 3 == pc;
			}
			MPI_Type_free(&t);
		}
		for (int i = 0; i < 70; i++)
			ok &= owner[i] == 1;
		CHECK(ok);
	}
}

static void legacy(void)
{
#ifdef T_HAVE_MPI1
	struct {
		int a;
		double b;
	} x[2];
	int bl[4] = {1, 1, 1, 1};
	MPI_Aint d[4], lb, ub, ext, base;
	MPI_Datatype ts[4] = {MPI_LB, MPI_INT, MPI_DOUBLE, MPI_UB}, t, t2;

	MPI_Address(&x[0], &base);
	MPI_Address(&x[0].a, &d[1]);
	MPI_Address(&x[0].b, &d[2]);
	d[1] -= base;
	d[2] -= base;
	d[0] = -8;
	d[3] = (MPI_Aint)sizeof(x[0]) + 8;
	CHECK_MPI(MPI_Type_struct(4, bl, d, ts, &t));
	MPI_Type_commit(&t);
	CHECK_MPI(MPI_Type_lb(t, &lb));
	CHECK_MPI(MPI_Type_ub(t, &ub));
	CHECK_MPI(MPI_Type_extent(t, &ext));
	CHECK(lb == -8 && ub == d[3] && ext == ub - lb);
	{
		int sz;

		MPI_Type_size(t, &sz);
		CHECK(sz == (int)(sizeof(int) + sizeof(double)));
	}
	/* Markers stick: a contiguous pair of them strides by the marked extent. */
	MPI_Type_contiguous(2, t, &t2);
	MPI_Type_extent(t2, &ext);
	CHECK(ext == 2 * (ub - lb));
	MPI_Type_free(&t2);
	MPI_Type_hvector(2, 1, 64, MPI_INT, &t2);
	MPI_Type_extent(t2, &ext);
	CHECK(ext == 64 + (MPI_Aint)sizeof(int));
	MPI_Type_free(&t2);
	MPI_Type_free(&t);
#endif
	{
		MPI_Count l, e;

		CHECK_MPI(MPI_Type_get_extent_x(MPI_DOUBLE, &l, &e));
		CHECK(l == 0 && e == 8);
		CHECK_MPI(MPI_Type_get_true_extent_x(MPI_INT, &l, &e));
		CHECK(e == 4);
	}
}

static void external32(void)
{
	struct {
		int i;
		double d;
		short s;
	} v = {0x01020304, 1.0, 0x0a0b}, back;
	int bl[3] = {1, 1, 1};
	MPI_Aint ds[3] = {offsetof(__typeof__(v), i), offsetof(__typeof__(v), d),
			  offsetof(__typeof__(v), s)}, sz, pos = 0;
	MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, t;
	unsigned char buf[32];

	MPI_Type_create_struct(3, bl, ds, ts, &t);
	MPI_Type_commit(&t);
	CHECK_MPI(MPI_Pack_external_size("external32", 1, t, &sz));
	CHECK(sz == 14);
	CHECK_MPI(MPI_Pack_external("external32", &v, 1, t, buf, sizeof(buf), &pos));
	CHECK(pos == 14);
	/* Big-endian: the int's most significant byte first, the double's sign
	 * and exponent (1.0 is 3ff0000000000000) first. */
	CHECK(buf[0] == 1 && buf[3] == 4 && buf[4] == 0x3f && buf[5] == 0xf0 && buf[12] == 0x0a);
	memset(&back, 0, sizeof(back));
	pos = 0;
	CHECK_MPI(MPI_Unpack_external("external32", buf, sizeof(buf), &pos, &back, 1, t));
	CHECK(back.i == v.i && back.d == v.d && back.s == v.s && pos == 14);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	{
		int cls;

#ifndef OPEN_MPI /* Open MPI packs any representation name as external32. */
		pos = 0;
		MPI_Error_class(MPI_Pack_external("native", &v, 1, t, buf, sizeof(buf), &pos), &cls);
		CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP);
#endif
		pos = 20;
		MPI_Error_class(MPI_Pack_external("external32", &v, 1, t, buf, sizeof(buf), &pos), &cls);
		CHECK(cls == MPI_ERR_TRUNCATE && pos == 20);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Type_free(&t);
	/* long is 4 bytes in external32: the low half, sign-extended back.
	 * (Open MPI 4.1 packs 8, against the standard's table.) */
#ifndef OPEN_MPI
	{
		long l[2] = {-2, 0x01020304}, lb[2] = {0, 0};

		CHECK_MPI(MPI_Pack_external_size("external32", 2, MPI_LONG, &sz));
		CHECK(sz == 8);
		pos = 0;
		CHECK_MPI(MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof(buf), &pos));
		CHECK(pos == 8 && buf[0] == 0xff && buf[3] == 0xfe && buf[4] == 1 && buf[7] == 4);
		pos = 0;
		CHECK_MPI(MPI_Unpack_external("external32", buf, 8, &pos, lb, 2, MPI_LONG));
		CHECK(lb[0] == -2 && lb[1] == 0x01020304);
	}
#endif
}

static void other_names(void)
{
	MPI_Datatype t;
	int sz;
	double x = rank + 1, sum = 0;
	char name[MPI_MAX_OBJECT_NAME];

	MPI_Type_size(MPI_INTEGER, &sz);
	CHECK(sz == 4);
	MPI_Type_size(MPI_DOUBLE_COMPLEX, &sz);
	CHECK(sz == 16);
	MPI_Type_get_name(MPI_DOUBLE_PRECISION, name, &sz);
	CHECK(!strcmp(name, "MPI_DOUBLE_PRECISION"));
	CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD));
	CHECK(sum == size * (size + 1) / 2.0);
	{
		MPI_Datatype f;
		int ni, na, nd, comb;

		CHECK_MPI(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &f));
		MPI_Type_size(f, &sz);
		CHECK(sz == 8);
		MPI_Type_get_envelope(f, &ni, &na, &nd, &comb);
		CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && nd == 0);
#ifdef T_HAVE_GET_CONTENTS
		{
			int ints[2];
			MPI_Aint aints[1];
			MPI_Datatype got[1];

			MPI_Type_get_contents(f, 2, 0, 0, ints, aints, got);
			CHECK(ints[0] == 10 && ints[1] == MPI_UNDEFINED);
		}
#endif
		CHECK_MPI(MPI_Type_create_f90_integer(5, &f));
		MPI_Type_size(f, &sz);
		CHECK(sz == 4);
	}
	CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
	CHECK(t == MPI_INTEGER8);
#ifdef MPI_INTEGER16	/* absent or null in some MPIs */
	if (MPI_INTEGER16 != MPI_DATATYPE_NULL) {
		char nm[MPI_MAX_OBJECT_NAME];
		int nl;

		CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t));
		CHECK(t == MPI_INTEGER16);
		MPI_Type_size(MPI_INTEGER16, &sz);
		CHECK(sz == 16);
		MPI_Type_get_name(MPI_INTEGER16, nm, &nl);
		CHECK(!strcmp(nm, "MPI_INTEGER16"));
	}
#endif
	CHECK_MPI(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
	MPI_Type_size(t, &sz);
	CHECK(sz == 4);
	{
		bool b = true, all = false;

		CHECK_MPI(MPI_Allreduce(&b, &all, 1, MPI_CXX_BOOL, MPI_LAND, MPI_COMM_WORLD));
		CHECK(all);
	}
}

/* Packs count of a and of b from the same bytes (b's data base bytes into
 * the buffer) and checks the streams are equal; then sends with a and
 * receives with b, and checks b's bytes are the sender's. */
static void same_bytes(MPI_Datatype a, MPI_Datatype b, int count, size_t span, size_t base,
		       const char *what)
{
	unsigned char *buf = malloc(span), *pa, *pb, *got;
	int sa, sb, pos, bad = 0;

	for (size_t i = 0; i < span; i++)
		buf[i] = (unsigned char)(i * 13 + 5);
	MPI_Pack_size(count, a, MPI_COMM_WORLD, &sa);
	MPI_Pack_size(count, b, MPI_COMM_WORLD, &sb);
	CHECK(sa == sb);
	pa = malloc((size_t)sa);
	pb = malloc((size_t)sb);
	got = malloc(span);
	pos = 0;
	CHECK_MPI(MPI_Pack(buf + base, count, a, pa, sa, &pos, MPI_COMM_WORLD));
	CHECK(pos == sa);
	pos = 0;
	CHECK_MPI(MPI_Pack(buf + base, count, b, pb, sb, &pos, MPI_COMM_WORLD));
	CHECK(sa == sb && !memcmp(pa, pb, (size_t)sa));
	/* Through the library's send path, to this rank. */
	memset(got, 0xee, span);
	CHECK_MPI(MPI_Sendrecv(buf + base, count, a, rank, 7, got + base, count, b, rank, 7,
			       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	pos = 0;
	CHECK_MPI(MPI_Pack(got + base, count, b, pb, sb, &pos, MPI_COMM_WORLD));
	CHECK(!memcmp(pa, pb, (size_t)sa));
	/* And unpacking with a writes what b's unpack writes, nothing else. */
	memset(got, 0xee, span);
	memset(buf, 0xee, span);
	pos = 0;
	CHECK_MPI(MPI_Unpack(pa, sa, &pos, got + base, count, a, MPI_COMM_WORLD));
	pos = 0;
	CHECK_MPI(MPI_Unpack(pa, sa, &pos, buf + base, count, b, MPI_COMM_WORLD));
	for (size_t i = 0; i < span; i++)
		bad += got[i] != buf[i];
	if (bad)
		fprintf(stderr, "rank %d: %s: %d bytes differ\n", rank, what, bad);
	CHECK(bad == 0);
	free(buf);
	free(pa);
	free(pb);
	free(got);
}

/* Vectors of more runs than the library lists one by one keep one block and
 * a repeat count; each is checked against the same layout written as an
 * indexed type, which is listed. Then the sizes and extents of a vector of
 * INT_MAX / 2 blocks, over 2 GiB of data, which no list could hold. */
static void repeated(void)
{
	enum { N = 70000 };
	int *d = malloc(sizeof(int) * 2 * N);
	MPI_Aint *ad = malloc(sizeof(MPI_Aint) * N);
	MPI_Datatype v, ix, gap, c, cix, neg, negix, st, stx;

	for (int i = 0; i < N; i++)
		d[i] = 3 * i;
	MPI_Type_vector(N, 2, 3, MPI_INT, &v);
	MPI_Type_create_indexed_block(N, 2, d, MPI_INT, &ix);
	MPI_Type_commit(&v);
	MPI_Type_commit(&ix);
	same_bytes(v, ix, 1, sizeof(int) * 3 * N, 0, "vector");
	same_bytes(v, ix, 2, sizeof(int) * 6 * N, 0, "2 vectors");
	roundtrip(v, 2, "repeated vector");
	{
		MPI_Aint lb, ext, tlb, text;
		int sz;

		MPI_Type_get_extent(v, &lb, &ext);
		MPI_Type_get_true_extent(v, &tlb, &text);
		MPI_Type_size(v, &sz);
		CHECK(lb == 0 && ext == (MPI_Aint)sizeof(int) * (3 * N - 1));
		CHECK(tlb == 0 && text == ext && sz == (int)sizeof(int) * 2 * N);
	}
	/* A partial message: its elements and bytes. */
	{
		int *src = calloc(2 * N, sizeof(int)), *dst = calloc(3 * N, sizeof(int)), n = -1;
		MPI_Status st1;

		for (int i = 0; i < 2 * N; i++)
			src[i] = i + 1;
		CHECK_MPI(MPI_Sendrecv(src, 2 * N - 3, MPI_INT, rank, 8, dst, 1, v, rank, 8,
				       MPI_COMM_WORLD, &st1));
		MPI_Get_elements(&st1, v, &n);
		CHECK(n == 2 * N - 3);
		MPI_Get_count(&st1, v, &n);
		CHECK(n == MPI_UNDEFINED);
		CHECK(dst[3 * (N - 2)] == 2 * N - 3 && dst[3 * (N - 2) + 1] == 0 &&
		      dst[3 * (N - 1)] == 0 && dst[2] == 0 && dst[3] == 3);
		MPI_Status_set_elements(&st1, v, 2 * N + 2 * N - 1);
		MPI_Get_elements(&st1, v, &n);
		CHECK(n == 4 * N - 1);
		free(src);
		free(dst);
	}
	/* contiguous of a type with a gap: two runs a block. */
	MPI_Type_vector(2, 1, 2, MPI_INT, &gap);
	MPI_Type_contiguous(N, gap, &c);
	for (int i = 0; i < N; i++) {
		d[2 * i] = 3 * i;
		d[2 * i + 1] = 3 * i + 2;
	}
	MPI_Type_create_indexed_block(2 * N, 1, d, MPI_INT, &cix);
	MPI_Type_commit(&c);
	MPI_Type_commit(&cix);
	same_bytes(c, cix, 1, sizeof(int) * 3 * N, 0, "contiguous");
	/* A negative stride: blocks below the first. */
	MPI_Type_create_hvector(N, 1, -8, MPI_INT, &neg);
	for (int i = 0; i < N; i++)
		ad[i] = -8 * (MPI_Aint)i;
	MPI_Type_create_hindexed_block(N, 1, ad, MPI_INT, &negix);
	MPI_Type_commit(&neg);
	MPI_Type_commit(&negix);
	{
		MPI_Aint lb, ext;

		MPI_Type_get_extent(neg, &lb, &ext);
		CHECK(lb == -8 * (MPI_Aint)(N - 1) && ext == 8 * (MPI_Aint)(N - 1) + 4);
	}
	same_bytes(neg, negix, 1, 8 * (size_t)N, 8 * (size_t)(N - 1), "negative stride");
	/* A struct holding one: listed in full (2N + 1 runs). */
	{
		int bl[2] = { 1, 1 };
		MPI_Aint at[2] = { 0, sizeof(int) * 3 * N };
		MPI_Datatype ty[2] = { v, MPI_INT }, tyx[2] = { ix, MPI_INT };

		MPI_Type_create_struct(2, bl, at, ty, &st);
		MPI_Type_create_struct(2, bl, at, tyx, &stx);
		MPI_Type_commit(&st);
		MPI_Type_commit(&stx);
		same_bytes(st, stx, 1, sizeof(int) * (3 * N + 1), 0, "struct of a vector");
	}
	MPI_Type_free(&v);
	MPI_Type_free(&ix);
	MPI_Type_free(&gap);
	MPI_Type_free(&c);
	MPI_Type_free(&cix);
	MPI_Type_free(&neg);
	MPI_Type_free(&negix);
	MPI_Type_free(&st);
	MPI_Type_free(&stx);
	free(d);
	free(ad);

	/* Over 2 GiB in one instance: sizes and extents by count functions. */
	{
		MPI_Datatype four, big, rsz;
		MPI_Count sx, lbx, extx, nx;
		MPI_Aint lb, ext;
		MPI_Status stb;
		int sz, n;
		const MPI_Count blocks = INT_MAX / 2;
		const MPI_Count span = 3 * 16 * (blocks - 1) + 16;

		MPI_Type_contiguous(4, MPI_INT, &four);
		CHECK_MPI(MPI_Type_vector(INT_MAX / 2, 1, 3, four, &big));
		CHECK_MPI(MPI_Type_commit(&big));
		CHECK_MPI(MPI_Type_create_resized(big, 1000, -64, &rsz));
		MPI_Type_commit(&rsz);
		MPI_Type_size(big, &sz);
		CHECK(sz == MPI_UNDEFINED);
		MPI_Type_size_x(big, &sx);
		CHECK(sx == 16 * blocks);
		MPI_Type_size_x(rsz, &sx);
		CHECK(sx == 16 * blocks);
		MPI_Type_get_extent(big, &lb, &ext);
		CHECK(lb == 0 && ext == span);
		MPI_Type_get_extent_x(rsz, &lbx, &extx);
		CHECK(lbx == 1000 && extx == -64);
		MPI_Type_get_true_extent_x(rsz, &lbx, &extx);
		CHECK(lbx == 0 && extx == span);
		/* The standard's count is of basic elements: one instance's. */
		MPI_Status_set_elements_x(&stb, big, 4 * blocks);
		MPI_Get_elements_x(&stb, big, &nx);
		CHECK(nx == 4 * blocks);
		MPI_Get_elements(&stb, big, &n);
		CHECK(n == MPI_UNDEFINED);
		MPI_Get_count(&stb, big, &n);
		CHECK(n == 1);
		MPI_Type_free(&rsz);
		MPI_Type_free(&big);
		MPI_Type_free(&four);
	}
}

/* Large non-contiguous messages between ranks, which both engines move a
 * fragment at a time (packed and unpacked in place, no whole copy): a
 * vector of 3-int blocks 5 ints apart against an indexed type of the same
 * signature and another layout (2 ints, gaps of 1 and 4 in turn), and each
 * against contiguous ints; receives posted before and after the message
 * arrives, a synchronous send, any source, and a receive too short for
 * the message (truncated: what fits arrives, nothing past it is written),
 * and two messages with the same tag in flight at once. */
static void fragments(void)
{
	enum { B = 60000 }; /* blocks of the vector: 720 KB of data */
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, n = 3 * B;
	int *vbuf = malloc(sizeof(int) * 5 * B), *ibuf = malloc(sizeof(int) * 4 * n);
	int *cbuf = malloc(sizeof(int) * n), *disp = malloc(sizeof(int) * (n / 2));
	MPI_Datatype vec, idx;
	MPI_Status st;
	int bad, got;

	MPI_Type_vector(B, 3, 5, MPI_INT, &vec);
	for (int i = 0, at = 0; i < n / 2; i++) {
		disp[i] = at;
		at += 2 + (i % 2 ? 4 : 1);
	}
	MPI_Type_create_indexed_block(n / 2, 2, disp, MPI_INT, &idx);
	MPI_Type_commit(&vec);
	MPI_Type_commit(&idx);
	for (int round = 0; round < 7; round++) {
		MPI_Request rq;
		int tag = 40 + round;

		/* Sender's pattern in its layout: element k of the message is
		 * left * 1000000 + k, read through the layout it is sent with. */
		for (int i = 0; i < 5 * B; i++)
			vbuf[i] = -7;
		for (int k = 0; k < n; k++) {
			vbuf[(k / 3) * 5 + k % 3] = rank * 1000000 + k;
			cbuf[k] = rank * 1000000 + k;
		}
		for (int i = 0; i < 4 * n; i++)
			ibuf[i] = -9;
		if (round == 0) { /* vector -> indexed, receive first */
			MPI_Irecv(ibuf, 1, idx, left, tag, MPI_COMM_WORLD, &rq);
			MPI_Barrier(MPI_COMM_WORLD);
			CHECK_MPI(MPI_Send(vbuf, 1, vec, right, tag, MPI_COMM_WORLD));
		} else if (round == 1) { /* vector -> indexed, message first, any source */
			CHECK_MPI(MPI_Isend(vbuf, 1, vec, right, tag, MPI_COMM_WORLD, &rq));
			MPI_Barrier(MPI_COMM_WORLD);
			CHECK_MPI(MPI_Recv(ibuf, 1, idx, size == 1 ? 0 : MPI_ANY_SOURCE, tag,
					   MPI_COMM_WORLD, &st));
			CHECK(st.MPI_SOURCE == left);
		} else if (round == 2) { /* vector, synchronous -> contiguous */
			MPI_Irecv(ibuf, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rq);
			CHECK_MPI(MPI_Ssend(vbuf, 1, vec, right, tag, MPI_COMM_WORLD));
		} else if (round == 3) { /* contiguous -> indexed */
			MPI_Irecv(ibuf, 1, idx, left, tag, MPI_COMM_WORLD, &rq);
			CHECK_MPI(MPI_Send(cbuf, n, MPI_INT, right, tag, MPI_COMM_WORLD));
		} else if (round == 6) {
			/* Two messages with one tag, both in flight: the tagged
			 * engine streams each, the first into the indexed receive,
			 * and the second's pieces (sent and received) wait their
			 * turn: posted early, they would take the first's place. */
			MPI_Request two[4];
			int *cb2 = malloc(sizeof(int) * n);

			MPI_Irecv(ibuf, 1, idx, left, tag, MPI_COMM_WORLD, &two[0]);
			MPI_Irecv(cb2, n, MPI_INT, left, tag, MPI_COMM_WORLD, &two[1]);
			CHECK_MPI(MPI_Isend(vbuf, 1, vec, right, tag, MPI_COMM_WORLD, &two[2]));
			CHECK_MPI(MPI_Isend(vbuf, 1, vec, right, tag, MPI_COMM_WORLD, &two[3]));
			CHECK_MPI(MPI_Waitall(4, two, MPI_STATUSES_IGNORE));
			bad = 0;
			for (int k = 0; k < n; k++)
				bad += ibuf[disp[k / 2] + k % 2] != left * 1000000 + k ||
				       cb2[k] != left * 1000000 + k;
			if (bad)
				fprintf(stderr, "rank %d: fragments round 6: %d ints wrong\n", rank, bad);
			CHECK(bad == 0);
			free(cb2);
			continue;
		} else if (round == 4) { /* vector -> vector */
			MPI_Irecv(ibuf, 1, vec, left, tag, MPI_COMM_WORLD, &rq);
			CHECK_MPI(MPI_Send(vbuf, 1, vec, right, tag, MPI_COMM_WORLD));
		} else { /* vector -> indexed of half the blocks: truncated */
			MPI_Datatype half;

			MPI_Type_create_indexed_block(n / 4, 2, disp, MPI_INT, &half);
			MPI_Type_commit(&half);
			MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
			MPI_Irecv(ibuf, 1, half, left, tag, MPI_COMM_WORLD, &rq);
			CHECK_MPI(MPI_Send(vbuf, 1, vec, right, tag, MPI_COMM_WORLD));
			MPI_Error_class(MPI_Wait(&rq, &st), &got);
			CHECK(got == MPI_ERR_TRUNCATE);
			MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
			bad = 0;
#ifndef OPEN_MPI
			/* What fits arrives, and the status counts it: ours. MPI
			 * leaves a truncated receive's buffer to the library, and
			 * Open MPI's CM over an OFI provider writes none of it. */
			MPI_Get_count(&st, MPI_INT, &got);
			CHECK(got == n / 2);
			for (int i = 0; i < n / 4; i++)
				bad += ibuf[disp[i]] != left * 1000000 + 2 * i ||
				       ibuf[disp[i] + 1] != left * 1000000 + 2 * i + 1;
#endif
			/* Past the last block the receive names, nothing. */
			for (int i = disp[n / 4 - 1] + 2; i < 4 * n; i++)
				bad += ibuf[i] != -9;
			CHECK(bad == 0);
			MPI_Type_free(&half);
			continue;
		}
		CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		bad = 0;
		for (int k = 0; k < n; k++) {
			int at = round == 2 ? k : round == 4 ? (k / 3) * 5 + k % 3 : disp[k / 2] + k % 2;

			bad += ibuf[at] != left * 1000000 + k;
		}
		/* The gaps of the receive layout stay as they were. */
		if (round == 0 || round == 1 || round == 3)
			for (int i = 0; i < n / 2; i++)
				bad += ibuf[disp[i] + 2] != -9;
		if (bad)
			fprintf(stderr, "rank %d: fragments round %d: %d ints wrong\n", rank, round, bad);
		CHECK(bad == 0);
	}
	MPI_Type_free(&vec);
	MPI_Type_free(&idx);
	free(vbuf);
	free(ibuf);
	free(cbuf);
	free(disp);
}

#ifndef OPEN_MPI
static long maxrss_kb(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}
#endif

/* A contiguous message of 24 MiB and a half into a vector of 3-int blocks
 * 5 apart, and back the other way, from the left neighbour: every element
 * where it belongs, the gaps untouched; and, in ours, the receiving rank's
 * peak memory rises by less than half the message: the data comes in pieces
 * (host engine fragments, tagged engine pieces of large contiguous
 * messages) and is unpacked as it lands, not through a whole copy
 * (MATCHBOX_MPI_TAGGED_WHOLE=0 turns that off in the tagged engine). */
static void large_contig(void)
{
	enum { N = (49 << 20) / 8 }; /* ints: 24.5 MiB, not a whole number of pieces */
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, bad = 0;
	int *cbuf = malloc(sizeof(int) * N), *vbuf = malloc(sizeof(int) * (N / 3) * 5);
	MPI_Datatype vec;
	MPI_Request rq;

	MPI_Type_vector(N / 3, 3, 5, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int k = 0; k < N; k++)
		cbuf[k] = rank * 7 + k;
	for (int i = 0; i < (N / 3) * 5; i++)
		vbuf[i] = -5;
#ifndef OPEN_MPI
	long base = maxrss_kb();
#endif
	MPI_Irecv(vbuf, 1, vec, left, 60, MPI_COMM_WORLD, &rq);
	CHECK_MPI(MPI_Send(cbuf, N - N % 3, MPI_INT, right, 60, MPI_COMM_WORLD));
	CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	for (int i = 0; i < (N / 3) * 5; i++)
		bad += vbuf[i] != (i % 5 < 3 ? left * 7 + (i / 5) * 3 + i % 5 : -5);
#ifndef OPEN_MPI
	long rise = maxrss_kb() - base;
	const char *w = getenv("MATCHBOX_MPI_TAGGED_WHOLE");

	if (!(w && !strcmp(w, "0")) && rise > (long)(sizeof(int) * N / 2048)) {
		fprintf(stderr, "rank %d: large_contig: peak memory rose %ld KiB\n", rank, rise);
		bad++;
	}
#endif
	/* The other way: the vector packed in pieces into contiguous ints. */
	for (int k = 0; k < N; k++)
		cbuf[k] = -5;
	MPI_Irecv(cbuf, N - N % 3, MPI_INT, right, 61, MPI_COMM_WORLD, &rq);
	CHECK_MPI(MPI_Send(vbuf, 1, vec, left, 61, MPI_COMM_WORLD));
	CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	for (int k = 0; k < N - N % 3; k++)
		bad += cbuf[k] != rank * 7 + k;
	if (bad)
		fprintf(stderr, "rank %d: large_contig: %d wrong\n", rank, bad);
	CHECK(bad == 0);
	MPI_Type_free(&vec);
	free(cbuf);
	free(vbuf);
}

/* Evenly spaced runs of one size (vectors, equally spaced indexed blocks)
 * are packed by a strided copy that never reads the typemap; each shape
 * is checked against placements computed here, not by the library: Pack
 * and Unpack, then the message paths of a small message (packed on the
 * stack and injected, taken from the unexpected queue onto the stack,
 * received through a pooled temporary), of larger ones and of ones in
 * pieces, and a message that ends inside a run. */
struct shape {
	const char *what;
	int nblk, blen;        /* blocks of blen elements of esz bytes */
	MPI_Aint step;         /* bytes from one block to the next (may be < 0) */
	int esz, count;        /* element size (4, 8, 16, 12: 3 ints); instances */
	MPI_Aint ext;          /* instance extent (resized) or 0 for the natural one */
};

static MPI_Datatype shape_type(const struct shape *h, MPI_Aint *origin, MPI_Aint *extent)
{
	MPI_Datatype e, v, t;
	MPI_Aint lb, ext;

	if (h->esz == 16)
		MPI_Type_contiguous(2, MPI_DOUBLE, &e);
	else if (h->esz == 12)
		MPI_Type_contiguous(3, MPI_INT, &e);
	else
		MPI_Type_dup(h->esz == 8 ? MPI_DOUBLE : MPI_INT, &e);
	MPI_Type_create_hvector(h->nblk, h->blen, h->step, e, &v);
	MPI_Type_get_extent(v, &lb, &ext);
	if (h->ext) {
		MPI_Type_create_resized(v, lb, h->ext, &t);
		MPI_Type_free(&v);
		ext = h->ext;
	} else {
		t = v;
	}
	MPI_Type_commit(&t);
	MPI_Type_free(&e);
	*origin = lb < 0 ? -lb : 0; /* a negative step puts blocks before the buffer */
	*extent = ext;
	return t;
}

/* The byte offset (from the buffer) of packed byte k. */
static size_t shape_at(const struct shape *h, MPI_Aint origin, MPI_Aint ext, size_t k)
{
	size_t bl = (size_t)h->blen * (size_t)h->esz, inst = bl * (size_t)h->nblk;
	size_t i = k / inst, b = k % inst / bl, j = k % bl;

	return (size_t)(origin + (MPI_Aint)i * ext + (MPI_Aint)b * h->step + (MPI_Aint)j);
}

static void uniform_one(const struct shape *h)
{
	MPI_Aint origin, ext;
	MPI_Datatype t = shape_type(h, &origin, &ext);
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, tsize, pos, got;
	size_t bytes, span;
	unsigned char *s, *r, *packed, *want;
	MPI_Status st;
	MPI_Request rq;
	int bad = 0;

	MPI_Type_size(t, &tsize);
	bytes = (size_t)tsize * (size_t)h->count;
	span = (size_t)(origin + (MPI_Aint)h->count * (ext < 0 ? -ext : ext)) +
	       (size_t)(h->step < 0 ? -h->step : h->step) * (size_t)h->nblk + 64;
	s = malloc(span);
	r = malloc(span);
	want = malloc(span);
	packed = malloc(bytes + 1);
	for (size_t i = 0; i < span; i++)
		s[i] = (unsigned char)(i * 11 + 3 + rank);
	pos = 0;
	CHECK_MPI(MPI_Pack(s + origin, h->count, t, packed, (int)bytes, &pos, MPI_COMM_WORLD));
	CHECK((size_t)pos == bytes);
	for (size_t k = 0; k < bytes; k++)
		bad += packed[k] != s[shape_at(h, origin, ext, k)];
	/* Unpack writes every covered byte and nothing else. */
	memset(r, 0xee, span);
	memset(want, 0xee, span);
	for (size_t k = 0; k < bytes; k++)
		want[shape_at(h, origin, ext, k)] = packed[k];
	pos = 0;
	CHECK_MPI(MPI_Unpack(packed, (int)bytes, &pos, r + origin, h->count, t, MPI_COMM_WORLD));
	bad += memcmp(r, want, span) != 0;
	if (bad)
		fprintf(stderr, "rank %d: uniform %s: pack/unpack wrong\n", rank, h->what);
	CHECK(bad == 0);

	/* want: what the left neighbour's pattern looks like placed here. */
	memset(want, 0xee, span);
	for (size_t k = 0; k < bytes; k++) {
		size_t at = shape_at(h, origin, ext, k);

		want[at] = (unsigned char)(at * 11 + 3 + left);
	}
	for (int way = 0; way < 3; way++) {
		memset(r, 0xee, span);
		if (way == 0) { /* message first: taken from the unexpected queue */
			MPI_Request sq;

			/* Isend: past the eager limit a send waits for its receive */
			CHECK_MPI(MPI_Isend(s + origin, h->count, t, right, 60, MPI_COMM_WORLD, &sq));
			MPI_Barrier(MPI_COMM_WORLD);
			CHECK_MPI(MPI_Recv(r + origin, h->count, t, left, 60, MPI_COMM_WORLD, &st));
			CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
		} else if (way == 1) { /* receive first */
			CHECK_MPI(MPI_Irecv(r + origin, h->count, t, left, 61, MPI_COMM_WORLD, &rq));
			MPI_Barrier(MPI_COMM_WORLD);
			CHECK_MPI(MPI_Send(s + origin, h->count, t, right, 61, MPI_COMM_WORLD));
			CHECK_MPI(MPI_Wait(&rq, &st));
		} else { /* message first, MPI_Irecv born complete */
			MPI_Request sq;

			CHECK_MPI(MPI_Isend(s + origin, h->count, t, right, 62, MPI_COMM_WORLD, &sq));
			MPI_Barrier(MPI_COMM_WORLD);
			CHECK_MPI(MPI_Irecv(r + origin, h->count, t, left, 62, MPI_COMM_WORLD, &rq));
			CHECK_MPI(MPI_Wait(&rq, &st));
			CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
		}
		MPI_Get_count(&st, MPI_BYTE, &got);
		CHECK((size_t)got == bytes && st.MPI_SOURCE == left);
		if (memcmp(r, want, span)) {
			fprintf(stderr, "rank %d: uniform %s, way %d: received bytes wrong\n", rank,
				h->what, way);
			CHECK(0);
		}
	}
	/* A shorter message of bytes ends inside a run (mid-element): what
	 * came is placed, the rest of the layout keeps its bytes. */
	if (bytes > 5) {
		size_t part = bytes - 5;
		unsigned char *p = malloc(part);

		for (size_t k = 0; k < part; k++)
			p[k] = (unsigned char)(k * 5 + 1);
		memset(r, 0xee, span);
		CHECK_MPI(MPI_Sendrecv(p, (int)part, MPI_BYTE, rank, 63, r + origin, h->count, t, rank, 63,
				       MPI_COMM_WORLD, &st));
		MPI_Get_count(&st, MPI_BYTE, &got);
		CHECK((size_t)got == part);
		bad = 0;
		for (size_t k = 0; k < bytes; k++)
			bad += r[shape_at(h, origin, ext, k)] != (k < part ? p[k] : 0xee);
		if (bad)
			fprintf(stderr, "rank %d: uniform %s: short message placed wrong\n", rank,
				h->what);
		CHECK(bad == 0);
		free(p);
	}
	MPI_Type_free(&t);
	free(s);
	free(r);
	free(want);
	free(packed);
}

/* A handle used after MPI_Type_free names no type (MPI_ERR_TYPE) until a
 * later type takes its place, as MPICH's recycled handles do. */
static void stale_handle(void)
{
	MPI_Datatype t, stale;
	int cls = MPI_SUCCESS;

	MPI_Type_contiguous(3, MPI_INT, &t);
	stale = t;
	MPI_Type_free(&t);
	CHECK(t == MPI_DATATYPE_NULL);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Type_commit(&stale), &cls);
	CHECK(cls == MPI_ERR_TYPE);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void uniform(void)
{
	static const struct shape shapes[] = {
		{"doubles, stride 2", 16, 1, 16, 8, 1, 0},
		{"ints, stride 3, 3 instances", 10, 1, 12, 4, 3, 0},
		{"pairs of doubles", 8, 1, 40, 16, 2, 0},
		{"3-int elements", 7, 1, 20, 12, 1, 0},
		{"blocks of 3 doubles", 9, 3, 40, 8, 2, 0},
		{"negative step", 12, 1, -24, 8, 1, 0},
		{"resized, instances interleaved", 6, 1, 32, 8, 4, 8},
		{"column of 512 doubles: the packed limit", 512, 1, 64, 8, 1, 0},
		{"513 doubles: past it", 513, 1, 16, 8, 1, 0},
		{"column of 2000 doubles", 2000, 1, 24, 8, 1, 0},
		/* past 64 KiB: fragments (host) and pieces (tagged), whose
		 * edges fall inside runs */
		{"6000 3-int elements", 6000, 1, 20, 12, 1, 0},
		{"4000 blocks of 3 doubles, 2 instances", 4000, 3, 40, 8, 2, 0},
		/* past the runs a type lists: one block repeated */
		{"70000 single doubles, 2 instances", 70000, 1, 16, 8, 2, 0},
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		uniform_one(&shapes[i]);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	constructors();
	mixed_signatures();
	partial_elements();
	predefined();
#ifdef T_HAVE_GET_CONTENTS
	envelopes();
#endif
	arrays();
	legacy();
	external32();
	other_names();
	repeated();
	fragments();
	large_contig();
	uniform();
#ifndef OPEN_MPI
	stale_handle();
#endif
	return mt_finish("t_dtype");
}
