/*
 * Collectives among the ranks of one node through a segment of shared
 * memory per communicator, the idea of Open MPI's coll/sm and MPICH's
 * release-gather: small collectives cost a few cache-line transfers
 * instead of a message per step. Every rank owns a cell in each of
 * SHM_NCELL small slots, a region in each of SHM_NSLOT large ones, and two
 * flag words, each on its own cache lines; the k-th collective on the
 * communicator uses small or large slot k modulo their count, by the size
 * of its largest part. A rank writes its part, then publishes k in
 * `ready`; readers wait for a value of at least k and read the part in
 * place. A rank publishes k in `done` when it has finished with
 * collective k, and no rank starts collective k until all are done with
 * the call that last used its slot: a slot is never rewritten while
 * someone reads it, no rank runs more than SHM_NCELL collectives ahead,
 * and flags only grow, so nothing is ever reset. Reductions fold in rank
 * order (the same order on every rank, so all get the same bits): flat up
 * to SHM_FLAT ranks, where every rank reads every part and no second hop
 * is needed, and over a k-nomial tree with contiguous subtrees above
 * that. The segment is made at the first collective on a communicator
 * whose ranks all share a node (the ranks agree on it point to point);
 * calls whose parts do not fit a region, and communicators across nodes,
 * go point to point (mbmpi_coll.c), and the ranks always agree on which
 * path a call takes because every test is on quantities MPI requires to
 * match.
 */
#include "mbmpi.h"
#include "mbu_copy.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define SHM_CELL 256     /* small parts go in cells, many calls deep */
#define SHM_NCELL 64
#define SHM_NSLOT 8      /* larger ones in regions, fewer calls deep */
#define SHM_FLAT 8       /* ranks up to which reductions and barriers are flat */
#define SHM_RADIX 4      /* fan-in of the tree above that */
#define SHM_LINE 128     /* a flag's own lines: adjacent-line prefetch pairs them */
#define SHM_VSPACE ((size_t)16 << 20)   /* regions of one communicator, at most (reserved) */

struct shm_flags {
	uint64_t ready;
	char pad1[SHM_LINE - sizeof(uint64_t)];
	uint64_t done;
	int32_t pid;
	char pad2[SHM_LINE - sizeof(uint64_t) - sizeof(int32_t)];
};

struct mbmpi_shmc {
	char *seg;
	size_t len;
	size_t region;           /* bytes of one rank's region in one slot */
	struct shm_flags *fl;    /* one per rank */
	char *cells;             /* cell slot s, rank j at cells + (s * n + j) * SHM_CELL */
	char *data;              /* region slot s, rank j at data + (s * n + j) * region */
	char *cur;               /* the current call's slot, rank 0's part */
	size_t stride;           /* between ranks' parts in it */
	uint64_t seq;            /* collectives started on the communicator */
	uint64_t safe;           /* every rank is done with the collectives up to this one */
	int n, me;
	bool watch;              /* every rank's pid is visible here: waits notice a death */
};

static inline char *reg(const struct mbmpi_shmc *s, int j)
{
	return s->cur + (size_t)j * s->stride;
}

static inline void publish(uint64_t *w, uint64_t v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Waits for rank j's flag to reach v. Point-to-point operations the
 * program has pending keep moving meanwhile (a rendezvous another rank
 * waits on may need this rank's help), and the wait yields the core when
 * the node is oversubscribed. A peer that has died ends the wait with an
 * error instead of a hang. */
static int shm_wait(const struct mbmpi_shmc *s, const uint64_t *w, int j, uint64_t v)
{
	/* Oversubscribed, the rank waited for is more often off a core than
	 * on one: give ours up from the first miss (measured: spinning 8 or
	 * 32 polls first made 4 ranks on 2 cores slower). */
	int spins = mbmpi.spin;
	unsigned long i = 0;

	while (__atomic_load_n(w, __ATOMIC_ACQUIRE) < v) {
		if ((++i & 7) == 0) {
			mbmpi_poll();
			if (s->watch && (i & ((1ul << 20) - 1)) == 0 && kill(s->fl[j].pid, 0) &&
			    errno == ESRCH)
				return MPI_ERR_PROC_FAILED;
		}
		relax();
		mbmpi_idle(&spins);
	}
	return MPI_SUCCESS;
}

/* Opens collective seq + 1, whose largest part on any rank is `need`
 * bytes: a cell or a region, and waits (rarely) for the slowest rank to be
 * done with the call that last used that slot. Ranks agree on `need`. */
static int shm_begin(struct mbmpi_shmc *s, size_t need)
{
	bool cell = need <= SHM_CELL;
	uint64_t depth = cell ? SHM_NCELL : SHM_NSLOT, k = ++s->seq, low = UINT64_MAX, want;
	int ret;

	s->stride = cell ? SHM_CELL : s->region;
	s->cur = (cell ? s->cells : s->data) + (size_t)(k % depth) * (size_t)s->n * s->stride;
	want = k > depth ? k - depth : 0;
	if (s->safe >= want)
		return MPI_SUCCESS;
	/* Blocked: wait for the slowest to catch up half the depth (never
	 * past the calls this rank has finished), not one call, or a rank
	 * that runs ahead would stall on every call once the slots are full,
	 * a context switch each when ranks share cores. */
	want = want + depth / 2 < k - 1 ? want + depth / 2 : k - 1;
	for (int j = 0; j < s->n; j++) {
		if ((ret = shm_wait(s, &s->fl[j].done, j, want)))
			return ret;
		uint64_t d = __atomic_load_n(&s->fl[j].done, __ATOMIC_ACQUIRE);
		low = d < low ? d : low;
	}
	s->safe = low;
	return MPI_SUCCESS;
}

static inline int shm_end(struct mbmpi_shmc *s, int ret)
{
	publish(&s->fl[s->me].done, s->seq);
	return ret;
}

static inline int wait_ready(const struct mbmpi_shmc *s, int j)
{
	return shm_wait(s, &s->fl[j].ready, j, s->seq);
}

/* ---- Set-up ---- */

void mbmpi_shm_free(struct mbmpi_comm *c)
{
	if (c->shm) {
		munmap(c->shm->seg, c->shm->len);
		free(c->shm);
	}
	c->shm = NULL;
	c->shm_state = 0;
}

/* Collective over c, at its first collective: the segment, or NULL (and
 * then never again) when the communicator is not for it or any rank
 * could not map it. While it is being made, c's collectives go point to
 * point. */
static struct mbmpi_shmc *shm_get(struct mbmpi_comm *c)
{
	static unsigned made;
	struct mbmpi_shmc *s;
	size_t flags, cells, region, len;
	int id[2] = {0, 0}, agreed[2], ok = 1, all = 0, fd = -1;
	char name[64];
	void *p = MAP_FAILED;

	if (MBMPI_LIKELY(c->shm_state))
		return c->shm;
	c->shm_state = -1;
	if (c->inter || c->size < 2 || !mbmpi.coll_shm || !mbmpi_comm_on_one_node(c))
		return NULL;
	region = mbmpi.coll_shm;
	if (region * SHM_NSLOT * (size_t)c->size > SHM_VSPACE)
		region = SHM_VSPACE / SHM_NSLOT / (size_t)c->size;
	region &= ~(size_t)63;
	if (region < 64)
		return NULL;
	flags = ((sizeof(struct shm_flags) * (size_t)c->size + 4095) & ~(size_t)4095);
	cells = (size_t)SHM_CELL * SHM_NCELL * (size_t)c->size;
	len = flags + cells + region * SHM_NSLOT * (size_t)c->size;
	if (c->rank == 0) {
		id[0] = (int)getpid();
		id[1] = (int)made++;
	}
	/* Rank 0 names the segment; the others learn the name from it. */
	if (mbmpi_allreduce(id, agreed, 2, MPI_INT, MPI_MAX, c))
		return NULL;
	snprintf(name, sizeof(name), "/mbmpi-coll-%u-%d-%d", (unsigned)getuid(), agreed[0],
		 agreed[1]);
	s = calloc(1, sizeof(*s));
	if (!s)
		ok = 0;
	if (ok && c->rank == 0) {
		fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		/* Reserved now: a full /dev/shm fails here, and the communicator
		 * goes point to point, instead of faulting at a later write. */
		if (fd < 0 || ftruncate(fd, (off_t)len) || posix_fallocate(fd, 0, (off_t)len))
			ok = 0;
	}
	/* The name exists before anyone else opens it. */
	if (mbmpi_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c))
		all = 0;
	if (all && c->rank != 0 && (fd = shm_open(name, O_RDWR, 0)) < 0)
		ok = 0;
	if (all && ok &&
	    (p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
		ok = 0;
	if (fd >= 0)
		close(fd);
	if (ok && p != MAP_FAILED)
		((struct shm_flags *)p)[c->rank].pid = (int32_t)getpid();
	/* Everyone has it mapped (or failed) before the name goes. */
	if (mbmpi_allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c))
		all = 0;
	if (c->rank == 0 && fd >= 0)
		shm_unlink(name);
	if (!all) {
		if (p != MAP_FAILED)
			munmap(p, len);
		free(s);
		return NULL;
	}
	*s = (struct mbmpi_shmc){.seg = p, .len = len, .region = region, .fl = p,
				 .cells = (char *)p + flags, .data = (char *)p + flags + cells, .n = c->size, .me = c->rank};
	/* Ranks in another pid namespace cannot be watched. */
	s->watch = true;
	for (int j = 0; j < s->n; j++)
		if (kill(s->fl[j].pid, 0) && errno == ESRCH)
			s->watch = false;
	c->shm = s;
	c->shm_state = 1;
	return s;
}

/* Opens a call on c whose largest part on any rank is `need` bytes:
 * MBMPI_SHM_PASS when c has no segment or the part does not fit. */
static int shm_call(struct mbmpi_comm *c, size_t need, struct mbmpi_shmc **out)
{
	struct mbmpi_shmc *s = shm_get(c);

	if (!s || need > s->region)
		return MBMPI_SHM_PASS;
	*out = s;
	return shm_begin(s, need);
}

static inline bool contig(const struct mbmpi_dtype *d, size_t count)
{
	return mbmpi_dt_flat(d, count);
}

/* Packed bytes in and out of a region; contiguous data is one memcpy. */
static inline void put(char *to, const void *buf, size_t count, const struct mbmpi_dtype *d)
{
	if (contig(d, count))
		memcpy(to, (const char *)buf + mbmpi_dt_start(d), count * d->size);
	else
		mbmpi_pack(buf, count, d, to);
}

static inline void get(void *buf, size_t count, const struct mbmpi_dtype *d, const char *from)
{
	if (contig(d, count))
		mbu_copy((char *)buf + mbmpi_dt_start(d), from, count * d->size);
	else
		mbmpi_unpack(from, count * d->size, buf, count, d);
}

/* ---- Barrier ---- */

/* Rank r's children in the tree: r + m * K^l for the levels l below r's
 * lowest non-zero base-K digit, in rank order; each heads the contiguous
 * ranks up to the next child, so folding children in order keeps rank
 * order. */
static int tree_children(int r, int n, int *kid)
{
	int k = 0;

	for (int step = 1; step < n && r % (step * SHM_RADIX) == 0; step *= SHM_RADIX)
		for (int m = 1; m < SHM_RADIX && r + m * step < n; m++)
			kid[k++] = r + m * step;
	return k;
}

int mbmpi_shm_barrier(struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	int kid[64], ret;

	if ((ret = shm_call(c, 0, &s)))
		return ret;
	/* Flat, every rank reading every flag, is one hop. Oversubscribed,
	 * gather to rank 0 and release from it: rank 0 leaves first and is
	 * on a core, so a collective rooted there that follows (the usual
	 * barrier-then-bcast) finds its data already published, where flat
	 * leaves them all waiting for it to be scheduled again. */
	if (s->n <= SHM_FLAT && !mbmpi.yield) {
		publish(&s->fl[s->me].ready, s->seq);
		for (int j = 0; j < s->n && !ret; j++)
			ret = wait_ready(s, (s->me + 1 + j) % s->n);
		return shm_end(s, ret);
	}
	for (int i = 0, k = tree_children(s->me, s->n, kid); i < k && !ret; i++)
		ret = wait_ready(s, kid[i]);
	publish(&s->fl[s->me].ready, s->seq);
	if (!ret)
		ret = wait_ready(s, 0);
	return shm_end(s, ret);
}

/* ---- Bcast ---- */

int mbmpi_shm_bcast(void *buf, size_t count, struct mbmpi_dtype *d, int root, struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	int ret;

	if ((ret = shm_call(c, count * d->size, &s)))
		return ret;
	if (s->me == root) {
		put(reg(s, root), buf, count, d);
		publish(&s->fl[root].ready, s->seq);
	} else if (!(ret = wait_ready(s, root))) {
		get(buf, count, d, reg(s, root));
	}
	return shm_end(s, ret);
}

/* ---- Reduce and allreduce ---- */

/* out = x[lo] op (x[lo+1] op (... op x[hi-1])), from the top down, the
 * regions holding the datatype's layout shifted by -start. */
static int fold(const struct mbmpi_shmc *s, void *out, int lo, int hi, size_t count,
		MPI_Datatype dt, MPI_Op op, MPI_Aint start)
{
	int ret;

	if ((ret = wait_ready(s, hi - 1)))
		return ret;
	mbmpi_dt_copy(out, reg(s, hi - 1) - start, count, mbmpi_dt(dt));
	for (int j = hi - 2; j >= lo; j--) {
		if ((ret = wait_ready(s, j)))
			return ret;
		mbmpi_op_apply(op, reg(s, j) - start, out, count, dt);
	}
	return MPI_SUCCESS;
}

/* root -1: every rank gets the result. Regions hold the datatype's own
 * layout (its span, from true_lb), so the operation runs on them as on
 * the program's buffers. */
int mbmpi_shm_reduce(const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt, MPI_Op op,
		     int root, struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	struct mbmpi_dtype *d = mbmpi_dt(dt);
	const char *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	MPI_Aint start;
	size_t span = mbmpi_dt_span(d, count, &start);
	int n, me, kid[64], k, ret;
	char *mine;

	/* An unaligned start would misalign every element in the regions. */
	if (d->align > 1 && start % d->align)
		return MBMPI_SHM_PASS;
	if ((ret = shm_call(c, span, &s)))
		return ret;
	n = s->n;
	me = s->me;
	mine = reg(s, me) - start;
	if (n <= SHM_FLAT) {
		memcpy(mine + start, src + start, span);
		publish(&s->fl[me].ready, s->seq);
		if (root < 0 || me == root)
			ret = fold(s, rbuf, 0, n, count, dt, op, start);
		return shm_end(s, ret);
	}
	/* The tree: this rank's region gets the fold of its subtree, which
	 * covers the ranks from it up to its next sibling. */
	k = tree_children(me, n, kid);
	if (!k) {
		memcpy(mine + start, src + start, span);
	} else {
		if ((ret = wait_ready(s, kid[k - 1])))
			return shm_end(s, ret);
		mbmpi_dt_copy(mine, reg(s, kid[k - 1]) - start, count, d);
		for (int i = k - 2; i >= 0 && !ret; i--)
			if (!(ret = wait_ready(s, kid[i])))
				mbmpi_op_apply(op, reg(s, kid[i]) - start, mine, count, dt);
		if (ret)
			return shm_end(s, ret);
		mbmpi_op_apply(op, src, mine, count, dt);
	}
	publish(&s->fl[me].ready, s->seq);
	if ((root < 0 || me == root) && !(ret = wait_ready(s, 0)))
		mbmpi_dt_copy(rbuf, reg(s, 0) - start, count, d);
	return shm_end(s, ret);
}

/* ---- Gather, scatter, allgather, alltoall (packed blocks) ---- */

int mbmpi_shm_gather(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
		     size_t rcount, struct mbmpi_dtype *rd, int root, struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	MPI_Aint ext;
	int ret;

	if ((ret = shm_call(c, c->rank == root ? rcount * rd->size : scount * sd->size, &s)))
		return ret;
	if (s->me != root) {
		put(reg(s, s->me), sbuf, scount, sd);
		publish(&s->fl[s->me].ready, s->seq);
		return shm_end(s, MPI_SUCCESS);
	}
	/* The receive side is the root's alone to describe. */
	ext = (MPI_Aint)rcount * rd->extent;
	if (sbuf != MPI_IN_PLACE) {
		put(reg(s, root), sbuf, scount, sd);
		get((char *)rbuf + root * ext, rcount, rd, reg(s, root));
	}
	for (int i = 1; i < s->n && !ret; i++) {
		int j = (root + i) % s->n;

		if (!(ret = wait_ready(s, j)))
			get((char *)rbuf + j * ext, rcount, rd, reg(s, j));
	}
	return shm_end(s, ret);
}

int mbmpi_shm_scatter(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
		      size_t rcount, struct mbmpi_dtype *rd, int root, struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	size_t B = c->rank == root ? scount * sd->size : rcount * rd->size;
	int ret;

	if ((ret = shm_call(c, B * (size_t)c->size, &s)))
		return ret;
	if (s->me == root) {
		for (int j = 0; j < s->n; j++)
			put(reg(s, root) + B * (size_t)j,
			    (const char *)sbuf + (MPI_Aint)j * (MPI_Aint)scount * sd->extent, scount, sd);
		publish(&s->fl[root].ready, s->seq);
		if (rbuf != MPI_IN_PLACE)
			get(rbuf, rcount, rd, reg(s, root) + B * (size_t)root);
	} else if (!(ret = wait_ready(s, root))) {
		get(rbuf, rcount, rd, reg(s, root) + B * (size_t)s->me);
	}
	return shm_end(s, ret);
}

int mbmpi_shm_allgather(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
			size_t rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	MPI_Aint ext = (MPI_Aint)rcount * rd->extent;
	bool in_place = sbuf == MPI_IN_PLACE;
	int ret;

	if ((ret = shm_call(c, rcount * rd->size, &s)))
		return ret;
	if (in_place)
		put(reg(s, s->me), (char *)rbuf + s->me * ext, rcount, rd);
	else
		put(reg(s, s->me), sbuf, scount, sd);
	publish(&s->fl[s->me].ready, s->seq);
	for (int i = 0; i < s->n && !ret; i++) {
		int j = (s->me + i) % s->n;

		if (j == s->me && in_place)
			continue;
		if (!(ret = wait_ready(s, j)))
			get((char *)rbuf + j * ext, rcount, rd, reg(s, j));
	}
	return shm_end(s, ret);
}

int mbmpi_shm_alltoall(const void *sbuf, size_t scount, struct mbmpi_dtype *sd, void *rbuf,
		       size_t rcount, struct mbmpi_dtype *rd, struct mbmpi_comm *c)
{
	struct mbmpi_shmc *s;
	size_t B = rcount * rd->size;
	MPI_Aint ext = (MPI_Aint)rcount * rd->extent;
	int ret;

	if ((ret = shm_call(c, B * (size_t)c->size, &s)))
		return ret;
	/* In place: every block leaves before any arrives. */
	if (sbuf == MPI_IN_PLACE) {
		sbuf = rbuf;
		scount = rcount;
		sd = rd;
	}
	for (int j = 0; j < s->n; j++)
		put(reg(s, s->me) + B * (size_t)j,
		    (const char *)sbuf + (MPI_Aint)j * (MPI_Aint)scount * sd->extent, scount, sd);
	publish(&s->fl[s->me].ready, s->seq);
	for (int i = 0; i < s->n && !ret; i++) {
		int j = (s->me + i) % s->n;

		if (!(ret = wait_ready(s, j)))
			get((char *)rbuf + j * ext, rcount, rd, reg(s, j) + B * (size_t)s->me);
	}
	return shm_end(s, ret);
}
