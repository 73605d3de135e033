/* Slab growth for struct mbu_pool; the get/put fast paths are inline. */
#include "mbu_pool.h"

#include <errno.h>
#include <stdlib.h>

int mbu_pool_init(struct mbu_pool *p, size_t obj_size, size_t per_slab, size_t max)
{
	if (!obj_size || !per_slab)
		return -EINVAL;
	p->free = NULL;
	p->slabs = NULL;
	p->nslabs = p->slab_cap = 0;
	/* Round up so every object is aligned for any scalar type. */
	p->obj_size = (obj_size + 15) & ~(size_t)15;
	p->per_slab = per_slab;
	p->count = 0;
	p->max = max;
	p->in_use = 0;
	return 0;
}

int mbu_pool_grow(struct mbu_pool *p)
{
	size_t n = p->per_slab, i;
	char *slab;

	if (p->max) {
		if (p->count >= p->max)
			return -ENOSPC;
		if (n > p->max - p->count)
			n = p->max - p->count;
	}
	if (p->nslabs == p->slab_cap) {
		size_t cap = p->slab_cap ? p->slab_cap * 2 : 8;
		void **s = realloc(p->slabs, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		p->slabs = s;
		p->slab_cap = cap;
	}
	slab = aligned_alloc(64, ((n * p->obj_size) + 63) & ~(size_t)63);
	if (!slab)
		return -ENOMEM;
	p->slabs[p->nslabs++] = slab;
	for (i = n; i-- > 0;) {
		struct mbu_pool_free *f = (void *)(slab + i * p->obj_size);

		f->next = p->free;
		p->free = f;
	}
	p->count += n;
	return 0;
}

void mbu_pool_fini(struct mbu_pool *p)
{
	size_t i;

	for (i = 0; i < p->nslabs; i++)
		free(p->slabs[i]);
	free(p->slabs);
	p->slabs = NULL;
	p->free = NULL;
	p->nslabs = p->slab_cap = p->count = p->in_use = 0;
}
