/* util/mbu_keytab: the registration table a process publishes for one-sided
 * access by its neighbours. Besides lookups, probing and a full table, the
 * property that matters is the one deregistration promises: once a
 * withdrawal returns, no reader still holds the region, and a reader never
 * gets an entry mixed from two versions. The stress case checks both with
 * a reader thread racing an owner that keeps re-publishing one key. */
#include <criterion/criterion.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mbu_keytab.h"

static void *table(uint32_t n, struct mbu_keytab *kt)
{
	void *mem = calloc(1, mbu_keytab_size(n));

	cr_assert(mem);
	mbu_keytab_init(kt, mem, n, 42);
	return mem;
}

static struct mbu_keytab_entry entry(uint64_t key)
{
	return (struct mbu_keytab_entry){ .key = key, .raddr = key * 4096, .va = 0x10000 + key,
					  .len = 100 + key, .flags = MBU_KT_READ | MBU_KT_WRITE };
}

Test(keytab, publish_find_withdraw)
{
	struct mbu_keytab kt, view;
	struct mbu_keytab_entry e = entry(7), got;
	void *mem = table(64, &kt);
	int idx, r;

	cr_assert_eq(mbu_keytab_acquire(&kt, 7, &got), -ENOENT);
	idx = mbu_keytab_publish(&kt, &e);
	cr_assert_geq(idx, 0);
	/* a second process's view of the same memory */
	cr_assert_eq(mbu_keytab_attach(&view, mem, mbu_keytab_size(64)), 0);
	r = mbu_keytab_acquire(&view, 7, &got);
	cr_assert_eq(r, idx);
	cr_assert(!memcmp(&got, &e, sizeof(e)) ||
		  (got.key == e.key && got.raddr == e.raddr && got.va == e.va &&
		   got.len == e.len && got.flags == e.flags));
	mbu_keytab_release(&view, r);
	cr_assert_eq(mbu_keytab_acquire(&view, 8, &got), -ENOENT);
	mbu_keytab_set_flags(&kt, idx, MBU_KT_READ | MBU_KT_OWNER);
	r = mbu_keytab_acquire(&view, 7, &got);
	cr_assert_eq(got.flags, MBU_KT_READ | MBU_KT_OWNER);
	mbu_keytab_release(&view, r);
	cr_assert_eq(mbu_keytab_withdraw(&kt, idx, 1000000000), 0);
	cr_assert_eq(mbu_keytab_acquire(&view, 7, &got), -ENOENT);
	free(mem);
}

/* Keys past tombstones are still found, tombstones are reused, and a full
 * table refuses instead of looping. */
Test(keytab, probing_tombstones_full)
{
	struct mbu_keytab kt;
	struct mbu_keytab_entry got;
	void *mem = table(64, &kt);
	int idx[64], i, r;

	for (i = 0; i < 64; i++) {
		struct mbu_keytab_entry e = entry((uint64_t)i + 1);

		idx[i] = mbu_keytab_publish(&kt, &e);
		cr_assert_geq(idx[i], 0, "key %d", i + 1);
	}
	{
		struct mbu_keytab_entry e = entry(1000);

		cr_assert_eq(mbu_keytab_publish(&kt, &e), -ENOSPC);
	}
	cr_assert_eq(mbu_keytab_acquire(&kt, 1000, &got), -ENOENT);
	for (i = 0; i < 64; i += 2)
		cr_assert_eq(mbu_keytab_withdraw(&kt, idx[i], 1000000000), 0);
	for (i = 0; i < 64; i++) {
		r = mbu_keytab_acquire(&kt, (uint64_t)i + 1, &got);
		if (i % 2 == 0) {
			cr_assert_eq(r, -ENOENT, "withdrawn key %d found", i + 1);
			continue;
		}
		cr_assert_eq(r, idx[i], "key %d lost behind a tombstone", i + 1);
		cr_assert_eq(got.len, 100u + (uint64_t)i + 1);
		mbu_keytab_release(&kt, r);
	}
	for (i = 0; i < 32; i++) {
		struct mbu_keytab_entry e = entry(5000 + (uint64_t)i);

		cr_assert_geq(mbu_keytab_publish(&kt, &e), 0, "tombstone not reused");
	}
	for (i = 0; i < 32; i++) {
		r = mbu_keytab_acquire(&kt, 5000 + (uint64_t)i, &got);
		cr_assert_geq(r, 0);
		mbu_keytab_release(&kt, r);
	}
	free(mem);
}

Test(keytab, attach_refuses_malformed)
{
	struct mbu_keytab kt, view;
	void *mem = table(64, &kt);
	struct mbu_keytab_hdr *h = mem;

	cr_assert_eq(mbu_keytab_attach(&view, mem, mbu_keytab_size(64) - 1), -EPROTO);
	cr_assert_eq(mbu_keytab_attach(&view, mem, 8), -EPROTO);
	cr_assert_eq(mbu_keytab_attach(&view, NULL, 4096), -EPROTO);
	h->nslots = 48;
	cr_assert_eq(mbu_keytab_attach(&view, mem, mbu_keytab_size(64)), -EPROTO);
	h->nslots = 64;
	h->version = 99;
	cr_assert_eq(mbu_keytab_attach(&view, mem, mbu_keytab_size(64)), -EPROTO);
	h->version = MBU_KEYTAB_VERSION;
	h->magic ^= 1;
	cr_assert_eq(mbu_keytab_attach(&view, mem, mbu_keytab_size(64)), -EPROTO);
	h->magic ^= 1;
	cr_assert_eq(mbu_keytab_attach(&view, mem, mbu_keytab_size(64)), 0);
	free(mem);
}

struct wd {
	struct mbu_keytab *kt;
	int idx;
	uint64_t timeout;
	int ret;
	atomic_int done;
};

static void *withdrawer(void *arg)
{
	struct wd *w = arg;

	w->ret = mbu_keytab_withdraw(w->kt, w->idx, w->timeout);
	atomic_store(&w->done, 1);
	return NULL;
}

/* A withdrawal does not return while a reader holds the slot. */
Test(keytab, withdraw_waits_for_reader)
{
	struct mbu_keytab kt;
	struct mbu_keytab_entry e = entry(3), got;
	void *mem = table(64, &kt);
	struct wd w = { .kt = &kt, .timeout = 30ull * 1000000000 };
	pthread_t t;
	int r;

	w.idx = mbu_keytab_publish(&kt, &e);
	r = mbu_keytab_acquire(&kt, 3, &got);
	cr_assert_eq(r, w.idx);
	pthread_create(&t, NULL, withdrawer, &w);
	usleep(100000);
	cr_assert_eq(atomic_load(&w.done), 0, "withdrawn while a reader held it");
	/* already invisible to new readers */
	cr_assert_eq(mbu_keytab_acquire(&kt, 3, &got), -ENOENT);
	mbu_keytab_release(&kt, r);
	pthread_join(t, NULL);
	cr_assert_eq(w.ret, 0);
	free(mem);
}

/* A reader that never releases (it died) costs a timeout, not a hang. */
Test(keytab, withdraw_times_out_on_a_dead_reader)
{
	struct mbu_keytab kt;
	struct mbu_keytab_entry e = entry(9), got;
	void *mem = table(64, &kt);
	int idx = mbu_keytab_publish(&kt, &e);

	cr_assert_eq(mbu_keytab_acquire(&kt, 9, &got), idx);
	cr_assert_eq(mbu_keytab_withdraw(&kt, idx, 20000000), -ETIMEDOUT);
	free(mem);
}

static double secs_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

struct race {
	struct mbu_keytab *kt;
	atomic_int valid;	/* the region behind key 1 exists */
	atomic_int stop;
	_Atomic uint64_t held, misses, torn, unsafe;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	struct mbu_keytab_entry e;

	while (!atomic_load(&r->stop)) {
		int idx = mbu_keytab_acquire(r->kt, 1, &e);

		if (idx < 0) {
			r->misses++;
			continue;
		}
		/* every version the owner writes keeps these relations */
		if (e.va != e.raddr + 1 || e.len != e.raddr * 3)
			r->torn++;
		if (!atomic_load(&r->valid))
			r->unsafe++;
		r->held++;
		mbu_keytab_release(r->kt, idx);
	}
	return NULL;
}

Test(keytab, withdraw_races_readers, .timeout = 60)
{
	struct mbu_keytab kt;
	void *mem = table(64, &kt);
	struct race r = { .kt = &kt };
	pthread_t t[2];
	uint64_t v, seen, done;
	struct timespec t0;
	int i, spins;

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, &r);
	/* Under valgrind the three threads take turns on one core and 20000
	 * versions can outlast Criterion's limit; the race needs many
	 * versions, not all of them, so a deadline ends the loop early. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (v = 1; v <= 20000; v++) {
		struct mbu_keytab_entry e = { .key = 1, .raddr = v, .va = v + 1, .len = v * 3,
					      .flags = MBU_KT_WRITE };
		int idx;

		atomic_store(&r.valid, 1);
		idx = mbu_keytab_publish(&kt, &e);
		cr_assert_geq(idx, 0);
		if (v % 3 == 0)
			mbu_keytab_set_flags(&kt, idx, MBU_KT_READ);
		/* leave it up until a reader has held it (or a while) */
		for (spins = 0, seen = atomic_load(&r.held);
		     atomic_load(&r.held) == seen && spins < 2000; spins++)
			sched_yield();
		cr_assert_eq(mbu_keytab_withdraw(&kt, idx, 30ull * 1000000000), 0);
		atomic_store(&r.valid, 0);	/* "freed": nobody may hold it now */
		if (v % 256 == 0 && v >= 2048 && secs_since(&t0) > 20.0)
			break;
	}
	done = v < 20000 ? v : 20000;
	atomic_store(&r.stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(r.torn, 0, "%llu torn entries", (unsigned long long)r.torn);
	cr_assert_eq(r.unsafe, 0, "%llu uses after withdrawal", (unsigned long long)r.unsafe);
	cr_assert_gt(r.held, done / 2, "readers held the entry only %llu times in %llu versions",
		     (unsigned long long)r.held, (unsigned long long)done);
	cr_log_info("%llu versions, held %llu, missed %llu\n", (unsigned long long)done,
		    (unsigned long long)r.held, (unsigned long long)r.misses);
	free(mem);
}
