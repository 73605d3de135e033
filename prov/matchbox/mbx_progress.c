/* The shm wire and its protocols: connecting to a peer's segment, writing
 * frames, draining our own rings, matching what arrives, and moving large
 * messages by CMA or by the pipelined two-copy path. See mbx_proto.h for the
 * frame layout and the protocol sequence.
 *
 * Everything here runs under the domain lock, from a data call or from
 * progress (fi_cq_read and friends). Nothing here blocks: a full ring queues
 * the send on its peer (in order), and a full unexpected buffer leaves frames
 * in the ring, which in turn holds the sender back. */
#include "mbu_atomic.h"
#include "mbx.h"
#include "mbx_frame.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbx_net.h"
#include "mbx_rail.h"
#include "mbu_copy.h"
#include "mbu_ntpick.h"
#include "mbu_futex.h"
#include "mbu_shm.h"

#define DRAIN_BUDGET 64

static inline void doorbell(struct mbx_seg_hdr *h)
{
	/* A receiver that can never sleep needs no wake-up, and the fence
	 * below is a tenth of a small message's cost. */
	if (!atomic_load_explicit(&h->waitable, memory_order_relaxed))
		return;
	/* Pairs with the fence in mbx_ep_wait: either the sleeper sees our
	 * frame, or we see it sleeping. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&h->sleepers, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&h->doorbell, 1, memory_order_release);
		mbu_futex_wake(&h->doorbell);
		if (atomic_load_explicit(&h->fd_armed, memory_order_acquire))
			mbx_wake_send(h->wake_name);
	}
}

/* Frames were committed to a peer's ring: wake a sleeping shm receiver, or
 * let the net wire ship them. */
static inline void kick(struct mbx_ep *ep, struct mbx_peer *p)
{
	if (__builtin_expect(p->net != NULL, 0))
		mbx_net_kick(ep, p);
	else
		doorbell(p->rseg);
}

/* Bytes [off, off + len) of a scatter list to or from the flat buffer
 * `flat`: into the list (to_iov) out of a frame or chunk another process
 * wrote, with mbu_copy; out of the list into shared memory with memcpy;
 * non-temporal either way with nt. Returns the bytes moved. */
static size_t copy_iov(const struct iovec *iov, size_t cnt, size_t off, char *flat, size_t len,
		       bool to_iov, bool nt)
{
	size_t i, done = 0;

	for (i = 0; i < cnt && done < len; i++) {
		char *user;
		size_t n;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		user = (char *)iov[i].iov_base + off;
		n = iov[i].iov_len - off;
		if (n > len - done)
			n = len - done;
		if (nt)
			mbu_copy_nt(to_iov ? user : flat + done, to_iov ? flat + done : user, n);
		else if (to_iov)
			mbu_copy(user, flat + done, n);
		else
			memcpy(flat + done, user, n);
		done += n;
		off = 0;
	}
	return done;
}

size_t mbx_copy_to_iov(const struct iovec *iov, size_t cnt, size_t off, const void *src,
		       size_t len)
{
	return copy_iov(iov, cnt, off, (char *)src, len, true, false);
}

size_t mbx_copy_from_iov(void *dst, const struct iovec *iov, size_t cnt, size_t off,
			 size_t len)
{
	return copy_iov(iov, cnt, off, dst, len, false, false);
}

/* A sender's copy of len bytes of its payload into memory of p's segment
 * (a ring frame or a bulk chunk), with ordinary or non-temporal stores as
 * p's copies so far say (mbu_ntpick.h). A net peer's ring is our own
 * staging area, read next by this process. */
static __attribute__((noinline)) void copy_in_big(struct mbx_peer *p, void *dst,
						  const struct iovec *iov, size_t cnt,
						  size_t off, size_t len)
{
	uint64_t t0;

	if (p->net || !mbx_param.nt_rate) {
		copy_iov(iov, cnt, off, dst, len, false, false);
		return;
	}
	if (mbu_ntpick_use(&p->ntpick, len)) {
		copy_iov(iov, cnt, off, dst, len, false, true);
		return;
	}
	t0 = mbu_now_ns();
	copy_iov(iov, cnt, off, dst, len, false, false);
	mbu_ntpick_note(&p->ntpick, len, mbu_now_ns() - t0, mbx_param.nt_rate);
}

/* Small copies stay inline (one buffer: one memcpy, the eager fast path's
 * case); only from MBU_NTPICK_MIN up is a copy timed. */
static inline void copy_in(struct mbx_peer *p, void *dst, const struct iovec *iov, size_t cnt,
			   size_t off, size_t len)
{
	if (len >= MBU_NTPICK_MIN)
		copy_in_big(p, dst, iov, cnt, off, len);
	else if (cnt == 1 && len)
		memcpy(dst, (const char *)iov[0].iov_base + off, len);
	else
		copy_iov(iov, cnt, off, dst, len, false, false);
}

/* ---- peers ---- */

struct mbx_peer *mbx_peer_get(struct mbx_ep *ep, const struct mbx_addr *a)
{
	struct mbu_qnode *n = mbu_qmap_get(&ep->peers, mbx_addr_k0(a), mbx_addr_k1(a));
	struct mbx_peer *p;

	if (!n)
		return NULL;
	if (!mbu_dlist_empty(&n->q))
		return mbu_container_of(n->q.next, struct mbx_peer, key_link);
	p = calloc(1, sizeof(*p));
	if (!p) {
		mbu_qmap_release(&ep->peers, n);
		return NULL;
	}
	p->addr = *a;
	mbx_format_addr(a, p->name, sizeof(p->name));
	p->rxslot = -1;
	p->cma_ok = mbx_param.large_proto != MBX_LARGE_COPY;
	p->rma_cma_ok = mbx_param.rma_cma != MBX_RMA_CMA_NEVER;
	p->fiaddr = FI_ADDR_NOTAVAIL;
	p->fiaddr_gen = UINT64_MAX;
	p->eager_limit = ep->eager_limit;
	mbu_dlist_init(&p->txq);
	mbu_dlist_init(&p->ctrlq);
	mbu_dlist_init(&p->rma_wait);
	mbu_dlist_init(&p->cts_wait);
	mbu_dlist_init(&p->reading);
	mbu_dlist_init(&p->pend_link);
	mbu_dlist_insert_tail(&p->key_link, &n->q);
	mbu_dlist_insert_tail(&p->all_link, &ep->peer_list);
	return p;
}

static fi_addr_t peer_fiaddr(struct mbx_ep *ep, struct mbx_peer *p)
{
	if (!ep->av)
		return FI_ADDR_NOTAVAIL;
	if (p->fiaddr_gen != ep->av->gen) {
		p->fiaddr = mbx_av_reverse(ep->av, &p->addr);
		p->fiaddr_gen = ep->av->gen;
	}
	return p->fiaddr;
}

/* A message from a sender the AV does not hold yet is queued under
 * FI_ADDR_NOTAVAIL. Open MPI inserts peers lazily, on first use, so the
 * directed receive for such a message can come after the message and after
 * the insert; whenever the AV has changed, those messages are re-keyed under
 * their sender's address, before anything else is matched or queued (so a
 * sender's later messages never get ahead of them). */
void mbx_ux_rekey_all(struct mbx_ep *ep)
{
	struct mbu_unexp *qs[2] = { &ep->tunexp, &ep->munexp };
	struct mbu_dlist *it;

	ep->ux_gen = ep->av->gen;
	for (int q = 0; q < 2; q++) {
		if (!qs[q]->count)
			continue;
		mbu_dlist_foreach(&qs[q]->all, it) {
			struct mbx_ux *ux = mbu_container_of(mbu_unexp_entry_of_all(it),
							     struct mbx_ux, m);
			fi_addr_t src;

			if (ux->src != FI_ADDR_NOTAVAIL || !ux->peer)
				continue;
			src = peer_fiaddr(ep, ux->peer);
			if (src != FI_ADDR_NOTAVAIL && !mbu_unexp_rekey(qs[q], &ux->m, src))
				ux->src = src;
			else if (src != FI_ADDR_NOTAVAIL)
				ep->ux_gen = UINT64_MAX; /* out of memory: try again later */
		}
	}
}

static bool seg_geometry_ok(const struct mbx_seg_hdr *h, size_t size)
{
	if (size < MBX_SEG_HDR_SIZE || h->magic != MBX_SEG_MAGIC ||
	    h->version != MBX_SEG_VERSION)
		return false;
	if (!h->nslots || !h->ring_size || (h->ring_size & (h->ring_size - 1)) ||
	    h->nchunks < 2 || !h->chunk_size)
		return false;
	if (h->slot_size < MBX_SLOT_HDR_SIZE + h->ring_size + h->nchunks * h->chunk_size)
		return false;
	return (size - MBX_SEG_HDR_SIZE) / h->slot_size >= h->nslots;
}

int mbx_peer_connect(struct mbx_ep *ep, struct mbx_peer *p)
{
	char name[MBX_NAME_MAX];
	struct mbx_seg_hdr *h;
	size_t size;
	uint32_t i;
	void *m;
	int ret;

	if (p->state == MBX_PEER_READY)
		return 0;
	if (p->state == MBX_PEER_FAILED)
		return p->err;
	if (p->addr.job != ep->addr.job || p->addr.uid != ep->addr.uid) {
		MBX_WARN(FI_LOG_EP_DATA, "refusing %s: another job or user\n", p->name);
		ret = -FI_EHOSTUNREACH;
		goto fail;
	}
	if (p->addr.host != ep->addr.host) {
		ret = mbx_net_peer_init(ep, p);
		if (ret)
			goto fail;
		p->state = MBX_PEER_READY;
		return 0;
	}
	mbx_shm_name(&p->addr, name, sizeof(name));
	ret = mbu_shm_open(name, &m, &size);
	if (ret) {
		MBX_WARN(FI_LOG_EP_DATA, "cannot open %s: %s\n", name, strerror(-ret));
		ret = -FI_EHOSTUNREACH;
		goto fail;
	}
	h = m;
	if (!seg_geometry_ok(h, size) || h->pid != p->addr.pid ||
	    atomic_load_explicit(&h->closed, memory_order_acquire)) {
		MBX_WARN(FI_LOG_EP_DATA, "segment %s is malformed; not using it\n", name);
		mbu_shm_unmap(m, size);
		ret = -FI_EHOSTUNREACH;
		goto fail;
	}
	for (i = 0; i < h->nslots; i++) {
		struct mbx_slot *s = mbx_seg_slot(h, i);
		uint32_t expect = MBX_SLOT_FREE;
		uint32_t used;

		if (!atomic_compare_exchange_strong(&s->state, &expect, MBX_SLOT_CLAIMED))
			continue;
		s->sender_pid = ep->addr.pid;
		memcpy(s->sender_name, ep->name, MBX_NAME_MAX);
		/* The ring's first lap would otherwise take a page fault in
		 * each process every 64 small frames (0.35 against 0.15 us a
		 * round trip for the first 4,096 here). Populated before
		 * READY, so the receiver finds every page there to map. Only
		 * for the first shm_prefault peers: the pages a quiet peer
		 * never reaches would be memory spent for nothing. */
		s->prefaulted = ep->shm_prefaulted < mbx_param.shm_prefault;
		if (s->prefaulted) {
			mbu_shm_prefault(mbx_slot_ring(s), h->ring_size, 1);
			ep->shm_prefaulted++;
		}
		used = atomic_load(&h->nslots_used);
		while (used < i + 1 &&
		       !atomic_compare_exchange_weak(&h->nslots_used, &used, i + 1))
			;
		atomic_store_explicit(&s->state, MBX_SLOT_READY, memory_order_release);
		atomic_fetch_add_explicit(&h->claims, 1, memory_order_release);
		p->rseg = h;
		p->rseg_size = size;
		p->tslot = s;
		p->bulk_filled = atomic_load(&s->bulk_filled);
		p->bulk_sched = p->bulk_filled;
		mbu_ring_prod_init(&p->prod, &s->ring, mbx_slot_ring(s), h->ring_size);
		p->state = MBX_PEER_READY;
		ep->stats.shm_peers++;
		doorbell(h);
		return 0;
	}
	MBX_WARN(FI_LOG_EP_DATA, "%s has no free slot (FI_MATCHBOX_SHM_PEERS)\n", p->name);
	mbu_shm_unmap(m, size);
	ret = -FI_ENOSPC;
fail:
	p->state = MBX_PEER_FAILED;
	p->err = ret;
	return ret;
}

/* ---- transmit side ---- */

/* `reply`: for a target's answer, which may use the reserve. */
static struct mbx_tx *tx_alloc(struct mbx_ep *ep, bool reply)
{
	struct mbx_tx *tx;

	if (ep->tx_nfree <= (reply ? 0 : MBX_TX_REPLY_RESERVE))
		return NULL;
	tx = &ep->txs[ep->tx_free[--ep->tx_nfree]];
	tx->gen++;
	tx->bounce = NULL;
	tx->rma_peer = NULL;
	return tx;
}

static void tx_free(struct mbx_ep *ep, struct mbx_tx *tx)
{
	if (tx->mr || tx->rce)
		mbx_net_rma_release(ep, tx);
	if (tx->rma_peer)
		tx->rma_peer->rma_out--;
	tx->rma_peer = NULL;
	if (tx->offered)
		tx->peer->rts_offered--;
	tx->offered = false;
	if (tx->bounce)
		mbu_pool_put(&ep->bounce_pool, tx->bounce);
	tx->bounce = NULL;
	tx->state = MBX_TX_FREE;
	tx->gen++;
	ep->tx_free[ep->tx_nfree++] = tx->idx;
}

static inline uint64_t tx_id(const struct mbx_tx *tx)
{
	return ((uint64_t)tx->gen << 32) | tx->idx;
}

static struct mbx_tx *tx_lookup(struct mbx_ep *ep, struct mbx_peer *p, uint64_t id)
{
	uint32_t idx = (uint32_t)id, gen = (uint32_t)(id >> 32);
	struct mbx_tx *tx;

	if (idx >= ep->tx_cap)
		return NULL;
	tx = &ep->txs[idx];
	if (tx->gen != gen || tx->state == MBX_TX_FREE || tx->peer != p)
		return NULL;
	return tx;
}

/* Send completions: opflags carries FI_COMPLETION as "write a CQ entry".
 * A failed fi_inject has no context to report against (the API gives it
 * none and promises no completion): it counts as an error on the counter
 * and in the log, never as a CQ entry the caller could not place. */
static struct mbx_cntr *tx_cntr_of(struct mbx_ep *ep, const struct mbx_tx *tx)
{
	if (tx->op == MBX_OP_ATOMIC)	/* fetching atomics count as reads */
		return tx->akind == MBU_ATOMIC_PLAIN ? ep->wr_cntr : ep->rd_cntr;
	return tx->op == MBX_OP_WRITE ? ep->wr_cntr : tx->op == MBX_OP_READ ? ep->rd_cntr :
	       ep->tx_cntr;
}

void mbx_tx_report(struct mbx_ep *ep, struct mbx_cntr *cntr, void *context, uint64_t flags,
		   uint64_t opflags, uint64_t tag, int err, const struct mbx_peer *p)
{
	if (err) {
		if (ep->tx_cq && (context || !(opflags & FI_INJECT)))
			mbx_cq_write_err(ep->tx_cq, context, flags, err, 0, 0, tag, 0, NULL,
					 FI_ADDR_NOTAVAIL);
		else
			MBX_WARN(FI_LOG_EP_DATA, "an injected operation to %s failed: %s\n",
				 p ? p->name : "a peer", fi_strerror(err));
		mbx_cntr_inc_err(cntr);
	} else {
		if (ep->tx_cq && (opflags & FI_COMPLETION))
			mbx_cq_write(ep->tx_cq, context, flags, 0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
		mbx_cntr_inc(cntr);
	}
}

static void tx_complete(struct mbx_ep *ep, struct mbx_tx *tx, int err)
{
	/* A read we served (RDATA): nobody here waits for it. */
	if (tx->op != MBX_OP_RDATA)
		mbx_tx_report(ep, tx_cntr_of(ep, tx), tx->context, tx->flags, tx->opflags,
			      tx->tag, err, tx->peer);
	tx_free(ep, tx);
}

static inline void fill_wire(struct mbx_wire *w, uint8_t op, uint8_t flags, uint64_t tag,
			     uint64_t data, uint64_t size, uint64_t id)
{
	w->f.kind = MBX_FRAME_KIND;
	w->magic = MBX_WIRE_MAGIC;
	w->version = MBX_WIRE_VERSION;
	w->op = op;
	w->flags = flags;
	w->iov_cnt = 0;
	w->rsvd = 0;
	w->rsvd2 = 0;
	w->tag = tag;
	w->data = data;
	w->size = size;
	w->id = id;
}

static void mark_pending(struct mbx_ep *ep, struct mbx_peer *p)
{
	if (mbu_dlist_empty(&p->pend_link))
		mbu_dlist_insert_tail(&p->pend_link, &ep->pending_peers);
}

static int ctrl_try(struct mbx_ep *ep, struct mbx_peer *p, uint8_t op, uint64_t id,
		    uint64_t size, uint64_t data, uint64_t tag)
{
	struct mbx_wire *w = (struct mbx_wire *)mbu_ring_reserve(&p->prod, sizeof(*w));

	if (!w)
		return -FI_EAGAIN;
	fill_wire(w, op, 0, tag, data, size, id);
	mbu_ring_commit(&p->prod, &w->f);
	kick(ep, p);
	return 0;
}

/* A control frame; `tag` carries an outcome (WACK, RERR). */
static void send_ctrl_tag(struct mbx_ep *ep, struct mbx_peer *p, uint8_t op, uint64_t id,
			  uint64_t size, uint64_t data, uint64_t tag)
{
	struct mbx_ctrl *c;

	if (mbx_peer_connect(ep, p))
		return;	/* the peer is gone; nobody waits for this frame */
	if (mbu_dlist_empty(&p->ctrlq) && !ctrl_try(ep, p, op, id, size, data, tag))
		return;
	c = mbu_pool_get(&ep->ctrl_pool);
	if (!c) {
		MBX_WARN(FI_LOG_EP_DATA, "out of memory queueing a control frame to %s\n",
			 p->name);
		return;
	}
	c->op = op;
	c->id = id;
	c->size = size;
	c->data = data;
	c->tag = tag;
	mbu_dlist_insert_tail(&c->link, &p->ctrlq);
	mark_pending(ep, p);
}

void mbx_proto_ctrl(struct mbx_ep *ep, struct mbx_peer *p, uint8_t op, uint64_t id,
		    uint64_t size, uint64_t data, uint64_t tag)
{
	send_ctrl_tag(ep, p, op, id, size, data, tag);
}

static void send_ctrl(struct mbx_ep *ep, struct mbx_peer *p, uint8_t op, uint64_t id,
		      uint64_t size, uint64_t data)
{
	send_ctrl_tag(ep, p, op, id, size, data, 0);
}

/* The remote segment and offset in it that byte `pos` of an RMA falls in. */
static size_t riov_at(const struct mbx_tx *tx, size_t pos, size_t *off)
{
	size_t i;

	for (i = 0; i < tx->riov_cnt && pos >= tx->riov[i].len; i++)
		pos -= tx->riov[i].len;
	*off = pos;
	return i;
}

/* The next piece of an atomic, whole elements within one remote segment,
 * as many as a frame holds (and its answer: the old values); nonzero if
 * the ring has no room. */
static int atomic_piece(struct mbx_tx *tx, struct mbx_peer *p, size_t ri, size_t off,
			struct mbx_wire **out)
{
	size_t es = mbu_atomic_size(tx->adt), nb = mbx_atomic_bufs(tx->akind, tx->aop);
	size_t room = p->eager_limit > sizeof(struct mbx_wire_atomic) ?
		      p->eager_limit - sizeof(struct mbx_wire_atomic) : 0;
	size_t elems = room / (es * (nb ? nb : 1)), n;
	struct mbx_wire_atomic *a;
	struct mbx_wire *w;
	char *pl;
	bool last;

	n = ri < tx->riov_cnt ? tx->riov[ri].len - off : 0;
	if (n > (elems ? elems : 1) * es)
		n = (elems ? elems : 1) * es;
	if (n > tx->size - tx->streamed)
		n = tx->size - tx->streamed;
	last = tx->streamed + n == tx->size;
	w = (struct mbx_wire *)mbu_ring_reserve(&p->prod,
						(uint32_t)(sizeof(*w) + sizeof(*a) + n * nb));
	if (!w)
		return -FI_EAGAIN;
	fill_wire(w, MBX_OP_ATOMIC, last ? MBX_WF_LAST | tx->wflags : 0,
		  MBX_ATOMIC_TAG(tx->akind, tx->aop, tx->adt), tx->streamed, n, tx_id(tx));
	a = (struct mbx_wire_atomic *)(w + 1);
	a->key = ri < tx->riov_cnt ? tx->riov[ri].key : 0;
	a->addr = ri < tx->riov_cnt ? tx->riov[ri].addr + off : 0;
	a->cqdata = tx->data;
	pl = (char *)(a + 1);
	if (tx->aop != FI_ATOMIC_READ) {
		mbx_copy_from_iov(pl, tx->iov, tx->iov_cnt, tx->streamed, n);
		pl += n;
	}
	if (tx->akind == MBU_ATOMIC_COMPARE)
		mbx_copy_from_iov(pl, tx->cmp_iov, tx->cmp_cnt, tx->streamed, n);
	*out = w;
	return 0;
}

/* RMA frames, as many as the ring takes: WRITE pieces (each within one
 * remote segment), one READ per remote segment, or the RDATA pieces of a
 * read being served. -FI_EAGAIN until all are written; tx->streamed
 * remembers how far it got. */
static int tx_write_rma(struct mbx_ep *ep, struct mbx_tx *tx)
{
	struct mbx_peer *p = tx->peer;
	/* Every ring and receive buffer takes eager_limit bytes after the
	 * largest operation header (MBX_WIRE_OP_HDR_MAX). */
	size_t chunk = p->eager_limit;
	bool moved = false;
	int ret = 0;

	/* Zero-length operations still go: a write may carry CQ data, and
	 * the target counts both; its empty RDATA answers an empty read. */
	while (tx->streamed < tx->size || (tx->size == 0 && !moved)) {
		struct mbx_wire *w;
		size_t off, ri = riov_at(tx, tx->streamed, &off), n;

		/* An empty operation still names its region, to be counted there. */
		if (tx->size == 0 && tx->riov_cnt)
			ri = 0;

		if (tx->op == MBX_OP_READ) {
			struct mbx_wire_rma *r;

			n = ri < tx->riov_cnt ? tx->riov[ri].len - off : 0;
			w = (struct mbx_wire *)mbu_ring_reserve(&p->prod, sizeof(*w) + sizeof(*r));
			if (!w) {
				ret = -FI_EAGAIN;
				break;
			}
			/* LAST: the target counts one remote read per operation */
			fill_wire(w, MBX_OP_READ,
				  tx->streamed + n == tx->size ?
				  MBX_WF_LAST | (tx->wflags & MBX_WF_WANTKEY) : 0,
				  0, tx->streamed, n, tx_id(tx));
			r = (struct mbx_wire_rma *)(w + 1);
			r->key = ri < tx->riov_cnt ? tx->riov[ri].key : 0;
			r->addr = ri < tx->riov_cnt ? tx->riov[ri].addr + off : 0;
		} else if (tx->op == MBX_OP_WRITE) {
			struct mbx_wire_rma *r;
			bool last;

			n = ri < tx->riov_cnt ? tx->riov[ri].len - off : 0;
			if (n > chunk)
				n = chunk;
			if (n > tx->size - tx->streamed)
				n = tx->size - tx->streamed;
			last = tx->streamed + n == tx->size;
			w = (struct mbx_wire *)mbu_ring_reserve(&p->prod,
								(uint32_t)(sizeof(*w) + sizeof(*r) + n));
			if (!w) {
				ret = -FI_EAGAIN;
				break;
			}
			fill_wire(w, MBX_OP_WRITE, (last ? MBX_WF_LAST : 0) | (last ? tx->wflags : 0),
				  tx->size, tx->data, n, tx_id(tx));
			r = (struct mbx_wire_rma *)(w + 1);
			r->key = ri < tx->riov_cnt ? tx->riov[ri].key : 0;
			r->addr = ri < tx->riov_cnt ? tx->riov[ri].addr + off : 0;
			copy_in(p, r + 1, tx->iov, tx->iov_cnt, tx->streamed, n);
		} else if (tx->op == MBX_OP_ATOMIC) {
			if (atomic_piece(tx, p, ri, off, &w)) {
				ret = -FI_EAGAIN;
				break;
			}
			n = w->size;
		} else {
			n = tx->size - tx->streamed;
			if (n > p->eager_limit)
				n = p->eager_limit;
			w = (struct mbx_wire *)mbu_ring_reserve(&p->prod, (uint32_t)(sizeof(*w) + n));
			if (!w) {
				ret = -FI_EAGAIN;
				break;
			}
			/* tag: the reader's offset of this segment; id: its read */
			fill_wire(w, MBX_OP_RDATA, 0, 0, tx->tag + tx->streamed, n, tx->data);
			copy_in(p, w + 1, tx->iov, tx->iov_cnt, tx->streamed, n);
		}
		mbu_ring_commit(&p->prod, &w->f);
		tx->streamed += n;
		moved = true;
	}
	if (moved)
		kick(ep, p);
	if (ret)
		return ret;
	if (tx->bounce) {
		mbu_pool_put(&ep->bounce_pool, tx->bounce);
		tx->bounce = NULL;
	}
	if (tx->op == MBX_OP_RDATA)
		tx_complete(ep, tx, 0);
	else
		tx->state = MBX_TX_WAIT;	/* for WACK, or for every RDATA */
	return 0;
}

/* Write a queued or deferred send into the ring; 0 when written. */
static int tx_write(struct mbx_ep *ep, struct mbx_tx *tx)
{
	struct mbx_peer *p = tx->peer;
	struct mbx_wire *w;
	uint64_t off, base = 0;
	uint32_t key = 0;
	bool reg;
	size_t i, ilen, head, hmax;

	if (tx->op >= MBX_OP_WRITE)
		return tx_write_rma(ep, tx);
	if (tx->op == MBX_OP_EAGER) {
		w = (struct mbx_wire *)mbu_ring_reserve(&p->prod,
							(uint32_t)(sizeof(*w) + tx->size));
		if (!w)
			return -FI_EAGAIN;
		fill_wire(w, MBX_OP_EAGER, tx->wflags, tx->tag, tx->data, tx->size, tx_id(tx));
		copy_in(p, w + 1, tx->iov, tx->iov_cnt, 0, tx->size);
		mbu_ring_commit(&p->prod, &w->f);
		/* The frame in the ring holds the data now. */
		if (tx->bounce) {
			mbu_pool_put(&ep->bounce_pool, tx->bounce);
			tx->bounce = NULL;
		}
		kick(ep, p);
		ep->stats.eager_sent++;
		if ((tx->wflags & MBX_WF_ACKREQ) || p->net)
			tx->state = MBX_TX_WAIT;
		else
			tx_complete(ep, tx, 0);
		return 0;
	}
	/* To another host, offer the data for fi_read where the connection
	 * allows it; the receiver may still ask for it by clear-to-send. (A
	 * send that finds the ring full comes back here and offers the same
	 * registration.) */
	reg = p->net && !mbx_net_rma_reg(ep, p, tx, &key, &base);
	if (reg && tx->rails) {
		const void *names;
		unsigned cnt = mbx_net_rails_untold(ep, p, &names);

		/* The peer learns where our rails are before the first RTS
		 * that offers them: the frames arrive in order. */
		if (cnt) {
			size_t nlen = cnt * sizeof(struct mbx_rail_name);

			w = (struct mbx_wire *)mbu_ring_reserve(&p->prod,
								(uint32_t)(sizeof(*w) + nlen));
			if (!w)
				return -FI_EAGAIN;
			fill_wire(w, MBX_OP_RAILS, 0, 0, 0, cnt, 0);
			memcpy(w + 1, names, nlen);
			mbu_ring_commit(&p->prod, &w->f);
			mbx_net_rails_told(ep, p);
		}
	}
	/* Offered for fi_read, the first request to a peer may carry the
	 * message's first bytes too, up to an eager frame: they cross with it
	 * instead of after the read request's trip, and the receiver reads
	 * only the rest (mbx_net_rts_head: not over tcp, where it did not
	 * pay once bbr was gone, see mbx_net.c). Requests behind one still unfinished carry
	 * none: in a stream the link is busy anyway, and the head's copies
	 * on both sides cost 13% of its bandwidth at 128 KiB. Nor does a
	 * message with less left to read than its head: over tcp under bbr
	 * congestion control, a 64 KiB head followed by a read of 8 KiB or
	 * less put the connection into stalls that lasted into the messages
	 * after it (ftx_pingpong -S 73728,196608 between two hosts: 60 and
	 * 148 us against 42 and 54 without heads; cubic did not stall). */
	if (reg && !tx->offered) {
		tx->offered = true;
		p->rts_offered++;
	}
	ilen = tx->iov_cnt * sizeof(struct mbx_wire_iov);
	head = 0;
	if (reg && p->rts_offered == 1 && (hmax = mbx_net_rts_head(ep)) && p->eager_limit > ilen) {
		head = p->eager_limit - ilen;
		if (head > hmax)
			head = hmax;
		if (head > tx->size - head)
			head = 0;
	}
	w = (struct mbx_wire *)mbu_ring_reserve(&p->prod, (uint32_t)(sizeof(*w) + ilen + head));
	if (!w)
		return -FI_EAGAIN;
	fill_wire(w, MBX_OP_RTS, tx->wflags | (reg ? MBX_WF_RMA : 0) |
		  (reg && tx->rails ? MBX_WF_RAILS : 0) | (head ? MBX_WF_HEAD : 0), tx->tag,
		  tx->data, tx->size, tx_id(tx));
	w->rsvd2 = reg ? key : 0;
	w->iov_cnt = (uint8_t)tx->iov_cnt;
	/* Registered, the data is addressed in the registration: contiguous
	 * from `base`. */
	for (i = 0, off = base; i < tx->iov_cnt; i++) {
		struct mbx_wire_iov *wi = (struct mbx_wire_iov *)(w + 1) + i;

		wi->addr = reg ? off : (uint64_t)(uintptr_t)tx->iov[i].iov_base;
		wi->len = tx->iov[i].iov_len;
		off += tx->iov[i].iov_len;
	}
	if (head) {
		mbx_copy_from_iov((char *)(w + 1) + ilen, tx->iov, tx->iov_cnt, 0, head);
		ep->stats.rdv_head++;
	}
	mbu_ring_commit(&p->prod, &w->f);
	kick(ep, p);
	tx->state = MBX_TX_WAIT;
	return 0;
}

ssize_t mbx_proto_send(struct mbx_ep *ep, struct mbx_peer *p, const struct iovec *iov,
		       size_t cnt, size_t len, uint64_t tag, uint64_t data, void *context,
		       uint64_t cflags, uint64_t opflags, uint8_t wflags)
{
	bool dc = opflags & (FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE);
	struct mbx_tx *tx;
	size_t i;
	int ret;

	if (__builtin_expect(p->state != MBX_PEER_READY, 0)) {
		ret = mbx_peer_connect(ep, p);
		if (ret)
			return ret;
	}
	/* Net peers take the tracked path: a send there completes when its
	 * frame has been acknowledged or written to the connection, not when it
	 * reaches our staging ring. All but a small inject, which has no
	 * completion to wait for: its short header keeps every message of up
	 * to MBX_SMALL_MAX bytes (the host engine's 16-byte header with 8 of
	 * data) under the 128 bytes on the wire on which the kernel grows a TCP
	 * connection's receive window (mbx_net.c). */
	if (len <= p->eager_limit && !dc &&
	    (!p->net || ((opflags & (FI_INJECT | FI_COMPLETION)) == FI_INJECT &&
			 len <= MBX_SMALL_MAX)) &&
	    mbu_dlist_empty(&p->txq)) {
		struct mbx_wire *w = (struct mbx_wire *)mbu_ring_reserve(&p->prod,
							(uint32_t)(sizeof(*w) + len));

		if (__builtin_expect(w != NULL, 1)) {
			void *payload = w + 1;

			if (len <= MBX_SMALL_MAX) {
				struct mbx_wire_small *sw = (struct mbx_wire_small *)w;

				sw->f.len = (uint32_t)(sizeof(*sw) + len);
				sw->f.kind = MBX_FRAME_KIND;
				sw->magic = MBX_WIRE_MAGIC;
				sw->version = MBX_WIRE_VERSION;
				sw->op = MBX_OP_SMALL;
				sw->flags = wflags;
				memset(sw->rsvd, 0, sizeof(sw->rsvd));
				sw->tag = tag;
				sw->data = data;
				payload = sw + 1;
			} else {
				fill_wire(w, MBX_OP_EAGER, wflags, tag, data, len, 0);
			}
			/* A zero-byte send may come with a NULL buffer. */
			if (len)
				copy_in(p, payload, iov, cnt, 0, len);
			mbu_ring_commit(&p->prod, &w->f);
			kick(ep, p);
			ep->stats.eager_sent++;
			if (ep->tx_cq && (opflags & FI_COMPLETION))
				mbx_cq_write(ep->tx_cq, context, cflags, 0, NULL, 0, 0,
					     FI_ADDR_NOTAVAIL);
			mbx_cntr_inc(ep->tx_cntr);
			return 0;
		}
		ep->stats.backpressure++;
	}
	tx = tx_alloc(ep, false);
	if (!tx)
		return -FI_EAGAIN;
	tx->peer = p;
	tx->context = context;
	tx->flags = cflags;
	tx->opflags = opflags;
	tx->tag = tag;
	tx->data = data;
	tx->size = len;
	tx->wflags = wflags | (dc ? MBX_WF_ACKREQ : 0);
	tx->op = len <= p->eager_limit ? MBX_OP_EAGER : MBX_OP_RTS;
	for (i = 0; i < cnt; i++)
		tx->iov[i] = iov[i];
	tx->iov_cnt = cnt;
	if (mbu_dlist_empty(&p->txq) && !tx_write(ep, tx))
		return 0;
	/* An inject that cannot go into the ring now must not keep pointing at
	 * the caller's buffer, which is theirs again when we return. Only then
	 * does it take a bounce buffer: a tracked send to another host waits
	 * for its acknowledgement, and a bounce held for that whole wait would
	 * cost one buffer per peer in an all-to-all. */
	if ((opflags & FI_INJECT) && tx->op == MBX_OP_EAGER) {
		tx->bounce = mbu_pool_get(&ep->bounce_pool);
		if (!tx->bounce) {
			tx_free(ep, tx);
			return -FI_EAGAIN;
		}
		mbx_copy_from_iov(tx->bounce, iov, cnt, 0, len);
		tx->iov[0].iov_base = tx->bounce;
		tx->iov[0].iov_len = len;
		tx->iov_cnt = 1;
	}
	tx->state = MBX_TX_QUEUED;
	mbu_dlist_insert_tail(&tx->link, &p->txq);
	mark_pending(ep, p);
	return 0;
}

/* An inject's data, copied so the caller may reuse its buffer; on
 * failure the tx is freed. */
static int tx_bounce(struct mbx_ep *ep, struct mbx_tx *tx, const struct mbx_rma_req *r)
{
	tx->bounce = mbu_pool_get(&ep->bounce_pool);
	if (!tx->bounce) {
		tx_free(ep, tx);
		return -FI_EAGAIN;
	}
	mbx_copy_from_iov(tx->bounce, r->iov, r->cnt, 0, r->len);
	tx->iov[0].iov_base = tx->bounce;
	tx->iov[0].iov_len = r->len;
	tx->iov_cnt = 1;
	return 0;
}

ssize_t mbx_proto_rma(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_rma_req *r)
{
	struct mbx_tx *tx;
	size_t i, one_frame;
	bool inject = (r->opflags & FI_INJECT) && r->op != MBX_OP_READ;
	int ret;

	if (__builtin_expect(p->state != MBX_PEER_READY, 0)) {
		ret = mbx_peer_connect(ep, p);
		if (ret)
			return ret;
	}
	tx = tx_alloc(ep, false);
	if (!tx)
		return -FI_EAGAIN;
	tx->peer = p;
	tx->rma_peer = p;
	p->rma_out++;
	if (!p->net)
		ep->stats.rma_frames++;
	tx->context = r->context;
	tx->flags = (r->op == MBX_OP_ATOMIC ? FI_ATOMIC : FI_RMA) |
		    (r->op == MBX_OP_READ ||
		     (r->op == MBX_OP_ATOMIC && r->akind != MBU_ATOMIC_PLAIN) ? FI_READ : FI_WRITE);
	tx->opflags = r->opflags;
	tx->op = r->op;
	tx->tag = 0;
	tx->data = r->data;
	tx->size = r->len;
	tx->wflags = (r->cqdata ? MBX_WF_CQDATA : 0) | (r->wantkey ? MBX_WF_WANTKEY : 0);
	tx->streamed = 0;
	tx->got = 0;
	tx->rerr = 0;
	for (i = 0; i < r->cnt; i++)
		tx->iov[i] = r->iov[i];
	tx->iov_cnt = r->cnt;
	for (i = 0; i < r->rcnt; i++)
		tx->riov[i] = r->riov[i];
	tx->riov_cnt = r->rcnt;
	tx->akind = r->akind;
	tx->aop = r->aop;
	tx->adt = r->adt;
	for (i = 0; i < r->res_cnt; i++)
		tx->res_iov[i] = r->res[i];
	tx->res_cnt = r->res_cnt;
	for (i = 0; i < r->cmp_cnt; i++)
		tx->cmp_iov[i] = r->cmp[i];
	tx->cmp_cnt = r->cmp_cnt;
	/* An inject's buffer is the caller's again when we return. One that
	 * takes several frames is copied first, as the ring may take only
	 * some of them now; a one-frame inject is copied only if it waits. */
	one_frame = r->op == MBX_OP_ATOMIC ? p->eager_limit - sizeof(struct mbx_wire_atomic) :
					     p->eager_limit;
	if (inject && (r->len > one_frame || !mbu_dlist_empty(&p->txq)) && tx_bounce(ep, tx, r))
		return -FI_EAGAIN;
	if (mbu_dlist_empty(&p->txq) && !tx_write(ep, tx))
		return 0;
	if (inject && !tx->bounce && tx_bounce(ep, tx, r))
		return -FI_EAGAIN;	/* nothing of it reached the ring */
	tx->state = MBX_TX_QUEUED;
	mbu_dlist_insert_tail(&tx->link, &p->txq);
	mark_pending(ep, p);
	return 0;
}

static void rma_wait_serve(struct mbx_ep *ep, struct mbx_peer *p);

static void flush_pending(struct mbx_ep *ep)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&ep->pending_peers, it, tmp) {
		struct mbx_peer *p = mbu_container_of(it, struct mbx_peer, pend_link);

		if (!mbu_dlist_empty(&p->rma_wait))
			rma_wait_serve(ep, p);
		while (!mbu_dlist_empty(&p->ctrlq)) {
			struct mbx_ctrl *c = mbu_container_of(p->ctrlq.next, struct mbx_ctrl, link);

			if (ctrl_try(ep, p, c->op, c->id, c->size, c->data, c->tag))
				break;
			mbu_dlist_remove(&c->link);
			mbu_pool_put(&ep->ctrl_pool, c);
		}
		while (mbu_dlist_empty(&p->ctrlq) && !mbu_dlist_empty(&p->txq)) {
			struct mbx_tx *tx = mbu_container_of(p->txq.next, struct mbx_tx, link);

			mbu_dlist_remove(&tx->link);
			if (tx_write(ep, tx)) {
				mbu_dlist_insert_head(&tx->link, &p->txq);
				break;
			}
		}
		if (mbu_dlist_empty(&p->txq) && mbu_dlist_empty(&p->ctrlq) &&
		    mbu_dlist_empty(&p->rma_wait))
			mbu_dlist_remove(&p->pend_link);
	}
}

/* Sender half of the two-copy pipeline: fill free chunks of the peer's bulk
 * area while it drains the ones already full. */
/* Net peers have no bulk area: the data follows the CTS as DATA frames in
 * the ring, each naming the send and its offset. */
static void stream_net(struct mbx_ep *ep, struct mbx_tx *tx)
{
	struct mbx_peer *p = tx->peer;
	bool moved = false;

	while (tx->streamed < tx->want) {
		size_t n = tx->want - tx->streamed;
		struct mbx_wire *w;

		if (n > p->piece_limit)
			n = p->piece_limit;
		w = (struct mbx_wire *)mbu_ring_reserve(&p->prod, (uint32_t)(sizeof(*w) + n));
		if (!w)
			break;
		fill_wire(w, MBX_OP_DATA, 0, 0, tx->streamed, n, tx_id(tx));
		mbx_copy_from_iov(w + 1, tx->iov, tx->iov_cnt, tx->streamed, n);
		mbu_ring_commit(&p->prod, &w->f);
		tx->streamed += n;
		moved = true;
	}
	if (moved)
		mbx_net_kick(ep, p);
}

static void stream_chunks(struct mbx_ep *ep)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&ep->streaming, it, tmp) {
		struct mbx_tx *tx = mbu_container_of(it, struct mbx_tx, link);
		struct mbx_peer *p = tx->peer;

		if (p->net) {
			stream_net(ep, tx);
			if (tx->streamed == tx->want) {
				mbu_dlist_remove(&tx->link);
				tx->state = MBX_TX_WAIT;
			}
			continue;
		}
		struct mbx_seg_hdr *h = p->rseg;
		uint64_t drained;
		uint8_t *bulk = mbx_slot_bulk(h, p->tslot);
		bool moved = false;

		/* A send cleared behind another to the same peer waits until
		 * that one's last chunk is in: the receiver reads them in order. */
		if (p->bulk_filled != tx->bulk_base && !tx->streamed)
			continue;
		drained = atomic_load_explicit(&p->tslot->bulk_drained, memory_order_acquire);
		/* A fault per page of the first chunks would make the first
		 * messages slower than the rest, and the CMA-or-pipeline
		 * choice (mbu_choose.h) would measure that. */
		if (!p->bulk_mapped_tx) {
			mbu_shm_prefault(bulk, (size_t)h->nchunks * h->chunk_size, 1);
			p->bulk_mapped_tx = true;
		}

		while (p->bulk_filled - drained < h->nchunks && tx->streamed < tx->want) {
			size_t n = tx->want - tx->streamed;

			if (n > h->chunk_size)
				n = h->chunk_size;
			copy_in(p, bulk + (p->bulk_filled % h->nchunks) * h->chunk_size, tx->iov,
				tx->iov_cnt, tx->streamed, n);
			tx->streamed += n;
			p->bulk_filled++;
			atomic_store_explicit(&p->tslot->bulk_filled, p->bulk_filled,
					      memory_order_release);
			moved = true;
		}
		if (moved)
			doorbell(h);
		if (tx->streamed == tx->want) {
			mbu_dlist_remove(&tx->link);
			tx->state = MBX_TX_WAIT;
		}
	}
}

/* ---- receive side ---- */

static void rx_release(struct mbx_ep *ep, struct mbx_rx *rx)
{
	mbu_pool_put(&ep->rx_pool, rx);
}

static void fail_rx(struct mbx_ep *ep, struct mbx_rx *rx, int err)
{
	if (ep->rx_cq)
		mbx_cq_write_err(ep->rx_cq, rx->context,
				 rx->flags | (rx->multi ? FI_MULTI_RECV : 0), err, 0, 0,
				 rx->m.tag, 0, NULL, FI_ADDR_NOTAVAIL);
	mbx_cntr_inc_err(ep->rx_cntr);
	rx_release(ep, rx);
}

/* Is `src` a peer the net wire has given up on? Only asked once one has. */
static bool src_lost(struct mbx_ep *ep, fi_addr_t src)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(&ep->peer_list, it) {
		struct mbx_peer *p = mbu_container_of(it, struct mbx_peer, all_link);

		if (p->lost && peer_fiaddr(ep, p) == src)
			return true;
	}
	return false;
}

/* A receive that got all its message: its completion and its count. */
static inline void rx_done(struct mbx_ep *ep, struct mbx_rx *rx, uint64_t flags, size_t len,
			   void *buf, uint64_t data, uint64_t tag, fi_addr_t src)
{
	if (ep->rx_cq && (rx->opflags & FI_COMPLETION)) {
		/* completed inside trecv_now: its caller takes the entry */
		if (__builtin_expect(ep->now != NULL, 0) && rx->context == ep->now_ctx) {
			*ep->now = (struct fi_cq_tagged_entry){
				.op_context = rx->context, .flags = flags, .len = len, .buf = buf,
				.data = data, .tag = tag};
			ep->now = NULL;
		} else {
			mbx_cq_write(ep->rx_cq, rx->context, flags, len, buf, data, tag, src);
		}
	}
	mbx_cntr_inc(ep->rx_cntr);
}

void mbx_rx_complete(struct mbx_ep *ep, struct mbx_rx *rx, size_t len, void *buf,
		     uint64_t tag, uint64_t data, fi_addr_t src, uint64_t extra, size_t olen)
{
	uint64_t flags = rx->flags | extra;

	if (olen) {
		if (ep->rx_cq)
			mbx_cq_write_err(ep->rx_cq, rx->context, flags, FI_ETRUNC, len, olen,
					 tag, data, buf, src);
		mbx_cntr_inc_err(ep->rx_cntr);
		return;
	}
	rx_done(ep, rx, flags, len, buf, data, tag, src);
}

static void *rx_buf_ptr(const struct mbx_rx *rx)
{
	return rx->iov_cnt ? rx->iov[0].iov_base : NULL;
}

/* For a multi-receive buffer, carve out room for one message. Returns the
 * receive that will carry it (a fresh entry for a large message, NULL if none
 * is free) and sets *extra to FI_MULTI_RECV when the buffer is used up, in
 * which case it has left the posted queue and its caller must release it. */
static struct mbx_rx *carve(struct mbx_ep *ep, struct mbu_posted *q, struct mbx_rx *rx,
			    size_t size, bool large, size_t *take, char **where,
			    uint64_t *extra)
{
	size_t avail = rx->total - rx->mr_off;
	struct mbx_rx *sub = rx;

	*take = size < avail ? size : avail;
	*where = (char *)rx->iov[0].iov_base + rx->mr_off;
	*extra = 0;
	if (large) {
		sub = mbu_pool_get(&ep->rx_pool);
		if (!sub)
			return NULL;
		memset(sub, 0, sizeof(*sub));
		sub->context = rx->context;
		sub->flags = rx->flags;
		sub->opflags = rx->opflags;
		sub->iov[0].iov_base = *where;
		sub->iov[0].iov_len = *take;
		sub->iov_cnt = 1;
		sub->total = *take;
	}
	rx->mr_off += *take;
	if (rx->total - rx->mr_off < ep->min_multi_recv) {
		*extra = FI_MULTI_RECV;
		mbu_posted_remove(q, &rx->m);
		rx->posted = false;
	}
	return sub;
}

/* A message that fits a one-piece receive: the common case, inline in
 * deliver_eager (a call with nine arguments cost more than the work). */
static inline void deliver_fit(struct mbx_ep *ep, struct mbu_posted *q, struct mbx_rx *rx,
			       const void *payload, size_t size, uint64_t tag, uint64_t data,
			       uint8_t wflags, fi_addr_t src)
{
	if (size)
		mbu_copy(rx->iov[0].iov_base, payload, size);
	if (rx->posted) {
		mbu_posted_remove(q, &rx->m);
		rx->posted = false;
	}
	rx_done(ep, rx, rx->flags | ((wflags & MBX_WF_CQDATA) ? FI_REMOTE_CQ_DATA : 0), size,
		rx->iov[0].iov_base, data, tag, src);
	rx_release(ep, rx);
}

/* The rest: multi-receive buffers, several pieces, truncation. */
static bool deliver_other(struct mbx_ep *ep, struct mbu_posted *q, struct mbx_rx *rx,
			  const void *payload, size_t size, uint64_t tag, uint64_t data,
			  uint8_t wflags, fi_addr_t src)
{
	uint64_t cqd = (wflags & MBX_WF_CQDATA) ? FI_REMOTE_CQ_DATA : 0;
	size_t take;

	if (rx->multi) {
		char *where;
		uint64_t extra;

		carve(ep, q, rx, size, false, &take, &where, &extra);
		mbu_copy(where, payload, take);
		mbx_rx_complete(ep, rx, take, where, tag, data, src, cqd | extra, size - take);
		if (!extra)
			return false;
		rx_release(ep, rx);
		return true;
	}
	take = size < rx->total ? size : rx->total;
	if (rx->iov_cnt == 1 && take)
		mbu_copy(rx->iov[0].iov_base, payload, take);
	else if (take)
		mbx_copy_to_iov(rx->iov, rx->iov_cnt, 0, payload, take);
	if (rx->posted) {
		mbu_posted_remove(q, &rx->m);
		rx->posted = false;
	}
	mbx_rx_complete(ep, rx, take, rx_buf_ptr(rx), tag, data, src, cqd, size - take);
	rx_release(ep, rx);
	return true;
}

/* Returns true when `rx` is finished with (and released). */
static inline __attribute__((always_inline)) bool
deliver_eager(struct mbx_ep *ep, struct mbu_posted *q, struct mbx_rx *rx,
	      const void *payload, size_t size, uint64_t tag, uint64_t data,
	      uint8_t wflags, fi_addr_t src)
{
	if (__builtin_expect(!rx->multi && rx->iov_cnt == 1 && size <= rx->total, 1)) {
		deliver_fit(ep, q, rx, payload, size, tag, data, wflags, src);
		return true;
	}
	return deliver_other(ep, q, rx, payload, size, tag, data, wflags, src);
}

int mbx_cma_move(pid_t pid, bool write, const struct iovec *liov, size_t lcnt,
		 const struct mbx_wire_iov *riov, size_t rcnt, size_t take)
{
	size_t li = 0, ri = 0, loff = 0, roff = 0, done = 0;

	while (done < take) {
		struct iovec l, r;
		size_t n;
		ssize_t got;

		while (li < lcnt && loff == liov[li].iov_len)
			li++, loff = 0;
		while (ri < rcnt && roff == riov[ri].len)
			ri++, roff = 0;
		if (li == lcnt || ri == rcnt)
			return -FI_EIO;
		n = liov[li].iov_len - loff;
		if (n > riov[ri].len - roff)
			n = riov[ri].len - roff;
		if (n > take - done)
			n = take - done;
		l.iov_base = (char *)liov[li].iov_base + loff;
		l.iov_len = n;
		r.iov_base = (void *)(uintptr_t)(riov[ri].addr + roff);
		r.iov_len = n;
		got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) :
			      process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (got <= 0)
			return got < 0 ? -errno : -FI_EIO;
		loff += (size_t)got;
		roff += (size_t)got;
		done += (size_t)got;
	}
	return 0;
}

static uint64_t bulk_chunks(const struct mbx_seg_hdr *h, uint64_t bytes)
{
	return (bytes + h->chunk_size - 1) / h->chunk_size;
}

/* rx's chunks are the next the pipeline drains; when it is timed for the
 * CMA-or-pipeline choice, its time starts here. */
static void drain_begin(struct mbx_ep *ep, struct mbx_rx *rx)
{
	rx->t_drain = rx->chosen ? mbu_now_ns() : 0;
	mbu_dlist_insert_tail(&rx->link, &ep->draining);
}

/* On the shm copy path a second receive is cleared to send while the first
 * still drains: its chunks follow the first's in the bulk ring, so the
 * sender goes on filling without waiting a CTS round trip per message,
 * which left both cores idle at every message boundary (1 MiB messages in
 * a window ran at 20 to 54 GB/s from run to run, against a steady 57 for
 * the same bytes as RDATA frames). */
static void cts_activate(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbx_rx *rx, *prev = p->cts_active;
	struct mbx_slot *s;

	if (mbu_dlist_empty(&p->cts_wait) || (prev && (p->net || p->cts_next)))
		return;
	rx = mbu_container_of(mbu_dlist_pop(&p->cts_wait), struct mbx_rx, link);
	rx->copied = 0;
	if (p->net) {
		/* DATA frames drive it (handle_data), in order, from offset 0. */
		rx->bulk_base = 0;
		p->cts_active = rx;
		send_ctrl(ep, p, MBX_OP_CTS, rx->msg_id, rx->take, 0);
		return;
	}
	s = ep->rxslots[p->rxslot].slot;
	if (!p->bulk_mapped_rx) {
		mbu_shm_prefault(mbx_slot_bulk(ep->seg, s), (size_t)ep->seg->nchunks * ep->seg->chunk_size,
				 0);
		p->bulk_mapped_rx = true;
	}
	/* Only cts_active is on the draining list, so one receive drains at
	 * a time and the shared drained count never passes unread chunks. */
	if (prev) {
		rx->bulk_base = prev->bulk_base + bulk_chunks(ep->seg, prev->take);
		p->cts_next = rx;
	} else {
		rx->bulk_base = atomic_load_explicit(&s->bulk_drained, memory_order_relaxed);
		p->cts_active = rx;
		drain_begin(ep, rx);
	}
	send_ctrl(ep, p, MBX_OP_CTS, rx->msg_id, rx->take, rx->bulk_base);
}

static void large_done(struct mbx_ep *ep, struct mbx_rx *rx)
{
	uint64_t cqd = (rx->msg_wflags & MBX_WF_CQDATA) ? FI_REMOTE_CQ_DATA : 0;

	send_ctrl(ep, rx->peer, MBX_OP_FIN, rx->msg_id, rx->take, 0);
	mbx_rx_complete(ep, rx, rx->take, rx->cbuf, rx->msg_tag, rx->msg_data, rx->msg_src,
			cqd | rx->cflags, rx->msg_size - rx->take);
	rx_release(ep, rx);
}

static void read_fallback(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rx *rx)
{
	mbu_dlist_remove(&rx->link);
	rx->rd_pending = 0;
	ep->stats.rdv_copy++;
	mbu_dlist_insert_tail(&rx->link, &p->cts_wait);
	cts_activate(ep, p);
}

/* The connection's read window has room: the oldest matched messages read
 * first (mbx_net_read issues nothing while the window is full). */
static void read_more(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&p->reading, it, tmp) {
		struct mbx_rx *rx = mbu_container_of(it, struct mbx_rx, link);

		if (rx->rd_failed || rx->rd_next == rx->take)
			continue;
		if (mbx_net_read(ep, p, rx)) {
			rx->rd_failed = true;
			if (!rx->rd_pending)
				read_fallback(ep, p, rx);
		}
	}
}

/* One fi_read of a large message from another host has finished: ask for
 * more, or finish. A read that failed (its connection went away:
 * -FI_ECONNABORTED when the connection is retired under it) sends the
 * receive back to clear-to-send, from offset 0, over whatever channel
 * comes next. A completion for a receive no longer reading (failed over,
 * or its peer failed) is ignored. */
void mbx_net_read_done(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rx *rx, uint64_t id,
		       int err)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(&p->reading, it)
		if (it == &rx->link && rx->msg_id == id)
			break;
	if (it == &p->reading) {
		read_more(ep, p);
		return;
	}
	if (err == -FI_ECONNABORTED) {
		read_fallback(ep, p, rx);
		return;
	}
	rx->rd_pending--;
	if (err && !rx->rd_failed) {
		MBX_INFO(FI_LOG_EP_DATA, "fi_read from %s failed (%s); asking by clear-to-send\n",
			 p->name, fi_strerror(err));
		rx->rd_failed = true;
	}
	if (rx->rd_failed) {
		if (!rx->rd_pending)
			read_fallback(ep, p, rx);
	} else if (rx->rd_next == rx->take && !rx->rd_pending) {
		mbu_dlist_remove(&rx->link);
		ep->stats.rdv_read++;
		large_done(ep, rx);
	}
	read_more(ep, p);
}

/* A large message has matched `rx`. Returns true when `rx` is finished with
 * (a multi-receive buffer carries on while it has room). */
static bool start_large(struct mbx_ep *ep, struct mbu_posted *q, struct mbx_rx *rx,
			struct mbx_peer *p, fi_addr_t src, uint64_t tag, uint64_t data,
			uint64_t size, uint64_t id, uint8_t wflags,
			const struct mbx_wire_iov *riov, size_t rcnt, uint32_t rkey,
			const void *head, size_t hlen)
{
	bool use_cma, consumed = true;

	if (rx->multi) {
		size_t take;
		char *where;
		uint64_t extra;
		struct mbx_rx *sub = carve(ep, q, rx, size, true, &take, &where, &extra);

		if (!sub) {
			/* Never silently: the receive fails and the sender is
			 * released. */
			MBX_WARN(FI_LOG_EP_DATA, "no receive entry for a large message\n");
			if (ep->rx_cq)
				mbx_cq_write_err(ep->rx_cq, rx->context, rx->flags, FI_ENOMEM, 0,
						 size, tag, data, NULL, src);
			mbx_cntr_inc_err(ep->rx_cntr);
			send_ctrl(ep, p, MBX_OP_FIN, id, 0, 0);
			return false;
		}
		consumed = extra != 0;
		if (consumed)
			rx_release(ep, rx);
		rx = sub;
		rx->cflags = extra;
		rx->cbuf = where;
	} else {
		if (rx->posted) {
			mbu_posted_remove(q, &rx->m);
			rx->posted = false;
		}
		rx->cflags = 0;
		rx->cbuf = rx_buf_ptr(rx);
	}
	rx->peer = p;
	rx->msg_src = src;
	rx->msg_tag = tag;
	rx->msg_data = data;
	rx->msg_id = id;
	rx->msg_wflags = wflags;
	rx->msg_size = size;
	rx->take = size < rx->total ? size : rx->total;
	if (!rx->take) {
		large_done(ep, rx);
		return consumed;
	}
	rx->chosen = false;
	if (p->net && (wflags & MBX_WF_RMA)) {
		size_t h = hlen < rx->take ? hlen : rx->take;

		rx->rd_key = rkey;
		rx->rd_base = rcnt ? riov[0].addr : 0;
		rx->rd_next = h;
		rx->rd_pending = 0;
		rx->rd_failed = false;
		rx->rd_begun = false;
		if (h == rx->take) {
			/* A receive no larger than the head. */
			mbx_copy_to_iov(rx->iov, rx->iov_cnt, 0, head, h);
			large_done(ep, rx);
			return consumed;
		}
		/* The read is asked for first: the head is copied while the
		 * rest crosses. Should it fail, clear-to-send brings the
		 * whole message, head included. */
		if (!mbx_net_read(ep, p, rx)) {
			if (h)
				mbx_copy_to_iov(rx->iov, rx->iov_cnt, 0, head, h);
			mbu_dlist_insert_tail(&rx->link, &p->reading);
			return consumed;
		}
	}
	/* From copy_min up, adaptive takes whichever of CMA and the pipeline
	 * lately moved such messages faster here (mbu_choose.h). */
	rx->chosen = p->cma_ok && mbx_param.large_proto == MBX_LARGE_ADAPTIVE &&
		     size >= mbx_param.copy_min;
	use_cma = p->cma_ok &&
		  (mbx_param.large_proto == MBX_LARGE_CMA ||
		   (mbx_param.large_proto != MBX_LARGE_COPY && size < mbx_param.copy_min) ||
		   (rx->chosen && !mbu_choose_pick(&ep->large_choice, rx->take, 1)));
	if (use_cma) {
		uint64_t t0 = rx->chosen ? mbu_now_ns() : 0;
		int ret = mbx_cma_move(p->addr.pid, false, rx->iov, rx->iov_cnt, riov, rcnt,
				       rx->take);

		if (!ret) {
			if (rx->chosen)
				mbu_choose_record(&ep->large_choice, rx->take, 0,
						  mbu_now_ns() - t0);
			ep->stats.rdv_cma++;
			large_done(ep, rx);
			return consumed;
		}
		p->cma_ok = false;
		MBX_WARN(FI_LOG_EP_DATA, "CMA from pid %d refused (%s); using the two-copy path\n",
			 p->addr.pid, strerror(-ret));
	}
	ep->stats.rdv_copy++;
	mbu_dlist_insert_tail(&rx->link, &p->cts_wait);
	cts_activate(ep, p);
	return consumed;
}

/* Receiver half of the two-copy pipeline. */
static void drain_chunks(struct mbx_ep *ep)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&ep->draining, it, tmp) {
		struct mbx_rx *rx = mbu_container_of(it, struct mbx_rx, link);
		struct mbx_peer *p = rx->peer;
		struct mbx_slot *s = ep->rxslots[p->rxslot].slot;
		struct mbx_seg_hdr *h = ep->seg;
		uint64_t filled = atomic_load_explicit(&s->bulk_filled, memory_order_acquire);
		uint64_t drained = rx->bulk_base + bulk_chunks(h, rx->copied);
		uint8_t *bulk = mbx_slot_bulk(h, s);
		bool moved = false;

		if (filled - rx->bulk_base > h->nchunks + bulk_chunks(h, rx->take)) {
			MBX_WARN(FI_LOG_EP_DATA, "peer %s overran its bulk area\n", p->name);
			ep->stats.bad_frames++;
		}
		while (drained < filled && rx->copied < rx->take) {
			size_t n = rx->take - rx->copied;

			if (n > h->chunk_size)
				n = h->chunk_size;
			copy_iov(rx->iov, rx->iov_cnt, rx->copied,
				 (char *)bulk + (drained % h->nchunks) * h->chunk_size, n, true,
				 rx->take >= mbx_param.nt_min);
			rx->copied += n;
			drained++;
			atomic_store_explicit(&s->bulk_drained, drained, memory_order_release);
			moved = true;
		}
		if (moved && p->rseg)
			doorbell(p->rseg);
		if (rx->copied == rx->take) {
			if (rx->chosen)
				mbu_choose_record(&ep->large_choice, rx->take, 1,
						  mbu_now_ns() - rx->t_drain);
			mbu_dlist_remove(&rx->link);
			p->cts_active = p->cts_next;
			p->cts_next = NULL;
			if (p->cts_active)
				drain_begin(ep, p->cts_active);
			large_done(ep, rx);
			cts_activate(ep, p);
		}
	}
}

static int ux_class(size_t size)
{
	int c = 0;

	while (c < MBX_UX_CLASSES && ((size_t)256 << (2 * c)) < size)
		c++;
	return c;
}

void mbx_ux_free(struct mbx_ep *ep, struct mbx_ux *ux)
{
	if (ux->buf) {
		if (ux->buf == ux->inl)
			;
		else if (ux->cls < MBX_UX_CLASSES)
			mbu_pool_put(&ep->ux_buf[ux->cls], ux->buf);
		else
			free(ux->buf);
		ep->ux_bytes -= ux->kept;
	}
	mbu_pool_put(&ep->ux_pool, ux);
}

/* Drop an unexpected message nobody will receive (FI_DISCARD): a large one
 * still has to release its sender. */
void mbx_ux_discard(struct mbx_ep *ep, struct mbx_ux *ux)
{
	if (ux->op == MBX_OP_RTS)
		send_ctrl(ep, ux->peer, MBX_OP_FIN, ux->id, 0, 0);
	else if (ux->wflags & MBX_WF_ACKREQ)
		send_ctrl(ep, ux->peer, MBX_OP_ACK, ux->id, 0, 0);
	mbx_ux_free(ep, ux);
}

bool mbx_deliver_ux(struct mbx_ep *ep, struct mbx_rx *rx, struct mbx_ux *ux)
{
	struct mbu_posted *q = ux->tagged ? &ep->tposted : &ep->mposted;
	bool consumed;

	if (ux->op == MBX_OP_EAGER) {
		if (ux->wflags & MBX_WF_ACKREQ)
			send_ctrl(ep, ux->peer, MBX_OP_ACK, ux->id, 0, 0);
		consumed = deliver_eager(ep, q, rx, ux->buf, ux->size, ux->tag, ux->data,
					 ux->wflags, ux->src);
	} else {
		consumed = start_large(ep, q, rx, ux->peer, ux->src, ux->tag, ux->data, ux->size,
				       ux->id, ux->wflags, ux->riov, ux->riov_cnt, ux->rkey,
				       ux->buf, ux->kept);
	}
	mbx_ux_free(ep, ux);
	return consumed;
}

static inline __attribute__((always_inline)) bool post_or_fail(struct mbx_ep *ep,
								struct mbu_posted *pq,
								struct mbx_rx *rx)
{
	if (__builtin_expect(!mbu_posted_insert(pq, &rx->m, rx->m.src, rx->m.tag, rx->m.ignore), 1)) {
		rx->posted = true;
		return true;
	}
	MBX_WARN(FI_LOG_EP_DATA, "out of memory posting a receive\n");
	fail_rx(ep, rx, FI_ENOMEM);
	return false;
}

/* Receives posted while messages wait: take the oldest that matches. A
 * multi-receive buffer is posted first (carve() retires it from the posted
 * queue when it is used up) and keeps taking messages while it has room. */
void mbx_proto_recv_posted(struct mbx_ep *ep, struct mbx_rx *rx)
{
	struct mbu_unexp *uq = (rx->flags & FI_TAGGED) ? &ep->tunexp : &ep->munexp;
	struct mbu_posted *pq = (rx->flags & FI_TAGGED) ? &ep->tposted : &ep->mposted;
	struct mbu_mentry *m;

	if (rx->multi && !post_or_fail(ep, pq, rx))
		return;
	/* Receives posted ahead of their messages find nothing waiting: one
	 * test instead of a rekey check and a call into the matcher. */
	if (__builtin_expect(uq->count != 0, 0)) {
		mbx_ux_refresh(ep);
		while ((m = mbu_unexp_match(uq, rx->m.src, rx->m.tag, rx->m.ignore))) {
			mbu_unexp_remove(uq, m);
			if (mbx_deliver_ux(ep, rx, mbu_container_of(m, struct mbx_ux, m)))
				return;
		}
	}
	if (rx->posted)
		return;
	if (__builtin_expect(ep->peers_lost != 0, 0) && rx->m.src != MBU_SRC_ANY &&
	    src_lost(ep, rx->m.src)) {
		fail_rx(ep, rx, FI_EHOSTUNREACH);
		return;
	}
	post_or_fail(ep, pq, rx);
}

/* trecv_take (fi_ext_matchbox.h): the oldest waiting message this receive
 * matches, if it is whole here and fits, copied out with no receive entry,
 * queue insertion or CQ entry. Anything else (nothing matches, the match is
 * a rendezvous, too long, or carries a refused tag bit) is left where it
 * is, so that the ordinary receive the caller posts next finds the same
 * message first and MPI's order holds. */
int mbx_proto_take(struct mbx_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		   uint64_t ignore, uint64_t refuse, struct fi_cq_tagged_entry *done)
{
	struct mbu_mentry *m;
	struct mbx_ux *ux;

	mbx_ux_refresh(ep);
	m = mbu_unexp_match(&ep->tunexp, src, tag & ~ignore, ignore);
	if (!m)
		return 0;
	ux = mbu_container_of(m, struct mbx_ux, m);
	if (ux->op != MBX_OP_EAGER || ux->size > len || (ux->tag & refuse))
		return 0;
	mbu_unexp_remove(&ep->tunexp, m);
	if (ux->wflags & MBX_WF_ACKREQ)
		send_ctrl(ep, ux->peer, MBX_OP_ACK, ux->id, 0, 0);
	if (ux->size)
		memcpy(buf, ux->buf, ux->size);
	*done = (struct fi_cq_tagged_entry){
		.flags = FI_RECV | FI_TAGGED | ((ux->wflags & MBX_WF_CQDATA) ? FI_REMOTE_CQ_DATA : 0),
		.len = ux->size, .buf = buf, .data = ux->data, .tag = ux->tag};
	mbx_cntr_inc(ep->rx_cntr);
	mbx_ux_free(ep, ux);
	return 1;
}

/* ---- RMA, target side: checked against our registrations first ---- */

static void rma_event(struct mbx_ep *ep, struct mbx_mr *mr, uint64_t kind)
{
	mbx_cntr_inc(kind == FI_REMOTE_WRITE ? ep->rwr_cntr : ep->rrd_cntr);
	if (mr && mr->cntr && (mr->cntr_flags & kind))
		mbx_cntr_inc(mr->cntr);
}

/* The initiator may reach this region through the net wire's core from
 * now on: tell it so, ahead of the answer it waits for. A region that
 * cannot be reached that way (counted, in pieces, a net without RMA) is
 * simply not offered, and the initiator keeps using frames. */
static void offer_key(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_mr *mr)
{
	uint64_t ckey, base;

	if (!mr || mbx_net_key_offer(ep, p, mr, &ckey))
		return;
	base = (ep->dom->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)mr->iov[0].iov_base :
						      mr->offset;
	send_ctrl_tag(ep, p, MBX_OP_KEY, mr->mr.key, mr->len, base,
		      ckey | ((mr->access & FI_REMOTE_READ) ? MBX_KEY_READ : 0) |
		      ((mr->access & FI_REMOTE_WRITE) ? MBX_KEY_WRITE : 0));
}

static void handle_write(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	const struct mbx_wire_rma *r = (const struct mbx_wire_rma *)(w + 1);
	struct iovec iov[MBX_IOV_LIMIT];
	struct mbx_mr *mr = NULL;
	size_t cnt;
	int err;

	if (p->wr_id != w->id) {
		p->wr_id = w->id;	/* the first piece of a new write */
		p->wr_err = 0;
	}
	err = mbx_mr_check(ep->dom, r->key, r->addr, w->size, FI_REMOTE_WRITE, iov, &cnt, &mr);
	if (err) {
		if (!p->wr_err)
			MBX_INFO(FI_LOG_EP_DATA, "RMA write from %s refused: %s\n", p->name,
				 fi_strerror(err));
		p->wr_err = p->wr_err ? p->wr_err : err;
	} else if (!p->wr_err && w->size) {
		copy_iov(iov, cnt, 0, (char *)(r + 1), w->size, true, false);
	}
	if (!(w->flags & MBX_WF_LAST))
		return;
	if (!p->wr_err && (w->flags & MBX_WF_WANTKEY))
		offer_key(ep, p, mr);
	send_ctrl_tag(ep, p, MBX_OP_WACK, w->id, 0, 0, (uint64_t)p->wr_err);
	if (!p->wr_err) {
		rma_event(ep, mr, FI_REMOTE_WRITE);
		if ((w->flags & MBX_WF_CQDATA) && ep->rx_cq)
			mbx_cq_write(ep->rx_cq, NULL, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
				     w->tag, NULL, w->data, 0, peer_fiaddr(ep, p));
	}
	p->wr_id = 0;
}

/* 1: taken; 0: no room to answer now, leave it in the ring. */
static int handle_read(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	const struct mbx_wire_rma *r = (const struct mbx_wire_rma *)(w + 1);
	struct mbx_mr *mr = NULL;
	struct mbx_tx *tx;
	int err;

	if (mbx_peer_connect(ep, p))
		return 1;	/* the reader is gone */
	tx = tx_alloc(ep, true);
	if (!tx)
		return 0;
	tx->peer = p;
	tx->context = NULL;
	tx->flags = 0;
	tx->opflags = 0;
	tx->op = MBX_OP_RDATA;
	tx->tag = w->data;	/* the segment's offset in the reader's read */
	tx->data = w->id;	/* the reader's read */
	tx->size = w->size;
	tx->streamed = 0;
	tx->wflags = 0;
	err = mbx_mr_check(ep->dom, r->key, r->addr, w->size, FI_REMOTE_READ, tx->iov,
			   &tx->iov_cnt, &mr);
	if (err) {
		MBX_INFO(FI_LOG_EP_DATA, "RMA read from %s refused: %s\n", p->name,
			 fi_strerror(err));
		tx_free(ep, tx);
		send_ctrl_tag(ep, p, MBX_OP_RERR, w->id, w->size, w->data, (uint64_t)err);
		return 1;
	}
	if (w->flags & MBX_WF_LAST)
		rma_event(ep, mr, FI_REMOTE_READ);
	if ((w->flags & (MBX_WF_LAST | MBX_WF_WANTKEY)) == (MBX_WF_LAST | MBX_WF_WANTKEY))
		offer_key(ep, p, mr);
	if (mbu_dlist_empty(&p->txq) && !tx_write(ep, tx))
		return 1;
	tx->state = MBX_TX_QUEUED;
	mbu_dlist_insert_tail(&tx->link, &p->txq);
	mark_pending(ep, p);
	return 1;
}

/* n elements of `es` bytes at the target's iovecs: those inside one iovec
 * in place, one that straddles two (a region registered in pieces)
 * through a copy, still under the same lock. */
static void atomic_apply_iov(int op, int dt, size_t es, const struct iovec *iov, size_t cnt,
			     const char *src, const char *cmp, char *old, size_t n)
{
	size_t i = 0, k = 0, at = 0;

	while (i < n && k < cnt) {
		size_t left = iov[k].iov_len - at, whole = left / es;
		char *base = (char *)iov[k].iov_base + at;

		if (whole) {
			if (whole > n - i)
				whole = n - i;
			mbu_atomic_apply(op, dt, base, src ? src + i * es : NULL,
					 cmp ? cmp + i * es : NULL, old ? old + i * es : NULL, whole);
			i += whole;
			at += whole * es;
		} else if (left) {
			char tmp[64];	/* the largest element is 32 bytes */

			mbx_copy_from_iov(tmp, iov + k, cnt - k, at, es);
			mbu_atomic_apply(op, dt, tmp, src ? src + i * es : NULL,
					 cmp ? cmp + i * es : NULL, old ? old + i * es : NULL, 1);
			mbx_copy_to_iov(iov + k, cnt - k, at, tmp, es);
			i++;
			at += es;
		}
		while (k < cnt && at >= iov[k].iov_len) {
			at -= iov[k].iov_len;
			k++;
		}
	}
}

/* An atomic piece: checked against our registrations, applied here (the
 * one place every atomic on this memory is applied, under the domain
 * lock), answered with the old values. 0: no room to answer now, leave it
 * in the ring (nothing was applied). */
static int handle_atomic(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	const struct mbx_wire_atomic *a = (const struct mbx_wire_atomic *)(w + 1);
	int kind = MBX_ATOMIC_KIND(w->tag), aop = MBX_ATOMIC_OP(w->tag);
	int dt = MBX_ATOMIC_DT(w->tag);
	uint64_t access = aop == FI_ATOMIC_READ ? FI_REMOTE_READ :
			  kind == MBU_ATOMIC_PLAIN ? FI_REMOTE_WRITE :
			  FI_REMOTE_READ | FI_REMOTE_WRITE;
	struct iovec iov[MBX_IOV_LIMIT];
	struct mbx_mr *mr = NULL;
	struct mbx_wire *r;
	const char *src = (const char *)(a + 1);
	size_t cnt, back;
	int err;

	if (mbx_peer_connect(ep, p))
		return 1;	/* the initiator is gone */
	err = mbx_mr_check(ep->dom, a->key, a->addr, w->size, access, iov, &cnt, &mr);
	back = !err && kind != MBU_ATOMIC_PLAIN ? w->size : 0;
	r = (struct mbx_wire *)mbu_ring_reserve(&p->prod, (uint32_t)(sizeof(*r) + back));
	if (!r)
		return 0;
	fill_wire(r, MBX_OP_ARESP, 0, (uint64_t)err, w->data, w->size, w->id);
	if (err) {
		MBX_INFO(FI_LOG_EP_DATA, "atomic from %s refused: %s\n", p->name, fi_strerror(err));
	} else {
		atomic_apply_iov(aop, dt, mbu_atomic_size(dt), iov, cnt,
				 aop == FI_ATOMIC_READ ? NULL : src,
				 kind == MBU_ATOMIC_COMPARE ? src + w->size : NULL,
				 back ? (char *)(r + 1) : NULL, w->size / mbu_atomic_size(dt));
	}
	mbu_ring_commit(&p->prod, &r->f);
	kick(ep, p);
	if (!err && (w->flags & MBX_WF_LAST)) {
		rma_event(ep, mr, aop == FI_ATOMIC_READ ? FI_REMOTE_READ : FI_REMOTE_WRITE);
		if ((w->flags & MBX_WF_CQDATA) && ep->rx_cq)
			mbx_cq_write(ep->rx_cq, NULL, FI_ATOMIC | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
				     0, NULL, a->cqdata, 0, peer_fiaddr(ep, p));
	}
	return 1;
}

static void handle_reply(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	struct mbx_tx *tx = tx_lookup(ep, p, w->id);

	if (!tx) {
		MBX_WARN(FI_LOG_EP_DATA, "reply op %u from %s names no send of ours\n", w->op,
			 p->name);
		ep->stats.bad_frames++;
		return;
	}
	switch (w->op) {
	case MBX_OP_CTS:
		if (tx->op != MBX_OP_RTS || tx->state != MBX_TX_WAIT ||
		    w->data != p->bulk_sched || w->size > tx->size) {
			MBX_WARN(FI_LOG_EP_DATA, "unexpected CTS from %s\n", p->name);
			ep->stats.bad_frames++;
			return;
		}
		tx->want = w->size;
		tx->streamed = 0;
		tx->state = MBX_TX_STREAM;
		/* The ring is filled in the order of the CTSs (the streaming
		 * list's), so the next one starts where this one will end. */
		if (!p->net) {
			tx->bulk_base = p->bulk_sched;
			p->bulk_sched += bulk_chunks(p->rseg, w->size);
		}
		mbu_dlist_insert_tail(&tx->link, &ep->streaming);
		stream_chunks(ep);
		break;
	case MBX_OP_FIN:
	case MBX_OP_ACK:
		if (tx->state != MBX_TX_WAIT) {
			MBX_WARN(FI_LOG_EP_DATA, "early completion from %s\n", p->name);
			ep->stats.bad_frames++;
			return;
		}
		tx_complete(ep, tx, 0);
		break;
	}
}

/* A piece of a large message from a net peer, for the receive it is
 * clear-to-send for: checked against that receive before a byte is placed. */
static void handle_data(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	struct mbx_rx *rx = p->cts_active;

	if (!p->net || !rx || rx->msg_id != w->id || w->data != rx->copied ||
	    w->size > rx->take - rx->copied) {
		MBX_WARN(FI_LOG_EP_DATA, "unexpected data frame from %s\n", p->name);
		ep->stats.bad_frames++;
		return;
	}
	mbx_copy_to_iov(rx->iov, rx->iov_cnt, rx->copied, w + 1, w->size);
	rx->copied += w->size;
	if (rx->copied == rx->take) {
		p->cts_active = NULL;
		large_done(ep, rx);
		cts_activate(ep, p);
	}
}

/* ---- RMA, initiator side ---- */

static void handle_rma_reply(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	struct mbx_tx *tx = tx_lookup(ep, p, w->id);
	bool ok;

	if (w->op == MBX_OP_ARESP) {
		size_t back = w->f.len - sizeof(*w);

		/* old values come back exactly for an applied fetching piece */
		ok = tx && tx->op == MBX_OP_ATOMIC && w->data <= tx->streamed &&
		     w->size <= tx->streamed - w->data && w->size <= tx->size - tx->got &&
		     back == (!w->tag && tx->akind != MBU_ATOMIC_PLAIN ? w->size : 0);
	} else if (w->op == MBX_OP_WACK)
		ok = tx && tx->op == MBX_OP_WRITE && tx->state == MBX_TX_WAIT;
	else
		ok = tx && tx->op == MBX_OP_READ && w->data <= tx->streamed &&
		     w->size <= tx->streamed - w->data && w->size <= tx->size - tx->got;
	if (!ok) {
		MBX_WARN(FI_LOG_EP_DATA, "RMA reply op %u from %s names no operation of ours\n",
			 w->op, p->name);
		ep->stats.bad_frames++;
		return;
	}
	if (w->op == MBX_OP_WACK) {
		tx_complete(ep, tx, w->tag > 0 && w->tag < 4096 ? (int)w->tag : w->tag ? FI_EIO : 0);
		return;
	}
	if (w->op == MBX_OP_RDATA)
		mbx_copy_to_iov(tx->iov, tx->iov_cnt, w->data, w + 1, w->size);
	else if (w->op == MBX_OP_ARESP && !w->tag) {
		if (tx->akind != MBU_ATOMIC_PLAIN)
			mbx_copy_to_iov(tx->res_iov, tx->res_cnt, w->data, w + 1, w->size);
	} else if (!tx->rerr)
		tx->rerr = w->tag > 0 && w->tag < 4096 ? (int)w->tag : FI_EIO;
	tx->got += w->size;
	if (tx->got == tx->size)
		tx_complete(ep, tx, tx->rerr);
}

/* A copy of `len` bytes for an unexpected message to keep, inline where
 * allowed and they fit, else from the buffer pool of their size class. */
static inline bool ux_keep(struct mbx_ep *ep, struct mbx_ux *ux, const void *from, size_t len,
			   bool inl_ok)
{
	if (inl_ok && len <= sizeof(ux->inl)) {
		ux->buf = ux->inl;
	} else {
		ux->cls = ux_class(len);
		ux->buf = ux->cls < MBX_UX_CLASSES ? mbu_pool_get(&ep->ux_buf[ux->cls]) : malloc(len);
	}
	if (!ux->buf)
		return false;
	mbu_copy(ux->buf, from, len);
	ux->kept = len;
	ep->ux_bytes += len;
	return true;
}

/* A message no posted receive wants yet: keep it (its payload copied, or
 * its large-message announcement, which `w` holds) for the receive that
 * will. 1: kept; 0: leave the frame in the ring for now (unexpected buffer
 * full). Inlined in both callers: the call itself cost a tenth of the
 * unexpected path. */
static inline __attribute__((always_inline)) int
queue_ux(struct mbx_ep *ep, struct mbx_peer *p, uint8_t op, uint8_t wflags, uint64_t tag,
	 uint64_t data, uint64_t size, uint64_t id, const void *payload,
	 const struct mbx_wire *w, bool tagged, fi_addr_t src)
{
	struct mbu_unexp *uq = tagged ? &ep->tunexp : &ep->munexp;
	struct mbx_ux *ux;

	if (op == MBX_OP_EAGER && size && ep->ux_bytes + size > mbx_param.unexp_max)
		return 0;
	ux = mbu_pool_get(&ep->ux_pool);
	if (!ux)
		return 0;
	ux->peer = p;
	ux->src = src;
	ux->op = op;
	ux->wflags = wflags;
	ux->tag = tag;
	ux->data = data;
	ux->size = size;
	ux->id = id;
	ux->tagged = tagged;
	ux->buf = NULL;
	ux->kept = 0;
	ux->riov_cnt = 0;
	if (op == MBX_OP_EAGER && size) {
		if (!ux_keep(ep, ux, payload, size, true)) {
			mbu_pool_put(&ep->ux_pool, ux);
			return 0;
		}
	} else if (op == MBX_OP_RTS) {
		uint32_t h = mbx_rts_head(w);

		memcpy(ux->riov, w + 1, w->iov_cnt * sizeof(struct mbx_wire_iov));
		ux->riov_cnt = w->iov_cnt;
		ux->rkey = w->rsvd2;
		/* The head is kept where there is room for it (not inline: the
		 * iovs are there); where there is not, the receiver reads the
		 * whole message, as without one. */
		if (h && ep->ux_bytes + h <= mbx_param.unexp_max)
			(void)ux_keep(ep, ux, (const struct mbx_wire_iov *)(w + 1) + w->iov_cnt, h,
				      false);
	}
	if (mbu_unexp_insert(uq, &ux->m, src, tag)) {
		mbx_ux_free(ep, ux);
		return 0;
	}
	ep->stats.unexpected++;
	return 1;
}

/* An RMA request from a peer that could not be served when it arrived. */
struct mbx_rma_wait {
	struct mbu_dlist link;	/* p->rma_wait */
	uint64_t wire[];	/* the frame, whole (struct mbx_wire and what follows) */
};

/* 1: served; 0: no room to answer now (nothing was done). */
static int rma_serve(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	switch (w->op) {
	case MBX_OP_WRITE:
		handle_write(ep, p, w);
		return 1;
	case MBX_OP_READ:
		return handle_read(ep, p, w);
	default:
		return handle_atomic(ep, p, w);
	}
}

/* A peer's RMA requests are served in the order they came, which is what a
 * fenced one relies on. One that cannot be answered now (a read's data
 * needs a transmit entry, and all of ours may be held by our own reads of
 * that same peer, whose data waits behind it) is copied aside with every
 * request after it, and the ring moves on: left in the ring it held up the
 * replies that would free our entries, and two hosts each reading 600
 * messages of the other's through the host engine waited for ever. 0 only
 * if there is no memory to copy it (it stays in the ring, as before). */
static int rma_target(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w)
{
	struct mbx_rma_wait *d;

	if (mbu_dlist_empty(&p->rma_wait) && rma_serve(ep, p, w))
		return 1;
	d = malloc(sizeof(*d) + w->f.len);
	if (!d)
		return 0;
	memcpy(d->wire, w, w->f.len);
	mbu_dlist_insert_tail(&d->link, &p->rma_wait);
	mark_pending(ep, p);
	return 1;
}

static void rma_wait_serve(struct mbx_ep *ep, struct mbx_peer *p)
{
	while (!mbu_dlist_empty(&p->rma_wait)) {
		struct mbx_rma_wait *d = mbu_container_of(p->rma_wait.next, struct mbx_rma_wait,
							  link);

		if (!rma_serve(ep, p, (const struct mbx_wire *)d->wire))
			return;
		mbu_dlist_remove(&d->link);
		free(d);
	}
}

static void rma_wait_drop(struct mbx_peer *p)
{
	struct mbu_dlist *it;

	while ((it = mbu_dlist_pop(&p->rma_wait)))
		free(mbu_container_of(it, struct mbx_rma_wait, link));
}

/* 1: consumed; 0: leave it in the ring for now (unexpected buffer full). */
static int handle_frame(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *wire)
{
	const struct mbx_wire *w = wire;
	const void *payload = wire + 1;
	struct mbu_posted *pq;
	struct mbu_mentry *m;
	uint64_t tag;
	fi_addr_t src;
	bool tagged;

	/* Small messages first, and without building a full header unless
	 * they have to wait: they are most of the traffic. */
	if (wire->op == MBX_OP_SMALL) {
		const struct mbx_wire_small *sw = (const struct mbx_wire_small *)wire;

		tagged = sw->flags & MBX_WF_TAGGED;
		pq = tagged ? &ep->tposted : &ep->mposted;
		tag = tagged ? sw->tag : 0;
		mbx_ux_refresh(ep);
		src = peer_fiaddr(ep, p);
		m = mbu_posted_match(pq, src, tag);
		if (m) {
			deliver_eager(ep, pq, mbu_container_of(m, struct mbx_rx, m), sw + 1,
				      sw->f.len - sizeof(*sw), tag, sw->data, sw->flags, src);
			return 1;
		}
		return queue_ux(ep, p, MBX_OP_EAGER, sw->flags, tag, sw->data,
				sw->f.len - sizeof(*sw), 0, sw + 1, NULL, tagged, src);
	}
	if (w->op == MBX_OP_DATA) {
		handle_data(ep, p, w);
		return 1;
	}
	if (w->op >= MBX_OP_WRITE) {
		switch (w->op) {
		case MBX_OP_WRITE:
		case MBX_OP_READ:
		case MBX_OP_ATOMIC:
			return rma_target(ep, p, w);
		case MBX_OP_RAILS:
			if (p->net) {
				mbx_net_rails_learn(ep, p, w + 1, (unsigned)w->size);
			} else {
				MBX_WARN(FI_LOG_EP_DATA, "rails from %s, a peer on this node\n",
					 p->name);
				ep->stats.bad_frames++;
			}
			return 1;
		case MBX_OP_KEY:
			if (p->net) {
				mbx_net_key(ep, p, w);
			} else {
				MBX_WARN(FI_LOG_EP_DATA, "key offer from %s, a peer on this node\n",
					 p->name);
				ep->stats.bad_frames++;
			}
			return 1;
		default:
			handle_rma_reply(ep, p, w);
			return 1;
		}
	}
	if (w->op >= MBX_OP_CTS) {
		handle_reply(ep, p, w);
		return 1;
	}
	tagged = w->flags & MBX_WF_TAGGED;
	pq = tagged ? &ep->tposted : &ep->mposted;
	tag = tagged ? w->tag : 0;
	mbx_ux_refresh(ep);
	src = peer_fiaddr(ep, p);
	m = mbu_posted_match(pq, src, tag);
	if (m) {
		struct mbx_rx *rx = mbu_container_of(m, struct mbx_rx, m);

		if (w->op == MBX_OP_EAGER) {
			if (w->flags & MBX_WF_ACKREQ)
				send_ctrl(ep, p, MBX_OP_ACK, w->id, 0, 0);
			deliver_eager(ep, pq, rx, payload, w->size, tag, w->data, w->flags, src);
		} else {
			start_large(ep, pq, rx, p, src, tag, w->data, w->size, w->id, w->flags,
				    (const struct mbx_wire_iov *)(w + 1), w->iov_cnt, w->rsvd2,
				    (const struct mbx_wire_iov *)(w + 1) + w->iov_cnt,
				    mbx_rts_head(w));
		}
		return 1;
	}
	return queue_ux(ep, p, w->op, w->flags, tag, w->data, w->size, w->id, payload, w, tagged,
			src);
}

static bool sender_ok(struct mbx_ep *ep, struct mbx_slot *s, struct mbx_addr *a)
{
	char name[MBX_NAME_MAX];

	memcpy(name, s->sender_name, sizeof(name));
	name[MBX_NAME_MAX - 1] = '\0';
	if (mbx_parse_addr(name, sizeof(name), a))
		return false;
	return a->job == ep->addr.job && a->uid == ep->addr.uid &&
	       a->host == ep->addr.host && a->pid == s->sender_pid;
}

/* Bind slots that senders have claimed since we last looked; a slot freed
 * and claimed again anywhere below the high-water mark is found too. */
static __attribute__((noinline)) void discover_slots(struct mbx_ep *ep)
{
	uint32_t claims = atomic_load_explicit(&ep->seg->claims, memory_order_acquire);
	uint32_t used = atomic_load_explicit(&ep->seg->nslots_used, memory_order_acquire);
	bool unfinished = false;
	uint32_t i;

	if (used > ep->seg->nslots)
		used = ep->seg->nslots;
	for (i = 0; i < used; i++) {
		struct mbx_rxslot *r = &ep->rxslots[i];
		struct mbx_slot *s = mbx_seg_slot(ep->seg, i);
		struct mbx_addr a;
		uint32_t st;

		if (r->slot)
			continue;
		st = atomic_load_explicit(&s->state, memory_order_acquire);
		if (st == MBX_SLOT_CLAIMED)
			unfinished = true;	/* its owner is filling it in */
		/* A sender may write and close before we ever look: its slot is
		 * CLOSED with frames still in it, which are delivered, then the
		 * slot is retired. */
		if (st != MBX_SLOT_READY && st != MBX_SLOT_CLOSED)
			continue;
		r->slot = s;
		mbu_ring_cons_init(&r->cons, &s->ring, mbx_slot_ring(s), ep->seg->ring_size);
		if (s->prefaulted)
			mbu_shm_prefault(mbx_slot_ring(s), ep->seg->ring_size, 0);
		if (!sender_ok(ep, s, &a) || !(r->peer = mbx_peer_get(ep, &a))) {
			MBX_WARN(FI_LOG_EP_DATA, "ignoring slot %u: sender not of this job\n", i);
			ep->stats.bad_frames++;
			r->corrupt = true;
		} else {
			r->peer->rxslot = (int)i;
		}
		if (i + 1 > ep->nrx)
			ep->nrx = i + 1;
	}
	if (!unfinished)
		ep->claims_seen = claims;
}

static void drain_slot(struct mbx_ep *ep, struct mbx_rxslot *r)
{
	int budget = DRAIN_BUDGET;
	struct mbu_frame *f;
	int st;

	while (budget-- > 0 && (st = mbu_ring_peek(&r->cons, &f)) != MBU_RING_EMPTY) {
		const struct mbx_wire *w;

		if (st == MBU_RING_CORRUPT) {
			MBX_WARN(FI_LOG_EP_DATA, "ring from %s is corrupt; ignoring that peer\n",
				 r->peer->name);
			ep->stats.bad_frames++;
			r->corrupt = true;
			return;
		}
		if (!mbx_frame_ok(f, &w)) {
			ep->stats.bad_frames++;
			MBX_WARN(FI_LOG_EP_DATA, "dropped a malformed frame from %s\n",
				 r->peer->name);
			mbu_ring_consume(&r->cons, f);
			continue;
		}
		if (!handle_frame(ep, r->peer, w))
			return;
		mbu_ring_consume(&r->cons, f);
	}
}

int mbx_deliver_frame(struct mbx_ep *ep, struct mbx_peer *p, const struct mbu_frame *f)
{
	const struct mbx_wire *w;

	if (!mbx_frame_ok(f, &w)) {
		MBX_WARN(FI_LOG_EP_DATA, "dropped a malformed frame from %s\n", p->name);
		ep->stats.bad_frames++;
		return -1;
	}
	return handle_frame(ep, p, w);
}

static void fail_rx_side(struct mbx_ep *ep, struct mbx_peer *p);

static void fail_peer(struct mbx_ep *ep, struct mbx_peer *p)
{
	size_t i;

	MBX_WARN(FI_LOG_EP_DATA, "peer %s (pid %d) is gone; failing its operations\n",
		 p->name, p->addr.pid);
	p->state = MBX_PEER_FAILED;
	p->err = -FI_EHOSTUNREACH;
	for (i = 0; i < ep->tx_cap; i++) {
		struct mbx_tx *tx = &ep->txs[i];

		if (tx->state == MBX_TX_FREE || tx->peer != p)
			continue;
		if (tx->state == MBX_TX_QUEUED || tx->state == MBX_TX_STREAM)
			mbu_dlist_remove(&tx->link);
		tx_complete(ep, tx, FI_EHOSTUNREACH);
	}
	fail_rx_side(ep, p);
	while (!mbu_dlist_empty(&p->ctrlq))
		mbu_pool_put(&ep->ctrl_pool, mbu_container_of(mbu_dlist_pop(&p->ctrlq),
							      struct mbx_ctrl, link));
	rma_wait_drop(p);
	if (!mbu_dlist_empty(&p->pend_link))
		mbu_dlist_remove(&p->pend_link);
}

static void fail_large_rx(struct mbx_ep *ep, struct mbx_rx *rx, size_t copied)
{
	if (ep->rx_cq)
		mbx_cq_write_err(ep->rx_cq, rx->context, rx->flags, FI_EIO, copied, 0,
				 rx->msg_tag, 0, NULL, rx->msg_src);
	mbx_cntr_inc_err(ep->rx_cntr);
	rx_release(ep, rx);
}

/* Large receives from a sender that is gone can never finish: fail them,
 * and drop its announced-but-unmatched large messages, whose data lived in
 * its memory. */
static void fail_rx_side(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbu_unexp *qs[2] = { &ep->tunexp, &ep->munexp };
	struct mbu_dlist *it, *tmp;
	int q;

	for (q = 0; q < 2; q++) {
		mbu_dlist_foreach_safe(&qs[q]->all, it, tmp) {
			struct mbx_ux *ux = mbu_container_of(mbu_unexp_entry_of_all(it),
							     struct mbx_ux, m);

			if (ux->peer != p || ux->op != MBX_OP_RTS)
				continue;
			MBX_WARN(FI_LOG_EP_DATA, "dropping a %llu-byte message from %s, which "
				 "left before it was received\n", (unsigned long long)ux->size,
				 p->name);
			mbu_unexp_remove(qs[q], &ux->m);
			mbx_ux_free(ep, ux);
		}
	}
	if (p->cts_active) {
		mbu_dlist_remove(&p->cts_active->link);
		fail_large_rx(ep, p->cts_active, p->cts_active->copied);
		p->cts_active = NULL;
	}
	if (p->cts_next) {
		fail_large_rx(ep, p->cts_next, 0);
		p->cts_next = NULL;
	}
	while (!mbu_dlist_empty(&p->cts_wait))
		fail_large_rx(ep, mbu_container_of(mbu_dlist_pop(&p->cts_wait), struct mbx_rx,
						   link), 0);
	while (!mbu_dlist_empty(&p->reading))
		fail_large_rx(ep, mbu_container_of(mbu_dlist_pop(&p->reading), struct mbx_rx,
						   link), 0);
}

/* A dead peer must turn into error completions, not a hang, and its slot
 * in our segment must become free again: now and then, look whether each
 * peer's process still exists and whether its endpoint is still open. */
static void check_liveness(struct mbx_ep *ep)
{
	uint64_t now = mbu_now_ns();
	struct mbu_dlist *it;

	if (now - ep->last_liveness_ns < 100000000ULL)
		return;
	ep->last_liveness_ns = now;
	mbu_dlist_foreach(&ep->peer_list, it) {
		struct mbx_peer *p = mbu_container_of(it, struct mbx_peer, all_link);
		bool dead, closed;

		/* A pid on another host means nothing here; the net wire
		 * has its own liveness. */
		if ((p->state == MBX_PEER_FAILED && p->rxslot < 0) || p->net)
			continue;
		dead = kill(p->addr.pid, 0) && errno == ESRCH;
		closed = p->rseg && atomic_load_explicit(&p->rseg->closed, memory_order_acquire);
		if ((dead || closed) && p->state != MBX_PEER_FAILED)
			fail_peer(ep, p);
		if (dead && p->rxslot >= 0)
			ep->rxslots[p->rxslot].closing = true;
		else if (dead)
			mbx_fail_peer(ep, p);	/* nothing of its left to drain */
	}
}

/* Free a slot whose sender has closed (or died) once its last frames are
 * handled, so that another sender can claim it. */
static void retire_slot(struct mbx_ep *ep, struct mbx_rxslot *r)
{
	struct mbx_slot *s = r->slot;
	struct mbu_frame *f;

	if (!r->corrupt) {
		drain_slot(ep, r);
		if (mbu_ring_peek(&r->cons, &f) != MBU_RING_EMPTY)
			return;	/* frames held back by a full unexpected buffer */
	}
	if (r->peer) {
		fail_rx_side(ep, r->peer);
		/* A sender that died sends nothing more, and its last frames
		 * are now matched: a receive still aimed at it would wait for
		 * ever (a rank whose peer crashed would spin on). */
		if (r->closing)
			mbx_fail_peer(ep, r->peer);
		r->peer->rxslot = -1;
	}
	atomic_store_explicit(&s->bulk_drained,
			      atomic_load_explicit(&s->bulk_filled, memory_order_acquire),
			      memory_order_relaxed);
	memset(r, 0, sizeof(*r));
	atomic_store_explicit(&s->state, MBX_SLOT_FREE, memory_order_release);
}

/* What a progress call has to do besides reading the rings: queued sends,
 * pipelined transfers, the net wire, and every 16th call the housekeeping.
 * Out of line so that the call that finds nothing (a rank polling for its
 * neighbour's message) runs in a small frame: that call's length is part of
 * every message's latency. */
static __attribute__((noinline)) void ep_progress_more(struct mbx_ep *ep, uint32_t ticks)
{
	uint32_t i;

	if (!(ticks & 15)) {
		/* A closed sender's slot is freed for another within 16 calls,
		 * which saves a look at a shared line on every call. */
		for (i = 0; i < ep->nrx; i++) {
			struct mbx_rxslot *r = &ep->rxslots[i];

			if (r->slot && !r->closing &&
			    atomic_load_explicit(&r->slot->state, memory_order_acquire) ==
			    MBX_SLOT_CLOSED)
				retire_slot(ep, r);
		}
	}
	if (!mbu_dlist_empty(&ep->pending_peers))
		flush_pending(ep);
	if (!mbu_dlist_empty(&ep->streaming))
		stream_chunks(ep);
	if (!mbu_dlist_empty(&ep->draining))
		drain_chunks(ep);
	if (ep->net && !(ticks & ep->net_mask))
		mbx_net_progress(ep);
	/* Published for RMA initiators (mbx_rma.c): a target that keeps
	 * progressing serves frames faster than a CMA system call. */
	if (!(ticks & 15))
		atomic_store_explicit(&ep->seg->ticks, ticks, memory_order_relaxed);
	if (!(ticks & 1023)) {
		check_liveness(ep);
		mbx_name_poll(ep);
	}
}

void mbx_ep_progress(struct mbx_ep *ep)
{
	uint32_t i, n, ticks;

	if (__builtin_expect(!ep->enabled, 0))
		return;
	if (__builtin_expect(ep->armed, 0) && !mbx_auto_thread)
		mbx_ep_disarm(ep);	/* the caller is back from its descriptors */
	if (atomic_load_explicit(&ep->seg->claims, memory_order_relaxed) != ep->claims_seen)
		discover_slots(ep);
	n = ep->nrx;
	for (i = 0; i < n; i++) {
		struct mbx_rxslot *r = &ep->rxslots[i];

		if (!r->slot)
			continue;
		if (!r->corrupt && mbu_ring_ready(&r->cons))
			drain_slot(ep, r);
		if (__builtin_expect(r->closing, 0))
			retire_slot(ep, r);
	}
	ticks = ep->progress_ticks++;
	if (!(ticks & 15) || !mbu_dlist_empty(&ep->pending_peers) ||
	    !mbu_dlist_empty(&ep->streaming) || !mbu_dlist_empty(&ep->draining) ||
	    (ep->net && !(ticks & ep->net_mask)))
		ep_progress_more(ep, ticks);
}

void mbx_net_sent(struct mbx_ep *ep, struct mbx_peer *p, uint64_t id)
{
	struct mbx_tx *tx = tx_lookup(ep, p, id);

	/* A send that asked for delivery completion waits for its ACK. */
	if (tx && tx->op == MBX_OP_EAGER && tx->state == MBX_TX_WAIT &&
	    !(tx->wflags & MBX_WF_ACKREQ))
		tx_complete(ep, tx, 0);
}

/* Is a posted receive aimed at `p` (by address, not by wildcard)? The net
 * wire asks this of a silent peer before probing it, so that a rank blocked
 * in a directed receive learns that its sender is unreachable. */
bool mbx_rx_waits_on(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbu_posted *qs[2] = { &ep->tposted, &ep->mposted };
	fi_addr_t fa = peer_fiaddr(ep, p);
	struct mbu_dlist *it;
	int q;

	if (fa == FI_ADDR_NOTAVAIL)
		return false;
	for (q = 0; q < 2; q++)
		mbu_dlist_foreach(&qs[q]->all, it)
			if (mbu_posted_entry_of_all(it)->src == fa)
				return true;
	return false;
}

/* A receive aimed at a peer that the net wire has given up on can never be
 * satisfied: fail it rather than leave its caller blocked for ever. */
static void fail_posted_from(struct mbx_ep *ep, struct mbx_peer *p)
{
	struct mbu_posted *qs[2] = { &ep->tposted, &ep->mposted };
	fi_addr_t fa = peer_fiaddr(ep, p);
	struct mbu_dlist *it, *tmp;
	int q;

	if (fa == FI_ADDR_NOTAVAIL)
		return;
	for (q = 0; q < 2; q++) {
		mbu_dlist_foreach_safe(&qs[q]->all, it, tmp) {
			struct mbx_rx *rx = mbu_container_of(mbu_posted_entry_of_all(it),
							     struct mbx_rx, m);

			if (rx->m.src != fa)
				continue;
			mbu_posted_remove(qs[q], &rx->m);
			fail_rx(ep, rx, FI_EHOSTUNREACH);
		}
	}
}

/* The net wire's verdict on a peer that stopped answering: fail what is
 * under way to it and every receive aimed at it. Fail-stop: a peer that
 * comes back later stays failed for this endpoint. */
void mbx_fail_peer(struct mbx_ep *ep, struct mbx_peer *p)
{
	if (p->state != MBX_PEER_FAILED)
		fail_peer(ep, p);
	if (p->lost)
		return;
	p->lost = true;
	ep->peers_lost++;
	fail_posted_from(ep, p);
}

static bool work_visible(struct mbx_ep *ep)
{
	uint32_t i;

	if (atomic_load(&ep->seg->claims) != ep->claims_seen)
		return true;
	if (!mbu_dlist_empty(&ep->pending_peers) || !mbu_dlist_empty(&ep->streaming))
		return true;
	for (i = 0; i < ep->nrx; i++) {
		struct mbx_rxslot *r = &ep->rxslots[i];
		struct mbu_frame *f;

		if (r->slot && !r->corrupt && mbu_ring_peek(&r->cons, &f) != MBU_RING_EMPTY)
			return true;
	}
	return false;
}

bool mbx_ep_work_visible(struct mbx_ep *ep)
{
	return work_visible(ep);
}

/* Called with the domain lock held; drops it while asleep. */
void mbx_ep_wait(struct mbx_ep *ep, long timeout_ns)
{
	struct mbx_seg_hdr *h = ep->seg;
	uint32_t v;

	if (!h)
		return;
	if (mbx_net_busy(ep)) {
		/* Net completions ring no doorbell: poll, but let others run. */
		mbx_unlock(ep->dom);
		sched_yield();
		mbx_lock(ep->dom);
		return;
	}
	atomic_fetch_add(&h->sleepers, 1);
	v = atomic_load(&h->doorbell);
	atomic_thread_fence(memory_order_seq_cst);
	if (!work_visible(ep)) {
		mbx_unlock(ep->dom);
		mbu_futex_wait(&h->doorbell, v, timeout_ns);
		mbx_lock(ep->dom);
	}
	atomic_fetch_sub(&h->sleepers, 1);
	check_liveness(ep);
	mbx_name_poll(ep);
}

void mbx_ep_fini_wire(struct mbx_ep *ep)
{
	struct mbu_dlist *it;
	size_t i;

	for (i = 0; i < ep->tx_cap; i++) {
		struct mbx_tx *tx = &ep->txs[i];

		if (tx->bounce)
			mbu_pool_put(&ep->bounce_pool, tx->bounce);
		tx->bounce = NULL;
		if (tx->mr || tx->rce)
			mbx_net_rma_release(ep, tx);
	}
	while ((it = mbu_dlist_pop(&ep->peer_list))) {
		struct mbx_peer *p = mbu_container_of(it, struct mbx_peer, all_link);

		while (!mbu_dlist_empty(&p->ctrlq))
			mbu_pool_put(&ep->ctrl_pool, mbu_container_of(mbu_dlist_pop(&p->ctrlq),
								      struct mbx_ctrl, link));
		rma_wait_drop(p);
		while (!mbu_dlist_empty(&p->cts_wait))
			mbu_pool_put(&ep->rx_pool, mbu_container_of(mbu_dlist_pop(&p->cts_wait),
								    struct mbx_rx, link));
		while (!mbu_dlist_empty(&p->reading))
			mbu_pool_put(&ep->rx_pool, mbu_container_of(mbu_dlist_pop(&p->reading),
								    struct mbx_rx, link));
		if (p->cts_active)
			mbu_pool_put(&ep->rx_pool, p->cts_active);
		if (p->cts_next)
			mbu_pool_put(&ep->rx_pool, p->cts_next);
		if (p->tslot) {
			/* After our last frame: the receiver may now reuse it. */
			atomic_store_explicit(&p->tslot->state, MBX_SLOT_CLOSED,
					      memory_order_release);
			doorbell(p->rseg);
		}
		mbx_kt_peer_fini(p);
		if (p->rseg)
			mbu_shm_unmap(p->rseg, p->rseg_size);
		free(p);
	}
}
