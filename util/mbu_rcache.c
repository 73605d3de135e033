/* The registration cache and its memory monitor (see mbu_rcache.h).
 *
 * The monitor is one userfaultfd per process, read by one thread, shared by
 * every cache; ranges are registered with it in write-protect mode, which
 * asks for the unmap/remove/remap events and never for page faults (nothing
 * is ever write-protected). A thread that unmaps a watched range is held by
 * the kernel until the monitor has read the event; the monitor counts itself
 * busy before it reads and idle only after it has dropped the registrations,
 * and a lookup waits while it is busy, so a lookup made after munmap returned
 * never sees the old registration. Registrations are released only by their
 * cache's owner (never by the monitor thread), because the core objects
 * behind them are not ours to touch from another thread. */
#include "mbu_rcache.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

static struct {
	pthread_mutex_t life;		/* starting and stopping the monitor */
	pthread_mutex_t lock;		/* every cache's index, and the list */
	struct mbu_dlist caches;	/* monitored caches */
	int uffd, stop_fd;
	pthread_t thread;
	bool running;
	bool forked;			/* in a child: the monitor is the parent's */
	bool atfork_set;
	const char *why;
	atomic_uint busy;
} mon = {
	.life = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.caches = { &mon.caches, &mon.caches },
	.uffd = -1,
	.stop_fd = -1,
	.why = "not started",
};

static uintptr_t page_mask(void)
{
	static uintptr_t mask;

	if (!mask)
		mask = (uintptr_t)sysconf(_SC_PAGESIZE) - 1;
	return mask;
}

/* ---- the index: sorted, disjoint ---- */

/* First position whose entry starts after `a`. */
static size_t idx_upper(const struct mbu_rcache *c, uintptr_t a)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->idx[mid]->start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entries overlapping [s, e) are idx[*lo .. *hi). */
static void idx_overlap(const struct mbu_rcache *c, uintptr_t s, uintptr_t e, size_t *lo,
			size_t *hi)
{
	size_t p = idx_upper(c, s);

	*lo = (p > 0 && c->idx[p - 1]->end > s) ? p - 1 : p;
	for (p = *lo; p < c->n && c->idx[p]->start < e; p++)
		;
	*hi = p;
}

static void idx_cut(struct mbu_rcache *c, size_t lo, size_t hi)
{
	if (lo == hi)
		return;
	for (size_t i = lo; i < hi; i++)
		c->bytes -= c->idx[i]->end - c->idx[i]->start;
	memmove(&c->idx[lo], &c->idx[hi], (c->n - hi) * sizeof(*c->idx));
	c->n -= hi - lo;
}

static int idx_insert(struct mbu_rcache *c, size_t at, struct mbu_rcache_entry *e)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *p = realloc(c->idx, cap * sizeof(*c->idx));

		if (!p)
			return -ENOMEM;
		c->idx = p;
		c->cap = cap;
	}
	memmove(&c->idx[at + 1], &c->idx[at], (c->n - at) * sizeof(*c->idx));
	c->idx[at] = e;
	c->n++;
	c->bytes += e->end - e->start;
	return 0;
}

/* Out of the index for good: released now if unused, else when put. */
static void drop(struct mbu_rcache_entry *e, struct mbu_dlist *to)
{
	e->stale = true;
	if (!e->refs) {
		mbu_dlist_remove(&e->link);
		mbu_dlist_insert_tail(&e->link, to);
	}
}

static void release(struct mbu_rcache *c, struct mbu_rcache_entry *e)
{
	c->ops->dereg(c->arg, e->handle);
	free(e);
}

static void release_dead(struct mbu_rcache *c)
{
	struct mbu_dlist *it;

	while ((it = mbu_dlist_pop(&c->dead)))
		release(c, mbu_container_of(it, struct mbu_rcache_entry, link));
}

/* ---- the monitor ---- */

static void invalidate(uintptr_t s, uintptr_t e)
{
	struct mbu_dlist *it;

	for (it = mon.caches.next; it != &mon.caches; it = it->next) {
		struct mbu_rcache *c = mbu_container_of(it, struct mbu_rcache, mon_link);
		size_t lo, hi;

		idx_overlap(c, s, e, &lo, &hi);
		for (size_t i = lo; i < hi; i++) {
			drop(c->idx[i], &c->dead);
			c->st.invalidated++;
		}
		idx_cut(c, lo, hi);
	}
}

/* Nothing is write-protected and missing pages are never asked for, so a
 * fault should not reach us; if one does, let the thread go on rather than
 * hang it. */
static void unblock(const struct uffd_msg *m)
{
	uintptr_t a = (uintptr_t)m->arg.pagefault.address & ~page_mask();
	struct uffdio_range r = { .start = a, .len = page_mask() + 1 };

	if (m->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) {
		struct uffdio_writeprotect wp = { .range = r, .mode = 0 };

		ioctl(mon.uffd, UFFDIO_WRITEPROTECT, &wp);
	} else {
		struct uffdio_zeropage z = { .range = r, .mode = 0 };

		if (ioctl(mon.uffd, UFFDIO_ZEROPAGE, &z))
			ioctl(mon.uffd, UFFDIO_WAKE, &r);
	}
}

static void *monitor(void *arg)
{
	struct uffd_msg msg[32];

	(void)arg;
	for (;;) {
		struct pollfd pfd[2] = { { mon.uffd, POLLIN, 0 }, { mon.stop_fd, POLLIN, 0 } };
		ssize_t got;

		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents)
			return NULL;
		if (!pfd[0].revents)
			continue;
		atomic_fetch_add(&mon.busy, 1);
		while ((got = read(mon.uffd, msg, sizeof(msg))) > 0) {
			size_t k = (size_t)got / sizeof(msg[0]);

			pthread_mutex_lock(&mon.lock);
			for (size_t i = 0; i < k; i++) {
				const struct uffd_msg *m = &msg[i];

				switch (m->event) {
				case UFFD_EVENT_UNMAP:
				case UFFD_EVENT_REMOVE:
					invalidate(m->arg.remove.start, m->arg.remove.end);
					break;
				case UFFD_EVENT_REMAP:
					invalidate(m->arg.remap.from,
						   m->arg.remap.from + m->arg.remap.len);
					break;
				case UFFD_EVENT_PAGEFAULT:
					unblock(m);
					break;
				default:
					break;
				}
			}
			pthread_mutex_unlock(&mon.lock);
		}
		atomic_fetch_sub(&mon.busy, 1);
	}
}

static void in_child(void)
{
	/* The monitor thread and its watch stayed with the parent. */
	mon.forked = true;
}

static int uffd_open(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	/* Kernels before 5.11 know no user-mode-only flag. */
	if (fd < 0 && errno == EINVAL)
		fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		mon.why = errno == ENOSYS ? "no userfaultfd system call"
			  : errno == EPERM ? "userfaultfd not permitted"
			  : "userfaultfd failed";
		return -1;
	}
	if (ioctl((int)fd, UFFDIO_API, &api) ||
	    !(api.ioctls & (1ULL << _UFFDIO_REGISTER))) {
		mon.why = "userfaultfd without the events needed";
		close((int)fd);
		return -1;
	}
	return (int)fd;
}

static bool monitor_start(void)
{
	uint64_t base = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
			UFFD_FEATURE_EVENT_REMAP;
	sigset_t all, old;
	int err = -1;

	if (mon.running)
		return true;
	if (mon.forked) {
		mon.why = "in a forked child";
		return false;
	}
#ifdef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
	mon.uffd = uffd_open(base | UFFD_FEATURE_WP_HUGETLBFS_SHMEM);
	if (mon.uffd < 0)
#endif
		mon.uffd = uffd_open(base);
	if (mon.uffd < 0)
		return false;
	mon.stop_fd = eventfd(0, EFD_CLOEXEC);
	/* The thread takes no signal of the application's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (mon.stop_fd >= 0)
		err = pthread_create(&mon.thread, NULL, monitor, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (mon.stop_fd < 0 || err) {
		mon.why = "could not start the monitor thread";
		if (mon.stop_fd >= 0)
			close(mon.stop_fd);
		close(mon.uffd);
		mon.uffd = mon.stop_fd = -1;
		return false;
	}
	if (!mon.atfork_set)
		mon.atfork_set = pthread_atfork(NULL, NULL, in_child) == 0;
	mon.running = true;
	mon.why = NULL;
	return true;
}

static void monitor_stop(void)
{
	uint64_t one = 1;

	if (!mon.running)
		return;
	if (write(mon.stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(mon.thread, NULL);
	/* Closing the descriptor ends every watch it holds. */
	close(mon.uffd);
	close(mon.stop_fd);
	mon.uffd = mon.stop_fd = -1;
	mon.running = false;
	mon.why = "stopped";
}

/* An application that never closed its endpoints still must not leave the
 * thread running in code that is about to be unloaded. */
__attribute__((destructor)) static void monitor_unload(void)
{
	pthread_mutex_lock(&mon.life);
	if (!mon.forked)
		monitor_stop();
	pthread_mutex_unlock(&mon.life);
}

const char *mbu_rcache_monitor(const char **why)
{
	if (why)
		*why = mon.why;
	return mon.running && !mon.forked ? "userfaultfd" : "none";
}

static bool watch(uintptr_t s, uintptr_t e)
{
	struct uffdio_register r = {
		.range = { .start = s, .len = e - s },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	return ioctl(mon.uffd, UFFDIO_REGISTER, &r) == 0;
}

static void unwatch(const struct mbu_rcache *c, uintptr_t s, uintptr_t e)
{
	struct uffdio_range r = { .start = s, .len = e - s };
	size_t lo, hi;

	/* Pages of a live entry stay watched (a stale entry's may be part of
	 * the entry that replaced it). */
	idx_overlap(c, s, e, &lo, &hi);
	if (lo == hi)
		ioctl(mon.uffd, UFFDIO_UNREGISTER, &r);
}

/* ---- the cache ---- */

int mbu_rcache_init(struct mbu_rcache *c, const struct mbu_rcache_ops *ops, void *arg,
		    size_t max_count, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->arg = arg;
	c->max_count = max_count;
	c->max_bytes = max_bytes;
	mbu_dlist_init(&c->lru);
	mbu_dlist_init(&c->dead);
	mbu_dlist_init(&c->mon_link);
	if (!max_count || !max_bytes)
		return 0;
	pthread_mutex_lock(&mon.life);
	if (monitor_start()) {
		pthread_mutex_lock(&mon.lock);
		mbu_dlist_insert_tail(&c->mon_link, &mon.caches);
		pthread_mutex_unlock(&mon.lock);
		c->monitored = true;
	}
	pthread_mutex_unlock(&mon.life);
	return 0;
}

void mbu_rcache_fini(struct mbu_rcache *c)
{
	struct mbu_dlist *it;
	bool last;

	if (!c->monitored)
		return;
	pthread_mutex_lock(&mon.life);
	pthread_mutex_lock(&mon.lock);
	mbu_dlist_remove(&c->mon_link);
	last = mbu_dlist_empty(&mon.caches);
	pthread_mutex_unlock(&mon.lock);
	/* No monitor can reach this cache now; an emptied index lets every
	 * range be unwatched. */
	c->n = 0;
	while ((it = mbu_dlist_pop(&c->lru))) {
		struct mbu_rcache_entry *e = mbu_container_of(it, struct mbu_rcache_entry, link);

		if (!mon.forked)
			unwatch(c, e->start, e->end);
		release(c, e);
	}
	release_dead(c);
	free(c->idx);
	c->idx = NULL;
	c->n = c->cap = c->bytes = 0;
	c->monitored = false;
	if (last && !mon.forked)
		monitor_stop();
	pthread_mutex_unlock(&mon.life);
}

/* An unmap the monitor has read but not yet applied must not be missed by
 * a lookup made after munmap returned. */
static void lock_applied(void)
{
	while (atomic_load(&mon.busy))
		sched_yield();
	pthread_mutex_lock(&mon.lock);
}

static int one_use(struct mbu_rcache *c, uintptr_t s, uintptr_t e, struct mbu_rcache_entry **out)
{
	struct mbu_rcache_entry *n = calloc(1, sizeof(*n));
	int ret;

	if (!n)
		return -ENOMEM;
	ret = c->ops->reg(c->arg, (void *)s, e - s, &n->handle);
	if (ret) {
		free(n);
		return ret;
	}
	n->start = s;
	n->end = e;
	n->refs = 1;
	mbu_dlist_init(&n->link);
	*out = n;
	return 0;
}

/* Room for one more entry of `len` bytes: the least recently used go. */
static void evict(struct mbu_rcache *c, size_t len)
{
	while ((c->n >= c->max_count || c->bytes + len > c->max_bytes) &&
	       !mbu_dlist_empty(&c->lru)) {
		struct mbu_rcache_entry *e =
			mbu_container_of(c->lru.next, struct mbu_rcache_entry, link);
		size_t lo, hi;

		idx_overlap(c, e->start, e->end, &lo, &hi);
		idx_cut(c, lo, hi);
		mbu_dlist_remove(&e->link);
		unwatch(c, e->start, e->end);
		release(c, e);
		c->st.evicted++;
	}
}

int mbu_rcache_get(struct mbu_rcache *c, const void *addr, size_t len,
		   struct mbu_rcache_entry **out)
{
	uintptr_t s = (uintptr_t)addr & ~page_mask();
	uintptr_t e = ((uintptr_t)addr + len + page_mask()) & ~page_mask();
	struct mbu_rcache_entry *n;
	size_t lo, hi;
	int ret;

	if (!len || e < s)
		return -EINVAL;
	if (!c->monitored || mon.forked) {
		c->st.misses++;
		c->st.uncached++;
		return one_use(c, s, e, out);
	}
	lock_applied();
	release_dead(c);
	idx_overlap(c, s, e, &lo, &hi);
	if (hi == lo + 1 && c->idx[lo]->start <= s && c->idx[lo]->end >= e) {
		n = c->idx[lo];
		if (!n->refs++)
			mbu_dlist_remove(&n->link);
		c->st.hits++;
		pthread_mutex_unlock(&mon.lock);
		*out = n;
		return 0;
	}
	c->st.misses++;
	/* Overlapping entries are replaced by one covering them all, so the
	 * index stays disjoint and a buffer used piecewise converges. */
	if (lo < hi) {
		if (c->idx[lo]->start < s)
			s = c->idx[lo]->start;
		if (c->idx[hi - 1]->end > e)
			e = c->idx[hi - 1]->end;
	}
	if (e - s > c->max_bytes) {
		pthread_mutex_unlock(&mon.lock);
		c->st.uncached++;
		return one_use(c, (uintptr_t)addr & ~page_mask(),
			       ((uintptr_t)addr + len + page_mask()) & ~page_mask(), out);
	}
	for (size_t i = lo; i < hi; i++)
		drop(c->idx[i], &c->dead);
	idx_cut(c, lo, hi);
	release_dead(c);
	evict(c, e - s);
	ret = one_use(c, s, e, &n);
	if (ret) {
		pthread_mutex_unlock(&mon.lock);
		return ret;
	}
	/* A mapping the monitor cannot watch (a plain file, another
	 * userfaultfd's) is registered for this use only. */
	if (watch(s, e) && !idx_insert(c, idx_upper(c, s), n))
		n->cached = true;
	else
		c->st.uncached++;
	pthread_mutex_unlock(&mon.lock);
	*out = n;
	return 0;
}

void mbu_rcache_put(struct mbu_rcache *c, struct mbu_rcache_entry *e)
{
	if (!e->cached) {
		release(c, e);
		return;
	}
	lock_applied();
	if (!--e->refs) {
		if (e->stale)
			release(c, e);
		else
			mbu_dlist_insert_tail(&e->link, &c->lru);
	}
	release_dead(c);
	pthread_mutex_unlock(&mon.lock);
}
