/*
 * What both point-to-point engines do alike with their libfabric endpoint:
 * opening fabric, domain, address vector, completion queue and endpoint from
 * one fi_info, and the one-sided operations MPI windows hand to the engine
 * (registration, put, get and the three kinds of atomics). The tagged engine
 * and the host engine differ in how they move and match messages, not in
 * these.
 */
#include "mbmpi.h"

#include <stdio.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

static int fab_warn(const char *who, const char *what, int ret)
{
	fprintf(stderr, "matchbox mpi: %s engine: %s: %s\n", who, what, fi_strerror(-ret));
	return MPI_ERR_OTHER;
}

struct fi_info *mbmpi_fab_hints(const char *prov, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->caps = caps;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	/* MPI's non-overtaking order rests on the provider's. */
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->fabric_attr->prov_name = strdup(prov);
	if (mbmpi.progress_thread)
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	return hints;
}

int mbmpi_fab_getinfo(struct fi_info *hints, struct fi_info **info)
{
	int ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, info);

	if (ret && hints->domain_attr->data_progress == FI_PROGRESS_AUTO) {
		hints->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
		ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, info);
		if (!ret && mbmpi.world_rank == 0)
			fprintf(stderr, "matchbox mpi: MATCHBOX_MPI_PROGRESS=thread: provider %s "
				"offers no automatic progress; progress is manual\n",
				hints->fabric_attr->prov_name);
	}
	return ret;
}

int mbmpi_fab_getname(struct mbmpi_fab *x, void *addr, size_t *len)
{
	return fi_getname(&x->ep->fid, addr, len);
}

int mbmpi_fab_insert(struct mbmpi_fab *x, const void *addrs, int n, fi_addr_t *out)
{
	return fi_av_insert(x->av, addrs, (size_t)n, out, 0, NULL) == n ? 0 : -1;
}

int mbmpi_fab_open(struct mbmpi_fab *x, const char *who, enum fi_cq_format format)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fi_cq_attr cq_attr = {.format = format, .wait_obj = FI_WAIT_NONE};
	int ret;

	x->virt_addr = x->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
	if ((ret = fi_fabric(x->info->fabric_attr, &x->fabric, NULL)))
		return fab_warn(who, "fi_fabric", ret);
	if ((ret = fi_domain(x->fabric, x->info, &x->domain, NULL)))
		return fab_warn(who, "fi_domain", ret);
	av_attr.count = (size_t)mbmpi.world_size;
	if ((ret = fi_av_open(x->domain, &av_attr, &x->av, NULL)))
		return fab_warn(who, "fi_av_open", ret);
	if ((ret = fi_cq_open(x->domain, &cq_attr, &x->cq, NULL)))
		return fab_warn(who, "fi_cq_open", ret);
	if ((ret = fi_endpoint(x->domain, x->info, &x->ep, NULL)))
		return fab_warn(who, "fi_endpoint", ret);
	if ((ret = fi_ep_bind(x->ep, &x->av->fid, 0)) ||
	    (ret = fi_ep_bind(x->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(x->ep)))
		return fab_warn(who, "endpoint set-up", ret);
	/* After fi_enable: libfabric 1.17's shm crashes on it before. */
	if (x->min_multi_recv &&
	    (ret = fi_setopt(&x->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &x->min_multi_recv,
			     sizeof(x->min_multi_recv))))
		return fab_warn(who, "FI_OPT_MIN_MULTI_RECV", ret);
	return MPI_SUCCESS;
}

void mbmpi_fab_close(struct mbmpi_fab *x)
{
	if (x->ep)
		fi_close(&x->ep->fid);
	if (x->cq)
		fi_close(&x->cq->fid);
	if (x->av)
		fi_close(&x->av->fid);
	if (x->domain)
		fi_close(&x->domain->fid);
	if (x->fabric)
		fi_close(&x->fabric->fid);
	fi_freeinfo(x->info);
	memset(x, 0, sizeof(*x));
}

int mbmpi_fab_reg(struct mbmpi_fab *x, void *buf, size_t len, uint64_t access, uint64_t *key,
		  uint64_t *raddr, void **mr)
{
	struct fid_mr *m;
	int ret;

	ret = fi_mr_reg(x->domain, buf, len, access, 0, ++x->next_key, 0, &m, NULL);
	if (ret) {
		fab_warn("point-to-point", "fi_mr_reg", ret);
		return ret == -FI_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
	}
	*key = fi_mr_key(m);
	*raddr = x->virt_addr ? (uint64_t)(uintptr_t)buf : 0;
	*mr = m;
	return MPI_SUCCESS;
}

void mbmpi_fab_dereg(void *mr)
{
	if (mr)
		fi_close(&((struct fid_mr *)mr)->fid);
}

ssize_t mbmpi_fab_rma_issue(struct mbmpi_fab *x, struct mbmpi_fop *f)
{
	switch (f->rkind) {
	case MBMPI_RMA_PUT: {
		/* MPI's flush and fence mean done at the target, which a
		 * write's default completion need not be. */
		struct iovec iov = {.iov_base = f->buf, .iov_len = f->len};
		struct fi_rma_iov rv = {.addr = f->data, .len = f->len, .key = f->key};
		struct fi_msg_rma m = {.msg_iov = &iov, .iov_count = 1, .addr = f->addr,
				       .rma_iov = &rv, .rma_iov_count = 1, .context = &f->ctx};

		return fi_writemsg(x->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
	}
	case MBMPI_RMA_GET:
		return fi_read(x->ep, f->buf, f->len, NULL, f->addr, f->data, f->key, &f->ctx);
	case MBMPI_RMA_ATOMIC: {
		struct fi_ioc ioc = {.addr = f->buf, .count = f->len};
		struct fi_rma_ioc rc = {.addr = f->data, .count = f->len, .key = f->key};
		struct fi_msg_atomic m = {.msg_iov = &ioc, .iov_count = 1, .addr = f->addr,
					  .rma_iov = &rc, .rma_iov_count = 1,
					  .datatype = (enum fi_datatype)f->fdt,
					  .op = (enum fi_op)f->fop, .context = &f->ctx};

		return fi_atomicmsg(x->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
	}
	case MBMPI_RMA_FETCH:
		return fi_fetch_atomic(x->ep, f->buf, f->len, NULL, f->res, NULL, f->addr, f->data,
				       f->key, (enum fi_datatype)f->fdt, (enum fi_op)f->fop, &f->ctx);
	default:
		return fi_compare_atomic(x->ep, f->buf, f->len, NULL, f->cmp, NULL, f->res, NULL,
					 f->addr, f->data, f->key, (enum fi_datatype)f->fdt, FI_CSWAP,
					 &f->ctx);
	}
}

void mbmpi_fab_rma_fill(struct mbmpi_fop *f, const struct mbmpi_rma *op)
{
	f->rkind = op->kind;
	f->addr = op->addr;
	f->buf = op->buf;
	f->len = op->len;
	f->res = op->result;
	f->cmp = op->compare;
	f->data = op->raddr;
	f->key = op->key;
	f->fdt = op->fdt;
	f->fop = op->fop;
}

size_t mbmpi_fab_atomic_max(struct mbmpi_fab *x, int kind, int fdt, int fop)
{
	size_t count = 0;
	int ret;

	if (!x->atomics)
		return 0;
	if (kind == MBMPI_RMA_ATOMIC)
		ret = fi_atomicvalid(x->ep, (enum fi_datatype)fdt, (enum fi_op)fop, &count);
	else if (kind == MBMPI_RMA_FETCH)
		ret = fi_fetch_atomicvalid(x->ep, (enum fi_datatype)fdt, (enum fi_op)fop, &count);
	else
		ret = fi_compare_atomicvalid(x->ep, (enum fi_datatype)fdt, FI_CSWAP, &count);
	return ret ? 0 : count;
}

int mbmpi_fab_getopt(struct mbmpi_fab *x, int name, void *val, size_t *len)
{
	int ret = fi_getopt(&x->ep->fid, FI_OPT_ENDPOINT, name, val, len);

	if (!ret)
		return MPI_SUCCESS;
	if (ret == -FI_ENOPROTOOPT || ret == -FI_ENOSYS)
		return MPI_ERR_UNSUPPORTED_OPERATION;
	if (ret == -FI_EINVAL || ret == -FI_ETOOSMALL)
		return MPI_ERR_ARG;
	return MPI_ERR_OTHER;
}
