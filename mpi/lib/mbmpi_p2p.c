/*
 * MPI point-to-point over the engine: argument checks, the four send modes
 * (buffered sends copy into the attached buffer and go out as standard sends
 * the library owns), non-contiguous data through bounce buffers, persistent
 * requests, the Wait/Test family, probes, matched probes and cancel.
 * Requests and fabric operations come from free lists.
 */
#include "mbmpi.h"

#include <limits.h>
#include "mbu_pool.h"

#include <stdio.h>
#include <sys/mman.h>

static struct mbu_pool mbmpi_req_pool, mbmpi_fop_pool;
/* Temporaries of non-contiguous messages up to MBMPI_PACKED_MAX bytes; at
 * most this many are kept, past them malloc serves. */
#define MBMPI_TMP_POOLED 256
static struct mbu_pool mbmpi_tmp_pool;
static bool mbmpi_pools_ready;

/* A receive's temporary from this size up is a mapping of its own: a
 * message that comes in pieces touches only its first piece's pages, which
 * malloc would not promise (MALLOC_PERTURB_ fills the whole block, and a
 * block from the heap may have been touched before). */
#define MBMPI_TMP_MAP ((size_t)1 << 20)

static void mbmpi_tmp_free(struct mbmpi_req *r)
{
	if (r->tmp_pooled)
		mbu_pool_put(&mbmpi_tmp_pool, r->tmp);
	else if (r->tmp_mapped)
		munmap(r->tmp, r->clen);
	else
		free(r->tmp);
}

static int mbmpi_pools(void)
{
	if (mbmpi_pools_ready)
		return 0;
	if (mbu_pool_init(&mbmpi_req_pool, sizeof(struct mbmpi_req), 256, 0) ||
	    mbu_pool_init(&mbmpi_fop_pool, sizeof(struct mbmpi_fop), 256, 0) ||
	    mbu_pool_init(&mbmpi_tmp_pool, MBMPI_PACKED_MAX, 8, MBMPI_TMP_POOLED))
		return -1;
	mbmpi_pools_ready = true;
	return 0;
}

void mbmpi_p2p_fini(void)
{
	if (!mbmpi_pools_ready)
		return;
	mbu_pool_fini(&mbmpi_req_pool);
	mbu_pool_fini(&mbmpi_fop_pool);
	mbu_pool_fini(&mbmpi_tmp_pool);
	mbmpi_pools_ready = false;
}

struct mbmpi_fop *mbmpi_fop_alloc(void)
{
	struct mbmpi_fop *f;

	if (mbmpi_pools())
		return NULL;
	f = mbu_pool_get(&mbmpi_fop_pool);
	if (f)
		mbu_dlist_init(&f->link);
	return f;
}

void mbmpi_fop_free(struct mbmpi_fop *f)
{
	mbu_pool_put(&mbmpi_fop_pool, f);
}

/* Inline for this file's every receive and send; mbmpi_req_alloc for the
 * rest of the library. */
static inline __attribute__((always_inline)) struct mbmpi_req *mbmpi_req_get(void)
{
	struct mbmpi_req *r;

	if (MBMPI_UNLIKELY(!mbmpi_pools_ready) && mbmpi_pools())
		return NULL;
	r = mbu_pool_get(&mbmpi_req_pool);
	if (r) {
		memset(r, 0, offsetof(struct mbmpi_req, own));
		mbu_dlist_init(&r->link);
	}
	return r;
}

struct mbmpi_req *mbmpi_req_alloc(void)
{
	return mbmpi_req_get();
}

void mbmpi_status_empty(MPI_Status *st)
{
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	st->MPI_ERROR = MPI_SUCCESS;
	st->mbmpi_cancelled = 0;
	st->mbmpi_bytes = 0;
}

/* What MPI_Isend hands back for a message the provider took a copy of
 * before returning (an inject): a send that is already complete, shared by
 * all such sends (as MPICH's builtin requests are), so that the call
 * allocates nothing and the wait has nothing to do. Nothing writes to it:
 * retiring or freeing it only drops the program's handle. */
struct mbmpi_req mbmpi_req_sent = {
	.kind = MBMPI_REQ_SEND, .complete = true, .builtin = true,
	.status = {.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG,
		   .MPI_ERROR = MPI_SUCCESS},
};

static void mbmpi_bflush_check(void);

/* A buffered send or a buffer flush leaves its list; a finished buffered
 * send may complete flushes waiting for it. Out of the common path. */
static __attribute__((noinline)) void mbmpi_req_unlink(struct mbmpi_req *r)
{
	bool bsend = r->tmp_is_bsend;

	mbu_dlist_remove(&r->link);
	mbu_pool_put(&mbmpi_req_pool, r);
	if (bsend && !mbu_dlist_empty(&mbmpi.bflushes))
		mbmpi_bflush_check();
}

void mbmpi_req_free(struct mbmpi_req *r)
{
	if (r->builtin)
		return;
	if (r->kind == MBMPI_REQ_PCOLL)
		mbmpi_pcoll_free(r);
	if (r->comm)
		mbmpi_comm_release(r->comm);
	if (r->dt)
		mbmpi_dt_release(r->dt);
	if (r->tmp && !r->tmp_is_bsend)
		mbmpi_tmp_free(r);
	if (MBMPI_UNLIKELY(r->listed)) {
		mbmpi_req_unlink(r);
		return;
	}
	mbu_pool_put(&mbmpi_req_pool, r);
}

/* A tool counts messages (MPI_T, mbmpi_t.c): a finished receive, unless
 * it was cancelled or failed (a truncated one counts). */
static __attribute__((noinline)) void mbmpi_pv_count(const struct mbmpi_req *r)
{
	if (r->kind == MBMPI_REQ_RECV && !r->status.mbmpi_cancelled &&
	    (!r->err || r->err == MPI_ERR_TRUNCATE)) {
		mbmpi.pv[MBMPI_PV_RECV_MSGS]++;
		mbmpi.pv[MBMPI_PV_RECV_BYTES] += r->status.mbmpi_bytes;
	}
}

/* The same for a receive the engine took at once (no request to count). */
static __attribute__((noinline)) void mbmpi_pv_take(const MPI_Status *st, int err)
{
	if (!err) {
		mbmpi.pv[MBMPI_PV_RECV_MSGS]++;
		mbmpi.pv[MBMPI_PV_RECV_BYTES] += st->mbmpi_bytes;
	}
}

/* Called when the last fabric operation of a request finished. */
void mbmpi_req_done(struct mbmpi_req *r)
{
	/* Read before `complete` is written: the compiler loads these flags
	 * together with it as one word, and a load that overlaps a just-written
	 * byte waits for the store (a quarter of the time at high message rate). */
	bool release = r->internal || r->user_freed;

	if (r->kind == MBMPI_REQ_RECV && r->tmp && !r->status.mbmpi_cancelled) {
		size_t got = r->status.mbmpi_bytes;

		mbmpi_unpack(r->tmp, got < r->tmp_valid ? got : r->tmp_valid, r->buf,
			     (size_t)r->count, r->dt);
	}
	if (MBMPI_UNLIKELY(mbmpi.pv_started))
		mbmpi_pv_count(r);
	if (r->tmp && !r->tmp_is_bsend) {
		mbmpi_tmp_free(r);
		r->tmp = NULL;
	}
	r->status.MPI_ERROR = r->err;
	if (r->rma_cnt) {
		r->rma_cnt->pending--;
		if (r->err && !r->rma_cnt->err)
			r->rma_cnt->err = r->err;
	}
	r->complete = true;
	if (release)
		mbmpi_req_free(r);
}

int mbmpi_progress(void)
{
	return mbmpi_poll();
}

/* ---- Argument checks ---- */

int mbmpi_check_comm(MPI_Comm h, struct mbmpi_comm **out)
{
	struct mbmpi_comm *c = mbmpi_comm(h);

	if (!c || c->refs <= 0)
		return MPI_ERR_COMM;
	*out = c;
	return MPI_SUCCESS;
}

int mbmpi_comm_query(MPI_Comm h, const void *out, struct mbmpi_comm **c, const char *fn)
{
	int ret;

	if (MBMPI_UNLIKELY(!mbmpi.initialized || mbmpi.finalized))
		return mbmpi_err(NULL, MPI_ERR_OTHER, fn);
	if ((ret = mbmpi_check_comm(h, c)))
		return mbmpi_err(NULL, ret, fn);
	if (!out)
		return mbmpi_err(*c, MPI_ERR_ARG, fn);
	return MPI_SUCCESS;
}

static int mbmpi_check_buf(const void *buf, int count, MPI_Datatype dt)
{
	if (count < 0)
		return MPI_ERR_COUNT;
	if (mbmpi_dt_check(dt))
		return MPI_ERR_TYPE;
	/* MPI_BOTTOM (NULL) is legal with derived types built of absolute addresses. */
	if (!buf && count > 0 && (mbmpi_dt(dt)->flags & MBMPI_DT_PREDEF) && mbmpi_dt(dt)->size)
		return MPI_ERR_BUFFER;
	return MPI_SUCCESS;
}

int mbmpi_check_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
		     struct mbmpi_comm *c)
{
	/* Nothing goes to MPI_PROC_NULL, so no datatype is needed for it. */
	int ret = dest == MPI_PROC_NULL && dt == MPI_DATATYPE_NULL ? 0 : mbmpi_check_buf(buf, count, dt);

	if (ret)
		return ret;
	if (tag < 0 || tag > MBMPI_TAG_UB)
		return MPI_ERR_TAG;
	if (dest != MPI_PROC_NULL && (dest < 0 || dest >= c->size))
		return MPI_ERR_RANK;
	return MPI_SUCCESS;
}

int mbmpi_check_recv(const void *buf, int count, MPI_Datatype dt, int src, int tag,
		     struct mbmpi_comm *c)
{
	int ret = src == MPI_PROC_NULL && dt == MPI_DATATYPE_NULL ? 0 : mbmpi_check_buf(buf, count, dt);

	if (ret)
		return ret;
	if (tag != MPI_ANY_TAG && (tag < 0 || tag > MBMPI_TAG_UB))
		return MPI_ERR_TAG;
	if (src != MPI_PROC_NULL && src != MPI_ANY_SOURCE && (src < 0 || src >= c->size))
		return MPI_ERR_RANK;
	return MPI_SUCCESS;
}

/* ---- Starting operations ---- */

static void mbmpi_req_proc_null(struct mbmpi_req *r)
{
	mbmpi_status_empty(&r->status);
	r->status.MPI_SOURCE = MPI_PROC_NULL;
	r->complete = true;
}

/* Readies a request for a (re)start: clears its outcome and points cbuf at
 * contiguous bytes, through a bounce buffer when the layout is not (packed
 * now for a send, unpacked on completion for a receive). *nothing is set
 * for MPI_PROC_NULL, which completes at once. */
static inline __attribute__((always_inline)) int mbmpi_stage(struct mbmpi_req *r, bool send,
							      bool *nothing)
{
	struct mbmpi_dtype *d = r->dt;
	size_t bytes = (size_t)r->count * d->size;

	r->complete = false;
	r->err = MPI_SUCCESS;
	r->outstanding = 0;
	r->frag = false;
	mbmpi_status_empty(&r->status);
	*nothing = r->peer == MPI_PROC_NULL;
	if (*nothing) {
		mbmpi_req_proc_null(r);
		return MPI_SUCCESS;
	}
	r->clen = bytes;
	if (send && MBMPI_UNLIKELY(mbmpi.pv_started)) {
		mbmpi.pv[MBMPI_PV_SENT_MSGS]++;
		mbmpi.pv[MBMPI_PV_SENT_BYTES] += bytes;
	}
	if (r->tmp_is_bsend)
		return MPI_SUCCESS; /* already packed into the attached buffer */
	if (mbmpi_dt_flat(d, r->count)) {
		r->cbuf = (char *)r->buf + mbmpi_dt_start(d);
		return MPI_SUCCESS;
	}
	if (mbmpi.frag_min && bytes >= mbmpi.frag_min && (send || mbmpi.frag_recv)) {
		r->frag = true;
		r->cbuf = NULL;
		return MPI_SUCCESS;
	}
	r->tmp_pooled = bytes <= MBMPI_PACKED_MAX && (r->tmp = mbu_pool_get(&mbmpi_tmp_pool));
	r->tmp_mapped = false;
	if (!send && bytes >= MBMPI_TMP_MAP) {
		r->tmp = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->tmp == MAP_FAILED) {
			r->tmp = NULL;
			return MPI_ERR_NO_MEM;
		}
		r->tmp_mapped = true;
	} else if (!r->tmp_pooled && !(r->tmp = malloc(bytes ? bytes : 1))) {
		return MPI_ERR_NO_MEM;
	}
	r->tmp_valid = SIZE_MAX;
	if (send)
		mbmpi_pack(r->buf, (size_t)r->count, d, r->tmp);
	r->cbuf = r->tmp;
	return MPI_SUCCESS;
}

static int mbmpi_start_send(struct mbmpi_req *r)
{
	bool nothing;
	int ret = mbmpi_stage(r, true, &nothing);

	return ret || nothing ? ret : mbmpi.eng->send(r);
}

static inline __attribute__((always_inline)) int mbmpi_start_recv(struct mbmpi_req *r)
{
	bool nothing;
	int ret = mbmpi_stage(r, false, &nothing);

	return ret || nothing ? ret : mbmpi.eng->recv(r);
}

static inline __attribute__((always_inline)) struct mbmpi_req *
mbmpi_req_new(int kind, const void *buf, int count, struct mbmpi_dtype *dt, int peer, int tag,
	      struct mbmpi_comm *c, uint32_t ctx, int mode)
{
	struct mbmpi_req *r = mbmpi_req_get();

	if (!r)
		return NULL;
	r->kind = kind;
	r->mode = mode;
	r->buf = (void *)buf;
	r->count = count;
	r->dt = dt;
	mbmpi_dt_retain(dt);
	r->peer = peer;
	r->tag = tag;
	r->comm = c;
	mbmpi_comm_retain(c);
	r->ctx = ctx;
	return r;
}

int mbmpi_isend(const void *buf, int count, struct mbmpi_dtype *dt, int dest, int tag,
		struct mbmpi_comm *c, uint32_t ctx, int mode, struct mbmpi_req **out)
{
	struct mbmpi_req *r = mbmpi_req_new(MBMPI_REQ_SEND, buf, count, dt, dest, tag, c, ctx, mode);
	int ret;

	if (!r)
		return MPI_ERR_NO_MEM;
	ret = mbmpi_start_send(r);
	if (ret) {
		mbmpi_req_free(r);
		return ret;
	}
	*out = r;
	return MPI_SUCCESS;
}

/* Inline in MPI_Irecv and MPI_Recv; mbmpi_irecv for the rest of the library. */
static inline __attribute__((always_inline)) int
mbmpi_irecv_in(void *buf, int count, struct mbmpi_dtype *dt, int src, int tag,
	       struct mbmpi_comm *c, uint32_t ctx, struct mbmpi_req **out)
{
	struct mbmpi_req *r = mbmpi_req_new(MBMPI_REQ_RECV, buf, count, dt, src, tag, c, ctx, 0);
	int ret;

	if (!r)
		return MPI_ERR_NO_MEM;
	ret = mbmpi_start_recv(r);
	if (ret) {
		mbmpi_req_free(r);
		return ret;
	}
	*out = r;
	return MPI_SUCCESS;
}

int mbmpi_irecv(void *buf, int count, struct mbmpi_dtype *dt, int src, int tag,
		struct mbmpi_comm *c, uint32_t ctx, struct mbmpi_req **out)
{
	return mbmpi_irecv_in(buf, count, dt, src, tag, c, ctx, out);
}

/* ---- Completion ---- */

static void mbmpi_progress_until(struct mbmpi_req *r)
{
	int spins = 0;

	while (!r->complete) {
		if (!mbmpi_poll())
			mbmpi_idle(&spins);
	}
}

static void mbmpi_copy_status(MPI_Status *st, const struct mbmpi_req *r, bool with_error)
{
	int e;

	if (st == MPI_STATUS_IGNORE)
		return;
	e = st->MPI_ERROR;
	*st = r->status;
	if (!with_error)
		st->MPI_ERROR = e;
}

/* Returns the request's error and releases it unless it is persistent. */
/* A generalized request's status comes from the program's query. */
static int mbmpi_greq_query(struct mbmpi_req *r)
{
	int e;

	mbmpi_status_empty(&r->status);
	e = r->greq.query ? r->greq.query(r->greq.extra, &r->status) : MPI_SUCCESS;
	r->status.MPI_ERROR = e;
	return e;
}

static inline __attribute__((always_inline)) int mbmpi_retire(MPI_Request *h, MPI_Status *st,
							   bool with_error)
{
	struct mbmpi_req *r = *h;
	int err;

	if (r->kind == MBMPI_REQ_GREQ) {
		int e = mbmpi_greq_query(r), f = r->greq.free_fn ? r->greq.free_fn(r->greq.extra) : 0;

		r->err = e ? e : f;
	}

	mbmpi_copy_status(st, r, with_error);
	err = r->err;
	if (r->persistent) {
		r->active = false;
	} else {
		mbmpi_req_free(r);
		*h = MPI_REQUEST_NULL;
	}
	return err;
}

static bool mbmpi_req_inactive(MPI_Request r)
{
	return r == MPI_REQUEST_NULL || (r->persistent && !r->active);
}

int mbmpi_wait(struct mbmpi_req *r, MPI_Status *st)
{
	MPI_Request h = r;

	mbmpi_progress_until(r);
	return mbmpi_retire(&h, st, false);
}

/* The library's own waits (collectives): as soon as one operation has
 * failed, the receives still pending are cancelled rather than waited for,
 * so an unreachable peer turns into an error, not a hang. */
int mbmpi_waitall(int n, struct mbmpi_req **rs)
{
	int err = MPI_SUCCESS, spins = 0;
	bool all, failed;

	for (;;) {
		all = true;
		failed = false;
		for (int i = 0; i < n; i++) {
			if (!rs[i])
				continue;
			if (!rs[i]->complete)
				all = false;
			else if (rs[i]->err)
				failed = true;
		}
		if (all || failed)
			break;
		if (!mbmpi_poll())
			mbmpi_idle(&spins);
	}
	if (failed)
		for (int i = 0; i < n; i++)
			if (rs[i] && !rs[i]->complete && rs[i]->kind == MBMPI_REQ_RECV)
				mbmpi.eng->cancel(rs[i]);
	for (int i = 0; i < n; i++) {
		int e;

		if (!rs[i])
			continue;
		e = mbmpi_wait(rs[i], MPI_STATUS_IGNORE);
		if (e && !err)
			err = e;
		rs[i] = NULL;
	}
	return err;
}

static struct mbmpi_comm *mbmpi_req_comm(MPI_Request r)
{
	return r && r->comm ? r->comm : &mbmpi_comm_world;
}

int PMPI_Wait(MPI_Request *h, MPI_Status *st)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int err;

	MBMPI_CHECK_INIT();
	if (!h)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	if (mbmpi_req_inactive(*h)) {
		if (st != MPI_STATUS_IGNORE)
			mbmpi_status_empty(st);
		return MPI_SUCCESS;
	}
	c = mbmpi_req_comm(*h);
	mbmpi_progress_until(*h);
	err = mbmpi_retire(h, st, false);
	return err ? MBMPI_ERR(c, err) : MPI_SUCCESS;
}
MBMPI_ALIAS(Wait)

int PMPI_Test(MPI_Request *h, int *flag, MPI_Status *st)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int err;

	MBMPI_CHECK_INIT();
	if (!h || !flag)
		return MBMPI_ERR(NULL, !h ? MPI_ERR_REQUEST : MPI_ERR_ARG);
	if (mbmpi_req_inactive(*h)) {
		*flag = 1;
		if (st != MPI_STATUS_IGNORE)
			mbmpi_status_empty(st);
		return MPI_SUCCESS;
	}
	if (!(*h)->complete)
		mbmpi_poll();
	*flag = (*h)->complete;
	if (!*flag)
		return MPI_SUCCESS;
	c = mbmpi_req_comm(*h);
	err = mbmpi_retire(h, st, false);
	return err ? MBMPI_ERR(c, err) : MPI_SUCCESS;
}
MBMPI_ALIAS(Test)

int PMPI_Request_get_status(MPI_Request r, int *flag, MPI_Status *st)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (!flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (mbmpi_req_inactive(r)) {
		*flag = 1;
		if (st != MPI_STATUS_IGNORE)
			mbmpi_status_empty(st);
		return MPI_SUCCESS;
	}
	if (!r->complete)
		mbmpi_poll();
	*flag = r->complete;
	if (*flag && r->kind == MBMPI_REQ_GREQ)
		mbmpi_greq_query(r);
	if (*flag)
		mbmpi_copy_status(st, r, false);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Request_get_status)

int PMPI_Grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
			MPI_Grequest_cancel_function *cancel, void *extra, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_req *r;

	MBMPI_CHECK_INIT();
	if (!req)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!(r = mbmpi_req_alloc()))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	r->kind = MBMPI_REQ_GREQ;
	r->greq = (struct mbmpi_greq){.query = query, .free_fn = free_fn, .cancel = cancel,
				      .extra = extra};
	mbmpi_status_empty(&r->status);
	*req = r;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request req)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (req == MPI_REQUEST_NULL || req->kind != MBMPI_REQ_GREQ || req->complete)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	req->complete = true;
	/* Freed by the program before it completed: nobody will wait. */
	if (req->user_freed) {
		if (req->greq.free_fn)
			req->greq.free_fn(req->greq.extra);
		mbmpi_req_free(req);
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Grequest_complete)

/* Completes every request that is done; reports errors in the statuses. */
static int mbmpi_harvest(int n, MPI_Request *hs, MPI_Status *sts, int *outcount, int *idx,
			 int *nactive)
{
	int err = MPI_SUCCESS, k = 0, active = 0;

	for (int i = 0; i < n; i++) {
		MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[k];

		if (mbmpi_req_inactive(hs[i]))
			continue;
		active++;
		if (!hs[i]->complete)
			continue;
		if (st != MPI_STATUS_IGNORE)
			st->MPI_ERROR = MPI_SUCCESS;
		if (mbmpi_retire(&hs[i], st, true))
			err = MPI_ERR_IN_STATUS;
		if (idx)
			idx[k] = i;
		k++;
	}
	*outcount = k;
	*nactive = active;
	return err;
}

/* Waitall and Testall once everything is done: statuses in order, errors
 * reported per request with MPI_ERR_IN_STATUS. */
static int mbmpi_retire_all(int n, MPI_Request *hs, MPI_Status *sts)
{
	int err = MPI_SUCCESS;

	for (int i = 0; i < n; i++) {
		MPI_Status *st = sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];

		if (mbmpi_req_inactive(hs[i])) {
			if (st != MPI_STATUS_IGNORE)
				mbmpi_status_empty(st);
			continue;
		}
		if (st != MPI_STATUS_IGNORE)
			st->MPI_ERROR = MPI_SUCCESS;
		if (mbmpi_retire(&hs[i], st, true))
			err = MPI_ERR_IN_STATUS;
	}
	return err ? MBMPI_ERR(NULL, err) : MPI_SUCCESS;
}

int PMPI_Waitall(int n, MPI_Request hs[], MPI_Status sts[])
{
	MBMPI_GUARD();
	int spins = 0, i = 0;

	MBMPI_CHECK_INIT();
	if (n < 0 || (n && !hs))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	/* A request stays complete until it is retired below, so each one is
	 * looked at until it is done and never again: a window of n requests
	 * costs n checks in all, not n per poll. */
	for (;;) {
		while (i < n && (mbmpi_req_inactive(hs[i]) || hs[i]->complete))
			i++;
		if (i == n)
			break;
		if (!mbmpi_poll())
			mbmpi_idle(&spins);
	}
	return mbmpi_retire_all(n, hs, sts);
}
MBMPI_ALIAS(Waitall)

int PMPI_Testall(int n, MPI_Request hs[], int *flag, MPI_Status sts[])
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (n < 0 || (n && !hs) || !flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	mbmpi_poll();
	*flag = 1;
	for (int i = 0; i < n && *flag; i++)
		if (!mbmpi_req_inactive(hs[i]) && !hs[i]->complete)
			*flag = 0;
	if (!*flag)
		return MPI_SUCCESS;
	return mbmpi_retire_all(n, hs, sts);
}
MBMPI_ALIAS(Testall)

static int mbmpi_anyone(int n, MPI_Request hs[], int *index, int *flag, MPI_Status *st, bool block)
{
	int spins = 0;

	MBMPI_CHECK_INIT();
	if (n < 0 || (n && !hs) || !index)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	for (;;) {
		bool any_active = false;

		for (int i = 0; i < n; i++) {
			struct mbmpi_comm *c;
			int err;

			if (mbmpi_req_inactive(hs[i]))
				continue;
			any_active = true;
			if (!hs[i]->complete)
				continue;
			c = mbmpi_req_comm(hs[i]);
			*index = i;
			if (flag)
				*flag = 1;
			err = mbmpi_retire(&hs[i], st, false);
			return err ? MBMPI_ERR(c, err) : MPI_SUCCESS;
		}
		if (!any_active) {
			*index = MPI_UNDEFINED;
			if (flag)
				*flag = 1;
			if (st != MPI_STATUS_IGNORE)
				mbmpi_status_empty(st);
			return MPI_SUCCESS;
		}
		if (!mbmpi_poll()) {
			if (!block) {
				*flag = 0;
				*index = MPI_UNDEFINED;
				return MPI_SUCCESS;
			}
			mbmpi_idle(&spins);
		}
	}
}

int PMPI_Waitany(int n, MPI_Request hs[], int *index, MPI_Status *st)
{
	MBMPI_GUARD();
	return mbmpi_anyone(n, hs, index, NULL, st, true);
}
MBMPI_ALIAS(Waitany)

int PMPI_Testany(int n, MPI_Request hs[], int *index, int *flag, MPI_Status *st)
{
	MBMPI_GUARD();
	if (!flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	return mbmpi_anyone(n, hs, index, flag, st, false);
}
MBMPI_ALIAS(Testany)

static int mbmpi_some(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[], bool block)
{
	int spins = 0, active, err;

	MBMPI_CHECK_INIT();
	if (n < 0 || (n && (!hs || !idx)) || !outcount)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	for (;;) {
		mbmpi_poll();
		err = mbmpi_harvest(n, hs, sts, outcount, idx, &active);
		if (!active) {
			*outcount = MPI_UNDEFINED;
			return MPI_SUCCESS;
		}
		if (*outcount || !block)
			return err ? MBMPI_ERR(NULL, err) : MPI_SUCCESS;
		mbmpi_idle(&spins);
	}
}

int PMPI_Waitsome(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[])
{
	MBMPI_GUARD();
	return mbmpi_some(n, hs, outcount, idx, sts, true);
}
MBMPI_ALIAS(Waitsome)

int PMPI_Testsome(int n, MPI_Request hs[], int *outcount, int idx[], MPI_Status sts[])
{
	MBMPI_GUARD();
	return mbmpi_some(n, hs, outcount, idx, sts, false);
}
MBMPI_ALIAS(Testsome)

/* ---- Buffered sends ---- */

int PMPI_Buffer_attach(void *buffer, int size)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (size < 0 || (!buffer && size))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (mbmpi.bbuf)
		return MBMPI_ERR(NULL, MPI_ERR_BUFFER);
	mbmpi.bbuf = buffer;
	mbmpi.bbuf_size = (size_t)size;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Buffer_attach)

/* Whether every buffered send numbered up to `mark` has finished. */
static bool mbmpi_bsends_done(uint64_t mark)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(&mbmpi.bsends, it)
		if (mbu_container_of(it, struct mbmpi_req, link)->bseq <= mark)
			return false;
	return true;
}

/* A buffered send finished: the flushes that waited only for it and older
 * ones complete. */
static void mbmpi_bflush_check(void)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&mbmpi.bflushes, it, tmp) {
		struct mbmpi_req *f = mbu_container_of(it, struct mbmpi_req, link);

		if (mbmpi_bsends_done(f->bseq)) {
			mbu_dlist_remove(it);
			mbmpi_req_done(f);
		}
	}
}

/* Progress until every buffered send numbered up to `mark` has finished. */
static void mbmpi_bsends_wait(uint64_t mark)
{
	int spins = 0;

	while (!mbmpi_bsends_done(mark))
		if (!mbmpi_poll())
			mbmpi_idle(&spins);
}

/* MPI-4.1: wait for (or start waiting for) the buffered sends started so
 * far, keeping the buffer attached. */
int PMPI_Buffer_flush(void)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	mbmpi_bsends_wait(mbmpi.bsend_seq);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Buffer_flush)

int PMPI_Buffer_iflush(MPI_Request *request)
{
	struct mbmpi_req *r;

	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (!request)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (!(r = mbmpi_req_alloc()))
		return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
	r->kind = MBMPI_REQ_BFLUSH;
	mbmpi_status_empty(&r->status);
	r->bseq = mbmpi.bsend_seq;
	r->listed = true;
	mbu_dlist_init(&r->link);
	if (mbmpi_bsends_done(r->bseq))
		r->complete = true;
	else
		mbu_dlist_insert_tail(&r->link, &mbmpi.bflushes);
	*request = r;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Buffer_iflush)

int mbmpi_bsend_detach_wait(void)
{
	mbmpi_bsends_wait(UINT64_MAX);
	return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (!buffer_addr || !size)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	mbmpi_bsend_detach_wait();
	*(void **)buffer_addr = mbmpi.bbuf;
	*size = (int)mbmpi.bbuf_size;
	mbmpi.bbuf = NULL;
	mbmpi.bbuf_size = 0;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Buffer_detach)

/* First fit over the gaps between live buffered sends, kept in address
 * order; every message is charged MPI_BSEND_OVERHEAD as the standard says. */
static char *mbmpi_bsend_space(size_t need, struct mbu_dlist **before)
{
	char *at = mbmpi.bbuf, *end = mbmpi.bbuf + mbmpi.bbuf_size;
	struct mbu_dlist *it;

	need += MPI_BSEND_OVERHEAD;
	mbu_dlist_foreach(&mbmpi.bsends, it) {
		struct mbmpi_req *r = mbu_container_of(it, struct mbmpi_req, link);
		char *start = (char *)r->tmp;

		if ((size_t)(start - at) >= need) {
			*before = it;
			return at;
		}
		at = start + r->clen + MPI_BSEND_OVERHEAD;
	}
	if (at <= end && (size_t)(end - at) >= need) {
		*before = &mbmpi.bsends;
		return at;
	}
	return NULL;
}

static int mbmpi_bsend_start(const void *buf, int count, struct mbmpi_dtype *dt, int dest, int tag,
			     struct mbmpi_comm *c)
{
	size_t bytes = (size_t)count * dt->size;
	struct mbu_dlist *before;
	struct mbmpi_req *r;
	char *space;
	int ret;

	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	mbmpi_poll(); /* frees the space of finished sends */
	space = mbmpi_bsend_space(bytes, &before);
	if (!space)
		return MPI_ERR_BUFFER;
	r = mbmpi_req_new(MBMPI_REQ_SEND, buf, count, dt, dest, tag, c, c->ctx, MBMPI_STD);
	if (!r)
		return MPI_ERR_NO_MEM;
	mbmpi_pack(buf, (size_t)count, dt, space);
	r->tmp = space;
	r->tmp_is_bsend = true;
	r->listed = true;
	r->bseq = ++mbmpi.bsend_seq;
	r->cbuf = space;
	r->internal = true;
	mbu_dlist_insert_tail(&r->link, before);
	ret = mbmpi_start_send(r);
	return ret;
}

/* ---- The send and receive calls ---- */

/* What a send the engine's inject answered (ret >= 0) returns. */
static inline __attribute__((always_inline)) int mbmpi_injected(struct mbmpi_comm *c, int ret,
								size_t len, MPI_Request *out)
{
	if (ret > 0)
		return MBMPI_ERR(c, ret);
	if (MBMPI_UNLIKELY(mbmpi.pv_started)) {
		mbmpi.pv[MBMPI_PV_SENT_MSGS]++;
		mbmpi.pv[MBMPI_PV_SENT_BYTES] += len;
	}
	if (out)
		*out = &mbmpi_req_sent;
	return MPI_SUCCESS;
}

/* A small non-contiguous message packed on the stack and handed to the
 * engine's inject; the engine's answer as from inject. Out of line, so
 * that the buffer is no part of the common calls' frames. */
static __attribute__((noinline)) int mbmpi_inject_packed(struct mbmpi_comm *c, int dest, int tag,
							 const void *buf, int count,
							 const struct mbmpi_dtype *d)
{
	_Alignas(16) char packed[MBMPI_PACKED_MAX];

	mbmpi_pack(buf, (size_t)count, d, packed);
	return mbmpi.eng->inject(c, dest, tag, packed, (size_t)count * d->size);
}

/* Its receiving counterpart: a small message already waiting for a
 * non-contiguous receive, taken onto the stack and unpacked. Returns as
 * mbmpi_recv_take does (-1: nothing taken, nothing changed). */
static __attribute__((noinline)) int mbmpi_take_packed(void *buf, int count, struct mbmpi_dtype *d,
						       int src, int tag, struct mbmpi_comm *c,
						       MPI_Request *out, MPI_Status *st)
{
	_Alignas(16) char packed[MBMPI_PACKED_MAX];
	struct mbmpi_req *r = NULL;
	MPI_Status mine;
	int ret;

	if (out) {
		r = mbmpi_req_new(MBMPI_REQ_RECV, buf, count, d, src, tag, c, c->ctx, 0);
		if (!r)
			return MPI_ERR_NO_MEM;
		st = &r->status;
	} else if (st == MPI_STATUS_IGNORE) {
		st = &mine;
	}
	ret = mbmpi.eng->take(c, c->ctx, src, tag, packed, (size_t)count * d->size, st);
	if (ret < 0) {
		if (r)
			mbmpi_req_free(r);
		return -1;
	}
	mbmpi_unpack(packed, st->mbmpi_bytes, buf, (size_t)count, d);
	if (MBMPI_UNLIKELY(mbmpi.pv_started))
		mbmpi_pv_take(st, ret);
	if (!r)
		return ret;
	r->err = r->status.MPI_ERROR = ret;
	r->complete = true;
	*out = r;
	return MPI_SUCCESS;
}

/* Inline in MPI_Send, MPI_Isend, MPI_Recv and MPI_Irecv, whose mode and
 * flags are constants there (about 20 instructions a call); the other
 * modes share one copy (mbmpi_send_other). */
static inline __attribute__((always_inline)) int
mbmpi_send_common(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		  int mode, MPI_Request *out, bool persistent)
{
	struct mbmpi_comm *c;
	struct mbmpi_req *r;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if ((ret = mbmpi_check_send(buf, count, dt, dest, tag, c)))
		return MBMPI_ERR(c, ret);
	if (persistent || (mode == MBMPI_BUF && out)) {
		if (!out)
			return MBMPI_ERR(c, MPI_ERR_ARG);
		r = mbmpi_req_new(MBMPI_REQ_SEND, buf, count, mbmpi_dt(dt), dest, tag, c, c->ctx, mode);
		if (!r)
			return MBMPI_ERR(c, MPI_ERR_NO_MEM);
		r->persistent = persistent;
		if (!persistent) {
			/* Ibsend: done once the data sits in the attached buffer. */
			ret = mbmpi_bsend_start(buf, count, mbmpi_dt(dt), dest, tag, c);
			if (ret) {
				mbmpi_req_free(r);
				return MBMPI_ERR(c, ret);
			}
			r->complete = true;
			mbmpi_status_empty(&r->status);
		}
		*out = r;
		return MPI_SUCCESS;
	}
	if (mode == MBMPI_BUF) {
		ret = mbmpi_bsend_start(buf, count, mbmpi_dt(dt), dest, tag, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	/* A few contiguous bytes in standard or ready mode: handed to the
	 * provider to copy at once, with no request to allocate, complete and
	 * wait for (MPI_Isend returns the shared completed request). */
	if (mode != MBMPI_SYNC && dest != MPI_PROC_NULL && mbmpi.eng->inject) {
		struct mbmpi_dtype *d = mbmpi_dt(dt);
		size_t len = (size_t)count * d->size;

		if (mbmpi_dt_flat(d, count)) {
			ret = mbmpi.eng->inject(c, dest, tag,
						(const char *)buf + mbmpi_dt_start(d), len);
			if (ret >= 0)
				return mbmpi_injected(c, ret, len, out);
		} else if (len <= mbmpi.inject_max) {
			ret = mbmpi_inject_packed(c, dest, tag, buf, count, d);
			if (ret >= 0)
				return mbmpi_injected(c, ret, len, out);
		}
	}
	ret = mbmpi_isend(buf, count, mbmpi_dt(dt), dest, tag, c, c->ctx, mode, &r);
	if (ret)
		return MBMPI_ERR(c, ret);
	if (out) {
		*out = r;
		return MPI_SUCCESS;
	}
	ret = mbmpi_wait(r, MPI_STATUS_IGNORE);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}

static __attribute__((noinline)) int mbmpi_send_other(const void *buf, int count, MPI_Datatype dt,
						     int dest, int tag, MPI_Comm comm, int mode,
						     MPI_Request *out, bool persistent)
{
	return mbmpi_send_common(buf, count, dt, dest, tag, comm, mode, out, persistent);
}

#define MBMPI_SEND_FN(name, mode, reqarg, reqval, pers, fn)                                    \
	int PMPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, int tag,         \
			MPI_Comm comm reqarg)                                                   \
	{                                                                                       \
		MBMPI_GUARD();                                                                  \
		return fn(buf, count, dt, dest, tag, comm, mode, reqval, pers);                 \
	}                                                                                       \
	MBMPI_ALIAS(name)

#define MBMPI_NOREQ
#define MBMPI_REQ , MPI_Request *req
MBMPI_SEND_FN(Send, MBMPI_STD, MBMPI_NOREQ, NULL, false, mbmpi_send_common)
MBMPI_SEND_FN(Ssend, MBMPI_SYNC, MBMPI_NOREQ, NULL, false, mbmpi_send_other)
MBMPI_SEND_FN(Rsend, MBMPI_READY, MBMPI_NOREQ, NULL, false, mbmpi_send_other)
MBMPI_SEND_FN(Bsend, MBMPI_BUF, MBMPI_NOREQ, NULL, false, mbmpi_send_other)
MBMPI_SEND_FN(Isend, MBMPI_STD, MBMPI_REQ, req, false, mbmpi_send_common)
MBMPI_SEND_FN(Issend, MBMPI_SYNC, MBMPI_REQ, req, false, mbmpi_send_other)
MBMPI_SEND_FN(Irsend, MBMPI_READY, MBMPI_REQ, req, false, mbmpi_send_other)
MBMPI_SEND_FN(Ibsend, MBMPI_BUF, MBMPI_REQ, req, false, mbmpi_send_other)
MBMPI_SEND_FN(Send_init, MBMPI_STD, MBMPI_REQ, req, true, mbmpi_send_other)
MBMPI_SEND_FN(Ssend_init, MBMPI_SYNC, MBMPI_REQ, req, true, mbmpi_send_other)
MBMPI_SEND_FN(Rsend_init, MBMPI_READY, MBMPI_REQ, req, true, mbmpi_send_other)
MBMPI_SEND_FN(Bsend_init, MBMPI_BUF, MBMPI_REQ, req, true, mbmpi_send_other)

/* A receive of contiguous bytes that a message already waiting completes
 * in the call, as OB1 takes one from its unexpected queue: MPI_Recv (out
 * NULL) needs no request at all, MPI_Irecv gets one born complete. Returns
 * MPI_SUCCESS, an MPI error class, or -1 when the engine found nothing to
 * take (nothing done: the caller receives the ordinary way). Inline: as a
 * call of its own it cost the receives it serves 30 instructions and saved
 * the others 6 (bench/callgrind_pair.sh). */
static inline __attribute__((always_inline)) int
mbmpi_recv_take(void *buf, int count, struct mbmpi_dtype *d, int src, int tag,
		struct mbmpi_comm *c, MPI_Request *out, MPI_Status *st)
{
	void *at = (char *)buf + mbmpi_dt_start(d);
	size_t len = (size_t)count * d->size;
	struct mbmpi_req *r;
	MPI_Status mine;
	int ret;

	if (!out) {
		if (st == MPI_STATUS_IGNORE)
			st = &mine;
		ret = mbmpi.eng->take(c, c->ctx, src, tag, at, len, st);
		if (ret >= 0 && MBMPI_UNLIKELY(mbmpi.pv_started))
			mbmpi_pv_take(st, ret);
		return ret;
	}
	r = mbmpi_req_new(MBMPI_REQ_RECV, buf, count, d, src, tag, c, c->ctx, 0);
	if (!r)
		return MPI_ERR_NO_MEM;
	ret = mbmpi.eng->take(c, c->ctx, src, tag, at, len, &r->status);
	if (ret < 0) {
		ret = mbmpi_start_recv(r);
	} else {
		r->err = r->status.MPI_ERROR = ret;
		r->complete = true;
		if (MBMPI_UNLIKELY(mbmpi.pv_started))
			mbmpi_pv_take(&r->status, ret);
		ret = MPI_SUCCESS;
	}
	if (ret) {
		mbmpi_req_free(r);
		return ret;
	}
	*out = r;
	return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int
mbmpi_recv_common(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
		  MPI_Request *out, MPI_Status *st, bool persistent)
{
	struct mbmpi_comm *c;
	struct mbmpi_req *r;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if ((ret = mbmpi_check_recv(buf, count, dt, src, tag, c)))
		return MBMPI_ERR(c, ret);
	if (persistent) {
		if (!out)
			return MBMPI_ERR(c, MPI_ERR_ARG);
		r = mbmpi_req_new(MBMPI_REQ_RECV, buf, count, mbmpi_dt(dt), src, tag, c, c->ctx, 0);
		if (!r)
			return MBMPI_ERR(c, MPI_ERR_NO_MEM);
		r->persistent = true;
		*out = r;
		return MPI_SUCCESS;
	}
	/* A message already waiting is copied out in the call: straight into
	 * contiguous bytes (mbmpi_recv_take), through the stack into a small
	 * non-contiguous layout (mbmpi_take_packed). */
	if (mbmpi.waiting && __atomic_load_n(mbmpi.waiting, __ATOMIC_RELAXED) &&
	    src != MPI_PROC_NULL) {
		struct mbmpi_dtype *d = mbmpi_dt(dt);

		if (MBMPI_LIKELY(mbmpi_dt_flat(d, (size_t)count))) {
			ret = mbmpi_recv_take(buf, count, d, src, tag, c, out, st);
			if (ret >= 0)
				return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
		} else if ((size_t)count * d->size <= MBMPI_PACKED_MAX) {
			ret = mbmpi_take_packed(buf, count, d, src, tag, c, out, st);
			if (ret >= 0)
				return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
		}
	}
	ret = mbmpi_irecv_in(buf, count, mbmpi_dt(dt), src, tag, c, c->ctx, &r);
	if (ret)
		return MBMPI_ERR(c, ret);
	if (out) {
		*out = r;
		return MPI_SUCCESS;
	}
	ret = mbmpi_wait(r, st);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	MBMPI_GUARD();
	return mbmpi_recv_common(buf, count, dt, src, tag, comm, NULL, st, false);
}
MBMPI_ALIAS(Recv)

int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	if (!req)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	return mbmpi_recv_common(buf, count, dt, src, tag, comm, req, MPI_STATUS_IGNORE, false);
}
MBMPI_ALIAS(Irecv)

int PMPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
		   MPI_Request *req)
{
	MBMPI_GUARD();
	return mbmpi_recv_common(buf, count, dt, src, tag, comm, req, MPI_STATUS_IGNORE, true);
}
MBMPI_ALIAS(Recv_init)

int PMPI_Start(MPI_Request *h)
{
	MBMPI_GUARD();
	struct mbmpi_req *r;
	int ret;

	MBMPI_CHECK_INIT();
	if (!h || !*h || !(*h)->persistent || (*h)->active)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	r = *h;
	r->active = true;
	if (r->kind == MBMPI_REQ_PCOLL) {
		ret = mbmpi_pcoll_start(r);
	} else if (r->kind == MBMPI_REQ_RECV) {
		ret = mbmpi_start_recv(r);
	} else if (r->mode == MBMPI_BUF) {
		ret = mbmpi_bsend_start(r->buf, r->count, r->dt, r->peer, r->tag, r->comm);
		mbmpi_status_empty(&r->status);
		r->err = MPI_SUCCESS;
		r->complete = true;
	} else {
		ret = mbmpi_start_send(r);
	}
	if (ret) {
		r->active = false;
		return MBMPI_ERR(r->comm, ret);
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Start)

int PMPI_Startall(int n, MPI_Request hs[])
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (n < 0 || (n && !hs))
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	for (int i = 0; i < n; i++)
		if (!hs[i] || !hs[i]->persistent || hs[i]->active)
			return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	for (int i = 0; i < n; i++) {
		int ret = PMPI_Start(&hs[i]);
		if (ret)
			return ret;
	}
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Startall)

int PMPI_Request_free(MPI_Request *h)
{
	MBMPI_GUARD();
	struct mbmpi_req *r;

	MBMPI_CHECK_INIT();
	if (!h || *h == MPI_REQUEST_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	r = *h;
	if (r->kind == MBMPI_REQ_GREQ && r->complete && r->greq.free_fn)
		r->greq.free_fn(r->greq.extra);
	if (r->complete || (r->persistent && !r->active))
		mbmpi_req_free(r);
	else
		r->user_freed = true;
	*h = MPI_REQUEST_NULL;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Request_free)

int PMPI_Cancel(MPI_Request *h)
{
	MBMPI_GUARD();
	MBMPI_CHECK_INIT();
	if (!h || *h == MPI_REQUEST_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	if ((*h)->kind == MBMPI_REQ_GREQ) {
		int e = (*h)->greq.cancel ? (*h)->greq.cancel((*h)->greq.extra, (*h)->complete) : 0;

		return e ? MBMPI_ERR(NULL, e) : MPI_SUCCESS;
	}
	/* Sends are never cancelled (deprecated in MPI-4); the send completes. */
	if ((*h)->kind != MBMPI_REQ_RECV || mbmpi_req_inactive(*h))
		return MPI_SUCCESS;
	return mbmpi.eng->cancel(*h);
}
MBMPI_ALIAS(Cancel)

int PMPI_Test_cancelled(const MPI_Status *st, int *flag)
{
	MBMPI_GUARD();
	if (!st || !flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	*flag = st->mbmpi_cancelled;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Test_cancelled)

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
		  int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *st)
{
	MBMPI_GUARD();
	struct mbmpi_req *rr, *sr;
	struct mbmpi_comm *c;
	int ret, e1, e2;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if ((ret = mbmpi_check_send(sbuf, scount, stype, dest, stag, c)) ||
	    (ret = mbmpi_check_recv(rbuf, rcount, rtype, src, rtag, c)))
		return MBMPI_ERR(c, ret);
	if ((ret = mbmpi_irecv(rbuf, rcount, mbmpi_dt(rtype), src, rtag, c, c->ctx, &rr)))
		return MBMPI_ERR(c, ret);
	if ((ret = mbmpi_isend(sbuf, scount, mbmpi_dt(stype), dest, stag, c, c->ctx, MBMPI_STD, &sr))) {
		mbmpi.eng->cancel(rr);
		mbmpi_wait(rr, MPI_STATUS_IGNORE);
		return MBMPI_ERR(c, ret);
	}
	e1 = mbmpi_wait(sr, MPI_STATUS_IGNORE);
	e2 = mbmpi_wait(rr, st);
	return e2 ? MBMPI_ERR(c, e2) : e1 ? MBMPI_ERR(c, e1) : MPI_SUCCESS;
}
MBMPI_ALIAS(Sendrecv)

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
			  int rtag, MPI_Comm comm, MPI_Status *st)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_dtype *d;
	struct mbmpi_req *rr, *sr;
	void *tmp;
	int ret, e1, e2;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if ((ret = mbmpi_check_send(buf, count, dt, dest, stag, c)) ||
	    (ret = mbmpi_check_recv(buf, count, dt, src, rtag, c)))
		return MBMPI_ERR(c, ret);
	d = mbmpi_dt(dt);
	tmp = malloc((size_t)count * d->size + 1);
	if (!tmp)
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	mbmpi_pack(buf, (size_t)count, d, tmp);
	if ((ret = mbmpi_irecv(buf, count, d, src, rtag, c, c->ctx, &rr))) {
		free(tmp);
		return MBMPI_ERR(c, ret);
	}
	ret = mbmpi_isend(tmp, (int)((size_t)count * d->size), mbmpi_dt(MPI_BYTE), dest, stag, c,
			  c->ctx, MBMPI_STD, &sr);
	if (ret) {
		mbmpi.eng->cancel(rr);
		mbmpi_wait(rr, MPI_STATUS_IGNORE);
		free(tmp);
		return MBMPI_ERR(c, ret);
	}
	e1 = mbmpi_wait(sr, MPI_STATUS_IGNORE);
	e2 = mbmpi_wait(rr, st);
	free(tmp);
	return e2 ? MBMPI_ERR(c, e2) : e1 ? MBMPI_ERR(c, e1) : MPI_SUCCESS;
}
MBMPI_ALIAS(Sendrecv_replace)

/* ---- Probes ---- */

static int mbmpi_probe_common(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
			      MPI_Status *st, bool block)
{
	struct mbmpi_comm *c;
	struct mbmpi_msg *m = NULL;
	MPI_Status tmp = {.MPI_ERROR = MPI_SUCCESS};
	int ret, spins = 0, f = 0;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (tag != MPI_ANY_TAG && (tag < 0 || tag > MBMPI_TAG_UB))
		return MBMPI_ERR(c, MPI_ERR_TAG);
	if (src != MPI_PROC_NULL && src != MPI_ANY_SOURCE && (src < 0 || src >= c->size))
		return MBMPI_ERR(c, MPI_ERR_RANK);
	if (st == MPI_STATUS_IGNORE)
		st = &tmp;
	if (src == MPI_PROC_NULL) {
		/* A call that returns one status leaves its error field alone. */
		int e = st->MPI_ERROR;

		mbmpi_status_empty(st);
		st->MPI_SOURCE = MPI_PROC_NULL;
		st->MPI_ERROR = e;
		if (flag)
			*flag = 1;
		if (msg)
			*msg = MPI_MESSAGE_NO_PROC;
		return MPI_SUCCESS;
	}
	for (;;) {
		ret = mbmpi.eng->probe(c, src, tag, msg != NULL, &f, st, &m);
		if (ret)
			return MBMPI_ERR(c, ret);
		if (f)
			break;
		if (!block) {
			/* A program waiting in an Iprobe loop moves collectives on too. */
			if (MBMPI_UNLIKELY(mbmpi_nbc_live))
				mbmpi_poll();
			break;
		}
		if (!mbmpi_poll())
			mbmpi_idle(&spins);
	}
	if (flag)
		*flag = f;
	if (msg)
		*msg = f ? m : MPI_MESSAGE_NULL;
	return MPI_SUCCESS;
}

int PMPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	MBMPI_GUARD();
	return mbmpi_probe_common(src, tag, comm, NULL, NULL, st, true);
}
MBMPI_ALIAS(Probe)

int PMPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st)
{
	MBMPI_GUARD();
	if (!flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	return mbmpi_probe_common(src, tag, comm, flag, NULL, st, false);
}
MBMPI_ALIAS(Iprobe)

int PMPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st)
{
	MBMPI_GUARD();
	if (!msg)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	return mbmpi_probe_common(src, tag, comm, NULL, msg, st, true);
}
MBMPI_ALIAS(Mprobe)

int PMPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *st)
{
	MBMPI_GUARD();
	if (!msg || !flag)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	return mbmpi_probe_common(src, tag, comm, flag, msg, st, false);
}
MBMPI_ALIAS(Improbe)

/* MPI_Imrecv of a message the engine began to receive before it, into a
 * temporary (struct mbmpi_msg): that receive becomes the program's, its
 * bytes unpacked into buf as it completes, or now if it has. */
static void mbmpi_early_adopt(struct mbmpi_req *r, void *buf, int count, struct mbmpi_dtype *d)
{
	size_t room = (size_t)count * d->size;

	r->buf = buf;
	r->count = count;
	r->dt = d;
	mbmpi_dt_retain(d);
	if (r->clen > room) {
		/* Its pieces not yet posted take no more than fits; one that
		 * lands past room is not unpacked. */
		r->clen = room;
		r->err = MPI_ERR_TRUNCATE;
		if (r->status.mbmpi_bytes > room)
			r->status.mbmpi_bytes = room;
	}
	r->tmp = r->cbuf;
	r->tmp_pooled = r->tmp_mapped = false;
	r->tmp_valid = SIZE_MAX;
	if (r->complete) {
		if (!r->status.mbmpi_cancelled)
			mbmpi_unpack(r->tmp, r->status.mbmpi_bytes, buf, (size_t)count, d);
		mbmpi_tmp_free(r);
		r->tmp = NULL;
		r->status.MPI_ERROR = r->err;
	}
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_msg *m;
	struct mbmpi_req *r;
	int ret;

	MBMPI_CHECK_INIT();
	if (!msg || !req || *msg == MPI_MESSAGE_NULL)
		return MBMPI_ERR(NULL, MPI_ERR_REQUEST);
	if ((ret = mbmpi_check_buf(buf, count, dt)))
		return MBMPI_ERR(NULL, ret);
	if (*msg == MPI_MESSAGE_NO_PROC) {
		r = mbmpi_req_alloc();
		if (!r)
			return MBMPI_ERR(NULL, MPI_ERR_NO_MEM);
		mbmpi_req_proc_null(r);
		*msg = MPI_MESSAGE_NULL;
		*req = r;
		return MPI_SUCCESS;
	}
	m = *msg;
	if (m->early) {
		mbmpi_early_adopt(m->early, buf, count, mbmpi_dt(dt));
		*req = m->early;
		free(m);
		*msg = MPI_MESSAGE_NULL;
		return MPI_SUCCESS;
	}
	r = mbmpi_req_new(MBMPI_REQ_RECV, buf, count, mbmpi_dt(dt), m->status.MPI_SOURCE,
			  m->status.MPI_TAG, m->comm, m->comm->ctx, 0);
	if (!r)
		return MBMPI_ERR(m->comm, MPI_ERR_NO_MEM);
	r->claimed = m->fop;
	ret = mbmpi_start_recv(r);
	if (ret) {
		r->claimed = NULL;
		mbmpi_req_free(r);
		return MBMPI_ERR(m->comm, ret);
	}
	free(m);
	*msg = MPI_MESSAGE_NULL;
	*req = r;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Imrecv)

int PMPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *st)
{
	MBMPI_GUARD();
	MPI_Request r;
	struct mbmpi_comm *c = msg && *msg && *msg != MPI_MESSAGE_NO_PROC ? (*msg)->comm : NULL;
	int ret = PMPI_Imrecv(buf, count, dt, msg, &r);

	if (ret)
		return ret;
	ret = mbmpi_wait(r, st);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Mrecv)

/* ---- Status queries ---- */

int PMPI_Get_count(const MPI_Status *st, MPI_Datatype dt, int *count)
{
	MBMPI_GUARD();
	struct mbmpi_dtype *d;

	if (!st || !count)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (mbmpi_dt_check(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	d = mbmpi_dt(dt);
	if (!d->size)
		*count = st->mbmpi_bytes ? MPI_UNDEFINED : 0;
	else if (st->mbmpi_bytes % d->size || st->mbmpi_bytes / d->size > INT_MAX)
		*count = MPI_UNDEFINED;
	else
		*count = (int)(st->mbmpi_bytes / d->size);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Get_count)

int PMPI_Get_elements_x(const MPI_Status *st, MPI_Datatype dt, MPI_Count *count)
{
	MBMPI_GUARD();
	bool exact;
	size_t n;

	if (!st || !count)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	if (mbmpi_dt_check(dt))
		return MBMPI_ERR(NULL, MPI_ERR_TYPE);
	n = mbmpi_elements(mbmpi_dt(dt), st->mbmpi_bytes, &exact);
	*count = exact ? (MPI_Count)n : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Get_elements_x)

int PMPI_Get_elements(const MPI_Status *st, MPI_Datatype dt, int *count)
{
	MBMPI_GUARD();
	MPI_Count n;
	int ret = PMPI_Get_elements_x(st, dt, &n);

	/* Too many for an int: MPI_UNDEFINED (MPI-3.1 4.1.11). */
	if (!ret)
		*count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return ret;
}
MBMPI_ALIAS(Get_elements)

/* The bytes `count` basic elements of dt fill: whole instances, then the
 * leading elements of one more, so that Get_elements answers count. */
int mbmpi_status_set_elements(MPI_Status *st, MPI_Datatype dt, MPI_Count count)
{
	struct mbmpi_dtype *d;
	size_t whole, rest, bytes;

	if (!st || count < 0)
		return MPI_ERR_ARG;
	if (mbmpi_dt_check(dt))
		return MPI_ERR_TYPE;
	d = mbmpi_dt(dt);
	if (!d->nelem) {
		st->mbmpi_bytes = 0;
		return count ? MPI_ERR_COUNT : MPI_SUCCESS;
	}
	whole = (size_t)count / d->nelem;
	rest = (size_t)count % d->nelem;
	bytes = whole * d->size;
	/* Whole copies of a repeated block first. */
	{
		size_t reps = mbmpi_dt_reps(d), per = d->nelem / reps;

		bytes += rest / per * (d->size / reps);
		rest %= per;
	}
	for (int s = 0; s < d->nseg && rest; s++) {
		size_t esz = mbmpi_predef_types[d->segs[s].basic].size;
		size_t n = esz ? d->segs[s].len / esz : 0;

		n = n < rest ? n : rest;
		bytes += n * esz;
		rest -= n;
	}
	st->mbmpi_bytes = bytes;
	return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *st, MPI_Datatype dt, int count)
{
	MBMPI_GUARD();
	int ret = mbmpi_status_set_elements(st, dt, count);

	return ret ? MBMPI_ERR(NULL, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Status_set_elements)

int PMPI_Status_set_cancelled(MPI_Status *st, int flag)
{
	MBMPI_GUARD();
	if (!st)
		return MBMPI_ERR(NULL, MPI_ERR_ARG);
	st->mbmpi_cancelled = flag != 0;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Status_set_cancelled)
