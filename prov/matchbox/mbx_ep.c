/* Endpoints: creation (which also creates the endpoint's shared-memory
 * segment, so that its name is reachable as soon as fi_getname returns it),
 * binding to AV/CQ/counters, enabling, options, cancel and close. The data
 * calls are in mbx_msg.c and the wire protocol in mbx_progress.c. */
#include "mbx.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbu_shm.h"
#include "mbx_net.h"


static _Atomic uint32_t next_ep_id;
static pthread_once_t reap_once = PTHREAD_ONCE_INIT;

static void reap_stale(void)
{
	char prefix[32];
	int n;

	snprintf(prefix, sizeof(prefix), "mbx-%u-", (unsigned)geteuid());
	n = mbu_shm_reap(prefix);
	if (n)
		MBX_INFO(FI_LOG_EP_CTRL, "removed %d segments left by dead processes\n", n);
}

static size_t slot_size(void)
{
	size_t s = MBX_SLOT_HDR_SIZE + mbx_param.ring_size +
		   mbx_param.nchunks * mbx_param.chunk_size;

	return (s + 4095) & ~(size_t)4095;
}

static int seg_create(struct mbx_ep *ep)
{
	size_t ssize = slot_size();
	size_t size = MBX_SEG_HDR_SIZE + mbx_param.shm_peers * ssize;
	struct mbx_seg_hdr *h;
	void *p;
	int ret;

	mbx_shm_name(&ep->addr, ep->shm_name, sizeof(ep->shm_name));
	ret = mbu_shm_create(ep->shm_name, size, &p);
	if (ret) {
		MBX_WARN(FI_LOG_EP_CTRL, "cannot create shared segment %s: %s\n",
			 ep->shm_name, strerror(-ret));
		return ret == -ENOSPC || ret == -ENOMEM ? -FI_ENOMEM : -FI_EOTHER;
	}
	h = p;
	h->version = MBX_SEG_VERSION;
	h->nslots = (uint32_t)mbx_param.shm_peers;
	h->slot_size = ssize;
	h->ring_size = mbx_param.ring_size;
	h->chunk_size = mbx_param.chunk_size;
	h->nchunks = (uint32_t)mbx_param.nchunks;
	h->pid = ep->addr.pid;
	atomic_store_explicit(&h->nslots_used, 0, memory_order_relaxed);
	/* The magic goes last: a peer that sees it sees a complete header. */
	atomic_thread_fence(memory_order_release);
	h->magic = MBX_SEG_MAGIC;
	ep->seg = h;
	ep->seg_size = size;
	ep->rxslots = calloc(h->nslots, sizeof(*ep->rxslots));
	if (!ep->rxslots) {
		mbu_shm_unmap(p, size);
		mbu_shm_unlink(ep->shm_name);
		ep->seg = NULL;
		return -FI_ENOMEM;
	}
	return 0;
}

static void seg_destroy(struct mbx_ep *ep)
{
	if (!ep->seg)
		return;
	/* Senders still mapping it must stop waiting for us. */
	atomic_store_explicit(&ep->seg->closed, 1, memory_order_release);
	mbu_shm_unlink(ep->shm_name);
	mbu_shm_unmap(ep->seg, ep->seg_size);
	free(ep->rxslots);
	ep->seg = NULL;
	ep->rxslots = NULL;
}

static void detach(struct mbx_ep **eps, int *n, struct mbx_ep *ep)
{
	int i;

	for (i = 0; i < *n; i++) {
		if (eps[i] == ep) {
			eps[i] = eps[--*n];
			return;
		}
	}
}

static int attach(struct mbx_ep **eps, int *n, struct mbx_ep *ep)
{
	int i;

	for (i = 0; i < *n; i++)
		if (eps[i] == ep)
			return 0;
	if (*n == MBX_CQ_MAX_EPS)
		return -FI_ENOSPC;
	eps[(*n)++] = ep;
	return 0;
}

static void cancel_all_posted(struct mbx_ep *ep, struct mbu_posted *q)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&q->all, it, tmp) {
		struct mbx_rx *rx = mbu_container_of(mbu_posted_entry_of_all(it), struct mbx_rx, m);

		mbu_posted_remove(q, &rx->m);
		mbu_pool_put(&ep->rx_pool, rx);
	}
}

static void free_unexpected(struct mbx_ep *ep, struct mbu_unexp *q)
{
	struct mbu_dlist *it, *tmp;

	mbu_dlist_foreach_safe(&q->all, it, tmp) {
		struct mbx_ux *ux = mbu_container_of(mbu_unexp_entry_of_all(it), struct mbx_ux, m);

		mbu_unexp_remove(q, &ux->m);
		mbx_ux_free(ep, ux);
	}
}

static int ep_close(struct fid *fid)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);
	struct mbx_domain *d = ep->dom;
	int i;

	mbx_lock(d);
	mbx_auto_forget(ep);
	mbx_wake_detach(ep);
	if (ep->tx_cq) {
		detach(ep->tx_cq->eps, &ep->tx_cq->neps, ep);
		atomic_fetch_sub(&ep->tx_cq->refs, 1);
	}
	if (ep->rx_cq) {
		if (ep->rx_cq != ep->tx_cq)
			detach(ep->rx_cq->eps, &ep->rx_cq->neps, ep);
		atomic_fetch_sub(&ep->rx_cq->refs, 1);
	}
	{
		struct mbx_cntr *cs[] = { ep->tx_cntr, ep->rx_cntr, ep->wr_cntr, ep->rd_cntr,
					  ep->rwr_cntr, ep->rrd_cntr };

		for (i = 0; i < 6; i++) {
			if (!cs[i])
				continue;
			detach(cs[i]->eps, &cs[i]->neps, ep);	/* a no-op when already gone */
			atomic_fetch_sub(&cs[i]->refs, 1);
		}
	}
	/* What the endpoint did, for a run that asks (FI_LOG_LEVEL=info):
	 * the first look when a stream is slower than it should be. */
	MBX_INFO(FI_LOG_EP_CTRL,
		 "%s: eager %" PRIu64 ", cma %" PRIu64 ", copy %" PRIu64 ", read %" PRIu64
		 ", unexpected %" PRIu64 ", backpressure %" PRIu64 ", bad frames %" PRIu64
		 ", rma cma %" PRIu64 ", rma frames %" PRIu64 "\n", ep->name,
		 ep->stats.eager_sent, ep->stats.rdv_cma, ep->stats.rdv_copy, ep->stats.rdv_read,
		 ep->stats.unexpected, ep->stats.backpressure, ep->stats.bad_frames,
		 ep->stats.rma_cma, ep->stats.rma_frames);
	mbx_net_close(ep);
	mbx_name_close(ep);
	if (ep->av)
		atomic_fetch_sub(&ep->av->refs, 1);
	mbx_ep_fini_wire(ep);
	cancel_all_posted(ep, &ep->tposted);
	cancel_all_posted(ep, &ep->mposted);
	free_unexpected(ep, &ep->tunexp);
	free_unexpected(ep, &ep->munexp);
	mbu_posted_fini(&ep->tposted);
	mbu_posted_fini(&ep->mposted);
	mbu_unexp_fini(&ep->tunexp);
	mbu_unexp_fini(&ep->munexp);
	for (i = 0; i < MBX_UX_CLASSES; i++)
		mbu_pool_fini(&ep->ux_buf[i]);
	mbu_pool_fini(&ep->rx_pool);
	mbu_pool_fini(&ep->ux_pool);
	mbu_pool_fini(&ep->ctrl_pool);
	mbu_pool_fini(&ep->bounce_pool);
	mbu_qmap_fini(&ep->peers);
	free(ep->txs);
	free(ep->tx_free);
	free(ep->fiaddr_peer);
	seg_destroy(ep);
	mbu_dlist_remove(&ep->dom_link);
	mbx_unlock(d);
	fi_freeinfo(ep->info);
	atomic_fetch_sub(&d->refs, 1);
	free(ep);
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);
	int ret = 0;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled)
		return -FI_EOPBADSTATE;
	mbx_lock(ep->dom);
	switch (bfid->fclass) {
	case FI_CLASS_AV: {
		struct mbx_av *av = mbu_container_of(bfid, struct mbx_av, av.fid);

		if (flags) {
			ret = -FI_EBADFLAGS;
		} else if (ep->av) {
			ret = -FI_EALREADY;
		} else if (av->dom != ep->dom) {
			ret = -FI_EINVAL;
		} else {
			ep->av = av;
			atomic_fetch_add(&av->refs, 1);
		}
		break;
	}
	case FI_CLASS_CQ: {
		struct mbx_cq *cq = mbu_container_of(bfid, struct mbx_cq, cq.fid);

		if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) {
			ret = -FI_EBADFLAGS;
			break;
		}
		if (!(flags & (FI_TRANSMIT | FI_RECV)) || cq->dom != ep->dom) {
			ret = -FI_EINVAL;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq)) {
			ret = -FI_EALREADY;
			break;
		}
		ret = attach(cq->eps, &cq->neps, ep);
		if (ret)
			break;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
			atomic_fetch_add(&cq->refs, 1);
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
			atomic_fetch_add(&cq->refs, 1);
		}
		break;
	}
	case FI_CLASS_CNTR: {
		struct mbx_cntr *c = mbu_container_of(bfid, struct mbx_cntr, cntr.fid);
		static const uint64_t kinds[] = { FI_SEND, FI_RECV, FI_WRITE, FI_READ,
						  FI_REMOTE_WRITE, FI_REMOTE_READ };
		struct mbx_cntr **slots[] = { &ep->tx_cntr, &ep->rx_cntr, &ep->wr_cntr,
					      &ep->rd_cntr, &ep->rwr_cntr, &ep->rrd_cntr };
		size_t k;

		if (flags & ~(uint64_t)(FI_SEND | FI_RECV | FI_WRITE | FI_READ |
					FI_REMOTE_WRITE | FI_REMOTE_READ)) {
			ret = -FI_EBADFLAGS;
			break;
		}
		if (!flags || c->dom != ep->dom) {
			ret = -FI_EINVAL;
			break;
		}
		for (k = 0; k < 6; k++)
			if ((flags & kinds[k]) && *slots[k])
				ret = -FI_EALREADY;
		if (ret)
			break;
		ret = attach(c->eps, &c->neps, ep);
		if (ret)
			break;
		for (k = 0; k < 6; k++) {
			if (flags & kinds[k]) {
				*slots[k] = c;
				atomic_fetch_add(&c->refs, 1);
			}
		}
		break;
	}
	case FI_CLASS_EQ:
		/* Nothing is reported asynchronously; accepting keeps
		 * applications that always bind an EQ working. */
		break;
	default:
		ret = -FI_EINVAL;
	}
	mbx_unlock(ep->dom);
	return ret;
}

/* Whether waiting on an object with this wait kind puts the thread to sleep
 * on the segment's doorbell (FI_WAIT_YIELD only yields). */
static bool sleeps(enum fi_wait_obj w)
{
	return w != FI_WAIT_NONE && w != FI_WAIT_YIELD;
}

/* With the domain lock held. */
static int ep_enable(struct mbx_ep *ep)
{
	if (ep->enabled)
		return 0;
	if (!ep->av)
		return -FI_ENOAV;
	if ((ep->caps & FI_SEND) && !ep->tx_cq && !ep->tx_cntr)
		return -FI_ENOCQ;
	if ((ep->caps & FI_RECV) && !ep->rx_cq && !ep->rx_cntr)
		return -FI_ENOCQ;
	if (ep->seg)
		atomic_store_explicit(&ep->seg->waitable, ep->dom->auto_on ||
				      sleeps(ep->tx_cq ? ep->tx_cq->wait_obj : FI_WAIT_NONE) ||
				      sleeps(ep->rx_cq ? ep->rx_cq->wait_obj : FI_WAIT_NONE) ||
				      sleeps(ep->tx_cntr ? ep->tx_cntr->wait_obj : FI_WAIT_NONE) ||
				      sleeps(ep->rx_cntr ? ep->rx_cntr->wait_obj : FI_WAIT_NONE),
				      memory_order_release);
	/* Same-node initiators may go straight to our memory unless we must
	 * see each access to count it; the table is the domain's. */
	if (ep->seg && mbx_param.rma_cma != MBX_RMA_CMA_NEVER && (ep->caps & FI_RMA) &&
	    (ep->caps & (FI_REMOTE_READ | FI_REMOTE_WRITE)) && !ep->rwr_cntr && !ep->rrd_cntr) {
		mbx_kt_open(ep->dom, &ep->addr);
		if (ep->dom->kt_mem) {
			memcpy(ep->seg->kt_name, ep->dom->kt_name, sizeof(ep->seg->kt_name));
			atomic_store_explicit(&ep->seg->rma_direct, 1, memory_order_release);
		}
	}
	ep->enabled = true;
	/* Without a wake socket (logged) fi_trywait keeps answering
	 * -FI_EAGAIN: descriptors are an extra, never a reason to fail. */
	(void)mbx_wake_attach(ep);
	return 0;
}

static int ep_control(struct fid *fid, int cmd, void *arg)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);
	uint64_t *flags = arg;
	int ret;

	switch (cmd) {
	case FI_ENABLE:
		mbx_lock(ep->dom);
		ret = ep_enable(ep);
		mbx_unlock(ep->dom);
		return ret;
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & FI_TRANSMIT) && (*flags & FI_RECV))
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			*flags = ep->tx_op_flags;
		else if (*flags & FI_RECV)
			*flags = ep->rx_op_flags;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & FI_TRANSMIT) && (*flags & FI_RECV))
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~(uint64_t)FI_TRANSMIT;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~(uint64_t)FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* The tagged operations beyond libfabric's (fi_ext_matchbox.h). */
static int ep_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
		       void *context)
{
	(void)fid; (void)context;
	if (!name || !ops || flags)
		return -FI_EINVAL;
	if (strcmp(name, FI_MATCHBOX_TAGGED_OPS))
		return -FI_ENOSYS;
	*ops = &mbx_tagged_ext_ops;
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = ep_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);
	struct mbu_posted *qs[2] = { &ep->tposted, &ep->mposted };
	struct mbu_dlist *it;
	int i;

	if (!context)
		return -FI_EINVAL;
	mbx_lock(ep->dom);
	for (i = 0; i < 2; i++) {
		mbu_dlist_foreach(&qs[i]->all, it) {
			struct mbx_rx *rx = mbu_container_of(mbu_posted_entry_of_all(it),
							     struct mbx_rx, m);

			if (rx->context != context)
				continue;
			mbu_posted_remove(qs[i], &rx->m);
			if (ep->rx_cq)
				mbx_cq_write_err(ep->rx_cq, context,
						 rx->flags | (rx->multi ? FI_MULTI_RECV : 0),
						 FI_ECANCELED, 0, 0, rx->m.tag, 0, NULL,
						 FI_ADDR_NOTAVAIL);
			mbx_cntr_inc_err(ep->rx_cntr);
			mbu_pool_put(&ep->rx_pool, rx);
			mbx_unlock(ep->dom);
			return 0;
		}
	}
	mbx_unlock(ep->dom);
	return -FI_ENOENT;
}

static int ep_getopt(fid_t fid, int level, int name, void *val, size_t *len)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);

	if (!val || !len)
		return -FI_EINVAL;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (name) {
	case FI_OPT_MIN_MULTI_RECV:
		if (*len < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)val = ep->min_multi_recv;
		*len = sizeof(size_t);
		return 0;
	case FI_OPT_CM_DATA_SIZE:
		if (*len < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)val = 0;
		*len = sizeof(size_t);
		return 0;
	case FI_MATCHBOX_OPT_STATS: {
		size_t known = offsetof(struct fi_matchbox_stats, rma_cma), n;

		if (*len < known)
			return -FI_ETOOSMALL;
		n = *len < sizeof(ep->stats) ? *len & ~(size_t)7 : sizeof(ep->stats);
		mbx_lock(ep->dom);
		memcpy(val, &ep->stats, n);
		mbx_unlock(ep->dom);
		*len = n;
		return 0;
	}
	case FI_MATCHBOX_OPT_NET_STATS: {
		/* A caller built against an older header passes the older
		 * size and gets the fields it knows. */
		size_t known = offsetof(struct fi_matchbox_net_stats, busy_threshold);
		struct fi_matchbox_net_stats ns;

		if (*len < known)
			return -FI_ETOOSMALL;
		mbx_lock(ep->dom);
		mbx_net_stats(ep, &ns);
		mbx_unlock(ep->dom);
		*len = *len < sizeof(ns) ? *len - *len % sizeof(uint64_t) : sizeof(ns);
		memcpy(val, &ns, *len);
		return 0;
	}
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int ep_setopt(fid_t fid, int level, int name, const void *val, size_t len)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);

	if (!val)
		return -FI_EINVAL;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (name) {
	case FI_OPT_MIN_MULTI_RECV:
		if (len != sizeof(size_t))
			return -FI_EINVAL;
		ep->min_multi_recv = *(const size_t *)val;
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int no_ctx(struct fid_ep *sep, int index, void *attr, struct fid_ep **ep, void *ctx)
{
	(void)sep; (void)index; (void)attr; (void)ep; (void)ctx;
	return -FI_ENOSYS;
}

static int no_tx_ctx(struct fid_ep *sep, int i, struct fi_tx_attr *a, struct fid_ep **e, void *c)
{
	return no_ctx(sep, i, a, e, c);
}

static int no_rx_ctx(struct fid_ep *sep, int i, struct fi_rx_attr *a, struct fid_ep **e, void *c)
{
	return no_ctx(sep, i, a, e, c);
}

static ssize_t rx_size_left(struct fid_ep *fep)
{
	struct mbx_ep *ep = mbu_container_of(fep, struct mbx_ep, ep);

	return (ssize_t)(mbx_param.rx_size - ep->rx_pool.in_use);
}

static ssize_t tx_size_left(struct fid_ep *fep)
{
	struct mbx_ep *ep = mbu_container_of(fep, struct mbx_ep, ep);

	return ep->tx_nfree > MBX_TX_REPLY_RESERVE ? (ssize_t)(ep->tx_nfree - MBX_TX_REPLY_RESERVE) : 0;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = rx_size_left,
	.tx_size_left = tx_size_left,
};

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);
	size_t need = MBX_ADDR_LEN;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	/* In a sockaddr format the name is the name service's address, which
	 * a peer's fi_av_insert resolves to the full one. */
	if (mbx_addr_stride(ep->info->addr_format)) {
		struct mbx_sockname sn;

		mbx_name_own(ep, &sn);
		return mbx_addr_encode(&sn, ep->info->addr_format, addr, addrlen);
	}
	if (*addrlen < need) {
		*addrlen = need;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, ep->name, need);
	*addrlen = need;
	return 0;
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct mbx_ep *ep = mbu_container_of(fid, struct mbx_ep, ep.fid);
	struct mbx_addr a, old = ep->addr;
	int ret;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	if (mbx_parse_addr(addr, addrlen, &a))
		return -FI_EINVAL;
	/* Only the endpoint number is ours to choose; the rest names this
	 * process and job. */
	if (a.host != old.host || a.uid != old.uid || a.pid != old.pid || a.job != old.job ||
	    a.ip != old.ip || a.ports != old.ports)
		return -FI_EINVAL;
	if (a.ep == old.ep)
		return 0;
	mbx_lock(ep->dom);
	seg_destroy(ep);
	ep->addr = a;
	ret = seg_create(ep);
	if (ret) {
		ep->addr = old;
		if (seg_create(ep))
			MBX_WARN(FI_LOG_EP_CTRL, "endpoint lost its segment after a failed setname\n");
	}
	mbx_format_addr(&ep->addr, ep->name, sizeof(ep->name));
	mbx_name_update(ep);
	mbx_unlock(ep->dom);
	return ret == -FI_EOTHER ? -FI_EADDRINUSE : ret;
}

static int no_getpeer(struct fid_ep *ep, void *addr, size_t *len)
{
	(void)ep; (void)addr; (void)len;
	return -FI_ENOSYS;
}

static int no_connect(struct fid_ep *ep, const void *addr, const void *p, size_t l)
{
	(void)ep; (void)addr; (void)p; (void)l;
	return -FI_ENOSYS;
}

static int no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int no_accept(struct fid_ep *ep, const void *p, size_t l)
{
	(void)ep; (void)p; (void)l;
	return -FI_ENOSYS;
}

static int no_reject(struct fid_pep *pep, fid_t h, const void *p, size_t l)
{
	(void)pep; (void)h; (void)p; (void)l;
	return -FI_ENOSYS;
}

static int no_shutdown(struct fid_ep *ep, uint64_t f)
{
	(void)ep; (void)f;
	return -FI_ENOSYS;
}

static int no_join(struct fid_ep *ep, const void *a, uint64_t f, struct fid_mc **mc, void *c)
{
	(void)ep; (void)a; (void)f; (void)mc; (void)c;
	return -FI_ENOSYS;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = no_getpeer,
	.connect = no_connect,
	.listen = no_listen,
	.accept = no_accept,
	.reject = no_reject,
	.shutdown = no_shutdown,
	.join = no_join,
};

int mbx_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **fep,
		void *context)
{
	struct mbx_domain *d = mbu_container_of(domain, struct mbx_domain, domain);
	struct mbx_sockname want = { 0, 0 };
	struct mbx_addr unused;
	struct mbx_ep *ep;
	size_t i;
	int ret;

	if (!info || !fep)
		return -FI_EINVAL;
	if (!mbx_addr_format_ok(info->addr_format))
		return -FI_EINVAL;
	/* A listener source (fi_getinfo with FI_SOURCE and a node or service)
	 * is where this endpoint's name service and net wire are bound. A full
	 * matchbox address names a process: nothing to bind. */
	if (info->src_addr &&
	    mbx_addr_decode(info->src_addr, info->src_addrlen, info->addr_format, &unused,
			    &want) < 0)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_UNSPEC)
		return -FI_EINVAL;
	if (info->caps & ~MBX_CAPS)
		return -FI_EINVAL;
	pthread_once(&reap_once, reap_stale);
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	ep->dom = d;
	ep->caps = info->caps ? info->caps : MBX_CAPS;
	mbu_choose_init(&ep->large_choice, mbx_param.copy_min);
	if (!(ep->caps & (FI_SEND | FI_RECV)))
		ep->caps |= FI_SEND | FI_RECV;
	ep->directed = ep->caps & FI_DIRECTED_RECV;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->inject_size = mbx_param.inject_size;
	ep->eager_limit = mbx_param.eager_limit;
	ep->min_multi_recv = 64;
	ep->addr.host = mbx_host_id();
	ep->addr.uid = (uint32_t)geteuid();
	ep->addr.pid = (int32_t)getpid();
	ep->addr.ep = atomic_fetch_add(&next_ep_id, 1);
	ep->addr.job = mbx_job_id();
	ep->name_fd = -1;
	ep->wake_fd = -1;
	ep->want_ip = want.ip;
	ret = mbx_net_open(ep);
	if (ret) {
		fi_freeinfo(ep->info);
		free(ep);
		return ret;
	}
	ret = mbx_name_open(ep, &want);
	if (ret) {
		mbx_net_close(ep);
		fi_freeinfo(ep->info);
		free(ep);
		return ret;
	}
	mbx_format_addr(&ep->addr, ep->name, sizeof(ep->name));
	mbu_dlist_init(&ep->peer_list);
	mbu_dlist_init(&ep->pending_peers);
	mbu_dlist_init(&ep->streaming);
	mbu_dlist_init(&ep->draining);

	ret = mbu_posted_init(&ep->tposted);
	if (ret)
		goto err_info;
	ret = mbu_posted_init(&ep->mposted);
	if (ret)
		goto err_tposted;
	ret = mbu_unexp_init(&ep->tunexp);
	if (ret)
		goto err_mposted;
	ret = mbu_unexp_init(&ep->munexp);
	if (ret)
		goto err_tunexp;
	ret = mbu_qmap_init(&ep->peers, 64);
	if (ret)
		goto err_munexp;
	mbu_pool_init(&ep->rx_pool, sizeof(struct mbx_rx), 64, mbx_param.rx_size);
	mbu_pool_init(&ep->ux_pool, sizeof(struct mbx_ux), 256, 0);
	mbu_pool_init(&ep->ctrl_pool, sizeof(struct mbx_ctrl), 64, 0);
	mbu_pool_init(&ep->bounce_pool, ep->inject_size ? ep->inject_size : 16, 16,
		      mbx_param.tx_size);
	for (i = 0; i < MBX_UX_CLASSES; i++)
		mbu_pool_init(&ep->ux_buf[i], (size_t)256 << (2 * i), i < 3 ? 64 : 4, 0);
	ep->tx_cap = mbx_param.tx_size + MBX_TX_REPLY_RESERVE;
	ep->txs = calloc(ep->tx_cap, sizeof(*ep->txs));
	ep->tx_free = calloc(ep->tx_cap, sizeof(*ep->tx_free));
	if (!ep->txs || !ep->tx_free) {
		ret = -FI_ENOMEM;
		goto err_pools;
	}
	for (i = 0; i < ep->tx_cap; i++) {
		ep->txs[i].idx = (uint32_t)i;
		ep->tx_free[i] = (uint32_t)(ep->tx_cap - 1 - i);
	}
	ep->tx_nfree = ep->tx_cap;
	ret = seg_create(ep);
	if (ret)
		goto err_pools;

	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &mbx_msg_ops;
	ep->ep.tagged = &mbx_tagged_ops;
	ep->ep.rma = &mbx_rma_ops;
	ep->ep.atomic = &mbx_atomic_ops;
	ep->ep.collective = &mbx_coll_ops;
	mbx_lock(d);
	mbu_dlist_insert_tail(&ep->dom_link, &d->eps);
	mbx_unlock(d);
	atomic_fetch_add(&d->refs, 1);
	*fep = &ep->ep;
	return 0;

err_pools:
	free(ep->txs);
	free(ep->tx_free);
	for (i = 0; i < MBX_UX_CLASSES; i++)
		mbu_pool_fini(&ep->ux_buf[i]);
	mbu_pool_fini(&ep->rx_pool);
	mbu_pool_fini(&ep->ux_pool);
	mbu_pool_fini(&ep->ctrl_pool);
	mbu_pool_fini(&ep->bounce_pool);
	mbu_qmap_fini(&ep->peers);
err_munexp:
	mbu_unexp_fini(&ep->munexp);
err_tunexp:
	mbu_unexp_fini(&ep->tunexp);
err_mposted:
	mbu_posted_fini(&ep->mposted);
err_tposted:
	mbu_posted_fini(&ep->tposted);
err_info:
	mbx_name_close(ep);
	mbx_net_close(ep);
	fi_freeinfo(ep->info);
	free(ep);
	return ret;
}
