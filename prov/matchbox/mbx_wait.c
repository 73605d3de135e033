/* Waiting in file descriptors: FI_WAIT_FD (and FI_WAIT_UNSPEC) CQs and
 * counters, wait sets (fi_wait_open, fi_wait), fi_trywait and
 * fi_control(FI_GETWAIT), so a program can sleep in epoll on several CQs.
 *
 * Every such object has an epoll set (its own, or its wait set's); each
 * endpoint bound to one puts two sockets in it when enabled: its name
 * service socket (peers resolving it) and a wake socket, an abstract
 * AF_UNIX datagram socket named in its shared segment. fi_trywait progresses
 * the endpoints and, when nothing is left to do, arms them: it counts
 * itself among the segment's sleepers and sets fd_armed, then looks once
 * more for work (the fence pairs with the senders': either it sees their
 * frame or they see it armed). A sender that finds the segment armed sends
 * one byte to the wake socket, which makes the epoll set readable. The next
 * progress of the endpoint disarms it and empties the socket. An endpoint
 * with a net wire also puts the wait descriptors of the wire's core CQs and
 * EQ there (and a timer that wakes it within 100 ms while it has net peers,
 * for the wire's probes and timeouts); it arms only when the core's
 * fi_trywait agrees and nothing under way needs polling (datagrams not yet
 * acknowledged, acknowledgements or credit owed, frames on their way). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mbx.h"
#include "mbx_net.h"
#include "mbu_futex.h"

#define MBX_WAIT_MAX 64

struct mbx_wait {
	struct fid_wait wait;
	struct mbx_fabric *fab;
	enum fi_wait_obj obj;
	int epfd;
	pthread_mutex_t lock;
	struct fid *m[MBX_WAIT_MAX];
	uint64_t seen[MBX_WAIT_MAX];	/* counters: value + errors at the last fi_wait */
	int n;
};

static int sun_of(const char *name, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = strnlen(name, sizeof(((struct mbx_seg_hdr *)0)->wake_name));

	if (!n || n >= sizeof(((struct mbx_seg_hdr *)0)->wake_name))
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, n);	/* abstract: a leading NUL */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	return 0;
}

/* One byte to a sleeping receiver; a full socket is already readable. */
void mbx_wake_send(const char *name)
{
	static _Atomic int tx = -1;
	struct sockaddr_un sa;
	socklen_t len;
	int fd = atomic_load(&tx);

	if (fd < 0) {
		int expect = -1;

		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return;
		if (!atomic_compare_exchange_strong(&tx, &expect, fd)) {
			close(fd);
			fd = expect;
		}
	}
	if (sun_of(name, &sa, &len))
		return;
	(void)sendto(fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
}

static void drain(int fd)
{
	char buf[64];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int epfd_of(const struct mbx_waitable *w)
{
	return w->fd >= 0 ? w->fd : w->set ? w->set->epfd : -1;
}

static void add_fd(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epfd >= 0 && fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) && errno != EEXIST)
		MBX_WARN(FI_LOG_EP_CTRL, "epoll_ctl: %s\n", strerror(errno));
}

/* At enable: the endpoint's sockets go into the epoll set of every CQ and
 * counter bound to it that can be waited on with a descriptor. */
int mbx_wake_attach(struct mbx_ep *ep)
{
	static _Atomic uint32_t seq;
	const struct mbx_waitable *ws[] = {
		ep->tx_cq ? &ep->tx_cq->w : NULL, ep->rx_cq ? &ep->rx_cq->w : NULL,
		ep->tx_cntr ? &ep->tx_cntr->w : NULL, ep->rx_cntr ? &ep->rx_cntr->w : NULL,
		ep->wr_cntr ? &ep->wr_cntr->w : NULL, ep->rd_cntr ? &ep->rd_cntr->w : NULL,
		ep->rwr_cntr ? &ep->rwr_cntr->w : NULL, ep->rrd_cntr ? &ep->rrd_cntr->w : NULL,
	};
	struct sockaddr_un sa;
	socklen_t len;
	char name[sizeof(ep->seg->wake_name)];
	size_t i;
	int fds[4], nfds, k;
	bool any = false;

	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
		any |= ws[i] && epfd_of(ws[i]) >= 0;
	if (!any || !ep->seg)
		return 0;
	snprintf(name, sizeof(name), "mbx-wake-%d-%u", (int)getpid(), atomic_fetch_add(&seq, 1));
	ep->wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (ep->wake_fd < 0 || sun_of(name, &sa, &len) ||
	    bind(ep->wake_fd, (struct sockaddr *)&sa, len)) {
		MBX_WARN(FI_LOG_EP_CTRL, "wake socket: %s\n", strerror(errno));
		if (ep->wake_fd >= 0)
			close(ep->wake_fd);
		ep->wake_fd = -1;
		return -FI_EOTHER;
	}
	memcpy(ep->seg->wake_name, name, sizeof(name));
	nfds = mbx_net_wait_fds(ep, fds);
	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		if (!ws[i])
			continue;
		add_fd(epfd_of(ws[i]), ep->wake_fd);
		add_fd(epfd_of(ws[i]), ep->name_fd);
		for (k = 0; k < nfds; k++)
			add_fd(epfd_of(ws[i]), fds[k]);
	}
	return 0;
}

void mbx_ep_disarm(struct mbx_ep *ep)
{
	if (!ep->armed)
		return;
	mbx_net_disarm(ep);
	ep->armed = false;
	atomic_store(&ep->seg->fd_armed, 0);
	atomic_fetch_sub(&ep->seg->sleepers, 1);
	drain(ep->wake_fd);
}

/* Closing the socket takes it out of every epoll set. */
void mbx_wake_detach(struct mbx_ep *ep)
{
	if (ep->seg)
		mbx_ep_disarm(ep);
	if (ep->wake_fd >= 0)
		close(ep->wake_fd);
	ep->wake_fd = -1;
}

/* With the domain lock held: 0 if the endpoint may sleep in its
 * descriptors, -FI_EAGAIN if there is work to do first, -FI_EBUSY if
 * sleeping there would miss work. */
static int ep_arm(struct mbx_ep *ep)
{
	int ret;

	/* -FI_EBUSY: nothing would wake the descriptor: the caller must keep
	 * polling. */
	if (!ep->enabled || ep->wake_fd < 0)
		return -FI_EBUSY;
	mbx_name_poll(ep);
	ret = mbx_net_arm(ep);
	if (ret)
		return ret;
	if (!ep->armed) {
		atomic_fetch_add(&ep->seg->sleepers, 1);
		atomic_store(&ep->seg->fd_armed, 1);
		ep->armed = true;
	}
	atomic_thread_fence(memory_order_seq_cst);
	return mbx_ep_work_visible(ep) ? -FI_EAGAIN : 0;
}

static int arm_eps(struct mbx_ep **eps, int n)
{
	int i;

	mbx_progress_cq_eps(eps, n);
	for (i = 0; i < n; i++) {
		int ret = ep_arm(eps[i]);

		if (ret)
			return ret;
	}
	return 0;
}

/* 1: the member has something for the caller (a counter: changed since
 * *seen, which is updated), 0: nothing yet. Progresses its endpoints. */
static int member_ready(struct fid *f, uint64_t *seen)
{
	if (f->fclass == FI_CLASS_EQ)
		return mbx_eq_ready(f);
	if (f->fclass == FI_CLASS_CQ) {
		struct mbx_cq *cq = mbu_container_of(f, struct mbx_cq, cq.fid);
		int r;

		mbx_lock(cq->dom);
		if (!cq->count && mbu_dlist_empty(&cq->errs))
			mbx_progress_cq_eps(cq->eps, cq->neps);
		r = cq->count || !mbu_dlist_empty(&cq->errs);
		mbx_unlock(cq->dom);
		return r;
	} else {
		struct mbx_cntr *c = mbu_container_of(f, struct mbx_cntr, cntr.fid);
		uint64_t now;

		mbx_lock(c->dom);
		mbx_cntr_progress_locked(c);
		mbx_unlock(c->dom);
		now = atomic_load(&c->value) + atomic_load(&c->err);
		if (now == *seen)
			return 0;
		*seen = now;
		return 1;
	}
}

static int trywait_one(struct fid *f)
{
	int ret;

	switch (f->fclass) {
	case FI_CLASS_CQ: {
		struct mbx_cq *cq = mbu_container_of(f, struct mbx_cq, cq.fid);

		if (epfd_of(&cq->w) < 0)
			return -FI_EINVAL;
		mbx_lock(cq->dom);
		ret = cq->count || !mbu_dlist_empty(&cq->errs) ? -FI_EAGAIN :
		      arm_eps(cq->eps, cq->neps);
		if (!ret && (cq->count || !mbu_dlist_empty(&cq->errs)))
			ret = -FI_EAGAIN;
		mbx_unlock(cq->dom);
		return ret;
	}
	case FI_CLASS_CNTR: {
		struct mbx_cntr *c = mbu_container_of(f, struct mbx_cntr, cntr.fid);

		if (epfd_of(&c->w) < 0)
			return -FI_EINVAL;
		mbx_lock(c->dom);
		ret = arm_eps(c->eps, c->neps);
		mbx_unlock(c->dom);
		return ret;
	}
	case FI_CLASS_EQ:
		/* Events are queued by calls, never by progress: nothing to arm. */
		if (!mbx_eq_waitable(f))
			return -FI_EINVAL;
		return mbx_eq_ready(f) ? -FI_EAGAIN : 0;
	case FI_CLASS_WAIT: {
		struct mbx_wait *ws = mbu_container_of(f, struct mbx_wait, wait.fid);
		int i;

		pthread_mutex_lock(&ws->lock);
		for (ret = 0, i = 0; i < ws->n && !ret; i++)
			ret = trywait_one(ws->m[i]);
		pthread_mutex_unlock(&ws->lock);
		return ret;
	}
	default:
		return -FI_EINVAL;
	}
}

int mbx_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	int i, ret;

	(void)fabric;
	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		if (!fids[i])
			return -FI_EINVAL;
		ret = trywait_one(fids[i]);
		if (ret)
			return ret == -FI_EBUSY ? -FI_EAGAIN : ret;
	}
	return 0;
}

/* ---- CQs and counters ---- */

int mbx_waitable_init(struct mbx_waitable *w, enum fi_wait_obj obj, struct fid_wait *set,
		      struct fid *member)
{
	w->fd = -1;
	w->set = NULL;
	switch (obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_YIELD:
		return 0;
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		w->fd = epoll_create1(EPOLL_CLOEXEC);
		return w->fd < 0 ? -FI_EMFILE : 0;
	case FI_WAIT_SET: {
		struct mbx_wait *ws;

		if (!set || set->fid.fclass != FI_CLASS_WAIT)
			return -FI_EINVAL;
		ws = mbu_container_of(set, struct mbx_wait, wait);
		pthread_mutex_lock(&ws->lock);
		if (ws->n == MBX_WAIT_MAX) {
			pthread_mutex_unlock(&ws->lock);
			return -FI_ENOSPC;
		}
		ws->seen[ws->n] = 0;
		ws->m[ws->n++] = member;
		pthread_mutex_unlock(&ws->lock);
		w->set = ws;
		return 0;
	}
	default:
		return -FI_ENOSYS;
	}
}

void mbx_waitable_fini(struct mbx_waitable *w, struct fid *member)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->set) {
		struct mbx_wait *ws = w->set;
		int i;

		pthread_mutex_lock(&ws->lock);
		for (i = 0; i < ws->n && ws->m[i] != member; i++)
			;
		if (i < ws->n) {
			ws->n--;
			ws->m[i] = ws->m[ws->n];
			ws->seen[i] = ws->seen[ws->n];
		}
		pthread_mutex_unlock(&ws->lock);
		w->set = NULL;
	}
}

int mbx_waitable_add_fd(struct mbx_waitable *w, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (epoll_ctl(epfd_of(w), EPOLL_CTL_ADD, fd, &ev))
		return -FI_EMFILE;
	return 0;
}

int mbx_waitable_getwait(struct mbx_waitable *w, enum fi_wait_obj obj, void *arg)
{
	if (!arg)
		return -FI_EINVAL;
	if (w->fd < 0 || (obj != FI_WAIT_FD && obj != FI_WAIT_UNSPEC))
		return -FI_ENODATA;	/* a wait set's member: ask the set */
	*(int *)arg = w->fd;
	return 0;
}

/* ---- wait sets ---- */

static int wait_wait(struct fid_wait *fw, int timeout)
{
	struct mbx_wait *ws = mbu_container_of(fw, struct mbx_wait, wait);
	uint64_t start = mbu_now_ns(), spin = (uint64_t)mbx_param.spin_us * 1000;
	uint64_t deadline = timeout >= 0 ? start + (uint64_t)timeout * 1000000ULL : UINT64_MAX;

	for (;;) {
		struct epoll_event ev[8];
		uint64_t now;
		int i, ready = 0, ms;

		pthread_mutex_lock(&ws->lock);
		for (i = 0; i < ws->n; i++)
			ready |= member_ready(ws->m[i], &ws->seen[i]);
		pthread_mutex_unlock(&ws->lock);
		if (ready)
			return 0;
		now = mbu_now_ns();
		if (now >= deadline)
			return -FI_ETIMEDOUT;
		if (now - start < spin || ws->obj == FI_WAIT_YIELD) {
			if (now - start >= spin)
				sched_yield();
			continue;
		}
		i = trywait_one(&ws->wait.fid);
		if (i == -FI_EAGAIN)
			continue;	/* work arrived meanwhile */
		/* Net peers wake no descriptor: sleep a millisecond at most. */
		ms = i ? 1 : deadline == UINT64_MAX ? -1 :
		     (int)((deadline - now + 999999) / 1000000);
		(void)epoll_wait(ws->epfd, ev, 8, ms);
	}
}

static int wait_control(struct fid *fid, int cmd, void *arg)
{
	struct mbx_wait *ws = mbu_container_of(fid, struct mbx_wait, wait.fid);

	if (cmd != FI_GETWAIT)
		return -FI_ENOSYS;
	if (!arg)
		return -FI_EINVAL;
	if (ws->obj != FI_WAIT_FD && ws->obj != FI_WAIT_UNSPEC)
		return -FI_ENODATA;
	*(int *)arg = ws->epfd;
	return 0;
}

static int wait_close(struct fid *fid)
{
	struct mbx_wait *ws = mbu_container_of(fid, struct mbx_wait, wait.fid);

	if (ws->n)
		return -FI_EBUSY;
	close(ws->epfd);
	pthread_mutex_destroy(&ws->lock);
	atomic_fetch_sub(&ws->fab->refs, 1);
	free(ws);
	return 0;
}

static struct fi_ops wait_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = wait_close,
	.bind = mbx_no_bind,
	.control = wait_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static struct fi_ops_wait wait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = wait_wait,
};

int mbx_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr, struct fid_wait **out)
{
	struct mbx_fabric *fab = mbu_container_of(fabric, struct mbx_fabric, fabric);
	struct mbx_wait *ws;

	if (!attr || !out)
		return -FI_EINVAL;
	if (attr->flags)
		return -FI_EBADFLAGS;
	if (attr->wait_obj != FI_WAIT_UNSPEC && attr->wait_obj != FI_WAIT_FD &&
	    attr->wait_obj != FI_WAIT_YIELD)
		return -FI_ENOSYS;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -FI_ENOMEM;
	ws->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ws->epfd < 0) {
		free(ws);
		return -FI_EMFILE;
	}
	pthread_mutex_init(&ws->lock, NULL);
	ws->obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD : attr->wait_obj;
	ws->fab = fab;
	ws->wait.fid.fclass = FI_CLASS_WAIT;
	ws->wait.fid.ops = &wait_fi_ops;
	ws->wait.ops = &wait_ops;
	atomic_fetch_add(&fab->refs, 1);
	*out = &ws->wait;
	return 0;
}
