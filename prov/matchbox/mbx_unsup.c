/* Operations matchbox does not offer (its caps say so): atomics and
 * collectives. Every slot of their tables still answers, with -FI_ENOSYS,
 * so a program that calls one by mistake gets an error, not a crash. */
#include "mbx.h"

static ssize_t at_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *ctx)
{
	(void)ep; (void)buf; (void)count; (void)desc; (void)dest; (void)addr; (void)key;
	(void)dt; (void)op; (void)ctx;
	return -FI_ENOSYS;
}

static ssize_t at_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			 size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
			 enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)iov;
	return at_write(ep, NULL, count, desc, dest, addr, key, dt, op, ctx);
}

static ssize_t at_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	(void)ep; (void)msg; (void)flags;
	return -FI_ENOSYS;
}

static ssize_t at_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	return at_write(ep, buf, count, NULL, dest, addr, key, dt, op, NULL);
}

static ssize_t at_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *rdesc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *ctx)
{
	(void)result; (void)rdesc;
	return at_write(ep, buf, count, desc, dest, addr, key, dt, op, ctx);
}

static ssize_t at_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **rdesc, size_t rcount,
			     fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			     enum fi_op op, void *ctx)
{
	(void)iov; (void)resultv; (void)rdesc; (void)rcount;
	return at_write(ep, NULL, count, desc, dest, addr, key, dt, op, ctx);
}

static ssize_t at_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **rdesc, size_t rcount, uint64_t flags)
{
	(void)resultv; (void)rdesc; (void)rcount;
	return at_writemsg(ep, msg, flags);
}

static ssize_t at_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    const void *compare, void *cdesc, void *result, void *rdesc,
			    fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			    enum fi_op op, void *ctx)
{
	(void)compare; (void)cdesc; (void)result; (void)rdesc;
	return at_write(ep, buf, count, desc, dest, addr, key, dt, op, ctx);
}

static ssize_t at_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **cdesc,
			     size_t ccount, struct fi_ioc *resultv, void **rdesc, size_t rcount,
			     fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			     enum fi_op op, void *ctx)
{
	(void)iov; (void)comparev; (void)cdesc; (void)ccount; (void)resultv; (void)rdesc;
	(void)rcount;
	return at_write(ep, NULL, count, desc, dest, addr, key, dt, op, ctx);
}

static ssize_t at_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **cdesc, size_t ccount,
			       struct fi_ioc *resultv, void **rdesc, size_t rcount,
			       uint64_t flags)
{
	(void)comparev; (void)cdesc; (void)ccount; (void)resultv; (void)rdesc; (void)rcount;
	return at_writemsg(ep, msg, flags);
}

static int at_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	(void)ep; (void)dt; (void)op; (void)count;
	return -FI_EOPNOTSUPP;
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
	.writevalid = at_valid,
	.readwritevalid = at_valid,
	.compwritevalid = at_valid,
};

static ssize_t co_barrier(struct fid_ep *ep, fi_addr_t coll, void *ctx)
{
	(void)ep; (void)coll; (void)ctx;
	return -FI_ENOSYS;
}

static ssize_t co_barrier2(struct fid_ep *ep, fi_addr_t coll, uint64_t flags, void *ctx)
{
	(void)flags;
	return co_barrier(ep, coll, ctx);
}

static ssize_t co_bcast(struct fid_ep *ep, void *buf, size_t count, void *desc, fi_addr_t coll,
			fi_addr_t root, enum fi_datatype dt, uint64_t flags, void *ctx)
{
	(void)buf; (void)count; (void)desc; (void)root; (void)dt; (void)flags;
	return co_barrier(ep, coll, ctx);
}

static ssize_t co_gather(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			 void *result, void *rdesc, fi_addr_t coll, enum fi_datatype dt,
			 uint64_t flags, void *ctx)
{
	(void)buf; (void)count; (void)desc; (void)result; (void)rdesc; (void)dt; (void)flags;
	return co_barrier(ep, coll, ctx);
}

static ssize_t co_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			 void *result, void *rdesc, fi_addr_t coll, enum fi_datatype dt,
			 enum fi_op op, uint64_t flags, void *ctx)
{
	(void)op;
	return co_gather(ep, buf, count, desc, result, rdesc, coll, dt, flags, ctx);
}

static ssize_t co_reduce_root(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			      void *result, void *rdesc, fi_addr_t coll, fi_addr_t root,
			      enum fi_datatype dt, enum fi_op op, uint64_t flags, void *ctx)
{
	(void)root; (void)op;
	return co_gather(ep, buf, count, desc, result, rdesc, coll, dt, flags, ctx);
}

static ssize_t co_rooted(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			 void *result, void *rdesc, fi_addr_t coll, fi_addr_t root,
			 enum fi_datatype dt, uint64_t flags, void *ctx)
{
	(void)root;
	return co_gather(ep, buf, count, desc, result, rdesc, coll, dt, flags, ctx);
}

static ssize_t co_msg(struct fid_ep *ep, const struct fi_msg_collective *msg,
		      struct fi_ioc *resultv, void **rdesc, size_t rcount, uint64_t flags)
{
	(void)ep; (void)msg; (void)resultv; (void)rdesc; (void)rcount; (void)flags;
	return -FI_ENOSYS;
}

struct fi_ops_collective mbx_coll_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = co_barrier,
	.broadcast = co_bcast,
	.alltoall = co_gather,
	.allreduce = co_reduce,
	.allgather = co_gather,
	.reduce_scatter = co_reduce,
	.reduce = co_reduce_root,
	.scatter = co_rooted,
	.gather = co_rooted,
	.msg = co_msg,
	.barrier2 = co_barrier2,
};
