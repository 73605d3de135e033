/*
 * Datatypes. Every type is flattened at construction into the typemap of one
 * instance: runs of bytes (displacement, length, element type), adjacent runs
 * of the same element type merged. Packing, unpacking and element counts walk
 * that list; sends and receives of a type that is one run skip it entirely.
 * A vector (or contiguous type) of more runs than MBMPI_DT_REPEAT_RUNS keeps
 * one block's runs and a repeat count instead, so MPI_Type_vector(INT_MAX / 2,
 * ...) costs one block, not 10^9 runs; a type built from such a type is
 * flattened, up to MBMPI_DT_MAX_RUNS runs (MPI_ERR_NO_MEM beyond).
 * Constructors copy their inputs' typemaps, so freeing an input never
 * affects a type built from it.
 */
#include "mbmpi.h"

#include <complex.h>
#include <stdio.h>
#include <wchar.h>

struct mbmpi_dtype mbmpi_predef_types[MBMPI_NUM_PREDEF_TYPES];
static struct mbmpi_seg mbmpi_predef_segs[MBMPI_NUM_PREDEF_TYPES][2];

/* A (value, index) pair type for MINLOC/MAXLOC: C's index is an int,
 * Fortran's 2REAL and 2DOUBLE_PRECISION carry it in the value's type. */
#define MBMPI_PAIR_OF(idx, T, vbasic, I, ibasic, nm)                                        \
	do {                                                                                \
		struct pair {                                                               \
			T v;                                                                \
			I i;                                                                \
		};                                                                          \
		mbmpi_predef_pair(idx, nm, vbasic, sizeof(T), ibasic, sizeof(I),            \
				  offsetof(struct pair, i), sizeof(struct pair),            \
				  _Alignof(struct pair));                                   \
	} while (0)
#define MBMPI_PAIR(idx, T, vbasic, nm) MBMPI_PAIR_OF(idx, T, vbasic, int, 8, nm)

static void mbmpi_predef_set(int idx, const char *name, size_t size, size_t align)
{
	struct mbmpi_dtype *d = &mbmpi_predef_types[idx];

	d->flags = MBMPI_DT_PREDEF | MBMPI_DT_COMMITTED | MBMPI_DT_CONTIG;
	d->refs = 1;
	d->size = size;
	d->lb = d->true_lb = 0;
	d->extent = d->true_ub = (MPI_Aint)size;
	d->nseg = 1;
	d->segs = mbmpi_predef_segs[idx];
	d->segs[0] = (struct mbmpi_seg){.disp = 0, .len = size, .basic = (uint16_t)idx};
	d->base = idx;
	d->nelem = 1;
	d->align = (int)align;
	snprintf(d->name, sizeof(d->name), "%s", name);
}

/* A predefined type that behaves as another (Fortran's and C++'s names
 * for C's types): same layout, same element type, same reductions. */
static void mbmpi_predef_alias(int idx, const char *name, int as)
{
	struct mbmpi_dtype *d = &mbmpi_predef_types[idx];

	*d = mbmpi_predef_types[as];
	d->segs = mbmpi_predef_segs[idx];
	memcpy(d->segs, mbmpi_predef_segs[as], sizeof(mbmpi_predef_segs[as]));
	snprintf(d->name, sizeof(d->name), "%s", name);
}

/* The MINLOC/MAXLOC pair types: a value and an int, kept as two runs so the
 * element count is two, as for any struct of two basic types. */
static void mbmpi_predef_pair(int idx, const char *name, int vbasic, size_t vsize, int ibasic,
			      size_t isize, size_t ioff, size_t ext, size_t align)
{
	struct mbmpi_dtype *d = &mbmpi_predef_types[idx];

	mbmpi_predef_set(idx, name, vsize + isize, align);
	d->flags = MBMPI_DT_PREDEF | MBMPI_DT_COMMITTED;
	d->extent = (MPI_Aint)ext;
	d->segs[0] = (struct mbmpi_seg){.disp = 0, .len = vsize, .basic = (uint16_t)vbasic};
	d->segs[1] = (struct mbmpi_seg){.disp = (MPI_Aint)ioff, .len = isize, .basic = (uint16_t)ibasic};
	d->true_ub = (MPI_Aint)(ioff + isize);
	d->nseg = 2;
	d->nelem = 2;
}

void mbmpi_dtype_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	mbmpi_predef_set(1, "MPI_CHAR", sizeof(char), _Alignof(char));
	mbmpi_predef_set(2, "MPI_SIGNED_CHAR", sizeof(signed char), _Alignof(signed char));
	mbmpi_predef_set(3, "MPI_UNSIGNED_CHAR", sizeof(unsigned char), _Alignof(unsigned char));
	mbmpi_predef_set(4, "MPI_BYTE", 1, 1);
	mbmpi_predef_set(5, "MPI_WCHAR", sizeof(wchar_t), _Alignof(wchar_t));
	mbmpi_predef_set(6, "MPI_SHORT", sizeof(short), _Alignof(short));
	mbmpi_predef_set(7, "MPI_UNSIGNED_SHORT", sizeof(unsigned short), _Alignof(unsigned short));
	mbmpi_predef_set(8, "MPI_INT", sizeof(int), _Alignof(int));
	mbmpi_predef_set(9, "MPI_UNSIGNED", sizeof(unsigned), _Alignof(unsigned));
	mbmpi_predef_set(10, "MPI_LONG", sizeof(long), _Alignof(long));
	mbmpi_predef_set(11, "MPI_UNSIGNED_LONG", sizeof(unsigned long), _Alignof(unsigned long));
	mbmpi_predef_set(12, "MPI_LONG_LONG_INT", sizeof(long long), _Alignof(long long));
	mbmpi_predef_set(13, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long), _Alignof(unsigned long long));
	mbmpi_predef_set(14, "MPI_FLOAT", sizeof(float), _Alignof(float));
	mbmpi_predef_set(15, "MPI_DOUBLE", sizeof(double), _Alignof(double));
	mbmpi_predef_set(16, "MPI_LONG_DOUBLE", sizeof(long double), _Alignof(long double));
	mbmpi_predef_set(17, "MPI_INT8_T", 1, 1);
	mbmpi_predef_set(18, "MPI_INT16_T", 2, 2);
	mbmpi_predef_set(19, "MPI_INT32_T", 4, 4);
	mbmpi_predef_set(20, "MPI_INT64_T", 8, 8);
	mbmpi_predef_set(21, "MPI_UINT8_T", 1, 1);
	mbmpi_predef_set(22, "MPI_UINT16_T", 2, 2);
	mbmpi_predef_set(23, "MPI_UINT32_T", 4, 4);
	mbmpi_predef_set(24, "MPI_UINT64_T", 8, 8);
	mbmpi_predef_set(25, "MPI_C_BOOL", sizeof(_Bool), _Alignof(_Bool));
	mbmpi_predef_set(26, "MPI_C_FLOAT_COMPLEX", sizeof(float _Complex), _Alignof(float _Complex));
	mbmpi_predef_set(27, "MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex), _Alignof(double _Complex));
	mbmpi_predef_set(28, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex), _Alignof(long double _Complex));
	mbmpi_predef_set(29, "MPI_AINT", sizeof(MPI_Aint), _Alignof(MPI_Aint));
	mbmpi_predef_set(30, "MPI_OFFSET", sizeof(MPI_Offset), _Alignof(MPI_Offset));
	mbmpi_predef_set(31, "MPI_COUNT", sizeof(MPI_Count), _Alignof(MPI_Count));
	mbmpi_predef_set(32, "MPI_PACKED", 1, 1);
	MBMPI_PAIR(33, float, 14, "MPI_FLOAT_INT");
	MBMPI_PAIR(34, double, 15, "MPI_DOUBLE_INT");
	MBMPI_PAIR(35, long, 10, "MPI_LONG_INT");
	MBMPI_PAIR(36, int, 8, "MPI_2INT");
	MBMPI_PAIR(37, short, 6, "MPI_SHORT_INT");
	MBMPI_PAIR(38, long double, 16, "MPI_LONG_DOUBLE_INT");
	mbmpi_predef_set(0, "MPI_DATATYPE_NULL", 0, 0);
	mbmpi_predef_types[0].flags = MBMPI_DT_PREDEF;
	/* The markers hold no data: only their place counts. */
	mbmpi_predef_set(MBMPI_DT_LB_MARK, "MPI_LB", 0, 1);
	mbmpi_predef_set(MBMPI_DT_UB_MARK, "MPI_UB", 0, 1);
	mbmpi_predef_types[MBMPI_DT_LB_MARK].nseg = mbmpi_predef_types[MBMPI_DT_UB_MARK].nseg = 0;
	mbmpi_predef_types[MBMPI_DT_LB_MARK].nelem = mbmpi_predef_types[MBMPI_DT_UB_MARK].nelem = 0;
	mbmpi_predef_types[MBMPI_DT_LB_MARK].base = mbmpi_predef_types[MBMPI_DT_UB_MARK].base = 0;
	mbmpi_predef_alias(41, "MPI_CXX_BOOL", 25);
	mbmpi_predef_alias(42, "MPI_CXX_FLOAT_COMPLEX", 26);
	mbmpi_predef_alias(43, "MPI_CXX_DOUBLE_COMPLEX", 27);
	mbmpi_predef_alias(44, "MPI_CXX_LONG_DOUBLE_COMPLEX", 28);
	/* gfortran's default kinds: 4-byte INTEGER, REAL and LOGICAL. */
	mbmpi_predef_alias(45, "MPI_CHARACTER", 1);
	mbmpi_predef_alias(46, "MPI_INTEGER", 19);
	mbmpi_predef_alias(47, "MPI_REAL", 14);
	mbmpi_predef_alias(48, "MPI_DOUBLE_PRECISION", 15);
	mbmpi_predef_alias(49, "MPI_LOGICAL", 19);
	mbmpi_predef_alias(50, "MPI_COMPLEX", 26);
	mbmpi_predef_alias(51, "MPI_DOUBLE_COMPLEX", 27);
	mbmpi_predef_alias(52, "MPI_INTEGER1", 17);
	mbmpi_predef_alias(53, "MPI_INTEGER2", 18);
	mbmpi_predef_alias(54, "MPI_INTEGER4", 19);
	mbmpi_predef_alias(55, "MPI_INTEGER8", 20);
	mbmpi_predef_alias(56, "MPI_REAL4", 14);
	mbmpi_predef_alias(57, "MPI_REAL8", 15);
	mbmpi_predef_alias(58, "MPI_COMPLEX8", 26);
	mbmpi_predef_alias(59, "MPI_COMPLEX16", 27);
	mbmpi_predef_alias(60, "MPI_2INTEGER", 36);
	mbmpi_predef_alias(61, "MPI_C_COMPLEX", 26);
	MBMPI_PAIR_OF(62, float, 14, float, 14, "MPI_2REAL");
	MBMPI_PAIR_OF(63, double, 15, double, 15, "MPI_2DOUBLE_PRECISION");
	/* gfortran's INTEGER(16); reductions on it use __int128. */
	mbmpi_predef_set(64, "MPI_INTEGER16", 16, 16);
}

/* Freed types wait here, the latest on top, to be the next types made
 * (at most MBMPI_DT_SPARE of them). A handle used after MPI_Type_free then
 * reads as freed (no references: MPI_ERR_TYPE) instead of reading memory
 * given back; and once reused it names the type made after it, as MPICH's
 * recycled handles do: MPICH's own datatype/indexed_misc builds a struct
 * from a type it had freed, and passed here only while malloc happened to
 * hand the same memory to the next type. */
#define MBMPI_DT_SPARE 64
static struct mbmpi_dtype *mbmpi_dt_spare[MBMPI_DT_SPARE];
static int mbmpi_dt_nspare;

static struct mbmpi_dtype *mbmpi_dt_new(void)
{
	struct mbmpi_dtype *d;

	if (!mbmpi_dt_nspare)
		return calloc(1, sizeof(*d));
	d = mbmpi_dt_spare[--mbmpi_dt_nspare];
	memset(d, 0, sizeof(*d));
	return d;
}

static void mbmpi_dt_put(struct mbmpi_dtype *d)
{
	if (mbmpi_dt_nspare == MBMPI_DT_SPARE) {
		free(d);
		return;
	}
	d->refs = 0;
	mbmpi_dt_spare[mbmpi_dt_nspare++] = d;
}

void mbmpi_dtype_fini(void)
{
	while (mbmpi_dt_nspare)
		free(mbmpi_dt_spare[--mbmpi_dt_nspare]);
}

void mbmpi_dt_release(struct mbmpi_dtype *d)
{
	if (d->flags & MBMPI_DT_PREDEF)
		return;
	if (--d->refs == 0) {
		mbmpi_dt_args_free(d);
		while (d->attrs) {
			struct mbmpi_attr *a = d->attrs;
			d->attrs = a->next;
			free(a);
		}
		free(d->segs);
		mbmpi_dt_put(d);
	}
}

/* ---- Packing ---- */

/* n runs of len bytes, step bytes apart in the typed buffer, to or from
 * consecutive packed bytes; returns the packed end. Runs of up to 32 bytes
 * get a loop each, so that a run is a load and a store or two, not a call:
 * the sizes between powers of two as two copies that overlap (3 ints, 12
 * bytes: 8 and 8 at 4). The packed and typed buffers never overlap. */
static inline __attribute__((always_inline)) char *
mbmpi_runs(char *packed, char *typed, size_t n, size_t len, MPI_Aint step, bool pack)
{
#define MBMPI_CP(o, L) memcpy((pack ? packed : typed) + (o), (pack ? typed : packed) + (o), (L))
#define MBMPI_RUNS(copy)                                                                       \
	for (size_t k = 0; k < n; k++, packed += len, typed += step)                           \
		copy
	if (len == 8)
		MBMPI_RUNS(MBMPI_CP(0, 8));
	else if (len == 4)
		MBMPI_RUNS(MBMPI_CP(0, 4));
	else if (len == 16)
		MBMPI_RUNS(MBMPI_CP(0, 16));
	else if (len > 16 && len <= 32)
		MBMPI_RUNS((MBMPI_CP(0, 16), MBMPI_CP(len - 16, 16)));
	else if (len > 8 && len < 16)
		MBMPI_RUNS((MBMPI_CP(0, 8), MBMPI_CP(len - 8, 8)));
	else
		MBMPI_RUNS(MBMPI_CP(0, len));
#undef MBMPI_RUNS
#undef MBMPI_CP
	return packed;
}

/* An evenly spaced type's instance as strided copies: blocks (rstride
 * apart) of runs (step apart). A block of one run repeated is one copy of
 * all the blocks: a long vector of single elements. */
static inline void mbmpi_uniform_shape(const struct mbmpi_dtype *d, size_t *blocks, size_t *runs,
				       MPI_Aint *step)
{
	size_t reps = mbmpi_dt_reps(d);

	if (d->nseg == 1 && reps > 1) {
		*blocks = 1;
		*runs = reps;
		*step = d->rstride;
	} else {
		*blocks = reps;
		*runs = (size_t)d->nseg;
		*step = d->ustep;
	}
}

void mbmpi_pack(const void *in, size_t count, const struct mbmpi_dtype *d, void *out)
{
	const char *src = in;
	char *dst = out;

	if (mbmpi_dt_flat(d, count)) {
		memcpy(dst, src + mbmpi_dt_start(d), count * d->size);
		return;
	}
	if (d->ulen) {
		size_t blocks, runs;
		MPI_Aint step;

		mbmpi_uniform_shape(d, &blocks, &runs, &step);
		for (size_t i = 0; i < count; i++, src += d->extent)
			for (size_t r = 0; r < blocks; r++)
				dst = mbmpi_runs(dst, (char *)src + (MPI_Aint)r * d->rstride +
						 d->segs[0].disp, runs, d->ulen, step, true);
		return;
	}
	for (size_t i = 0; i < count; i++, src += d->extent)
		for (size_t r = 0; r < mbmpi_dt_reps(d); r++) {
			const char *at = src + (MPI_Aint)r * d->rstride;

			for (int s = 0; s < d->nseg; s++) {
				memcpy(dst, at + d->segs[s].disp, d->segs[s].len);
				dst += d->segs[s].len;
			}
		}
}

size_t mbmpi_unpack(const void *in, size_t bytes, void *out, size_t count, const struct mbmpi_dtype *d)
{
	const char *src = in;
	char *dst = out;
	size_t left = bytes;

	if (mbmpi_dt_flat(d, count)) {
		left = bytes < count * d->size ? bytes : count * d->size;
		memcpy(dst + mbmpi_dt_start(d), src, left);
		return left;
	}
	if (d->ulen) {
		size_t blocks, runs;
		MPI_Aint step;

		mbmpi_uniform_shape(d, &blocks, &runs, &step);
		for (size_t i = 0; i < count && left; i++, dst += d->extent)
			for (size_t r = 0; r < blocks && left; r++) {
				char *at = dst + (MPI_Aint)r * d->rstride + d->segs[0].disp;
				size_t n = left >= runs * d->ulen ? runs : left / d->ulen;

				src = mbmpi_runs((char *)src, at, n, d->ulen, step, false);
				left -= n * d->ulen;
				if (n < runs && left) {
					/* a short message ends inside this run */
					memcpy(at + (MPI_Aint)n * step, src, left);
					left = 0;
				}
			}
		return bytes - left;
	}
	for (size_t i = 0; i < count && left; i++, dst += d->extent)
		for (size_t r = 0; r < mbmpi_dt_reps(d) && left; r++) {
			char *at = dst + (MPI_Aint)r * d->rstride;

			for (int s = 0; s < d->nseg && left; s++) {
				size_t n = d->segs[s].len < left ? d->segs[s].len : left;

				memcpy(at + d->segs[s].disp, src, n);
				src += n;
				left -= n;
			}
		}
	return bytes - left;
}

size_t mbmpi_dt_part(struct mbmpi_dt_cursor *c, void *buf, size_t count,
		     const struct mbmpi_dtype *d, size_t off, void *packed, size_t len, bool pack)
{
	size_t reps = mbmpi_dt_reps(d), moved = 0;
	char *p = packed;

	if (!d->size || !d->nseg)
		return 0;
	if (c->pos != off) {
		/* Every repeat of a block holds the same bytes: instance and
		 * repeat by division, the run by a walk of one block. */
		size_t block = d->size / reps, rem = off % d->size;

		*c = (struct mbmpi_dt_cursor){.pos = off, .inst = off / d->size,
					      .rep = rem / block};
		rem %= block;
		while (rem && rem >= d->segs[c->seg].len)
			rem -= d->segs[c->seg++].len;
		c->in_seg = rem;
	}
	while (len && c->inst < count) {
		if (d->ulen && !c->in_seg && len >= d->ulen) {
			/* Whole evenly spaced runs, as many as are left of this
			 * block (of the instance, when a block is one run) and
			 * fit: one strided copy. */
			size_t blocks, runs, n, b;
			MPI_Aint step;

			mbmpi_uniform_shape(d, &blocks, &runs, &step);
			bool single = blocks == 1 && reps > 1;

			n = single ? reps - c->rep : runs - (size_t)c->seg;
			char *at = (char *)buf + (MPI_Aint)c->inst * d->extent +
				   (MPI_Aint)c->rep * d->rstride + d->segs[0].disp +
				   (MPI_Aint)c->seg * d->ustep;

			n = n < len / d->ulen ? n : len / d->ulen;
			p = pack ? mbmpi_runs(p, at, n, d->ulen, step, true)
				 : mbmpi_runs(p, at, n, d->ulen, step, false);
			b = n * d->ulen;
			len -= b;
			moved += b;
			c->pos += b;
			if (single)
				c->rep += n - 1; /* the last one steps on below */
			else
				c->seg += (int)n;
			if (single || c->seg == d->nseg) {
				c->seg = 0;
				if (++c->rep == reps) {
					c->rep = 0;
					c->inst++;
				}
			}
			continue;
		}
		const struct mbmpi_seg *g = &d->segs[c->seg];
		char *at = (char *)buf + (MPI_Aint)c->inst * d->extent +
			   (MPI_Aint)c->rep * d->rstride + g->disp + (MPI_Aint)c->in_seg;
		size_t n = g->len - c->in_seg < len ? g->len - c->in_seg : len;

		memcpy(pack ? (void *)p : at, pack ? (const void *)at : p, n);
		p += n;
		len -= n;
		moved += n;
		c->pos += n;
		c->in_seg += n;
		if (c->in_seg == g->len) {
			c->in_seg = 0;
			if (++c->seg == d->nseg) {
				c->seg = 0;
				if (++c->rep == reps) {
					c->rep = 0;
					c->inst++;
				}
			}
		}
	}
	return moved;
}

size_t mbmpi_elements(const struct mbmpi_dtype *d, size_t bytes, bool *exact)
{
	size_t n = 0, inst;

	*exact = true;
	if (!d->size) {
		*exact = bytes == 0;
		return 0;
	}
	inst = bytes / d->size;
	n = inst * d->nelem;
	bytes -= inst * d->size;
	/* Whole copies of a repeated block, then the runs of a part of one. */
	{
		size_t reps = mbmpi_dt_reps(d), part = bytes / (d->size / reps);

		n += part * (d->nelem / reps);
		bytes -= part * (d->size / reps);
	}
	for (int s = 0; s < d->nseg && bytes; s++) {
		size_t esz = mbmpi_predef_types[d->segs[s].basic].size;
		size_t take = d->segs[s].len < bytes ? d->segs[s].len : bytes;

		n += take / esz;
		if (take % esz)
			*exact = false;
		bytes -= take;
	}
	return n;
}

/* ---- Construction ---- */

/* Past this many runs a vector keeps one block and a repeat count; past
 * MBMPI_DT_MAX_RUNS no typemap is flattened (about 1.6 GB of runs). */
#define MBMPI_DT_REPEAT_RUNS 65536
#define MBMPI_DT_MAX_RUNS (1 << 26)

struct mbmpi_builder {
	struct mbmpi_dtype *d;
	int cap;
	bool nosegs;    /* bounds and sizes only: the runs are already there */
	bool first;     /* no data-bearing block yet */
	bool bounds;    /* some part had explicit bounds */
	bool has_lb, has_ub;
	MPI_Aint mlb, mub; /* explicit bounds (markers), when present */
	int base;
};

static int mbmpi_build_begin(struct mbmpi_builder *b)
{
	b->d = mbmpi_dt_new();
	if (!b->d)
		return MPI_ERR_NO_MEM;
	b->d->refs = 1;
	b->cap = 0;
	b->nosegs = false;
	b->first = true;
	b->bounds = b->has_lb = b->has_ub = false;
	b->mlb = b->mub = 0;
	b->base = -1;
	return MPI_SUCCESS;
}

static int mbmpi_build_seg(struct mbmpi_builder *b, MPI_Aint disp, size_t len, uint16_t basic)
{
	struct mbmpi_dtype *d = b->d;
	struct mbmpi_seg *last = d->nseg ? &d->segs[d->nseg - 1] : NULL;

	if (!len)
		return MPI_SUCCESS;
	if (last && last->basic == basic && last->disp + (MPI_Aint)last->len == disp) {
		last->len += len;
		return MPI_SUCCESS;
	}
	if (d->nseg == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;

		if (d->nseg >= MBMPI_DT_MAX_RUNS)
			return MPI_ERR_NO_MEM;
		struct mbmpi_seg *s = realloc(d->segs, sizeof(*s) * (size_t)cap);

		if (!s)
			return MPI_ERR_NO_MEM;
		d->segs = s;
		b->cap = cap;
	}
	d->segs[d->nseg++] = (struct mbmpi_seg){.disp = disp, .len = len, .basic = basic};
	return MPI_SUCCESS;
}

static void mbmpi_mark(struct mbmpi_builder *b, bool upper, MPI_Aint at)
{
	if (upper) {
		b->mub = b->has_ub && b->mub > at ? b->mub : at;
		b->has_ub = true;
	} else {
		b->mlb = b->has_lb && b->mlb < at ? b->mlb : at;
		b->has_lb = true;
	}
	b->bounds = true;
}

/* Appends `blocklen` consecutive instances of `old` at byte displacement `disp`. */
static int mbmpi_build_block(struct mbmpi_builder *b, MPI_Aint disp, size_t blocklen,
			     const struct mbmpi_dtype *old)
{
	struct mbmpi_dtype *d = b->d;
	MPI_Aint lb, ub, tlb, tub;
	int ret;

	if (!blocklen)
		return MPI_SUCCESS;
	if (old == &mbmpi_predef_types[MBMPI_DT_LB_MARK] ||
	    old == &mbmpi_predef_types[MBMPI_DT_UB_MARK]) {
		mbmpi_mark(b, old == &mbmpi_predef_types[MBMPI_DT_UB_MARK], disp);
		return MPI_SUCCESS;
	}
	/* Extremes of the first and last instance; extents may be negative. */
	lb = disp + old->lb;
	ub = lb + old->extent;
	tlb = disp + old->true_lb;
	tub = disp + old->true_ub;
	{
		MPI_Aint shift = (MPI_Aint)(blocklen - 1) * old->extent;

		lb = lb < lb + shift ? lb : lb + shift;
		ub = ub > ub + shift ? ub : ub + shift;
		tlb = tlb < tlb + shift ? tlb : tlb + shift;
		tub = tub > tub + shift ? tub : tub + shift;
	}
	/* An explicit bound of the part is a marker of the whole. */
	if (old->flags & MBMPI_DT_HAS_LB)
		mbmpi_mark(b, false, lb);
	if (old->flags & MBMPI_DT_HAS_UB)
		mbmpi_mark(b, true, ub);
	if (b->first) {
		d->lb = lb;
		d->extent = ub; /* holds ub until the end */
		d->true_lb = tlb;
		d->true_ub = tub;
		b->first = false;
	} else {
		d->lb = lb < d->lb ? lb : d->lb;
		d->extent = ub > d->extent ? ub : d->extent;
		d->true_lb = tlb < d->true_lb ? tlb : d->true_lb;
		d->true_ub = tub > d->true_ub ? tub : d->true_ub;
	}
	if (old->align > d->align)
		d->align = old->align;
	if (old->flags & MBMPI_DT_BOUNDS)
		b->bounds = true;
	if (old->size) {
		if (b->base == -1)
			b->base = old->base;
		else if (b->base != old->base)
			b->base = 0;
	}
	d->size += blocklen * old->size;
	d->nelem += blocklen * old->nelem;
	if (b->nosegs)
		return MPI_SUCCESS;
	if (mbmpi_dt_nruns(old) == 1 && old->extent == (MPI_Aint)old->size &&
	    old->segs[0].disp == old->lb)
		return mbmpi_build_seg(b, disp + old->segs[0].disp, blocklen * old->size,
				       old->segs[0].basic);
	if (mbmpi_dt_nruns(old) > MBMPI_DT_MAX_RUNS / blocklen)
		return MPI_ERR_NO_MEM;
	for (size_t j = 0; j < blocklen; j++)
		for (size_t k = 0; k < mbmpi_dt_nruns(old); k++) {
			struct mbmpi_seg g = mbmpi_dt_run(old, k);

			ret = mbmpi_build_seg(b, disp + (MPI_Aint)j * old->extent + g.disp, g.len,
					      g.basic);
			if (ret)
				return ret;
		}
	return MPI_SUCCESS;
}

/* CONTIG: an instance is one run that starts at lb and fills the extent,
 * so count instances are count * size bytes from lb. */
static void mbmpi_set_contig(struct mbmpi_dtype *d)
{
	if (mbmpi_dt_nruns(d) <= 1 && d->extent == (MPI_Aint)d->size &&
	    (!d->nseg || d->segs[0].disp == d->lb))
		d->flags |= MBMPI_DT_CONTIG;
	else
		d->flags &= ~MBMPI_DT_CONTIG;
}

/* ulen and ustep (struct mbmpi_dtype): whether one block's runs are all
 * the same size, evenly spaced. */
static void mbmpi_set_uniform(struct mbmpi_dtype *d)
{
	d->ulen = 0;
	d->ustep = 0;
	if (!d->nseg)
		return;
	for (int s = 1; s < d->nseg; s++)
		if (d->segs[s].len != d->segs[0].len ||
		    d->segs[s].disp - d->segs[s - 1].disp != d->segs[1].disp - d->segs[0].disp)
			return;
	d->ulen = d->segs[0].len;
	d->ustep = d->nseg > 1 ? d->segs[1].disp - d->segs[0].disp : 0;
}

static MPI_Datatype mbmpi_build_end(struct mbmpi_builder *b)
{
	struct mbmpi_dtype *d = b->d;

	if (b->first) {
		d->lb = d->extent = d->true_lb = d->true_ub = 0;
	} else {
		d->extent -= d->lb;
		/* MPI's epsilon: the extent is rounded up to the strictest alignment
		 * of the basic types, so that an array of the type strides as the C
		 * array of the struct it describes does. Explicit bounds win. */
		if (!b->bounds && d->align > 1 && d->extent > 0 && d->extent % d->align)
			d->extent += d->align - d->extent % d->align;
	}
	/* Explicit bounds replace those the data gives. */
	if (b->has_lb || b->has_ub) {
		MPI_Aint ub = d->lb + d->extent;

		if (b->has_lb) {
			d->lb = b->mlb;
			d->flags |= MBMPI_DT_HAS_LB;
		}
		if (b->has_ub) {
			ub = b->mub;
			d->flags |= MBMPI_DT_HAS_UB;
		}
		d->extent = ub - d->lb;
		d->flags |= MBMPI_DT_BOUNDS;
	}
	d->base = b->base > 0 ? b->base : 0;
	mbmpi_set_contig(d);
	mbmpi_set_uniform(d);
	return (MPI_Datatype)d;
}

static void mbmpi_build_abort(struct mbmpi_builder *b)
{
	free(b->d->segs);
	mbmpi_dt_put(b->d);
}

static int mbmpi_check_old(MPI_Datatype old)
{
	struct mbmpi_dtype *d;

	if (old == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	d = mbmpi_dt(old);
	return d->refs > 0 ? MPI_SUCCESS : MPI_ERR_TYPE;
}

/* The constructors differ only in how they place blocks; one helper builds
 * from parallel arrays of byte displacements, block lengths and types. */
static int mbmpi_build(int count, const int *blens, int blen1, const MPI_Aint *bdisp,
		       const MPI_Datatype *types, MPI_Datatype type1, MPI_Datatype *newtype)
{
	struct mbmpi_builder b;
	int ret;

	if (count < 0)
		return MBMPI_ERR(NULL, MPI_ERR_COUNT);
	if (!newtype || (count && !bdisp))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	for (int i = 0; i < count; i++) {
		if ((blens ? blens[i] : blen1) < 0)
			return MBMPI_ERR(NULL, MPI_ERR_ARG);
		if (mbmpi_check_old(types ? types[i] : type1))
			return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	}
	if (mbmpi_build_begin(&b))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	for (int i = 0; i < count; i++) {
		ret = mbmpi_build_block(&b, bdisp[i], (size_t)(blens ? blens[i] : blen1),
					mbmpi_dt(types ? types[i] : type1));
		if (ret) {
			mbmpi_build_abort(&b);
			return MBMPI_ERR(NULL, ret);
		}
	}
	*newtype = mbmpi_build_end(&b);
	return MPI_SUCCESS;
}

static MPI_Aint *mbmpi_disps(int count)
{
	return malloc(sizeof(MPI_Aint) * (size_t)(count > 0 ? count : 1));
}

/* count blocks of blen olds, stride bytes apart, kept as the first block's
 * runs repeated: the last block, built without runs, gives the bounds (they
 * are extremes of the first and the last, whatever the stride's sign). */
static int mbmpi_build_repeat(struct mbmpi_builder *b, int count, int blen, MPI_Aint stride,
			      const struct mbmpi_dtype *old)
{
	struct mbmpi_dtype *d = b->d;
	size_t size1, nelem1;
	int ret = mbmpi_build_block(b, 0, (size_t)blen, old);

	if (ret)
		return ret;
	size1 = d->size;
	nelem1 = d->nelem;
	b->nosegs = true;
	ret = mbmpi_build_block(b, (MPI_Aint)(count - 1) * stride, (size_t)blen, old);
	b->nosegs = false;
	d->size = size1 * (size_t)count;
	d->nelem = nelem1 * (size_t)count;
	d->nrep = (size_t)count;
	d->rstride = stride;
	return ret;
}

static int mbmpi_hvector(int count, int blen, MPI_Aint stride_bytes, MPI_Datatype old,
			 MPI_Datatype *newtype)
{
	struct mbmpi_builder b;
	const struct mbmpi_dtype *o;
	size_t block_runs;
	int ret = MPI_SUCCESS;

	if (count < 0)
		return MBMPI_ERR(NULL, MPI_ERR_COUNT);
	if (!newtype || blen < 0)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (mbmpi_check_old(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	o = mbmpi_dt(old);
	if (mbmpi_build_begin(&b))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	block_runs = mbmpi_dt_contig(o) ? 1 : (size_t)blen * mbmpi_dt_nruns(o);
	if (count > 1 && blen && o->size && o->nrep <= 1 &&
	    (size_t)count * block_runs > MBMPI_DT_REPEAT_RUNS) {
		/* Blocks that touch make one run, however many. */
		if (block_runs == 1 && stride_bytes == (MPI_Aint)blen * o->extent)
			ret = mbmpi_build_block(&b, 0, (size_t)count * (size_t)blen, o);
		else
			ret = mbmpi_build_repeat(&b, count, blen, stride_bytes, o);
	} else {
		for (int i = 0; i < count && !ret; i++)
			ret = mbmpi_build_block(&b, (MPI_Aint)i * stride_bytes, (size_t)blen, o);
	}
	if (ret) {
		mbmpi_build_abort(&b);
		return MBMPI_ERR(NULL, ret);
	}
	*newtype = mbmpi_build_end(&b);
	return MPI_SUCCESS;
}

/* The layout of a vector of count single instances, one extent apart. */
int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret;

	if (count < 0)
		return MBMPI_ERR(NULL, MPI_ERR_COUNT);
	if (mbmpi_check_old(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if ((ret = mbmpi_hvector(count, 1, mbmpi_dt(old)->extent, old, newtype)))
		return ret;
	return mbmpi_dt_record(newtype, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old);
}
MBMPI_ALIAS(Type_contiguous)

int PMPI_Type_vector(int count, int blen, int stride, MPI_Datatype old, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret, ints[3] = {count, blen, stride};

	if (mbmpi_check_old(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if ((ret = mbmpi_hvector(count, blen, (MPI_Aint)stride * mbmpi_dt(old)->extent, old, newtype)))
		return ret;
	return mbmpi_dt_record(newtype, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &old);
}
MBMPI_ALIAS(Type_vector)

int PMPI_Type_create_hvector(int count, int blen, MPI_Aint stride, MPI_Datatype old,
			     MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret, ints[2] = {count, blen};

	if ((ret = mbmpi_hvector(count, blen, stride, old, newtype)))
		return ret;
	return mbmpi_dt_record(newtype, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &old);
}
MBMPI_ALIAS(Type_create_hvector)

static int mbmpi_indexed(int count, const int *blens, int blen1, const int *idisp,
			 const MPI_Aint *bdisp, MPI_Datatype old, MPI_Datatype *newtype)
{
	MPI_Aint *d;
	int ret;

	if (count < 0)
		return MBMPI_ERR(NULL, MPI_ERR_COUNT);
	if (mbmpi_check_old(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (count && ((!blens && blen1 < 0) || (!idisp && !bdisp)))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	d = mbmpi_disps(count);
	if (!d)
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	for (int i = 0; i < count; i++)
		d[i] = idisp ? (MPI_Aint)idisp[i] * mbmpi_dt(old)->extent : bdisp[i];
	ret = mbmpi_build(count, blens, blen1, d, NULL, old, newtype);
	free(d);
	return ret;
}

/* Indexed constructors record count, the block lengths (or the one
 * length) and the displacements, integers or bytes. */
static int mbmpi_dt_record_idx(MPI_Datatype *t, int comb, int count, const int *blens,
			       const int *idisp, const MPI_Aint *adisp, MPI_Datatype old)
{
	bool one = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
	int nb = one ? 1 : count, ni = 1 + nb + (idisp ? count : 0);
	int *ints = malloc(sizeof(int) * (size_t)ni), ret;

	if (!ints) {
		mbmpi_dt_release(mbmpi_dt(*t));
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	}
	ints[0] = count;
	if (nb)
		memcpy(ints + 1, blens, sizeof(int) * (size_t)nb);
	if (idisp && count)
		memcpy(ints + 1 + nb, idisp, sizeof(int) * (size_t)count);
	ret = mbmpi_dt_record(t, comb, ni, ints, adisp ? count : 0, adisp, 1, &old);
	free(ints);
	return ret;
}

int PMPI_Type_indexed(int count, const int blens[], const int displs[], MPI_Datatype old,
		      MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret;

	if (count > 0 && !blens)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if ((ret = mbmpi_indexed(count, blens, 0, displs, NULL, old, newtype)))
		return ret;
	return mbmpi_dt_record_idx(newtype, MPI_COMBINER_INDEXED, count, blens, displs, NULL, old);
}
MBMPI_ALIAS(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int blens[], const MPI_Aint displs[],
			      MPI_Datatype old, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret;

	if (count > 0 && !blens)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if ((ret = mbmpi_indexed(count, blens, 0, NULL, displs, old, newtype)))
		return ret;
	return mbmpi_dt_record_idx(newtype, MPI_COMBINER_HINDEXED, count, blens, NULL, displs, old);
}
MBMPI_ALIAS(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blen, const int displs[], MPI_Datatype old,
				   MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret = mbmpi_indexed(count, NULL, blen, displs, NULL, old, newtype);

	if (ret)
		return ret;
	return mbmpi_dt_record_idx(newtype, MPI_COMBINER_INDEXED_BLOCK, count, &blen, displs, NULL,
				   old);
}
MBMPI_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blen, const MPI_Aint displs[], MPI_Datatype old,
				    MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret = mbmpi_indexed(count, NULL, blen, NULL, displs, old, newtype);

	if (ret)
		return ret;
	return mbmpi_dt_record_idx(newtype, MPI_COMBINER_HINDEXED_BLOCK, count, &blen, NULL, displs,
				   old);
}
MBMPI_ALIAS(Type_create_hindexed_block)

int PMPI_Type_create_struct(int count, const int blens[], const MPI_Aint displs[],
			    const MPI_Datatype types[], MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	int ret, *ints;

	if (count > 0 && (!blens || !types))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if ((ret = mbmpi_build(count, blens, 0, displs, types, MPI_DATATYPE_NULL, newtype)))
		return ret;
	if (!(ints = malloc(sizeof(int) * (size_t)(count + 1)))) {
		mbmpi_dt_release(mbmpi_dt(*newtype));
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	}
	ints[0] = count;
	if (count)
		memcpy(ints + 1, blens, sizeof(int) * (size_t)count);
	ret = mbmpi_dt_record(newtype, MPI_COMBINER_STRUCT, count + 1, ints, count, displs, count, types);
	free(ints);
	return ret;
}
MBMPI_ALIAS(Type_create_struct)

static int mbmpi_copy_type(MPI_Datatype old, MPI_Datatype *newtype, struct mbmpi_dtype **out)
{
	struct mbmpi_dtype *o, *d;

	if (mbmpi_check_old(old))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!newtype)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	o = mbmpi_dt(old);
	d = mbmpi_dt_new();
	if (!d)
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	*d = *o;
	d->segs = malloc(sizeof(*d->segs) * (size_t)(o->nseg ? o->nseg : 1));
	if (!d->segs) {
		mbmpi_dt_put(d);
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	}
	memcpy(d->segs, o->segs, sizeof(*d->segs) * (size_t)o->nseg);
	d->refs = 1;
	d->attrs = NULL;
	d->args = NULL;
	d->flags &= ~(MBMPI_DT_PREDEF | MBMPI_DT_COMMITTED);
	d->name[0] = 0;
	*out = d;
	*newtype = (MPI_Datatype)d;
	return MPI_SUCCESS;
}

int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret = mbmpi_copy_type(old, newtype, &d);

	if (ret)
		return ret;
	d->lb = lb;
	d->extent = extent;
	d->flags |= MBMPI_DT_BOUNDS | MBMPI_DT_HAS_LB | MBMPI_DT_HAS_UB;
	mbmpi_set_contig(d);
	{
		MPI_Aint a[2] = {lb, extent};

		return mbmpi_dt_record(newtype, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old);
	}
}
MBMPI_ALIAS(Type_create_resized)

int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;
	int ret = mbmpi_copy_type(old, newtype, &d);

	if (ret)
		return ret;
	d->flags |= mbmpi_dt(old)->flags & MBMPI_DT_COMMITTED;
	if (mbmpi_dt(old)->flags & MBMPI_DT_PREDEF)
		d->flags |= MBMPI_DT_COMMITTED;
	if ((ret = mbmpi_dt_record(newtype, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old)))
		return ret;
	if ((ret = mbmpi_attr_copy(MBMPI_KV_TYPE, old, mbmpi_dt(old)->attrs, *newtype, &d->attrs))) {
		mbmpi_dt_release(d);
		*newtype = MPI_DATATYPE_NULL;
		return MBMPI_ERR(NULL, ret);
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_dup)

int PMPI_Type_commit(MPI_Datatype *dt)
{
	MBMPI_GUARD();
	if (!dt || mbmpi_check_old(*dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	mbmpi_dt(*dt)->flags |= MBMPI_DT_COMMITTED;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype *dt)
{
	MBMPI_GUARD();
	int ret;

	if (!dt || mbmpi_check_old(*dt) || (mbmpi_dt(*dt)->flags & MBMPI_DT_PREDEF))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if ((ret = mbmpi_attr_clear(MBMPI_KV_TYPE, *dt, &mbmpi_dt(*dt)->attrs)))
		return MBMPI_ERR(NULL, ret);
	mbmpi_dt_release(mbmpi_dt(*dt));
	*dt = MPI_DATATYPE_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_free)

int PMPI_Type_get_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
	MBMPI_GUARD();
	if (mbmpi_check_old(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!lb || !extent)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*lb = mbmpi_dt(dt)->lb;
	*extent = mbmpi_dt(dt)->extent;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_get_extent)

int PMPI_Type_get_true_extent(MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent)
{
	MBMPI_GUARD();
	if (mbmpi_check_old(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!lb || !extent)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*lb = mbmpi_dt(dt)->true_lb;
	*extent = mbmpi_dt(dt)->true_ub - mbmpi_dt(dt)->true_lb;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_get_true_extent)

int PMPI_Type_size_x(MPI_Datatype dt, MPI_Count *size)
{
	MBMPI_GUARD();
	if (mbmpi_check_old(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!size)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*size = (MPI_Count)mbmpi_dt(dt)->size;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_size_x)

int PMPI_Type_size(MPI_Datatype dt, int *size)
{
	MBMPI_GUARD();
	MPI_Count n;
	int ret = PMPI_Type_size_x(dt, &n);

	if (!ret && size)
		*size = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
	return ret;
}
MBMPI_ALIAS(Type_size)

int PMPI_Type_set_name(MPI_Datatype dt, const char *name)
{
	MBMPI_GUARD();
	if (mbmpi_check_old(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!name)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	snprintf(mbmpi_dt(dt)->name, MPI_MAX_OBJECT_NAME, "%s", name);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype dt, char *name, int *len)
{
	MBMPI_GUARD();
	if (mbmpi_check_old(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	if (!name || !len)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*len = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", mbmpi_dt(dt)->name);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Type_get_name)

/* Pack and Unpack check the same things: `bufsize` bytes at `buf`, of which
 * `count` instances of `dt` need room from *pos on. */
static int mbmpi_pack_args(MPI_Comm comm, int count, MPI_Datatype dt, const void *buf,
			   int bufsize, const int *pos, struct mbmpi_comm **c, size_t *need)
{
	int ret;

	if ((ret = mbmpi_check_comm(comm, c)))
		return MBMPI_ERR(NULL, ret);
	if (count < 0)
		return MBMPI_ERR(*c, MPI_ERR_COUNT);
	if (mbmpi_dt_check(dt))
		return MBMPI_ERR(*c, MPI_ERR_TYPE);
	if (!pos || *pos < 0 || bufsize < 0 || (!buf && bufsize))
		return MBMPI_ERR(*c, MPI_ERR_ARG);
	*need = (size_t)count * mbmpi_dt(dt)->size;
	if ((size_t)*pos + *need > (size_t)bufsize)
		return MBMPI_ERR(*c, MPI_ERR_TRUNCATE);
	return MPI_SUCCESS;
}

int PMPI_Pack(const void *in, int incount, MPI_Datatype dt, void *out, int outsize, int *pos,
	      MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	size_t need;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_pack_args(comm, incount, dt, out, outsize, pos, &c, &need)))
		return ret;
	mbmpi_pack(in, (size_t)incount, mbmpi_dt(dt), (char *)out + *pos);
	*pos += (int)need;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Pack)

int PMPI_Unpack(const void *in, int insize, int *pos, void *out, int outcount, MPI_Datatype dt,
		MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	size_t need;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_pack_args(comm, outcount, dt, in, insize, pos, &c, &need)))
		return ret;
	mbmpi_unpack((const char *)in + *pos, need, out, (size_t)outcount, mbmpi_dt(dt));
	*pos += (int)need;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Unpack)

int PMPI_Pack_size(int incount, MPI_Datatype dt, MPI_Comm comm, int *size)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (incount < 0)
		return MBMPI_ERR(c, MPI_ERR_COUNT);
	if (mbmpi_dt_check(dt))
		return MBMPI_ERR(c, MPI_ERR_TYPE);
	if (!size)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	*size = (int)((size_t)incount * mbmpi_dt(dt)->size);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Pack_size)
