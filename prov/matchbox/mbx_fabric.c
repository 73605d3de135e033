/* The fabric object and event queues. Matchbox's endpoints are
 * connectionless and its control operations complete synchronously, so an EQ
 * carries only what the application writes into it (fi_eq_write); it exists
 * because applications such as fi_pingpong open one on every fabric. */
#include "mbx.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fabric_close(struct fid *fid)
{
	struct mbx_fabric *fab = mbu_container_of(fid, struct mbx_fabric, fabric.fid);

	if (atomic_load(&fab->refs))
		return -FI_EBUSY;
	free(fab);
	return 0;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = mbx_no_bind,
	.control = mbx_no_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static int no_passive_ep(struct fid_fabric *f, struct fi_info *i, struct fid_pep **p, void *c)
{
	(void)f; (void)i; (void)p; (void)c;
	return -FI_ENOSYS;
}

static int domain2(struct fid_fabric *f, struct fi_info *i, struct fid_domain **d,
		   uint64_t flags, void *c)
{
	if (flags)
		return -FI_EBADFLAGS;
	return mbx_domain_open(f, i, d, c);
}

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = mbx_domain_open,
	.passive_ep = no_passive_ep,
	.eq_open = mbx_eq_open,
	.wait_open = mbx_wait_open,
	.trywait = mbx_trywait,
	.domain2 = domain2,
};

int mbx_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct mbx_fabric *fab;

	if (!attr || !fabric)
		return -FI_EINVAL;
	if (attr->name && strcmp(attr->name, MBX_FABRIC_NAME))
		return -FI_ENODATA;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = context;
	fab->fabric.fid.ops = &fabric_fi_ops;
	fab->fabric.ops = &fabric_ops;
	fab->fabric.api_version = attr->api_version;
	*fabric = &fab->fabric;
	return 0;
}

/* ---- event queue ---- */

struct mbx_eq_event {
	struct mbu_dlist link;
	uint32_t event;
	bool err;
	size_t len;
	struct fi_eq_err_entry errent;
	char data[];
};

/* An EQ that can be waited on in a descriptor (FI_WAIT_FD, or a wait set)
 * keeps an eventfd readable while it holds events; it sits in the EQ's own
 * epoll set or in its wait set's. */
struct mbx_eq {
	struct fid_eq eq;
	struct mbx_fabric *fab;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct mbu_dlist events;
	enum fi_wait_obj wait_obj;
	struct mbx_waitable w;
	int efd;
};

static void eq_signal(struct mbx_eq *eq)
{
	uint64_t one = 1;

	if (eq->efd >= 0 && write(eq->efd, &one, sizeof(one)) < 0)
		MBX_WARN(FI_LOG_EQ, "eventfd write: %s\n", strerror(errno));
}

/* The queue just emptied: the descriptor stops being readable. */
static void eq_quiet(struct mbx_eq *eq)
{
	uint64_t v;

	if (eq->efd >= 0 && mbu_dlist_empty(&eq->events))
		while (read(eq->efd, &v, sizeof(v)) > 0)
			;
}

bool mbx_eq_ready(struct fid *f)
{
	struct mbx_eq *eq = mbu_container_of(f, struct mbx_eq, eq.fid);
	bool r;

	pthread_mutex_lock(&eq->lock);
	r = !mbu_dlist_empty(&eq->events);
	pthread_mutex_unlock(&eq->lock);
	return r;
}

bool mbx_eq_waitable(struct fid *f)
{
	return mbu_container_of(f, struct mbx_eq, eq.fid)->efd >= 0;
}

static int eq_close(struct fid *fid)
{
	struct mbx_eq *eq = mbu_container_of(fid, struct mbx_eq, eq.fid);
	struct mbu_dlist *it;

	while ((it = mbu_dlist_pop(&eq->events)))
		free(mbu_container_of(it, struct mbx_eq_event, link));
	mbx_waitable_fini(&eq->w, &eq->eq.fid);
	if (eq->efd >= 0)
		close(eq->efd);
	pthread_mutex_destroy(&eq->lock);
	pthread_cond_destroy(&eq->cond);
	atomic_fetch_sub(&eq->fab->refs, 1);
	free(eq);
	return 0;
}

static int eq_control(struct fid *fid, int cmd, void *arg)
{
	struct mbx_eq *eq = mbu_container_of(fid, struct mbx_eq, eq.fid);

	if (cmd != FI_GETWAIT)
		return -FI_ENOSYS;
	return mbx_waitable_getwait(&eq->w, eq->wait_obj, arg);
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = mbx_no_bind,
	.control = eq_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static ssize_t eq_read_locked(struct mbx_eq *eq, uint32_t *event, void *buf, size_t len,
			      uint64_t flags)
{
	struct mbx_eq_event *ev;
	ssize_t n;

	if (mbu_dlist_empty(&eq->events))
		return -FI_EAGAIN;
	ev = mbu_container_of(eq->events.next, struct mbx_eq_event, link);
	if (ev->err)
		return -FI_EAVAIL;
	if (len < ev->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = ev->event;
	if (buf)
		memcpy(buf, ev->data, ev->len);
	n = (ssize_t)ev->len;
	if (!(flags & FI_PEEK)) {
		mbu_dlist_remove(&ev->link);
		free(ev);
		eq_quiet(eq);
	}
	return n;
}

static ssize_t eq_read(struct fid_eq *feq, uint32_t *event, void *buf, size_t len,
		       uint64_t flags)
{
	struct mbx_eq *eq = mbu_container_of(feq, struct mbx_eq, eq);
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&eq->lock);
	ret = eq_read_locked(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *feq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct mbx_eq *eq = mbu_container_of(feq, struct mbx_eq, eq);
	struct mbx_eq_event *ev;
	ssize_t ret = -FI_EAGAIN;

	if (!buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	if (!mbu_dlist_empty(&eq->events)) {
		ev = mbu_container_of(eq->events.next, struct mbx_eq_event, link);
		if (ev->err) {
			*buf = ev->errent;
			buf->err_data = NULL;
			buf->err_data_size = 0;
			ret = sizeof(*buf);
			if (!(flags & FI_PEEK)) {
				mbu_dlist_remove(&ev->link);
				free(ev);
				eq_quiet(eq);
			}
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static ssize_t eq_write(struct fid_eq *feq, uint32_t event, const void *buf, size_t len,
			uint64_t flags)
{
	struct mbx_eq *eq = mbu_container_of(feq, struct mbx_eq, eq);
	struct mbx_eq_event *ev;

	(void)flags;	/* informational for user events */
	if (len && !buf)
		return -FI_EINVAL;
	if (len > (1 << 20))
		return -FI_EINVAL;
	ev = calloc(1, sizeof(*ev) + len);
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->len = len;
	if (len)
		memcpy(ev->data, buf, len);
	pthread_mutex_lock(&eq->lock);
	mbu_dlist_insert_tail(&ev->link, &eq->events);
	eq_signal(eq);
	pthread_cond_broadcast(&eq->cond);
	pthread_mutex_unlock(&eq->lock);
	return (ssize_t)len;
}

int mbx_eq_write_err(struct fid_eq *feq, const struct fi_eq_err_entry *e)
{
	struct mbx_eq *eq = mbu_container_of(feq, struct mbx_eq, eq);
	struct mbx_eq_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return -FI_ENOMEM;
	ev->err = true;
	ev->errent = *e;
	pthread_mutex_lock(&eq->lock);
	mbu_dlist_insert_tail(&ev->link, &eq->events);
	eq_signal(eq);
	pthread_cond_broadcast(&eq->cond);
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

static ssize_t eq_sread(struct fid_eq *feq, uint32_t *event, void *buf, size_t len,
			int timeout, uint64_t flags)
{
	struct mbx_eq *eq = mbu_container_of(feq, struct mbx_eq, eq);
	struct timespec ts;
	ssize_t ret;

	if (flags & ~FI_PEEK)
		return -FI_EBADFLAGS;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (timeout >= 0) {
		ts.tv_sec += timeout / 1000;
		ts.tv_nsec += (long)(timeout % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&eq->lock);
	for (;;) {
		ret = eq_read_locked(eq, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			break;
		if (timeout < 0) {
			pthread_cond_wait(&eq->cond, &eq->lock);
		} else if (pthread_cond_timedwait(&eq->cond, &eq->lock, &ts) == ETIMEDOUT) {
			ret = eq_read_locked(eq, event, buf, len, flags);
			break;
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return ret;
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	(void)eq; (void)err_data;
	if (buf && len) {
		strncpy(buf, fi_strerror(prov_errno), len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return fi_strerror(prov_errno);
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int mbx_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **feq,
		void *context)
{
	struct mbx_fabric *fab = mbu_container_of(fabric, struct mbx_fabric, fabric);
	struct mbx_eq *eq;
	int ret;

	if (!attr || !feq)
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)FI_WRITE)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_MUTEX_COND:
	case FI_WAIT_FD:
		break;
	case FI_WAIT_SET:
		if (!attr->wait_set)
			return -FI_EINVAL;
		break;
	default:
		return -FI_ENOSYS;
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->efd = -1;
	eq->wait_obj = attr->wait_obj;
	/* sread waits on the condition variable either way; a descriptor is
	 * made only where one is asked for. */
	if (attr->wait_obj == FI_WAIT_FD || attr->wait_obj == FI_WAIT_SET) {
		ret = mbx_waitable_init(&eq->w, attr->wait_obj, attr->wait_set, &eq->eq.fid);
		if (!ret) {
			eq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			ret = eq->efd < 0 ? -FI_EMFILE : mbx_waitable_add_fd(&eq->w, eq->efd);
		}
		if (ret) {
			mbx_waitable_fini(&eq->w, &eq->eq.fid);
			if (eq->efd >= 0)
				close(eq->efd);
			free(eq);
			return ret;
		}
	} else {
		eq->w.fd = -1;
	}
	pthread_mutex_init(&eq->lock, NULL);
	pthread_cond_init(&eq->cond, NULL);
	mbu_dlist_init(&eq->events);
	eq->fab = fab;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &eq_fi_ops;
	eq->eq.ops = &eq_ops;
	atomic_fetch_add(&fab->refs, 1);
	*feq = &eq->eq;
	return 0;
}
