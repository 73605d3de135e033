/* The FI_MSG and FI_TAGGED data calls. Each checks its arguments before it
 * touches any state (a rejected call changes nothing), turns the flags into
 * what the protocol needs, and hands over to mbx_progress.c. Untagged and
 * tagged traffic use separate match queues, as libfabric requires. */
#include "mbx.h"

#include <stdlib.h>
#include <string.h>

#define MBX_TX_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE | \
		      FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE | \
		      FI_MORE | FI_TAGGED | FI_MSG)
#define MBX_RX_FLAGS (FI_COMPLETION | FI_MULTI_RECV | FI_MORE | FI_PEEK | FI_CLAIM | \
		      FI_DISCARD | FI_TAGGED | FI_MSG)

static inline struct mbx_ep *ep_of(struct fid_ep *fep)
{
	return mbu_container_of(fep, struct mbx_ep, ep);
}

static inline __attribute__((always_inline)) int iov_check(const struct iovec *iov, size_t cnt,
							     size_t *len)
{
	size_t i, n = 0;

	if (cnt > MBX_IOV_LIMIT || (cnt && !iov))
		return -FI_EINVAL;
	for (i = 0; i < cnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -FI_EINVAL;
		if (iov[i].iov_len > MBX_MAX_MSG_SIZE - n)
			return -FI_EMSGSIZE;
		n += iov[i].iov_len;
	}
	*len = n;
	return 0;
}

struct mbx_peer *mbx_peer_lookup(struct mbx_ep *ep, fi_addr_t dest)
{
	struct mbx_av *av = ep->av;
	struct mbx_peer *p;

	if (dest >= av->count || !av->tab[dest].valid)
		return NULL;
	if (__builtin_expect(!av->tab[dest].resolved, 0) && mbx_av_resolve_locked(av, dest))
		return NULL;
	if (dest < ep->fiaddr_cap && ep->fiaddr_gen == av->gen && ep->fiaddr_peer[dest])
		return ep->fiaddr_peer[dest];
	if (ep->fiaddr_gen != av->gen) {
		if (ep->fiaddr_peer)
			memset(ep->fiaddr_peer, 0, ep->fiaddr_cap * sizeof(*ep->fiaddr_peer));
		ep->fiaddr_gen = av->gen;
	}
	p = mbx_peer_get(ep, &av->tab[dest].addr);
	if (!p)
		return NULL;
	if (dest >= ep->fiaddr_cap) {
		size_t cap = ep->fiaddr_cap ? ep->fiaddr_cap : 64;
		struct mbx_peer **t;

		while (cap <= dest)
			cap *= 2;
		t = realloc(ep->fiaddr_peer, cap * sizeof(*t));
		if (!t)
			return p;
		memset(t + ep->fiaddr_cap, 0, (cap - ep->fiaddr_cap) * sizeof(*t));
		ep->fiaddr_peer = t;
		ep->fiaddr_cap = cap;
	}
	ep->fiaddr_peer[dest] = p;
	return p;
}

/* Inline in each send call, whose flags are constants there. */
static inline __attribute__((always_inline)) ssize_t
send_common(struct mbx_ep *ep, const struct iovec *iov, size_t cnt, fi_addr_t dest, uint64_t tag,
	    uint64_t data, void *context, uint64_t flags, bool tagged, bool inject_call)
{
	uint64_t cflags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	uint8_t wflags = (tagged ? MBX_WF_TAGGED : 0) |
			 ((flags & FI_REMOTE_CQ_DATA) ? MBX_WF_CQDATA : 0);
	struct mbx_peer *p;
	size_t len;
	ssize_t ret;

	if (flags & ~(uint64_t)MBX_TX_FLAGS)
		return -FI_EBADFLAGS;
	ret = iov_check(iov, cnt, &len);
	if (ret)
		return ret;
	if ((flags & FI_INJECT) && len > ep->inject_size)
		return -FI_EMSGSIZE;
	if (!(ep->caps & FI_SEND) || !(ep->caps & (tagged ? FI_TAGGED : FI_MSG)))
		return -FI_EOPNOTSUPP;
	if (__builtin_expect(!ep->enabled, 0))
		return -FI_EOPBADSTATE;
	flags = mbx_comp_flags(ep, flags, inject_call);
	mbx_lock(ep->dom);
	p = mbx_peer_of(ep, dest);
	if (!p)
		ret = -FI_EADDRNOTAVAIL;
	else
		ret = mbx_proto_send(ep, p, iov, cnt, len, tag, data, context, cflags, flags,
				     wflags);
	if (ret == -FI_EAGAIN)
		mbx_ep_progress(ep);
	mbx_unlock(ep->dom);
	return ret;
}

static ssize_t peek_claim(struct mbx_ep *ep, const struct iovec *iov, size_t cnt,
			  fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			  uint64_t flags)
{
	struct fi_context *ctx = context;
	struct mbu_mentry *m;
	struct mbx_ux *ux;
	uint64_t cflags = FI_RECV | FI_TAGGED;

	if (!ctx && (flags & FI_CLAIM))
		return -FI_EINVAL;
	mbx_lock(ep->dom);
	if (flags & FI_PEEK) {
		mbx_ep_progress(ep);
		mbx_ux_refresh(ep);
		m = mbu_unexp_match(&ep->tunexp, src, tag, ignore);
		if (!m) {
			if (ep->rx_cq)
				mbx_cq_write_err(ep->rx_cq, context, cflags, FI_ENOMSG, 0, 0, tag,
						 0, NULL, FI_ADDR_NOTAVAIL);
			mbx_unlock(ep->dom);
			return 0;
		}
		ux = mbu_container_of(m, struct mbx_ux, m);
		if (ep->rx_cq)
			mbx_cq_write(ep->rx_cq, context,
				     cflags | ((ux->wflags & MBX_WF_CQDATA) ? FI_REMOTE_CQ_DATA : 0),
				     ux->size, NULL, ux->data, ux->tag, ux->src);
		if (flags & (FI_CLAIM | FI_DISCARD))
			mbu_unexp_remove(&ep->tunexp, m);
		if (flags & FI_DISCARD)
			mbx_ux_discard(ep, ux);
		else if (flags & FI_CLAIM)
			ctx->internal[0] = ux;
		mbx_unlock(ep->dom);
		return 0;
	}
	/* FI_CLAIM alone: receive (or discard) what an earlier peek claimed. */
	ux = ctx->internal[0];
	if (!ux) {
		mbx_unlock(ep->dom);
		return -FI_EINVAL;
	}
	ctx->internal[0] = NULL;
	if (flags & FI_DISCARD) {
		mbx_ux_discard(ep, ux);
		if (ep->rx_cq)
			mbx_cq_write(ep->rx_cq, context, cflags, 0, NULL, 0, tag, FI_ADDR_NOTAVAIL);
		mbx_cntr_inc(ep->rx_cntr);
	} else {
		struct mbx_rx *rx = mbu_pool_get(&ep->rx_pool);
		size_t i;

		if (!rx) {
			ctx->internal[0] = ux;
			mbx_unlock(ep->dom);
			return -FI_EAGAIN;
		}
		memset(rx, 0, sizeof(*rx));
		rx->context = context;
		rx->flags = cflags;
		rx->opflags = FI_COMPLETION;
		for (i = 0; i < cnt; i++)
			rx->iov[i] = iov[i];
		rx->iov_cnt = cnt;
		rx->total = mbx_iov_len(iov, cnt);
		mbx_deliver_ux(ep, rx, ux);
	}
	mbx_unlock(ep->dom);
	return 0;
}

/* A checked receive into the match queues (or straight onto a waiting
 * message). Inlined, so that t_recv's one-buffer case loses the loop. */
static inline ssize_t rx_post(struct mbx_ep *ep, const struct iovec *iov, size_t cnt, size_t len,
			      fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			      uint64_t flags, bool tagged, struct fi_cq_tagged_entry *now)
{
	struct mbx_rx *rx;
	ssize_t ret = 0;
	size_t i;

	mbx_lock(ep->dom);
	rx = mbu_pool_get(&ep->rx_pool);
	if (!rx) {
		mbx_ep_progress(ep);
		mbx_unlock(ep->dom);
		return -FI_EAGAIN;
	}
	rx->context = context;
	rx->flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	rx->opflags = (ep->rx_selective && !(flags & FI_COMPLETION)) ? 0 : FI_COMPLETION;
	for (i = 0; i < cnt; i++)
		rx->iov[i] = iov[i];
	rx->iov_cnt = cnt;
	rx->total = len;
	rx->mr_off = 0;
	rx->multi = flags & FI_MULTI_RECV;
	rx->posted = false;
	rx->peer = NULL;
	rx->m.src = src;
	rx->m.tag = tagged ? tag & ~ignore : 0;
	rx->m.ignore = tagged ? ignore : 0;
	/* Only a waiting message can complete in the call; none waits when
	 * receives run ahead of their messages, and then this costs a test. */
	now = now && ep->tunexp.count ? now : NULL;
	if (now) {
		ep->now = now;
		ep->now_ctx = context;
	}
	mbx_proto_recv_posted(ep, rx);
	if (now) {
		ret = ep->now ? 0 : 1;
		ep->now = NULL;
	}
	mbx_unlock(ep->dom);
	return ret;
}

static ssize_t recv_common(struct mbx_ep *ep, const struct iovec *iov, size_t cnt,
			   fi_addr_t src, uint64_t tag, uint64_t ignore, void *context,
			   uint64_t flags, bool tagged)
{
	size_t len;
	ssize_t ret;

	if (flags & ~(uint64_t)MBX_RX_FLAGS)
		return -FI_EBADFLAGS;
	if (!tagged && (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)))
		return -FI_EBADFLAGS;
	if (tagged && (flags & FI_MULTI_RECV))
		return -FI_EBADFLAGS;
	if ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM)))
		return -FI_EBADFLAGS;
	if ((flags & FI_MULTI_RECV) && (cnt != 1 || !(ep->caps & FI_MULTI_RECV)))
		return -FI_EINVAL;
	ret = iov_check(iov, cnt, &len);
	if (ret)
		return ret;
	if (!(ep->caps & FI_RECV) || !(ep->caps & (tagged ? FI_TAGGED : FI_MSG)))
		return -FI_EOPNOTSUPP;
	if (__builtin_expect(!ep->enabled, 0))
		return -FI_EOPBADSTATE;
	if (!ep->directed)
		src = FI_ADDR_UNSPEC;
	if (src != FI_ADDR_UNSPEC && (src >= ep->av->count || !ep->av->tab[src].valid))
		return -FI_EADDRNOTAVAIL;
	if (src != FI_ADDR_UNSPEC && !ep->av->tab[src].resolved) {
		mbx_lock(ep->dom);
		ret = mbx_av_resolve_locked(ep->av, src);
		mbx_unlock(ep->dom);
		if (ret)
			return ret;
	}
	if (src != FI_ADDR_UNSPEC)
		src = ep->av->tab[src].canon;	/* messages arrive under it */
	if (flags & (FI_PEEK | FI_CLAIM))
		return peek_claim(ep, iov, cnt, src, tag, ignore, context, flags);
	return rx_post(ep, iov, cnt, len, src, tag, ignore, context, flags, tagged, NULL);
}

/* ---- FI_MSG ---- */

static ssize_t m_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
		      void *context)
{
	struct iovec iov = { buf, len };
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return recv_common(ep, &iov, 1, src, 0, 0, context, ep->rx_op_flags, false);
}

static ssize_t m_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t cnt,
		       fi_addr_t src, void *context)
{
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return recv_common(ep, iov, cnt, src, 0, 0, context, ep->rx_op_flags, false);
}

static ssize_t m_recvmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return recv_common(ep_of(fep), msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
			   msg->context, flags, false);
}

static ssize_t m_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return send_common(ep, &iov, 1, dest, 0, 0, context, ep->tx_op_flags, false, false);
}

static ssize_t m_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t cnt,
		       fi_addr_t dest, void *context)
{
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return send_common(ep, iov, cnt, dest, 0, 0, context, ep->tx_op_flags, false, false);
}

static ssize_t m_sendmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return send_common(ep_of(fep), msg->msg_iov, msg->iov_count, msg->addr, 0, msg->data,
			   msg->context, flags, false, false);
}

static ssize_t m_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(ep_of(fep), &iov, 1, dest, 0, 0, NULL, FI_INJECT, false, true);
}

static ssize_t m_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return send_common(ep, &iov, 1, dest, 0, data, context,
			   ep->tx_op_flags | FI_REMOTE_CQ_DATA, false, false);
}

static ssize_t m_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(ep_of(fep), &iov, 1, dest, 0, data, NULL,
			   FI_INJECT | FI_REMOTE_CQ_DATA, false, true);
}

struct fi_ops_msg mbx_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = m_recv,
	.recvv = m_recvv,
	.recvmsg = m_recvmsg,
	.send = m_send,
	.sendv = m_sendv,
	.sendmsg = m_sendmsg,
	.inject = m_inject,
	.senddata = m_senddata,
	.injectdata = m_injectdata,
};

/* ---- FI_TAGGED ---- */

/* fi_trecv is the call MPI makes for every receive: one buffer, the
 * endpoint's own flags, an address already resolved. That case is checked
 * and posted here without the general path's iovec and flag handling; any
 * other takes recv_common, which checks the same things and reports what
 * is wrong; both post through rx_post. */
static inline __attribute__((always_inline)) ssize_t
t_recv_common(struct fid_ep *fep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
	      uint64_t ignore, void *context, struct fi_cq_tagged_entry *now)
{
	struct iovec iov = { buf, len };
	struct mbx_ep *ep = ep_of(fep);
	const uint64_t need = FI_RECV | FI_TAGGED;

	if (__builtin_expect(ep->enabled && (ep->caps & need) == need &&
			     !(ep->rx_op_flags & ~(uint64_t)(FI_COMPLETION | FI_MORE | FI_TAGGED)) &&
			     (buf || !len) && len <= MBX_MAX_MSG_SIZE, 1)) {
		if (!ep->directed)
			src = FI_ADDR_UNSPEC;
		if (src == FI_ADDR_UNSPEC ||
		    (src < ep->av->count && ep->av->tab[src].valid && ep->av->tab[src].resolved))
			return rx_post(ep, &iov, 1, len,
				       src == FI_ADDR_UNSPEC ? src : ep->av->tab[src].canon, tag,
				       ignore, context, ep->rx_op_flags, true, now);
	}
	return recv_common(ep, &iov, 1, src, tag, ignore, context, ep->rx_op_flags, true);
}

static ssize_t t_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	return t_recv_common(fep, buf, len, src, tag, ignore, context, NULL);
}

static ssize_t t_recv_now(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			  uint64_t tag, uint64_t ignore, void *context,
			  struct fi_cq_tagged_entry *done)
{
	(void)desc;
	if (!done)
		return -FI_EINVAL;
	return t_recv_common(fep, buf, len, src, tag, ignore, context, done);
}

static ssize_t t_recv_take(struct fid_ep *fep, void *buf, size_t len, fi_addr_t src,
			   uint64_t tag, uint64_t ignore, uint64_t refuse,
			   struct fi_cq_tagged_entry *done)
{
	struct mbx_ep *ep = ep_of(fep);
	const uint64_t need = FI_RECV | FI_TAGGED;
	ssize_t ret = 0;

	if (!done || (!buf && len) || len > MBX_MAX_MSG_SIZE)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if ((ep->caps & need) != need)
		return -FI_EOPNOTSUPP;
	mbx_lock(ep->dom);
	if (!ep->tunexp.count)
		goto out;
	/* An address not yet resolved needs the ordinary path: the caller
	 * posts. */
	if (!ep->directed)
		src = FI_ADDR_UNSPEC;
	if (src != FI_ADDR_UNSPEC) {
		if (src >= ep->av->count || !ep->av->tab[src].valid || !ep->av->tab[src].resolved)
			goto out;
		src = ep->av->tab[src].canon;
	}
	ret = mbx_proto_take(ep, buf, len, src, tag, ignore, refuse, done);
out:
	mbx_unlock(ep->dom);
	return ret;
}

static const size_t *t_waiting(struct fid_ep *fep)
{
	return &ep_of(fep)->tunexp.count;
}

struct fi_matchbox_tagged_ops mbx_tagged_ext_ops = {
	.size = sizeof(struct fi_matchbox_tagged_ops),
	.trecv_now = t_recv_now,
	.trecv_take = t_recv_take,
	.waiting = t_waiting,
};

static ssize_t t_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t cnt,
		       fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return recv_common(ep, iov, cnt, src, tag, ignore, context, ep->rx_op_flags, true);
}

static ssize_t t_recvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return recv_common(ep_of(fep), msg->msg_iov, msg->iov_count, msg->addr, msg->tag,
			   msg->ignore, msg->context, flags, true);
}

static ssize_t t_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return send_common(ep, &iov, 1, dest, tag, 0, context, ep->tx_op_flags, true, false);
}

static ssize_t t_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t cnt,
		       fi_addr_t dest, uint64_t tag, void *context)
{
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return send_common(ep, iov, cnt, dest, tag, 0, context, ep->tx_op_flags, true, false);
}

static ssize_t t_sendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return send_common(ep_of(fep), msg->msg_iov, msg->iov_count, msg->addr, msg->tag,
			   msg->data, msg->context, flags, true, false);
}

static ssize_t t_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
			uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(ep_of(fep), &iov, 1, dest, tag, 0, NULL, FI_INJECT, true, true);
}

static ssize_t t_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
	struct iovec iov = { (void *)buf, len };
	struct mbx_ep *ep = ep_of(fep);

	(void)desc;
	return send_common(ep, &iov, 1, dest, tag, data, context,
			   ep->tx_op_flags | FI_REMOTE_CQ_DATA, true, false);
}

static ssize_t t_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { (void *)buf, len };

	return send_common(ep_of(fep), &iov, 1, dest, tag, data, NULL,
			   FI_INJECT | FI_REMOTE_CQ_DATA, true, true);
}

struct fi_ops_tagged mbx_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};
