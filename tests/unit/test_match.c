/* Unit tests for the matcher: libfabric matching rules, ordering, wildcards,
 * and a randomized comparison against a brute-force reference model. Every
 * test runs three times: with the default scan limit (queues start as lists
 * and are indexed when a scan gets long), always indexed, and never indexed,
 * so each way of matching answers the same. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "mbu_match.h"

static struct mbu_posted pq;
static struct mbu_unexp uq;

static void setup_limit(size_t limit)
{
	cr_assert_eq(mbu_posted_init(&pq), 0);
	cr_assert_eq(mbu_unexp_init(&uq), 0);
	mbu_posted_set_scan(&pq, limit);
	mbu_unexp_set_scan(&uq, limit);
}

static void setup(void)
{
	setup_limit(MBU_MATCH_SCAN);
}

static void setup_indexed(void)
{
	setup_limit(0);
}

static void setup_list(void)
{
	setup_limit(SIZE_MAX);
}

static void teardown(void)
{
	mbu_posted_fini(&pq);
	mbu_unexp_fini(&uq);
}

TestSuite(match, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(match_indexed, .init = setup_indexed, .fini = teardown, .timeout = 60);
TestSuite(match_list, .init = setup_list, .fini = teardown, .timeout = 60);

/* One body, three suites. */
#define MATCH_TEST(name)                                  \
	static void name(void);                           \
	Test(match, name) { name(); }                     \
	Test(match_indexed, name) { name(); }             \
	Test(match_list, name) { name(); }                \
	static void name(void)

MATCH_TEST(exact_fifo)
{
	struct mbu_mentry e[3];

	for (int i = 0; i < 3; i++)
		cr_assert_eq(mbu_posted_insert(&pq, &e[i], 1, 7, 0), 0);
	cr_assert_null(mbu_posted_match(&pq, 2, 7));
	cr_assert_null(mbu_posted_match(&pq, 1, 8));
	for (int i = 0; i < 3; i++) {
		struct mbu_mentry *m = mbu_posted_match(&pq, 1, 7);

		cr_assert_eq(m, &e[i]);
		mbu_posted_remove(&pq, m);
	}
	cr_assert_null(mbu_posted_match(&pq, 1, 7));
	cr_assert_eq(pq.count, 0);
}

MATCH_TEST(earliest_posted_wins_across_shapes)
{
	struct mbu_mentry any_tag, exact, anysrc, wild;

	cr_assert_eq(mbu_posted_insert(&pq, &any_tag, 3, 0, ~0ULL), 0);
	cr_assert_eq(mbu_posted_insert(&pq, &exact, 3, 5, 0), 0);
	cr_assert_eq(mbu_posted_insert(&pq, &anysrc, MBU_SRC_ANY, 5, 0), 0);
	cr_assert_eq(mbu_posted_insert(&pq, &wild, MBU_SRC_ANY, 0, ~0ULL), 0);
	cr_assert_eq(mbu_posted_match(&pq, 3, 5), &any_tag);
	mbu_posted_remove(&pq, &any_tag);
	cr_assert_eq(mbu_posted_match(&pq, 3, 5), &exact);
	mbu_posted_remove(&pq, &exact);
	cr_assert_eq(mbu_posted_match(&pq, 3, 5), &anysrc);
	cr_assert_eq(mbu_posted_match(&pq, 4, 6), &wild);
	mbu_posted_remove(&pq, &anysrc);
	cr_assert_eq(mbu_posted_match(&pq, 3, 5), &wild);
}

MATCH_TEST(ignore_bits)
{
	struct mbu_mentry e;

	/* Match anything whose low 16 bits are 0x1234. */
	cr_assert_eq(mbu_posted_insert(&pq, &e, 9, 0xabcd1234, 0xffffffffffff0000ULL), 0);
	cr_assert_eq(mbu_posted_match(&pq, 9, 0x1234), &e);
	cr_assert_eq(mbu_posted_match(&pq, 9, 0x77771234), &e);
	cr_assert_null(mbu_posted_match(&pq, 9, 0x1235));
	cr_assert_null(mbu_posted_match(&pq, 8, 0x1234));
}

MATCH_TEST(unexpected_all_shapes)
{
	struct mbu_mentry m[4];

	cr_assert_eq(mbu_unexp_insert(&uq, &m[0], 1, 10), 0);
	cr_assert_eq(mbu_unexp_insert(&uq, &m[1], 2, 10), 0);
	cr_assert_eq(mbu_unexp_insert(&uq, &m[2], 1, 11), 0);
	cr_assert_eq(mbu_unexp_insert(&uq, &m[3], 2, 12), 0);
	cr_assert_eq(mbu_unexp_match(&uq, 2, 10, 0), &m[1]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 10, 0), &m[0]);
	cr_assert_eq(mbu_unexp_match(&uq, 2, 0, ~0ULL), &m[1]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 12, 0), &m[3]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 0, ~0ULL), &m[0]);
	cr_assert_null(mbu_unexp_match(&uq, 3, 0, ~0ULL));
	mbu_unexp_remove(&uq, &m[0]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 10, 0), &m[1]);
	cr_assert_eq(mbu_unexp_match(&uq, 1, 0, ~0ULL), &m[2]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 0, ~0ULL), &m[1]);
	cr_assert_eq(uq.count, 3);
}

/* A message queued before its sender's address was known (source
 * "not available") becomes matchable by a directed receive once re-keyed, in
 * its own arrival order, and keeps its place for wildcard receives. */
MATCH_TEST(unexpected_rekey_keeps_order)
{
	const uint64_t na = ~0ULL;
	struct mbu_mentry m[4];

	cr_assert_eq(mbu_unexp_insert(&uq, &m[0], na, 10), 0);
	cr_assert_eq(mbu_unexp_insert(&uq, &m[1], 2, 10), 0);
	cr_assert_eq(mbu_unexp_insert(&uq, &m[2], na, 11), 0);
	cr_assert_eq(mbu_unexp_insert(&uq, &m[3], na, 10), 0);
	cr_assert_null(mbu_unexp_match(&uq, 5, 10, 0));
	cr_assert_eq(mbu_unexp_rekey(&uq, &m[0], 5), 0);
	cr_assert_eq(mbu_unexp_rekey(&uq, &m[2], 5), 0);
	cr_assert_eq(mbu_unexp_rekey(&uq, &m[3], 5), 0);
	cr_assert_eq(mbu_unexp_rekey(&uq, &m[3], 5), 0); /* same key: no change */
	cr_assert_eq(mbu_unexp_match(&uq, 5, 10, 0), &m[0]);
	cr_assert_eq(mbu_unexp_match(&uq, 5, 0, ~0ULL), &m[0]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 10, 0), &m[0]);
	mbu_unexp_remove(&uq, &m[0]);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 10, 0), &m[1]);
	cr_assert_eq(mbu_unexp_match(&uq, 5, 0, ~0ULL), &m[2]);
	cr_assert_eq(mbu_unexp_match(&uq, 5, 10, 0), &m[3]);
	cr_assert_eq(m[3].src, 5);
	cr_assert_eq(uq.count, 3);
}

/* Reference model: arrays scanned linearly, in order. */
struct ref {
	uint64_t src, tag, ignore;
	int live;
};

#define NREF 4000

MATCH_TEST(random_posted_against_reference)
{
	static struct mbu_mentry e[NREF];
	static struct ref r[NREF];
	int n = 0;

	srand(1234);
	for (int step = 0; step < 20000; step++) {
		if (n < NREF && rand() % 2) {
			uint64_t src = rand() % 4 == 0 ? MBU_SRC_ANY : (uint64_t)(rand() % 8);
			uint64_t ign = rand() % 4 == 0 ? 0xf0 : 0;
			uint64_t tag = rand() % 32;

			cr_assert_eq(mbu_posted_insert(&pq, &e[n], src, tag, ign), 0);
			r[n] = (struct ref){ src, tag, ign, 1 };
			n++;
		} else {
			uint64_t src = rand() % 8, tag = rand() % 32;
			struct mbu_mentry *got = mbu_posted_match(&pq, src, tag);
			int want = -1;

			for (int i = 0; i < n; i++) {
				if (r[i].live && (r[i].src == MBU_SRC_ANY || r[i].src == src) &&
				    (tag & ~r[i].ignore) == (r[i].tag & ~r[i].ignore)) {
					want = i;
					break;
				}
			}
			if (want < 0) {
				cr_assert_null(got, "step %d: matched when reference has none", step);
			} else {
				cr_assert_eq(got, &e[want], "step %d: wrong entry", step);
				mbu_posted_remove(&pq, got);
				r[want].live = 0;
			}
		}
	}
}

MATCH_TEST(random_unexpected_against_reference)
{
	static struct mbu_mentry e[NREF];
	static struct ref r[NREF];
	int n = 0;

	srand(99);
	for (int step = 0; step < 20000; step++) {
		if (n < NREF && rand() % 2) {
			uint64_t src = rand() % 8, tag = rand() % 64;

			cr_assert_eq(mbu_unexp_insert(&uq, &e[n], src, tag), 0);
			r[n] = (struct ref){ src, tag, 0, 1 };
			n++;
		} else {
			uint64_t src = rand() % 3 == 0 ? MBU_SRC_ANY : (uint64_t)(rand() % 8);
			uint64_t ign = rand() % 3 == 0 ? 0x30 : 0;
			uint64_t tag = rand() % 64;
			struct mbu_mentry *got = mbu_unexp_match(&uq, src, tag, ign);
			int want = -1;

			for (int i = 0; i < n; i++) {
				if (r[i].live && (src == MBU_SRC_ANY || r[i].src == src) &&
				    (r[i].tag & ~ign) == (tag & ~ign)) {
					want = i;
					break;
				}
			}
			if (want < 0) {
				cr_assert_null(got, "step %d", step);
			} else {
				cr_assert_eq(got, &e[want], "step %d", step);
				mbu_unexp_remove(&uq, got);
				r[want].live = 0;
			}
		}
	}
}

MATCH_TEST(many_keys_grow_and_drain)
{
	enum { N = 10000 };
	struct mbu_mentry *e = calloc(N, sizeof(*e));

	for (int i = 0; i < N; i++)
		cr_assert_eq(mbu_posted_insert(&pq, &e[i], i % 100, i, 0), 0);
	for (int i = N - 1; i >= 0; i--) {
		cr_assert_eq(mbu_posted_match(&pq, i % 100, i), &e[i]);
		mbu_posted_remove(&pq, &e[i]);
	}
	cr_assert_eq(pq.count, 0);
	cr_assert_eq(pq.exact.nkeys, 0);
	free(e);
}

/* Queues that fill past the scan limit and drain to empty, again and again,
 * with mixed shapes: each refill starts as a list, each long scan indexes
 * it, and the answers stay the reference's throughout. */
MATCH_TEST(fill_and_drain_cycles)
{
	enum { N = 200 };
	static struct mbu_mentry pe[N], ue[N];
	static struct ref pr[N], ur[N];

	srand(7);
	for (int cycle = 0; cycle < 30; cycle++) {
		int n = 1 + rand() % (cycle % 3 ? 8 : N), left;

		for (int i = 0; i < n; i++) {
			uint64_t src = rand() % 5 == 0 ? MBU_SRC_ANY : (uint64_t)(rand() % 6);
			uint64_t ign = rand() % 5 == 0 ? 0x3 : 0, tag = rand() % 16;

			cr_assert_eq(mbu_posted_insert(&pq, &pe[i], src, tag, ign), 0);
			pr[i] = (struct ref){ src, tag, ign, 1 };
			src = rand() % 6;
			tag = rand() % 16;
			cr_assert_eq(mbu_unexp_insert(&uq, &ue[i], src, tag), 0);
			ur[i] = (struct ref){ src, tag, 0, 1 };
		}
		for (left = n; left > 0;) {
			uint64_t src = rand() % 6, tag = rand() % 16;
			struct mbu_mentry *got = mbu_posted_match(&pq, src, tag);
			int want = -1;

			for (int i = 0; i < n && want < 0; i++)
				if (pr[i].live && (pr[i].src == MBU_SRC_ANY || pr[i].src == src) &&
				    (tag & ~pr[i].ignore) == (pr[i].tag & ~pr[i].ignore))
					want = i;
			cr_assert_eq(got, want < 0 ? NULL : &pe[want], "cycle %d posted", cycle);
			if (want >= 0) {
				mbu_posted_remove(&pq, got);
				pr[want].live = 0;
			}
			/* A receive for a message that is there (or a wildcard). */
			src = rand() % 4 == 0 ? MBU_SRC_ANY : (uint64_t)(rand() % 6);
			tag = rand() % 16;
			uint64_t ign = rand() % 4 == 0 ? ~0ULL : 0;
			got = mbu_unexp_match(&uq, src, tag, ign);
			want = -1;
			for (int i = 0; i < n && want < 0; i++)
				if (ur[i].live && (src == MBU_SRC_ANY || ur[i].src == src) &&
				    (ur[i].tag & ~ign) == (tag & ~ign))
					want = i;
			cr_assert_eq(got, want < 0 ? NULL : &ue[want], "cycle %d unexpected", cycle);
			if (want >= 0) {
				mbu_unexp_remove(&uq, got);
				ur[want].live = 0;
				left--;
			}
		}
		/* Whatever is left of the posted side goes too. */
		for (int i = 0; i < n; i++)
			if (pr[i].live) {
				mbu_posted_remove(&pq, &pe[i]);
				pr[i].live = 0;
			}
		cr_assert_eq(pq.count, 0);
		cr_assert_eq(uq.count, 0);
		cr_assert_eq(pq.exact.nkeys + pq.anysrc.nkeys + pq.srcwild.nkeys, 0);
		cr_assert_eq(uq.exact.nkeys + uq.bytag.nkeys + uq.bysrc.nkeys, 0);
	}
}

/* By default a short queue is matched as a list and never touches the hash
 * maps; the first scan past the limit indexes it, and an emptied queue is a
 * list again. */
Test(match, short_queues_stay_lists)
{
	enum { N = 3 * MBU_MATCH_SCAN };
	struct mbu_mentry e[N];

	for (int i = 0; i < 4; i++)
		cr_assert_eq(mbu_unexp_insert(&uq, &e[i], 1, (uint64_t)i), 0);
	cr_assert_eq(mbu_unexp_match(&uq, 1, 3, 0), &e[3]);
	cr_assert(!uq.indexed);
	cr_assert_eq(uq.exact.nkeys, 0);
	for (int i = 4; i < N; i++)
		cr_assert_eq(mbu_unexp_insert(&uq, &e[i], 1, (uint64_t)i), 0);
	cr_assert_eq(mbu_unexp_match(&uq, 1, N - 1, 0), &e[N - 1]);
	cr_assert(uq.indexed);
	cr_assert_eq(uq.exact.nkeys, N);
	cr_assert_eq(mbu_unexp_match(&uq, MBU_SRC_ANY, 5, 0), &e[5]);
	for (int i = 0; i < N; i++)
		mbu_unexp_remove(&uq, &e[i]);
	cr_assert(!uq.indexed);
	cr_assert_eq(uq.exact.nkeys + uq.bytag.nkeys + uq.bysrc.nkeys, 0);

	for (int i = 0; i < N; i++)
		cr_assert_eq(mbu_posted_insert(&pq, &e[i], (uint64_t)i, 9, 0), 0);
	cr_assert_eq(mbu_posted_match(&pq, 0, 9), &e[0]);
	cr_assert(!pq.indexed);
	cr_assert_null(mbu_posted_match(&pq, N, 9));
	cr_assert(pq.indexed);
	cr_assert_eq(mbu_posted_match(&pq, N - 2, 9), &e[N - 2]);
	for (int i = 0; i < N; i++)
		mbu_posted_remove(&pq, &e[i]);
	cr_assert(!pq.indexed);
}
