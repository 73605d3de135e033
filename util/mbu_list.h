/* Intrusive doubly linked lists: the one list type every part of Matchbox uses
 * for queues (posted receives, unexpected messages, pending sends). Entries
 * embed a struct mbu_dlist and are recovered with mbu_container_of. */
#ifndef MBU_LIST_H
#define MBU_LIST_H

#include <stddef.h>
#include <stdbool.h>

#define mbu_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct mbu_dlist {
	struct mbu_dlist *next, *prev;
};

static inline void mbu_dlist_init(struct mbu_dlist *h)
{
	h->next = h->prev = h;
}

static inline bool mbu_dlist_empty(const struct mbu_dlist *h)
{
	return h->next == h;
}

static inline void mbu_dlist_insert_tail(struct mbu_dlist *e, struct mbu_dlist *h)
{
	e->next = h;
	e->prev = h->prev;
	h->prev->next = e;
	h->prev = e;
}

static inline void mbu_dlist_insert_head(struct mbu_dlist *e, struct mbu_dlist *h)
{
	e->prev = h;
	e->next = h->next;
	h->next->prev = e;
	h->next = e;
}

static inline void mbu_dlist_remove(struct mbu_dlist *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->next = e->prev = e;
}

static inline struct mbu_dlist *mbu_dlist_pop(struct mbu_dlist *h)
{
	struct mbu_dlist *e;

	if (mbu_dlist_empty(h))
		return NULL;
	e = h->next;
	mbu_dlist_remove(e);
	return e;
}

#define mbu_dlist_foreach(h, it) \
	for ((it) = (h)->next; (it) != (h); (it) = (it)->next)

#define mbu_dlist_foreach_safe(h, it, tmp) \
	for ((it) = (h)->next, (tmp) = (it)->next; (it) != (h); \
	     (it) = (tmp), (tmp) = (it)->next)

#endif
