/* Small ids for objects that another process names on the wire: the net
 * wire's connection frames say which of the receiver's peers sent them by
 * the id the receiver gave that peer, 4 bytes where the sender's address
 * took 28. An id is a slot in a table that doubles as it fills, with the
 * slot's generation above it; the generation moves on when the slot is
 * let go, so an id that arrives late, from an object since gone, names
 * nothing rather than the slot's next object (until the generation wraps,
 * after MBU_SLOTS_GEN_MAX reuses of one slot). Never 0, so that 0 can mean
 * "none". Header-only bookkeeping: tests/unit/test_slots.c. */
#ifndef MBU_SLOTS_H
#define MBU_SLOTS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define MBU_SLOTS_BITS 20u				/* up to 2^20 objects */
#define MBU_SLOTS_MASK ((1u << MBU_SLOTS_BITS) - 1u)
#define MBU_SLOTS_GEN_MAX ((1u << (32u - MBU_SLOTS_BITS)) - 1u)

struct mbu_slots {
	void **obj;
	uint16_t *gen;		/* 1 .. MBU_SLOTS_GEN_MAX */
	uint32_t cap, next;	/* next: where the search for a free slot starts */
};

/* An id for obj in *id: 0, or -ENOMEM / -ENOSPC (nothing changed). */
static inline int mbu_slots_get(struct mbu_slots *s, void *obj, uint32_t *id)
{
	uint32_t i, k = s->cap;

	for (i = 0; i < s->cap; i++) {
		uint32_t j = (s->next + i) % s->cap;

		if (!s->obj[j]) {
			k = j;
			break;
		}
	}
	if (k == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		void **o;
		uint16_t *g;

		if (cap > MBU_SLOTS_MASK + 1u)
			return -ENOSPC;
		o = realloc(s->obj, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		s->obj = o;
		g = realloc(s->gen, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		s->gen = g;
		for (i = s->cap; i < cap; i++) {
			o[i] = NULL;
			g[i] = 1;
		}
		s->cap = cap;
	}
	s->obj[k] = obj;
	s->next = k + 1;
	*id = (uint32_t)s->gen[k] << MBU_SLOTS_BITS | k;
	return 0;
}

/* The object of `id`, NULL if it has none now (never given, let go, or
 * bytes from the wire that are no id of ours). */
static inline void *mbu_slots_find(const struct mbu_slots *s, uint32_t id)
{
	uint32_t k = id & MBU_SLOTS_MASK;

	if (k >= s->cap || s->gen[k] != id >> MBU_SLOTS_BITS)
		return NULL;
	return s->obj[k];
}

/* `id` (one that mbu_slots_get gave) is free again. */
static inline void mbu_slots_put(struct mbu_slots *s, uint32_t id)
{
	uint32_t k = id & MBU_SLOTS_MASK;

	s->obj[k] = NULL;
	s->gen[k] = (uint16_t)(s->gen[k] % MBU_SLOTS_GEN_MAX + 1u);
}

static inline void mbu_slots_fini(struct mbu_slots *s)
{
	free(s->obj);
	free(s->gen);
	s->obj = NULL;
	s->gen = NULL;
	s->cap = s->next = 0;
}

#endif
