/*
 * The tagged engine: MPI point-to-point handed to a libfabric FI_TAGGED RDM
 * provider, which does the matching (Open MPI's CM/MTL path). The 64-bit tag
 * carries kind, context id and MPI tag (mpi/TAGS.md); the sender's rank rides
 * in the remote CQ data. Synchronous sends are acknowledged by the receiver
 * after the match, and messages above the provider's size limit travel as a
 * first piece plus directed continuation pieces. A large non-contiguous
 * message travels the same way, each piece packed just before it goes (and,
 * into a non-contiguous receive, unpacked as it lands), a window of pieces
 * at a time (struct te_stream). So does a contiguous message to another
 * node a little past the provider's one-trip limit: a few pieces back to
 * back instead of the provider's rendezvous (te_push_to). Operations the
 * provider refuses with -FI_EAGAIN wait, in posting order, on one of two
 * retry queues: sends (and what else takes the provider's transmit
 * resources) on one, receives on the other, so that receives are posted
 * while sends wait for room, and the peer's sends they match can finish.
 */
#include "mbmpi.h"
#include "mbu_pool.h"

#include <stdio.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_matchbox.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>

/* The continuation pieces of a chunked message, on either side. Those of a
 * non-contiguous send are packed one at a time into bounce buffers, and
 * those of a non-contiguous receive unpacked one at a time out of them, a
 * window at a time; others go straight from or to the user's contiguous
 * buffer, a window at a time too (a pushed message's all at once). The
 * provider matches pieces with the same tag from one peer in order, so a
 * message's pieces are all posted before the next one's with that tag and
 * peer: a stream born behind another (on its side,
 * peer and tag) waits until that one has posted its last piece and tells
 * it to go, so each step costs the streams between the two, not a walk of
 * them all. The stream holds one count of its request's outstanding
 * operations until it is done. */
struct te_stream {
	struct mbu_dlist link;      /* te.streams, oldest first */
	struct mbmpi_req *req;
	fi_addr_t addr;
	uint64_t tag;               /* the pieces' (MBMPI_KIND_CONT) */
	bool recv;
	bool bounce;                /* through bounce buffers; else straight to cbuf */
	bool waiting;               /* behind an older stream on its side, peer and tag */
	uint64_t seq;               /* its place: receive's posting order, or send's */
	bool released;              /* every piece posted: the next such stream told */
	bool pushed;                /* a pushed message's (te.pushing counts it) */
	size_t next, end;           /* the next piece's offset; the message's bytes */
	size_t chunk;
	struct mbu_pool *bounces;   /* where a bounced piece's buffer comes from */
	int depth;                  /* bounced pieces in flight at most */
	size_t gate;                /* sender: pieces from here wait for the match (0: none) */
	int inflight;               /* pieces posted and not yet complete */
	struct mbmpi_dt_cursor cur;
};

/* Pieces in flight per stream; 8 of 64 KiB moved a non-contiguous message
 * fastest over matchbox on one node. A large contiguous message's pieces
 * (te.big) go 4 at a time, so a non-contiguous receive holds at most 4 MiB
 * of them besides its first piece. Pieces straight from or to the user's
 * buffer keep the same window: all at once, osu_bibw's 64 messages of 32
 * MiB each way were 2048 operations a side, past the provider's 1024, and
 * receives queued behind refused sends never matched the peer's. (A
 * pushed message's few pieces all go at once.) */
enum { TE_STREAM_DEPTH = 8, TE_BIG_DEPTH = 4 };

enum { TE_SENDQ, TE_RECVQ };

enum { TE_UNTRACKED = 64 }; /* the smallest piece (shifts start at 6) */

static struct {
	struct mbmpi_fab x;
	size_t inject;
	unsigned chunk_shift;      /* pieces of a chunked message are 2^shift bytes */
	bool cq_data64;
	/* The provider completes a send with FI_MATCH_COMPLETE once its
	 * receiver has matched it (matchbox): a synchronous send then needs no
	 * acknowledgement message, nor a receive posted for it. With them,
	 * 1,100 outstanding MPI_Issends each way held all of the provider's
	 * receive entries with their acknowledgement receives, and the
	 * receives that would have matched the peer's, queued behind those,
	 * were never posted. */
	bool match_complete;
	/* Acknowledgement receives posted or queued, and how many a gated
	 * stream may add (a quarter of the provider's receive entries): past
	 * that it waits for its match by match completion, or is not gated.
	 * 1,100 gated streams each way sent before their receives held every
	 * receive entry with their acknowledgement receives, as synchronous
	 * sends did, and the data's receives were never posted. */
	size_t acks, gate_acks_max;
	/* Fops the provider refused with EAGAIN, in posting order: sends
	 * (TE_SENDQ) and receives (TE_RECVQ) apart. MPI orders sends among
	 * sends and receives among receives, never one against the other;
	 * a receive queued behind sends refused for want of transmit entries
	 * could wait for ever, each side's sends held by the rendezvous the
	 * other side's unposted receives never match. */
	struct mbu_dlist retry[2];
	struct mbu_dlist streams;
	/* Receives the provider holds, in the order they were posted, each
	 * numbered (recv_seq) as it is posted, and how many receive streams
	 * wait. Pieces carry no message id, so two chunked messages from one
	 * peer with one context and tag must take their pieces in the order
	 * they matched; a first piece's completion does not say that order (a
	 * receive completed in the call came before an earlier one's entry
	 * still in the CQ, or one whose first piece is read later), the
	 * posting order of the receives does. So a receive stream waits for
	 * every earlier receive that could have matched such a message. A
	 * receive of at most TE_UNTRACKED bytes is not listed: a chunked
	 * message is longer than that, so it could take one only truncated,
	 * an error; the 8-byte path stays as short as it was. */
	struct mbu_dlist posted;
	uint64_t recv_seq;
	uint64_t send_seq;         /* send streams, numbered as created */
	size_t waiting;            /* streams waiting to post their pieces */
	size_t frag;               /* a streamed piece's bytes (a power of two); 0: off */
	unsigned frag_shift;
	/* Pushed messages: pieces of 2^push_shift bytes, which the provider
	 * carries to another node in one trip, up to push_max bytes in all
	 * (0: never). */
	unsigned push_shift;
	size_t push_max;
	int pushing;               /* pushed messages whose pieces are not all done */
	unsigned long pushed;      /* messages this rank pushed (MATCHBOX_MPI_VERBOSE=2) */
	struct mbu_pool bounces;   /* the pieces' buffers, frag bytes each */
	/* A contiguous message above `whole` bytes (to a rank on another node:
	 * `whole_net`; 0: none) goes in pieces of `big` bytes, so that a
	 * non-contiguous receive can take it through big_bounces (created at
	 * their first use) instead of a temporary as large as the message. */
	size_t whole, whole_net, big;
	unsigned big_shift;
	struct mbu_pool big_bounces;
	/* matchbox's fi_trecv that completes a receive meeting a waiting
	 * message inside the call (fi_ext_matchbox.h), and where it puts
	 * that completion: no CQ entry written and read for it */
	ssize_t (*trecv_now)(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context,
			     struct fi_cq_tagged_entry *done);
	struct fi_cq_tagged_entry now;
	ssize_t (*trecv_take)(struct fid_ep *ep, void *buf, size_t len, fi_addr_t src,
			      uint64_t tag, uint64_t ignore, uint64_t refuse,
			      struct fi_cq_tagged_entry *done);
} te;

/* The retry queue an operation waits on. */
static inline struct mbu_dlist *te_queue(const struct mbmpi_fop *f)
{
	switch (f->type) {
	case MBMPI_FOP_RECV:
	case MBMPI_FOP_ACK_RECV:
	case MBMPI_FOP_PIECE_RECV:
	case MBMPI_FOP_PEEK:
		return &te.retry[TE_RECVQ];
	default:
		return &te.retry[TE_SENDQ];
	}
}

static int te_init(void)
{
	struct fi_info *hints;
	const char *prov = mbmpi_env("MATCHBOX_MPI_PROVIDER", "matchbox");
	size_t max, limit;
	int ret;

	mbu_dlist_init(&te.retry[TE_SENDQ]);
	mbu_dlist_init(&te.retry[TE_RECVQ]);
	mbu_dlist_init(&te.streams);
	mbu_dlist_init(&te.posted);
	hints = mbmpi_fab_hints(prov, FI_TAGGED | FI_DIRECTED_RECV);
	if (!hints)
		return MPI_ERR_NO_MEM;
	/* One-sided communication wants the provider's RMA and atomics; a
	 * provider without them still serves point-to-point. */
	hints->caps |= FI_RMA | FI_ATOMIC;
	ret = mbmpi_fab_getinfo(hints, &te.x.info);
	te.x.rma = te.x.atomics = !ret;
	if (ret) {
		hints->caps &= ~(uint64_t)(FI_RMA | FI_ATOMIC);
		ret = mbmpi_fab_getinfo(hints, &te.x.info);
	}
	fi_freeinfo(hints);
	if (ret) {
		fprintf(stderr, "matchbox mpi: no tagged RDM provider '%s' (%s); "
			"set MATCHBOX_MPI_PROVIDER\n", prov, fi_strerror(-ret));
		return MPI_ERR_OTHER;
	}
	if (te.x.info->domain_attr->cq_data_size < 4) {
		fprintf(stderr, "matchbox mpi: provider %s carries no 4-byte CQ data\n", prov);
		return MPI_ERR_OTHER;
	}
	te.cq_data64 = te.x.info->domain_attr->cq_data_size >= 8;
	te.inject = te.x.info->tx_attr->inject_size;
	mbmpi.inject_max = te.inject < MBMPI_PACKED_MAX ? te.inject : MBMPI_PACKED_MAX;

	/* Chunks are a power of two no larger than the provider allows. */
	max = te.x.info->ep_attr->max_msg_size;
	limit = (size_t)mbmpi_env_long("MATCHBOX_MPI_MAX_MSG", 0);
	if (limit && limit < max)
		max = limit;
	if (max < 64)
		max = 64;
	te.chunk_shift = 6;
	while (te.chunk_shift < 62 && ((size_t)2 << te.chunk_shift) <= max)
		te.chunk_shift++;
	mbmpi.max_msg = max;
	if (!te.cq_data64)
		mbmpi.max_msg = SIZE_MAX; /* no room to describe pieces: never chunk */
	/* Non-contiguous messages above one piece stream (=0: packed whole).
	 * The pieces' size is a power of two no larger than a chunk. */
	limit = (size_t)mbmpi_env_long("MATCHBOX_MPI_TAGGED_FRAG", 65536);
	if (limit && te.cq_data64) {
		te.frag_shift = 6;
		while (te.frag_shift < te.chunk_shift && ((size_t)2 << te.frag_shift) <= limit)
			te.frag_shift++;
		te.frag = (size_t)1 << te.frag_shift;
		if (mbu_pool_init(&te.bounces, te.frag, TE_STREAM_DEPTH, 0))
			return MPI_ERR_NO_MEM;
		mbmpi.frag_min = te.frag + 1;
		mbmpi.frag_recv = false;
	}

	/* On one node pieces of 1 MiB moved a contiguous 8 MiB message as
	 * fast as one piece and 64 MiB 7% slower in the faster CPU placement,
	 * 2x faster in the slower; pieces of 64 KiB cost a quarter. To another
	 * node matchbox reads a message alone in one read up to 16 MiB, where
	 * pieces are read side by side in 1 MiB reads: a 16 MiB ping-pong took
	 * 4284 us one-way in pieces against 3226 read whole (two namespace
	 * hosts), so the limit there is 16 MiB. Receivers take what comes, so
	 * ranks need not agree on these. */
	limit = (size_t)mbmpi_env_long("MATCHBOX_MPI_TAGGED_WHOLE", 4 << 20);
	size_t limit_net = (size_t)mbmpi_env_long("MATCHBOX_MPI_TAGGED_WHOLE_NET", 16 << 20);

	if ((limit || limit_net) && te.cq_data64) {
		te.big_shift = te.chunk_shift < 20 ? te.chunk_shift : 20;
		te.big = (size_t)1 << te.big_shift;
		te.whole = !limit ? 0 : limit > te.big ? limit : te.big;
		te.whole_net = !limit_net ? 0 : limit_net > te.big ? limit_net : te.big;
		if (mbu_pool_init(&te.big_bounces, te.big, 1, 0))
			return MPI_ERR_NO_MEM;
	}

	/* Between nodes matchbox sends a message of up to FI_MATCHBOX_NET_EAGER
	 * bytes (64 KiB) in one trip and a larger one by rendezvous: its
	 * request, the receiver's read request, then the data, each a trip
	 * through both hosts' network stacks (and libfabric's tcp answers a
	 * read a turn later). A message a little past the limit goes faster as
	 * a chunked message of one-trip pieces sent back to back: 70000 bytes
	 * 29.9 us one-way instead of 42.8 (two namespace hosts; OB1 41.4), as
	 * the host engine's pushed frames do. Only over matchbox, whose limit is a
	 * power of two and so a piece's size. */
	if (!strncmp(te.x.info->fabric_attr->prov_name, "matchbox", 8) && te.cq_data64 &&
	    mbmpi.max_msg != SIZE_MAX) {
		const char *v = getenv("FI_MATCHBOX_NET_EAGER");
		size_t trip = v ? strtoull(v, NULL, 0) : 65536;
		long frames = mbmpi_env_long("MATCHBOX_MPI_TAGGED_PUSH_FRAMES", 2);

		te.push_shift = 6;
		while (te.push_shift < te.chunk_shift && ((size_t)2 << te.push_shift) <= trip)
			te.push_shift++;
		if (frames > 1 && frames <= 64 && ((size_t)1 << te.push_shift) <= trip)
			te.push_max = (size_t)frames << te.push_shift;
	}

	if ((ret = mbmpi_fab_open(&te.x, "tagged", FI_CQ_FORMAT_TAGGED)))
		return ret;
	te.gate_acks_max = te.x.info->rx_attr->size / 4;
	/* =0: every receive completes through the CQ, to compare. */
	if (mbmpi_env_long("MATCHBOX_MPI_TRECV_NOW", 1)) {
		struct fi_matchbox_tagged_ops *ops = NULL;

		if (!fi_open_ops(&te.x.ep->fid, FI_MATCHBOX_TAGGED_OPS, 0, (void **)&ops, NULL) &&
		    ops && ops->size >= sizeof(*ops)) {
			te.trecv_now = ops->trecv_now;
			te.match_complete = mbmpi_env_long("MATCHBOX_MPI_TAGGED_SYNC_ACK", 0) == 0;
			te.trecv_take = ops->trecv_take;
			mbmpi.waiting = ops->waiting(te.x.ep);
		}
	}
	return MPI_SUCCESS;
}

static void te_fini(void)
{
	struct mbu_dlist *it;

	if (mbmpi_env_long("MATCHBOX_MPI_VERBOSE", 0) > 1)
		fprintf(stderr, "matchbox mpi: rank %d: tagged engine: %lu messages pushed to other "
			"nodes in pieces\n", mbmpi.world_rank, te.pushed);
	for (int q = 0; q < 2; q++)
		while ((it = mbu_dlist_pop(&te.retry[q])))
			mbmpi_fop_free(mbu_container_of(it, struct mbmpi_fop, link));
	while ((it = mbu_dlist_pop(&te.streams)))
		free(mbu_container_of(it, struct te_stream, link));
	mbu_pool_fini(&te.bounces);
	mbu_pool_fini(&te.big_bounces);
	mbmpi.frag_min = 0;
	mbmpi.inject_max = 0;
	mbmpi.waiting = NULL; /* it points into the endpoint */
	mbmpi_fab_close(&te.x);
	memset(&te, 0, sizeof(te));
}

static int te_getname(void *addr, size_t *len)
{
	return mbmpi_fab_getname(&te.x, addr, len);
}

static int te_insert(const void *addrs, size_t addrlen, int n, fi_addr_t *out)
{
	(void)addrlen;
	return mbmpi_fab_insert(&te.x, addrs, n, out);
}

static void te_complete(struct mbmpi_fop *f, const struct fi_cq_tagged_entry *e, int err,
			size_t olen);

/* A receive that completed inside trecv_now: its entry is copied out of
 * te.now first, since completing it may post (and complete) another. */
static void te_complete_now(struct mbmpi_fop *f)
{
	struct fi_cq_tagged_entry e = te.now;

	te_complete(f, &e, 0, 0);
}

/* Hands one operation to the provider: 0 posted; 1 when it must wait for
 * resources; 2 for a receive that completed in the call (te.now holds its
 * entry); or a negative fi_errno. */
static int te_issue(struct mbmpi_fop *f)
{
	ssize_t ret;

	switch (f->type) {
	case MBMPI_FOP_SEND:
	case MBMPI_FOP_ACK_SEND:
	case MBMPI_FOP_PIECE_SEND:
		if (f->flags & FI_INJECT) {
			ret = fi_tinjectdata(te.x.ep, f->buf, f->len, f->data, f->addr, f->tag);
		} else if (f->flags & FI_MATCH_COMPLETE) {
			struct iovec iov = {.iov_base = f->buf, .iov_len = f->len};
			struct fi_msg_tagged m = {
				.msg_iov = &iov, .iov_count = 1, .addr = f->addr, .tag = f->tag,
				.context = &f->ctx, .data = f->data};

			ret = fi_tsendmsg(te.x.ep, &m,
					  FI_MATCH_COMPLETE | FI_COMPLETION | FI_REMOTE_CQ_DATA);
		} else {
			ret = fi_tsenddata(te.x.ep, f->buf, f->len, NULL, f->data, f->addr, f->tag,
					   &f->ctx);
		}
		break;
	case MBMPI_FOP_RECV:
	case MBMPI_FOP_ACK_RECV:
	case MBMPI_FOP_PIECE_RECV:
	case MBMPI_FOP_PEEK:
		if (f->flags) {
			struct iovec iov = {.iov_base = f->buf, .iov_len = f->len};
			struct fi_msg_tagged m = {
				.msg_iov = &iov, .iov_count = f->len || f->buf ? 1 : 0,
				.addr = f->addr, .tag = f->tag, .ignore = f->ignore,
				.context = &f->ctx};
			ret = fi_trecvmsg(te.x.ep, &m, f->flags | FI_COMPLETION);
		} else if (te.trecv_now && f->type == MBMPI_FOP_RECV) {
			ret = te.trecv_now(te.x.ep, f->buf, f->len, NULL, f->addr, f->tag, f->ignore,
					   &f->ctx, &te.now);
			if (ret == 1)
				return 2; /* complete: te.now is its entry */
		} else {
			ret = fi_trecv(te.x.ep, f->buf, f->len, NULL, f->addr, f->tag, f->ignore,
				       &f->ctx);
		}
		break;
	case MBMPI_FOP_RMA:
		ret = mbmpi_fab_rma_issue(&te.x, f);
		break;
	default:
		return -FI_EINVAL;
	}
	if (ret == -FI_EAGAIN)
		return 1;
	return (int)ret;
}

static void te_streams_kick(void);

static inline void te_list(struct mbmpi_fop *f)
{
	f->rseq = te.recv_seq++;
	f->posted = true;
	mbu_dlist_insert_tail(&f->plink, &te.posted);
}

/* A receive handed to the provider, not complete: listed in posting
 * order, unless too short to take a chunked message whole (or listed at
 * its probe). */
static inline void te_posted_add(struct mbmpi_fop *f)
{
	if (f->len > TE_UNTRACKED && !f->posted)
		te_list(f);
}

/* A posted receive completed: receive streams waiting for it may go. */
static inline void te_unpost(struct mbmpi_fop *f)
{
	f->posted = false;
	mbu_dlist_remove(&f->plink);
	if (te.waiting)
		te_streams_kick();
}

static inline void te_op_finished(struct mbmpi_fop *f)
{
	struct mbmpi_req *r = f->req;

	if (r && r->main == f)
		r->main = NULL;
	if (f->type == MBMPI_FOP_RECV) {
		if (f->posted)
			te_unpost(f);
	} else if (f->type == MBMPI_FOP_ACK_RECV) {
		te.acks--;
	}
	if (!r || f != &r->own)
		mbmpi_fop_free(f);
	if (r && --r->outstanding == 0)
		mbmpi_req_finish(r);
}

static void te_piece_done(struct mbmpi_fop *f, const struct fi_cq_tagged_entry *e, int err);

/* An operation the provider refused outright. */
static void te_failed(struct mbmpi_fop *f)
{
	if (f->req)
		f->req->err = MPI_ERR_OTHER;
	if (f->type == MBMPI_FOP_PIECE_SEND || f->type == MBMPI_FOP_PIECE_RECV)
		te_piece_done(f, NULL, FI_EIO);
	else
		te_op_finished(f);
}

/* Posts in order: once a send (a receive) waits, later sends (receives)
 * wait behind it, so the provider sees each in the order MPI issued them. */
static int te_post(struct mbmpi_fop *f)
{
	struct mbu_dlist *q = te_queue(f);
	int ret;

	if (mbu_dlist_empty(q)) {
		ret = te_issue(f);
		if (ret == 2) {
			te_complete_now(f);
			return MPI_SUCCESS;
		}
		if (ret <= 0) {
			if (ret < 0) {
				fprintf(stderr, "matchbox mpi: rank %d: %s to rank %d failed: %s%s\n",
					mbmpi.world_rank, f->type == MBMPI_FOP_RECV ? "a receive" : "a send",
					f->req ? f->req->peer : -1, fi_strerror(-ret),
					ret == -FI_EHOSTUNREACH ? " (on another host: see FI_MATCHBOX_NET "
					"and FI_MATCHBOX_NET_IFACE)" : "");
				te_failed(f);
				return MPI_ERR_OTHER;
			}
			/* Injected sends complete at once, with no CQ entry. */
			if (f->flags & FI_INJECT)
				te_op_finished(f);
			else if (f->type == MBMPI_FOP_RECV)
				te_posted_add(f);
			return MPI_SUCCESS;
		}
	}
	mbu_dlist_insert_tail(&f->link, q);
	return MPI_SUCCESS;
}

/* Whether f was still waiting on its retry queue (now taken off it), never
 * handed to the provider. */
static bool te_unqueue(struct mbmpi_fop *f)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(te_queue(f), it) {
		if (it == &f->link) {
			mbu_dlist_remove(it);
			return true;
		}
	}
	return false;
}

/* Takes back an operation posted and no longer wanted: off its retry queue
 * at once, or out of the provider by a cancel, whose entry finishes it. Only
 * for an operation that cannot have completed yet (its completion would
 * have freed it). */
static void te_withdraw(struct mbmpi_fop *f)
{
	if (te_unqueue(f))
		te_op_finished(f);
	else
		fi_cancel(&te.x.ep->fid, &f->ctx);
}

static struct mbmpi_fop *te_fop(struct mbmpi_req *r, int type)
{
	struct mbmpi_fop *f = mbmpi_fop_alloc();

	if (!f)
		return NULL;
	f->type = type;
	f->req = r;
	f->flags = 0;
	f->data = 0;
	f->ignore = 0;
	if (r)
		r->outstanding++;
	return f;
}

static uint32_t te_ctx_of(uint64_t tag)
{
	return (uint32_t)(tag >> MBMPI_CTX_SHIFT) & MBMPI_CTX_MAX;
}

/* A chunked message's first piece says in its CQ data how the rest comes:
 * bits 32-55 the number of pieces after it and bits 56-61 their size's
 * log2, the first holding the remainder; or, with TE_HEADFIRST in the top
 * byte (a pushed message), bits 32-55 the whole length, every piece but
 * the last full. */
#define TE_HEADFIRST 0x80u

/* The whole length of a chunked message whose first piece has first bytes,
 * and (*chunk) its pieces' size; 0 when the description cannot be one. */
static size_t te_chunked_len(uint64_t data, size_t first, size_t *chunk)
{
	uint64_t field = (data >> 32) & 0xffffff;
	unsigned top = (unsigned)(data >> 56), shift = top & ~TE_HEADFIRST;

	if (shift < 6 || shift > 62)
		return 0;
	*chunk = (size_t)1 << shift;
	if (top & TE_HEADFIRST)
		return first == *chunk && field > first ? (size_t)field : 0;
	if (field > (SIZE_MAX - first) >> shift)
		return 0;
	return first + ((size_t)field << shift);
}

/* ---- Streams ---- */

/* Whether listed receive f could have matched a message of stream s's
 * peer, context and tag (the kinds differ: a stream's pieces are kind 2). */
static inline bool te_could_take(const struct mbmpi_fop *f, const struct te_stream *s)
{
	const uint64_t key = (0xffffffull << MBMPI_CTX_SHIFT) | MBMPI_TAG_MASK;

	return (f->addr == FI_ADDR_UNSPEC || f->addr == s->addr) &&
	       !((f->tag ^ s->tag) & ~f->ignore & key);
}

/* Whether stream s may post its pieces: no other stream on its side, peer,
 * context and tag is posting, or waiting with an earlier place (a new
 * message's pieces would be matched in their place), and, on the receiving
 * side, no earlier receive that could have matched a message of that peer,
 * context and tag is still in the provider. */
static bool te_stream_may_start(const struct te_stream *s)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(&te.posted, it) {
		const struct mbmpi_fop *f = mbu_container_of(it, struct mbmpi_fop, plink);

		if (!s->recv || f->rseq >= s->seq)
			break;
		if (te_could_take(f, s))
			return false;
	}
	mbu_dlist_foreach(&te.streams, it) {
		const struct te_stream *o = mbu_container_of(it, struct te_stream, link);

		if (o != s && o->recv == s->recv && o->addr == s->addr && o->tag == s->tag &&
		    o->next < o->end && (!o->waiting || o->seq < s->seq))
			return false;
	}
	return true;
}

static void te_stream_pump(struct te_stream *s);
static int te_recv(struct mbmpi_req *r);

/* A chunked message claimed by a matched probe that a later receive's
 * pieces would wait behind: received now into a temporary, which its
 * MPI_Mrecv adopts (mbmpi_p2p.c). Waiting for that MPI_Mrecv could wait
 * for ever: the program may first wait for the later receive (MPI_Mrecv of
 * two claimed messages in the reverse order does), and the sender's pieces
 * of later messages of the key wait behind this one's. A claimed message
 * that nothing waits behind stays in the provider until its MPI_Mrecv,
 * which receives it in place. */
static void te_early(struct mbmpi_fop *f)
{
	struct mbmpi_msg *m = f->msg;
	size_t len = m->status.mbmpi_bytes;
	struct mbmpi_req *r = mbmpi_req_alloc();
	void *buf = r ? malloc(len) : NULL;

	if (!buf) {
		fprintf(stderr, "matchbox mpi: rank %d: no memory to take a probed message of %zu "
			"bytes early; later receives of its tag wait for its MPI_Mrecv\n",
			mbmpi.world_rank, len);
		if (r)
			mbmpi_req_free(r);
		return;
	}
	r->kind = MBMPI_REQ_RECV;
	r->comm = m->comm;
	mbmpi_comm_retain(r->comm);
	r->ctx = m->comm->ctx;
	r->peer = m->status.MPI_SOURCE;
	r->tag = m->status.MPI_TAG;
	mbmpi_status_empty(&r->status);
	r->cbuf = buf;
	r->clen = len;
	r->claimed = f;
	m->fop = NULL;
	m->early = r;
	if (te_recv(r) && !r->err)
		r->err = MPI_ERR_OTHER;
}

/* Stream s waits: takes early every claimed message listed before it that
 * it could wait behind. */
static void te_early_before(const struct te_stream *s)
{
	struct mbu_dlist *it;

again:
	mbu_dlist_foreach(&te.posted, it) {
		struct mbmpi_fop *f = mbu_container_of(it, struct mbmpi_fop, plink);

		if (f->rseq >= s->seq)
			break;
		if (f->type == MBMPI_FOP_PEEK && te_could_take(f, s)) {
			te_early(f); /* no longer a peek; it may have left the list */
			goto again;
		}
	}
}

/* Starts the waiting streams that may now go, earliest first. */
static void te_streams_kick(void)
{
	struct mbu_dlist *it;

again:
	mbu_dlist_foreach(&te.streams, it) {
		struct te_stream *s = mbu_container_of(it, struct te_stream, link);

		if (s->waiting && te_stream_may_start(s)) {
			s->waiting = false;
			te.waiting--;
			te_stream_pump(s); /* may free s, or start others */
			goto again;
		}
	}
}

static struct te_stream *te_stream_new(struct mbmpi_req *r, bool recv, bool bounce,
				       fi_addr_t addr, uint64_t tag, size_t next, size_t end,
				       size_t chunk, uint64_t seq)
{
	struct te_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->req = r;
	s->recv = recv;
	s->bounce = bounce;
	s->addr = addr;
	s->tag = tag;
	s->next = next;
	s->end = end;
	s->chunk = chunk;
	s->bounces = chunk <= te.frag ? &te.bounces : &te.big_bounces;
	s->depth = chunk <= te.frag ? TE_STREAM_DEPTH : TE_BIG_DEPTH;
	s->seq = seq;
	s->waiting = !te_stream_may_start(s);
	te.waiting += s->waiting;
	r->eng = s;
	r->outstanding++;
	mbu_dlist_insert_tail(&s->link, &te.streams);
	if (s->waiting && s->recv)
		te_early_before(s);
	return s;
}

/* Posts what the window allows, unless an older stream on the same side,
 * peer and tag is still posting. A stream with nothing left to post or to
 * finish releases its request's count and is freed. */
static void te_stream_pump(struct te_stream *s)
{
	struct mbmpi_req *r = s->req;

	if (s->waiting)
		return;
	while (s->next < s->end && (!s->gate || s->next < s->gate) &&
	       (s->pushed || s->inflight < s->depth)) {
		size_t off = s->next, len = s->end - off < s->chunk ? s->end - off : s->chunk;
		struct mbmpi_fop *f = te_fop(NULL, s->recv ? MBMPI_FOP_PIECE_RECV :
						  MBMPI_FOP_PIECE_SEND);
		int ret = 0;

		if (!f) {
			r->err = MPI_ERR_NO_MEM;
			s->next = s->end;
			break;
		}
		f->req = r;
		f->addr = s->addr;
		f->tag = s->tag;
		f->off = off;
		f->bounce = NULL;
		if (s->recv && s->bounce) {
			/* A whole piece, even past the receive buffer, since a
			 * provider may never complete a rendezvous it truncated
			 * (tcp;ofi_rxm); what the buffer has no room for is not
			 * unpacked. */
			if (!(f->bounce = mbu_pool_get(s->bounces)))
				ret = MPI_ERR_NO_MEM;
			f->buf = f->bounce;
			f->len = len;
		} else if (s->recv) {
			/* Past the receive buffer: received with no room, which
			 * drains it. */
			bool room = off < r->clen;

			f->buf = room ? (char *)r->cbuf + off : NULL;
			f->len = !room ? 0 : r->clen - off < len ? r->clen - off : len;
		} else {
			f->data = (uint32_t)r->comm->rank;
			f->len = len;
			if (s->bounce && !(f->bounce = mbu_pool_get(s->bounces)))
				ret = MPI_ERR_NO_MEM;
			else if (s->bounce)
				mbmpi_dt_part(&s->cur, r->buf, (size_t)r->count, r->dt, off, f->bounce,
					      len, true);
			f->buf = s->bounce ? f->bounce : (char *)r->cbuf + off;
		}
		if (ret) {
			r->err = ret;
			s->next = s->end;
			mbmpi_fop_free(f);
			break;
		}
		s->next += len;
		s->inflight++;
		/* te_post's own, without its completion of a refused operation,
		 * which would come back here. */
		if (mbu_dlist_empty(te_queue(f)) && (ret = te_issue(f)) != 1) {
			if (ret < 0) {
				fprintf(stderr, "matchbox mpi: rank %d: a piece of a message to or from "
					"rank %d failed: %s\n", mbmpi.world_rank, r->peer,
					fi_strerror(-ret));
				r->err = MPI_ERR_OTHER;
				s->next = s->end;
				s->inflight--;
				if (f->bounce)
					mbu_pool_put(s->bounces, f->bounce);
				mbmpi_fop_free(f);
			}
			continue;
		}
		mbu_dlist_insert_tail(&f->link, te_queue(f));
	}
	if (s->next >= s->end && !s->released) {
		s->released = true;
		te_streams_kick(); /* the next stream of its key may go */
	}
	if (s->next < s->end || s->inflight)
		return;
	mbu_dlist_remove(&s->link);
	r->eng = NULL;
	te.pushing -= s->pushed;
	free(s);
	if (--r->outstanding == 0)
		mbmpi_req_done(r);
}

/* The receiver matched the message of a gated stream (err: or it never
 * will): the rest of its pieces may go. */
static void te_stream_ungate(struct te_stream *s, int err)
{
	if (!s->gate)
		return;
	s->gate = 0;
	if (err)
		s->next = s->end;
	te_stream_pump(s);
}

/* A piece done (e NULL: refused, err set): unpack what it brought, give its
 * buffer back and post the next. */
static void te_piece_done(struct mbmpi_fop *f, const struct fi_cq_tagged_entry *e, int err)
{
	struct mbmpi_req *r = f->req;
	struct te_stream *s = r->eng;

	if (err == FI_ETRUNC) {
		r->err = MPI_ERR_TRUNCATE;
	} else if (err) {
		r->err = MPI_ERR_OTHER;
		s->next = s->end; /* post no more */
	}
	if (s->recv && f->bounce && e && (!err || err == FI_ETRUNC) && f->off < r->clen) {
		size_t n = e->len < r->clen - f->off ? e->len : r->clen - f->off;

		mbmpi_dt_part(&s->cur, r->buf, (size_t)r->count, r->dt, f->off, f->bounce, n,
			      false);
	}
	if (f->bounce)
		mbu_pool_put(s->bounces, f->bounce);
	/* A synchronous stream's first piece went FI_MATCH_COMPLETE: done,
	 * its receiver has matched the message, as an acknowledgement says. */
	bool matched = f->flags & FI_MATCH_COMPLETE;

	mbmpi_fop_free(f);
	s->inflight--;
	if (matched && s->gate)
		te_stream_ungate(s, 0);
	else
		te_stream_pump(s);
}

/* Whether r goes pushed: contiguous, to a rank on another node, past one
 * piece and no more than push_max, and no other pushed message unfinished.
 * In a stream the link is busy anyway and the provider's rendezvous reads
 * straight into the receive buffer, where pieces are copied out of the
 * provider's receive buffers: pushing every message of a stream of 128 KiB
 * ones cost it 15-20% of its bandwidth. A synchronous send keeps the
 * rendezvous, whose match it waits for anyway. */
static inline bool te_push_to(const struct mbmpi_comm *c, const struct mbmpi_req *r)
{
	return r->clen > ((size_t)1 << te.push_shift) && r->clen <= te.push_max && !te.pushing &&
	       mbmpi.remote && !r->frag && r->mode != MBMPI_SYNC &&
	       mbmpi.remote[mbmpi_world_of(c, r->peer)];
}

static int te_send(struct mbmpi_req *r)
{
	struct mbmpi_comm *c = r->comm;
	fi_addr_t addr = c->addr[r->peer];
	uint64_t tag = mbmpi_tag(MBMPI_KIND_DATA, r->ctx, r->tag);
	uint64_t data = (uint32_t)c->rank;
	size_t len = r->clen, first = len, chunk = (size_t)1 << te.chunk_shift;
	uint64_t nfollow = 0;
	struct te_stream *stream = NULL;
	struct mbmpi_fop *f, *ack = NULL;
	int ret;

	/* A non-contiguous message's pieces are eager sends, complete once the
	 * receiving provider holds them: with no receive posted yet, a 24 MiB
	 * message piled up there whole. So past its first window a stream
	 * waits for the receiver to match the message, which the
	 * acknowledgement of a synchronous send says, as OB1's rendezvous
	 * waits for its ACK. Larger contiguous pieces are rendezvous already. */
	bool gated = r->frag && ((len - 1) >> te.frag_shift) > TE_STREAM_DEPTH;

	/* Not for a gated stream that is not synchronous while it may post
	 * an acknowledgement receive: its first piece, held in flight until
	 * the match, cost such streams 9% of their bandwidth (16 MiB vectors,
	 * one node, 8 paired rounds). */
	bool matched = te.match_complete && (r->mode == MBMPI_SYNC ||
					     (gated && te.acks >= te.gate_acks_max));

	if (gated && r->mode != MBMPI_SYNC && !matched && te.acks >= te.gate_acks_max)
		gated = false; /* the provider has no match completion: unbounded, not hung */

	r->outstanding++; /* held until every piece is posted */
	if ((r->mode == MBMPI_SYNC || gated) && !matched) {
		f = te_fop(r, MBMPI_FOP_ACK_RECV);
		if (!f)
			goto nomem;
		te.acks++;
		f->buf = NULL;
		f->len = 0;
		f->addr = addr;
		f->tag = mbmpi_tag(MBMPI_KIND_ACK, r->ctx, r->tag);
		if ((ret = te_post(f)))
			goto fail;
		ack = f;
		tag |= MBMPI_FLAG_SYNC;
	}
	size_t whole = mbmpi.remote && mbmpi.remote[mbmpi_world_of(c, r->peer)] ? te.whole_net
										   : te.whole;
	bool big = !r->frag && whole && len > whole;
	bool push = !r->frag && !big && len <= mbmpi.max_msg && te_push_to(c, r);

	if (r->frag || big || len > mbmpi.max_msg || push) {
		/* A non-contiguous message goes in pieces of te.frag bytes,
		 * each packed as it goes; a contiguous one above `whole` in
		 * pieces of te.big, one above the provider's limit in chunks,
		 * a window at a time, and a pushed one in one-trip pieces, all
		 * posted at once. */
		unsigned shift = r->frag ? te.frag_shift
				 : big ? te.big_shift
				 : len > mbmpi.max_msg ? te.chunk_shift : te.push_shift;
		uint64_t ctag = mbmpi_tag(MBMPI_KIND_CONT, r->ctx, r->tag);

		chunk = (size_t)1 << shift;
		nfollow = (len - 1) >> shift;
		if (push) {
			/* Head first: a whole piece, then the rest, the last
			 * piece short. A small piece ahead of a large one (the
			 * remainder first) stalled tcp connections whose
			 * congestion control is bbr in about half the jobs. The
			 * length travels whole (push_max is far below 2^24). */
			first = chunk;
			data |= ((uint64_t)len << 32) | ((uint64_t)(shift | TE_HEADFIRST) << 56);
		} else {
			first = len - (nfollow << shift);
			if (nfollow > 0xffffff) {
				r->err = MPI_ERR_COUNT;
				goto done;
			}
			data |= (nfollow << 32) | ((uint64_t)shift << 56);
		}
		tag |= MBMPI_FLAG_LARGE;
		/* Created before the first piece, so that its cursor packs it
		 * and its pieces are posted after it. */
		if (nfollow &&
		    !(stream = te_stream_new(r, false, r->frag, addr, ctag, first, len, chunk,
							te.send_seq++)))
			goto nomem;
		if (stream && gated)
			stream->gate = first + (size_t)TE_STREAM_DEPTH * chunk;
		if (stream && push) {
			stream->pushed = true;
			te.pushing++;
			te.pushed++;
		}
	}
	if (r->frag) {
		/* The first piece is the stream's too: packed into a bounce
		 * buffer, and its completion posts the next. */
		f = te_fop(NULL, MBMPI_FOP_PIECE_SEND);
		if (f && !(f->bounce = mbu_pool_get(stream->bounces))) {
			mbmpi_fop_free(f);
			f = NULL;
		}
		if (f) {
			f->req = r;
			f->off = 0;
			f->buf = f->bounce;
			mbmpi_dt_part(&stream->cur, r->buf, (size_t)r->count, r->dt, 0, f->bounce,
				      first, true);
			stream->inflight++;
		}
	} else if ((f = te_fop(r, MBMPI_FOP_SEND))) {
		f->buf = r->cbuf;
	}
	if (!f) {
		if (stream) {
			stream->next = stream->end;
			te_stream_pump(stream);
		}
		goto nomem;
	}
	f->len = first;
	f->addr = addr;
	f->tag = tag;
	f->data = data;
	if (matched)
		f->flags = FI_MATCH_COMPLETE; /* its completion says the match */
	else if (first <= te.inject && !nfollow)
		f->flags = FI_INJECT;
	if ((ret = te_post(f))) {
		/* A refused piece of a stream has ended it already. */
		if (stream && !r->frag) {
			stream->next = stream->end;
			te_stream_pump(stream);
		}
		goto fail;
	}
	if (stream) {
		te_stream_pump(stream);
		goto done;
	}
done:
	/* A message that failed here never reaches its receiver, whose
	 * acknowledgement would then never come: the send must end with
	 * its error, not wait for ever. */
	if (ack && r->err)
		te_withdraw(ack);
	if (--r->outstanding == 0)
		mbmpi_req_done(r);
	return MPI_SUCCESS;
nomem:
	r->err = MPI_ERR_NO_MEM;
	goto done;
fail:
	r->err = ret;
	goto done;
}

static int te_inject(struct mbmpi_comm *c, int peer, int tag, const void *buf, size_t len)
{
	ssize_t ret;

	if (len > te.inject || !mbu_dlist_empty(&te.retry[TE_SENDQ]))
		return -1;
	ret = fi_tinjectdata(te.x.ep, buf, len, (uint32_t)c->rank, c->addr[peer],
			     mbmpi_tag(MBMPI_KIND_DATA, c->ctx, tag));
	if (ret == -FI_EAGAIN)
		return -1;
	return ret ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static struct mbmpi_fop *te_recv_fop(struct mbmpi_req *r)
{
	struct mbmpi_fop *f;

	if (r->claimed) {
		f = r->claimed;
		r->claimed = NULL;
		f->type = MBMPI_FOP_RECV;
		f->req = r;
		f->flags = FI_CLAIM; /* listed since its probe if chunked */
		r->outstanding++;
	} else {
		f = &r->own;
		f->posted = false;
		f->type = MBMPI_FOP_RECV;
		f->req = r;
		f->flags = 0;
		f->data = 0;
		r->outstanding++;
		f->addr = r->peer == MPI_ANY_SOURCE ? FI_ADDR_UNSPEC : r->comm->addr[r->peer];
		f->tag = mbmpi_tag(MBMPI_KIND_DATA, r->ctx, r->tag == MPI_ANY_TAG ? 0 : r->tag);
		f->ignore = MBMPI_FLAGS_MASK | (r->tag == MPI_ANY_TAG ? MBMPI_TAG_MASK : 0);
	}
	f->buf = r->cbuf;
	f->len = r->clen;
	return f;
}

static int te_recv(struct mbmpi_req *r)
{
	struct mbmpi_fop *f = te_recv_fop(r);

	/* The common receive, straight to the provider: te_post and
	 * te_issue's dispatch would only choose this same call. */
	if (MBMPI_LIKELY(!f->flags && te.trecv_now && mbu_dlist_empty(&te.retry[TE_RECVQ]))) {
		ssize_t ret;

		r->main = f;
		ret = te.trecv_now(te.x.ep, f->buf, f->len, NULL, f->addr, f->tag, f->ignore,
				   &f->ctx, &te.now);
		if (ret == 0) {
			te_posted_add(f);
			return MPI_SUCCESS;
		}
		if (ret == 1) {
			te_complete_now(f);
			return MPI_SUCCESS;
		}
		r->main = NULL;
	}
	r->main = f;
	return te_post(f);
}

static void te_ack(struct mbmpi_comm *c, int src, uint64_t tag);

/* A receive that a waiting message completes at once (the engine's take).
 * The first piece of a chunked message is refused: its pieces need a
 * request to land through. So is anything while operations wait to be
 * posted, which may include an earlier receive that matches first. */
static int te_take(struct mbmpi_comm *c, uint32_t ctx, int src, int tag, void *buf, size_t len,
		   MPI_Status *st)
{
	struct fi_cq_tagged_entry e;
	uint32_t from;

	if (!mbu_dlist_empty(&te.retry[TE_RECVQ]))
		return -1;
	if (te.trecv_take(te.x.ep, buf, len, src == MPI_ANY_SOURCE ? FI_ADDR_UNSPEC : c->addr[src],
			  mbmpi_tag(MBMPI_KIND_DATA, ctx, tag == MPI_ANY_TAG ? 0 : tag),
			  MBMPI_FLAGS_MASK | (tag == MPI_ANY_TAG ? MBMPI_TAG_MASK : 0),
			  MBMPI_FLAG_LARGE, &e) != 1)
		return -1;
	from = (uint32_t)e.data;
	if (from >= (uint32_t)c->size) {
		fprintf(stderr, "matchbox mpi: dropped a message with a bad source %u\n", from);
		return MPI_ERR_INTERN;
	}
	if (e.tag & MBMPI_FLAG_SYNC)
		te_ack(c, (int)from, e.tag);
	st->MPI_SOURCE = (int)from;
	st->MPI_TAG = (int)(e.tag & MBMPI_TAG_MASK);
	st->mbmpi_cancelled = 0;
	st->mbmpi_bytes = e.len;
	return MPI_SUCCESS;
}

static void te_ack(struct mbmpi_comm *c, int src, uint64_t tag)
{
	struct mbmpi_fop *f = te_fop(NULL, MBMPI_FOP_ACK_SEND);

	if (!f) {
		fprintf(stderr, "matchbox mpi: no memory for a synchronous-send acknowledgement\n");
		return;
	}
	f->buf = NULL;
	f->len = 0;
	f->addr = c->addr[src];
	f->tag = mbmpi_tag(MBMPI_KIND_ACK, te_ctx_of(tag), (int)(tag & MBMPI_TAG_MASK));
	f->flags = te.inject ? FI_INJECT : 0;
	te_post(f);
}

static inline void te_status(struct mbmpi_req *r, uint32_t src, uint64_t tag, size_t placed)
{
	r->status.MPI_SOURCE = (int)src;
	r->status.MPI_TAG = (int)(tag & MBMPI_TAG_MASK);
	/* Providers differ in what len says for a truncated receive; never more than fits. */
	r->status.mbmpi_bytes = placed < r->clen ? placed : r->clen;
}

/* The common receive's completion, inline in te_progress's loop: a whole
 * message from a valid source with nothing to acknowledge or to follow.
 * False for anything else, which te_complete handles. */
static inline bool te_recv_plain(struct mbmpi_fop *f, const struct fi_cq_tagged_entry *e)
{
	struct mbmpi_req *r = f->req;
	uint32_t src = (uint32_t)e->data;

	if (f->type != MBMPI_FOP_RECV || (e->tag & (MBMPI_FLAG_SYNC | MBMPI_FLAG_LARGE)) ||
	    src >= (uint32_t)r->comm->size || te_ctx_of(e->tag) != r->ctx)
		return false;
	te_status(r, src, e->tag, e->len);
	te_op_finished(f);
	return true;
}

/* A matched first piece: fill the status, acknowledge a synchronous send and
 * post the continuation pieces of a chunked message. */
static void te_on_recv(struct mbmpi_fop *f, const struct fi_cq_tagged_entry *e, int err,
		       size_t olen)
{
	struct mbmpi_req *r = f->req;
	struct mbmpi_comm *c = r->comm;
	uint64_t tag = e->tag;
	uint32_t src = (uint32_t)e->data;
	size_t placed = e->len;

	if (err == FI_ECANCELED) {
		r->status.mbmpi_cancelled = 1;
		te_op_finished(f);
		return;
	}
	if (err && err != FI_ETRUNC) {
		r->err = MPI_ERR_OTHER;
		te_op_finished(f);
		return;
	}
	if (src >= (uint32_t)c->size || te_ctx_of(tag) != r->ctx) {
		fprintf(stderr, "matchbox mpi: dropped a message with a bad source %u\n", src);
		r->err = MPI_ERR_INTERN;
		te_op_finished(f);
		return;
	}
	te_status(r, src, tag, placed);
	if (err == FI_ETRUNC)
		r->err = MPI_ERR_TRUNCATE;
	if (tag & MBMPI_FLAG_SYNC)
		te_ack(c, (int)src, tag);
	if ((tag & MBMPI_FLAG_LARGE) && te.cq_data64) {
		size_t first = placed + olen, chunk, total = te_chunked_len(e->data, first, &chunk);

		if (!total) {
			r->err = MPI_ERR_INTERN;
			te_op_finished(f);
			return;
		}
		r->status.mbmpi_bytes = total < r->clen ? total : r->clen;
		if (total > r->clen)
			r->err = MPI_ERR_TRUNCATE;
		/* Into a non-contiguous receive, pieces no larger than a bounce
		 * buffer are unpacked as they land (its temporary keeps the first
		 * piece alone); into anything else they go straight. */
		bool bounce = r->tmp && ((te.frag && chunk <= te.frag) || (te.big && chunk <= te.big));
		struct te_stream *s;

		if (total > first) {
			s = te_stream_new(r, true, bounce, c->addr[src],
					  mbmpi_tag(MBMPI_KIND_CONT, r->ctx, r->status.MPI_TAG), first,
					  total, chunk, f->posted ? f->rseq : te.recv_seq++);
			if (!s) {
				r->err = MPI_ERR_NO_MEM;
			} else {
				if (bounce)
					r->tmp_valid = first;
				te_stream_pump(s);
			}
		}
	}
	te_op_finished(f);
}

static void te_complete(struct mbmpi_fop *f, const struct fi_cq_tagged_entry *e, int err,
			size_t olen)
{
	static bool told;

	/* The MPI error class alone says "other": name the first cause. A
	 * probe that finds nothing (FI_ENOMSG) is not a failure. */
	if (err && err != FI_ECANCELED && err != FI_ETRUNC && err != FI_ENOMSG && !told) {
		told = true;
		fprintf(stderr, "matchbox mpi: rank %d: an operation failed in the provider: %s "
			"(FI_LOG_LEVEL=warn shows why)\n", mbmpi.world_rank, fi_strerror(err));
	}
	switch (f->type) {
	case MBMPI_FOP_RECV:
		te_on_recv(f, e, err, olen);
		return;
	case MBMPI_FOP_PIECE_SEND:
	case MBMPI_FOP_PIECE_RECV:
		te_piece_done(f, e, err);
		return;
	case MBMPI_FOP_PEEK:
		f->done = true;
		f->found = !err;
		f->err = err;
		f->rtag = e->tag;
		f->rdata = e->data;
		f->rlen = e->len;
		return;
	case MBMPI_FOP_ACK_RECV:
		if (err == FI_ECANCELED)
			break;
		if (f->req && f->req->eng)
			te_stream_ungate(f->req->eng, err);
		/* fallthrough */
	default:
		if (err && f->req)
			f->req->err = MPI_ERR_OTHER;
		if (err && !f->req)
			fprintf(stderr, "matchbox mpi: an acknowledgement failed: %s\n",
				fi_strerror(err));
		break;
	}
	te_op_finished(f);
}

static int te_progress(void)
{
	struct fi_cq_tagged_entry e[16];
	struct mbu_dlist *it;
	ssize_t n;
	int done = 0;

	/* Receives first: posting them is what lets the peer's sends, and
	 * so perhaps ours, move. */
	for (int q = TE_RECVQ; q >= TE_SENDQ; q--) {
		while ((it = te.retry[q].next) != &te.retry[q]) {
			struct mbmpi_fop *f = mbu_container_of(it, struct mbmpi_fop, link);
			int ret = te_issue(f);

			if (ret == 1)
				break;
			mbu_dlist_remove(it);
			if (ret == 2) {
				te_complete_now(f);
			} else if (ret < 0) {
				te_failed(f);
			} else if (f->flags & FI_INJECT) {
				te_op_finished(f);
			} else if (f->type == MBMPI_FOP_RECV) {
				te_posted_add(f);
			}
		}
	}
	n = fi_cq_read(te.x.cq, e, 16);
	if (n > 0) {
		for (ssize_t i = 0; i < n; i++) {
			struct mbmpi_fop *f = mbu_container_of((struct fi_context2 *)e[i].op_context,
							       struct mbmpi_fop, ctx);

			if (!te_recv_plain(f, &e[i]))
				te_complete(f, &e[i], 0, 0);
		}
		done += (int)n;
	} else if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = {0};

		/* An entry without a context belongs to no operation of ours (a
		 * provider reporting a failed inject): nothing to complete. */
		if (fi_cq_readerr(te.x.cq, &err, 0) != 1) {
			/* raced with another reader: nothing there */
		} else if (!err.op_context) {
			fprintf(stderr, "matchbox mpi: an operation without a context failed: %s\n",
				fi_strerror(err.err < 0 ? -err.err : err.err));
		} else {
			/* shm 1.17 reports its errors negated; the class is what counts. */
			int code = err.err < 0 ? -err.err : err.err;
			struct fi_cq_tagged_entry t = {.op_context = err.op_context,
						       .flags = err.flags, .len = err.len,
						       .buf = err.buf, .data = err.data,
						       .tag = err.tag};
			te_complete(mbu_container_of((struct fi_context2 *)err.op_context,
						     struct mbmpi_fop, ctx),
				    &t, code, err.olen);
			done++;
		}
	} else if (n < 0 && n != -FI_EAGAIN) {
		fprintf(stderr, "matchbox mpi: fi_cq_read: %s\n", fi_strerror((int)-n));
	}
	return done;
}

static int te_probe(struct mbmpi_comm *c, int src, int tag, bool claim, int *flag,
		    MPI_Status *st, struct mbmpi_msg **msg)
{
	struct mbmpi_fop *f = te_fop(NULL, MBMPI_FOP_PEEK);
	int spins = 0;

	if (!f)
		return MPI_ERR_NO_MEM;
	f->buf = NULL;
	f->len = 0;
	f->addr = src == MPI_ANY_SOURCE ? FI_ADDR_UNSPEC : c->addr[src];
	f->tag = mbmpi_tag(MBMPI_KIND_DATA, c->ctx, tag == MPI_ANY_TAG ? 0 : tag);
	f->ignore = MBMPI_FLAGS_MASK | (tag == MPI_ANY_TAG ? MBMPI_TAG_MASK : 0);
	f->flags = FI_PEEK | (claim ? FI_CLAIM : 0);
	f->done = false;
	if (te_post(f))
		return MPI_ERR_OTHER;
	while (!f->done) {
		if (!te_progress())
			mbmpi_idle(&spins);
	}
	if (!f->found || (uint32_t)f->rdata >= (uint32_t)c->size) {
		int ret = f->found || f->err == FI_ENOMSG ? MPI_SUCCESS : MPI_ERR_OTHER;

		*flag = 0;
		mbmpi_fop_free(f);
		return ret;
	}
	*flag = 1;
	st->MPI_SOURCE = (int)(uint32_t)f->rdata;
	st->MPI_TAG = (int)(f->rtag & MBMPI_TAG_MASK);
	st->mbmpi_cancelled = 0;
	st->mbmpi_bytes = f->rlen;
	if ((f->rtag & MBMPI_FLAG_LARGE) && te.cq_data64) {
		size_t chunk, total = te_chunked_len(f->rdata, f->rlen, &chunk);

		if (total)
			st->mbmpi_bytes = total;
	}
	if (claim) {
		*msg = malloc(sizeof(**msg));
		if (!*msg) {
			/* The claimed message cannot be dropped; keep it for nobody. */
			return MPI_ERR_NO_MEM;
		}
		(*msg)->fop = f;
		(*msg)->comm = c;
		(*msg)->status = *st;
		(*msg)->early = NULL;
		/* A chunked message matched here, not at its MPI_Mrecv: listed
		 * now, so that a later receive's pieces of its peer, context and
		 * tag wait for its own (by the probe's pattern, which may be
		 * wider), or take it early (te_early). The peek's results are
		 * read: posted overlays them. */
		bool chunked = (f->rtag & MBMPI_FLAG_LARGE) && te.cq_data64;

		f->posted = false;
		if (chunked) {
			te_list(f);
			f->msg = *msg;
		}
	} else {
		mbmpi_fop_free(f);
	}
	return MPI_SUCCESS;
}

static int te_cancel(struct mbmpi_req *r)
{
	struct mbmpi_fop *f = r->main;

	if (r->kind != MBMPI_REQ_RECV || !f || r->complete)
		return MPI_SUCCESS;
	if (te_unqueue(f)) {
		r->status.mbmpi_cancelled = 1;
		te_op_finished(f);
		return MPI_SUCCESS;
	}
	/* In the provider: cancelled there, or already matched and then
	 * completing normally. */
	fi_cancel(&te.x.ep->fid, &f->ctx);
	return MPI_SUCCESS;
}

static int te_getopt(int name, void *val, size_t *len)
{
	return mbmpi_fab_getopt(&te.x, name, val, len);
}

/* ---- One-sided ---- */

static int te_rma_reg(void *buf, size_t len, uint64_t *key, uint64_t *raddr, void **mr)
{
	if (!te.x.rma)
		return MPI_ERR_UNSUPPORTED_OPERATION;
	return mbmpi_fab_reg(&te.x, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE,
			     key, raddr, mr);
}

static int te_rma(struct mbmpi_req *r, const struct mbmpi_rma *op)
{
	struct mbmpi_fop *f;

	if (!te.x.rma)
		return MPI_ERR_UNSUPPORTED_OPERATION;
	if (!(f = te_fop(r, MBMPI_FOP_RMA)))
		return MPI_ERR_NO_MEM;
	mbmpi_fab_rma_fill(f, op);
	return te_post(f);
}

static size_t te_atomic_max(int kind, int fdt, int fop)
{
	return mbmpi_fab_atomic_max(&te.x, kind, fdt, fop);
}

const struct mbmpi_engine mbmpi_tagged_engine = {
	.name = "tagged",
	.init = te_init,
	.getname = te_getname,
	.insert = te_insert,
	.send = te_send,
	.recv = te_recv,
	.probe = te_probe,
	.cancel = te_cancel,
	.inject = te_inject,
	.take = te_take,
	.progress = te_progress,
	.getopt = te_getopt,
	.fini = te_fini,
	.rma_reg = te_rma_reg,
	.rma_dereg = mbmpi_fab_dereg,
	.rma = te_rma,
	.atomic_max = te_atomic_max,
};
