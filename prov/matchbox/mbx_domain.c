/* The domain and memory registration. Matchbox needs no registration for
 * FI_MSG/FI_TAGGED (mr_mode 0), but applications register anyway, so
 * fi_mr_reg returns a real object recording the region and a key. */
#include "mbx.h"

#include <stdlib.h>
#include <string.h>

static int domain_close(struct fid *fid)
{
	struct mbx_domain *d = mbu_container_of(fid, struct mbx_domain, domain.fid);

	if (atomic_load(&d->refs))
		return -FI_EBUSY;
	atomic_fetch_sub(&d->fab->refs, 1);
	pthread_mutex_destroy(&d->lock);
	fi_freeinfo(d->info);
	free(d);
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = mbx_no_bind,
	.control = mbx_no_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static int no_sep(struct fid_domain *d, struct fi_info *i, struct fid_ep **e, void *c)
{
	(void)d; (void)i; (void)e; (void)c;
	return -FI_ENOSYS;
}

static int no_poll(struct fid_domain *d, struct fi_poll_attr *a, struct fid_poll **p)
{
	(void)d; (void)a; (void)p;
	return -FI_ENOSYS;
}

static int no_stx(struct fid_domain *d, struct fi_tx_attr *a, struct fid_stx **s, void *c)
{
	(void)d; (void)a; (void)s; (void)c;
	return -FI_ENOSYS;
}

static int no_srx(struct fid_domain *d, struct fi_rx_attr *a, struct fid_ep **e, void *c)
{
	(void)d; (void)a; (void)e; (void)c;
	return -FI_ENOSYS;
}

static int no_query_atomic(struct fid_domain *d, enum fi_datatype t, enum fi_op o,
			   struct fi_atomic_attr *a, uint64_t f)
{
	(void)d; (void)t; (void)o; (void)a; (void)f;
	return -FI_EOPNOTSUPP;
}

static int no_query_coll(struct fid_domain *d, enum fi_collective_op c,
			 struct fi_collective_attr *a, uint64_t f)
{
	(void)d; (void)c; (void)a; (void)f;
	return -FI_EOPNOTSUPP;
}

static int endpoint2(struct fid_domain *d, struct fi_info *i, struct fid_ep **e,
		     uint64_t flags, void *c)
{
	if (flags)
		return -FI_EBADFLAGS;
	return mbx_ep_open(d, i, e, c);
}

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = mbx_av_open,
	.cq_open = mbx_cq_open,
	.endpoint = mbx_ep_open,
	.scalable_ep = no_sep,
	.cntr_open = mbx_cntr_open,
	.poll_open = no_poll,
	.stx_ctx = no_stx,
	.srx_ctx = no_srx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_coll,
	.endpoint2 = endpoint2,
};

/* ---- memory registration ---- */

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

static struct fi_ops_mr mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

int mbx_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct mbx_fabric *fab = mbu_container_of(fabric, struct mbx_fabric, fabric);
	struct mbx_domain *d;

	if (!info || !domain)
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, MBX_DOMAIN_NAME))
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->data_progress == FI_PROGRESS_AUTO)
		return -FI_ENODATA;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	d->info = fi_dupinfo(info);
	if (!d->info) {
		free(d);
		return -FI_ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->locking = !info->domain_attr ||
		     info->domain_attr->threading == FI_THREAD_SAFE ||
		     info->domain_attr->threading == FI_THREAD_UNSPEC;
	d->fab = fab;
	d->domain.fid.fclass = FI_CLASS_DOMAIN;
	d->domain.fid.context = context;
	d->domain.fid.ops = &domain_fi_ops;
	d->domain.ops = &domain_ops;
	d->domain.mr = &mr_ops;
	atomic_fetch_add(&fab->refs, 1);
	*domain = &d->domain;
	return 0;
}
