/* Memory registration: fi_mr_reg/regv/regattr, the domain's key table, and
 * the check an RMA or atomic target makes before it touches a byte. */
#include "mbx.h"

#include <stdlib.h>
#include <string.h>

struct mbx_mr {
	struct fid_mr mr;
	struct mbx_domain *dom;
	struct iovec iov[MBX_IOV_LIMIT];
	size_t iov_cnt;
	uint64_t access;
};

static int mr_close(struct fid *fid)
{
	struct mbx_mr *mr = mbu_container_of(fid, struct mbx_mr, mr.fid);

	atomic_fetch_sub(&mr->dom->refs, 1);
	free(mr);
	return 0;
}

static int mr_control(struct fid *fid, int cmd, void *arg)
{
	(void)fid; (void)arg;
	return cmd == FI_ENABLE ? 0 : -FI_ENOSYS;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mbx_no_bind,
	.control = mr_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **out)
{
	struct mbx_domain *d = mbu_container_of(fid, struct mbx_domain, domain.fid);
	const uint64_t access_ok = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
				   FI_REMOTE_READ | FI_REMOTE_WRITE;
	struct mbx_mr *mr;
	size_t i;

	if (!attr || !out || (attr->iov_count && !attr->mr_iov))
		return -FI_EINVAL;
	if (attr->iov_count > MBX_IOV_LIMIT)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (attr->access & ~access_ok)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_EOPNOTSUPP;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	for (i = 0; i < attr->iov_count; i++)
		mr->iov[i] = attr->mr_iov[i];
	mr->iov_cnt = attr->iov_count;
	mr->access = attr->access;
	mr->dom = d;
	mr->mr.fid.fclass = FI_CLASS_MR;
	mr->mr.fid.context = attr->context;
	mr->mr.fid.ops = &mr_fi_ops;
	mr->mr.mem_desc = mr;
	mbx_lock(d);
	mr->mr.key = attr->requested_key ? attr->requested_key : ++d->next_key;
	mbx_unlock(d);
	atomic_fetch_add(&d->refs, 1);
	*out = &mr->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t requested_key, uint64_t flags,
		   struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return mr_regattr(fid, &attr, flags, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		  uint64_t offset, uint64_t requested_key, uint64_t flags,
		  struct fid_mr **mr, void *context)
{
	struct iovec iov = { (void *)buf, len };

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

struct fi_ops_mr mbx_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};
