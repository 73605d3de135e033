/* The FI_RMA data calls: fi_read/readv/readmsg, fi_write/writev/writemsg,
 * fi_inject_write, fi_writedata and fi_inject_writedata. Each checks its
 * arguments before it touches any state, then hands the operation to the
 * protocol (mbx_proto_rma in mbx_progress.c), which sends it to the target
 * as frames over the same wire as messages; the target checks the key,
 * range and access and copies (see mbx_proto.h). */
#include "mbx.h"

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
	ret = p ? mbx_proto_rma(ep, p, r) : -FI_EADDRNOTAVAIL;
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
