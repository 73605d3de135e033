/* Completion queues and counters. Reading either drives progress on the
 * endpoints bound to it (data progress is manual). Blocking reads poll for
 * FI_MATCHBOX_SPIN_US, then sleep on the endpoint's doorbell in its shared
 * segment, which peers ring when they hand it work; so an idle or
 * oversubscribed rank sleeps instead of burning a core. */
#include "mbx.h"

#include <stdlib.h>
#include <sched.h>
#include <string.h>

#include "mbu_futex.h"

int mbx_cq_grow(struct mbx_cq *cq)
{
	size_t cap = cq->cap * 2, i;
	struct mbx_cqe *r = malloc(cap * sizeof(*r));

	if (!r) {
		MBX_WARN(FI_LOG_CQ, "cannot grow CQ beyond %zu entries\n", cq->cap);
		return -FI_ENOMEM;
	}
	for (i = 0; i < cq->count; i++)
		r[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
	free(cq->ring);
	cq->ring = r;
	cq->cap = cap;
	cq->head = 0;
	return 0;
}

void mbx_cq_write_err(struct mbx_cq *cq, void *context, uint64_t flags, int err,
		      size_t len, size_t olen, uint64_t tag, uint64_t data, void *buf,
		      fi_addr_t src)
{
	struct mbx_cq_err *e = calloc(1, sizeof(*e));

	if (!e) {
		MBX_WARN(FI_LOG_CQ, "out of memory: error completion (%s) lost\n",
			 fi_strerror(err));
		return;
	}
	e->e.op_context = context;
	e->e.flags = flags;
	e->e.len = len;
	e->e.buf = buf;
	e->e.data = data;
	e->e.tag = tag;
	e->e.olen = olen;
	e->e.err = err;
	e->e.prov_errno = -err;
	e->src = src;
	mbu_dlist_insert_tail(&e->link, &cq->errs);
}

void mbx_progress_cq_eps(struct mbx_ep **eps, int n)
{
	int i;

	for (i = 0; i < n; i++)
		mbx_ep_progress(eps[i]);
}

static int cq_close(struct fid *fid)
{
	struct mbx_cq *cq = mbu_container_of(fid, struct mbx_cq, cq.fid);
	struct mbu_dlist *it;

	if (atomic_load(&cq->refs))
		return -FI_EBUSY;
	while ((it = mbu_dlist_pop(&cq->errs)))
		free(mbu_container_of(it, struct mbx_cq_err, link));
	mbx_waitable_fini(&cq->w, &cq->cq.fid);
	free(cq->ring);
	atomic_fetch_sub(&cq->dom->refs, 1);
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int cmd, void *arg)
{
	struct mbx_cq *cq = mbu_container_of(fid, struct mbx_cq, cq.fid);

	/* FI_GETWAIT: an epoll descriptor, readable when the CQ's endpoints
	 * have work (after fi_trywait said to sleep; see mbx_wait.c). */
	return cmd == FI_GETWAIT ? mbx_waitable_getwait(&cq->w, cq->wait_obj, arg) : -FI_ENOSYS;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = mbx_no_bind,
	.control = cq_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED: return sizeof(struct fi_cq_tagged_entry);
	default: return 0;
	}
}

static inline void tagged_of(struct fi_cq_tagged_entry *t, const struct mbx_cqe *e)
{
	*t = (struct fi_cq_tagged_entry){.op_context = e->context, .flags = e->flags,
					 .len = e->len, .buf = e->buf, .data = e->data,
					 .tag = e->tag};
}

static void convert(enum fi_cq_format f, void *out, const struct mbx_cqe *e)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		((struct fi_cq_entry *)out)->op_context = e->context;
		break;
	case FI_CQ_FORMAT_MSG: {
		struct fi_cq_msg_entry *m = out;

		m->op_context = e->context;
		m->flags = e->flags;
		m->len = e->len;
		break;
	}
	case FI_CQ_FORMAT_DATA: {
		struct fi_cq_data_entry *d = out;

		d->op_context = e->context;
		d->flags = e->flags;
		d->len = e->len;
		d->buf = e->buf;
		d->data = e->data;
		break;
	}
	default:
		tagged_of(out, e);
		break;
	}
}

static ssize_t cq_drain(struct mbx_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	size_t esz = entry_size(cq->format), n = 0;
	char *out = buf;

	if (!mbu_dlist_empty(&cq->errs))
		return -FI_EAVAIL;
	/* The tagged format without addresses is what MPI reads: copied
	 * straight, not through convert()'s switch per entry. */
	if (cq->format == FI_CQ_FORMAT_TAGGED && !src) {
		struct fi_cq_tagged_entry *t = buf;
		size_t take = count < cq->count ? count : cq->count;

		for (n = 0; n < take; n++)
			tagged_of(&t[n], &cq->ring[(cq->head + n) & (cq->cap - 1)]);
		cq->head = (cq->head + take) & (cq->cap - 1);
		cq->count -= take;
		return n ? (ssize_t)n : -FI_EAGAIN;
	}
	while (n < count && cq->count) {
		struct mbx_cqe *e = &cq->ring[cq->head];

		convert(cq->format, out + n * esz, e);
		if (src)
			src[n] = e->src;
		cq->head = (cq->head + 1) & (cq->cap - 1);
		cq->count--;
		n++;
	}
	return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src)
{
	struct mbx_cq *cq = mbu_container_of(fcq, struct mbx_cq, cq);
	ssize_t ret;

	if (!buf && count)
		return -FI_EINVAL;
	mbx_lock(cq->dom);
	if (!cq->count) {
		mbx_progress_cq_eps(cq->eps, cq->neps);
		/* Still nothing: the usual answer to a rank polling for its
		 * neighbour, given without the drain's set-up. */
		if (!cq->count) {
			ret = mbu_dlist_empty(&cq->errs) ? -FI_EAGAIN : -FI_EAVAIL;
			mbx_unlock(cq->dom);
			return ret;
		}
	}
	ret = cq_drain(cq, buf, count, src);
	mbx_unlock(cq->dom);
	return ret;
}

static ssize_t cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return cq_readfrom(cq, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct mbx_cq *cq = mbu_container_of(fcq, struct mbx_cq, cq);
	struct mbx_cq_err *e;
	uint32_t api = cq->dom->fab->fabric.api_version;

	if (!buf)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EBADFLAGS;
	mbx_lock(cq->dom);
	if (mbu_dlist_empty(&cq->errs)) {
		mbx_unlock(cq->dom);
		return -FI_EAGAIN;
	}
	e = mbu_container_of(cq->errs.next, struct mbx_cq_err, link);
	if (FI_VERSION_GE(api, FI_VERSION(1, 5))) {
		/* The caller owns err_data; we have no extra data to give. */
		void *ed = buf->err_data;

		*buf = e->e;
		buf->err_data = ed;
		buf->err_data_size = 0;
	} else {
		memcpy(buf, &e->e, offsetof(struct fi_cq_err_entry, err_data) + sizeof(void *));
		buf->err_data = NULL;
	}
	if (!(flags & FI_PEEK)) {
		mbu_dlist_remove(&e->link);
		free(e);
	}
	mbx_unlock(cq->dom);
	return 1;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src,
			    const void *cond, int timeout)
{
	struct mbx_cq *cq = mbu_container_of(fcq, struct mbx_cq, cq);
	uint64_t start = mbu_now_ns(), spin = (uint64_t)mbx_param.spin_us * 1000;
	uint64_t deadline = timeout >= 0 ? start + (uint64_t)timeout * 1000000ULL : UINT64_MAX;
	ssize_t ret;

	(void)cond;
	if (cq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	if (!buf && count)
		return -FI_EINVAL;
	for (;;) {
		uint64_t now;

		ret = cq_readfrom(fcq, buf, count, src);
		if (ret != -FI_EAGAIN)
			return ret;
		if (atomic_exchange(&cq->signaled, 0))
			return -FI_EAGAIN;
		now = mbu_now_ns();
		if (now >= deadline)
			return -FI_EAGAIN;
		if (now - start < spin || cq->wait_obj == FI_WAIT_YIELD || !cq->neps) {
			if (now - start >= spin)
				sched_yield();
			continue;
		}
		/* Sleep on one endpoint's doorbell; with several, wake often
		 * enough to look at the others too. */
		mbx_lock(cq->dom);
		if (cq->neps)
			mbx_ep_wait(cq->eps[0], (long)(deadline - now > 100000000ULL ?
						       100000000ULL : deadline - now) /
					 (cq->neps > 1 ? 100 : 1));
		mbx_unlock(cq->dom);
	}
}

static ssize_t cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond,
			int timeout)
{
	return cq_sreadfrom(cq, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fcq)
{
	struct mbx_cq *cq = mbu_container_of(fcq, struct mbx_cq, cq);

	atomic_store(&cq->signaled, 1);
	return 0;
}

static const char *cq_strerror(struct fid_cq *cq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	const char *s = fi_strerror(prov_errno);

	(void)cq; (void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

int mbx_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **fcq,
		void *context)
{
	struct mbx_domain *d = mbu_container_of(domain, struct mbx_domain, domain);
	struct mbx_cq *cq;
	size_t cap = 1024;

	if (!attr || !fcq)
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)FI_AFFINITY)
		return -FI_EBADFLAGS;
	if (attr->format == FI_CQ_FORMAT_UNSPEC)
		attr->format = FI_CQ_FORMAT_CONTEXT;
	if (!entry_size(attr->format))
		return -FI_ENOSYS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_YIELD:
	case FI_WAIT_FD:
		break;
	case FI_WAIT_SET:
		if (!attr->wait_set)
			return -FI_EINVAL;
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE && attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return -FI_EINVAL;
	while (cap < attr->size)
		cap *= 2;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->ring = calloc(cap, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -FI_ENOMEM;
	}
	cq->cap = cap;
	cq->format = attr->format;
	cq->wait_obj = attr->wait_obj;
	if (mbx_waitable_init(&cq->w, attr->wait_obj, attr->wait_set, &cq->cq.fid)) {
		free(cq->ring);
		free(cq);
		return -FI_EINVAL;
	}
	cq->dom = d;
	mbu_dlist_init(&cq->errs);
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	atomic_fetch_add(&d->refs, 1);
	*fcq = &cq->cq;
	return 0;
}

/* ---- counters ---- */

static int cntr_close(struct fid *fid)
{
	struct mbx_cntr *c = mbu_container_of(fid, struct mbx_cntr, cntr.fid);

	if (atomic_load(&c->refs))
		return -FI_EBUSY;
	mbx_waitable_fini(&c->w, &c->cntr.fid);
	atomic_fetch_sub(&c->dom->refs, 1);
	free(c);
	return 0;
}

static int cntr_control(struct fid *fid, int cmd, void *arg)
{
	struct mbx_cntr *c = mbu_container_of(fid, struct mbx_cntr, cntr.fid);

	return cmd == FI_GETWAIT ? mbx_waitable_getwait(&c->w, c->wait_obj, arg) : -FI_ENOSYS;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = mbx_no_bind,
	.control = cntr_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

void mbx_cntr_progress_locked(struct mbx_cntr *c)
{
	struct mbu_dlist *it;

	if (c->neps) {
		mbx_progress_cq_eps(c->eps, c->neps);
		return;
	}
	/* Bound to regions only: their accesses arrive at any endpoint. */
	mbu_dlist_foreach(&c->dom->eps, it)
		mbx_ep_progress(mbu_container_of(it, struct mbx_ep, dom_link));
}

static void cntr_progress(struct mbx_cntr *c)
{
	mbx_lock(c->dom);
	mbx_cntr_progress_locked(c);
	mbx_unlock(c->dom);
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	struct mbx_cntr *c = mbu_container_of(fc, struct mbx_cntr, cntr);

	cntr_progress(c);
	return atomic_load_explicit(&c->value, memory_order_acquire);
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	struct mbx_cntr *c = mbu_container_of(fc, struct mbx_cntr, cntr);

	cntr_progress(c);
	return atomic_load_explicit(&c->err, memory_order_acquire);
}

static int cntr_add(struct fid_cntr *fc, uint64_t v)
{
	atomic_fetch_add(&mbu_container_of(fc, struct mbx_cntr, cntr)->value, v);
	return 0;
}

static int cntr_set(struct fid_cntr *fc, uint64_t v)
{
	atomic_store(&mbu_container_of(fc, struct mbx_cntr, cntr)->value, v);
	return 0;
}

static int cntr_adderr(struct fid_cntr *fc, uint64_t v)
{
	atomic_fetch_add(&mbu_container_of(fc, struct mbx_cntr, cntr)->err, v);
	return 0;
}

static int cntr_seterr(struct fid_cntr *fc, uint64_t v)
{
	atomic_store(&mbu_container_of(fc, struct mbx_cntr, cntr)->err, v);
	return 0;
}

static int cntr_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	struct mbx_cntr *c = mbu_container_of(fc, struct mbx_cntr, cntr);
	uint64_t start = mbu_now_ns(), spin = (uint64_t)mbx_param.spin_us * 1000;
	uint64_t deadline = timeout >= 0 ? start + (uint64_t)timeout * 1000000ULL : UINT64_MAX;
	uint64_t errs = atomic_load(&c->err);

	/* FI_WAIT_NONE: polled, never asleep (libfabric's own counters and
	 * the programs written against them, fabtests' fi_multi_mr, do so). */
	for (;;) {
		uint64_t now;

		cntr_progress(c);
		if (atomic_load(&c->value) >= threshold)
			return 0;
		if (atomic_load(&c->err) != errs)
			return -FI_EAVAIL;
		now = mbu_now_ns();
		if (now >= deadline)
			return -FI_ETIMEDOUT;
		if (now - start < spin || !c->neps || c->wait_obj == FI_WAIT_NONE)
			continue;
		mbx_lock(c->dom);
		if (c->neps)
			mbx_ep_wait(c->eps[0], (long)(deadline - now > 100000000ULL ?
						      100000000ULL : deadline - now) /
				    (c->neps > 1 ? 100 : 1));
		mbx_unlock(c->dom);
	}
}

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

int mbx_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **fc, void *context)
{
	struct mbx_domain *d = mbu_container_of(domain, struct mbx_domain, domain);
	struct mbx_cntr *c;

	if (!attr || !fc)
		return -FI_EINVAL;
	if (attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr->flags)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_YIELD:
	case FI_WAIT_FD:
		break;
	case FI_WAIT_SET:
		if (!attr->wait_set)
			return -FI_EINVAL;
		break;
	default:
		return -FI_ENOSYS;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = d;
	c->wait_obj = attr->wait_obj;
	if (mbx_waitable_init(&c->w, attr->wait_obj, attr->wait_set, &c->cntr.fid)) {
		free(c);
		return -FI_EINVAL;
	}
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	atomic_fetch_add(&d->refs, 1);
	*fc = &c->cntr;
	return 0;
}
