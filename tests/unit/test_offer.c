/* The initiator's memory of core-RMA offers (util/mbu_offer.h): an offer
 * is found by its key until withdrawn, a new offer for a key replaces the
 * old one in place, the slots are reused in turn once full; a key asks
 * for an offer at its second use only, including key 0; the range and
 * rights check refuses exactly what lies outside the offer, at both ends
 * and where the arithmetic could wrap; and malformed offers off the wire
 * are refused. */
#include <criterion/criterion.h>
#include <string.h>

#include "mbu_offer.h"

static struct mbu_offers o;

static void reset(void)
{
	memset(&o, 0, sizeof(o));
}

TestSuite(offer, .init = reset);

Test(offer, put_find_withdraw)
{
	cr_assert_null(mbu_offers_find(&o, 7));
	mbu_offers_put(&o, 7, 4096, 100, MBU_OFFER_READ, 11);
	struct mbu_offer *e = mbu_offers_find(&o, 7);

	cr_assert_not_null(e);
	cr_assert_eq(e->base, 4096);
	cr_assert_eq(e->len, 100);
	cr_assert_eq(e->ckey, 11);
	/* the region registered again under the same key */
	mbu_offers_put(&o, 7, 0, 50, MBU_OFFER_WRITE, 12);
	cr_assert_eq(mbu_offers_find(&o, 7), e, "replaced in place");
	cr_assert_eq(e->ckey, 12);
	cr_assert_eq(e->len, 50);
	mbu_offers_put(&o, 7, 0, 0, 0, 0);
	cr_assert_null(mbu_offers_find(&o, 7));
	/* withdrawing what was never offered changes nothing */
	mbu_offers_put(&o, 8, 0, 0, 0, 0);
	cr_assert_null(mbu_offers_find(&o, 8));
}

Test(offer, slots_reused_in_turn)
{
	for (uint64_t k = 0; k < MBU_OFFERS; k++)
		mbu_offers_put(&o, k, 0, 64, MBU_OFFER_READ, (uint32_t)k + 1);
	for (uint64_t k = 0; k < MBU_OFFERS; k++)
		cr_assert_not_null(mbu_offers_find(&o, k));
	mbu_offers_put(&o, 100, 0, 64, MBU_OFFER_READ, 200);
	cr_assert_null(mbu_offers_find(&o, 0), "the oldest goes");
	cr_assert_not_null(mbu_offers_find(&o, 1));
	cr_assert_not_null(mbu_offers_find(&o, 100));
	/* a key 0 offer is a real key; a core key of 0 is never an offer */
	mbu_offers_put(&o, 0, 0, 64, MBU_OFFER_WRITE, 5);
	cr_assert_eq(mbu_offers_find(&o, 0)->ckey, 5);
}

Test(offer, second_use_asks)
{
	cr_assert_not(mbu_offers_miss(&o, 0), "key 0 is not taken as seen");
	cr_assert(mbu_offers_miss(&o, 0));
	cr_assert_not(mbu_offers_miss(&o, 42));
	cr_assert(mbu_offers_miss(&o, 42));
	/* the memory of misses is bounded: old keys fall out */
	for (uint64_t k = 1000; k < 1000 + MBU_MISSED; k++)
		cr_assert_not(mbu_offers_miss(&o, k));
	cr_assert_not(mbu_offers_miss(&o, 42));
}

Test(offer, range_and_rights)
{
	struct mbu_offer e = { .key = 1, .base = 1000, .len = 100, .ckey = 3,
			       .access = MBU_OFFER_READ };

	cr_assert(mbu_offer_allows(&e, 1000, 100, MBU_OFFER_READ));
	cr_assert(mbu_offer_allows(&e, 1099, 1, MBU_OFFER_READ));
	cr_assert_not(mbu_offer_allows(&e, 1000, 100, MBU_OFFER_WRITE), "no write right");
	cr_assert_not(mbu_offer_allows(&e, 999, 1, MBU_OFFER_READ), "before the start");
	cr_assert_not(mbu_offer_allows(&e, 1000, 101, MBU_OFFER_READ), "past the end");
	cr_assert_not(mbu_offer_allows(&e, 1100, 1, MBU_OFFER_READ), "at the end");
	cr_assert_not(mbu_offer_allows(&e, 1050, UINT64_MAX, MBU_OFFER_READ), "length wraps");
	cr_assert_not(mbu_offer_allows(&e, UINT64_MAX, 2, MBU_OFFER_READ), "address wraps");
	e.access = MBU_OFFER_READ | MBU_OFFER_WRITE;
	cr_assert(mbu_offer_allows(&e, 1010, 10, MBU_OFFER_WRITE));
}

Test(offer, wire_checks)
{
	cr_assert(mbu_offer_valid(0, 64, MBU_OFFER_READ, 1));
	cr_assert(mbu_offer_valid(UINT64_MAX - 64, 64, MBU_OFFER_WRITE, 1));
	cr_assert_not(mbu_offer_valid(UINT64_MAX - 63, 64, MBU_OFFER_WRITE, 1), "wraps");
	cr_assert_not(mbu_offer_valid(0, 0, MBU_OFFER_READ, 1), "empty");
	cr_assert_not(mbu_offer_valid(0, 64, 0, 1), "no rights");
	cr_assert_not(mbu_offer_valid(0, 64, 4, 1), "unknown rights");
	cr_assert(mbu_offer_valid(0, 0, 0, 0), "a withdrawal");
	cr_assert_not(mbu_offer_valid(0, 0, 8, 0), "a withdrawal with unknown bits");
}
