/* A registration cache: registering memory that is already registered costs
 * a lookup instead of another registration with the core (which over verbs
 * pins pages and costs tens of microseconds a MiB). A cached registration is
 * only safe while the pages behind it are the ones that were registered, so
 * every cached range is watched by a process-wide userfaultfd monitor: when
 * the range is unmapped, given back with madvise or moved by mremap, the
 * registrations over it are dropped before the unmapping call returns to
 * its caller, and a buffer mapped later at the same address is registered
 * afresh. Where the monitor cannot be had (no userfaultfd, or a mapping it
 * cannot watch), registrations are made for one use and released after it:
 * correct, only slower. The cache knows nothing of libfabric; the caller
 * supplies the register and release functions. */
#ifndef MBU_RCACHE_H
#define MBU_RCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mbu_list.h"

struct mbu_rcache_ops {
	/* Register [addr, addr + len); 0 and *handle, or a negative error. */
	int (*reg)(void *arg, void *addr, size_t len, void **handle);
	void (*dereg)(void *arg, void *handle);
};

struct mbu_rcache_entry {
	uintptr_t start, end;		/* page-aligned */
	void *handle;
	uint32_t refs;
	bool cached;			/* in the index (else one use only) */
	bool stale;			/* dropped from the index; released at refs 0 */
	struct mbu_dlist link;		/* unused cached entries (LRU), or dead ones */
};

struct mbu_rcache_stats {
	uint64_t hits, misses;
	uint64_t uncached;		/* registrations made for one use */
	uint64_t invalidated;		/* entries dropped because their memory went */
	uint64_t evicted;		/* entries dropped for the size limits */
};

struct mbu_rcache {
	const struct mbu_rcache_ops *ops;
	void *arg;
	size_t max_count, max_bytes;	/* max_count 0: no caching */
	/* Cached entries, sorted by start and disjoint. */
	struct mbu_rcache_entry **idx;
	size_t n, cap, bytes;
	struct mbu_dlist lru;		/* cached, refs 0, oldest first */
	struct mbu_dlist dead;		/* invalidated, refs 0: released by the owner */
	struct mbu_dlist mon_link;	/* in the monitor's list of caches */
	bool monitored;
	struct mbu_rcache_stats st;
};

/* The monitor in use: "userfaultfd", or "none" when caching is off for
 * want of one (the reason is in *why when given). */
const char *mbu_rcache_monitor(const char **why);

int mbu_rcache_init(struct mbu_rcache *c, const struct mbu_rcache_ops *ops, void *arg,
		    size_t max_count, size_t max_bytes);
/* Releases every registration; none may be in use. */
void mbu_rcache_fini(struct mbu_rcache *c);
/* A registration covering [addr, addr + len), held until mbu_rcache_put.
 * The registered range may start before addr: the offset of addr in it is
 * addr - e->start. */
int mbu_rcache_get(struct mbu_rcache *c, const void *addr, size_t len,
		   struct mbu_rcache_entry **e);
void mbu_rcache_put(struct mbu_rcache *c, struct mbu_rcache_entry *e);

#endif
