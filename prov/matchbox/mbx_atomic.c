/* The FI_ATOMIC calls: fi_atomic/atomicv/atomicmsg/inject_atomic,
 * fi_fetch_atomic/v/msg, fi_compare_atomic/v/msg, the three validity
 * queries and fi_query_atomic. Every argument is checked before any state
 * changes; the operation then travels like an RMA write (mbx_proto_rma),
 * in pieces of whole elements, and the target applies it in one place
 * (handle_atomic in mbx_progress.c, with util/mbu_atomic.c), so atomics on
 * one location are atomic with each other whichever wire they came by.
 * Atomicity is per element, as fi_atomic(3) defines it. */
#include "mbx.h"
#include "mbu_atomic.h"

#define MBX_ATOMIC_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE | \
			  FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MORE | FI_FENCE | \
			  FI_ATOMIC | FI_READ | FI_WRITE)

static inline struct mbx_ep *ep_of(struct fid_ep *fep)
{
	return mbu_container_of(fep, struct mbx_ep, ep);
}

/* ioc lists (counts in elements) to iovecs (bytes); -1 if malformed. */
static int ioc_bytes(const struct fi_ioc *ioc, size_t cnt, size_t es, bool need_addr,
		     struct iovec *out, size_t *elems)
{
	size_t i, n = 0;

	if (cnt > MBX_IOV_LIMIT || (cnt && !ioc))
		return -1;
	for (i = 0; i < cnt; i++) {
		if (ioc[i].count > MBX_ATOMIC_MAX_BYTES / es || (need_addr && ioc[i].count &&
								 !ioc[i].addr))
			return -1;
		out[i].iov_base = ioc[i].addr;
		out[i].iov_len = ioc[i].count * es;
		n += ioc[i].count;
	}
	*elems = n;
	return 0;
}

static ssize_t atomic_common(struct mbx_ep *ep, enum mbu_atomic_kind kind,
			     const struct fi_msg_atomic *msg, const struct fi_ioc *cmp, size_t ccnt,
			     struct fi_ioc *res, size_t rescnt, uint64_t flags, bool inject_call)
{
	struct iovec iov[MBX_IOV_LIMIT], civ[MBX_IOV_LIMIT], riv[MBX_IOV_LIMIT];
	struct fi_rma_iov rma[MBX_IOV_LIMIT];
	size_t es, n, m, i;

	if (flags & ~(uint64_t)MBX_ATOMIC_FLAGS)
		return -FI_EBADFLAGS;
	es = mbu_atomic_size(msg->datatype);
	if (!es || (unsigned)msg->op >= FI_ATOMIC_OP_LAST)
		return -FI_EINVAL;
	if (!mbu_atomic_valid(kind, msg->op, msg->datatype))
		return -FI_EOPNOTSUPP;
	/* FI_ATOMIC_READ names its element count by the buffer it ignores. */
	if (ioc_bytes(msg->msg_iov, msg->iov_count, es, msg->op != FI_ATOMIC_READ, iov, &n) ||
	    !n || msg->rma_iov_count > MBX_IOV_LIMIT || (msg->rma_iov_count && !msg->rma_iov))
		return -FI_EINVAL;
	for (i = 0, m = 0; i < msg->rma_iov_count; i++) {
		if (msg->rma_iov[i].count > MBX_ATOMIC_MAX_BYTES / es)
			return -FI_EINVAL;
		rma[i].addr = msg->rma_iov[i].addr;
		rma[i].len = msg->rma_iov[i].count * es;
		rma[i].key = msg->rma_iov[i].key;
		m += msg->rma_iov[i].count;
	}
	if (m != n)
		return -FI_EINVAL;
	if (n > MBX_ATOMIC_MAX_BYTES / es)
		return -FI_EMSGSIZE;
	if (kind != MBU_ATOMIC_PLAIN && (ioc_bytes(res, rescnt, es, true, riv, &m) || m != n))
		return -FI_EINVAL;
	if (kind == MBU_ATOMIC_COMPARE && (ioc_bytes(cmp, ccnt, es, true, civ, &m) || m != n))
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && (kind != MBU_ATOMIC_PLAIN || n * es > ep->inject_size))
		return kind != MBU_ATOMIC_PLAIN ? -FI_EINVAL : -FI_EMSGSIZE;
	if (!(ep->caps & FI_ATOMIC) ||
	    !(ep->caps & (kind == MBU_ATOMIC_PLAIN ? FI_WRITE : FI_READ)))
		return -FI_EOPNOTSUPP;
	if (__builtin_expect(!ep->enabled, 0))
		return -FI_EOPBADSTATE;
	flags = mbx_comp_flags(ep, flags, inject_call);
	return mbx_rma_post(ep, msg->addr, &(struct mbx_rma_req){
		.op = MBX_OP_ATOMIC, .iov = iov, .cnt = msg->iov_count, .len = n * es,
		.riov = rma, .rcnt = msg->rma_iov_count, .data = msg->data,
		.context = msg->context, .opflags = flags,
		.cqdata = (flags & FI_REMOTE_CQ_DATA) != 0, .akind = (uint8_t)kind,
		.aop = (uint8_t)msg->op, .adt = (uint8_t)msg->datatype, .res = riv,
		.res_cnt = kind != MBU_ATOMIC_PLAIN ? rescnt : 0, .cmp = civ,
		.cmp_cnt = kind == MBU_ATOMIC_COMPARE ? ccnt : 0 });
}

/* The short forms: one local buffer, one remote segment. */
static ssize_t one(struct fid_ep *fep, enum mbu_atomic_kind kind, const void *buf, size_t count,
		   const void *compare, void *result, fi_addr_t dest, uint64_t addr, uint64_t key,
		   enum fi_datatype dt, enum fi_op op, void *ctx, uint64_t flags, bool inject_call)
{
	struct fi_ioc iov = { (void *)buf, count }, cmp = { (void *)compare, count },
		      res = { result, count };
	struct fi_rma_ioc rma = { addr, count, key };
	struct fi_msg_atomic msg = { .msg_iov = &iov, .iov_count = 1, .addr = dest,
				     .rma_iov = &rma, .rma_iov_count = 1, .datatype = dt,
				     .op = op, .context = ctx };

	return atomic_common(ep_of(fep), kind, &msg, &cmp, 1, &res, 1, flags, inject_call);
}

static ssize_t vec(struct fid_ep *fep, enum mbu_atomic_kind kind, const struct fi_ioc *iov,
		   size_t count, const struct fi_ioc *cmp, size_t ccount, struct fi_ioc *res,
		   size_t rcount, fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
		   enum fi_op op, void *ctx)
{
	size_t i, n = 0;
	struct fi_rma_ioc rma;
	struct fi_msg_atomic msg = { .msg_iov = iov, .iov_count = count, .addr = dest,
				     .rma_iov = &rma, .rma_iov_count = 1, .datatype = dt,
				     .op = op, .context = ctx };

	for (i = 0; iov && i < count && count <= MBX_IOV_LIMIT; i++)
		n += iov[i].count;
	rma = (struct fi_rma_ioc){ addr, n, key };
	return atomic_common(ep_of(fep), kind, &msg, cmp, ccount, res, rcount,
			     ep_of(fep)->tx_op_flags, false);
}

static ssize_t at_write(struct fid_ep *fep, const void *buf, size_t count, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *ctx)
{
	(void)desc;
	return one(fep, MBU_ATOMIC_PLAIN, buf, count, NULL, NULL, dest, addr, key, dt, op, ctx,
		   ep_of(fep)->tx_op_flags, false);
}

static ssize_t at_writev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc,
			 size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			 enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc;
	return vec(fep, MBU_ATOMIC_PLAIN, iov, count, NULL, 0, NULL, 0, dest, addr, key, dt, op,
		   ctx);
}

static ssize_t at_writemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return atomic_common(ep_of(fep), MBU_ATOMIC_PLAIN, msg, NULL, 0, NULL, 0, flags, false);
}

static ssize_t at_inject(struct fid_ep *fep, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	return one(fep, MBU_ATOMIC_PLAIN, buf, count, NULL, NULL, dest, addr, key, dt, op, NULL,
		   (ep_of(fep)->tx_op_flags & ~(uint64_t)FI_COMPLETION) | FI_INJECT, true);
}

static ssize_t at_readwrite(struct fid_ep *fep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc; (void)result_desc;
	return one(fep, MBU_ATOMIC_FETCH, buf, count, NULL, result, dest, addr, key, dt, op, ctx,
		   ep_of(fep)->tx_op_flags, false);
}

static ssize_t at_readwritev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc; (void)result_desc;
	return vec(fep, MBU_ATOMIC_FETCH, iov, count, NULL, 0, resultv, result_count, dest, addr,
		   key, dt, op, ctx);
}

static ssize_t at_readwritemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags)
{
	(void)result_desc;
	if (!msg)
		return -FI_EINVAL;
	return atomic_common(ep_of(fep), MBU_ATOMIC_FETCH, msg, NULL, 0, resultv, result_count,
			     flags, false);
}

static ssize_t at_compwrite(struct fid_ep *fep, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc; (void)compare_desc; (void)result_desc;
	return one(fep, MBU_ATOMIC_COMPARE, buf, count, compare, result, dest, addr, key, dt, op,
		   ctx, ep_of(fep)->tx_op_flags, false);
}

static ssize_t at_compwritev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)desc; (void)compare_desc; (void)result_desc;
	return vec(fep, MBU_ATOMIC_COMPARE, iov, count, comparev, compare_count, resultv,
		   result_count, dest, addr, key, dt, op, ctx);
}

static ssize_t at_compwritemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags)
{
	(void)compare_desc; (void)result_desc;
	if (!msg)
		return -FI_EINVAL;
	return atomic_common(ep_of(fep), MBU_ATOMIC_COMPARE, msg, comparev, compare_count, resultv,
			     result_count, flags, false);
}

static int valid(struct fid_ep *fep, enum mbu_atomic_kind kind, enum fi_datatype dt,
		 enum fi_op op, size_t *count)
{
	struct mbx_ep *ep = ep_of(fep);

	if (!count)
		return -FI_EINVAL;
	if (!(ep->caps & FI_ATOMIC) || !mbu_atomic_valid(kind, op, dt))
		return -FI_EOPNOTSUPP;
	*count = MBX_ATOMIC_MAX_BYTES / mbu_atomic_size(dt);
	return 0;
}

static int at_writevalid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	return valid(fep, MBU_ATOMIC_PLAIN, dt, op, count);
}

static int at_readwritevalid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op,
			     size_t *count)
{
	return valid(fep, MBU_ATOMIC_FETCH, dt, op, count);
}

static int at_compwritevalid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op,
			     size_t *count)
{
	return valid(fep, MBU_ATOMIC_COMPARE, dt, op, count);
}

int mbx_query_atomic(struct fid_domain *d, enum fi_datatype dt, enum fi_op op,
		     struct fi_atomic_attr *attr, uint64_t flags)
{
	enum mbu_atomic_kind kind = (flags & FI_COMPARE_ATOMIC) ? MBU_ATOMIC_COMPARE :
				    (flags & FI_FETCH_ATOMIC) ? MBU_ATOMIC_FETCH :
				    MBU_ATOMIC_PLAIN;

	(void)d;
	if (!attr)
		return -FI_EINVAL;
	if ((flags & ~(uint64_t)(FI_COMPARE_ATOMIC | FI_FETCH_ATOMIC | FI_TAGGED)) ||
	    ((flags & FI_COMPARE_ATOMIC) && (flags & FI_FETCH_ATOMIC)))
		return -FI_EBADFLAGS;
	if (flags & FI_TAGGED)
		return -FI_EOPNOTSUPP;	/* no tagged atomics */
	if (!mbu_atomic_valid(kind, op, dt))
		return -FI_EOPNOTSUPP;
	attr->size = mbu_atomic_size(dt);
	attr->count = MBX_ATOMIC_MAX_BYTES / attr->size;
	return 0;
}

struct fi_ops_atomic mbx_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = at_write,
	.writev = at_writev,
	.writemsg = at_writemsg,
	.inject = at_inject,
	.readwrite = at_readwrite,
	.readwritev = at_readwritev,
	.readwritemsg = at_readwritemsg,
	.compwrite = at_compwrite,
	.compwritev = at_compwritev,
	.compwritemsg = at_compwritemsg,
	.writevalid = at_writevalid,
	.readwritevalid = at_readwritevalid,
	.compwritevalid = at_compwritevalid,
};
