/* Matching cost against queue length: nanoseconds to match (and remove, then
 * re-insert) one message when N posted receives, or N unexpected messages,
 * are spread over 64 sources and N/64 tags. Flat is the goal: the row for
 * 10,000 should cost about what the row for 10 costs. Also reports the cost
 * with an any-source receive against the unexpected queue. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mbu_match.h"

enum mode { POSTED, UNEXP, UNEXP_ANYSRC };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Entry k stands for source k % 64 and tag k / 64; pick entries at random,
 * match, take out and put back, so the queue length stays n. */
static double time_one(enum mode mode, struct mbu_posted *pq, struct mbu_unexp *uq, int n,
		       int reps)
{
	volatile uintptr_t sink = 0;
	unsigned x = 12345;
	double t0 = now();

	for (int i = 0; i < reps; i++) {
		uint64_t src, tag;
		struct mbu_mentry *m;
		int k;

		x = x * 1103515245u + 12345u;
		k = (int)((x >> 8) % (unsigned)n);
		src = (uint64_t)(k % 64);
		tag = (uint64_t)(k / 64);
		if (mode == POSTED) {
			m = mbu_posted_match(pq, src, tag);
			mbu_posted_remove(pq, m);
			mbu_posted_insert(pq, m, src, tag, 0);
		} else {
			m = mbu_unexp_match(uq, mode == UNEXP ? src : MBU_SRC_ANY, tag, 0);
			mbu_unexp_remove(uq, m);
			mbu_unexp_insert(uq, m, m->src, m->tag);
		}
		sink += (uintptr_t)m;
	}
	(void)sink;
	return (now() - t0) / reps;
}

int main(void)
{
	static const int lens[] = { 10, 100, 1000, 10000, 100000 };
	const int reps = 2000000;

	printf("%-10s %14s %14s %16s\n", "entries", "posted_ns", "unexp_ns", "unexp_anysrc_ns");
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		int n = lens[li], i;
		struct mbu_mentry *pe = calloc((size_t)n, sizeof(*pe));
		struct mbu_mentry *ue = calloc((size_t)n, sizeof(*ue));
		struct mbu_posted pq;
		struct mbu_unexp uq;
		double posted, unexp, anysrc;

		mbu_posted_init(&pq);
		mbu_unexp_init(&uq);
		for (i = 0; i < n; i++) {
			mbu_posted_insert(&pq, &pe[i], (uint64_t)(i % 64), (uint64_t)(i / 64), 0);
			mbu_unexp_insert(&uq, &ue[i], (uint64_t)(i % 64), (uint64_t)(i / 64));
		}
		posted = time_one(POSTED, &pq, &uq, n, reps);
		unexp = time_one(UNEXP, &pq, &uq, n, reps);
		anysrc = time_one(UNEXP_ANYSRC, &pq, &uq, n, reps);
		printf("%-10d %14.1f %14.1f %16.1f\n", n, posted, unexp, anysrc);
		mbu_posted_fini(&pq);
		mbu_unexp_fini(&uq);
		free(pe);
		free(ue);
	}
	return 0;
}
