/* The FI_RMA data calls: fi_read/readv/readmsg, fi_write/writev/writemsg,
 * fi_inject_write, fi_writedata and fi_inject_writedata. Each checks its
 * arguments before it touches any state. Toward a peer on this node, a
 * write or read whose regions the target's domain publishes (see
 * mbu_keytab.h) moves with CMA straight between the two address spaces and
 * completes before the call returns: the target's CPU does nothing. All
 * else goes to the protocol (mbx_proto_rma in mbx_progress.c), which sends
 * the operation to the target as frames over the same wire as messages;
 * the target checks the key, range and access and copies (mbx_proto.h).
 * Frames are also the fallback whenever CMA cannot settle an operation on
 * its own: CQ data or counters the target must see, a fence, a key not in
 * the table, or CMA refused by the kernel. Toward another host, a write or
 * read under a key the target has offered goes by the core provider's own
 * fi_write/fi_read on the peer's connection (mbx_net_rma), and frames
 * carry the rest as they do here. */
#include "mbx.h"
#include "mbx_net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mbu_futex.h"
#include "mbu_shm.h"

/* 4096 slots of 64 bytes: 256 KiB of address space per domain, of which
 * only the pages of slots in use are ever touched. */
#define MBX_KT_SLOTS 4096u
/* How long closing a region waits for an initiator still copying into it
 * (one system call, normally microseconds) before it gives up on one
 * that died mid-copy. */
#define MBX_KT_WITHDRAW_NS (10ull * 1000000000ull)

/* ---- the target's side: publishing its registrations ---- */

static uint32_t kt_flags(const struct mbx_mr *mr)
{
	return ((mr->access & FI_REMOTE_READ) ? MBU_KT_READ : 0) |
	       ((mr->access & FI_REMOTE_WRITE) ? MBU_KT_WRITE : 0) |
	       (mr->cntr ? MBU_KT_OWNER : 0);
}

void mbx_kt_publish(struct mbx_domain *d, struct mbx_mr *mr)
{
	struct mbu_keytab_entry e;
	int idx;

	if (!d->kt_mem || mr->kt_idx >= 0 || mr->iov_cnt != 1 ||
	    !(mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return;
	e.key = mr->mr.key;
	e.raddr = (d->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)mr->iov[0].iov_base :
						    mr->offset;
	e.va = (uint64_t)(uintptr_t)mr->iov[0].iov_base;
	e.len = mr->len;
	e.flags = kt_flags(mr);
	idx = mbu_keytab_publish(&d->kt, &e);
	if (idx < 0)
		MBX_INFO(FI_LOG_MR, "registration table full: key 0x%llx served by frames\n",
			 (unsigned long long)e.key);
	mr->kt_idx = idx;
}

void mbx_kt_withdraw(struct mbx_domain *d, struct mbx_mr *mr)
{
	if (mr->kt_idx < 0)
		return;
	if (mbu_keytab_withdraw(&d->kt, mr->kt_idx, MBX_KT_WITHDRAW_NS))
		MBX_WARN(FI_LOG_MR, "key 0x%llx: an initiator held it for 10 s and is taken "
			 "for dead; closing anyway\n", (unsigned long long)mr->mr.key);
	mr->kt_idx = -1;
}

void mbx_kt_open(struct mbx_domain *d, const struct mbx_addr *a)
{
	static _Atomic uint32_t seq;
	size_t size = mbu_keytab_size(MBX_KT_SLOTS), i;
	int ret;

	if (d->kt_mem || d->kt_failed)
		return;
	snprintf(d->kt_name, sizeof(d->kt_name), "/mbx-%u-%d-%x-k%x", a->uid, a->pid, a->job,
		 atomic_fetch_add(&seq, 1));
	ret = mbu_shm_create(d->kt_name, size, &d->kt_mem);
	if (ret) {
		MBX_WARN(FI_LOG_DOMAIN, "cannot create %s (%s): RMA on this node goes by frames\n",
			 d->kt_name, strerror(-ret));
		d->kt_failed = true;
		d->kt_mem = NULL;
		return;
	}
	d->kt_size = size;
	mbu_keytab_init(&d->kt, d->kt_mem, MBX_KT_SLOTS, a->pid);
	for (i = 0; d->mrs.slot && i <= d->mrs.mask; i++)
		if (d->mrs.slot[i] && d->mrs.slot[i] != MBX_MR_TOMB)
			mbx_kt_publish(d, d->mrs.slot[i]);
}

void mbx_kt_close(struct mbx_domain *d)
{
	if (!d->kt_mem)
		return;
	mbu_shm_unlink(d->kt_name);
	mbu_shm_unmap(d->kt_mem, d->kt_size);
	d->kt_mem = NULL;
}

/* ---- the initiator's side ---- */

void mbx_kt_peer_fini(struct mbx_peer *p)
{
	if (p->kt_state == MBX_KT_MAPPED)
		mbu_shm_unmap(p->kt_mem, p->kt_size);
	p->kt_state = MBX_KT_UNSEEN;
	p->kt_mem = NULL;
}

/* The peer's table, mapped at its first use; false while the peer offers
 * none (not enabled yet, counting remote accesses, or CMA off there). */
static bool peer_kt(struct mbx_peer *p)
{
	struct mbx_seg_hdr *h = p->rseg;
	char name[MBX_KT_NAME_MAX];
	size_t size;
	void *m;

	if (p->kt_state != MBX_KT_UNSEEN)
		return p->kt_state == MBX_KT_MAPPED;
	if (!atomic_load_explicit(&h->rma_direct, memory_order_acquire))
		return false;
	memcpy(name, h->kt_name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	p->kt_state = MBX_KT_NONE;
	if (mbu_shm_open(name, &m, &size)) {
		MBX_INFO(FI_LOG_EP_DATA, "no registration table %s for %s\n", name, p->name);
		return false;
	}
	if (mbu_keytab_attach(&p->kt, m, size) || p->kt.hdr->pid != p->addr.pid) {
		MBX_WARN(FI_LOG_EP_DATA, "registration table %s of %s is malformed; not using it\n",
			 name, p->name);
		mbu_shm_unmap(m, size);
		return false;
	}
	p->kt_mem = m;
	p->kt_size = size;
	p->kt_state = MBX_KT_MAPPED;
	return true;
}

/* Is the target progressing now? Then frames are served at once, by its
 * core, and cost us less than a CMA system call (about 2 us here for any
 * size up to a few KiB, and 1 MiB runs in frames with both cores copying).
 * A target not seen progressing (computing, asleep in a wait object, or
 * never looked at yet) gets CMA, which does not need it. */
#define MBX_TARGET_ACTIVE_NS 200000u

static bool target_active(struct mbx_peer *p)
{
	uint64_t t = atomic_load_explicit(&p->rseg->ticks, memory_order_relaxed);
	uint64_t now = mbu_now_ns();

	uint64_t since = now - p->hb_check;

	p->hb_check = now;
	if (!p->hb_valid) {
		p->hb_valid = true;
		p->hb_seen = t;
		p->hb_ns = 0;
		return false;
	}
	/* A change says "lately" only if we looked lately before. */
	if (t != p->hb_seen) {
		p->hb_seen = t;
		p->hb_ns = since < MBX_TARGET_ACTIVE_NS ? now : 0;
	}
	return now - p->hb_ns < MBX_TARGET_ACTIVE_NS;
}

/* A write or read to a same-node peer straight through memory. 0: done,
 * completed (with an error entry if the target's table refuses the access,
 * as its own check would); 1: not for this path, send frames. */
static int rma_cma(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_rma_req *r)
{
	bool write = r->op == MBX_OP_WRITE;
	uint32_t need = write ? MBU_KT_WRITE : MBU_KT_READ;
	struct mbx_wire_iov riov[MBX_IOV_LIMIT];
	int held[MBX_IOV_LIMIT], err = 0, ret = 1;
	size_t i, n = 0, nh = 0;

	if (!peer_kt(p) || atomic_load_explicit(&p->rseg->closed, memory_order_acquire))
		return 1;
	if (mbx_param.rma_cma == MBX_RMA_CMA_AUTO && target_active(p))
		return 1;
	for (i = 0; i < r->rcnt; i++) {
		const struct fi_rma_iov *ri = &r->riov[i];
		struct mbu_keytab_entry e;
		int idx;

		/* An empty operation names its first region only to be
		 * counted there, which the target must then do itself. */
		if (!ri->len && (r->len || i))
			continue;
		if (!r->len) {
			idx = mbu_keytab_acquire(&p->kt, ri->key, &e);
			if (idx < 0)
				goto out;
			held[nh++] = idx;
			if (e.flags & MBU_KT_OWNER)
				goto out;
			continue;
		}
		idx = mbu_keytab_acquire(&p->kt, ri->key, &e);
		if (idx < 0)
			goto out;	/* unknown here: the target's answer decides */
		held[nh++] = idx;
		if (e.flags & MBU_KT_OWNER)
			goto out;
		if ((e.flags & need) != need || ri->addr < e.raddr || ri->addr - e.raddr > e.len ||
		    ri->len > e.len - (ri->addr - e.raddr)) {
			err = FI_EACCES;	/* what the target's check answers */
			break;
		}
		riov[n].addr = e.va + (ri->addr - e.raddr);
		riov[n].len = ri->len;
		n++;
	}
	if (!err && r->len) {
		int moved = mbx_cma_move(p->addr.pid, write, r->iov, r->cnt, riov, n, r->len);

		if (moved == -EPERM || moved == -ENOSYS || moved == -ESRCH) {
			/* ESRCH: the target is gone, which the frame path reports */
			if (moved != -ESRCH)
				MBX_WARN(FI_LOG_EP_DATA, "CMA to pid %d refused (%s); RMA to %s "
					 "goes by frames\n", p->addr.pid, strerror(-moved), p->name);
			p->rma_cma_ok = false;
			goto out;
		}
		/* A registered region the target has unmapped, or a bad local
		 * buffer: the bytes before the fault may have moved. */
		err = moved ? FI_EFAULT : 0;
	}
	ep->stats.rma_cma++;
	mbx_tx_report(ep, write ? ep->wr_cntr : ep->rd_cntr, r->context,
		      FI_RMA | (write ? FI_WRITE : FI_READ), r->opflags, 0, err, p);
	ret = 0;
out:
	for (i = 0; i < nh; i++)
		mbu_keytab_release(&p->kt, held[i]);
	return ret;
}

#define MBX_RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE | \
		       FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MORE | FI_FENCE | FI_RMA | \
		       FI_READ | FI_WRITE)

static inline struct mbx_ep *ep_of(struct fid_ep *fep)
{
	return mbu_container_of(fep, struct mbx_ep, ep);
}

static ssize_t rma_common(struct mbx_ep *ep, bool write, const struct iovec *iov, size_t cnt,
			  const struct fi_rma_iov *riov, size_t rcnt, fi_addr_t dest,
			  uint64_t data, void *context, uint64_t flags, bool inject_call)
{
	size_t len = 0, rlen = 0, i;

	if (flags & ~(uint64_t)MBX_RMA_FLAGS)
		return -FI_EBADFLAGS;
	if (cnt > MBX_IOV_LIMIT || rcnt > MBX_IOV_LIMIT || (cnt && !iov) || (rcnt && !riov))
		return -FI_EINVAL;
	for (i = 0; i < cnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			return -FI_EINVAL;
		if (iov[i].iov_len > MBX_MAX_MSG_SIZE - len)
			return -FI_EMSGSIZE;
		len += iov[i].iov_len;
	}
	for (i = 0; i < rcnt; i++) {
		if (riov[i].len > MBX_MAX_MSG_SIZE - rlen)
			return -FI_EMSGSIZE;
		rlen += riov[i].len;
	}
	if (len != rlen)
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && (!write || len > ep->inject_size))
		return write ? -FI_EMSGSIZE : -FI_EINVAL;
	if (!(ep->caps & FI_RMA) || !(ep->caps & (write ? FI_WRITE : FI_READ)))
		return -FI_EOPNOTSUPP;
	if (__builtin_expect(!ep->enabled, 0))
		return -FI_EOPBADSTATE;
	flags = mbx_comp_flags(ep, flags, inject_call);
	return mbx_rma_post(ep, dest, &(struct mbx_rma_req){
		.op = write ? MBX_OP_WRITE : MBX_OP_READ, .iov = iov, .cnt = cnt, .len = len,
		.riov = riov, .rcnt = rcnt, .data = data, .context = context, .opflags = flags,
		.cqdata = write && (flags & FI_REMOTE_CQ_DATA) });
}

ssize_t mbx_rma_post(struct mbx_ep *ep, fi_addr_t dest, const struct mbx_rma_req *r)
{
	struct mbx_peer *p;
	ssize_t ret;

	mbx_lock(ep->dom);
	p = mbx_peer_of(ep, dest);
	if (!p) {
		mbx_unlock(ep->dom);
		return -FI_EADDRNOTAVAIL;
	}
	/* CMA must not overtake frames still unanswered to the same peer,
	 * and a fence asks for exactly that order. */
	if ((r->op == MBX_OP_WRITE || r->op == MBX_OP_READ) && !r->cqdata &&
	    !(r->opflags & FI_FENCE) && !mbx_peer_connect(ep, p) && !p->net && p->rma_cma_ok &&
	    !p->rma_out && !rma_cma(ep, p, r)) {
		mbx_unlock(ep->dom);
		return 0;
	}
	if (p->net) {
		struct mbx_rma_req nr = *r;

		/* Frames are served in order at the target, but the core's
		 * operations are not ordered with them: a fenced operation
		 * waits until ours on the core have completed. */
		if ((r->opflags & FI_FENCE) && mbx_net_rma_busy(p)) {
			mbx_ep_progress(ep);
			mbx_unlock(ep->dom);
			return -FI_EAGAIN;
		}
		ret = r->op == MBX_OP_ATOMIC ? 1 : mbx_net_rma(ep, p, &nr);
		if (ret <= 0) {
			if (ret == -FI_EAGAIN)
				mbx_ep_progress(ep);
			mbx_unlock(ep->dom);
			return ret;
		}
		ret = mbx_proto_rma(ep, p, &nr);
	} else {
		ret = mbx_proto_rma(ep, p, r);
	}
	if (ret == -FI_EAGAIN)
		mbx_ep_progress(ep);
	mbx_unlock(ep->dom);
	return ret;
}

static ssize_t rma_read(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t addr, uint64_t key, void *context)
{
	struct mbx_ep *ep = ep_of(fep);
	struct iovec iov = { buf, len };
	struct fi_rma_iov riov = { addr, len, key };

	(void)desc;
	return rma_common(ep, false, &iov, 1, &riov, 1, src, 0, context, ep->tx_op_flags, false);
}

static ssize_t rma_readv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t cnt,
			 fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct mbx_ep *ep = ep_of(fep);
	struct fi_rma_iov riov = { addr, mbx_iov_len(iov, cnt > MBX_IOV_LIMIT ? 0 : cnt), key };

	(void)desc;
	return rma_common(ep, false, iov, cnt, &riov, 1, src, 0, context, ep->tx_op_flags, false);
}

static ssize_t rma_readmsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return rma_common(ep_of(fep), false, msg->msg_iov, msg->iov_count, msg->rma_iov,
			  msg->rma_iov_count, msg->addr, 0, msg->context, flags, false);
}

static ssize_t rma_write(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct mbx_ep *ep = ep_of(fep);
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov riov = { addr, len, key };

	(void)desc;
	return rma_common(ep, true, &iov, 1, &riov, 1, dest, 0, context, ep->tx_op_flags, false);
}

static ssize_t rma_writev(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t cnt,
			  fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct mbx_ep *ep = ep_of(fep);
	struct fi_rma_iov riov = { addr, mbx_iov_len(iov, cnt > MBX_IOV_LIMIT ? 0 : cnt), key };

	(void)desc;
	return rma_common(ep, true, iov, cnt, &riov, 1, dest, 0, context, ep->tx_op_flags, false);
}

static ssize_t rma_writemsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return rma_common(ep_of(fep), true, msg->msg_iov, msg->iov_count, msg->rma_iov,
			  msg->rma_iov_count, msg->addr, msg->data, msg->context, flags, false);
}

static ssize_t rma_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t addr, uint64_t key)
{
	struct mbx_ep *ep = ep_of(fep);
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov riov = { addr, len, key };

	return rma_common(ep, true, &iov, 1, &riov, 1, dest, 0, NULL,
			  (ep->tx_op_flags & ~(uint64_t)FI_COMPLETION) | FI_INJECT, true);
}

static ssize_t rma_writedata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			     void *context)
{
	struct mbx_ep *ep = ep_of(fep);
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov riov = { addr, len, key };

	(void)desc;
	return rma_common(ep, true, &iov, 1, &riov, 1, dest, data, context,
			  ep->tx_op_flags | FI_REMOTE_CQ_DATA, false);
}

static ssize_t rma_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct mbx_ep *ep = ep_of(fep);
	struct iovec iov = { (void *)buf, len };
	struct fi_rma_iov riov = { addr, len, key };

	return rma_common(ep, true, &iov, 1, &riov, 1, dest, data, NULL,
			  (ep->tx_op_flags & ~(uint64_t)FI_COMPLETION) | FI_INJECT |
			  FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_rma mbx_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};
