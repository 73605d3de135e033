/* Unit tests for the shared-memory frame ring and the object pool. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "mbu_ring.h"
#include "mbu_pool.h"

struct ring_mem {
	struct mbu_ring_shared sh;
	_Alignas(64) uint8_t data[4096];
};

static struct ring_mem *new_ring(void)
{
	struct ring_mem *m = aligned_alloc(64, sizeof(*m));

	memset(m, 0, sizeof(*m));
	return m;
}

TestSuite(ring, .timeout = 60);

Test(ring, fill_drain_wrap)
{
	struct ring_mem *m = new_ring();
	struct mbu_ring_prod p;
	struct mbu_ring_cons c;
	struct mbu_frame *f;
	uint64_t sent = 0, got = 0;

	mbu_ring_prod_init(&p, &m->sh, m->data, sizeof(m->data));
	mbu_ring_cons_init(&c, &m->sh, m->data, sizeof(m->data));
	cr_assert_eq(mbu_ring_peek(&c, &f), MBU_RING_EMPTY);
	for (int round = 0; round < 200; round++) {
		/* Odd sizes force pad frames at the end of the ring. */
		uint32_t len = sizeof(struct mbu_frame) + 8 + (round * 37) % 900;

		while ((f = mbu_ring_reserve(&p, len))) {
			f->kind = 1;
			memcpy(f + 1, &sent, sizeof(sent));
			sent++;
			mbu_ring_commit(&p, f);
		}
		while (mbu_ring_peek(&c, &f) == MBU_RING_FRAME) {
			uint64_t v;

			memcpy(&v, f + 1, sizeof(v));
			cr_assert_eq(v, got);
			got++;
			mbu_ring_consume(&c, f);
		}
	}
	cr_assert_eq(sent, got);
	cr_assert_gt(sent, 200);
	free(m);
}

Test(ring, full_ring_refuses)
{
	struct ring_mem *m = new_ring();
	struct mbu_ring_prod p;
	struct mbu_frame *f;
	int n = 0;

	mbu_ring_prod_init(&p, &m->sh, m->data, sizeof(m->data));
	while ((f = mbu_ring_reserve(&p, 64))) {
		f->kind = 1;
		mbu_ring_commit(&p, f);
		n++;
	}
	cr_assert_eq(n, 4096 / 64);
	free(m);
}

Test(ring, corrupt_length_detected)
{
	struct ring_mem *m = new_ring();
	struct mbu_ring_prod p;
	struct mbu_ring_cons c;
	struct mbu_frame *f;

	mbu_ring_prod_init(&p, &m->sh, m->data, sizeof(m->data));
	mbu_ring_cons_init(&c, &m->sh, m->data, sizeof(m->data));
	f = mbu_ring_reserve(&p, 64);
	f->kind = 1;
	mbu_ring_commit(&p, f);
	f->len = 1u << 30;	/* a peer scribbling a bad length */
	cr_assert_eq(mbu_ring_peek(&c, &f), MBU_RING_CORRUPT);
	f->len = 3;
	cr_assert_eq(mbu_ring_peek(&c, &f), MBU_RING_CORRUPT);
	free(m);
}

static void *producer(void *arg)
{
	struct ring_mem *m = arg;
	struct mbu_ring_prod p;

	mbu_ring_prod_init(&p, &m->sh, m->data, sizeof(m->data));
	for (uint64_t i = 0; i < 500000; i++) {
		uint32_t len = sizeof(struct mbu_frame) + 8 + (uint32_t)(i % 200);
		struct mbu_frame *f;

		while (!(f = mbu_ring_reserve(&p, len)))
			;
		f->kind = 2;
		memcpy(f + 1, &i, sizeof(i));
		mbu_ring_commit(&p, f);
	}
	return NULL;
}

Test(ring, two_threads_in_order)
{
	struct ring_mem *m = new_ring();
	struct mbu_ring_cons c;
	pthread_t t;
	uint64_t next = 0;

	mbu_ring_cons_init(&c, &m->sh, m->data, sizeof(m->data));
	pthread_create(&t, NULL, producer, m);
	while (next < 500000) {
		struct mbu_frame *f = NULL;
		int st = mbu_ring_peek(&c, &f);
		uint64_t v;

		cr_assert_neq(st, MBU_RING_CORRUPT);
		if (st != MBU_RING_FRAME)
			continue;
		cr_assert_eq(f->kind, 2);
		memcpy(&v, f + 1, sizeof(v));
		cr_assert_eq(v, next, "got %lu want %lu", (unsigned long)v, (unsigned long)next);
		cr_assert_eq(f->len, sizeof(struct mbu_frame) + 8 + next % 200);
		next++;
		mbu_ring_consume(&c, f);
	}
	pthread_join(t, NULL);
	free(m);
}

Test(pool, cap_and_reuse)
{
	struct mbu_pool p;
	void *o[10];

	cr_assert_eq(mbu_pool_init(&p, 24, 4, 10), 0);
	for (int i = 0; i < 10; i++)
		cr_assert_not_null(o[i] = mbu_pool_get(&p));
	cr_assert_null(mbu_pool_get(&p), "a capped pool must refuse, not grow");
	mbu_pool_put(&p, o[3]);
	cr_assert_eq(mbu_pool_get(&p), o[3]);
	cr_assert_eq(p.count, 10);
	mbu_pool_fini(&p);
}
