/* Poll sets (fi_poll_open, fi_poll_add/del, fi_poll): one call that makes
 * progress on every CQ and counter of a set and says which have something
 * for the caller, as a program watching several queues expects. A CQ is
 * ready while it holds entries or errors; a counter when its value or
 * error count moved since the last fi_poll that reported it. Members stay
 * referenced, so closing one still in a set is -FI_EBUSY. */
#include <stdlib.h>

#include "mbx.h"

#define MBX_POLL_MAX 64

struct mbx_poll {
	struct fid_poll poll;
	struct mbx_domain *dom;
	struct fid *m[MBX_POLL_MAX];
	uint64_t seen[MBX_POLL_MAX];	/* counters: value + errors last reported */
	int n;
};

static _Atomic int *refs_of(struct fid *f)
{
	if (f->fclass == FI_CLASS_CQ)
		return &mbu_container_of(f, struct mbx_cq, cq.fid)->refs;
	return &mbu_container_of(f, struct mbx_cntr, cntr.fid)->refs;
}

static struct mbx_domain *dom_of(struct fid *f)
{
	if (f->fclass == FI_CLASS_CQ)
		return mbu_container_of(f, struct mbx_cq, cq.fid)->dom;
	return mbu_container_of(f, struct mbx_cntr, cntr.fid)->dom;
}

static uint64_t cntr_sum(struct mbx_cntr *c)
{
	return atomic_load(&c->value) + atomic_load(&c->err);
}

static int poll_add(struct fid_poll *fp, struct fid *f, uint64_t flags)
{
	struct mbx_poll *ps = mbu_container_of(fp, struct mbx_poll, poll);
	int i;

	if (flags)
		return -FI_EBADFLAGS;
	if (!f || (f->fclass != FI_CLASS_CQ && f->fclass != FI_CLASS_CNTR) ||
	    f->ops->size < sizeof(struct fi_ops) || dom_of(f) != ps->dom)
		return -FI_EINVAL;
	mbx_lock(ps->dom);
	for (i = 0; i < ps->n; i++)
		if (ps->m[i] == f)
			break;
	if (i < ps->n || ps->n == MBX_POLL_MAX) {
		mbx_unlock(ps->dom);
		return i < ps->n ? -FI_EALREADY : -FI_ENOSPC;
	}
	ps->m[ps->n] = f;
	ps->seen[ps->n] = f->fclass == FI_CLASS_CNTR ?
			  cntr_sum(mbu_container_of(f, struct mbx_cntr, cntr.fid)) : 0;
	ps->n++;
	atomic_fetch_add(refs_of(f), 1);
	mbx_unlock(ps->dom);
	return 0;
}

static int poll_del(struct fid_poll *fp, struct fid *f, uint64_t flags)
{
	struct mbx_poll *ps = mbu_container_of(fp, struct mbx_poll, poll);
	int i;

	if (flags)
		return -FI_EBADFLAGS;
	mbx_lock(ps->dom);
	for (i = 0; i < ps->n && ps->m[i] != f; i++)
		;
	if (i == ps->n) {
		mbx_unlock(ps->dom);
		return -FI_ENOENT;
	}
	atomic_fetch_sub(refs_of(f), 1);
	ps->n--;
	ps->m[i] = ps->m[ps->n];
	ps->seen[i] = ps->seen[ps->n];
	mbx_unlock(ps->dom);
	return 0;
}

static int poll_run(struct fid_poll *fp, void **context, int count)
{
	struct mbx_poll *ps = mbu_container_of(fp, struct mbx_poll, poll);
	int i, k = 0;

	if (count < 0 || (count && !context))
		return -FI_EINVAL;
	mbx_lock(ps->dom);
	for (i = 0; i < ps->n && k < count; i++) {
		if (ps->m[i]->fclass == FI_CLASS_CQ) {
			struct mbx_cq *cq = mbu_container_of(ps->m[i], struct mbx_cq, cq.fid);

			if (!cq->count && mbu_dlist_empty(&cq->errs))
				mbx_progress_cq_eps(cq->eps, cq->neps);
			if (cq->count || !mbu_dlist_empty(&cq->errs))
				context[k++] = cq->cq.fid.context;
		} else {
			struct mbx_cntr *c = mbu_container_of(ps->m[i], struct mbx_cntr, cntr.fid);
			uint64_t now;

			mbx_cntr_progress_locked(c);
			now = cntr_sum(c);
			if (now != ps->seen[i]) {
				ps->seen[i] = now;
				context[k++] = c->cntr.fid.context;
			}
		}
	}
	mbx_unlock(ps->dom);
	return k;
}

static int poll_close(struct fid *fid)
{
	struct mbx_poll *ps = mbu_container_of(fid, struct mbx_poll, poll.fid);

	while (ps->n)
		poll_del(&ps->poll, ps->m[ps->n - 1], 0);
	atomic_fetch_sub(&ps->dom->refs, 1);
	free(ps);
	return 0;
}

static struct fi_ops poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = poll_close,
	.bind = mbx_no_bind,
	.control = mbx_no_control,
	.ops_open = mbx_no_ops_open,
};

static struct fi_ops_poll poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = poll_run,
	.poll_add = poll_add,
	.poll_del = poll_del,
};

int mbx_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr, struct fid_poll **out)
{
	struct mbx_domain *d = mbu_container_of(domain, struct mbx_domain, domain);
	struct mbx_poll *ps;

	if (!out || (attr && attr->flags))
		return -FI_EINVAL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	ps->poll.fid.fclass = FI_CLASS_POLL;
	ps->poll.fid.ops = &poll_fi_ops;
	ps->poll.ops = &poll_ops;
	ps->dom = d;
	atomic_fetch_add(&d->refs, 1);
	*out = &ps->poll;
	return 0;
}
