/* Matching cost against queue length: nanoseconds to match (and remove, then
 * re-insert) one message when N posted receives, or N unexpected messages,
 * are spread over 64 sources and N/64 tags. Flat is the goal: the row for
 * 10,000 should cost about what the row for 10 costs. Also reports the cost
 * with an any-source receive against the unexpected queue. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mbx_match.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void)
{
	static const int lens[] = { 10, 100, 1000, 10000, 100000 };
	const int reps = 2000000;

	printf("%-10s %14s %14s %16s\n", "entries", "posted_ns", "unexp_ns", "unexp_anysrc_ns");
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		int n = lens[li], i;
		struct mbx_mentry *e = calloc((size_t)n, sizeof(*e));
		struct mbx_posted pq;
		struct mbx_unexp uq;
		double t0, posted, unexp, anysrc;
		unsigned x = 12345;
		volatile uintptr_t sink = 0;

		mbx_posted_init(&pq);
		mbx_unexp_init(&uq);
		for (i = 0; i < n; i++)
			mbx_posted_insert(&pq, &e[i], (uint64_t)(i % 64), (uint64_t)(i / 64), 0);
		t0 = now();
		for (i = 0; i < reps; i++) {
			int k;
			struct mbx_mentry *m;

			x = x * 1103515245u + 12345u;
			k = (int)((x >> 8) % (unsigned)n);
			m = mbx_posted_match(&pq, (uint64_t)(k % 64), (uint64_t)(k / 64));
			sink += (uintptr_t)m;
			mbx_posted_remove(&pq, m);
			mbx_posted_insert(&pq, m, (uint64_t)(k % 64), (uint64_t)(k / 64), 0);
		}
		posted = (now() - t0) / reps;
		for (i = 0; i < n; i++)
			mbx_unexp_insert(&uq, &e[i], (uint64_t)(i % 64), (uint64_t)(i / 64));
		t0 = now();
		for (i = 0; i < reps; i++) {
			int k;
			struct mbx_mentry *m;

			x = x * 1103515245u + 12345u;
			k = (int)((x >> 8) % (unsigned)n);
			m = mbx_unexp_match(&uq, (uint64_t)(k % 64), (uint64_t)(k / 64), 0);
			sink += (uintptr_t)m;
			mbx_unexp_remove(&uq, m);
			mbx_unexp_insert(&uq, m, (uint64_t)(k % 64), (uint64_t)(k / 64));
		}
		unexp = (now() - t0) / reps;
		t0 = now();
		for (i = 0; i < reps; i++) {
			int k;
			struct mbx_mentry *m;

			x = x * 1103515245u + 12345u;
			k = (int)((x >> 8) % (unsigned)n);
			m = mbx_unexp_match(&uq, MBX_SRC_ANY, (uint64_t)(k / 64), 0);
			sink += (uintptr_t)m;
			mbx_unexp_remove(&uq, m);
			mbx_unexp_insert(&uq, m, m->src, m->tag);
		}
		anysrc = (now() - t0) / reps;
		printf("%-10d %14.1f %14.1f %16.1f\n", n, posted, unexp, anysrc);
		mbx_posted_fini(&pq);
		mbx_unexp_fini(&uq);
		free(e);
		(void)sink;
	}
	return 0;
}
