/* Agreement on ids free in every member of a group; see mbu_ids.h for the
 * protocol and why offers are held apart. */
#include <errno.h>
#include <string.h>

#include "mbu_ids.h"

void mbu_ids_init(struct mbu_ids *ids, unsigned reserved)
{
	memset(ids, 0, sizeof(*ids));
	mbu_dlist_init(&ids->pending);
	for (unsigned i = 0; i < reserved && i < MBU_IDS; i++)
		ids->used[i / 64] |= 1ull << (i % 64);
}

void mbu_ids_begin(struct mbu_ids *ids, struct mbu_ids_agree *a, uint64_t key)
{
	memset(a, 0, sizeof(*a));
	a->key = key;
	a->pending = true;
	mbu_dlist_insert_tail(&a->link, &ids->pending);
}

static void let_go(struct mbu_ids *ids, struct mbu_ids_agree *a)
{
	if (!a->out)
		return;
	for (unsigned w = 0; w < MBU_IDS_WORDS; w++)
		ids->offered[w] &= ~a->offer[w];
	a->out = false;
}

static void finish(struct mbu_ids_agree *a)
{
	mbu_dlist_remove(&a->link);
	a->pending = false;
}

/* A starved agreement that goes before a is out: a offers nothing. */
static bool held_back(const struct mbu_ids *ids, const struct mbu_ids_agree *a)
{
	const struct mbu_dlist *it;

	mbu_dlist_foreach(&ids->pending, it) {
		const struct mbu_ids_agree *b = mbu_container_of(it, struct mbu_ids_agree, link);

		if (b != a && b->starved && b->key < a->key)
			return true;
	}
	return false;
}

void mbu_ids_offer(struct mbu_ids *ids, struct mbu_ids_agree *a)
{
	unsigned left = a->starved ? MBU_IDS : MBU_IDS_FIRST;
	bool all = true, back;

	let_go(ids, a);
	back = held_back(ids, a);
	for (unsigned w = 0; w < MBU_IDS_WORDS; w++) {
		uint64_t free = ~ids->used[w], avail = free & ~ids->offered[w], mine = 0;

		if (back)
			avail = 0;
		while (avail && left) {
			uint64_t low = avail & -avail;

			mine |= low;
			avail &= ~low;
			left--;
		}
		if (mine != free)
			all = false;
		a->offer[w] = mine;
		ids->offered[w] |= mine;
	}
	a->offer[MBU_IDS_WORDS] = all ? ~0ull : 0;
	a->out = true;
}

int mbu_ids_take(struct mbu_ids *ids, struct mbu_ids_agree *a, const uint64_t *all, unsigned *id)
{
	let_go(ids, a);
	for (unsigned w = 0; w < MBU_IDS_WORDS; w++) {
		/* Only ids this member offered can be taken, whatever came back. */
		uint64_t common = all[w] & a->offer[w];

		if (common) {
			unsigned bit = (unsigned)__builtin_ctzll(common);

			ids->used[w] |= 1ull << bit;
			*id = w * 64 + bit;
			finish(a);
			return 0;
		}
	}
	if (all[MBU_IDS_WORDS] == ~0ull) {
		finish(a);
		return -ENOSPC;
	}
	a->starved = true;
	return -EAGAIN;
}

void mbu_ids_end(struct mbu_ids *ids, struct mbu_ids_agree *a)
{
	let_go(ids, a);
	if (a->pending)
		finish(a);
}

void mbu_ids_put(struct mbu_ids *ids, unsigned id)
{
	if (id < MBU_IDS)
		ids->used[id / 64] &= ~(1ull << (id % 64));
}

bool mbu_ids_used(const struct mbu_ids *ids, unsigned id)
{
	return id < MBU_IDS && (ids->used[id / 64] >> (id % 64)) & 1;
}
