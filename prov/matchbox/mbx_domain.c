/* The domain: the object every other one of a fabric hangs off, and its
 * lock. Memory registration is in mbx_mr.c. */
#include "mbx.h"

#include <stdlib.h>
#include <string.h>

static int domain_close(struct fid *fid)
{
	struct mbx_domain *d = mbu_container_of(fid, struct mbx_domain, domain.fid);

	if (atomic_load(&d->refs))
		return -FI_EBUSY;
	mbx_auto_stop(d);
	atomic_fetch_sub(&d->fab->refs, 1);
	pthread_mutex_destroy(&d->lock);
	mbx_kt_close(d);
	mbx_mr_table_fini(&d->mrs);
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
	.poll_open = mbx_poll_open,
	.stx_ctx = no_stx,
	.srx_ctx = no_srx,
	.query_atomic = mbx_query_atomic,
	.query_collective = no_query_coll,
	.endpoint2 = endpoint2,
};

/* ---- memory registration ---- */


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
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	d->info = fi_dupinfo(info);
	if (!d->info) {
		free(d);
		return -FI_ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	/* The progress thread is a second caller whatever the program promised. */
	d->locking = !info->domain_attr ||
		     info->domain_attr->threading == FI_THREAD_SAFE ||
		     info->domain_attr->threading == FI_THREAD_UNSPEC ||
		     info->domain_attr->data_progress == FI_PROGRESS_AUTO;
	d->fab = fab;
	/* FI_MR_BASIC (the old API) means provider keys and virtual addresses. */
	mbu_dlist_init(&d->eps);
	d->mr_mode = !info->domain_attr ? 0 :
		     info->domain_attr->mr_mode == FI_MR_BASIC ?
		     FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED :
		     info->domain_attr->mr_mode == FI_MR_SCALABLE ? 0 :
		     (uint64_t)info->domain_attr->mr_mode & MBX_MR_MODES;
	d->domain.fid.fclass = FI_CLASS_DOMAIN;
	d->domain.fid.context = context;
	d->domain.fid.ops = &domain_fi_ops;
	d->domain.ops = &domain_ops;
	d->domain.mr = &mbx_mr_ops;
	if (info->domain_attr && info->domain_attr->data_progress == FI_PROGRESS_AUTO &&
	    mbx_auto_start(d)) {
		fi_freeinfo(d->info);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -FI_EOTHER;
	}
	atomic_fetch_add(&fab->refs, 1);
	*domain = &d->domain;
	return 0;
}
