/*
 * What a datatype remembers of its making and the constructors built from
 * the basic ones: MPI_Type_get_envelope/get_contents over the arguments
 * each constructor records (the types in them held by reference, so a
 * returned derived type is one more reference the caller frees);
 * subarray and darray as nests of hindexed types resized to the whole
 * array; MPI-1's names (Type_struct with MPI_LB/MPI_UB, Type_extent, ...);
 * the canonical "external32" packing (big-endian, the standard's sizes:
 * 4-byte long, the rest as on this ABI); Type_match_size, the Fortran 90
 * parameterised types and the _x count queries.
 */
#include "mbmpi.h"

#include <stdio.h>

struct mbmpi_dtargs {
	int combiner;
	int ni, na, nd;
	int *ints;
	MPI_Aint *aints;
	MPI_Datatype *types;
};

void mbmpi_dt_args_free(struct mbmpi_dtype *d)
{
	struct mbmpi_dtargs *a = d->args;

	if (!a)
		return;
	d->args = NULL;
	for (int i = 0; i < a->nd; i++)
		mbmpi_dt_release(mbmpi_dt(a->types[i]));
	free(a);
}

int mbmpi_dt_record(MPI_Datatype *t, int combiner, int ni, const int *ints, int na,
		    const MPI_Aint *aints, int nd, const MPI_Datatype *types)
{
	struct mbmpi_dtype *d = mbmpi_dt(*t);
	size_t sz = sizeof(struct mbmpi_dtargs) + sizeof(MPI_Aint) * (size_t)na +
		    sizeof(MPI_Datatype) * (size_t)nd + sizeof(int) * (size_t)ni;
	struct mbmpi_dtargs *a = malloc(sz);

	if (!a) {
		mbmpi_dt_release(d);
		*t = MPI_DATATYPE_NULL;
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	}
	a->combiner = combiner;
	a->ni = ni;
	a->na = na;
	a->nd = nd;
	a->aints = (MPI_Aint *)(a + 1);
	a->types = (MPI_Datatype *)(a->aints + na);
	a->ints = (int *)(a->types + nd);
	if (na)
		memcpy(a->aints, aints, sizeof(MPI_Aint) * (size_t)na);
	if (ni)
		memcpy(a->ints, ints, sizeof(int) * (size_t)ni);
	for (int i = 0; i < nd; i++) {
		a->types[i] = types[i];
		mbmpi_dt_retain(mbmpi_dt(types[i]));
	}
	mbmpi_dt_args_free(d);
	d->args = a;
	return MPI_SUCCESS;
}

static int dt_valid(MPI_Datatype t)
{
	return t != MPI_DATATYPE_NULL && mbmpi_dt(t)->refs > 0 ? MPI_SUCCESS : MPI_ERR_TYPE;
}

int PMPI_Type_get_envelope(MPI_Datatype dt, int *ni, int *na, int *nd, int *combiner)
{
	MBMPI_GUARD();
	struct mbmpi_dtargs *a;

	if (dt_valid(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!ni || !na || !nd || !combiner)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	a = mbmpi_dt(dt)->args;
	if (!a) {
		*ni = *na = *nd = 0;
		*combiner = MPI_COMBINER_NAMED;
		return MPI_SUCCESS;
	}
	*ni = a->ni;
	*na = a->na;
	*nd = a->nd;
	*combiner = a->combiner;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_get_envelope)

int PMPI_Type_get_contents(MPI_Datatype dt, int max_i, int max_a, int max_d, int ints[],
			   MPI_Aint aints[], MPI_Datatype types[])
{
	MBMPI_GUARD();
	struct mbmpi_dtargs *a;

	if (dt_valid(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	a = mbmpi_dt(dt)->args;
	/* Named types have no contents to give. */
	if (!a)
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (max_i < a->ni || max_a < a->na || max_d < a->nd || (a->ni && !ints) ||
	    (a->na && !aints) || (a->nd && !types))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (a->ni)
		memcpy(ints, a->ints, sizeof(int) * (size_t)a->ni);
	if (a->na)
		memcpy(aints, a->aints, sizeof(MPI_Aint) * (size_t)a->na);
	for (int i = 0; i < a->nd; i++) {
		types[i] = a->types[i];
		mbmpi_dt_retain(mbmpi_dt(a->types[i]));
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_get_contents)

/* ---- Subarrays and distributed arrays ---- */

/* The type of the elements at runs[d] of every dimension d, dimensions in
 * storage order (slowest first), in an array of gsizes[] elements of
 * `old`: a nest of hindexed types, each resized to the stride of its
 * dimension, and the whole resized to the whole array. */
struct dim_runs {
	int n;
	int *start, *len;
};

static int nest_type(int ndims, const int *gsizes, const struct dim_runs *runs, MPI_Datatype old,
		     MPI_Datatype *out)
{
	MPI_Aint ext = mbmpi_dt(old)->extent, stride = ext;
	MPI_Datatype cur = old, next;
	int ret = MPI_SUCCESS;

	for (int d = ndims - 1; d >= 0; d--) {
		MPI_Aint *disp = malloc(sizeof(MPI_Aint) * (size_t)(runs[d].n ? runs[d].n : 1));
		MPI_Datatype resized;

		if (!disp) {
			ret = MPI_ERR_NO_MEM;
			break;
		}
		for (int k = 0; k < runs[d].n; k++)
			disp[k] = (MPI_Aint)runs[d].start[k] * stride;
		/* Consecutive instances of the inner type step one index here. */
		ret = PMPI_Type_create_resized(cur, 0, stride, &resized);
		if (!ret) {
			ret = PMPI_Type_create_hindexed(runs[d].n, runs[d].len, disp, resized, &next);
			PMPI_Type_free(&resized);
		}
		free(disp);
		if (cur != old)
			PMPI_Type_free(&cur);
		if (ret)
			return ret;
		cur = next;
		stride *= gsizes[d];
	}
	if (ret) {
		if (cur != old)
			PMPI_Type_free(&cur);
		return ret;
	}
	ret = PMPI_Type_create_resized(cur, 0, stride, out);
	if (cur != old)
		PMPI_Type_free(&cur);
	return ret;
}

static void runs_free(struct dim_runs *r, int n)
{
	for (int i = 0; r && i < n; i++) {
		free(r[i].start);
		free(r[i].len);
	}
	free(r);
}

/* Lays the per-dimension arrays of a C- or Fortran-ordered array out slowest
 * dimension first. */
static int order_index(int order, int ndims, int i)
{
	return order == MPI_ORDER_C ? i : ndims - 1 - i;
}

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
			      int order, MPI_Datatype old, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	struct dim_runs *runs;
	int *g, ret, *ints;

	if (ndims <= 0 || !sizes || !subsizes || !starts || !newtype)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (dt_valid(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	for (int i = 0; i < ndims; i++)
		if (sizes[i] <= 0 || subsizes[i] <= 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
		    starts[i] > sizes[i] - subsizes[i])
			return MBMPI_ERR(NULL, MPI_ERR_ARG);
	runs = calloc((size_t)ndims, sizeof(*runs));
	g = malloc(sizeof(int) * (size_t)ndims);
	ints = malloc(sizeof(int) * (size_t)(3 * ndims + 2));
	if (!runs || !g || !ints) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	for (int i = 0; i < ndims; i++) {
		int s = order_index(order, ndims, i);

		g[i] = sizes[s];
		runs[i].n = 1;
		runs[i].start = malloc(sizeof(int));
		runs[i].len = malloc(sizeof(int));
		if (!runs[i].start || !runs[i].len) {
			ret = MPI_ERR_NO_MEM;
			goto out;
		}
		runs[i].start[0] = starts[s];
		runs[i].len[0] = subsizes[s];
	}
	if ((ret = nest_type(ndims, g, runs, old, newtype)))
		goto out;
	ints[0] = ndims;
	memcpy(ints + 1, sizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 1 + ndims, subsizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 1 + 2 * ndims, starts, sizeof(int) * (size_t)ndims);
	ints[1 + 3 * ndims] = order;
	ret = mbmpi_dt_record(newtype, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1, &old);
	ret = ret ? MPI_ERR_NO_MEM : MPI_SUCCESS;
out:
	runs_free(runs, ndims);
	free(g);
	free(ints);
	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_create_subarray)

/* One dimension of a darray: the indices this process holds of gsize, as
 * runs. BLOCK gives one run of the block size (default: gsize over the
 * processes, rounded up); CYCLIC(k) deals blocks of k round the
 * processes; NONE keeps the whole dimension. */
static int darray_dim(int gsize, int distrib, int darg, int psize, int coord, struct dim_runs *r)
{
	int b, n = 0, cap;

	if (distrib == MPI_DISTRIBUTE_NONE || psize == 1) {
		if (distrib == MPI_DISTRIBUTE_NONE && psize != 1)
			return MPI_ERR_ARG;
		distrib = MPI_DISTRIBUTE_BLOCK;
		darg = gsize;
	}
	if (distrib == MPI_DISTRIBUTE_BLOCK) {
		int lo, hi;

		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
		if (b <= 0 || (long)b * psize < gsize)
			return MPI_ERR_ARG;
		lo = coord * b;
		hi = lo + b < gsize ? lo + b : gsize;
		r->start = malloc(sizeof(int));
		r->len = malloc(sizeof(int));
		if (!r->start || !r->len)
			return MPI_ERR_NO_MEM;
		r->n = hi > lo ? 1 : 0;
		r->start[0] = lo;
		r->len[0] = hi > lo ? hi - lo : 0;
		return MPI_SUCCESS;
	}
	if (distrib != MPI_DISTRIBUTE_CYCLIC)
		return MPI_ERR_ARG;
	b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
	if (b <= 0)
		return MPI_ERR_ARG;
	cap = gsize / (b * psize) + 2;
	r->start = malloc(sizeof(int) * (size_t)cap);
	r->len = malloc(sizeof(int) * (size_t)cap);
	if (!r->start || !r->len)
		return MPI_ERR_NO_MEM;
	for (long lo = (long)coord * b; lo < gsize; lo += (long)b * psize) {
		r->start[n] = (int)lo;
		r->len[n++] = (int)(lo + b <= gsize ? b : gsize - lo);
	}
	r->n = n;
	return MPI_SUCCESS;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
			    const int dargs[], const int psizes[], int order, MPI_Datatype old,
			    MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	struct dim_runs *runs = NULL;
	int *g = NULL, *ints = NULL, *coords = NULL, ret = MPI_SUCCESS, nprocs = 1;

	if (size <= 0 || rank < 0 || rank >= size || ndims <= 0 || !gsizes || !distribs || !dargs ||
	    !psizes || !newtype)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (dt_valid(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	for (int i = 0; i < ndims; i++) {
		if (gsizes[i] <= 0 || psizes[i] <= 0)
			return MBMPI_ERR(NULL, MPI_ERR_ARG);
		nprocs *= psizes[i];
	}
	if (nprocs != size)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	runs = calloc((size_t)ndims, sizeof(*runs));
	g = malloc(sizeof(int) * (size_t)ndims);
	coords = malloc(sizeof(int) * (size_t)ndims);
	ints = malloc(sizeof(int) * (size_t)(4 * ndims + 4));
	if (!runs || !g || !coords || !ints) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	/* The process grid is numbered row-major whatever the array's order. */
	for (int i = ndims - 1, r = rank; i >= 0; i--) {
		coords[i] = r % psizes[i];
		r /= psizes[i];
	}
	for (int i = 0; i < ndims && !ret; i++) {
		int s = order_index(order, ndims, i);

		g[i] = gsizes[s];
		ret = darray_dim(gsizes[s], distribs[s], dargs[s], psizes[s], coords[s], &runs[i]);
	}
	if (ret || (ret = nest_type(ndims, g, runs, old, newtype)))
		goto out;
	ints[0] = size;
	ints[1] = rank;
	ints[2] = ndims;
	memcpy(ints + 3, gsizes, sizeof(int) * (size_t)ndims);
	memcpy(ints + 3 + ndims, distribs, sizeof(int) * (size_t)ndims);
	memcpy(ints + 3 + 2 * ndims, dargs, sizeof(int) * (size_t)ndims);
	memcpy(ints + 3 + 3 * ndims, psizes, sizeof(int) * (size_t)ndims);
	ints[3 + 4 * ndims] = order;
	ret = mbmpi_dt_record(newtype, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints, 0, NULL, 1, &old);
	ret = ret ? MPI_ERR_NO_MEM : MPI_SUCCESS;
out:
	runs_free(runs, ndims);
	free(g);
	free(coords);
	free(ints);
	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_create_darray)

/* ---- MPI-1 names ---- */

int PMPI_Type_hvector(int count, int blen, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	return PMPI_Type_create_hvector(count, blen, stride, old, newtype);
}
MBMPI_ALIAS(Type_hvector)

int PMPI_Type_hindexed(int count, int blens[], MPI_Aint displs[], MPI_Datatype old,
		       MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	return PMPI_Type_create_hindexed(count, blens, displs, old, newtype);
}
MBMPI_ALIAS(Type_hindexed)

int PMPI_Type_struct(int count, int blens[], MPI_Aint displs[], MPI_Datatype types[],
		     MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	return PMPI_Type_create_struct(count, blens, displs, types, newtype);
}
MBMPI_ALIAS(Type_struct)

int PMPI_Type_extent(MPI_Datatype dt, MPI_Aint *extent)
{
	MBMPI_GUARD();
	MPI_Aint lb;

	return PMPI_Type_get_extent(dt, &lb, extent);
}
MBMPI_ALIAS(Type_extent)

int PMPI_Type_lb(MPI_Datatype dt, MPI_Aint *lb)
{
	MBMPI_GUARD();
	MPI_Aint ext;

	return PMPI_Type_get_extent(dt, lb, &ext);
}
MBMPI_ALIAS(Type_lb)

int PMPI_Type_ub(MPI_Datatype dt, MPI_Aint *ub)
{
	MBMPI_GUARD();
	MPI_Aint lb, ext;
	int ret = PMPI_Type_get_extent(dt, &lb, &ext);

	if (!ret && ub)
		*ub = lb + ext;
	return ret;
}
MBMPI_ALIAS(Type_ub)

int PMPI_Address(void *location, MPI_Aint *address)
{
	MBMPI_GUARD();
	return PMPI_Get_address(location, address);
}
MBMPI_ALIAS(Address)

/* ---- The _x queries ---- */

/* An MPI_Aint query widened to MPI_Count: both outputs are checked before
 * either is written. */
static int extent_x(int (*query)(MPI_Datatype, MPI_Aint *, MPI_Aint *), MPI_Datatype dt, MPI_Count *lb,
		    MPI_Count *extent, const char *fn)
{
	MPI_Aint l, e;
	int ret = query(dt, &l, &e);

	if (ret)
		return ret;
	if (!lb || !extent)
		return mbmpi_err(NULL, MPI_ERR_ARG, fn);
	*lb = l;
	*extent = e;
	return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
	MBMPI_GUARD();
	return extent_x(PMPI_Type_get_extent, dt, lb, extent, __func__);
}
MBMPI_ALIAS(Type_get_extent_x)

int PMPI_Type_get_true_extent_x(MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent)
{
	MBMPI_GUARD();
	return extent_x(PMPI_Type_get_true_extent, dt, lb, extent, __func__);
}
MBMPI_ALIAS(Type_get_true_extent_x)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype dt, MPI_Count count)
{
	MBMPI_GUARD();
	int ret = mbmpi_status_set_elements(status, dt, count);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Status_set_elements_x)

/* The predefined type of a Fortran class and size (the REAL, INTEGER and
 * COMPLEX kinds a program may declare). */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *type)
{
	MBMPI_GUARD();
	MPI_Datatype t = MPI_DATATYPE_NULL;

	if (!type)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	switch (typeclass) {
	case MPI_TYPECLASS_REAL:
		t = size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8 : size == (int)sizeof(long double) ? MPI_LONG_DOUBLE : t;
		break;
	case MPI_TYPECLASS_INTEGER:
		t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
		    : size == 8 ? MPI_INTEGER8 : size == 16 ? MPI_INTEGER16 : t;
		break;
	case MPI_TYPECLASS_COMPLEX:
		t = size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16 : t;
		break;
	default:
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	}
	if (t == MPI_DATATYPE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*type = t;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_match_size)

/* Fortran 90 parameterised types: the type of the smallest kind with the
 * precision and range asked for, made once per (class, p, r) and kept
 * for the life of the library, as predefined types are. */
struct f90_type {
	int comb, p, r;
	MPI_Datatype t;
};
static struct f90_type *f90_types;
static int f90_n;

static int f90_type(int comb, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
	struct f90_type *t;
	struct mbmpi_dtype *d;
	int ints[2] = {p, r}, ret;

	for (int i = 0; i < f90_n; i++)
		if (f90_types[i].comb == comb && f90_types[i].p == p && f90_types[i].r == r) {
			*out = f90_types[i].t;
			return MPI_SUCCESS;
		}
	if (!(t = realloc(f90_types, sizeof(*t) * (size_t)(f90_n + 1))))
		return MPI_ERR_NO_MEM;
	f90_types = t;
	if ((ret = PMPI_Type_dup(base, out)))
		return ret;
	if ((ret = mbmpi_dt_record(out, comb, comb == MPI_COMBINER_F90_INTEGER ? 1 : 2,
				   comb == MPI_COMBINER_F90_INTEGER ? &ints[1] : ints, 0, NULL, 0, NULL)))
		return ret;
	d = mbmpi_dt(*out);
	d->flags |= MBMPI_DT_PREDEF | MBMPI_DT_COMMITTED;
	f90_types[f90_n++] = (struct f90_type){.comb = comb, .p = p, .r = r, .t = *out};
	return MPI_SUCCESS;
}

void mbmpi_f90_fini(void)
{
	for (int i = 0; i < f90_n; i++) {
		struct mbmpi_dtype *d = mbmpi_dt(f90_types[i].t);

		d->flags &= ~MBMPI_DT_PREDEF;
		mbmpi_dt_release(d);
	}
	free(f90_types);
	f90_types = NULL;
	f90_n = 0;
}

static bool fits(int want, int have)
{
	return want == MPI_UNDEFINED || want <= have;
}

static MPI_Datatype f90_real_base(int p, int r, bool cplx)
{
	if (fits(p, 6) && fits(r, 37))
		return cplx ? MPI_C_FLOAT_COMPLEX : MPI_FLOAT;
	if (fits(p, 15) && fits(r, 307))
		return cplx ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE;
	if (fits(p, 18) && fits(r, 4931))
		return cplx ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_LONG_DOUBLE;
	return MPI_DATATYPE_NULL;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	MPI_Datatype b = f90_real_base(p, r, false);
	int ret;

	if (!newtype || (p == MPI_UNDEFINED && r == MPI_UNDEFINED) || b == MPI_DATATYPE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	ret = f90_type(MPI_COMBINER_F90_REAL, p, r, b, newtype);
	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	MPI_Datatype b = f90_real_base(p, r, true);
	int ret;

	if (!newtype || (p == MPI_UNDEFINED && r == MPI_UNDEFINED) || b == MPI_DATATYPE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	ret = f90_type(MPI_COMBINER_F90_COMPLEX, p, r, b, newtype);
	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_create_f90_complex)

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	MPI_Datatype b = r <= 2 ? MPI_INT8_T : r <= 4 ? MPI_INT16_T : r <= 9 ? MPI_INT32_T
		       : r <= 18 ? MPI_INT64_T : MPI_DATATYPE_NULL;
	int ret;

	if (!newtype || r == MPI_UNDEFINED || b == MPI_DATATYPE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	ret = f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, b, newtype);
	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Type_create_f90_integer)

/* ---- external32 ---- */

/* external32 sizes differ from this ABI's only for long and unsigned long
 * (4 bytes there). Complex numbers are two reals, each in network order. */
static size_t ext32_size(int b)
{
	return b == 10 || b == 11 ? 4 : mbmpi_predef_types[b].size;
}

static size_t ext32_unit(int b)
{
	return b >= 26 && b <= 28 ? mbmpi_predef_types[b].size / 2 : ext32_size(b);
}

/* external32 bytes of one instance. */
static size_t ext32_bytes(const struct mbmpi_dtype *d)
{
	size_t n = 0;

	for (int s = 0; s < d->nseg; s++) {
		size_t esz = mbmpi_predef_types[d->segs[s].basic].size;

		n += esz ? d->segs[s].len / esz * ext32_size(d->segs[s].basic) : d->segs[s].len;
	}
	return n * mbmpi_dt_reps(d);
}

/* One element between native (little-endian, esz bytes) and external32
 * (big-endian, xsz bytes, units of u bytes). */
static void ext32_elem(const unsigned char *in, unsigned char *out, size_t esz, size_t xsz, size_t u,
		       bool to_ext, bool is_signed)
{
	if (esz == xsz) {
		for (size_t off = 0; off < esz; off += u)
			for (size_t i = 0; i < u; i++)
				out[off + i] = in[off + u - 1 - i];
		return;
	}
	/* long: 8 native bytes, 4 external ones (the low half, sign or zero
	 * extended on the way back). */
	if (to_ext) {
		for (size_t i = 0; i < xsz; i++)
			out[i] = in[xsz - 1 - i];
	} else {
		unsigned char fill = is_signed && (in[0] & 0x80) ? 0xff : 0;

		for (size_t i = 0; i < xsz; i++)
			out[i] = in[xsz - 1 - i];
		for (size_t i = xsz; i < esz; i++)
			out[i] = fill;
	}
}

/* Converts a packed native stream of `count` instances to external32
 * (to_ext) or back; returns the bytes written. */
static size_t ext32_convert(const unsigned char *in, unsigned char *out, size_t count,
			    const struct mbmpi_dtype *d, bool to_ext)
{
	const unsigned char *p = in;
	unsigned char *q = out;

	/* The packed stream does not depend on where the runs were. */
	for (size_t i = 0; i < count * mbmpi_dt_reps(d); i++)
		for (int s = 0; s < d->nseg; s++) {
			int b = d->segs[s].basic;
			size_t esz = mbmpi_predef_types[b].size, xsz = ext32_size(b), u = ext32_unit(b);
			size_t n = esz ? d->segs[s].len / esz : 0;

			if (!esz || u <= 1) {
				memcpy(q, p, d->segs[s].len);
				p += d->segs[s].len;
				q += d->segs[s].len;
				continue;
			}
			for (size_t k = 0; k < n; k++) {
				ext32_elem(p, q, esz, xsz, u, to_ext, b == 10);
				p += to_ext ? esz : xsz;
				q += to_ext ? xsz : esz;
			}
		}
	return (size_t)(q - out);
}

static int ext32_check(const char *datarep, int count, MPI_Datatype dt)
{
	if (!datarep || strcmp(datarep, "external32"))
		return MPI_ERR_UNSUPPORTED_DATAREP;
	if (count < 0)
		return MPI_ERR_COUNT;
	return mbmpi_dt_check(dt) ? MPI_ERR_TYPE : MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int count, MPI_Datatype dt, MPI_Aint *size)
{
	MBMPI_GUARD();
	int ret = ext32_check(datarep, count, dt);

	if (ret)
		return MBMPI_ERR(NULL, ret);
	if (!size)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*size = (MPI_Aint)((size_t)count * ext32_bytes(mbmpi_dt(dt)));
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Pack_external_size)

int PMPI_Pack_external(const char datarep[], const void *in, int count, MPI_Datatype dt, void *out,
		       MPI_Aint outsize, MPI_Aint *pos)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret = ext32_check(datarep, count, dt);
	size_t need, native;
	unsigned char *tmp;

	if (ret)
		return MBMPI_ERR(NULL, ret);
	d = mbmpi_dt(dt);
	if (!pos || *pos < 0 || outsize < 0 || (!out && outsize))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	need = (size_t)count * ext32_bytes(d);
	if ((size_t)*pos + need > (size_t)outsize)
		return MBMPI_ERR(NULL, MPI_ERR_TRUNCATE);
	native = (size_t)count * d->size;
	if (!(tmp = malloc(native ? native : 1)))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	mbmpi_pack(in, (size_t)count, d, tmp);
	ext32_convert(tmp, (unsigned char *)out + *pos, (size_t)count, d, true);
	free(tmp);
	*pos += (MPI_Aint)need;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Pack_external)

int PMPI_Unpack_external(const char datarep[], const void *in, MPI_Aint insize, MPI_Aint *pos,
			 void *out, int count, MPI_Datatype dt)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret = ext32_check(datarep, count, dt);
	size_t need, native;
	unsigned char *tmp;

	if (ret)
		return MBMPI_ERR(NULL, ret);
	d = mbmpi_dt(dt);
	if (!pos || *pos < 0 || insize < 0 || (!in && insize))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	need = (size_t)count * ext32_bytes(d);
	if ((size_t)*pos + need > (size_t)insize)
		return MBMPI_ERR(NULL, MPI_ERR_TRUNCATE);
	native = (size_t)count * d->size;
	if (!(tmp = malloc(native ? native : 1)))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	ext32_convert((const unsigned char *)in + *pos, tmp, (size_t)count, d, false);
	mbmpi_unpack(tmp, native, out, (size_t)count, d);
	free(tmp);
	*pos += (MPI_Aint)need;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Unpack_external)
