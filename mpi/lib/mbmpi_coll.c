/*
 * Blocking collectives over the engine's point-to-point, on each
 * communicator's collective context (ctx + 1), so collective traffic never
 * matches a user's receive. Algorithms by size: dissemination barrier;
 * binomial and scatter-allgather bcast; binomial reduce (rank-ordered for
 * non-commutative ops); recursive-doubling and Rabenseifner allreduce;
 * binomial gather/scatter; recursive-doubling, Bruck and ring allgather;
 * Bruck and pairwise alltoall; pairwise reduce-scatter; recursive-doubling
 * scan and exscan. MATCHBOX_MPI_<COLL> forces a choice (mbmpi_params.h).
 * Reductions work in the datatype's own layout; data-movement collectives
 * move packed bytes and unpack once at the end.
 */
#include "mbmpi.h"

#include <stdio.h>

enum { T_BARRIER = 1, T_BCAST, T_REDUCE, T_ALLREDUCE, T_GATHER, T_SCATTER, T_ALLGATHER,
       T_ALLTOALL, T_RSCATTER, T_SCAN, T_EXSCAN };

#define BYTE_DT (&mbmpi_predef_types[4])

static int c_sendrecv(const void *sb, size_t sc, struct mbmpi_dtype *st, int dst, void *rb,
		      size_t rc, struct mbmpi_dtype *rt, int src, int tag, struct mbmpi_comm *c)
{
	struct mbmpi_req *r[2] = {NULL, NULL};
	int ret;

	if ((ret = mbmpi_irecv(rb, (int)rc, rt, src, tag, c, c->ctx + 1, &r[0])))
		return ret;
	if ((ret = mbmpi_isend(sb, (int)sc, st, dst, tag, c, c->ctx + 1, MBMPI_STD, &r[1]))) {
		mbmpi_wait(r[0], MPI_STATUS_IGNORE);
		return ret;
	}
	return mbmpi_waitall(2, r);
}

static int c_send(const void *b, size_t n, struct mbmpi_dtype *d, int dst, int tag,
		  struct mbmpi_comm *c)
{
	struct mbmpi_req *r;
	int ret = mbmpi_isend(b, (int)n, d, dst, tag, c, c->ctx + 1, MBMPI_STD, &r);

	return ret ? ret : mbmpi_wait(r, MPI_STATUS_IGNORE);
}

static int c_recv(void *b, size_t n, struct mbmpi_dtype *d, int src, int tag, struct mbmpi_comm *c)
{
	struct mbmpi_req *r;
	int ret = mbmpi_irecv(b, (int)n, d, src, tag, c, c->ctx + 1, &r);

	return ret ? ret : mbmpi_wait(r, MPI_STATUS_IGNORE);
}

/* A buffer for `count` instances of d, addressed as the user's would be. */
static char *c_tmp(size_t count, const struct mbmpi_dtype *d, void **raw)
{
	MPI_Aint start;
	size_t span = mbmpi_dt_span(d, count, &start);

	*raw = malloc(span ? span : 1);
	return *raw ? (char *)*raw - start : NULL;
}

void mbmpi_dt_copy(void *dst, const void *src, size_t count, const struct mbmpi_dtype *d)
{
	if (dst == src || !count)
		return;
	if (mbmpi_dt_flat(d, count)) {
		memcpy((char *)dst + mbmpi_dt_start(d), (const char *)src + mbmpi_dt_start(d),
		       count * d->size);
		return;
	}
	for (size_t i = 0; i < count; i++)
		for (size_t r = 0; r < mbmpi_dt_reps(d); r++) {
			MPI_Aint at = (MPI_Aint)i * d->extent + (MPI_Aint)r * d->rstride;

			for (int s = 0; s < d->nseg; s++)
				memcpy((char *)dst + at + d->segs[s].disp,
				       (const char *)src + at + d->segs[s].disp, d->segs[s].len);
		}
}

/* The same bytes between two layouts that may differ (the root's own
 * block in gatherv and scatterv). */
static int c_copy_typed(void *dst, size_t dcount, const struct mbmpi_dtype *dd, const void *src,
			size_t scount, const struct mbmpi_dtype *sd)
{
	size_t bytes = scount * sd->size;
	char *t = malloc(bytes + 1);

	if (!t)
		return MPI_ERR_NO_MEM;
	mbmpi_pack(src, scount, sd, t);
	mbmpi_unpack(t, bytes, dst, dcount, dd);
	free(t);
	return MPI_SUCCESS;
}

static int c_pof2(int n)
{
	int p = 1;

	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* ---- Across nodes: shared memory within each, point to point between ---- */

/* A communicator over several nodes, some with more than one of its ranks:
 * its ranks on each node (a communicator whose collectives go through
 * shared memory) and the lowest of them on every node, the leaders. */
struct mbmpi_hier {
	struct mbmpi_comm *node, *leaders;   /* leaders: NULL off the leaders */
	int *node_of;                        /* comm rank -> its node's leader-comm rank */
	int *node_rank;                      /* comm rank -> its rank in its node's comm */
};

void mbmpi_hier_free(struct mbmpi_comm *c)
{
	struct mbmpi_hier *h = c->hier;

	if (h) {
		if (h->node)
			mbmpi_comm_release(h->node);
		if (h->leaders)
			mbmpi_comm_release(h->leaders);
		free(h->node_of);
		free(h);
	}
	c->hier = NULL;
	c->hier_state = 0;
}

/* A communicator of c's ranks r, in c's order, with lead[r] == l: a node's
 * ranks; or with l < 0, those with lead[r] == r: the leaders. */
static int hier_comm(struct mbmpi_comm *c, const int *lead, int l, uint32_t ctx, MPI_Comm *out)
{
	struct mbmpi_group *g;
	int n = 0, k = 0;

	for (int r = 0; r < c->size; r++)
		n += lead[r] == (l < 0 ? r : l);
	if (!(g = mbmpi_group_new(n))) {
		mbmpi_ctx_put(ctx);
		return MPI_ERR_NO_MEM;
	}
	for (int r = 0; r < c->size; r++)
		if (lead[r] == (l < 0 ? r : l))
			g->world[k++] = c->group->world[r];
	mbmpi_group_fix_rank(g);
	return mbmpi_comm_from_group(c, g, ctx, out);
}

/* Collective over c at its first collective that could use it; NULL (and
 * never again) when c is on one node, has one rank per node, or any rank
 * failed to make its part. Ranks compute the same answer, and the same
 * groups, from the same host names, so the two communicators cost three
 * small collectives rather than two splits: the node communicators (one
 * per node, disjoint) take the unused upper half of c's context slot
 * (c->ctx + 2; an intercommunicator's local half lives there, but c is
 * not one), or for MPI_COMM_WORLD, whose upper half is MPI_COMM_SELF's,
 * the slot reserved for it; only the leaders' communicator needs a
 * context agreed over c. Across four namespace hosts, 8 ranks on 2 cores
 * (each small collective some 25 ms there), this took a new
 * communicator's MPI_Comm_dup, first MPI_Allreduce and MPI_Comm_free from
 * 245 to 161 ms. */
static struct mbmpi_hier *hier_get(struct mbmpi_comm *c)
{
	struct mbmpi_hier *h;
	int n = c->size, me = c->rank, nl = 0, ok, all = 0, *lead;
	MPI_Comm nh = MPI_COMM_NULL, lh = MPI_COMM_NULL;
	uint32_t lctx, nctx;
	bool shared = false, lok, nok = true;

	if (MBMPI_LIKELY(c->hier_state))
		return c->hier;
	c->hier_state = -1;
	if (c->inter || !mbmpi.coll_shm || !mbmpi.coll_hier || !mbmpi.hosts || n < 3 ||
	    mbmpi_comm_on_one_node(c))
		return NULL;
	h = calloc(1, sizeof(*h));
	lead = malloc(sizeof(int) * 3 * (size_t)n);
	ok = h && lead;
	for (int r = 0; ok && r < n; r++) {
		const char *host = mbmpi.hosts[c->group->world[r]];
		int l = r;

		for (int q = 0; q < r; q++)
			if (lead[q] == q && !strcmp(mbmpi.hosts[c->group->world[q]], host)) {
				l = q;
				break;
			}
		lead[r] = l;
		shared |= l != r;
		lead[n + r] = l == r ? nl++ : lead[n + l];
		lead[2 * n + r] = 0;
		for (int q = l; q < r; q++)
			lead[2 * n + r] += lead[q] == l;
	}
	/* Every rank decides alike: all could compute, and some node is shared. */
	if (mbmpi_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c) || !all || !shared) {
		free(h);
		free(lead);
		return NULL;
	}
	lok = !mbmpi_ctx_get(c, &lctx);
	/* c->ctx is not a slot's first value when c is an intercommunicator's
	 * local half: then its upper half is the next slot's, and the node
	 * communicators agree on a context of their own (every rank of c
	 * decides alike). */
	if (c == &mbmpi_comm_world)
		nctx = MBMPI_CTX_WORLD_NODE;
	else if (c->ctx % 4 == 0)
		nctx = c->ctx + 2;
	else
		nok = !mbmpi_ctx_get(c, &nctx);
	ok = lok && nok;
	if (ok) {
		/* Each hier_comm gives its context back if it fails. */
		ok = !hier_comm(c, lead, lead[me], nctx, &nh);
		if (lead[me] == me)
			ok &= !hier_comm(c, lead, -1, lctx, &lh);
		else
			mbmpi_ctx_put(lctx);
	} else {
		if (lok)
			mbmpi_ctx_put(lctx);
		if (nok)
			mbmpi_ctx_put(nctx);
	}
	if (mbmpi_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c) || !all) {
		if (nh != MPI_COMM_NULL)
			mbmpi_comm_release(mbmpi_comm(nh));
		if (lh != MPI_COMM_NULL)
			mbmpi_comm_release(mbmpi_comm(lh));
		free(h);
		free(lead);
		return NULL;
	}
	h->node = mbmpi_comm(nh);
	h->leaders = lh == MPI_COMM_NULL ? NULL : mbmpi_comm(lh);
	/* node_of and node_rank share lead's allocation. */
	memmove(lead, lead + n, sizeof(int) * 2 * (size_t)n);
	h->node_of = lead;
	h->node_rank = lead + n;
	c->hier = h;
	c->hier_state = 1;
	return h;
}

/* ---- Barrier ---- */

int mbmpi_barrier(struct mbmpi_comm *c)
{
	int n = c->size, r = c->rank, ret;
	struct mbmpi_hier *h;

	if (!mbmpi.alg_barrier && (ret = mbmpi_shm_barrier(c)) != MBMPI_SHM_PASS)
		return ret;
	/* Everyone on the node in, the leaders among themselves, everyone out. */
	if (!mbmpi.alg_barrier && (h = hier_get(c))) {
		if ((ret = mbmpi_barrier(h->node)) ||
		    (h->leaders && (ret = mbmpi_barrier(h->leaders))))
			return ret;
		return mbmpi_barrier(h->node);
	}
	for (int k = 1; k < n; k <<= 1)
		if ((ret = c_sendrecv(NULL, 0, BYTE_DT, (r + k) % n, NULL, 0, BYTE_DT,
				      (r - k + n) % n, T_BARRIER, c)))
			return ret;
	return MPI_SUCCESS;
}

/* ---- Bcast ---- */

static int bcast_binomial(void *buf, size_t n, struct mbmpi_dtype *d, int root, struct mbmpi_comm *c)
{
	int size = c->size, rel = (c->rank - root + size) % size, mask = 1, ret;

	while (mask < size) {
		if (rel & mask) {
			if ((ret = c_recv(buf, n, d, (c->rank - mask + size) % size, T_BCAST, c)))
				return ret;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (rel + mask < size &&
		    (ret = c_send(buf, n, d, (c->rank + mask) % size, T_BCAST, c)))
			return ret;
	return MPI_SUCCESS;
}

/* Van de Geijn: binomial scatter of pieces, then a ring allgather of them. */
static int bcast_scatter_allgather(char *buf, size_t nbytes, int root, struct mbmpi_comm *c)
{
	int size = c->size, rank = c->rank, rel = (rank - root + size) % size, mask = 1, ret;
	size_t ss = (nbytes + (size_t)size - 1) / (size_t)size, cur = rel ? 0 : nbytes;

#define PIECE(k) ((size_t)(k) * ss >= nbytes ? 0 : (nbytes - (size_t)(k) * ss < ss ? nbytes - (size_t)(k) * ss : ss))
	while (mask < size) {
		if (rel & mask) {
			size_t want = (size_t)rel * ss < nbytes ? nbytes - (size_t)rel * ss : 0;
			size_t sub = (size_t)mask * ss;

			want = want < sub ? want : sub;
			if (want && (ret = c_recv(buf + (size_t)rel * ss, want, BYTE_DT,
						  (rank - mask + size) % size, T_BCAST, c)))
				return ret;
			cur = want;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (rel + mask < size) {
			size_t off = (size_t)mask * ss;
			size_t send = cur > off ? cur - off : 0;

			if (send && (ret = c_send(buf + (size_t)(rel + mask) * ss, send, BYTE_DT,
						  (rank + mask) % size, T_BCAST, c)))
				return ret;
			cur -= send;
		}
	}
	{
		int right = (rank + 1) % size, left = (rank - 1 + size) % size;
		int j = rel, jn = (rel - 1 + size) % size;

		for (int i = 1; i < size; i++) {
			if ((ret = c_sendrecv(buf + (size_t)j * ss, PIECE(j), BYTE_DT, right,
					      buf + (size_t)jn * ss, PIECE(jn), BYTE_DT, left,
					      T_BCAST, c)))
				return ret;
			j = jn;
			jn = (jn - 1 + size) % size;
		}
	}
#undef PIECE
	return MPI_SUCCESS;
}

static int mbmpi_bcast(void *buf, int count, struct mbmpi_dtype *d, int root, struct mbmpi_comm *c)
{
	size_t nbytes = (size_t)count * d->size;
	bool contig = mbmpi_dt_flat(d, (size_t)count);
	int alg = mbmpi.alg_bcast, ret;
	char *p, *tmp = NULL;
	struct mbmpi_hier *h;

	if (c->size == 1 || !nbytes)
		return MPI_SUCCESS;
	if (!alg && (ret = mbmpi_shm_bcast(buf, (size_t)count, d, root, c)) != MBMPI_SHM_PASS)
		return ret;
	/* Root's node first, so its leader has the data, then the leaders,
	 * then each other node from its leader. */
	if (!alg && nbytes < 131072 && (h = hier_get(c))) {
		int rn = h->node_of[root], mine = h->node_of[c->rank];

		if (mine == rn && (ret = mbmpi_bcast(buf, count, d, h->node_rank[root], h->node)))
			return ret;
		if (h->leaders && (ret = mbmpi_bcast(buf, count, d, rn, h->leaders)))
			return ret;
		return mine == rn ? MPI_SUCCESS : mbmpi_bcast(buf, count, d, 0, h->node);
	}
	if (!alg)
		alg = nbytes < 131072 || c->size < 4 ? 1 : 2;
	if (alg == 1)
		return bcast_binomial(buf, (size_t)count, d, root, c);
	if (contig) {
		p = (char *)buf + mbmpi_dt_start(d);
	} else {
		tmp = malloc(nbytes);
		if (!tmp)
			return MPI_ERR_NO_MEM;
		if (c->rank == root)
			mbmpi_pack(buf, (size_t)count, d, tmp);
		p = tmp;
	}
	ret = bcast_scatter_allgather(p, nbytes, root, c);
	if (tmp && !ret && c->rank != root)
		mbmpi_unpack(tmp, nbytes, buf, (size_t)count, d);
	free(tmp);
	return ret;
}

/* ---- Reduce ---- */

static int mbmpi_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			int root, struct mbmpi_comm *c)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	int size = c->size, rank = c->rank, mask, rel, ret = MPI_SUCCESS;
	bool commute = mbmpi_op(op)->commute;
	void *raw1, *raw2;
	char *acc, *tmp, *t;
	int at = commute ? root : 0; /* non-commutative: ordered tree rooted at 0 */

	if (sbuf == MPI_IN_PLACE)
		sbuf = rbuf;
	if (size == 1) {
		mbmpi_dt_copy(rbuf, sbuf, (size_t)count, d);
		return MPI_SUCCESS;
	}
	if ((ret = mbmpi_shm_reduce(sbuf, rbuf, (size_t)count, dt, op, root, c)) != MBMPI_SHM_PASS)
		return ret;
	acc = c_tmp((size_t)count, d, &raw1);
	tmp = c_tmp((size_t)count, d, &raw2);
	if (!acc || !tmp) {
		free(raw1);
		free(raw2);
		return MPI_ERR_NO_MEM;
	}
	mbmpi_dt_copy(acc, sbuf, (size_t)count, d);
	rel = (rank - at + size) % size;
	for (mask = 1; mask < size; mask <<= 1) {
		if (!(rel & mask)) {
			int srel = rel | mask;

			if (srel < size) {
				if ((ret = c_recv(tmp, (size_t)count, d, (srel + at) % size, T_REDUCE, c)))
					goto out;
				/* acc holds lower ranks than tmp: acc op tmp */
				mbmpi_op_apply(op, acc, tmp, (size_t)count, dt);
				t = acc, acc = tmp, tmp = t;
			}
		} else {
			ret = c_send(acc, (size_t)count, d, ((rel & ~mask) + at) % size, T_REDUCE, c);
			goto moved;
		}
	}
moved:
	if (ret)
		goto out;
	if (at != root) {
		if (rank == at)
			ret = c_send(acc, (size_t)count, d, root, T_REDUCE, c);
		else if (rank == root)
			ret = c_recv(rbuf, (size_t)count, d, at, T_REDUCE, c);
	} else if (rank == root) {
		mbmpi_dt_copy(rbuf, acc, (size_t)count, d);
	}
out:
	free(raw1);
	free(raw2);
	return ret;
}

/* ---- Allreduce ---- */

static int allreduce_fold_in(char *rbuf, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
			     struct mbmpi_comm *c, int rem, int *newrank)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	int rank = c->rank, ret;

	if (rank < 2 * rem) {
		if (rank % 2 == 0) {
			ret = c_send(rbuf, (size_t)count, d, rank + 1, T_ALLREDUCE, c);
			*newrank = -1;
		} else {
			ret = c_recv(tmp, (size_t)count, d, rank - 1, T_ALLREDUCE, c);
			mbmpi_op_apply(op, tmp, rbuf, (size_t)count, dt);
			*newrank = rank / 2;
		}
		return ret;
	}
	*newrank = rank - rem;
	return MPI_SUCCESS;
}

static int allreduce_fold_out(char *rbuf, int count, struct mbmpi_dtype *d, struct mbmpi_comm *c,
			      int rem)
{
	int rank = c->rank;

	if (rank >= 2 * rem)
		return MPI_SUCCESS;
	if (rank % 2)
		return c_send(rbuf, (size_t)count, d, rank - 1, T_ALLREDUCE, c);
	return c_recv(rbuf, (size_t)count, d, rank + 1, T_ALLREDUCE, c);
}

static int allreduce_recdbl(char *rbuf, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
			    struct mbmpi_comm *c)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	int pof2 = c_pof2(c->size), rem = c->size - pof2, newrank, ret;
	bool commute = mbmpi_op(op)->commute;

	if ((ret = allreduce_fold_in(rbuf, tmp, count, dt, op, c, rem, &newrank)))
		return ret;
	if (newrank != -1) {
		for (int mask = 1; mask < pof2; mask <<= 1) {
			int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem;

			if ((ret = c_sendrecv(rbuf, (size_t)count, d, dst, tmp, (size_t)count, d, dst,
					      T_ALLREDUCE, c)))
				return ret;
			if (commute || dst < c->rank) {
				mbmpi_op_apply(op, tmp, rbuf, (size_t)count, dt);
			} else {
				mbmpi_op_apply(op, rbuf, tmp, (size_t)count, dt);
				mbmpi_dt_copy(rbuf, tmp, (size_t)count, d);
			}
		}
	}
	return allreduce_fold_out(rbuf, count, d, c, rem);
}

/* Rabenseifner: reduce-scatter by recursive halving, allgather by doubling. */
static int allreduce_rabenseifner(char *rbuf, char *tmp, int count, MPI_Datatype dt, MPI_Op op,
				  struct mbmpi_comm *c)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	int pof2 = c_pof2(c->size), rem = c->size - pof2, newrank, ret, *cnts, *disps;
	MPI_Aint ext = d->extent;

	if ((ret = allreduce_fold_in(rbuf, tmp, count, dt, op, c, rem, &newrank)))
		return ret;
	if (newrank == -1)
		return allreduce_fold_out(rbuf, count, d, c, rem);
	cnts = malloc(sizeof(int) * 2 * (size_t)pof2);
	if (!cnts)
		return MPI_ERR_NO_MEM;
	disps = cnts + pof2;
	for (int i = 0; i < pof2; i++)
		cnts[i] = count / pof2 + (i < count % pof2);
	disps[0] = 0;
	for (int i = 1; i < pof2; i++)
		disps[i] = disps[i - 1] + cnts[i - 1];

	int send_idx = 0, recv_idx = 0, last_idx = pof2, mask;
	for (mask = 1; mask < pof2;) {
		int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem, sc = 0, rc = 0;

		if (newrank < nd) {
			send_idx = recv_idx + pof2 / (mask * 2);
			for (int i = send_idx; i < last_idx; i++) sc += cnts[i];
			for (int i = recv_idx; i < send_idx; i++) rc += cnts[i];
		} else {
			recv_idx = send_idx + pof2 / (mask * 2);
			for (int i = send_idx; i < recv_idx; i++) sc += cnts[i];
			for (int i = recv_idx; i < last_idx; i++) rc += cnts[i];
		}
		if ((ret = c_sendrecv(rbuf + disps[send_idx] * ext, (size_t)sc, d, dst,
				      tmp + disps[recv_idx] * ext, (size_t)rc, d, dst, T_ALLREDUCE, c)))
			goto out;
		mbmpi_op_apply(op, tmp + disps[recv_idx] * ext, rbuf + disps[recv_idx] * ext,
			       (size_t)rc, dt);
		send_idx = recv_idx;
		mask <<= 1;
		if (mask < pof2)
			last_idx = recv_idx + pof2 / mask;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		int nd = newrank ^ mask, dst = nd < rem ? nd * 2 + 1 : nd + rem, sc = 0, rc = 0;

		if (newrank < nd) {
			if (mask != pof2 / 2)
				last_idx = last_idx + pof2 / (mask * 2);
			recv_idx = send_idx + pof2 / (mask * 2);
			for (int i = send_idx; i < recv_idx; i++) sc += cnts[i];
			for (int i = recv_idx; i < last_idx; i++) rc += cnts[i];
		} else {
			recv_idx = send_idx - pof2 / (mask * 2);
			for (int i = send_idx; i < last_idx; i++) sc += cnts[i];
			for (int i = recv_idx; i < send_idx; i++) rc += cnts[i];
		}
		if ((ret = c_sendrecv(rbuf + disps[send_idx] * ext, (size_t)sc, d, dst,
				      rbuf + disps[recv_idx] * ext, (size_t)rc, d, dst, T_ALLREDUCE, c)))
			goto out;
		if (newrank > nd)
			send_idx = recv_idx;
	}
	ret = allreduce_fold_out(rbuf, count, d, c, rem);
out:
	free(cnts);
	return ret;
}

int mbmpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		    struct mbmpi_comm *c)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	size_t bytes = (size_t)count * d->size;
	int alg = mbmpi.alg_allreduce, ret;
	struct mbmpi_hier *h;
	void *raw;
	char *tmp;

	if (c->size > 1 && count && !alg &&
	    (ret = mbmpi_shm_reduce(sbuf, rbuf, (size_t)count, dt, op, -1, c)) != MBMPI_SHM_PASS)
		return ret;
	/* Reduce on each node, allreduce among leaders, bcast on each node:
	 * one message per node crosses the network each step. Commutative
	 * operations only, since nodes need not hold consecutive ranks. */
	if (c->size > 1 && count && !alg && bytes <= mbmpi.coll_shm && mbmpi_op(op)->commute &&
	    (h = hier_get(c))) {
		if ((ret = mbmpi_reduce(sbuf, rbuf, count, dt, op, 0, h->node)))
			return ret;
		if (h->leaders && (ret = mbmpi_allreduce(MPI_IN_PLACE, rbuf, count, dt, op, h->leaders)))
			return ret;
		return mbmpi_bcast(rbuf, count, d, 0, h->node);
	}
	if (sbuf != MPI_IN_PLACE)
		mbmpi_dt_copy(rbuf, sbuf, (size_t)count, d);
	if (c->size == 1 || !count)
		return MPI_SUCCESS;
	tmp = c_tmp((size_t)count, d, &raw);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	if (!alg)
		alg = bytes >= 16384 && count >= c_pof2(c->size) ? 2 : 1;
	if (alg == 2 && !mbmpi_op(op)->commute)
		alg = 1;
	ret = alg == 2 ? allreduce_rabenseifner(rbuf, tmp, count, dt, op, c)
		       : allreduce_recdbl(rbuf, tmp, count, dt, op, c);
	free(raw);
	return ret;
}

/* ---- Gather and scatter (binomial, packed blocks) ---- */

static int subtree(int rel, int size)
{
	int low = rel ? rel & -rel : size;
	return low < size - rel ? low : size - rel;
}

static int mbmpi_gather(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			int rcount, struct mbmpi_dtype *rd, int root, struct mbmpi_comm *c)
{
	int size = c->size, rank = c->rank, rel = (rank - root + size) % size, have = 1, ret = 0;
	size_t B = rank == root ? (size_t)rcount * rd->size : (size_t)scount * sd->size;
	char *w;

	if ((ret = mbmpi_shm_gather(sbuf, (size_t)scount, sd, rbuf, (size_t)rcount, rd, root, c)) !=
	    MBMPI_SHM_PASS)
		return ret;
	ret = 0;

	/* Everyone's block size is the root's; non-roots know it from their send. */
	w = malloc(B * (size_t)subtree(rel, size) + 1);
	if (!w)
		return MPI_ERR_NO_MEM;
	if (sbuf == MPI_IN_PLACE)
		mbmpi_pack((char *)rbuf + (MPI_Aint)rank * rcount * rd->extent, (size_t)rcount, rd, w);
	else
		mbmpi_pack(sbuf, (size_t)scount, sd, w);
	for (int mask = 1; mask < size; mask <<= 1) {
		if (rel & mask) {
			ret = c_send(w, B * (size_t)have, BYTE_DT, (rank - mask + size) % size,
				     T_GATHER, c);
			break;
		}
		if (rel + mask < size) {
			int n = subtree(rel + mask, size);

			if ((ret = c_recv(w + B * (size_t)mask, B * (size_t)n, BYTE_DT,
					  (rank + mask) % size, T_GATHER, c)))
				break;
			have = mask + n;
		}
	}
	if (!ret && rank == root)
		for (int i = 0; i < size; i++) {
			int r = (i + root) % size;
			if (r == rank && sbuf == MPI_IN_PLACE)
				continue;
			mbmpi_unpack(w + B * (size_t)i, B,
				     (char *)rbuf + (MPI_Aint)r * rcount * rd->extent, (size_t)rcount, rd);
		}
	free(w);
	return ret;
}

static int mbmpi_scatter(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			 int rcount, struct mbmpi_dtype *rd, int root, struct mbmpi_comm *c)
{
	int size = c->size, rank = c->rank, rel = (rank - root + size) % size, mask, ret = 0;
	size_t B = rank == root ? (size_t)scount * sd->size : (size_t)rcount * rd->size;
	char *w;

	if ((ret = mbmpi_shm_scatter(sbuf, (size_t)scount, sd, rbuf, (size_t)rcount, rd, root, c)) !=
	    MBMPI_SHM_PASS)
		return ret;
	ret = 0;
	w = malloc(B * (size_t)subtree(rel, size) + 1);
	if (!w)
		return MPI_ERR_NO_MEM;
	if (rank == root)
		for (int i = 0; i < size; i++)
			mbmpi_pack((const char *)sbuf + (MPI_Aint)((i + root) % size) * scount * sd->extent,
				   (size_t)scount, sd, w + B * (size_t)i);
	for (mask = 1; mask < size; mask <<= 1)
		if (rel & mask) {
			if ((ret = c_recv(w, B * (size_t)subtree(rel, size), BYTE_DT,
					  (rank - mask + size) % size, T_SCATTER, c)))
				goto out;
			break;
		}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (rel + mask < size &&
		    (ret = c_send(w + B * (size_t)mask, B * (size_t)subtree(rel + mask, size), BYTE_DT,
				  (rank + mask) % size, T_SCATTER, c)))
			goto out;
	if (rbuf != MPI_IN_PLACE)
		mbmpi_unpack(w, B, rbuf, (size_t)rcount, rd);
out:
	free(w);
	return ret;
}

/* ---- Allgather (packed blocks in a work buffer) ---- */

static int allgather_ring(char *w, const size_t *off, const size_t *len, struct mbmpi_comm *c)
{
	int n = c->size, r = c->rank, right = (r + 1) % n, left = (r - 1 + n) % n, ret;

	for (int i = 0; i < n - 1; i++) {
		int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;

		if ((ret = c_sendrecv(w + off[sb], len[sb], BYTE_DT, right, w + off[rb], len[rb],
				      BYTE_DT, left, T_ALLGATHER, c)))
			return ret;
	}
	return MPI_SUCCESS;
}

static int allgather_recdbl(char *w, size_t B, struct mbmpi_comm *c)
{
	int r = c->rank, ret;

	for (int mask = 1; mask < c->size; mask <<= 1) {
		int peer = r ^ mask, mine = r & ~(mask - 1), theirs = peer & ~(mask - 1);

		if ((ret = c_sendrecv(w + B * (size_t)mine, B * (size_t)mask, BYTE_DT, peer,
				      w + B * (size_t)theirs, B * (size_t)mask, BYTE_DT, peer,
				      T_ALLGATHER, c)))
			return ret;
	}
	return MPI_SUCCESS;
}

static int allgather_bruck(char *w, size_t B, struct mbmpi_comm *c)
{
	int n = c->size, r = c->rank, ret = MPI_SUCCESS;
	char *t = malloc(B * (size_t)n + 1);

	if (!t)
		return MPI_ERR_NO_MEM;
	memcpy(t, w + B * (size_t)r, B);
	for (int k = 1; k < n; k <<= 1) {
		int cnt = k < n - k ? k : n - k;

		if ((ret = c_sendrecv(t, B * (size_t)cnt, BYTE_DT, (r - k + n) % n, t + B * (size_t)k,
				      B * (size_t)cnt, BYTE_DT, (r + k) % n, T_ALLGATHER, c)))
			goto out;
	}
	for (int i = 0; i < n; i++)
		memcpy(w + B * (size_t)((r + i) % n), t + B * (size_t)i, B);
out:
	free(t);
	return ret;
}

static int mbmpi_allgatherv(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			    const int *rcounts, const int *displs, struct mbmpi_dtype *rd,
			    struct mbmpi_comm *c, bool uniform)
{
	int n = c->size, r = c->rank, alg = mbmpi.alg_allgather, ret;
	size_t *off = malloc(sizeof(size_t) * 2 * (size_t)n), *len, total = 0;
	char *w;

	if (!off)
		return MPI_ERR_NO_MEM;
	len = off + n;
	for (int i = 0; i < n; i++) {
		off[i] = total;
		len[i] = (size_t)rcounts[i] * rd->size;
		total += len[i];
	}
	w = malloc(total + 1);
	if (!w) {
		free(off);
		return MPI_ERR_NO_MEM;
	}
	if (sbuf == MPI_IN_PLACE)
		mbmpi_pack((char *)rbuf + (MPI_Aint)displs[r] * rd->extent, (size_t)rcounts[r], rd,
			   w + off[r]);
	else
		mbmpi_pack(sbuf, (size_t)scount, sd, w + off[r]);
	if (!uniform)
		alg = 3;
	else if (!alg)
		alg = total >= 65536 ? 3 : (n & (n - 1)) == 0 ? 1 : 2;
	if (alg == 1 && (n & (n - 1)))
		alg = 2;
	ret = alg == 1 ? allgather_recdbl(w, len[0], c)
	      : alg == 2 ? allgather_bruck(w, len[0], c)
			 : allgather_ring(w, off, len, c);
	if (!ret)
		for (int i = 0; i < n; i++)
			if (i != r || sbuf != MPI_IN_PLACE)
				mbmpi_unpack(w + off[i], len[i],
					     (char *)rbuf + (MPI_Aint)displs[i] * rd->extent,
					     (size_t)rcounts[i], rd);
	free(w);
	free(off);
	return ret;
}

static int mbmpi_allgather(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			   int rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	int *cd, ret;

	if (!mbmpi.alg_allgather &&
	    (ret = mbmpi_shm_allgather(sbuf, (size_t)scount, sd, rbuf, (size_t)rcount, rd, c)) !=
		    MBMPI_SHM_PASS)
		return ret;
	cd = malloc(sizeof(int) * 2 * (size_t)c->size);
	if (!cd)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < c->size; i++) {
		cd[i] = rcount;
		cd[c->size + i] = i * rcount;
	}
	ret = mbmpi_allgatherv(sbuf, scount, sd, rbuf, cd, cd + c->size, rd, c, true);
	free(cd);
	return ret;
}

int mbmpi_allgather_int(int *vals, int per, struct mbmpi_comm *c)
{
	return mbmpi_allgather(MPI_IN_PLACE, per, &mbmpi_predef_types[8], vals, per,
			       &mbmpi_predef_types[8], c);
}

/* ---- Alltoall ---- */

static int alltoall_bruck(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			  int rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	int n = c->size, r = c->rank, ret = MPI_SUCCESS;
	size_t B = (size_t)scount * sd->size;
	char *w = malloc(B * (size_t)n + 1), *pk = malloc(B * (size_t)n + 1),
	     *in = malloc(B * (size_t)n + 1);

	if (!w || !pk || !in) {
		ret = MPI_ERR_NO_MEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		mbmpi_pack((const char *)sbuf + (MPI_Aint)((r + i) % n) * scount * sd->extent,
			   (size_t)scount, sd, w + B * (size_t)i);
	for (int k = 1; k < n; k <<= 1) {
		size_t m = 0;

		for (int i = 0; i < n; i++)
			if (i & k)
				memcpy(pk + B * m++, w + B * (size_t)i, B);
		if ((ret = c_sendrecv(pk, B * m, BYTE_DT, (r + k) % n, in, B * m, BYTE_DT,
				      (r - k + n) % n, T_ALLTOALL, c)))
			goto out;
		m = 0;
		for (int i = 0; i < n; i++)
			if (i & k)
				memcpy(w + B * (size_t)i, in + B * m++, B);
	}
	for (int j = 0; j < n; j++)
		mbmpi_unpack(w + B * (size_t)((r - j + n) % n), B,
			     (char *)rbuf + (MPI_Aint)j * rcount * rd->extent, (size_t)rcount, rd);
out:
	free(w);
	free(pk);
	free(in);
	return ret;
}

static int mbmpi_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
			   struct mbmpi_dtype *sd, void *rbuf, const int *rcounts,
			   const int *rdispls, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	int n = c->size, r = c->rank, ret = MPI_SUCCESS;
	void *copy = NULL;

	if (sbuf == MPI_IN_PLACE) {
		/* Send from a copy of the receive buffer, with the receive layout. */
		size_t span = 0;
		for (int i = 0; i < n; i++) {
			size_t e = (size_t)(rdispls[i] + rcounts[i]) * (size_t)rd->extent;
			span = e > span ? e : span;
		}
		copy = malloc(span + 1);
		if (!copy)
			return MPI_ERR_NO_MEM;
		memcpy(copy, rbuf, span);
		sbuf = copy;
		scounts = rcounts;
		sdispls = rdispls;
		sd = rd;
	}
	for (int i = 0; i < n && !ret; i++) {
		int dst = (r + i) % n, src = (r - i + n) % n;

		ret = c_sendrecv((const char *)sbuf + (MPI_Aint)sdispls[dst] * sd->extent,
				 (size_t)scounts[dst], sd, dst,
				 (char *)rbuf + (MPI_Aint)rdispls[src] * rd->extent,
				 (size_t)rcounts[src], rd, src, T_ALLTOALL, c);
	}
	free(copy);
	return ret;
}

/* Every receive and send posted at once: one wait for the slowest peer
 * instead of one per step, which matters most when ranks share cores. */
static int alltoall_linear(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			   int rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	int n = c->size, r = c->rank, ret = MPI_SUCCESS, e;
	struct mbmpi_req **rq = calloc(2 * (size_t)n, sizeof(*rq));

	if (!rq)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n && !ret; i++) {
		int src = (r - i + n) % n;
		ret = mbmpi_irecv((char *)rbuf + (MPI_Aint)src * rcount * rd->extent, rcount, rd, src,
				  T_ALLTOALL, c, c->ctx + 1, &rq[i]);
	}
	for (int i = 0; i < n && !ret; i++) {
		int dst = (r + i) % n;
		ret = mbmpi_isend((const char *)sbuf + (MPI_Aint)dst * scount * sd->extent, scount, sd,
				  dst, T_ALLTOALL, c, c->ctx + 1, MBMPI_STD, &rq[n + i]);
	}
	e = mbmpi_waitall(2 * n, rq);
	free(rq);
	return ret ? ret : e;
}

static int mbmpi_alltoall(const void *sbuf, int scount, struct mbmpi_dtype *sd, void *rbuf,
			  int rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	int n = c->size, alg = mbmpi.alg_alltoall, ret, *v;

	if (!alg &&
	    (ret = mbmpi_shm_alltoall(sbuf, (size_t)scount, sd, rbuf, (size_t)rcount, rd, c)) !=
		    MBMPI_SHM_PASS)
		return ret;
	if (sbuf != MPI_IN_PLACE) {
		size_t block = (size_t)scount * sd->size;

		if (!alg)
			alg = block <= 256 && n >= 8 ? 1 : block <= 8192 ? 3 : 2;
		if (alg == 1)
			return alltoall_bruck(sbuf, scount, sd, rbuf, rcount, rd, c);
		if (alg == 3)
			return alltoall_linear(sbuf, scount, sd, rbuf, rcount, rd, c);
	}
	v = malloc(sizeof(int) * 4 * (size_t)n);
	if (!v)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++) {
		v[i] = scount;
		v[n + i] = i * scount;
		v[2 * n + i] = rcount;
		v[3 * n + i] = i * rcount;
	}
	ret = mbmpi_alltoallv(sbuf, v, v + n, sd, rbuf, v + 2 * n, v + 3 * n, rd, c);
	free(v);
	return ret;
}

/* ---- Reduce-scatter ---- */

static int mbmpi_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt,
				MPI_Op op, struct mbmpi_comm *c)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	int n = c->size, r = c->rank, total = 0, ret = MPI_SUCCESS, alg = mbmpi.alg_reduce_scatter;
	int *displs = malloc(sizeof(int) * (size_t)n);
	void *raw = NULL, *raw2 = NULL;
	char *full = NULL, *tmp;

	if (!displs)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++) {
		displs[i] = total;
		total += rcounts[i];
	}
	if (sbuf == MPI_IN_PLACE) {
		full = c_tmp((size_t)total, d, &raw);
		if (!full) {
			ret = MPI_ERR_NO_MEM;
			goto out;
		}
		mbmpi_dt_copy(full, rbuf, (size_t)total, d);
		sbuf = full;
	}
	if (!alg)
		alg = 1;
	if (!mbmpi_op(op)->commute)
		alg = 2;
	if (alg == 1) {
		tmp = c_tmp((size_t)rcounts[r], d, &raw2);
		if (!tmp) {
			ret = MPI_ERR_NO_MEM;
			goto out;
		}
		mbmpi_dt_copy(rbuf, (const char *)sbuf + (MPI_Aint)displs[r] * d->extent, (size_t)rcounts[r], d);
		for (int i = 1; i < n && !ret; i++) {
			int dst = (r + i) % n, src = (r - i + n) % n;

			ret = c_sendrecv((const char *)sbuf + (MPI_Aint)displs[dst] * d->extent,
					 (size_t)rcounts[dst], d, dst, tmp, (size_t)rcounts[r], d, src,
					 T_RSCATTER, c);
			if (!ret)
				mbmpi_op_apply(op, tmp, rbuf, (size_t)rcounts[r], dt);
		}
	} else {
		/* Ordered: reduce the whole vector to rank 0, then scatter it. */
		tmp = c_tmp((size_t)total, d, &raw2);
		if (!tmp) {
			ret = MPI_ERR_NO_MEM;
			goto out;
		}
		ret = mbmpi_reduce(sbuf, tmp, total, dt, op, 0, c);
		if (!ret) {
			if (r == 0) {
				struct mbmpi_req **rq = calloc((size_t)n, sizeof(*rq));
				if (!rq) {
					ret = MPI_ERR_NO_MEM;
					goto out;
				}
				for (int i = 1; i < n && !ret; i++)
					ret = mbmpi_isend(tmp + (MPI_Aint)displs[i] * d->extent, rcounts[i],
							  d, i, T_RSCATTER, c, c->ctx + 1, MBMPI_STD, &rq[i]);
				mbmpi_dt_copy(rbuf, tmp, (size_t)rcounts[0], d);
				int e = mbmpi_waitall(n, rq);
				ret = ret ? ret : e;
				free(rq);
			} else {
				ret = c_recv(rbuf, (size_t)rcounts[r], d, 0, T_RSCATTER, c);
			}
		}
	}
out:
	free(displs);
	free(raw);
	free(raw2);
	return ret;
}

/* ---- Scan and exscan (recursive doubling) ---- */

static int mbmpi_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		      struct mbmpi_comm *c, bool exclusive)
{
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	bool commute = mbmpi_op(op)->commute, have = false;
	int r = c->rank, ret = MPI_SUCCESS;
	void *raw1, *raw2;
	char *part = c_tmp((size_t)count, d, &raw1), *tmp = c_tmp((size_t)count, d, &raw2);

	if (!part || !tmp) {
		free(raw1);
		free(raw2);
		return MPI_ERR_NO_MEM;
	}
	mbmpi_dt_copy(part, sbuf == MPI_IN_PLACE ? rbuf : sbuf, (size_t)count, d);
	if (!exclusive && sbuf != MPI_IN_PLACE)
		mbmpi_dt_copy(rbuf, sbuf, (size_t)count, d);
	for (int mask = 1; mask < c->size; mask <<= 1) {
		int dst = r ^ mask;

		if (dst >= c->size)
			continue;
		if ((ret = c_sendrecv(part, (size_t)count, d, dst, tmp, (size_t)count, d, dst,
				      exclusive ? T_EXSCAN : T_SCAN, c)))
			break;
		if (r > dst) {
			mbmpi_op_apply(op, tmp, part, (size_t)count, dt);
			if (!exclusive) {
				mbmpi_op_apply(op, tmp, rbuf, (size_t)count, dt);
			} else if (!have) {
				mbmpi_dt_copy(rbuf, tmp, (size_t)count, d);
				have = true;
			} else {
				mbmpi_op_apply(op, tmp, rbuf, (size_t)count, dt);
			}
		} else if (commute) {
			mbmpi_op_apply(op, tmp, part, (size_t)count, dt);
		} else {
			mbmpi_op_apply(op, part, tmp, (size_t)count, dt);
			mbmpi_dt_copy(part, tmp, (size_t)count, d);
		}
	}
	free(raw1);
	free(raw2);
	return ret;
}

/* ---- The MPI calls: checks, then the algorithms ---- */

#define COLL_COMM(comm, c)                                       \
	MBMPI_CHECK_INIT();                                      \
	if ((ret = mbmpi_check_comm(comm, &c)))                  \
		return MBMPI_ERR(NULL, ret);

int mbmpi_coll_check_buf(const void *buf, int count, MPI_Datatype dt)
{
	if (count < 0)
		return MPI_ERR_COUNT;
	if (mbmpi_dt_check(dt))
		return MPI_ERR_TYPE;
	if (!buf && count > 0 && (mbmpi_dt(dt)->flags & MBMPI_DT_PREDEF))
		return MPI_ERR_BUFFER;
	return MPI_SUCCESS;
}

int mbmpi_coll_check_counts(const int *counts, const int *displs, MPI_Datatype dt, int n)
{
	if (!counts || !displs)
		return MPI_ERR_ARG;
	for (int i = 0; i < n; i++)
		if (counts[i] < 0)
			return MPI_ERR_COUNT;
	return mbmpi_dt_check(dt) ? MPI_ERR_TYPE : MPI_SUCCESS;
}

int PMPI_Barrier(MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_barrier(c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	ret = mbmpi_barrier(c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Barrier)

int PMPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_bcast(buf, count, dt, root, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if ((ret = mbmpi_coll_check_buf(buf, count, dt)))
		return MBMPI_ERR(c, ret);
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	ret = mbmpi_bcast(buf, count, mbmpi_dt(dt), root, c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Bcast)

int mbmpi_coll_check_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			  bool need_rbuf)
{
	int ret;

	if ((ret = mbmpi_coll_check_buf(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt)))
		return ret;
	if (need_rbuf && (ret = mbmpi_coll_check_buf(rbuf, count, dt)))
		return ret;
	return mbmpi_op_check(op, dt);
}

int PMPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_reduce(sbuf, rbuf, count, dt, op, root, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if ((ret = mbmpi_coll_check_reduce(c->rank == root ? sbuf : (sbuf == MPI_IN_PLACE ? NULL : sbuf),
				  rbuf, count, dt, op, c->rank == root)))
		return MBMPI_ERR(c, ret);
	if (!count)
		return MPI_SUCCESS;
	ret = mbmpi_reduce(sbuf, rbuf, count, dt, op, root, c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Reduce)

int PMPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_allreduce(sbuf, rbuf, count, dt, op, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if ((ret = mbmpi_coll_check_reduce(sbuf, rbuf, count, dt, op, true)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_allreduce(sbuf, rbuf, count, dt, op, c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Allreduce)

int PMPI_Gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		MPI_Datatype rt, int root, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_gather(sbuf, scount, st, rbuf, rcount, rt, root, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if (c->rank == root && (ret = mbmpi_coll_check_buf(rbuf, rcount, rt)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_gather(sbuf, scount, sbuf == MPI_IN_PLACE ? NULL : mbmpi_dt(st), rbuf, rcount,
			   c->rank == root ? mbmpi_dt(rt) : NULL, root, c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Gather)

int PMPI_Scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		 MPI_Datatype rt, int root, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_scatter(sbuf, scount, st, rbuf, rcount, rt, root, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if (c->rank == root && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if (rbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(rbuf, rcount, rt)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_scatter(sbuf, scount, c->rank == root ? mbmpi_dt(st) : NULL, rbuf, rcount,
			    rbuf == MPI_IN_PLACE ? NULL : mbmpi_dt(rt), root, c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Scatter)

int PMPI_Gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
		 const int displs[], MPI_Datatype rt, int root, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_gatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, root, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if (c->rank != root) {
		ret = c_send(sbuf, (size_t)scount, mbmpi_dt(st), root, T_GATHER, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if ((ret = mbmpi_coll_check_counts(rcounts, displs, rt, c->size)))
		return MBMPI_ERR(c, ret);
	{
		struct mbmpi_req **rq = calloc((size_t)c->size, sizeof(*rq));
		struct mbmpi_dtype *rd = mbmpi_dt(rt);

		if (!rq)
			return MBMPI_ERR(c, MPI_ERR_NO_MEM);
		for (int i = 0; i < c->size && !ret; i++)
			if (i != root)
				ret = mbmpi_irecv((char *)rbuf + (MPI_Aint)displs[i] * rd->extent,
						  rcounts[i], rd, i, T_GATHER, c, c->ctx + 1, &rq[i]);
		if (!ret && sbuf != MPI_IN_PLACE)
			ret = c_copy_typed((char *)rbuf + (MPI_Aint)displs[root] * rd->extent,
					   (size_t)rcounts[root], rd, sbuf, (size_t)scount, mbmpi_dt(st));
		int e = mbmpi_waitall(c->size, rq);
		free(rq);
		ret = ret ? ret : e;
	}
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Gatherv)

int PMPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype st,
		  void *rbuf, int rcount, MPI_Datatype rt, int root, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_scatterv(sbuf, scounts, displs, st, rbuf, rcount, rt, root, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (root < 0 || root >= c->size)
		return MBMPI_ERR(c, MPI_ERR_ROOT);
	if (rbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(rbuf, rcount, rt)))
		return MBMPI_ERR(c, ret);
	if (c->rank != root) {
		ret = c_recv(rbuf, (size_t)rcount, mbmpi_dt(rt), root, T_SCATTER, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if ((ret = mbmpi_coll_check_counts(scounts, displs, st, c->size)))
		return MBMPI_ERR(c, ret);
	{
		struct mbmpi_req **rq = calloc((size_t)c->size, sizeof(*rq));
		struct mbmpi_dtype *sd = mbmpi_dt(st);

		if (!rq)
			return MBMPI_ERR(c, MPI_ERR_NO_MEM);
		for (int i = 0; i < c->size && !ret; i++)
			if (i != root)
				ret = mbmpi_isend((const char *)sbuf + (MPI_Aint)displs[i] * sd->extent,
						  scounts[i], sd, i, T_SCATTER, c, c->ctx + 1, MBMPI_STD,
						  &rq[i]);
		if (!ret && rbuf != MPI_IN_PLACE)
			ret = c_copy_typed(rbuf, (size_t)rcount, mbmpi_dt(rt),
					   (const char *)sbuf + (MPI_Aint)displs[root] * sd->extent,
					   (size_t)scounts[root], sd);
		int e = mbmpi_waitall(c->size, rq);
		free(rq);
		ret = ret ? ret : e;
	}
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Scatterv)

int PMPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		   MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_allgather(sbuf, scount, st, rbuf, rcount, rt, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if ((ret = mbmpi_coll_check_buf(rbuf, rcount, rt)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_allgather(sbuf, scount, sbuf == MPI_IN_PLACE ? NULL : mbmpi_dt(st), rbuf, rcount,
			      mbmpi_dt(rt), c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Allgather)

int PMPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
		    const int displs[], MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_allgatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if ((ret = mbmpi_coll_check_counts(rcounts, displs, rt, c->size)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_allgatherv(sbuf, scount, sbuf == MPI_IN_PLACE ? NULL : mbmpi_dt(st), rbuf,
			       rcounts, displs, mbmpi_dt(rt), c, false);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Allgatherv)

int PMPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
		  MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_alltoall(sbuf, scount, st, rbuf, rcount, rt, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_buf(sbuf, scount, st)))
		return MBMPI_ERR(c, ret);
	if ((ret = mbmpi_coll_check_buf(rbuf, rcount, rt)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_alltoall(sbuf, scount, sbuf == MPI_IN_PLACE ? NULL : mbmpi_dt(st), rbuf, rcount,
			     mbmpi_dt(rt), c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Alltoall)

int PMPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st,
		   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (sbuf != MPI_IN_PLACE && (ret = mbmpi_coll_check_counts(scounts, sdispls, st, c->size)))
		return MBMPI_ERR(c, ret);
	if ((ret = mbmpi_coll_check_counts(rcounts, rdispls, rt, c->size)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_alltoallv(sbuf, scounts, sdispls, sbuf == MPI_IN_PLACE ? NULL : mbmpi_dt(st),
			      rbuf, rcounts, rdispls, mbmpi_dt(rt), c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Alltoallv)

int PMPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
			MPI_Op op, MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter) {
		ret = mbmpi_inter_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c);
		return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
	}
	if (!rcounts)
		return MBMPI_ERR(c, MPI_ERR_ARG);
	for (int i = 0; i < c->size; i++)
		if (rcounts[i] < 0)
			return MBMPI_ERR(c, MPI_ERR_COUNT);
	if (mbmpi_dt_check(dt))
		return MBMPI_ERR(c, MPI_ERR_TYPE);
	if ((ret = mbmpi_op_check(op, dt)))
		return MBMPI_ERR(c, ret);
	ret = mbmpi_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}
MBMPI_ALIAS(Reduce_scatter)

int PMPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op,
			      MPI_Comm comm)
{
	MBMPI_GUARD();
	struct mbmpi_comm *c;
	int ret, *counts;

	COLL_COMM(comm, c);
	if (rcount < 0)
		return MBMPI_ERR(c, MPI_ERR_COUNT);
	counts = malloc(sizeof(int) * (size_t)mbmpi_comm_local_size(c));
	if (!counts)
		return MBMPI_ERR(c, MPI_ERR_NO_MEM);
	for (int i = 0; i < mbmpi_comm_local_size(c); i++)
		counts[i] = rcount;
	ret = PMPI_Reduce_scatter(sbuf, rbuf, counts, dt, op, comm);
	free(counts);
	return ret;
}
MBMPI_ALIAS(Reduce_scatter_block)

static int c_scan_call(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
		       MPI_Comm comm, bool ex)
{
	struct mbmpi_comm *c;
	int ret;

	COLL_COMM(comm, c);
	if (c->inter)
		return MBMPI_ERR(c, MPI_ERR_COMM);
	if ((ret = mbmpi_coll_check_reduce(sbuf, rbuf, count, dt, op, true)))
		return MBMPI_ERR(c, ret);
	if (!count)
		return MPI_SUCCESS;
	ret = mbmpi_scan(sbuf, rbuf, count, dt, op, c, ex);
	return ret ? MBMPI_ERR(c, ret) : MPI_SUCCESS;
}

int PMPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	MBMPI_GUARD();
	return c_scan_call(sbuf, rbuf, count, dt, op, comm, false);
}
MBMPI_ALIAS(Scan)

int PMPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	MBMPI_GUARD();
	return c_scan_call(sbuf, rbuf, count, dt, op, comm, true);
}
MBMPI_ALIAS(Exscan)
