/*
 * Intercommunicators: two disjoint groups, where every send and receive
 * names a rank of the other group. Creation agrees on a context across
 * both groups (mbu_ids.h: the masks each group ANDs, swapped by the two
 * leaders and broadcast in each group) and takes four ids: the intercomm's
 * point-to-point and collective contexts and those of the intracomm over
 * the local group. Dup, split and create on an intercommunicator, merge
 * into an intracommunicator, and the blocking collectives (root given as
 * MPI_ROOT / MPI_PROC_NULL in the root's group, the root's rank in the
 * other): local steps on the local intracomm, inter-group steps between
 * leaders or directly between members on the collective context.
 */
#include "mbmpi.h"

enum { TI_SWAP = 1, TI_BCAST, TI_REDUCE, TI_GATHER, TI_SCATTER, TI_ALLGATHER, TI_ALLTOALL,
       TI_BARRIER, TI_CREATE };

#define BYTES (mbmpi_dt(MPI_BYTE))

static MPI_Comm handle(struct mbmpi_comm *c)
{
	return (MPI_Comm)c;
}

/* Leaders swap `mlen` bytes for the other leader's `tlen`; then each
 * leader broadcasts what it got over its group. */
static int inter_swap(struct mbmpi_comm *c, const void *mine, size_t mlen, void *theirs, size_t tlen)
{
	int ret = MPI_SUCCESS;

	if (c->rank == 0) {
		struct mbmpi_req *r[2] = {NULL, NULL};

		if (!(ret = mbmpi_irecv(theirs, (int)tlen, BYTES, 0, TI_SWAP, c, c->ctx + 1, &r[0])) &&
		    !(ret = mbmpi_isend(mine, (int)mlen, BYTES, 0, TI_SWAP, c, c->ctx + 1, MBMPI_STD,
					&r[1])))
			ret = mbmpi_waitall(2, r);
		else if (r[0])
			mbmpi_wait(r[0], MPI_STATUS_IGNORE);
		if (ret)
			return ret;
	}
	return PMPI_Bcast(theirs, (int)tlen, MPI_BYTE, 0, handle(c->local));
}

/* Intercomm_create's agreement on a context (mbu_ids.h): over the local
 * group, between the leaders over the peer communicator (the new
 * intercommunicator does not exist yet), and back over the local group;
 * blocking, one try after another. */
static int agree_ctx_peer(struct mbmpi_comm *local, int leader, struct mbmpi_comm *peer,
			  int remote_leader, int tag, uint32_t *ctx)
{
	const int n = MBU_IDS_MSG_WORDS;
	struct mbu_ids_agree a;
	uint64_t mine[MBU_IDS_MSG_WORDS], theirs[MBU_IDS_MSG_WORDS];
	unsigned slot = 0;
	int ret, r = -EAGAIN;

	mbu_ids_begin(&mbmpi_ctx_ids, &a,
		      ((uint64_t)local->ctx << 32) | 0x40000000u | ((uint32_t)tag & 0x3fffffffu));
	do {
		mbu_ids_offer(&mbmpi_ctx_ids, &a);
		if ((ret = mbmpi_allreduce(a.offer, mine, n, MPI_UINT64_T, MPI_BAND, local)))
			break;
		if (local->rank == leader &&
		    (ret = PMPI_Sendrecv(mine, n, MPI_UINT64_T, remote_leader, tag, theirs, n,
					 MPI_UINT64_T, remote_leader, tag, handle(peer), MPI_STATUS_IGNORE)))
			break;
		if ((ret = PMPI_Bcast(theirs, n, MPI_UINT64_T, leader, handle(local))))
			break;
		for (int w = 0; w < n; w++)
			mine[w] &= theirs[w];
		r = mbu_ids_take(&mbmpi_ctx_ids, &a, mine, &slot);
	} while (r == -EAGAIN);
	mbu_ids_end(&mbmpi_ctx_ids, &a);
	if (ret)
		return ret;
	if (r)
		return MPI_ERR_OTHER;	/* every context is in use */
	*ctx = slot * 4;
	return MPI_SUCCESS;
}

/* The intercomm over lg (containing this process) and rg, on ctx..ctx+3;
 * takes the references to both groups, and gives the context back if it
 * fails. */
int mbmpi_inter_make(struct mbmpi_comm *parent, struct mbmpi_group *lg, struct mbmpi_group *rg,
		      uint32_t ctx, MPI_Comm *out)
{
	struct mbmpi_comm *c = calloc(1, sizeof(*c)), *l = calloc(1, sizeof(*l));

	if (!c || !l || mbmpi_comm_make(c, rg, ctx)) {
		mbmpi_ctx_put(ctx);
		free(c ? c->addr : NULL);
		free(c);
		free(l);
		mbmpi_group_release(lg);
		mbmpi_group_release(rg);
		return MPI_ERR_NO_MEM;
	}
	/* mbmpi_comm_make set the remote group's view; the local rank and the
	 * local group are this process's. */
	lg->refs++;
	if (mbmpi_comm_make(l, lg, ctx + 2)) {
		mbmpi_ctx_put(ctx);
		free(c->addr);
		free(c);
		free(l);
		mbmpi_group_release(lg);
		mbmpi_group_release(lg);
		mbmpi_group_release(rg);
		return MPI_ERR_NO_MEM;
	}
	l->errh = MPI_ERRORS_RETURN;
	c->inter = true;
	c->rgroup = rg;
	c->group = lg;
	c->rank = lg->rank;
	c->local = l;
	c->errh = parent->errh;
	mbmpi_errh_retain(c->errh);
	*out = (MPI_Comm)c;
	return MPI_SUCCESS;
}

void mbmpi_inter_free(struct mbmpi_comm *c)
{
	mbmpi_shm_free(c->local);
	mbmpi_hier_free(c->local);
	free(c->local->addr);
	mbmpi_group_release(c->local->group);
	free(c->local);
	mbmpi_group_release(c->rgroup);
	c->local = NULL;
	c->rgroup = NULL;
}

static struct mbmpi_group *group_of(const int *world, int n)
{
	struct mbmpi_group *g = mbmpi_group_new(n);

	if (!g)
		return NULL;
	if (n)
		memcpy(g->world, world, sizeof(int) * (size_t)n);
	mbmpi_group_fix_rank(g);
	return g;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
			  int remote_leader, int tag, MPI_Comm *newintercomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *l, *p = NULL;
	struct mbmpi_group *rg;
	int ret, sizes[2], rsize = 0, *rworld;
	uint32_t ctx;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(local_comm, &l)))
		return MBMPI_ERR(NULL, ret);
	if (l->inter)
		return MBMPI_ERR(l, MPI_ERR_COMM);
	if (!newintercomm)
		return MBMPI_ERR(l, MPI_ERR_ARG);
	if (local_leader < 0 || local_leader >= l->size)
		return MBMPI_ERR(l, MPI_ERR_RANK);
	if (l->rank == local_leader) {
		if ((ret = mbmpi_check_comm(peer_comm, &p)))
			return MBMPI_ERR(l, ret);
		if (remote_leader < 0 || remote_leader >= p->size || tag < 0)
			return MBMPI_ERR(l, tag < 0 ? MPI_ERR_TAG : MPI_ERR_RANK);
	}
	if ((ret = agree_ctx_peer(l, local_leader, p, remote_leader, tag, &ctx)))
		return MBMPI_ERR(l, ret);
	/* The leaders swap their groups' sizes, then their members. */
	sizes[0] = l->size;
	rworld = NULL;
	if (l->rank == local_leader)
		ret = PMPI_Sendrecv(sizes, 1, MPI_INT, remote_leader, tag, &rsize, 1, MPI_INT,
				    remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
	if (!ret)
		ret = PMPI_Bcast(&rsize, 1, MPI_INT, local_leader, local_comm);
	if (!ret && (rsize <= 0 || !(rworld = malloc(sizeof(int) * (size_t)rsize))))
		ret = rsize <= 0 ? MPI_ERR_INTERN : MPI_ERR_NO_MEM;
	if (!ret && l->rank == local_leader)
		ret = PMPI_Sendrecv(l->group->world, l->size, MPI_INT, remote_leader, tag, rworld, rsize,
				    MPI_INT, remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
	if (!ret)
		ret = PMPI_Bcast(rworld, rsize, MPI_INT, local_leader, local_comm);
	rg = ret ? NULL : group_of(rworld, rsize);
	free(rworld);
	if (!ret && !rg)
		ret = MPI_ERR_NO_MEM;
	if (ret) {
		mbmpi_ctx_put(ctx);
		return MBMPI_ERR(l, ret);
	}
	l->group->refs++;
	ret = mbmpi_inter_make(l, l->group, rg, ctx, newintercomm);
	/* The local leader's group rank 0 is what the other side's leader
	 * exchanges with: rank 0 of each group leads from here on. */
	return ret ? MBMPI_ERR(l, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Intercomm_create)

int mbmpi_inter_dup(struct mbmpi_comm *c, MPI_Comm *out)
{
	uint32_t ctx;
	int ret;

	if ((ret = mbmpi_ctx_get(c, &ctx)))
		return ret;
	c->group->refs++;
	c->rgroup->refs++;
	return mbmpi_inter_make(c, c->group, c->rgroup, ctx, out);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	struct mbmpi_group *g;
	int ret, mine[2], theirs[2];
	bool first;
	uint32_t ctx;

	MBMPI_CHECK_INIT();
	if ((ret = mbmpi_check_comm(intercomm, &c)))
		return MBMPI_ERR(NULL, ret);
	if (!c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if (!newcomm)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	mine[0] = !!high;
	mine[1] = c->group->world[0];
	if ((ret = inter_swap(c, mine, sizeof(mine), theirs, sizeof(theirs))))
		return MBMPI_ERR(c, ret);
	/* The low group first; on a tie, the group whose leader came first in
	 * MPI_COMM_WORLD, which both sides see alike. */
	first = mine[0] != theirs[0] ? !mine[0] : mine[1] < theirs[1];
	if ((ret = mbmpi_ctx_get(c, &ctx)))
		return MBMPI_ERR(c, ret);
	if (!(g = mbmpi_group_new(c->group->size + c->rgroup->size)))
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	{
		struct mbmpi_group *a = first ? c->group : c->rgroup, *b = first ? c->rgroup : c->group;

		memcpy(g->world, a->world, sizeof(int) * (size_t)a->size);
		memcpy(g->world + a->size, b->world, sizeof(int) * (size_t)b->size);
	}
	mbmpi_group_fix_rank(g);
	ret = mbmpi_comm_from_group(c, g, ctx, newcomm);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Intercomm_merge)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, size, &c)))
		return ret;
	if (!c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	*size = c->rgroup->size;
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	if ((ret = MBMPI_COMM_QUERY(comm, group, &c)))
		return ret;
	if (!c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	c->rgroup->refs++;
	*group = mbmpi_group_handle(c->rgroup);
	return MPI_SUCCESS;
}
MBMPI_ALIAS(Comm_remote_group)

struct ck {
	int key, rank, world;
};

static int ck_cmp(const void *a, const void *b)
{
	const struct ck *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Members of `g` (colours and keys in ck[2i], ck[2i+1]) with colour col,
 * in key order. */
static struct mbmpi_group *pick(const struct mbmpi_group *g, const int *ck, int col)
{
	struct ck *v = malloc(sizeof(*v) * (size_t)(g->size ? g->size : 1));
	struct mbmpi_group *out;
	int n = 0;

	if (!v)
		return NULL;
	for (int i = 0; i < g->size; i++)
		if (ck[2 * i] == col)
			v[n++] = (struct ck){.key = ck[2 * i + 1], .rank = i, .world = g->world[i]};
	qsort(v, (size_t)n, sizeof(*v), ck_cmp);
	if ((out = mbmpi_group_new(n))) {
		for (int i = 0; i < n; i++)
			out->world[i] = v[i].world;
		mbmpi_group_fix_rank(out);
	}
	free(v);
	return out;
}

int mbmpi_inter_split(struct mbmpi_comm *c, int color, int key, MPI_Comm *out)
{
	int ls = c->group->size, rs = c->rgroup->size, ret;
	int *lck = malloc(sizeof(int) * 2 * (size_t)ls), *rck = malloc(sizeof(int) * 2 * (size_t)rs);
	struct mbmpi_group *lg = NULL, *rg = NULL;
	uint32_t ctx = 0;
	bool have_ctx = false;

	if (!lck || !rck) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	lck[2 * c->rank] = color;
	lck[2 * c->rank + 1] = key;
	if ((ret = mbmpi_allgather_int(lck, 2, c->local)) ||
	    (ret = inter_swap(c, lck, sizeof(int) * 2 * (size_t)ls, rck, sizeof(int) * 2 * (size_t)rs)) ||
	    (ret = mbmpi_ctx_get(c, &ctx)))
		goto out;
	have_ctx = true;
	*out = MPI_COMM_NULL;
	if (color == MPI_UNDEFINED)
		goto out;
	lg = pick(c->group, lck, color);
	rg = pick(c->rgroup, rck, color);
	if (!lg || !rg) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	/* No partner of this colour on the other side: no communicator. */
	if (!rg->size)
		goto out;
	ret = mbmpi_inter_make(c, lg, rg, ctx, out);
	lg = rg = NULL;
	have_ctx = false;	/* mbmpi_inter_make used it or gave it back */
out:
	if (have_ctx)
		mbmpi_ctx_put(ctx);
	mbmpi_group_release(lg);
	mbmpi_group_release(rg);
	free(lck);
	free(rck);
	return ret;
}

int mbmpi_inter_create(struct mbmpi_comm *c, struct mbmpi_group *g, MPI_Comm *out)
{
	int n = g->size, rn = 0, ret, *rworld = NULL;
	struct mbmpi_group *lg, *rg;
	uint32_t ctx;

	for (int i = 0; i < n; i++) {
		bool in = false;

		for (int j = 0; j < c->group->size && !in; j++)
			in = c->group->world[j] == g->world[i];
		if (!in)
			return MPI_ERR_GROUP;
	}
	if ((ret = inter_swap(c, &n, sizeof(int), &rn, sizeof(int))))
		return ret;
	if (!(rworld = malloc(sizeof(int) * (size_t)(rn ? rn : 1))))
		return MPI_ERR_NO_MEM;
	if ((ret = inter_swap(c, g->world, sizeof(int) * (size_t)n, rworld, sizeof(int) * (size_t)rn)) ||
	    (ret = mbmpi_ctx_get(c, &ctx))) {
		free(rworld);
		return ret;
	}
	*out = MPI_COMM_NULL;
	lg = group_of(g->world, n);
	rg = group_of(rworld, rn);
	free(rworld);
	if (!lg || !rg || lg->rank == MPI_UNDEFINED || !rn || !n) {
		mbmpi_ctx_put(ctx);
		ret = lg && rg ? MPI_SUCCESS : MPI_ERR_NO_MEM;
		mbmpi_group_release(lg);
		mbmpi_group_release(rg);
		return ret;
	}
	return mbmpi_inter_make(c, lg, rg, ctx, out);
}

/* ---- Collectives ---- */

static int i_send(const void *b, int n, struct mbmpi_dtype *d, int dst, int tag, struct mbmpi_comm *c)
{
	struct mbmpi_req *r;
	int ret = mbmpi_isend(b, n, d, dst, tag, c, c->ctx + 1, MBMPI_STD, &r);

	return ret ? ret : mbmpi_wait(r, MPI_STATUS_IGNORE);
}

static int i_recv(void *b, int n, struct mbmpi_dtype *d, int src, int tag, struct mbmpi_comm *c)
{
	struct mbmpi_req *r;
	int ret = mbmpi_irecv(b, n, d, src, tag, c, c->ctx + 1, &r);

	return ret ? ret : mbmpi_wait(r, MPI_STATUS_IGNORE);
}

static int root_check(struct mbmpi_comm *c, int root)
{
	return root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->size)
		       ? MPI_SUCCESS : MPI_ERR_ROOT;
}

/* A buffer for count instances of dt, addressed as the user's would be. */
static char *tmp_for(int count, MPI_Datatype dt, void **raw)
{
	MPI_Aint start;
	size_t span = mbmpi_dt_span(mbmpi_dt(dt), (size_t)count, &start);

	*raw = malloc(span ? span : 1);
	return *raw ? (char *)*raw - start : NULL;
}

int mbmpi_inter_barrier(struct mbmpi_comm *c)
{
	int ret;

	/* Everyone here has entered; the leaders learn that of each other;
	 * nobody here leaves before its leader knows. */
	if ((ret = mbmpi_barrier(c->local)))
		return ret;
	if (c->rank == 0) {
		struct mbmpi_req *r[2] = {NULL, NULL};

		if (!(ret = mbmpi_irecv(NULL, 0, BYTES, 0, TI_BARRIER, c, c->ctx + 1, &r[0])) &&
		    !(ret = mbmpi_isend(NULL, 0, BYTES, 0, TI_BARRIER, c, c->ctx + 1, MBMPI_STD, &r[1])))
			ret = mbmpi_waitall(2, r);
		else if (r[0])
			mbmpi_wait(r[0], MPI_STATUS_IGNORE);
		if (ret)
			return ret;
	}
	return mbmpi_barrier(c->local);
}

int mbmpi_inter_bcast(void *buf, int count, MPI_Datatype dt, int root, struct mbmpi_comm *c)
{
	int ret;

	if ((ret = root_check(c, root)))
		return ret;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root == MPI_ROOT)
		return i_send(buf, count, mbmpi_dt(dt), 0, TI_BCAST, c);
	if (c->rank == 0 && (ret = i_recv(buf, count, mbmpi_dt(dt), root, TI_BCAST, c)))
		return ret;
	return PMPI_Bcast(buf, count, dt, 0, handle(c->local));
}

int mbmpi_inter_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		       struct mbmpi_comm *c)
{
	void *raw = NULL;
	char *tmp = NULL;
	int ret;

	if ((ret = root_check(c, root)))
		return ret;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root == MPI_ROOT)
		return i_recv(rbuf, count, mbmpi_dt(dt), 0, TI_REDUCE, c);
	/* The other group reduces to its leader, which sends to the root. */
	if (c->rank == 0 && !(tmp = tmp_for(count, dt, &raw)))
		return MPI_ERR_NO_MEM;
	ret = PMPI_Reduce(sbuf, tmp, count, dt, op, 0, handle(c->local));
	if (!ret && c->rank == 0)
		ret = i_send(tmp, count, mbmpi_dt(dt), root, TI_REDUCE, c);
	free(raw);
	return ret;
}

int mbmpi_inter_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			  struct mbmpi_comm *c)
{
	void *raw = NULL;
	char *tmp = NULL;
	int ret;

	/* Each group reduces to its leader; the leaders swap; each leader
	 * broadcasts the other group's result over its own. */
	if (c->rank == 0 && !(tmp = tmp_for(count, dt, &raw)))
		return MPI_ERR_NO_MEM;
	ret = PMPI_Reduce(sbuf, tmp, count, dt, op, 0, handle(c->local));
	if (!ret && c->rank == 0) {
		struct mbmpi_req *r[2] = {NULL, NULL};

		if (!(ret = mbmpi_irecv(rbuf, count, mbmpi_dt(dt), 0, TI_REDUCE, c, c->ctx + 1, &r[0])) &&
		    !(ret = mbmpi_isend(tmp, count, mbmpi_dt(dt), 0, TI_REDUCE, c, c->ctx + 1, MBMPI_STD,
					&r[1])))
			ret = mbmpi_waitall(2, r);
		else if (r[0])
			mbmpi_wait(r[0], MPI_STATUS_IGNORE);
	}
	free(raw);
	return ret ? ret : PMPI_Bcast(rbuf, count, dt, 0, handle(c->local));
}

/* Every member of one side sends to or receives from each member of the
 * other: gathers and scatters from a root, and the all- versions. */
static int exchange(struct mbmpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
		    const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *rdispls,
		    const MPI_Datatype *rtypes, int peers, bool byte_displs, int tag)
{
	struct mbmpi_req **rq = calloc(2 * (size_t)(peers ? peers : 1), sizeof(*rq));
	int ret = MPI_SUCCESS, e;

	if (!rq)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < peers && !ret && rbuf; i++) {
		struct mbmpi_dtype *d = mbmpi_dt(rtypes[i]);
		MPI_Aint off = byte_displs ? rdispls[i] : (MPI_Aint)rdispls[i] * d->extent;

		ret = mbmpi_irecv((char *)rbuf + off, rcounts[i], d, i, tag, c, c->ctx + 1, &rq[i]);
	}
	for (int i = 0; i < peers && !ret && sbuf; i++) {
		struct mbmpi_dtype *d = mbmpi_dt(stypes[i]);
		MPI_Aint off = byte_displs ? sdispls[i] : (MPI_Aint)sdispls[i] * d->extent;

		ret = mbmpi_isend((const char *)sbuf + off, scounts[i], d, i, tag, c, c->ctx + 1, MBMPI_STD,
				  &rq[peers + i]);
	}
	e = mbmpi_waitall(2 * peers, rq);
	free(rq);
	return ret ? ret : e;
}

/* Uniform counts and types as the per-peer arrays exchange() takes. */
struct uniform {
	int *counts, *displs;
	MPI_Datatype *types;
};

static int uniform(struct uniform *u, int n, int count, MPI_Datatype dt)
{
	u->counts = malloc(sizeof(int) * (size_t)(n ? n : 1));
	u->displs = malloc(sizeof(int) * (size_t)(n ? n : 1));
	u->types = malloc(sizeof(MPI_Datatype) * (size_t)(n ? n : 1));
	if (!u->counts || !u->displs || !u->types)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++) {
		u->counts[i] = count;
		u->displs[i] = i * count;
		u->types[i] = dt;
	}
	return MPI_SUCCESS;
}

static void uniform_free(struct uniform *u)
{
	free(u->counts);
	free(u->displs);
	free(u->types);
}

static int types_of(MPI_Datatype **t, int n, MPI_Datatype dt)
{
	if (!(*t = malloc(sizeof(MPI_Datatype) * (size_t)(n ? n : 1))))
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++)
		(*t)[i] = dt;
	return MPI_SUCCESS;
}

int mbmpi_inter_gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts,
			const int *displs, MPI_Datatype rt, int root, struct mbmpi_comm *c)
{
	MPI_Datatype *t;
	int ret;

	if ((ret = root_check(c, root)))
		return ret;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return i_send(sbuf, scount, mbmpi_dt(st), root, TI_GATHER, c);
	if ((ret = mbmpi_coll_check_counts(rcounts, displs, rt, c->size)) || (ret = types_of(&t, c->size, rt)))
		return ret;
	ret = exchange(c, NULL, NULL, NULL, NULL, rbuf, rcounts, displs, t, c->size, false, TI_GATHER);
	free(t);
	return ret;
}

int mbmpi_inter_gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		       MPI_Datatype rt, int root, struct mbmpi_comm *c)
{
	struct uniform u = {0};
	int ret;

	if (root != MPI_ROOT)
		return mbmpi_inter_gatherv(sbuf, scount, st, NULL, NULL, NULL, rt, root, c);
	if (!(ret = uniform(&u, c->size, rcount, rt)))
		ret = mbmpi_inter_gatherv(sbuf, scount, st, rbuf, u.counts, u.displs, rt, root, c);
	uniform_free(&u);
	return ret;
}

int mbmpi_inter_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype st,
			 void *rbuf, int rcount, MPI_Datatype rt, int root, struct mbmpi_comm *c)
{
	MPI_Datatype *t;
	int ret;

	if ((ret = root_check(c, root)))
		return ret;
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return i_recv(rbuf, rcount, mbmpi_dt(rt), root, TI_SCATTER, c);
	if ((ret = mbmpi_coll_check_counts(scounts, displs, st, c->size)) || (ret = types_of(&t, c->size, st)))
		return ret;
	ret = exchange(c, sbuf, scounts, displs, t, NULL, NULL, NULL, NULL, c->size, false, TI_SCATTER);
	free(t);
	return ret;
}

int mbmpi_inter_scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			MPI_Datatype rt, int root, struct mbmpi_comm *c)
{
	struct uniform u = {0};
	int ret;

	if (root != MPI_ROOT)
		return mbmpi_inter_scatterv(NULL, NULL, NULL, st, rbuf, rcount, rt, root, c);
	if (!(ret = uniform(&u, c->size, scount, st)))
		ret = mbmpi_inter_scatterv(sbuf, u.counts, u.displs, st, rbuf, rcount, rt, root, c);
	uniform_free(&u);
	return ret;
}

/* Allgather(v): every member's block goes to every member of the other
 * group, so each receives the other group's blocks in rank order. */
int mbmpi_inter_allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf,
			   const int *rcounts, const int *displs, MPI_Datatype rt, struct mbmpi_comm *c)
{
	struct uniform s = {0};
	MPI_Datatype *t = NULL;
	int ret;

	if (!(ret = uniform(&s, c->size, scount, st)) && !(ret = types_of(&t, c->size, rt))) {
		for (int i = 0; i < c->size; i++)
			s.displs[i] = 0;
		ret = exchange(c, sbuf, s.counts, s.displs, s.types, rbuf, rcounts, displs, t, c->size,
			       false, TI_ALLGATHER);
	}
	uniform_free(&s);
	free(t);
	return ret;
}

int mbmpi_inter_allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			  MPI_Datatype rt, struct mbmpi_comm *c)
{
	struct uniform u = {0};
	int ret;

	if (!(ret = uniform(&u, c->size, rcount, rt)))
		ret = mbmpi_inter_allgatherv(sbuf, scount, st, rbuf, u.counts, u.displs, rt, c);
	uniform_free(&u);
	return ret;
}

int mbmpi_inter_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
			  const MPI_Datatype *st, void *rbuf, const int *rcounts, const int *rdispls,
			  const MPI_Datatype *rt, bool bytes, struct mbmpi_comm *c)
{
	return exchange(c, sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, c->size, bytes,
			TI_ALLTOALL);
}

int mbmpi_inter_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
			  void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rt,
			  struct mbmpi_comm *c)
{
	MPI_Datatype *s = NULL, *r = NULL;
	int ret;

	if (!(ret = types_of(&s, c->size, st)) && !(ret = types_of(&r, c->size, rt)))
		ret = exchange(c, sbuf, scounts, sdispls, s, rbuf, rcounts, rdispls, r, c->size, false,
			       TI_ALLTOALL);
	free(s);
	free(r);
	return ret;
}

int mbmpi_inter_alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
			 MPI_Datatype rt, struct mbmpi_comm *c)
{
	struct uniform s = {0}, r = {0};
	int ret;

	if (!(ret = uniform(&s, c->size, scount, st)) && !(ret = uniform(&r, c->size, rcount, rt)))
		ret = exchange(c, sbuf, s.counts, s.displs, s.types, rbuf, r.counts, r.displs, r.types,
			       c->size, false, TI_ALLTOALL);
	uniform_free(&s);
	uniform_free(&r);
	return ret;
}

/* The other group's data, reduced, scattered over this group by rcounts:
 * each group reduces its whole vector (the sum of its own rcounts, which
 * the standard makes equal to the other group's) to its leader, the
 * leaders swap, and each scatters what it received. */
int mbmpi_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
			       MPI_Op op, struct mbmpi_comm *c)
{
	int n = c->group->size, total = 0, ret, *displs;
	void *raw1 = NULL, *raw2 = NULL;
	char *mine = NULL, *theirs = NULL;

	for (int i = 0; i < n; i++)
		total += rcounts[i];
	if (!(displs = malloc(sizeof(int) * (size_t)n)))
		return MPI_ERR_NO_MEM;
	for (int i = 0, o = 0; i < n; o += rcounts[i++])
		displs[i] = o;
	if (c->rank == 0 && (!(mine = tmp_for(total, dt, &raw1)) || !(theirs = tmp_for(total, dt, &raw2)))) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	if ((ret = PMPI_Reduce(sbuf, mine, total, dt, op, 0, handle(c->local))))
		goto out;
	if (c->rank == 0) {
		struct mbmpi_req *r[2] = {NULL, NULL};

		if (!(ret = mbmpi_irecv(theirs, total, mbmpi_dt(dt), 0, TI_REDUCE, c, c->ctx + 1, &r[0])) &&
		    !(ret = mbmpi_isend(mine, total, mbmpi_dt(dt), 0, TI_REDUCE, c, c->ctx + 1, MBMPI_STD,
					&r[1])))
			ret = mbmpi_waitall(2, r);
		else if (r[0])
			mbmpi_wait(r[0], MPI_STATUS_IGNORE);
		if (ret)
			goto out;
	}
	ret = PMPI_Scatterv(theirs, rcounts, displs, dt, rbuf, rcounts[c->rank], dt, 0, handle(c->local));
out:
	free(displs);
	free(raw1);
	free(raw2);
	return ret;
}
