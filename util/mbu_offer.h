/* What an RMA initiator remembers of the regions a target offered for the
 * core provider's own fi_write/fi_read (the net wire's KEY frames): a few
 * regions per peer, each a range of the target's remote addresses, its
 * rights and the core's key; and the keys used once without an offer, so
 * that only a key's second use asks for one (a region registered for one
 * message never costs its target a core registration). The initiator
 * decides from this alone whether an operation may go by the core, and
 * refuses one outside the range or rights as the target would. Pure, so
 * that it can be tested alone. */
#ifndef MBU_OFFER_H
#define MBU_OFFER_H

#include <stdbool.h>
#include <stdint.h>

/* Regions remembered per peer: an MPI window is one, a SHMEM heap one or
 * two; one that falls out is offered again at its next use. */
#define MBU_OFFERS	16u
#define MBU_MISSED	8u

#define MBU_OFFER_READ	1u
#define MBU_OFFER_WRITE	2u

struct mbu_offer {
	uint64_t key;		/* the target's key for the region */
	uint64_t base, len;	/* its remote addresses: base to base + len */
	uint32_t ckey;		/* the core's key; 0: an empty entry */
	uint32_t access;	/* MBU_OFFER_READ/WRITE */
};

struct mbu_offers {
	struct mbu_offer e[MBU_OFFERS];
	uint64_t missed[MBU_MISSED];
	uint8_t next, miss_next, nmissed;
};

/* An offer as it came off the wire is trusted only if well formed: rights
 * we know, and for a live offer some rights and a non-empty region that
 * does not wrap. A withdrawal (ckey 0) carries nothing else that matters. */
static inline bool mbu_offer_valid(uint64_t base, uint64_t len, uint32_t access, uint32_t ckey)
{
	if (access & ~(MBU_OFFER_READ | MBU_OFFER_WRITE))
		return false;
	return !ckey || (access && len && base + len >= base);
}

static inline struct mbu_offer *mbu_offers_find(struct mbu_offers *o, uint64_t key)
{
	for (uint32_t i = 0; i < MBU_OFFERS; i++)
		if (o->e[i].ckey && o->e[i].key == key)
			return &o->e[i];
	return 0;
}

/* Remembers an offer (replacing one for the same key, else the oldest
 * slot in turn), or with ckey 0 forgets the key's. */
static inline void mbu_offers_put(struct mbu_offers *o, uint64_t key, uint64_t base,
				  uint64_t len, uint32_t access, uint32_t ckey)
{
	struct mbu_offer *e = mbu_offers_find(o, key);

	if (!ckey) {
		if (e)
			e->ckey = 0;
		return;
	}
	if (!e)
		e = &o->e[o->next++ % MBU_OFFERS];
	e->key = key;
	e->base = base;
	e->len = len;
	e->access = access;
	e->ckey = ckey;
}

/* A use of `key` with no offer: true if it was used so before (ask the
 * target for one now), else it is remembered and false. */
static inline bool mbu_offers_miss(struct mbu_offers *o, uint64_t key)
{
	for (uint32_t i = 0; i < o->nmissed; i++)
		if (o->missed[i] == key)
			return true;
	o->missed[o->miss_next++ % MBU_MISSED] = key;
	if (o->nmissed < MBU_MISSED)
		o->nmissed++;
	return false;
}

/* May `len` bytes (at least one) at remote address `addr` be reached with
 * rights `need` under this offer? */
static inline bool mbu_offer_allows(const struct mbu_offer *e, uint64_t addr, uint64_t len,
				    uint32_t need)
{
	return (e->access & need) == need && addr >= e->base && addr - e->base <= e->len &&
	       len <= e->len - (addr - e->base);
}

#endif
