/* A hash map from a 128-bit key to a FIFO queue of intrusive list entries.
 * The matcher keeps posted receives and unexpected messages in these, keyed
 * by (source, tag), by tag or by source, so that finding the oldest entry for
 * a key costs one hash probe whatever the queue lengths. A key's node exists
 * only while its queue is non-empty; nodes come from a pool, and the bucket
 * array doubles when keys outnumber buckets, so chains stay short. */
#ifndef MBU_QMAP_H
#define MBU_QMAP_H

#include <stdint.h>
#include <stddef.h>

#include "mbu_list.h"
#include "mbu_pool.h"

struct mbu_qnode {
	struct mbu_qnode *chain;
	uint64_t k0, k1;
	struct mbu_dlist q;
};

struct mbu_qmap {
	struct mbu_qnode **buckets;
	size_t mask;
	size_t nkeys;
	struct mbu_pool nodes;
};

int mbu_qmap_init(struct mbu_qmap *m, size_t initial_buckets);
void mbu_qmap_fini(struct mbu_qmap *m);
/* Find or create the node for a key; NULL only when memory is exhausted. */
struct mbu_qnode *mbu_qmap_get(struct mbu_qmap *m, uint64_t k0, uint64_t k1);
/* Drop a node whose queue has become empty. */
void mbu_qmap_release(struct mbu_qmap *m, struct mbu_qnode *n);

static inline uint64_t mbu_hash2(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL +
						  (a << 6) + (a >> 2));

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline struct mbu_qnode *mbu_qmap_find(const struct mbu_qmap *m,
					      uint64_t k0, uint64_t k1)
{
	struct mbu_qnode *n = m->buckets[mbu_hash2(k0, k1) & m->mask];

	while (n && (n->k0 != k0 || n->k1 != k1))
		n = n->chain;
	return n;
}

#endif
