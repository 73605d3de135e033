/*
 * One-sided communication (MPI-3 RMA) over the provider's own RMA and
 * atomics: a window registers its memory with the engine and every rank
 * learns every other's address, key, size and displacement unit; MPI_Put and
 * MPI_Get become fi_write and fi_read, the accumulates fi_atomic,
 * fi_fetch_atomic and fi_compare_atomic, so one place (the target's
 * provider) applies every accumulate to a location and they are atomic with
 * each other. Derived datatypes on either side are walked together into
 * runs contiguous on both. An operation is counted against its target until
 * the provider reports it complete, which for these providers means done at
 * the target: flush, unlock, complete and fence wait for those counts.
 * Passive-target locks live in a word per rank of a small registered control
 * block, taken with remote atomics (compare-and-swap for exclusive, fetch-add
 * for shared), so a lock needs no help from the target's CPU beyond its
 * provider. Fence is flush plus barrier; post/start/complete/wait are zero-
 * byte messages on the window's own communicator.
 *
 * Windows whose ranks are all on one node and whose memory the library
 * allocates (MPI_Win_allocate, MPI_Win_allocate_shared) live in one shared
 * segment mapped by every rank, as Open MPI's osc/sm does: puts and gets
 * are copies made by the origin, and accumulates are processor atomics on
 * the target's element (a compare-and-swap loop for each of 1 to 8 bytes),
 * so every accumulate on such a window goes the same way and stays atomic
 * with the others. Wider elements (long double, complex) still go to the
 * provider, for every rank alike.
 *
 * Dynamic windows (MPI_Win_create_dynamic): each rank's window memory is a
 * small registered directory of the regions it has attached (address, size,
 * and the remote address and key its registration gave). An origin reads a
 * target's directory with one fi_read the first time it addresses memory
 * the copy it holds does not cover, and forgets its copies at every
 * synchronization call (fence, lock, lock_all, start, sync), so a region
 * attached and announced by the program is found, and one detached and
 * attached again is read afresh at the next synchronization.
 */
#include "mbmpi.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/fi_atomic.h>

#define LOCK_EXCL (1ull << 62)
#define T_POST 1
#define T_DONE 2

struct win_peer {
	uint64_t raddr, key;      /* the window's memory */
	uint64_t craddr, ckey;    /* the control block (lock word) */
	MPI_Aint size;
	int disp_unit;
	int pad;
};

/* One attached region of a dynamic window, as its directory holds it. A
 * free slot has size 0; size is written last when a slot is filled. */
struct dyn_ent {
	uint64_t size, base, raddr, key;
};

#define DYN_MAX 64

struct mbmpi_win {
	int magic;
	struct mbmpi_comm *comm;      /* a private duplicate: its own context */
	void *base;
	MPI_Aint size;
	int disp_unit, flavor, model;
	bool allocated;
	void *mr, *cmr;
	uint64_t *ctl;                /* [0]: this rank's lock word */
	struct win_peer *peer;
	struct mbmpi_rma_count *cnt;  /* per target */
	char *locked;                 /* per target: 0, 'S', 'X' or 'N' (no check) */
	char **direct;                /* shared segment: every rank's memory, or NULL */
	MPI_Aint *dsize;
	void *seg;
	size_t seg_len;
	uint64_t *dctl;               /* shared segment: lock words, 64 bytes apart */
	bool lock_all, fence_open;
	int *start_ranks, nstart;     /* access epoch of PSCW */
	struct dyn_ent *dir;          /* dynamic: my attached regions (registered) */
	void **dir_mr;                /* dynamic: their registrations */
	struct dyn_ent **dcache;      /* dynamic: targets' directories as last read */
	struct mbmpi_req **post_reqs; /* exposure epoch: the origins' completions */
	int npost;
	char name[MPI_MAX_OBJECT_NAME];
};

#define WIN_MAGIC 0x57494e21

static int win_check(MPI_Win h, struct mbmpi_win **out)
{
	struct mbmpi_win *w = (struct mbmpi_win *)h;

	if (!w || w->magic != WIN_MAGIC)
		return MPI_ERR_WIN;
	*out = w;
	return MPI_SUCCESS;
}

#define WIN_BEGIN(h, w)                                  \
	int ret;                                         \
	MBMPI_CHECK_INIT();                              \
	if ((ret = win_check(h, &w)))                    \
		return MBMPI_ERR(NULL, ret);

#define WIN_RET(w, ret) return (ret) ? MBMPI_ERR((w)->comm, ret) : MPI_SUCCESS

/* ---- Completion ---- */

/* Waits until nothing is outstanding toward target t (every target when
 * t < 0); returns the first error any of those operations met. */
static int win_flush(struct mbmpi_win *w, int t)
{
	int spins = 0, err = MPI_SUCCESS;
	int lo = t < 0 ? 0 : t, hi = t < 0 ? w->comm->size : t + 1;

	for (int i = lo; i < hi; i++) {
		while (w->cnt[i].pending)
			if (!mbmpi_poll())
				mbmpi_idle(&spins);
		if (w->cnt[i].err && !err)
			err = w->cnt[i].err;
		w->cnt[i].err = 0;
	}
	return err;
}

/* One request per MPI call; every fabric operation of the call hangs on it,
 * and it is counted once against its target. */
static struct mbmpi_req *win_req(struct mbmpi_win *w, int t, bool user)
{
	struct mbmpi_req *r = mbmpi_req_alloc();

	if (!r)
		return NULL;
	r->kind = MBMPI_REQ_RMA;
	r->comm = w->comm;
	mbmpi_comm_retain(r->comm);
	r->internal = !user;
	r->peer = t;
	r->rma_cnt = &w->cnt[t];
	mbmpi_status_empty(&r->status);
	w->cnt[t].pending++;
	r->outstanding = 1; /* held until every piece is posted */
	return r;
}

static void win_req_posted(struct mbmpi_req *r, int err)
{
	if (err && !r->err)
		r->err = err;
	if (--r->outstanding == 0)
		mbmpi_req_done(r);
}

/* ---- Datatype walking ---- */

/* Runs of one side's bytes, in typemap order; s counts the runs of one
 * instance (a repeated block's copies included). */
struct walk {
	const struct mbmpi_dtype *d;
	size_t count, i;
	size_t s, nruns;
	size_t off;
};

static void walk_init(struct walk *k, const struct mbmpi_dtype *d, size_t count)
{
	*k = (struct walk){ .d = d, .count = count, .nruns = mbmpi_dt_nruns(d) };
	if (!k->nruns)
		k->i = k->count;
}

static void walk_skip(struct walk *k, size_t n);

/* The next run: as many adjacent segments (and instances) as follow one
 * another in memory, so a contiguous buffer is one run, not one per
 * element. */
static size_t walk_run(const struct walk *k, MPI_Aint *disp)
{
	const struct mbmpi_dtype *d = k->d;
	struct mbmpi_seg g;
	struct walk t;
	size_t len;

	if (k->i >= k->count)
		return 0;
	g = mbmpi_dt_run(d, k->s);
	*disp = (MPI_Aint)k->i * d->extent + g.disp + (MPI_Aint)k->off;
	if (k->nruns == 1 && d->extent == (MPI_Aint)g.len)
		return (k->count - k->i) * g.len - k->off;
	len = g.len - k->off;
	t = *k;
	walk_skip(&t, len);
	while (t.i < t.count && len < ((size_t)1 << 30)) {
		g = mbmpi_dt_run(d, t.s);
		if ((MPI_Aint)t.i * d->extent + g.disp != *disp + (MPI_Aint)len)
			break;
		len += g.len;
		walk_skip(&t, g.len);
	}
	return len;
}

static void walk_skip(struct walk *k, size_t n)
{
	const struct mbmpi_dtype *d = k->d;

	/* Whole instances at once where the type is one segment. */
	if (k->nruns == 1 && k->i < k->count) {
		size_t at = k->off + n;

		k->i += at / d->segs[0].len;
		k->off = at % d->segs[0].len;
		if (k->i >= k->count)
			k->off = 0;
		return;
	}
	k->off += n;
	while (k->i < k->count) {
		size_t len = mbmpi_dt_run(d, k->s).len;

		if (k->off < len)
			break;
		k->off -= len;
		if (++k->s == k->nruns) {
			k->s = 0;
			k->i++;
		}
	}
}

/* ---- MPI to libfabric names ---- */

static int fab_type(const struct mbmpi_dtype *d, size_t *size)
{
	static const signed char map[MBMPI_NUM_PREDEF_TYPES] = {
		[1] = FI_INT8, [2] = FI_INT8, [3] = FI_UINT8, [4] = FI_UINT8, [5] = FI_INT32,
		[6] = FI_INT16, [7] = FI_UINT16, [8] = FI_INT32, [9] = FI_UINT32,
		[10] = FI_INT64, [11] = FI_UINT64, [12] = FI_INT64, [13] = FI_UINT64,
		[14] = FI_FLOAT, [15] = FI_DOUBLE, [16] = FI_LONG_DOUBLE,
		[17] = FI_INT8, [18] = FI_INT16, [19] = FI_INT32, [20] = FI_INT64,
		[21] = FI_UINT8, [22] = FI_UINT16, [23] = FI_UINT32, [24] = FI_UINT64,
		[25] = FI_UINT8, [26] = FI_FLOAT_COMPLEX, [27] = FI_DOUBLE_COMPLEX,
		[28] = FI_LONG_DOUBLE_COMPLEX, [29] = FI_INT64, [30] = FI_INT64, [31] = FI_INT64,
	};
	int b = d->base;

	if (b <= 0 || b >= MBMPI_NUM_PREDEF_TYPES || (!map[b] && b != 1 && b != 2))
		return -1;
	*size = mbmpi_predef_types[b].size;
	/* wchar_t, long and the address types by their real width. */
	if (map[b] == FI_INT32 && *size == 8)
		return FI_INT64;
	if (map[b] == FI_INT64 && *size == 4)
		return FI_INT32;
	if (map[b] == FI_UINT64 && *size == 4)
		return FI_UINT32;
	return map[b];
}

static int fab_op(MPI_Op op)
{
	switch ((uintptr_t)op) {
	case (uintptr_t)MPI_MAX: return FI_MAX;
	case (uintptr_t)MPI_MIN: return FI_MIN;
	case (uintptr_t)MPI_SUM: return FI_SUM;
	case (uintptr_t)MPI_PROD: return FI_PROD;
	case (uintptr_t)MPI_LAND: return FI_LAND;
	case (uintptr_t)MPI_BAND: return FI_BAND;
	case (uintptr_t)MPI_LOR: return FI_LOR;
	case (uintptr_t)MPI_BOR: return FI_BOR;
	case (uintptr_t)MPI_LXOR: return FI_LXOR;
	case (uintptr_t)MPI_BXOR: return FI_BXOR;
	case (uintptr_t)MPI_REPLACE: return FI_ATOMIC_WRITE;
	case (uintptr_t)MPI_NO_OP: return FI_ATOMIC_READ;
	default: return -1;
	}
}

/* ---- Transfers ---- */

static bool win_access(const struct mbmpi_win *w, int t)
{
	if (w->fence_open || w->lock_all || w->locked[t])
		return true;
	for (int i = 0; i < w->nstart; i++)
		if (w->start_ranks[i] == t)
			return true;
	return false;
}

struct xfer {
	int kind;                     /* MBMPI_RMA_* */
	void *obuf;                   /* origin */
	size_t ocount;
	struct mbmpi_dtype *od;
	void *rbuf;                   /* result (get-accumulate, fetch, cswap) */
	size_t rcount;
	struct mbmpi_dtype *rd;
	const void *cmp;
	int t;
	MPI_Aint disp;
	size_t tcount;
	struct mbmpi_dtype *td;
	MPI_Datatype th;              /* td's handle (accumulates) */
	MPI_Op op;
	bool dyn;                     /* dynamic window: rbase and rkey resolved */
	uint64_t rbase, rkey;         /* remote address of disp, and its key */
};

static int win_check_xfer(struct mbmpi_win *w, const struct xfer *x)
{
	const struct win_peer *p;
	MPI_Aint lo, hi;

	if (x->t < 0 || x->t >= w->comm->size)
		return MPI_ERR_RANK;
	if (!win_access(w, x->t))
		return MPI_ERR_RMA_SYNC;
	if (x->disp < 0)
		return MPI_ERR_DISP;
	if (x->od && x->od->size * x->ocount != x->td->size * x->tcount)
		return MPI_ERR_TYPE;
	if (x->rd && x->rd->size * x->rcount != x->td->size * x->tcount)
		return MPI_ERR_TYPE;
	if (!x->tcount || !x->td->size || w->dir)
		return MPI_SUCCESS;	/* a dynamic window's regions are checked when resolved */
	p = &w->peer[x->t];
	lo = x->disp * p->disp_unit + x->td->true_lb;
	hi = x->disp * p->disp_unit + (MPI_Aint)(x->tcount - 1) * x->td->extent + x->td->true_ub;
	if (lo < 0 || hi > p->size)
		return MPI_ERR_RMA_RANGE;
	return MPI_SUCCESS;
}

/* Posts the pieces of one call on request r: runs contiguous in origin,
 * result and target alike; atomics also cut at the provider's limit. */
static int win_post(struct mbmpi_win *w, const struct xfer *x, struct mbmpi_req *r)
{
	const struct win_peer *p = &w->peer[x->t];
	struct walk ow, rw, tw;
	size_t esize = 1, emax = SIZE_MAX;
	int fdt = 0, fop = 0;

	if (x->kind != MBMPI_RMA_PUT && x->kind != MBMPI_RMA_GET) {
		if ((fdt = fab_type(x->td, &esize)) < 0 || (x->od && x->od->base != x->td->base) ||
		    (x->rd && x->rd->base != x->td->base))
			return MPI_ERR_TYPE;
		fop = x->kind == MBMPI_RMA_CSWAP ? FI_CSWAP : fab_op(x->op);
		if (fop < 0)
			return mbmpi_op(x->op)->predef ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_OP;
		emax = mbmpi.eng->atomic_max ? mbmpi.eng->atomic_max(x->kind, fdt, fop) : 0;
		if (!emax)
			return MPI_ERR_UNSUPPORTED_OPERATION;
	}
	if (x->od)
		walk_init(&ow, x->od, x->ocount);
	if (x->rd)
		walk_init(&rw, x->rd, x->rcount);
	walk_init(&tw, x->td, x->tcount);
	for (;;) {
		MPI_Aint od = 0, rd = 0, td;
		size_t n = walk_run(&tw, &td), m;
		struct mbmpi_rma op = { .kind = x->kind, .addr = w->comm->addr[x->t],
					.key = x->dyn ? x->rkey : p->key };
		int ret;

		if (!n)
			return MPI_SUCCESS;
		if (x->od && (m = walk_run(&ow, &od)) < n)
			n = m;
		if (x->rd && (m = walk_run(&rw, &rd)) < n)
			n = m;
		if (x->kind != MBMPI_RMA_PUT && x->kind != MBMPI_RMA_GET) {
			n -= n % esize;
			if (!n)
				return MPI_ERR_TYPE;
			if (n / esize > emax)
				n = emax * esize;
			op.len = n / esize;
			op.fdt = fdt;
			op.fop = fop;
		} else {
			op.len = n;
		}
		op.buf = x->od ? (char *)x->obuf + od : NULL;
		op.result = x->rd ? (char *)x->rbuf + rd : NULL;
		if (x->kind == MBMPI_RMA_GET)
			op.buf = (char *)x->rbuf + rd;
		if (x->kind == MBMPI_RMA_FETCH && !op.buf)
			op.buf = op.result; /* a read carries no operand */
		op.compare = x->cmp;
		op.raddr = x->dyn ? x->rbase + (uint64_t)td
				  : p->raddr + (uint64_t)(x->disp * p->disp_unit + td);
		if ((ret = mbmpi.eng->rma(r, &op)))
			return ret;
		if (x->od)
			walk_skip(&ow, n);
		if (x->rd)
			walk_skip(&rw, n);
		walk_skip(&tw, n);
	}
}


/* ---- Direct access to a shared segment ---- */

#define CAS_AS(T, t, ob, nb)                                                                  \
	do {                                                                                  \
		T o_, n_;                                                                     \
		memcpy(&o_, ob, sizeof(T));                                                   \
		memcpy(&n_, nb, sizeof(T));                                                   \
		return __atomic_compare_exchange_n((T *)(t), &o_, n_, false, __ATOMIC_ACQ_REL, \
						   __ATOMIC_ACQUIRE);                         \
	} while (0)

#define LOAD_AS(T, t, ob)                                                \
	do {                                                             \
		T v_ = __atomic_load_n((const T *)(t), __ATOMIC_ACQUIRE); \
		memcpy(ob, &v_, sizeof(T));                              \
		return;                                                  \
	} while (0)

static void load_bytes(const void *t, unsigned char *ob, size_t es)
{
	switch (es) {
	case 1: LOAD_AS(uint8_t, t, ob);
	case 2: LOAD_AS(uint16_t, t, ob);
	case 4: LOAD_AS(uint32_t, t, ob);
	default: LOAD_AS(uint64_t, t, ob);
	}
}

static bool cas_bytes(void *t, const unsigned char *ob, const unsigned char *nb, size_t es)
{
	switch (es) {
	case 1: CAS_AS(uint8_t, t, ob, nb);
	case 2: CAS_AS(uint16_t, t, ob, nb);
	case 4: CAS_AS(uint32_t, t, ob, nb);
	default: CAS_AS(uint64_t, t, ob, nb);
	}
}

#define ADD_AS(T, t, operand, result)                                           \
	do {                                                                    \
		T a_, o_;                                                       \
		memcpy(&a_, operand, sizeof(T));                                \
		o_ = __atomic_fetch_add((T *)(t), a_, __ATOMIC_ACQ_REL);        \
		if (result)                                                     \
			memcpy(result, &o_, sizeof(T));                         \
		return;                                                         \
	} while (0)

/* One element of es bytes (1, 2, 4 or 8, aligned): its old value to
 * *result (if any), the new one computed from it and swapped in only if
 * nobody changed the element meanwhile. An integer sum (iadd) is the
 * processor's fetch-and-add instead: the same result in one instruction,
 * without the loop or the operation's dispatch. */
static void direct_elem(void *t, const void *operand, void *result, const void *cmp, size_t es,
			MPI_Op op, MPI_Datatype bt, int kind, bool iadd)
{
	unsigned char ob[8], nb[8];

	if (iadd) {
		switch (es) {
		case 1: ADD_AS(uint8_t, t, operand, result);
		case 2: ADD_AS(uint16_t, t, operand, result);
		case 4: ADD_AS(uint32_t, t, operand, result);
		default: ADD_AS(uint64_t, t, operand, result);
		}
	}
	do {
		load_bytes(t, ob, es);
		if (result)
			memcpy(result, ob, es);
		if (kind == MBMPI_RMA_CSWAP) {
			if (memcmp(ob, cmp, es))
				return;
			memcpy(nb, operand, es);
		} else if (op == MPI_NO_OP) {
			return;
		} else if (op == MPI_REPLACE) {
			memcpy(nb, operand, es);
		} else {
			memcpy(nb, ob, es);
			mbmpi_op_apply(op, operand, nb, 1, bt);
		}
	} while (!cas_bytes(t, ob, nb, es));
}

/* Whether this transfer is done by the origin's processor. */
static bool direct_ok(const struct mbmpi_win *w, const struct xfer *x)
{
	size_t es;

	if (!w->direct)
		return false;
	if (x->kind == MBMPI_RMA_PUT || x->kind == MBMPI_RMA_GET)
		return true;
	/* The choice depends on the type alone, so all ranks make the same. */
	return fab_type(x->td, &es) >= 0 && es <= 8 && (es & (es - 1)) == 0;
}

/* One run of a direct transfer: n bytes at t in the target, src in the
 * origin, res in the result buffer (either may be NULL); for atomics n is a
 * multiple of the element size es. */
static inline void direct_piece(const struct xfer *x, char *t, const char *src, char *res, size_t n,
				size_t es, MPI_Datatype bt, bool iadd)
{
	if (x->kind == MBMPI_RMA_PUT) {
		memcpy(t, src, n);
	} else if (x->kind == MBMPI_RMA_GET) {
		memcpy(res, t, n);
	} else {
		for (size_t k = 0; k < n; k += es)
			direct_elem(t + k, src ? src + k : NULL, res ? res + k : NULL, x->cmp, es,
				    x->op, bt, x->kind, iadd);
	}
}

static int win_direct(struct mbmpi_win *w, const struct xfer *x)
{
	char *tbase;
	struct walk ow, rw, tw;
	size_t es = 1;
	MPI_Datatype bt = MPI_DATATYPE_NULL;
	bool iadd = false;

	if (x->kind != MBMPI_RMA_PUT && x->kind != MBMPI_RMA_GET) {
		int fdt = fab_type(x->td, &es);

		if (fdt < 0 || (x->od && x->od->base != x->td->base) ||
		    (x->rd && x->rd->base != x->td->base))
			return MPI_ERR_TYPE;
		if (x->kind != MBMPI_RMA_CSWAP && fab_op(x->op) < 0)
			return mbmpi_op(x->op)->predef ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_OP;
		bt = (MPI_Datatype)(uintptr_t)x->td->base;
		iadd = x->kind != MBMPI_RMA_CSWAP && x->op == MPI_SUM && fdt >= FI_INT8 &&
		       fdt <= FI_UINT64;
	}
	if (!x->tcount || !x->td->size)
		return MPI_SUCCESS;
	tbase = w->direct[x->t] + x->disp * w->peer[x->t].disp_unit;
	/* Contiguous on every side, the common case of a latency-bound call:
	 * one piece, without the walkers' bookkeeping (about half the
	 * instructions of a put and its flush). win_check_xfer made the sizes
	 * equal. */
	if (mbmpi_dt_contig(x->td) && (!x->od || mbmpi_dt_contig(x->od)) &&
	    (!x->rd || mbmpi_dt_contig(x->rd))) {
		size_t n = x->tcount * x->td->size;

		if (n % es)
			return MPI_ERR_TYPE;
		direct_piece(x, tbase + x->td->segs[0].disp,
			     x->od ? (char *)x->obuf + x->od->segs[0].disp : NULL,
			     x->rd ? (char *)x->rbuf + x->rd->segs[0].disp : NULL, n, es, bt, iadd);
		goto done;
	}
	if (x->od)
		walk_init(&ow, x->od, x->ocount);
	if (x->rd)
		walk_init(&rw, x->rd, x->rcount);
	walk_init(&tw, x->td, x->tcount);
	for (;;) {
		MPI_Aint od = 0, rd = 0, td;
		size_t n = walk_run(&tw, &td), m;

		if (!n)
			break;
		if (x->od && (m = walk_run(&ow, &od)) < n)
			n = m;
		if (x->rd && (m = walk_run(&rw, &rd)) < n)
			n = m;
		n -= n % es;
		if (!n)
			return MPI_ERR_TYPE;
		direct_piece(x, tbase + td, x->od ? (char *)x->obuf + od : NULL,
			     x->rd ? (char *)x->rbuf + rd : NULL, n, es, bt, iadd);
		if (x->od)
			walk_skip(&ow, n);
		if (x->rd)
			walk_skip(&rw, n);
		walk_skip(&tw, n);
	}
done:
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return MPI_SUCCESS;
}

/* ---- Dynamic windows ---- */

static const struct dyn_ent *dyn_find(const struct dyn_ent *d, uint64_t lo, uint64_t hi)
{
	for (int i = 0; d && i < DYN_MAX; i++) {
		uint64_t size = __atomic_load_n(&d[i].size, __ATOMIC_ACQUIRE);

		if (size && lo >= d[i].base && hi <= d[i].base + size)
			return &d[i];
	}
	return NULL;
}

/* Forget what was read of target t's directory (every target when t < 0). */
static void dyn_forget(struct mbmpi_win *w, int t)
{
	if (!w->dcache)
		return;
	for (int i = t < 0 ? 0 : t; i < (t < 0 ? w->comm->size : t + 1); i++) {
		free(w->dcache[i]);
		w->dcache[i] = NULL;
	}
}

/* Reads target t's directory into the copy held for it. */
static int dyn_fetch(struct mbmpi_win *w, int t)
{
	struct mbmpi_req *r;
	struct mbmpi_rma op = { .kind = MBMPI_RMA_GET, .addr = w->comm->addr[t],
				.key = w->peer[t].key, .raddr = w->peer[t].raddr,
				.len = DYN_MAX * sizeof(struct dyn_ent) };
	int ret;

	if (!w->dcache[t] && !(w->dcache[t] = calloc(DYN_MAX, sizeof(struct dyn_ent))))
		return MPI_ERR_NO_MEM;
	if (!(r = win_req(w, t, false)))
		return MPI_ERR_NO_MEM;
	op.buf = w->dcache[t];
	win_req_posted(r, mbmpi.eng->rma(r, &op));
	if ((ret = win_flush(w, t))) {
		free(w->dcache[t]);
		w->dcache[t] = NULL;
	}
	return ret;
}

/* Where a transfer's target bytes are: the attached region of the target
 * that holds all of them, read from its directory if the copy held does not
 * cover them. MPI_ERR_RMA_RANGE when no region does. */
static int dyn_resolve(struct mbmpi_win *w, struct xfer *x)
{
	const struct dyn_ent *e;
	uint64_t lo, hi;
	int ret;

	x->dyn = true;
	if (!x->tcount || !x->td->size)
		return MPI_SUCCESS;
	lo = (uint64_t)(x->disp + x->td->true_lb);
	hi = (uint64_t)(x->disp + (MPI_Aint)(x->tcount - 1) * x->td->extent + x->td->true_ub);
	if (x->t == w->comm->rank) {
		e = dyn_find(w->dir, lo, hi);
	} else if (!(e = dyn_find(w->dcache[x->t], lo, hi))) {
		if ((ret = dyn_fetch(w, x->t)))
			return ret;
		e = dyn_find(w->dcache[x->t], lo, hi);
	}
	if (!e)
		return MPI_ERR_RMA_RANGE;
	x->rbase = e->raddr + ((uint64_t)x->disp - e->base);
	x->rkey = e->key;
	return MPI_SUCCESS;
}

static int win_acc_locked(struct mbmpi_win *w, const struct xfer *x);

/* The request of a request-based call whose transfer finished before the
 * call returned. */
static int done_now(MPI_Request *ureq)
{
	struct mbmpi_req *r = mbmpi_req_alloc();

	if (!r)
		return MPI_ERR_NO_MEM;
	r->kind = MBMPI_REQ_DONE_NOW;
	r->complete = true;
	mbmpi_status_empty(&r->status);
	*ureq = r;
	return MPI_SUCCESS;
}

static int win_xfer(MPI_Win h, struct xfer *x, MPI_Request *ureq)
{
	struct mbmpi_win *w;
	struct mbmpi_req *r;

	WIN_BEGIN(h, w);
	if (ureq && (*ureq = MPI_REQUEST_NULL, false))
		return MPI_SUCCESS;
	if (x->t == MPI_PROC_NULL) {
		ret = ureq ? done_now(ureq) : MPI_SUCCESS;
		WIN_RET(w, ret);
	}
	if ((ret = win_check_xfer(w, x)))
		WIN_RET(w, ret);
	if (w->dir && (ret = dyn_resolve(w, x)))
		WIN_RET(w, ret);
	if ((x->kind == MBMPI_RMA_ATOMIC || x->kind == MBMPI_RMA_FETCH) &&
	    mbmpi_is_pair(x->td->base) && x->tcount && x->td->size) {
		ret = win_acc_locked(w, x);
		if (!ret && ureq)
			ret = done_now(ureq);
		WIN_RET(w, ret);
	}
	if (direct_ok(w, x)) {
		ret = win_direct(w, x);
		if (!ret && ureq)
			ret = done_now(ureq);
		WIN_RET(w, ret);
	}
	if (!(r = win_req(w, x->t, ureq != NULL)))
		WIN_RET(w, MPI_ERR_NO_MEM);
	ret = win_post(w, x, r);
	if (ureq)
		*ureq = r;
	win_req_posted(r, ret);
	WIN_RET(w, ret);
}

static int xfer_types(struct xfer *x, MPI_Datatype ot, MPI_Datatype rt, MPI_Datatype tt, int oc, int rc,
		      int tc)
{
	if (oc < 0 || rc < 0 || tc < 0)
		return MPI_ERR_COUNT;
	if ((x->kind != MBMPI_RMA_GET && ot != MPI_DATATYPE_NULL && mbmpi_dt_check(ot)) ||
	    ((rt != MPI_DATATYPE_NULL || x->kind == MBMPI_RMA_GET) && mbmpi_dt_check(rt)) ||
	    mbmpi_dt_check(tt))
		return MPI_ERR_TYPE;
	x->td = mbmpi_dt(tt);
	x->tcount = (size_t)tc;
	if (x->kind == MBMPI_RMA_GET || (rt != MPI_DATATYPE_NULL && x->kind != MBMPI_RMA_PUT &&
					 x->kind != MBMPI_RMA_ATOMIC)) {
		x->rd = mbmpi_dt(rt);
		x->rcount = (size_t)rc;
	}
	if (x->kind != MBMPI_RMA_GET && ot != MPI_DATATYPE_NULL) {
		x->od = mbmpi_dt(ot);
		x->ocount = (size_t)oc;
	}
	return MPI_SUCCESS;
}

#define XFER_TYPES(h, x, ot, rt, tt, oc, rc, tc)                                  \
	do {                                                                       \
		int e_ = xfer_types(&(x), ot, rt, tt, oc, rc, tc);                 \
		if (e_) {                                                          \
			struct mbmpi_win *w_;                                      \
			return MBMPI_ERR(win_check(h, &w_) ? NULL : w_->comm, e_); \
		}                                                                  \
	} while (0)

static int c_put(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc, MPI_Datatype tt,
		 MPI_Win h, MPI_Request *req)
{
	struct xfer x = { .kind = MBMPI_RMA_PUT, .obuf = (void *)o, .t = t, .disp = disp };

	XFER_TYPES(h, x, ot, MPI_DATATYPE_NULL, tt, oc, 0, tc);
	return win_xfer(h, &x, req);
}

static int c_get(void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc, MPI_Datatype tt,
		 MPI_Win h, MPI_Request *req)
{
	struct xfer x = { .kind = MBMPI_RMA_GET, .rbuf = o, .t = t, .disp = disp };

	XFER_TYPES(h, x, MPI_DATATYPE_NULL, ot, tt, 0, oc, tc);
	return win_xfer(h, &x, req);
}

static int c_acc(const void *o, int oc, MPI_Datatype ot, void *res, int rc, MPI_Datatype rt, int t,
		 MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win h, MPI_Request *req,
		 bool fetch)
{
	struct xfer x = { .kind = fetch ? MBMPI_RMA_FETCH : MBMPI_RMA_ATOMIC, .obuf = (void *)o,
			  .rbuf = res, .t = t, .disp = disp, .op = op };

	/* A read carries no operand. */
	if (op == MPI_NO_OP)
		ot = MPI_DATATYPE_NULL;
	XFER_TYPES(h, x, ot, fetch ? rt : MPI_DATATYPE_NULL, tt, oc, rc, tc);
	x.th = tt;
	/* MPI allows only predefined operations here, on types they are
	 * defined for. */
	if ((uintptr_t)op >= MBMPI_NUM_PREDEF_OPS || op == MPI_OP_NULL || mbmpi_op_check(op, tt)) {
		struct mbmpi_win *w;

		return MBMPI_ERR(win_check(h, &w) ? NULL : w->comm, MPI_ERR_OP);
	}
	return win_xfer(h, &x, req);
}

int PMPI_Put(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc, MPI_Datatype tt,
	     MPI_Win win)
{
	MBMPI_GUARD();
	return c_put(o, oc, ot, t, disp, tc, tt, win, NULL);
}
MBMPI_ALIAS(Put)

int PMPI_Rput(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc, MPI_Datatype tt,
	      MPI_Win win, MPI_Request *req)
{
	MBMPI_GUARD();
	if (!req)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	return c_put(o, oc, ot, t, disp, tc, tt, win, req);
}
MBMPI_ALIAS(Rput)

int PMPI_Get(void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc, MPI_Datatype tt,
	     MPI_Win win)
{
	MBMPI_GUARD();
	return c_get(o, oc, ot, t, disp, tc, tt, win, NULL);
}
MBMPI_ALIAS(Get)

int PMPI_Rget(void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc, MPI_Datatype tt,
	      MPI_Win win, MPI_Request *req)
{
	MBMPI_GUARD();
	if (!req)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	return c_get(o, oc, ot, t, disp, tc, tt, win, req);
}
MBMPI_ALIAS(Rget)

int PMPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc,
		    MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
	MBMPI_GUARD();
	return c_acc(o, oc, ot, NULL, 0, MPI_DATATYPE_NULL, t, disp, tc, tt, op, win, NULL, false);
}
MBMPI_ALIAS(Accumulate)

int PMPI_Raccumulate(const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint disp, int tc,
		     MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
	MBMPI_GUARD();
	if (!req)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	return c_acc(o, oc, ot, NULL, 0, MPI_DATATYPE_NULL, t, disp, tc, tt, op, win, req, false);
}
MBMPI_ALIAS(Raccumulate)

int PMPI_Get_accumulate(const void *o, int oc, MPI_Datatype ot, void *res, int rc, MPI_Datatype rt,
			int t, MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
	MBMPI_GUARD();
	return c_acc(o, oc, ot, res, rc, rt, t, disp, tc, tt, op, win, NULL, true);
}
MBMPI_ALIAS(Get_accumulate)

int PMPI_Rget_accumulate(const void *o, int oc, MPI_Datatype ot, void *res, int rc, MPI_Datatype rt,
			 int t, MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win win,
			 MPI_Request *req)
{
	MBMPI_GUARD();
	if (!req)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	return c_acc(o, oc, ot, res, rc, rt, t, disp, tc, tt, op, win, req, true);
}
MBMPI_ALIAS(Rget_accumulate)

int PMPI_Fetch_and_op(const void *o, void *res, MPI_Datatype dt, int t, MPI_Aint disp, MPI_Op op,
		      MPI_Win win)
{
	MBMPI_GUARD();
	return c_acc(o, 1, dt, res, 1, dt, t, disp, 1, dt, op, win, NULL, true);
}
MBMPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void *o, const void *cmp, void *res, MPI_Datatype dt, int t,
			  MPI_Aint disp, MPI_Win win)
{
	MBMPI_GUARD();
	struct xfer x = { .kind = MBMPI_RMA_CSWAP, .obuf = (void *)o, .rbuf = res, .cmp = cmp,
			  .t = t, .disp = disp };

	XFER_TYPES(win, x, dt, dt, dt, 1, 1, 1);
	return win_xfer(win, &x, NULL);
}
MBMPI_ALIAS(Compare_and_swap)

/* ---- Creation and destruction ---- */

static int win_make(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor,
		    bool allocated, MPI_Win *out)
{
	struct mbmpi_comm *c;
	struct mbmpi_win *w;
	struct win_peer me = { 0 };
	MPI_Comm dup;
	int ret, n;

	if ((ret = MBMPI_COMM_QUERY(comm, out, &c)))
		return ret;
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (size < 0)
		return MBMPI_ERR(c, MPI_ERR_SIZE);
	if (disp_unit <= 0)
		return MBMPI_ERR(c, MPI_ERR_DISP);
	if (!mbmpi.eng->rma_reg)
		return MBMPI_ERR(c, MPI_ERR_UNSUPPORTED_OPERATION);
	if ((ret = PMPI_Comm_dup(comm, &dup)))
		return ret;
	n = c->size;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->peer = calloc((size_t)n, sizeof(*w->peer))) ||
	    !(w->cnt = calloc((size_t)n, sizeof(*w->cnt))) || !(w->locked = calloc((size_t)n, 1)) ||
	    posix_memalign((void **)&w->ctl, 64, 64)) {
		ret = MPI_ERR_NO_MEM;
		goto fail;
	}
	memset(w->ctl, 0, 64);
	w->magic = WIN_MAGIC;
	w->comm = mbmpi_comm(dup);
	w->comm->win = w;
	mbmpi_errh_retain(MPI_ERRORS_ARE_FATAL);
	mbmpi_errh_release(w->comm->errh);
	w->comm->errh = MPI_ERRORS_ARE_FATAL;
	w->base = base;
	w->size = size;
	w->disp_unit = disp_unit;
	w->flavor = flavor;
	w->model = MPI_WIN_UNIFIED;
	w->allocated = allocated;
	if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
		/* The window's registered memory is the directory of regions. */
		if (posix_memalign((void **)&w->dir, 64, DYN_MAX * sizeof(*w->dir)) ||
		    !(w->dir_mr = calloc(DYN_MAX, sizeof(*w->dir_mr))) ||
		    !(w->dcache = calloc((size_t)n, sizeof(*w->dcache)))) {
			ret = MPI_ERR_NO_MEM;
			goto fail;
		}
		memset(w->dir, 0, DYN_MAX * sizeof(*w->dir));
		if ((ret = mbmpi.eng->rma_reg(w->dir, DYN_MAX * sizeof(*w->dir), &me.key,
					      &me.raddr, &w->mr)))
			goto fail;
	} else if (size && (ret = mbmpi.eng->rma_reg(base, (size_t)size, &me.key, &me.raddr,
						    &w->mr))) {
		goto fail;
	}
	if ((ret = mbmpi.eng->rma_reg(w->ctl, 64, &me.ckey, &me.craddr, &w->cmr)))
		goto fail;
	me.size = size;
	me.disp_unit = disp_unit;
	/* Every rank has to have made its window before anyone uses it: the
	 * allgather is that agreement too. */
	ret = PMPI_Allgather(&me, sizeof(me), MPI_BYTE, w->peer, sizeof(me), MPI_BYTE, dup);
	if (ret)
		goto fail;
	*out = w;
	return MPI_SUCCESS;
fail:
	if (w) {
		if (w->cmr)
			mbmpi.eng->rma_dereg(w->cmr);
		if (w->mr)
			mbmpi.eng->rma_dereg(w->mr);
		free(w->ctl);
		free(w->peer);
		free(w->cnt);
		free(w->locked);
		free(w->dir);
		free(w->dir_mr);
		free(w->dcache);
		free(w);
	}
	if (mbmpi_comm(dup))
		mbmpi_comm(dup)->win = NULL;
	PMPI_Comm_free(&dup);
	return MBMPI_ERR(c, ret);
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	MBMPI_GUARD();
	(void)info;
	if (size > 0 && !base)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_BASE);
	return win_make(base, size, disp_unit, comm, MPI_WIN_FLAVOR_CREATE, false, win);
}
MBMPI_ALIAS(Win_create)


/* Collective over comm: one shared segment holding every rank's `size`
 * bytes (contiguous, or each from a 64-byte boundary when pad) and then a
 * lock word per rank, mapped by all; an error on every rank when any rank
 * could not map it. */
static int seg_make(struct mbmpi_comm *c, MPI_Comm comm, MPI_Aint size, bool pad, void **seg,
		    size_t *len, MPI_Aint **offs, MPI_Aint **sizes, MPI_Aint *ctl_off)
{
	static unsigned count;
	char name[64] = "";
	MPI_Aint total = 0, *off, *sz;
	int ok = 1, all = 0, fd = -1, ret;
	void *p = MAP_FAILED;

	*seg = NULL;
	off = malloc(sizeof(*off) * (size_t)c->size);
	sz = malloc(sizeof(*sz) * (size_t)c->size);
	if (!off || !sz)
		ok = 0;
	else if ((ret = PMPI_Allgather(&size, 1, MPI_AINT, sz, 1, MPI_AINT, comm)))
		goto fail_ret;
	for (int i = 0; ok && i < c->size; i++) {
		if (pad)
			total = (total + 63) & ~(MPI_Aint)63;
		off[i] = total;
		total += sz[i];
	}
	/* The lock words after the data, one cache line each. */
	*ctl_off = (total + 63) & ~(MPI_Aint)63;
	total = *ctl_off + 64 * (MPI_Aint)c->size;
	if (ok && c->rank == 0) {
		snprintf(name, sizeof(name), "/mbmpi-win-%u-%d-%u", (unsigned)getuid(), (int)getpid(),
			 count++);
		fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)total))
			ok = 0;
	}
	if ((ret = PMPI_Bcast(name, sizeof(name), MPI_CHAR, 0, comm)))
		goto fail_ret;
	if (ok && c->rank != 0 && (fd = shm_open(name, O_RDWR, 0)) < 0)
		ok = 0;
	if (ok && (p = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
				   MAP_FAILED)
		ok = 0;
	if (fd >= 0)
		close(fd);
	/* Everyone has it mapped (or has failed) before the name goes. */
	ret = PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
	if (c->rank == 0 && name[0])
		shm_unlink(name);
	if (ret)
		goto fail_ret;
	if (!all) {
		ret = MPI_ERR_RMA_SHARED;
		goto fail_ret;
	}
	*seg = p;
	*len = (size_t)total;
	*offs = off;
	*sizes = sz;
	return MPI_SUCCESS;
fail_ret:
	if (p != MAP_FAILED)
		munmap(p, (size_t)total);
	free(off);
	free(sz);
	return ret ? ret : MPI_ERR_NO_MEM;
}

/* A window in a shared segment: every rank's part reachable directly. */
static int win_shared(MPI_Aint size, int disp_unit, MPI_Comm comm, void *baseptr, MPI_Win *win,
		      int flavor, bool pad)
{
	struct mbmpi_comm *c = mbmpi_comm(comm);
	MPI_Aint *off = NULL, *sz = NULL, ctl = 0;
	struct mbmpi_win *w;
	size_t len = 0;
	void *seg;
	char *base;
	int ret;

	if ((ret = seg_make(c, comm, size, pad, &seg, &len, &off, &sz, &ctl)))
		return MBMPI_ERR(c, ret);
	base = size ? (char *)seg + off[c->rank] : NULL;
	if ((ret = win_make(size ? base : NULL, size, disp_unit, comm, flavor, false, win))) {
		if (seg)
			munmap(seg, len);
		free(off);
		free(sz);
		return ret;
	}
	w = *win;
	w->seg = seg;
	w->seg_len = len;
	w->dsize = sz;
	w->direct = malloc(sizeof(*w->direct) * (size_t)c->size);
	for (int i = 0; w->direct && i < c->size; i++)
		w->direct[i] = sz[i] ? (char *)seg + off[i] : NULL;
	w->dctl = w->direct ? (uint64_t *)((char *)seg + ctl) : NULL;
	free(off);
	/* Without the table the window still works, through the provider. */
	w->base = base;
	*(void **)baseptr = base;
	return MPI_SUCCESS;
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
		      MPI_Win *win)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	void *p = NULL;
	int ret;

	(void)info;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!baseptr || !win)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if (size < 0)
		return MBMPI_ERR(c, MPI_ERR_SIZE);
	if (disp_unit <= 0)
		return MBMPI_ERR(c, MPI_ERR_DISP);
	/* All on one node: one shared segment, accessed directly. */
	if (mbmpi_comm_on_one_node(c) && mbmpi_env_long("MATCHBOX_MPI_WIN_SHARED", 1))
		return win_shared(size, disp_unit, comm, baseptr, win, MPI_WIN_FLAVOR_ALLOCATE, true);
	if (posix_memalign(&p, 4096, size ? (size_t)size : 1))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	memset(p, 0, size ? (size_t)size : 1);
	ret = win_make(p, size, disp_unit, comm, MPI_WIN_FLAVOR_ALLOCATE, true, win);
	if (ret) {
		free(p);
		return ret;
	}
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
			     MPI_Win *win)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	(void)info;
	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!baseptr || !win)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if (size < 0)
		return MBMPI_ERR(c, MPI_ERR_SIZE);
	if (disp_unit <= 0)
		return MBMPI_ERR(c, MPI_ERR_DISP);
	if (!mbmpi_comm_on_one_node(c))
		return MBMPI_ERR(c, MPI_ERR_RMA_SHARED);
	return win_shared(size, disp_unit, comm, baseptr, win, MPI_WIN_FLAVOR_SHARED, false);
}
MBMPI_ALIAS(Win_allocate_shared)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!size || !disp_unit || !baseptr)
		WIN_RET(w, MPI_ERR_ARG);
	if (w->flavor != MPI_WIN_FLAVOR_SHARED)
		WIN_RET(w, MPI_ERR_RMA_FLAVOR);
	if (!w->direct)
		WIN_RET(w, MPI_ERR_NO_MEM);
	if (rank == MPI_PROC_NULL) {
		/* The first rank with memory. */
		for (rank = 0; rank < w->comm->size - 1 && !w->dsize[rank]; rank++)
			;
	}
	if (rank < 0 || rank >= w->comm->size)
		WIN_RET(w, MPI_ERR_RANK);
	*size = w->dsize[rank];
	*disp_unit = w->peer[rank].disp_unit;
	*(void **)baseptr = w->direct[rank];
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_shared_query)

int PMPI_Win_free(MPI_Win *win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	MPI_Comm c;

	MBMPI_CHECK_INIT();
	if (!win || win_check(*win, &w))
		return MBMPI_ERR(NULL, MPI_ERR_WIN);
	if (w->lock_all || w->nstart || w->npost)
		return MBMPI_ERR(w->comm, MPI_ERR_RMA_SYNC);
	for (int i = 0; i < w->comm->size; i++)
		if (w->locked[i])
			return MBMPI_ERR(w->comm, MPI_ERR_RMA_SYNC);
	{
		int ret = mbmpi_attr_clear(MBMPI_KV_WIN, *win, &w->comm->attrs);

		if (ret)
			return MBMPI_ERR(w->comm, ret);
	}
	/* Nobody's memory goes while another rank may still reach it. */
	win_flush(w, -1);
	mbmpi_barrier(w->comm);
	mbmpi.eng->rma_dereg(w->cmr);
	mbmpi.eng->rma_dereg(w->mr);
	for (int i = 0; w->dir && i < DYN_MAX; i++)
		if (w->dir[i].size)
			mbmpi.eng->rma_dereg(w->dir_mr[i]);
	dyn_forget(w, -1);
	free(w->dir);
	free(w->dir_mr);
	free(w->dcache);
	if (w->allocated)
		free(w->base);
	if (w->seg)
		munmap(w->seg, w->seg_len);
	free(w->direct);
	free(w->dsize);
	free(w->ctl);
	free(w->peer);
	free(w->cnt);
	free(w->locked);
	free(w->start_ranks);
	w->comm->win = NULL;
	c = w->comm;
	w->magic = 0;
	free(w);
	PMPI_Comm_free(&c);
	*win = MPI_WIN_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_free)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	MBMPI_GUARD();
	(void)info;
	return win_make(NULL, 0, 1, comm, MPI_WIN_FLAVOR_DYNAMIC, false, win);
}
MBMPI_ALIAS(Win_create_dynamic)

/* Local: the region is registered and entered in this rank's directory,
 * where origins find it. Regions of one window may not overlap. */
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	uint64_t b = (uint64_t)(uintptr_t)base, key = 0, raddr = 0;
	int slot = -1;
	void *mr = NULL;

	WIN_BEGIN(win, w);
	if (!w->dir)
		WIN_RET(w, MPI_ERR_RMA_FLAVOR);
	if (size < 0)
		WIN_RET(w, MPI_ERR_SIZE);
	if (size > 0 && !base)
		WIN_RET(w, MPI_ERR_BASE);
	if (!size)
		return MPI_SUCCESS;
	for (int i = 0; i < DYN_MAX; i++) {
		if (!w->dir[i].size) {
			if (slot < 0)
				slot = i;
		} else if (b < w->dir[i].base + w->dir[i].size &&
			   w->dir[i].base < b + (uint64_t)size) {
			WIN_RET(w, MPI_ERR_RMA_ATTACH);
		}
	}
	if (slot < 0)
		WIN_RET(w, MPI_ERR_RMA_ATTACH);	/* DYN_MAX regions already */
	if ((ret = mbmpi.eng->rma_reg(base, (size_t)size, &key, &raddr, &mr)))
		WIN_RET(w, ret);
	w->dir_mr[slot] = mr;
	w->dir[slot].base = b;
	w->dir[slot].raddr = raddr;
	w->dir[slot].key = key;
	__atomic_store_n(&w->dir[slot].size, (uint64_t)size, __ATOMIC_RELEASE);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	uint64_t b = (uint64_t)(uintptr_t)base;

	WIN_BEGIN(win, w);
	if (!w->dir)
		WIN_RET(w, MPI_ERR_RMA_FLAVOR);
	for (int i = 0; i < DYN_MAX; i++) {
		if (w->dir[i].size && w->dir[i].base == b) {
			__atomic_store_n(&w->dir[i].size, 0, __ATOMIC_RELEASE);
			mbmpi.eng->rma_dereg(w->dir_mr[i]);
			w->dir_mr[i] = NULL;
			return MPI_SUCCESS;
		}
	}
	WIN_RET(w, MPI_ERR_BASE);	/* not the start of an attached region */
}
MBMPI_ALIAS(Win_detach)

/* ---- Queries ---- */

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	return PMPI_Comm_group((MPI_Comm)w->comm, group);
}
MBMPI_ALIAS(Win_get_group)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *val, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!val || !flag)
		WIN_RET(w, MPI_ERR_ARG);
	*flag = 1;
	switch (keyval) {
	case MPI_WIN_BASE:
		*(void **)val = w->base;
		break;
	case MPI_WIN_SIZE:
		*(MPI_Aint **)val = &w->size;
		break;
	case MPI_WIN_DISP_UNIT:
		*(int **)val = &w->disp_unit;
		break;
	case MPI_WIN_CREATE_FLAVOR:
		*(int **)val = &w->flavor;
		break;
	case MPI_WIN_MODEL:
		*(int **)val = &w->model;
		break;
	default:
		if ((ret = mbmpi_attr_get(MBMPI_KV_WIN, w->comm->attrs, keyval, val, flag)))
			WIN_RET(w, ret);
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_get_attr)

int PMPI_Win_set_attr(MPI_Win win, int keyval, void *val)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if ((ret = mbmpi_attr_set(MBMPI_KV_WIN, win, &w->comm->attrs, keyval, val)))
		WIN_RET(w, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_set_attr)

int PMPI_Win_delete_attr(MPI_Win win, int keyval)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if ((ret = mbmpi_attr_delete(MBMPI_KV_WIN, win, &w->comm->attrs, keyval)))
		WIN_RET(w, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_delete_attr)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	struct mbmpi_info *i;

	WIN_BEGIN(win, w);
	if (mbmpi_info_check(info))
		WIN_RET(w, MPI_ERR_INFO);
	if (!(i = mbmpi_info_copy(info, &ret)) && ret)
		WIN_RET(w, ret);
	mbmpi_info_free(w->comm->info);
	w->comm->info = i;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!info)
		WIN_RET(w, MPI_ERR_ARG);
	if ((ret = mbmpi_info_give(w->comm->info, info)))
		WIN_RET(w, ret);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_get_info)

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!name)
		WIN_RET(w, MPI_ERR_ARG);
	snprintf(w->name, sizeof(w->name), "%s", name);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *name, int *len)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!name || !len)
		WIN_RET(w, MPI_ERR_ARG);
	*len = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_get_name)

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))fn, eh);
}
MBMPI_ALIAS(Win_create_errhandler)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler eh)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	return PMPI_Comm_set_errhandler((MPI_Comm)w->comm, eh);
}
MBMPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *eh)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	return PMPI_Comm_get_errhandler((MPI_Comm)w->comm, eh);
}
MBMPI_ALIAS(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int code)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	MBMPI_ERR(w->comm, code);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_call_errhandler)

/* ---- Synchronisation ---- */

int PMPI_Win_fence(int assert, MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
		WIN_RET(w, MPI_ERR_ASSERT);
	dyn_forget(w, -1);
	ret = win_flush(w, -1);
	/* Even after NOPRECEDE the barrier stays: it orders the target's own
	 * stores before the fence ahead of the origins' accesses after it. */
	{
		int e = mbmpi_barrier(w->comm);
		ret = ret ? ret : e;
	}
	w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
	WIN_RET(w, ret);
}
MBMPI_ALIAS(Win_fence)

/* A remote atomic on a word of target t's control block (0: the window
 * lock, 1: the accumulate lock), waited for. */
static int ctl_op(struct mbmpi_win *w, int t, int word, int kind, uint64_t operand, uint64_t cmp,
		  uint64_t *old)
{
	struct mbmpi_req *r = win_req(w, t, false);
	struct mbmpi_rma op = { .kind = kind, .addr = w->comm->addr[t], .buf = &operand, .len = 1,
				.result = old, .compare = &cmp,
				.raddr = w->peer[t].craddr + 8 * (uint64_t)word,
				.key = w->peer[t].ckey, .fdt = FI_UINT64,
				.fop = kind == MBMPI_RMA_CSWAP ? FI_CSWAP : FI_SUM };

	if (!r)
		return MPI_ERR_NO_MEM;
	win_req_posted(r, mbmpi.eng->rma(r, &op));
	return win_flush(w, t);
}

static int lock_op(struct mbmpi_win *w, int t, int kind, uint64_t operand, uint64_t cmp, uint64_t *old)
{
	return ctl_op(w, t, 0, kind, operand, cmp, old);
}

static int lock_take(struct mbmpi_win *w, int t, bool excl)
{
	int spins = 0, ret;

	/* In a shared segment the lock word is taken with processor atomics
	 * by every rank alike. */
	if (w->dctl) {
		uint64_t *word = &w->dctl[8 * t];

		for (;;) {
			uint64_t zero = 0;

			if (excl ? __atomic_compare_exchange_n(word, &zero, LOCK_EXCL, false,
							       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
				 : !(__atomic_fetch_add(word, 1, __ATOMIC_ACQ_REL) & LOCK_EXCL))
				return MPI_SUCCESS;
			if (!excl)
				__atomic_fetch_sub(word, 1, __ATOMIC_ACQ_REL);
			mbmpi_poll();
			mbmpi_idle(&spins);
		}
	}
	for (;;) {
		uint64_t old = 0;

		if (excl) {
			if ((ret = lock_op(w, t, MBMPI_RMA_CSWAP, LOCK_EXCL, 0, &old)))
				return ret;
			if (old == 0)
				return MPI_SUCCESS;
		} else {
			if ((ret = lock_op(w, t, MBMPI_RMA_FETCH, 1, 0, &old)))
				return ret;
			if (!(old & LOCK_EXCL))
				return MPI_SUCCESS;
			if ((ret = lock_op(w, t, MBMPI_RMA_FETCH, (uint64_t)-1, 0, &old)))
				return ret;
		}
		/* The holder's unlock needs nothing from us but patience. */
		mbmpi_poll();
		mbmpi_idle(&spins);
	}
}

static int lock_drop(struct mbmpi_win *w, int t, bool excl)
{
	uint64_t old;

	if (w->dctl) {
		__atomic_fetch_sub(&w->dctl[8 * t], excl ? LOCK_EXCL : 1, __ATOMIC_ACQ_REL);
		return MPI_SUCCESS;
	}
	return lock_op(w, t, MBMPI_RMA_FETCH, excl ? (uint64_t)0 - LOCK_EXCL : (uint64_t)-1, 0, &old);
}

/* The accumulate lock of target t (a second word of its control block):
 * taken around every accumulate that cannot be one provider atomic. */
static int acc_lock(struct mbmpi_win *w, int t, bool take)
{
	int spins = 0, ret;
	uint64_t old;

	if (w->dctl) {
		uint64_t *word = &w->dctl[8 * t + 1];

		if (!take) {
			__atomic_store_n(word, 0, __ATOMIC_RELEASE);
			return MPI_SUCCESS;
		}
		for (;;) {
			uint64_t zero = 0;

			if (__atomic_compare_exchange_n(word, &zero, 1, false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				return MPI_SUCCESS;
			mbmpi_poll();
			mbmpi_idle(&spins);
		}
	}
	if (!take)
		return ctl_op(w, t, 1, MBMPI_RMA_FETCH, (uint64_t)-1, 0, &old);
	for (;;) {
		if ((ret = ctl_op(w, t, 1, MBMPI_RMA_CSWAP, 1, 0, &old)))
			return ret;
		if (old == 0)
			return MPI_SUCCESS;
		mbmpi_poll();
		mbmpi_idle(&spins);
	}
}

/* A get or a put of a whole target region, done before returning. */
static int xfer_now(struct mbmpi_win *w, const struct xfer *x)
{
	struct mbmpi_req *r;
	int ret;

	if (direct_ok(w, x))
		return win_direct(w, x);
	if (!(r = win_req(w, x->t, false)))
		return MPI_ERR_NO_MEM;
	ret = win_post(w, x, r);
	win_req_posted(r, ret);
	ret = win_flush(w, x->t) ? MPI_ERR_OTHER : ret;
	return ret;
}

/* Accumulates on the pair types of MINLOC and MAXLOC (and REPLACE or
 * NO_OP on them), for which no provider has atomics: the target region is
 * read, combined at the origin and written back, under the target's
 * accumulate lock, which every such accumulate takes, so they are atomic
 * with each other as MPI requires of accumulates with the same basic type.
 * Both buffers take the target type's layout so that the combining is the
 * reduction code's own. Done when the call returns. */
static int win_acc_locked(struct mbmpi_win *w, const struct xfer *x)
{
	const struct mbmpi_dtype *td = x->td;
	size_t bytes = td->size * x->tcount;
	MPI_Aint span = (MPI_Aint)(x->tcount - 1) * td->extent + td->true_ub - td->true_lb;
	char *tb = malloc((size_t)span), *ob = NULL, *pk = malloc(bytes);
	char *tv = tb - td->true_lb, *ov = NULL;
	struct xfer g = {.kind = MBMPI_RMA_GET, .rbuf = tv, .rcount = x->tcount,
			 .rd = (struct mbmpi_dtype *)td, .t = x->t, .disp = x->disp,
			 .tcount = x->tcount, .td = (struct mbmpi_dtype *)td,
			 .dyn = x->dyn, .rbase = x->rbase, .rkey = x->rkey};
	int ret, e;

	if ((x->od && x->od->base != td->base) || (x->rd && x->rd->base != td->base)) {
		ret = MPI_ERR_TYPE;
		goto out;
	}
	if (!tb || !pk || (x->op != MPI_NO_OP && !(ob = malloc((size_t)span)))) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	ov = ob ? ob - td->true_lb : NULL;
	if (x->op != MPI_NO_OP) {
		mbmpi_pack(x->obuf, x->ocount, x->od, pk);
		mbmpi_unpack(pk, bytes, ov, x->tcount, td);
	}
	if ((ret = acc_lock(w, x->t, true)))
		goto out;
	ret = xfer_now(w, &g);
	if (!ret && x->rd) {
		mbmpi_pack(tv, x->tcount, td, pk);
		mbmpi_unpack(pk, bytes, x->rbuf, x->rcount, x->rd);
	}
	if (!ret && x->op != MPI_NO_OP) {
		struct xfer p = {.kind = MBMPI_RMA_PUT, .obuf = tv, .ocount = x->tcount,
				 .od = (struct mbmpi_dtype *)td, .t = x->t, .disp = x->disp,
				 .tcount = x->tcount, .td = (struct mbmpi_dtype *)td,
				 .dyn = x->dyn, .rbase = x->rbase, .rkey = x->rkey};

		mbmpi_op_apply(x->op, ov, tv, x->tcount, x->th);
		ret = xfer_now(w, &p);
	}
	e = acc_lock(w, x->t, false);
	ret = ret ? ret : e;
out:
	free(tb);
	free(ob);
	free(pk);
	return ret;
}

int PMPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (type != MPI_LOCK_EXCLUSIVE && type != MPI_LOCK_SHARED)
		WIN_RET(w, MPI_ERR_LOCKTYPE);
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= w->comm->size)
		WIN_RET(w, MPI_ERR_RANK);
	if (assert & ~MPI_MODE_NOCHECK)
		WIN_RET(w, MPI_ERR_ASSERT);
	dyn_forget(w, rank);
	if (w->locked[rank] || w->lock_all)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	if (!(assert & MPI_MODE_NOCHECK) && (ret = lock_take(w, rank, type == MPI_LOCK_EXCLUSIVE)))
		WIN_RET(w, ret);
	w->locked[rank] = assert & MPI_MODE_NOCHECK ? 'N' : type == MPI_LOCK_EXCLUSIVE ? 'X' : 'S';
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	int e;

	WIN_BEGIN(win, w);
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (rank < 0 || rank >= w->comm->size)
		WIN_RET(w, MPI_ERR_RANK);
	if (!w->locked[rank])
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	ret = win_flush(w, rank);
	if (w->locked[rank] != 'N' && (e = lock_drop(w, rank, w->locked[rank] == 'X')) && !ret)
		ret = e;
	w->locked[rank] = 0;
	WIN_RET(w, ret);
}
MBMPI_ALIAS(Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (assert & ~MPI_MODE_NOCHECK)
		WIN_RET(w, MPI_ERR_ASSERT);
	if (w->lock_all)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	for (int i = 0; i < w->comm->size; i++)
		if (w->locked[i])
			WIN_RET(w, MPI_ERR_RMA_SYNC);
	dyn_forget(w, -1);
	for (int i = 0; i < w->comm->size && !(assert & MPI_MODE_NOCHECK); i++) {
		if ((ret = lock_take(w, i, false))) {
			while (--i >= 0)
				lock_drop(w, i, false);
			WIN_RET(w, ret);
		}
		w->locked[i] = 'S';
	}
	w->lock_all = true;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!w->lock_all)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	ret = win_flush(w, -1);
	for (int i = 0; i < w->comm->size; i++) {
		if (w->locked[i]) {
			int e = lock_drop(w, i, false);
			ret = ret ? ret : e;
		}
		w->locked[i] = 0;
	}
	w->lock_all = false;
	WIN_RET(w, ret);
}
MBMPI_ALIAS(Win_unlock_all)

static int c_flush(int rank, MPI_Win win, bool all)
{
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!all && rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (!all && (rank < 0 || rank >= w->comm->size))
		WIN_RET(w, MPI_ERR_RANK);
	if (!w->lock_all && (all ? false : !w->locked[rank])) {
		bool any = false;

		for (int i = 0; i < w->comm->size; i++)
			any |= w->locked[i] != 0;
		if (!any || !all)
			WIN_RET(w, MPI_ERR_RMA_SYNC);
	}
	ret = win_flush(w, all ? -1 : rank);
	WIN_RET(w, ret);
}

/* Local completion is not weaker here than remote: the provider reports an
 * operation once it is done at the target. */
int PMPI_Win_flush(int rank, MPI_Win win)
{
	MBMPI_GUARD();
	return c_flush(rank, win, false);
}
MBMPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win)
{
	MBMPI_GUARD();
	return c_flush(0, win, true);
}
MBMPI_ALIAS(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
	MBMPI_GUARD();
	return c_flush(rank, win, false);
}
MBMPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win)
{
	MBMPI_GUARD();
	return c_flush(0, win, true);
}
MBMPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	/* The unified model: public and private copies are one; only the
	 * compiler and the processor need telling. A dynamic window's
	 * directories are read again after it (regions may have come and gone). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	dyn_forget(w, -1);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_sync)

/* ---- Post, start, complete, wait ---- */

/* The window communicator's ranks of a group's members. */
static int group_ranks(struct mbmpi_win *w, MPI_Group group, int **out, int *n)
{
	struct mbmpi_group *g = mbmpi_group(group);
	struct mbmpi_group *wg = w->comm->group;
	int *r;

	if (!g)
		return MPI_ERR_GROUP;
	if (!(r = malloc(sizeof(int) * (size_t)(g->size ? g->size : 1))))
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < g->size; i++) {
		r[i] = -1;
		for (int j = 0; j < wg->size; j++)
			if (wg->world[j] == g->world[i])
				r[i] = j;
		if (r[i] < 0) {
			free(r);
			return MPI_ERR_GROUP;
		}
	}
	*out = r;
	*n = g->size;
	return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	int *ranks = NULL, n = 0;

	WIN_BEGIN(win, w);
	if (w->npost)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	if ((ret = group_ranks(w, group, &ranks, &n)))
		WIN_RET(w, ret);
	(void)assert;
	w->post_reqs = calloc((size_t)(n ? n : 1), sizeof(*w->post_reqs));
	if (!w->post_reqs) {
		free(ranks);
		WIN_RET(w, MPI_ERR_NO_MEM);
	}
	/* The completions are expected before the origins are told to go. */
	for (int i = 0; i < n && !ret; i++)
		ret = mbmpi_irecv(NULL, 0, &mbmpi_predef_types[4], ranks[i], T_DONE, w->comm, w->comm->ctx,
				  &w->post_reqs[i]);
	for (int i = 0; i < n && !ret; i++) {
		struct mbmpi_req *r;

		if (!(ret = mbmpi_isend(NULL, 0, &mbmpi_predef_types[4], ranks[i], T_POST, w->comm,
					w->comm->ctx, MBMPI_STD, &r)))
			ret = mbmpi_wait(r, MPI_STATUS_IGNORE);
	}
	w->npost = n ? n : -1;
	free(ranks);
	WIN_RET(w, ret);
}
MBMPI_ALIAS(Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;
	int *ranks = NULL, n = 0;

	WIN_BEGIN(win, w);
	(void)assert;
	if (w->nstart)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	dyn_forget(w, -1);
	if ((ret = group_ranks(w, group, &ranks, &n)))
		WIN_RET(w, ret);
	for (int i = 0; i < n && !ret; i++) {
		struct mbmpi_req *r;

		if (!(ret = mbmpi_irecv(NULL, 0, &mbmpi_predef_types[4], ranks[i], T_POST, w->comm,
					w->comm->ctx, &r)))
			ret = mbmpi_wait(r, MPI_STATUS_IGNORE);
	}
	if (ret) {
		free(ranks);
		WIN_RET(w, ret);
	}
	w->start_ranks = ranks;
	w->nstart = n ? n : -1;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!w->nstart)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	for (int i = 0; i < w->nstart; i++) {
		int t = w->start_ranks[i], e = win_flush(w, t);
		struct mbmpi_req *r;

		ret = ret ? ret : e;
		if (!(e = mbmpi_isend(NULL, 0, &mbmpi_predef_types[4], t, T_DONE, w->comm, w->comm->ctx,
				      MBMPI_STD, &r)))
			e = mbmpi_wait(r, MPI_STATUS_IGNORE);
		ret = ret ? ret : e;
	}
	free(w->start_ranks);
	w->start_ranks = NULL;
	w->nstart = 0;
	WIN_RET(w, ret);
}
MBMPI_ALIAS(Win_complete)

static int post_end(struct mbmpi_win *w, bool block, int *flag)
{
	int n = w->npost < 0 ? 0 : w->npost, ret;

	if (!block) {
		mbmpi_poll();
		for (int i = 0; i < n; i++)
			if (!w->post_reqs[i]->complete) {
				*flag = 0;
				return MPI_SUCCESS;
			}
	}
	ret = mbmpi_waitall(n, w->post_reqs);
	free(w->post_reqs);
	w->post_reqs = NULL;
	w->npost = 0;
	if (flag)
		*flag = 1;
	return ret;
}

int PMPI_Win_wait(MPI_Win win)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!w->npost)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	WIN_RET(w, post_end(w, true, NULL));
}
MBMPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
	MBMPI_GUARD();
	struct mbmpi_win *w;

	WIN_BEGIN(win, w);
	if (!flag)
		WIN_RET(w, MPI_ERR_ARG);
	if (!w->npost)
		WIN_RET(w, MPI_ERR_RMA_SYNC);
	WIN_RET(w, post_end(w, false, flag));
}
MBMPI_ALIAS(Win_test)
