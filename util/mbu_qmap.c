/* Insertion, removal and growth for struct mbu_qmap. */
#include "mbu_qmap.h"

#include <errno.h>
#include <stdlib.h>

int mbu_qmap_init(struct mbu_qmap *m, size_t initial_buckets)
{
	size_t n = 16;
	int ret;

	while (n < initial_buckets)
		n <<= 1;
	m->buckets = calloc(n, sizeof(*m->buckets));
	if (!m->buckets)
		return -ENOMEM;
	m->mask = n - 1;
	m->nkeys = 0;
	ret = mbu_pool_init(&m->nodes, sizeof(struct mbu_qnode), 256, 0);
	if (ret) {
		free(m->buckets);
		m->buckets = NULL;
	}
	return ret;
}

void mbu_qmap_fini(struct mbu_qmap *m)
{
	mbu_pool_fini(&m->nodes);
	free(m->buckets);
	m->buckets = NULL;
}

static void qmap_grow(struct mbu_qmap *m)
{
	size_t n = (m->mask + 1) * 2, i;
	struct mbu_qnode **b = calloc(n, sizeof(*b));

	/* Growth failing only costs longer chains, never correctness. */
	if (!b)
		return;
	for (i = 0; i <= m->mask; i++) {
		struct mbu_qnode *e = m->buckets[i], *next;

		for (; e; e = next) {
			size_t h = mbu_hash2(e->k0, e->k1) & (n - 1);

			next = e->chain;
			e->chain = b[h];
			b[h] = e;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->mask = n - 1;
}

struct mbu_qnode *mbu_qmap_get(struct mbu_qmap *m, uint64_t k0, uint64_t k1)
{
	struct mbu_qnode *n = mbu_qmap_find(m, k0, k1);
	size_t h;

	if (n)
		return n;
	n = mbu_pool_get(&m->nodes);
	if (!n)
		return NULL;
	n->k0 = k0;
	n->k1 = k1;
	mbu_dlist_init(&n->q);
	if (++m->nkeys > m->mask + 1)
		qmap_grow(m);
	h = mbu_hash2(k0, k1) & m->mask;
	n->chain = m->buckets[h];
	m->buckets[h] = n;
	return n;
}

void mbu_qmap_release(struct mbu_qmap *m, struct mbu_qnode *n)
{
	struct mbu_qnode **pp = &m->buckets[mbu_hash2(n->k0, n->k1) & m->mask];

	while (*pp && *pp != n)
		pp = &(*pp)->chain;
	if (*pp)
		*pp = n->chain;
	m->nkeys--;
	mbu_pool_put(&m->nodes, n);
}
