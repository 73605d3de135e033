/*
 * Non-blocking collectives as schedules: each call builds, from the caller's
 * arguments, a list of point-to-point steps (sends and receives on the
 * communicator's collective context), local steps (reductions, copies) and
 * wait marks, then posts the first round and returns a request. Wherever the
 * engine is polled (MPI_Test, MPI_Wait, probes, other collectives),
 * mbmpi_nbc_progress() posts a schedule's next round once every operation of
 * the current one has finished, so a collective moves forward while the
 * program computes and tests, not only inside MPI_Wait. Each call takes the
 * communicator's next collective sequence number as its tag: MPI orders
 * collectives alike on every rank, so two outstanding collectives, or one and
 * a blocking collective, never match each other's messages. Everything a step
 * needs is captured when the schedule is built; the caller's count and
 * displacement arrays are not read again. Algorithms favour few rounds:
 * dissemination barrier, binomial bcast and reduce (rank-ordered for
 * non-commutative ops), recursive doubling for commutative allreduce on a
 * power-of-two count of ranks, recursive-doubling scan, and every transfer of
 * the gathers, scatters and all-to-alls posted in one round.
 *
 * On an intercommunicator a schedule mixes steps between the groups (on the
 * intercommunicator) with steps inside this process's group (on its local
 * communicator, s->on): reductions and broadcasts go through each group's
 * leader (local rank 0), as the blocking versions in mbmpi_inter.c do, and
 * gathers, scatters and all-to-alls go straight between the members.
 */
#include "mbmpi.h"

/* S_CALL: a function of the library's own, run when the steps before it
 * are done (what a collective like Comm_idup does with its result). */
enum { S_SEND = 1, S_RECV, S_WAIT, S_OP, S_COPY, S_CALL };

struct nbc_step {
	int type;
	bool local;			/* on the intercommunicator's local group */
	int peer, tagoff;
	bool p2p;			/* the user's message: its tag, the point-to-point context */
	int utag;
	int count, dcount;
	struct mbmpi_dtype *dt, *ddt;	/* ddt: the destination layout of a copy */
	const void *src;
	void *dst;
	MPI_Op op;
	MPI_Datatype dth;		/* the handle an op is applied with */
	int (*call)(void *arg);
};

struct nbc_sched {
	struct mbmpi_req *req;
	struct mbmpi_comm *comm;
	struct mbmpi_comm *on;		/* the ranks the builders address: comm or comm->local */
	int tag;
	int err;
	int n, cap, next;
	struct nbc_step *steps;
	int nlive, cap_live;
	struct mbmpi_req **live;
	int depth;			/* nbc_depth when it started */
	int nbufs, cap_bufs;
	void **bufs;
	struct mbu_dlist link;
	void (*fini)(void *arg);	/* run when the schedule is freed */
	void *fini_arg;
	/* MPI_Isendrecv: the request reports its receive's status. */
	bool recv_status;
	MPI_Status rst;
};

int mbmpi_nbc_live;
static struct mbu_dlist nbc_active = { &nbc_active, &nbc_active };
/* How many frames of schedule progress are under way (the library's lock
 * makes them one thread's at a time). A step may call back into the
 * program (a user op, an attribute copy callback as Comm_idup ends), and
 * the callback may start and wait for schedules of its own; progress from
 * inside a step moves on only schedules started at that depth or deeper,
 * never the ones whose steps are running further up. */
static int nbc_depth;

#define NBC_TAG_BASE 0x100
#define NBC_TAGS 256
#define BYTE_DT (&mbmpi_predef_types[4])

static MPI_Datatype dt_handle(struct mbmpi_dtype *d)
{
	if (d >= mbmpi_predef_types && d < mbmpi_predef_types + MBMPI_NUM_PREDEF_TYPES)
		return (MPI_Datatype)(uintptr_t)(d - mbmpi_predef_types);
	return (MPI_Datatype)d;
}

/* ---- Building ---- */

/* A persistent collective's start (mbmpi_pcoll.c) builds its schedule with
 * the sequence number its init reserved, into its own request: starts of
 * different persistent collectives may come in any order on each rank. */
static bool nbc_pinned;
static uint32_t nbc_pin_seq;
static struct mbmpi_req *nbc_pin_req;

void mbmpi_nbc_pin(bool on, uint32_t seq, struct mbmpi_req *into)
{
	nbc_pinned = on;
	nbc_pin_seq = seq;
	nbc_pin_req = on ? into : NULL;
}

static struct nbc_sched *s_new(struct mbmpi_comm *c)
{
	struct nbc_sched *s = calloc(1, sizeof(*s));
	uint32_t seq;

	if (!s)
		return NULL;
	s->comm = c;
	s->on = c;
	mbmpi_comm_retain(c);
	seq = nbc_pinned ? nbc_pin_seq : c->nbc_seq++;
	nbc_pinned = false;
	/* 256 tags per collective: a neighbourhood collective tells the two
	 * directions of each Cartesian dimension apart by them. */
	s->tag = NBC_TAG_BASE + (int)(seq % (1u << 22)) * NBC_TAGS;
	mbu_dlist_init(&s->link);
	return s;
}

static bool s_grow(void **p, int *cap, int need, size_t each)
{
	void *q;
	int ncap;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	q = realloc(*p, (size_t)ncap * each);
	if (!q)
		return false;
	*p = q;
	*cap = ncap;
	return true;
}

static struct nbc_step *s_add(struct nbc_sched *s, int type)
{
	struct nbc_step *st;

	if (s->err)
		return NULL;
	if (!s_grow((void **)&s->steps, &s->cap, s->n + 1, sizeof(*s->steps))) {
		s->err = MPI_ERR_NO_MEM;
		return NULL;
	}
	st = &s->steps[s->n++];
	memset(st, 0, sizeof(*st));
	st->type = type;
	return st;
}

static struct nbc_step *s_xfer(struct nbc_sched *s, int type, const void *buf, int count,
			       struct mbmpi_dtype *d, int peer)
{
	struct nbc_step *st = s_add(s, type);

	if (!st)
		return NULL;
	st->src = buf;
	st->dst = (void *)buf;
	st->count = count;
	st->dt = d;
	st->peer = peer;
	st->local = s->on != s->comm;
	mbmpi_dt_retain(d);
	return st;
}

static void s_send(struct nbc_sched *s, const void *buf, int count, struct mbmpi_dtype *d, int peer)
{
	s_xfer(s, S_SEND, buf, count, d, peer);
}

static void s_recv(struct nbc_sched *s, void *buf, int count, struct mbmpi_dtype *d, int peer)
{
	s_xfer(s, S_RECV, buf, count, d, peer);
}

/* Everything posted so far finishes before any later step runs. */
static void s_wait(struct nbc_sched *s)
{
	if (s->n && s->steps[s->n - 1].type != S_WAIT)
		s_add(s, S_WAIT);
}

/* inout = in op inout */
static void s_op(struct nbc_sched *s, const void *in, void *inout, int count, struct mbmpi_dtype *d,
		 MPI_Op op)
{
	struct nbc_step *st = s_add(s, S_OP);

	if (!st)
		return;
	st->src = in;
	st->dst = inout;
	st->count = count;
	st->dt = d;
	st->dth = dt_handle(d);
	st->op = op;
	mbmpi_op_retain(op);
	mbmpi_dt_retain(d);
}

/* The same data from one layout into another (or the same one). */
static void s_copy(struct nbc_sched *s, const void *src, int scount, struct mbmpi_dtype *sd, void *dst,
		   int dcount, struct mbmpi_dtype *dd)
{
	struct nbc_step *st;

	if (src == dst && sd == dd)
		return;
	if (!(st = s_add(s, S_COPY)))
		return;
	st->src = src;
	st->dst = dst;
	st->count = scount;
	st->dt = sd;
	st->dcount = dcount;
	st->ddt = dd;
	mbmpi_dt_retain(sd);
	mbmpi_dt_retain(dd);
}

/* A buffer for `count` instances of d, addressed as the user's would be,
 * owned by the schedule. */
static char *s_tmp(struct nbc_sched *s, size_t count, const struct mbmpi_dtype *d)
{
	MPI_Aint start;
	size_t span = mbmpi_dt_span(d, count, &start);
	void *raw;

	if (s->err)
		return NULL;
	if (!s_grow((void **)&s->bufs, &s->cap_bufs, s->nbufs + 1, sizeof(*s->bufs)) ||
	    !(raw = malloc(span ? span : 1))) {
		s->err = MPI_ERR_NO_MEM;
		return NULL;
	}
	s->bufs[s->nbufs++] = raw;
	return (char *)raw - start;
}

/* ---- Running ---- */

static int run_copy(const struct nbc_step *st)
{
	const struct mbmpi_dtype *sd = st->dt, *dd = st->ddt;
	size_t bytes = (size_t)st->count * sd->size;
	char *t;

	if (!bytes)
		return MPI_SUCCESS;
	if (sd == dd && mbmpi_dt_contig(sd) && st->count == st->dcount) {
		memcpy((char *)st->dst + sd->true_lb, (const char *)st->src + sd->true_lb, bytes);
		return MPI_SUCCESS;
	}
	if (!(t = malloc(bytes)))
		return MPI_ERR_NO_MEM;
	mbmpi_pack(st->src, (size_t)st->count, sd, t);
	mbmpi_unpack(t, bytes, st->dst, (size_t)st->dcount, dd);
	free(t);
	return MPI_SUCCESS;
}

static void s_free(struct nbc_sched *s)
{
	if (s->fini)
		s->fini(s->fini_arg);
	for (int i = 0; i < s->n; i++) {
		if (s->steps[i].dt)
			mbmpi_dt_release(s->steps[i].dt);
		if (s->steps[i].ddt)
			mbmpi_dt_release(s->steps[i].ddt);
		if (s->steps[i].type == S_OP)
			mbmpi_op_release(s->steps[i].op);
	}
	for (int i = 0; i < s->nbufs; i++)
		free(s->bufs[i]);
	free(s->bufs);
	free(s->steps);
	free(s->live);
	mbmpi_comm_release(s->comm);
	free(s);
}

/* True when every operation of the current round has finished; their
 * errors become the schedule's. After a failure the receives still posted
 * are cancelled, so a dead peer ends the collective with an error. */
static bool s_round_done(struct nbc_sched *s)
{
	bool done = true;

	for (int i = 0; i < s->nlive; i++) {
		struct mbmpi_req *r = s->live[i];

		if (r->complete && r->err && !s->err)
			s->err = r->err;
		if (!r->complete)
			done = false;
	}
	if (!done && s->err)
		for (int i = 0; i < s->nlive; i++)
			if (!s->live[i]->complete && s->live[i]->kind == MBMPI_REQ_RECV &&
			    !s->live[i]->status.mbmpi_cancelled)
				mbmpi.eng->cancel(s->live[i]);
	if (!done)
		return false;
	for (int i = 0; i < s->nlive; i++) {
		if (s->recv_status && s->live[i]->kind == MBMPI_REQ_RECV)
			s->rst = s->live[i]->status;
		mbmpi_req_free(s->live[i]);
	}
	s->nlive = 0;
	return true;
}

/* Runs steps until a wait with operations outstanding; true when the whole
 * schedule has finished. */
static bool s_advance(struct nbc_sched *s)
{
	struct mbmpi_comm *c = s->comm;

	for (;;) {
		if (!s_round_done(s))
			return false;
		if (s->err || s->next == s->n)
			return true;
		while (s->next < s->n && !s->err) {
			struct nbc_step *st = &s->steps[s->next++];
			struct mbmpi_req *r = NULL;
			int ret = MPI_SUCCESS;

			if (st->type == S_WAIT) {
				if (s->nlive)
					break;
				continue;
			}
			switch (st->type) {
			case S_SEND:
			case S_RECV: {
				struct mbmpi_comm *pc = st->local ? c->local : c;

				if (!s_grow((void **)&s->live, &s->cap_live, s->nlive + 1,
					    sizeof(*s->live))) {
					ret = MPI_ERR_NO_MEM;
					break;
				}
				int tag = st->p2p ? st->utag : s->tag + st->tagoff;
				uint32_t ctx = st->p2p ? pc->ctx : pc->ctx + 1;

				ret = st->type == S_SEND
					? mbmpi_isend(st->src, st->count, st->dt, st->peer, tag, pc,
						      ctx, MBMPI_STD, &r)
					: mbmpi_irecv(st->dst, st->count, st->dt, st->peer, tag, pc,
						      ctx, &r);
				if (!ret)
					s->live[s->nlive++] = r;
				break;
			}
			case S_OP:
				mbmpi_op_apply(st->op, st->src, st->dst, (size_t)st->count, st->dth);
				break;
			case S_COPY:
				ret = run_copy(st);
				break;
			case S_CALL:
				ret = st->call(st->dst);
				break;
			}
			if (ret)
				s->err = ret;
		}
	}
}

static void s_finish(struct nbc_sched *s)
{
	struct mbmpi_req *r = s->req;

	if (!mbu_dlist_empty(&s->link)) {
		mbu_dlist_remove(&s->link);
		mbmpi_nbc_live--;
	}
	r->err = s->err;
	if (s->recv_status)
		r->status = s->rst;
	s_free(s);
	mbmpi_req_done(r);
}

int mbmpi_nbc_progress(void)
{
	struct mbu_dlist *it, *tmp;
	int done = 0, d = nbc_depth;

	nbc_depth++;
	mbu_dlist_foreach_safe(&nbc_active, it, tmp) {
		struct nbc_sched *s = mbu_container_of(it, struct nbc_sched, link);

		if (s->depth < d)
			continue;
		if (s_advance(s)) {
			s_finish(s);
			done++;
		}
	}
	nbc_depth--;
	return done;
}

/* Posts the first round and hands the caller its request; a schedule that
 * could not be built changes nothing and returns its error. */
static int s_start(struct nbc_sched *s, MPI_Request *out)
{
	struct mbmpi_req *r;
	int err;
	bool done;

	if (!s)
		return MPI_ERR_NO_MEM;
	r = nbc_pin_req;
	nbc_pin_req = NULL;
	if (s->err || (!r && !(r = mbmpi_req_alloc()))) {
		err = s->err ? s->err : MPI_ERR_NO_MEM;
		s_free(s);
		return err;
	}
	if (r->kind != MBMPI_REQ_PCOLL) {
		r->kind = MBMPI_REQ_NBC;
		r->comm = s->comm;
		mbmpi_comm_retain(r->comm);
	}
	r->peer = MPI_PROC_NULL;
	r->complete = false;
	r->err = MPI_SUCCESS;
	mbmpi_status_empty(&r->status);
	s->req = r;
	*out = r;
	s->depth = nbc_depth++;
	done = s_advance(s);
	nbc_depth--;
	if (done) {
		s_finish(s);
		return MPI_SUCCESS;
	}
	mbu_dlist_insert_tail(&s->link, &nbc_active);
	mbmpi_nbc_live++;
	return MPI_SUCCESS;
}

/* ---- Algorithms ---- */

static int vrank(int r, int root, int n)
{
	return (r - root + n) % n;
}

static void b_barrier(struct nbc_sched *s)
{
	int n = s->on->size, r = s->on->rank;

	for (int k = 1; k < n; k <<= 1) {
		s_send(s, NULL, 0, BYTE_DT, (r + k) % n);
		s_recv(s, NULL, 0, BYTE_DT, (r - k + n) % n);
		s_wait(s);
	}
}

static void b_bcast(struct nbc_sched *s, void *buf, int count, struct mbmpi_dtype *d, int root)
{
	int n = s->on->size, vr = vrank(s->on->rank, root, n), mask = 1;

	while (mask < n) {
		if (vr & mask) {
			s_recv(s, buf, count, d, (vr - mask + root) % n);
			s_wait(s);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (vr + mask < n)
			s_send(s, buf, count, d, (vr + mask + root) % n);
	s_wait(s);
}

/* Binomial reduce of `in` (never written) into `out` at root. Every
 * subtree covers a run of consecutive tree ranks and a child's run follows
 * its parent's, so folding each child as acc op child keeps rank order;
 * for a non-commutative op the tree is rooted at rank 0, where tree ranks
 * are ranks, and the result then goes to root. */
static void b_reduce(struct nbc_sched *s, const void *in, void *out, int count, struct mbmpi_dtype *d,
		     MPI_Op op, int root)
{
	int n = s->on->size, r = s->on->rank;
	int top = mbmpi_op(op)->commute ? root : 0, vr = vrank(r, top, n), mask, nkids = 0;
	char *kid[32];
	const void *acc = in;

	for (mask = 1; mask < n && !(vr & mask); mask <<= 1)
		if ((vr | mask) < n) {
			kid[nkids] = s_tmp(s, (size_t)count, d);
			s_recv(s, kid[nkids++], count, d, ((vr | mask) + top) % n);
		}
	s_wait(s);
	for (int k = 0; k < nkids; k++) {
		s_op(s, acc, kid[k], count, d, op);
		acc = kid[k];
	}
	if (vr) {
		s_send(s, acc, count, d, ((vr & ~mask) + top) % n);
	} else if (r == root) {
		s_copy(s, acc, count, d, out, count, d);
	} else {
		s_send(s, acc, count, d, root);
	}
	if (r == root && top != root) {
		/* out may be what was just sent (MPI_IN_PLACE). */
		s_wait(s);
		s_recv(s, out, count, d, top);
	}
	s_wait(s);
}

static bool pof2(int n)
{
	return n && !(n & (n - 1));
}

static void b_allreduce(struct nbc_sched *s, const void *in, void *out, int count,
			struct mbmpi_dtype *d, MPI_Op op)
{
	int n = s->on->size, r = s->on->rank;
	const void *acc = in;

	if (!mbmpi_op(op)->commute || !pof2(n)) {
		b_reduce(s, in, out, count, d, op, 0);
		b_bcast(s, out, count, d, 0);
		return;
	}
	for (int mask = 1; mask < n; mask <<= 1) {
		char *t = s_tmp(s, (size_t)count, d);

		s_send(s, acc, count, d, r ^ mask);
		s_recv(s, t, count, d, r ^ mask);
		s_wait(s);
		s_op(s, acc, t, count, d, op);
		acc = t;
	}
	s_copy(s, acc, count, d, out, count, d);
}

static void b_scan(struct nbc_sched *s, const void *sbuf, void *rbuf, int count,
		   struct mbmpi_dtype *d, MPI_Op op, bool exclusive)
{
	int n = s->on->size, r = s->on->rank;
	bool commute = mbmpi_op(op)->commute, have = false;
	char *part = s_tmp(s, (size_t)count, d), *tmp = s_tmp(s, (size_t)count, d);
	const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;

	s_copy(s, in, count, d, part, count, d);
	if (!exclusive)
		s_copy(s, in, count, d, rbuf, count, d);
	for (int mask = 1; mask < n; mask <<= 1) {
		int peer = r ^ mask;

		if (peer >= n)
			continue;
		s_send(s, part, count, d, peer);
		s_recv(s, tmp, count, d, peer);
		s_wait(s);
		if (r > peer) {
			s_op(s, tmp, part, count, d, op);
			if (exclusive && !have)
				s_copy(s, tmp, count, d, rbuf, count, d);
			else
				s_op(s, tmp, rbuf, count, d, op);
			have = true;
		} else if (commute) {
			s_op(s, tmp, part, count, d, op);
		} else {
			s_op(s, part, tmp, count, d, op);
			s_copy(s, tmp, count, d, part, count, d);
		}
	}
}

/* Every block to or from every peer in one round. Types per peer cover
 * alltoall, alltoallv and alltoallw alike. */
struct blocks {
	const char *sbuf;
	char *rbuf;
	const int *scounts, *rcounts;
	MPI_Aint *soff, *roff;		/* bytes */
	struct mbmpi_dtype **st, **rt;
};

static void b_alltoall(struct nbc_sched *s, const struct blocks *b)
{
	int n = s->on->size, r = s->on->rank;

	/* Receives first, then sends starting with the next rank, so ranks do
	 * not all send to rank 0 at once. */
	for (int k = 1; k < n; k++) {
		int p = (r - k + n) % n;
		s_recv(s, b->rbuf + b->roff[p], b->rcounts[p], b->rt[p], p);
	}
	for (int k = 1; k < n; k++) {
		int p = (r + k) % n;
		s_send(s, b->sbuf + b->soff[p], b->scounts[p], b->st[p], p);
	}
	s_copy(s, b->sbuf + b->soff[r], b->scounts[r], b->st[r], b->rbuf + b->roff[r], b->rcounts[r],
	       b->rt[r]);
	s_wait(s);
}

/* ---- Intercommunicators ---- */

static void on_local(struct nbc_sched *s, bool local)
{
	s->on = local ? s->comm->local : s->comm;
}

static bool leader(const struct nbc_sched *s)
{
	return s->comm->local->rank == 0;
}

static int inter_root(const struct mbmpi_comm *c, int root)
{
	return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->size)
		       ? MPI_SUCCESS : MPI_ERR_ROOT;
}

/* Each group's leader swaps `count` of d with the other's: mine goes,
 * theirs comes. */
static void i_swap(struct nbc_sched *s, const void *mine, void *theirs, int count,
		   struct mbmpi_dtype *d)
{
	on_local(s, false);
	if (leader(s)) {
		s_recv(s, theirs, count, d, 0);
		s_send(s, mine, count, d, 0);
		s_wait(s);
	}
}

/* Everyone here has entered, the leaders learn it of each other, and
 * nobody here leaves before its leader knows. */
static void ib_barrier(struct nbc_sched *s)
{
	on_local(s, true);
	b_barrier(s);
	i_swap(s, NULL, NULL, 0, BYTE_DT);
	on_local(s, true);
	b_barrier(s);
	on_local(s, false);
}

static void ib_bcast(struct nbc_sched *s, void *buf, int count, struct mbmpi_dtype *d, int root)
{
	if (root == MPI_PROC_NULL)
		return;
	if (root == MPI_ROOT) {
		s_send(s, buf, count, d, 0);
		s_wait(s);
		return;
	}
	if (leader(s)) {
		s_recv(s, buf, count, d, root);
		s_wait(s);
	}
	on_local(s, true);
	b_bcast(s, buf, count, d, 0);
	on_local(s, false);
}

/* The other group's data reduced at the root: that group reduces to its
 * leader, which sends to the root. */
static void ib_reduce(struct nbc_sched *s, const void *in, void *out, int count,
		      struct mbmpi_dtype *d, MPI_Op op, int root)
{
	char *tmp = NULL;

	if (root == MPI_PROC_NULL)
		return;
	if (root == MPI_ROOT) {
		s_recv(s, out, count, d, 0);
		s_wait(s);
		return;
	}
	if (leader(s))
		tmp = s_tmp(s, (size_t)count, d);
	on_local(s, true);
	b_reduce(s, in, tmp, count, d, op, 0);
	on_local(s, false);
	if (leader(s)) {
		s_send(s, tmp, count, d, root);
		s_wait(s);
	}
}

/* Each group gets the other's reduction: both reduce to their leaders,
 * the leaders swap, each broadcasts what it got. */
static void ib_allreduce(struct nbc_sched *s, const void *in, void *out, int count,
			 struct mbmpi_dtype *d, MPI_Op op)
{
	char *tmp = leader(s) ? s_tmp(s, (size_t)count, d) : NULL;

	on_local(s, true);
	b_reduce(s, in, tmp, count, d, op, 0);
	i_swap(s, tmp, out, count, d);
	on_local(s, true);
	b_bcast(s, out, count, d, 0);
	on_local(s, false);
}

/* The other group's whole vector reduced, scattered here by rcounts (one
 * per member of this group; the standard makes the totals equal). */
static void ib_reduce_scatter(struct nbc_sched *s, const void *in, void *out, const int *rcounts,
			      size_t total, struct mbmpi_dtype *d, MPI_Op op)
{
	struct mbmpi_comm *l = s->comm->local;
	char *mine = NULL, *theirs = NULL;

	if (leader(s)) {
		mine = s_tmp(s, total, d);
		theirs = s_tmp(s, total, d);
	}
	on_local(s, true);
	b_reduce(s, in, mine, (int)total, d, op, 0);
	i_swap(s, mine, theirs, (int)total, d);
	on_local(s, true);
	if (leader(s)) {
		size_t off = 0;

		for (int i = 0; i < l->size; i++) {
			char *at = theirs ? theirs + (MPI_Aint)off * d->extent : NULL;

			if (i == 0)
				s_copy(s, at, rcounts[0], d, out, rcounts[0], d);
			else if (rcounts[i])
				s_send(s, at, rcounts[i], d, i);
			off += (size_t)rcounts[i];
		}
	} else if (rcounts[l->rank]) {
		s_recv(s, out, rcounts[l->rank], d, 0);
	}
	s_wait(s);
	on_local(s, false);
}

/* Blocks to and from each member of the other group, all in one round:
 * gathers and scatters at a root, allgather(v) and alltoall(v,w). */
static void ib_blocks(struct nbc_sched *s, const struct blocks *b, bool send, bool recv)
{
	int n = s->comm->size;

	for (int p = 0; recv && p < n; p++)
		s_recv(s, b->rbuf + b->roff[p], b->rcounts[p], b->rt[p], p);
	for (int p = 0; send && p < n; p++)
		s_send(s, b->sbuf + b->soff[p], b->scounts[p], b->st[p], p);
	s_wait(s);
}

/* ---- The MPI calls ---- */

/* NBC_BEGIN_ANY admits intercommunicators; NBC_BEGIN is for the
 * collectives MPI defines on intracommunicators only (scans, neighbours). */
#define NBC_BEGIN_ANY(comm, c, req)                               \
	int ret;                                                  \
	struct nbc_sched *s;                                      \
	MBMPI_CHECK_INIT();                                       \
	if ((ret = mbmpi_check_comm(comm, &c)))                   \
		return MBMPI_ERR(NULL, ret);                      \
	if (!(req))                                               \
		return MBMPI_ERR(c, MPI_ERR_REQUEST);

#define NBC_BEGIN(comm, c, req)                                   \
	NBC_BEGIN_ANY(comm, c, req)                               \
	if (c->inter)                                             \
		return MBMPI_ERR(c, MPI_ERR_COMM);

#define NBC_END(c, req)                                           \
	ret = s_start(s, req);                                    \
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	NBC_BEGIN_ANY(comm, c, req);
	if ((s = s_new(c)))
		c->inter ? ib_barrier(s) : b_barrier(s);
	NBC_END(c, req);
}
MBMPI_ALIAS(Ibarrier)

int PMPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	NBC_BEGIN_ANY(comm, c, req);
	if ((ret = mbmpi_coll_check_buf(buf, count, dt)))
		return MBMPI_ERR(c, ret);
	if (c->inter) {
		if ((ret = inter_root(c, root)))
			return MBMPI_ERR(c, ret);
		if ((s = s_new(c)) && count)
			ib_bcast(s, buf, count, mbmpi_dt(dt), root);
		NBC_END(c, req);
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if ((s = s_new(c)) && count)
		b_bcast(s, buf, count, mbmpi_dt(dt), root);
	NBC_END(c, req);
}
MBMPI_ALIAS(Ibcast)

int PMPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		 MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	NBC_BEGIN_ANY(comm, c, req);
	if (c->inter) {
		/* The root names only where the result goes; the other group
		 * only what it sends. */
		if ((ret = inter_root(c, root)))
			return MBMPI_ERR(c, ret);
		if (root == MPI_ROOT)
			ret = mbmpi_coll_check_reduce(rbuf, rbuf, count, dt, op, false);
		else if (root == MPI_PROC_NULL)
			ret = count < 0 ? MPI_ERR_COUNT : mbmpi_dt_check(dt) ? MPI_ERR_TYPE
									      : mbmpi_op_check(op, dt);
		else
			ret = sbuf == MPI_IN_PLACE ? MPI_ERR_BUFFER
						   : mbmpi_coll_check_reduce(sbuf, NULL, count, dt, op,
									     false);
		if (ret)
			return MBMPI_ERR(c, ret);
		if ((s = s_new(c)) && count)
			ib_reduce(s, sbuf, rbuf, count, mbmpi_dt(dt), op, root);
		NBC_END(c, req);
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if ((ret = mbmpi_coll_check_reduce(c->rank == root ? sbuf : (sbuf == MPI_IN_PLACE ? NULL : sbuf),
					   rbuf, count, dt, op, c->rank == root)))
		return MBMPI_ERR(c, ret);
	if ((s = s_new(c)) && count)
		b_reduce(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, mbmpi_dt(dt), op, root);
	NBC_END(c, req);
}
MBMPI_ALIAS(Ireduce)

/* ---- Context ids ----
 *
 * A new communicator's context is agreed as a schedule (mbu_ids.h has the
 * protocol): each member offers a mask of contexts, the masks are ANDed
 * over the members (on an intercommunicator, over both groups), and each
 * member takes the lowest common one; a try that finds none adds another
 * try to the schedule. Non-blocking Comm_idup is this schedule with the
 * communicator made at the end; the blocking calls start it and wait. A
 * slot of mbu_ids is four contexts: an intracommunicator uses two (point
 * to point and collectives), an intercommunicator four (its local group's
 * two besides). */
struct mbu_ids mbmpi_ctx_ids;

struct ctx_agree {
	struct nbc_sched *s;
	struct mbu_ids_agree a;
	uint64_t all[MBU_IDS_MSG_WORDS];
	uint32_t *out;			/* where the agreed context goes: the caller's, or ctx */
	uint32_t ctx;
	int (*then)(struct ctx_agree *d);	/* once agreed: Comm_idup makes its communicator */
	struct mbmpi_comm *parent;
	MPI_Comm *newcomm;
	MPI_Info info;			/* Comm_idup_with_info's, copied at the call */
};

#define U64_DT mbmpi_dt(MPI_UINT64_T)

static int ctx_take(void *arg);

static void ctx_try(struct ctx_agree *d)
{
	struct nbc_sched *s = d->s;
	struct nbc_step *st;

	mbu_ids_offer(&mbmpi_ctx_ids, &d->a);
	if (s->comm->inter) {
		/* Each group ANDs to its leader, the leaders swap and AND the
		 * two, and each leader hands the result to its group. */
		char *mine = leader(s) ? s_tmp(s, MBU_IDS_MSG_WORDS, U64_DT) : NULL;

		on_local(s, true);
		b_reduce(s, d->a.offer, mine, MBU_IDS_MSG_WORDS, U64_DT, MPI_BAND, 0);
		i_swap(s, mine, d->all, MBU_IDS_MSG_WORDS, U64_DT);
		if (leader(s))
			s_op(s, mine, d->all, MBU_IDS_MSG_WORDS, U64_DT, MPI_BAND);
		on_local(s, true);
		b_bcast(s, d->all, MBU_IDS_MSG_WORDS, U64_DT, 0);
		on_local(s, false);
	} else {
		b_allreduce(s, d->a.offer, d->all, MBU_IDS_MSG_WORDS, U64_DT, MPI_BAND);
	}
	s_wait(s);
	if ((st = s_add(s, S_CALL))) {
		st->call = ctx_take;
		st->dst = d;
	}
}

static int ctx_take(void *arg)
{
	struct ctx_agree *d = arg;
	unsigned slot;
	int r = mbu_ids_take(&mbmpi_ctx_ids, &d->a, d->all, &slot);

	if (r == -EAGAIN) {
		ctx_try(d);
		return d->s->err;
	}
	if (r)
		return MPI_ERR_OTHER;	/* every context is in use: too many communicators */
	*d->out = slot * 4;
	return d->then ? d->then(d) : MPI_SUCCESS;
}

static void ctx_fini(void *arg)
{
	struct ctx_agree *d = arg;

	mbu_ids_end(&mbmpi_ctx_ids, &d->a);
	if (d->info != MPI_INFO_NULL)
		PMPI_Info_free(&d->info);
}

/* A schedule on c (a stand-in communicator too) that agrees on a context,
 * ordered among agreements by (c's context, seq). */
static struct ctx_agree *ctx_sched(struct mbmpi_comm *c, uint32_t seq, uint32_t *out)
{
	struct nbc_sched *s = s_new(c);
	struct ctx_agree *d;

	if (!s)
		return NULL;
	if (!(d = (struct ctx_agree *)s_tmp(s, sizeof(*d), BYTE_DT))) {
		s_free(s);
		return NULL;
	}
	memset(d, 0, sizeof(*d));
	d->info = MPI_INFO_NULL;
	d->s = s;
	d->out = out ? out : &d->ctx;
	mbu_ids_begin(&mbmpi_ctx_ids, &d->a, ((uint64_t)c->ctx << 32) | seq);
	s->fini = ctx_fini;
	s->fini_arg = d;
	ctx_try(d);
	return d;
}

static int ctx_wait(struct ctx_agree *d)
{
	MPI_Request req;
	int ret;

	if (!d)
		return MPI_ERR_NO_MEM;
	if ((ret = s_start(d->s, &req)))
		return ret;
	return mbmpi_wait(req, MPI_STATUS_IGNORE);
}

int mbmpi_ctx_get(struct mbmpi_comm *c, uint32_t *ctx)
{
	return ctx_wait(ctx_sched(c, c->nbc_seq, ctx));
}

/* Over a stand-in communicator of some of c's members (Comm_create_group),
 * on tags of their own: the other members may be running collectives of c. */
int mbmpi_ctx_get_group(struct mbmpi_comm *tmp, int tag, uint32_t *ctx)
{
	struct ctx_agree *d = ctx_sched(tmp, 0x80000000u | (uint32_t)(tag & 0xfffff), ctx);

	if (d)
		d->s->tag = CTX_GROUP_TAG(tag);
	return ctx_wait(d);
}

void mbmpi_ctx_put(uint32_t ctx)
{
	if (ctx % 4 == 0)
		mbu_ids_put(&mbmpi_ctx_ids, ctx / 4);
}

static int idup_finish(struct ctx_agree *d)
{
	struct mbmpi_comm *c = d->parent, *n;
	uint32_t ctx = *d->out;
	int ret;

	if (c->inter) {
		c->group->refs++;
		c->rgroup->refs++;
		ret = mbmpi_inter_make(c, c->group, c->rgroup, ctx, d->newcomm);
	} else {
		c->group->refs++;
		ret = mbmpi_comm_from_group(c, c->group, ctx, d->newcomm);
	}
	if (ret)
		return ret;
	n = mbmpi_comm(*d->newcomm);
	if (c->topo && !(n->topo = mbmpi_topo_dup(c->topo)))
		return MPI_ERR_NO_MEM;
	if (d->info != MPI_INFO_NULL && (ret = PMPI_Comm_set_info(*d->newcomm, d->info)))
		return ret;
	return mbmpi_attr_copy(MBMPI_KV_COMM, (MPI_Comm)c, c->attrs, *d->newcomm, &n->attrs);
}

int mbmpi_comm_idup(struct mbmpi_comm *c, MPI_Info info, MPI_Comm *newcomm, MPI_Request *req)
{
	/* The caller does not wait: the context lands in d->ctx. */
	struct ctx_agree *d = ctx_sched(c, c->nbc_seq, NULL);
	int ret;

	if (!d)
		return MPI_ERR_NO_MEM;
	if (info != MPI_INFO_NULL && (ret = PMPI_Info_dup(info, &d->info)))
		d->s->err = ret;
	d->then = idup_finish;
	d->parent = c;
	d->newcomm = newcomm;
	return s_start(d->s, req);
}

int PMPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		    MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;

	NBC_BEGIN_ANY(comm, c, req);
	if ((ret = mbmpi_coll_check_reduce(sbuf, rbuf, count, dt, op, true)))
		return MBMPI_ERR(c, ret);
	if (c->inter && sbuf == MPI_IN_PLACE)
		return MBMPI_ERR(c, MPI_ERR_BUFFER);
	if ((s = s_new(c)) && count) {
		if (c->inter)
			ib_allreduce(s, sbuf, rbuf, count, mbmpi_dt(dt), op);
		else
			b_allreduce(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, count, mbmpi_dt(dt), op);
	}
	NBC_END(c, req);
}
MBMPI_ALIAS(Iallreduce)

static int c_gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts,
		     const int *displs, int rcount, MPI_Datatype rt, int root, MPI_Comm comm,
		     MPI_Request *req, bool scatter)
{
	struct mbmpi_comm *c;
	/* For a scatter the roles swap: the root's blocks are the sources. */
	const void *own = scatter ? rbuf : sbuf;

	NBC_BEGIN_ANY(comm, c, req);
	if (c->inter) {
		/* The root's blocks go to or come from each member of the
		 * other group; that group's members each send or receive one. */
		MPI_Datatype bt = scatter ? st : rt;

		if ((ret = inter_root(c, root)))
			return MBMPI_ERR(c, ret);
		if (root == MPI_ROOT)
			ret = rcounts ? mbmpi_coll_check_counts(rcounts, displs, bt, c->size)
				      : mbmpi_coll_check_buf(scatter ? sbuf : rbuf,
							     scatter ? scount : rcount, bt);
		else if (root != MPI_PROC_NULL)
			ret = mbmpi_coll_check_buf(own, scatter ? rcount : scount, scatter ? rt : st);
		if (ret)
			return MBMPI_ERR(c, ret);
		if (!(s = s_new(c)))
			return MBMPI_ERR(c, MPI_ERR_NO_MEM);
		if (root == MPI_ROOT) {
			struct mbmpi_dtype *bd = mbmpi_dt(bt);
			char *blocks = scatter ? (char *)sbuf : rbuf;
			int per = scatter ? scount : rcount;

			for (int i = 0; i < c->size; i++) {
				int cnt = rcounts ? rcounts[i] : per;
				char *at = blocks + (MPI_Aint)(rcounts ? displs[i] : i * per) * bd->extent;

				if (scatter)
					s_send(s, at, cnt, bd, i);
				else
					s_recv(s, at, cnt, bd, i);
			}
		} else if (root != MPI_PROC_NULL) {
			if (scatter)
				s_recv(s, rbuf, rcount, mbmpi_dt(rt), root);
			else
				s_send(s, sbuf, scount, mbmpi_dt(st), root);
		}
		s_wait(s);
		NBC_END(c, req);
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if (own != MPI_IN_PLACE &&
	    (ret = mbmpi_coll_check_buf(own, scatter ? rcount : scount, scatter ? rt : st)))
		return MBMPI_ERR(c, ret);
	if (c->rank == root) {
		MPI_Datatype bt = scatter ? st : rt;

		if (rcounts)
			ret = mbmpi_coll_check_counts(rcounts, displs, bt, c->size);
		else
			ret = mbmpi_coll_check_buf(scatter ? sbuf : rbuf, scatter ? scount : rcount, bt);
		if (ret)
			return MBMPI_ERR(c, ret);
	}
	if (!(s = s_new(c)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	if (c->rank != root) {
		if (scatter)
			s_recv(s, rbuf, rcount, mbmpi_dt(rt), root);
		else
			s_send(s, sbuf, scount, mbmpi_dt(st), root);
	} else {
		struct mbmpi_dtype *bd = mbmpi_dt(scatter ? st : rt);
		char *blocks = scatter ? (char *)sbuf : rbuf;
		int per = scatter ? scount : rcount;

		for (int i = 0; i < c->size; i++) {
			int cnt = rcounts ? rcounts[i] : per;
			char *at = blocks + (MPI_Aint)(rcounts ? displs[i] : i * per) * bd->extent;

			if (i == root) {
				if (own == MPI_IN_PLACE)
					continue;
				if (scatter)
					s_copy(s, at, cnt, bd, rbuf, rcount, mbmpi_dt(rt));
				else
					s_copy(s, sbuf, scount, mbmpi_dt(st), at, cnt, bd);
			} else if (scatter) {
				s_send(s, at, cnt, bd, i);
			} else {
				s_recv(s, at, cnt, bd, i);
			}
		}
	}
	s_wait(s);
	NBC_END(c, req);
}

int PMPI_Igather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
		 int root, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	return c_gatherv(sbuf, scount, st, rbuf, NULL, NULL, rcount, rt, root, comm, req, false);
}
MBMPI_ALIAS(Igather)

int PMPI_Igatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
		  const int displs[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c = mbmpi_comm(comm);

	bool at_root = c && c->refs > 0 && (c->inter ? root == MPI_ROOT : c->rank == root);

	/* Only the root reads the arrays. */
	if (at_root && !rcounts)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	return c_gatherv(sbuf, scount, st, rbuf, at_root ? rcounts : NULL, displs, 0, rt,
			 root, comm, req, false);
}
MBMPI_ALIAS(Igatherv)

int PMPI_Iscatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		  MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	return c_gatherv(sbuf, scount, st, rbuf, NULL, NULL, rcount, rt, root, comm, req, true);
}
MBMPI_ALIAS(Iscatter)

int PMPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype st,
		   void *rbuf, int rcount, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c = mbmpi_comm(comm);

	bool at_root = c && c->refs > 0 && (c->inter ? root == MPI_ROOT : c->rank == root);

	if (at_root && !scounts)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	return c_gatherv(sbuf, 0, st, rbuf, at_root ? scounts : NULL, displs, rcount, rt,
			 root, comm, req, true);
}
MBMPI_ALIAS(Iscatterv)

/* Allgather(v) as an all-to-all in which every peer gets the same block. */
static int c_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts,
			const int *displs, int rcount, MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	struct mbmpi_comm *c;
	struct blocks b;
	struct mbmpi_dtype *rd;
	int n;

	NBC_BEGIN_ANY(comm, c, req);
	if (c->inter && sbuf == MPI_IN_PLACE)
		return MBMPI_ERR(c, MPI_ERR_BUFFER);
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if ((ret = rcounts ? mbmpi_coll_check_counts(rcounts, displs, rt, c->size)
			   : mbmpi_coll_check_buf(rbuf, rcount, rt)))
		return MBMPI_ERR(c, ret);
	n = c->size;
	rd = mbmpi_dt(rt);
	if (!(s = s_new(c)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	b.sbuf = sbuf;
	b.rbuf = rbuf;
	b.scounts = malloc(sizeof(int) * (size_t)n * 2);
	b.soff = malloc(sizeof(MPI_Aint) * (size_t)n * 2);
	b.st = malloc(sizeof(*b.st) * (size_t)n * 2);
	if (!b.scounts || !b.soff || !b.st) {
		s->err = MPI_ERR_NO_MEM;
	} else {
		int *sc = (int *)b.scounts, *rc = sc + n;
		MPI_Aint own;

		b.rcounts = rc;
		/* (own is read only in place, which an intercommunicator refuses) */
		b.roff = b.soff + n;
		b.rt = b.st + n;
		for (int i = 0; i < n; i++) {
			rc[i] = rcounts ? rcounts[i] : rcount;
			b.roff[i] = (MPI_Aint)(rcounts ? displs[i] : i * rcount) * rd->extent;
			b.rt[i] = rd;
		}
		own = c->inter ? 0 : b.roff[c->rank];
		for (int i = 0; i < n; i++) {
			if (sbuf == MPI_IN_PLACE) {
				b.sbuf = rbuf;
				sc[i] = rc[c->rank];
				b.soff[i] = own;
				b.st[i] = rd;
			} else {
				sc[i] = scount;
				b.soff[i] = 0;
				b.st[i] = mbmpi_dt(st);
			}
		}
		if (c->inter)
			ib_blocks(s, &b, true, true);
		else
			b_alltoall(s, &b);
	}
	free((void *)b.scounts);
	free(b.soff);
	free(b.st);
	NBC_END(c, req);
}

int PMPI_Iallgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		    MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	return c_allgatherv(sbuf, scount, st, rbuf, NULL, NULL, rcount, rt, comm, req);
}
MBMPI_ALIAS(Iallgather)

int PMPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
		     const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	if (!rcounts)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_allgatherv(sbuf, scount, st, rbuf, rcounts, displs, 0, rt, comm, req);
}
MBMPI_ALIAS(Iallgatherv)

/* The general all-to-all: per-peer counts, byte offsets and types (any of
 * them given once for all peers). MPI_IN_PLACE sends from a copy of the
 * receive buffer taken when the call is made. */
struct a2a_args {
	const void *sbuf;
	void *rbuf;
	int scount, rcount;
	const int *scounts, *rcounts, *sdispls, *rdispls;
	bool byte_displs;
	MPI_Datatype st, rt;
	const MPI_Datatype *sts, *rts;
};

static int a2a_check(const struct a2a_args *a, int n)
{
	for (int i = 0; i < n; i++) {
		bool in_place = a->sbuf == MPI_IN_PLACE;
		MPI_Datatype st = a->sts ? a->sts[i] : a->st, rt = a->rts ? a->rts[i] : a->rt;
		int sc = a->scounts ? a->scounts[i] : a->scount, rc = a->rcounts ? a->rcounts[i] : a->rcount;

		if ((!in_place && sc < 0) || rc < 0)
			return MPI_ERR_COUNT;
		if ((!in_place && mbmpi_dt_check(st)) || mbmpi_dt_check(rt))
			return MPI_ERR_TYPE;
	}
	return MPI_SUCCESS;
}

static int c_alltoallw(const struct a2a_args *a, MPI_Comm comm, MPI_Request *req)
{
	struct mbmpi_comm *c;
	struct blocks b = { 0 };
	int n, *counts = NULL;

	NBC_BEGIN_ANY(comm, c, req);
	n = c->size;
	if (c->inter && a->sbuf == MPI_IN_PLACE)
		return MBMPI_ERR(c, MPI_ERR_BUFFER);
	if ((ret = a2a_check(a, n)))
		return MBMPI_ERR(c, ret);
	if (!(s = s_new(c)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	counts = malloc(sizeof(int) * (size_t)n * 2);
	b.soff = malloc(sizeof(MPI_Aint) * (size_t)n * 2);
	b.st = malloc(sizeof(*b.st) * (size_t)n * 2);
	if (!counts || !b.soff || !b.st) {
		s->err = MPI_ERR_NO_MEM;
		goto out;
	}
	b.scounts = counts;
	b.rcounts = counts + n;
	b.roff = b.soff + n;
	b.rt = b.st + n;
	b.rbuf = a->rbuf;
	for (int i = 0; i < n; i++) {
		struct mbmpi_dtype *rd = mbmpi_dt(a->rts ? a->rts[i] : a->rt);

		counts[n + i] = a->rcounts ? a->rcounts[i] : a->rcount;
		b.rt[i] = rd;
		b.roff[i] = a->rdispls ? (a->byte_displs ? a->rdispls[i] : a->rdispls[i] * rd->extent)
				       : (MPI_Aint)i * a->rcount * rd->extent;
	}
	if (a->sbuf == MPI_IN_PLACE) {
		/* One copy of the whole receive area, addressed as rbuf is. */
		MPI_Aint lo = 0, hi = 0;
		char *copy;

		for (int i = 0; i < n; i++) {
			MPI_Aint start;
			size_t span = mbmpi_dt_span(b.rt[i], (size_t)b.rcounts[i], &start);

			if (!span)
				continue;
			if (lo == hi || b.roff[i] + start < lo)
				lo = b.roff[i] + start;
			if (lo == hi || b.roff[i] + start + (MPI_Aint)span > hi)
				hi = b.roff[i] + start + (MPI_Aint)span;
		}
		copy = s_tmp(s, (size_t)(hi - lo), BYTE_DT);
		if (copy) {
			memcpy(copy, (char *)a->rbuf + lo, (size_t)(hi - lo));
			b.sbuf = copy - lo;
		}
		for (int i = 0; i < n; i++) {
			counts[i] = b.rcounts[i];
			b.soff[i] = b.roff[i];
			b.st[i] = b.rt[i];
		}
		/* Its own block is already in place. */
		counts[c->rank] = counts[n + c->rank] = 0;
	} else {
		b.sbuf = a->sbuf;
		for (int i = 0; i < n; i++) {
			struct mbmpi_dtype *sd = mbmpi_dt(a->sts ? a->sts[i] : a->st);

			counts[i] = a->scounts ? a->scounts[i] : a->scount;
			b.st[i] = sd;
			b.soff[i] = a->sdispls ? (a->byte_displs ? a->sdispls[i] : a->sdispls[i] * sd->extent)
					       : (MPI_Aint)i * a->scount * sd->extent;
		}
	}
	if (!s->err && c->inter)
		ib_blocks(s, &b, true, true);
	else if (!s->err)
		b_alltoall(s, &b);
out:
	free(counts);
	free(b.soff);
	free(b.st);
	NBC_END(c, req);
}

int PMPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		   MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct a2a_args a = { .sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount,
			      .st = st, .rt = rt };

	if (sbuf != MPI_IN_PLACE && !sbuf && scount > 0 && mbmpi_dt_check(st) == 0 &&
	    (mbmpi_dt(st)->flags & MBMPI_DT_PREDEF))
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_BUFFER);
	if (!rbuf && rcount > 0 && mbmpi_dt_check(rt) == 0 && (mbmpi_dt(rt)->flags & MBMPI_DT_PREDEF))
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_BUFFER);
	return c_alltoallw(&a, comm, req);
}
MBMPI_ALIAS(Ialltoall)

int PMPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st,
		    void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm,
		    MPI_Request *req)
{
	MBMPI_GUARD();
	struct a2a_args a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .rcounts = rcounts,
			      .sdispls = sdispls, .rdispls = rdispls, .st = st, .rt = rt };

	if ((sbuf != MPI_IN_PLACE && (!scounts || !sdispls)) || !rcounts || !rdispls)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_alltoallw(&a, comm, req);
}
MBMPI_ALIAS(Ialltoallv)

int PMPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[],
		    const MPI_Datatype sts[], void *rbuf, const int rcounts[], const int rdispls[],
		    const MPI_Datatype rts[], MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct a2a_args a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .rcounts = rcounts,
			      .sdispls = sdispls, .rdispls = rdispls, .byte_displs = true,
			      .sts = sts, .rts = rts };

	if ((sbuf != MPI_IN_PLACE && (!scounts || !sdispls || !sts)) || !rcounts || !rdispls || !rts)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_alltoallw(&a, comm, req);
}
MBMPI_ALIAS(Ialltoallw)

static int c_wait_nbc(MPI_Request *req, int ret)
{
	return ret ? ret : PMPI_Wait(req, MPI_STATUS_IGNORE);
}

int PMPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sts[],
		   void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rts[],
		   MPI_Comm comm)
{
	MBMPI_GUARD();
	MPI_Request r;
	struct mbmpi_comm *c = mbmpi_comm(comm);

	if (c && c->refs > 0 && c->inter) {
		int ret = mbmpi_inter_alltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts,
						true, c);

		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	return c_wait_nbc(&r, PMPI_Ialltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts,
					      comm, &r));
}
MBMPI_ALIAS(Alltoallw)

/* Reduce to rank 0 into a scratch copy of the whole vector, then scatter
 * the pieces. */
int PMPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
			 MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_dtype *d;
	size_t total = 0;
	char *full = NULL;
	const void *in;

	NBC_BEGIN_ANY(comm, c, req);
	if (!rcounts)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	if (c->inter) {
		/* rcounts are over this group; the totals of the two agree. */
		for (int i = 0; i < c->local->size; i++) {
			if (rcounts[i] < 0)
				return MBMPI_ERR(c, MPI_ERR_COUNT);
			total += (size_t)rcounts[i];
		}
		if (total > INT32_MAX)
			return MBMPI_ERR(c, MPI_ERR_COUNT);
		if (sbuf == MPI_IN_PLACE)
			return MBMPI_ERR(c, MPI_ERR_BUFFER);
		if ((ret = mbmpi_coll_check_reduce(sbuf, rbuf, (int)total, dt, op, false)))
			return MBMPI_ERR(c, ret);
		if ((s = s_new(c)) && total)
			ib_reduce_scatter(s, sbuf, rbuf, rcounts, total, mbmpi_dt(dt), op);
		NBC_END(c, req);
	}
	for (int i = 0; i < c->size; i++) {
		if (rcounts[i] < 0)
			return MBMPI_ERR(c, MPI_ERR_COUNT);
		total += (size_t)rcounts[i];
	}
	if (total > INT32_MAX)
		return MBMPI_ERR(c, MPI_ERR_COUNT);
	if ((ret = mbmpi_coll_check_reduce(sbuf, rbuf, (int)total, dt, op, false)))
		return MBMPI_ERR(c, ret);
	d = mbmpi_dt(dt);
	in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	if (!(s = s_new(c)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	if (total) {
		if (c->rank == 0)
			full = s_tmp(s, total, d);
		b_reduce(s, in, full, (int)total, d, op, 0);
		if (c->rank == 0) {
			size_t off = 0;

			for (int i = 0; i < c->size; i++) {
				char *at = full + (MPI_Aint)off * d->extent;

				if (i == 0)
					s_copy(s, at, rcounts[0], d, rbuf, rcounts[0], d);
				else if (rcounts[i])
					s_send(s, at, rcounts[i], d, i);
				off += (size_t)rcounts[i];
			}
		} else if (rcounts[c->rank]) {
			s_recv(s, rbuf, rcounts[c->rank], d, 0);
		}
		s_wait(s);
	}
	NBC_END(c, req);
}
MBMPI_ALIAS(Ireduce_scatter)

int PMPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op,
			       MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int *counts, ret, n;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (rcount < 0)
		return MBMPI_ERR(c, MPI_ERR_COUNT);
	/* One count per member of this group (the local one, on an
	 * intercommunicator). */
	n = c->inter ? c->local->size : c->size;
	if (!(counts = malloc(sizeof(int) * (size_t)n)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	for (int i = 0; i < n; i++)
		counts[i] = rcount;
	ret = PMPI_Ireduce_scatter(sbuf, rbuf, counts, dt, op, comm, req);
	free(counts);
	return ret;
}
MBMPI_ALIAS(Ireduce_scatter_block)

static int c_iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		   MPI_Request *req, bool exclusive)
{
	struct mbmpi_comm *c;

	NBC_BEGIN(comm, c, req);
	if ((ret = mbmpi_coll_check_reduce(sbuf, rbuf, count, dt, op, true)))
		return MBMPI_ERR(c, ret);
	if ((s = s_new(c)) && count)
		b_scan(s, sbuf, rbuf, count, mbmpi_dt(dt), op, exclusive);
	NBC_END(c, req);
}

int PMPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
	       MPI_Request *req)
{
	MBMPI_GUARD();
	return c_iscan(sbuf, rbuf, count, dt, op, comm, req, false);
}
MBMPI_ALIAS(Iscan)

int PMPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		 MPI_Request *req)
{
	MBMPI_GUARD();
	return c_iscan(sbuf, rbuf, count, dt, op, comm, req, true);
}
MBMPI_ALIAS(Iexscan)

/* ---- Neighbourhood collectives ---- */

/* One block per neighbour each way: counts, byte offsets and types per
 * neighbour (a single count or type given for all is spread out first). */
struct nbr_args {
	const void *sbuf;
	void *rbuf;
	bool gather;                 /* the same send block to every out-neighbour */
	int scount, rcount;
	const int *scounts, *rcounts, *sdispls, *rdispls;
	const MPI_Aint *sbytes, *rbytes;
	MPI_Datatype st, rt;
	const MPI_Datatype *sts, *rts;
};

static int nbr_build(struct nbc_sched *s, const struct nbr_args *a)
{
	struct mbmpi_comm *c = s->comm;
	const int *in, *out, *in_tag, *out_tag;
	int nin, nout, ret;

	if ((ret = mbmpi_topo_neighbors(c, &nin, &in, &in_tag, &nout, &out, &out_tag)))
		return ret;
	if ((in_tag && nin > NBC_TAGS) || (out_tag && nout > NBC_TAGS))
		return MPI_ERR_UNSUPPORTED_OPERATION;
	if ((!a->gather && nout && !a->sts && !a->scounts && a->scount < 0) ||
	    (nin && !a->rts && !a->rcounts && a->rcount < 0))
		return MPI_ERR_COUNT;
	for (int i = 0; i < nin; i++) {
		MPI_Datatype rt = a->rts ? a->rts[i] : a->rt;
		int rc = a->rcounts ? a->rcounts[i] : a->rcount;
		struct mbmpi_dtype *rd;
		struct nbc_step *st;

		if (rc < 0)
			return MPI_ERR_COUNT;
		if (mbmpi_dt_check(rt))
			return MPI_ERR_TYPE;
		rd = mbmpi_dt(rt);
		if (in[i] == MPI_PROC_NULL)
			continue;
		s_recv(s, (char *)a->rbuf + (a->rbytes ? a->rbytes[i]
					     : (MPI_Aint)(a->rdispls ? a->rdispls[i] : i * rc) * rd->extent),
		       rc, rd, in[i]);
		if (in_tag && (st = s->err ? NULL : &s->steps[s->n - 1]))
			st->tagoff = in_tag[i];
	}
	for (int j = 0; j < nout; j++) {
		MPI_Datatype stt = a->sts ? a->sts[j] : a->st;
		int sc = a->scounts ? a->scounts[j] : a->scount;
		struct mbmpi_dtype *sd;
		struct nbc_step *st;

		if (sc < 0)
			return MPI_ERR_COUNT;
		if (mbmpi_dt_check(stt))
			return MPI_ERR_TYPE;
		sd = mbmpi_dt(stt);
		if (out[j] == MPI_PROC_NULL)
			continue;
		s_send(s, (const char *)a->sbuf +
			       (a->gather ? 0
				: a->sbytes ? a->sbytes[j]
				: (MPI_Aint)(a->sdispls ? a->sdispls[j] : j * sc) * sd->extent),
		       sc, sd, out[j]);
		if (out_tag && (st = s->err ? NULL : &s->steps[s->n - 1]))
			st->tagoff = out_tag[j];
	}
	s_wait(s);
	return MPI_SUCCESS;
}

static int c_neighbor(const struct nbr_args *a, MPI_Comm comm, MPI_Request *req)
{
	struct mbmpi_comm *c;

	NBC_BEGIN(comm, c, req);
	if (!c->topo)
		return MBMPI_ERR(c, MPI_ERR_TOPOLOGY);
	if (!(s = s_new(c)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	if ((ret = nbr_build(s, a))) {
		s_free(s);
		return MBMPI_ERR(c, ret);
	}
	NBC_END(c, req);
}

static int c_neighbor_wait(const struct nbr_args *a, MPI_Comm comm)
{
	MPI_Request r;
	int ret = c_neighbor(a, comm, &r);

	return ret ? ret : PMPI_Wait(&r, MPI_STATUS_IGNORE);
}

int PMPI_Ineighbor_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			     MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .gather = true, .scount = scount,
			      .rcount = rcount, .st = st, .rt = rt };

	return c_neighbor(&a, comm, req);
}
MBMPI_ALIAS(Ineighbor_allgather)

int PMPI_Neighbor_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			    MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .gather = true, .scount = scount,
			      .rcount = rcount, .st = st, .rt = rt };

	return c_neighbor_wait(&a, comm);
}
MBMPI_ALIAS(Neighbor_allgather)

int PMPI_Ineighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
			      const int rcounts[], const int displs[], MPI_Datatype rt, MPI_Comm comm,
			      MPI_Request *req)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .gather = true, .scount = scount,
			      .rcounts = rcounts, .rdispls = displs, .st = st, .rt = rt };

	if (!rcounts || !displs)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_neighbor(&a, comm, req);
}
MBMPI_ALIAS(Ineighbor_allgatherv)

int PMPI_Neighbor_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
			     const int rcounts[], const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .gather = true, .scount = scount,
			      .rcounts = rcounts, .rdispls = displs, .st = st, .rt = rt };

	if (!rcounts || !displs)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_neighbor_wait(&a, comm);
}
MBMPI_ALIAS(Neighbor_allgatherv)

int PMPI_Ineighbor_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			    MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount,
			      .st = st, .rt = rt };

	return c_neighbor(&a, comm, req);
}
MBMPI_ALIAS(Ineighbor_alltoall)

int PMPI_Neighbor_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			   MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .scount = scount, .rcount = rcount,
			      .st = st, .rt = rt };

	return c_neighbor_wait(&a, comm);
}
MBMPI_ALIAS(Neighbor_alltoall)

int PMPI_Ineighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
			     MPI_Datatype st, void *rbuf, const int rcounts[], const int rdispls[],
			     MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sdispls = sdispls,
			      .rcounts = rcounts, .rdispls = rdispls, .st = st, .rt = rt };

	if (!scounts || !sdispls || !rcounts || !rdispls)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_neighbor(&a, comm, req);
}
MBMPI_ALIAS(Ineighbor_alltoallv)

int PMPI_Neighbor_alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st,
			    void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rt,
			    MPI_Comm comm)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sdispls = sdispls,
			      .rcounts = rcounts, .rdispls = rdispls, .st = st, .rt = rt };

	if (!scounts || !sdispls || !rcounts || !rdispls)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_neighbor_wait(&a, comm);
}
MBMPI_ALIAS(Neighbor_alltoallv)

int PMPI_Ineighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
			     const MPI_Datatype sts[], void *rbuf, const int rcounts[],
			     const MPI_Aint rdispls[], const MPI_Datatype rts[], MPI_Comm comm,
			     MPI_Request *req)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sbytes = sdispls,
			      .sts = sts, .rcounts = rcounts, .rbytes = rdispls, .rts = rts };

	if (!scounts || !sdispls || !sts || !rcounts || !rdispls || !rts)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_neighbor(&a, comm, req);
}
MBMPI_ALIAS(Ineighbor_alltoallw)

int PMPI_Neighbor_alltoallw(const void *sbuf, const int scounts[], const MPI_Aint sdispls[],
			    const MPI_Datatype sts[], void *rbuf, const int rcounts[],
			    const MPI_Aint rdispls[], const MPI_Datatype rts[], MPI_Comm comm)
{
	MBMPI_GUARD();
	struct nbr_args a = { .sbuf = sbuf, .rbuf = rbuf, .scounts = scounts, .sbytes = sdispls,
			      .sts = sts, .rcounts = rcounts, .rbytes = rdispls, .rts = rts };

	if (!scounts || !sdispls || !sts || !rcounts || !rdispls || !rts)
		return MBMPI_ERR(mbmpi_comm(comm), MPI_ERR_ARG);
	return c_neighbor_wait(&a, comm);
}
MBMPI_ALIAS(Neighbor_alltoallw)

/* ---- MPI_Isendrecv (MPI-4) ---- */

/* A schedule for point-to-point steps only. It takes no collective
 * sequence number: those must advance alike on every rank, and a program
 * calls MPI_Isendrecv on whichever ranks it likes. */
static struct nbc_sched *s_new_p2p(struct mbmpi_comm *c)
{
	struct nbc_sched *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->comm = c;
	s->on = c;
	mbmpi_comm_retain(c);
	mbu_dlist_init(&s->link);
	s->recv_status = true;
	mbmpi_status_empty(&s->rst);
	return s;
}

/* The program's own message: its tag, the point-to-point context. */
static void s_p2p(struct nbc_sched *s, int type, const void *buf, int count, struct mbmpi_dtype *d,
		  int peer, int tag)
{
	struct nbc_step *st = s_xfer(s, type, buf, count, d, peer);

	if (st) {
		st->p2p = true;
		st->utag = tag;
	}
}

/* One receive and one send, one request that completes when both have and
 * reports the receive's status. With replace, the outgoing data is packed
 * first, into a buffer the schedule owns, so that the receive can land in
 * the program's buffer at once. */
static int isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
		     void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
		     MPI_Request *req, bool replace)
{
	struct mbmpi_dtype *sd = mbmpi_dt(stype);
	struct mbmpi_comm *c;
	struct nbc_sched *s;
	int ret;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(comm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!req)
		return MBMPI_ERR(c, MPI_ERR_REQUEST);
	if ((ret = mbmpi_check_send(sbuf, scount, stype, dest, stag, c)) ||
	    (ret = mbmpi_check_recv(rbuf, rcount, rtype, src, rtag, c)))
		return MBMPI_ERR(c, ret);
	if (!(s = s_new_p2p(c)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	if (replace) {
		size_t bytes = (size_t)scount * sd->size;
		char *tmp = s_tmp(s, bytes, BYTE_DT);

		if (tmp)
			mbmpi_pack(sbuf, (size_t)scount, sd, tmp);
		sbuf = tmp;
		scount = (int)bytes;
		sd = BYTE_DT;
	}
	s_p2p(s, S_RECV, rbuf, rcount, mbmpi_dt(rtype), src, rtag);
	s_p2p(s, S_SEND, sbuf, scount, sd, dest, stag);
	s_wait(s);
	ret = s_start(s, req);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}

int PMPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
		   int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	return isendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, req,
			 false);
}
MBMPI_ALIAS(Isendrecv)

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
			   int rtag, MPI_Comm comm, MPI_Request *req)
{
	MBMPI_GUARD();
	return isendrecv(buf, count, dt, dest, stag, buf, count, dt, src, rtag, comm, req, true);
}
MBMPI_ALIAS(Isendrecv_replace)
