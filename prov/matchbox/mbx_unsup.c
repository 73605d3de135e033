/* Operations matchbox does not offer (its caps say so): collectives.
 * Every slot of their table still answers, with -FI_ENOSYS,
 * so a program that calls one by mistake gets an error, not a crash. */
#include "mbx.h"

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
