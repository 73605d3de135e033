/* Fixed-size object pools. Hot paths take and return objects here instead of
 * calling malloc: the pool grows in slabs when empty (outside steady state) and
 * never shrinks until it is destroyed, so a loop that allocates and frees the
 * same number of objects stops touching the allocator after its first pass. An
 * optional cap turns exhaustion into an error the caller can report as
 * back-pressure (-FI_EAGAIN) instead of growing without bound. */
#ifndef MBU_POOL_H
#define MBU_POOL_H

#include <stddef.h>
#include <stdint.h>

struct mbu_pool_free {
	struct mbu_pool_free *next;
};

struct mbu_pool {
	struct mbu_pool_free *free;
	void **slabs;
	size_t nslabs, slab_cap;
	size_t obj_size;
	size_t per_slab;
	size_t count;      /* objects created so far */
	size_t max;        /* 0: unbounded */
	size_t in_use;
};

int mbu_pool_init(struct mbu_pool *p, size_t obj_size, size_t per_slab, size_t max);
void mbu_pool_fini(struct mbu_pool *p);
int mbu_pool_grow(struct mbu_pool *p);

static inline void *mbu_pool_get(struct mbu_pool *p)
{
	struct mbu_pool_free *f = p->free;

	if (__builtin_expect(!f, 0)) {
		if (mbu_pool_grow(p))
			return NULL;
		f = p->free;
	}
	p->free = f->next;
	p->in_use++;
	return f;
}

static inline void mbu_pool_put(struct mbu_pool *p, void *obj)
{
	struct mbu_pool_free *f = obj;

	f->next = p->free;
	p->free = f;
	p->in_use--;
}

#endif
