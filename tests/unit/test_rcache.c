/* util/mbu_rcache: the registration cache and its memory monitor. A fake
 * registration stands in for the core's: it remembers a marker read from the
 * buffer when it was registered, as a pinned registration remembers the
 * pages, so a registration reused after its memory was replaced shows up as
 * a marker that no longer matches the buffer. Where userfaultfd is not to be
 * had (under valgrind, say) the cache must register for one use each time,
 * and the tests check that instead of hits. */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mbu_rcache.h"

#define MiB (1024 * 1024)

struct fake {
	uint64_t regs, deregs, live;
};

struct handle {
	uint64_t marker, frame;
	uintptr_t start;
	size_t len;
};

static int fake_reg(void *arg, void *addr, size_t len, void **h)
{
	struct fake *f = arg;
	struct handle *n = malloc(sizeof(*n));

	if (!n)
		return -12;
	n->start = (uintptr_t)addr;
	n->len = len;
	n->marker = 0;
	n->frame = 0;
	f->regs++;
	f->live++;
	*h = n;
	return 0;
}

static void fake_dereg(void *arg, void *h)
{
	struct fake *f = arg;

	f->deregs++;
	f->live--;
	free(h);
}

static const struct mbu_rcache_ops fake_ops = { fake_reg, fake_dereg };

/* The physical page behind addr (0 without the privilege to see it): the
 * identity a pinned registration holds on to. */
static uint64_t frame_of(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/pagemap", "rb");
	uint64_t v = 0;

	if (!f)
		return 0;
	if (fseek(f, (long)(addr / (uintptr_t)sysconf(_SC_PAGESIZE) * 8), SEEK_SET) ||
	    fread(&v, 8, 1, f) != 1)
		v = 0;
	fclose(f);
	return (v >> 63) ? v & ((1ull << 55) - 1) : 0;
}

static bool monitored(void)
{
	return strcmp(mbu_rcache_monitor(NULL), "userfaultfd") == 0;
}

/* Register buf for a use: the marker is the buffer's first word the first
 * time a registration is made, and must equal it at every later use. */
static struct mbu_rcache_entry *use(struct mbu_rcache *c, void *buf, size_t len)
{
	struct mbu_rcache_entry *e = NULL;
	struct handle *h;
	uint64_t now;

	cr_assert_eq(mbu_rcache_get(c, buf, len, &e), 0);
	h = e->handle;
	memcpy(&now, buf, sizeof(now));
	cr_assert(e->start <= (uintptr_t)buf && e->end >= (uintptr_t)buf + len);
	cr_assert(h->start == e->start && h->len == e->end - e->start);
	if (!h->marker)
		h->marker = now;
	cr_assert_eq(h->marker, now, "registration of %p made for other memory", buf);
	return e;
}

/* A hint that another thread has taken in the meantime (see below) gets
 * memory elsewhere: the caller then tests a new address, not a reused one. */
static void *map(void *hint, size_t len, uint64_t marker)
{
	void *p = mmap(hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED && hint)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(p != MAP_FAILED);
	memset(p, 0x5a, len);
	memcpy(p, &marker, sizeof(marker));
	return p;
}

Test(rcache, second_registration_is_a_lookup)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	void *buf = map(NULL, MiB, 1);

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	for (int i = 0; i < 10; i++)
		mbu_rcache_put(&c, use(&c, buf, MiB));
	if (monitored()) {
		cr_assert_eq(f.regs, 1);
		cr_assert_eq(c.st.hits, 9);
		cr_assert_eq(f.live, 1);
	} else {
		cr_log_warn("no monitor: %s", mbu_rcache_monitor(NULL));
		cr_assert_eq(f.regs, 10);
		cr_assert_eq(f.live, 0);
	}
	mbu_rcache_fini(&c);
	cr_assert_eq(f.live, 0);
	munmap(buf, MiB);
}

/* Another thread may map something into the hole between munmap and the
 * new mmap; under ASan the monitor thread's first free maps its allocator's
 * cache, which lands there. That is not what is under test: a cache kept
 * open keeps one monitor thread, warmed up by an unmap, and a try that still
 * loses the address starts over elsewhere. */
static bool remapped_once(void)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	void *a = map(NULL, MiB, 1), *b;

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	mbu_rcache_put(&c, use(&c, a, MiB));
	mbu_rcache_put(&c, use(&c, a, MiB));
	cr_assert_eq(munmap(a, MiB), 0);
	b = map(a, MiB, 2);
	if (b != a) {
		munmap(b, MiB);
		mbu_rcache_fini(&c);
		return false;
	}
	mbu_rcache_put(&c, use(&c, b, MiB));
	cr_assert_eq(f.regs, monitored() ? 2 : 3);
	if (monitored())
		cr_assert_eq(c.st.invalidated, 1);
	mbu_rcache_fini(&c);
	cr_assert_eq(f.live, 0);
	munmap(b, MiB);
	return true;
}

Test(rcache, unmapped_and_mapped_again_at_the_same_address)
{
	struct fake f = { 0 };
	struct mbu_rcache keep;
	void *w = map(NULL, MiB, 9);
	int tries = 0;

	cr_assert_eq(mbu_rcache_init(&keep, &fake_ops, &f, 1024, 1ul << 30), 0);
	mbu_rcache_put(&keep, use(&keep, w, MiB));
	cr_assert_eq(munmap(w, MiB), 0);
	while (!remapped_once())
		cr_assert_lt(++tries, 20, "the freed address was always taken");
	if (tries)
		cr_log_info("the freed address was taken %d times", tries);
	mbu_rcache_fini(&keep);
}

Test(rcache, given_back_with_madvise_or_moved_with_mremap)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	char *a = map(NULL, 4 * MiB, 1), *m, *n;

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	mbu_rcache_put(&c, use(&c, a, MiB));
	/* Pages given back read as zeros: a new marker, a new registration. */
	cr_assert_eq(madvise(a, MiB, MADV_DONTNEED), 0);
	memcpy(a, &(uint64_t){ 3 }, 8);
	mbu_rcache_put(&c, use(&c, a, MiB));
	/* Moved away: the old address range is gone. */
	mbu_rcache_put(&c, use(&c, a + 2 * MiB, MiB));
	m = mremap(a + 2 * MiB, MiB, MiB, MREMAP_MAYMOVE | MREMAP_FIXED, a + 3 * MiB);
	cr_assert(m != MAP_FAILED);
	n = map(a + 2 * MiB, MiB, 4);
	mbu_rcache_put(&c, use(&c, n, MiB));
	cr_assert_eq(f.regs, 4);
	if (monitored())
		cr_assert_geq(c.st.invalidated, 2);
	mbu_rcache_fini(&c);
	cr_assert_eq(f.live, 0);
	munmap(a, 2 * MiB);
	munmap(n, MiB);
	munmap(a + 3 * MiB, MiB);
}

/* malloc's memory is reused without being unmapped (then the registration
 * still holds the right pages and is kept), or given back and mapped anew
 * (then it must not be): the page behind the registration tells. */
Test(rcache, malloc_and_free_never_reuse_a_stale_registration)
{
	struct fake f = { 0 };
	struct mbu_rcache c;

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	for (uint64_t i = 1; i <= 200; i++) {
		size_t len = (size_t)(i % 7 + 1) * 256 * 1024;
		char *p = malloc(len);

		cr_assert(p);
		memset(p, (int)i, len);
		for (int k = 0; k < 2; k++) {
			struct mbu_rcache_entry *e = NULL;
			struct handle *h;
			uint64_t fr = frame_of((uintptr_t)p);

			cr_assert_eq(mbu_rcache_get(&c, p, len, &e), 0);
			h = e->handle;
			if (!h->frame)
				h->frame = frame_of(e->start);
			cr_assert(!fr || h->frame == frame_of(e->start),
				  "registration of %p holds another page", (void *)p);
			mbu_rcache_put(&c, e);
		}
		free(p);
	}
	mbu_rcache_fini(&c);
	cr_assert_eq(f.live, 0);
}

Test(rcache, overlapping_ranges_merge)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	char *a = map(NULL, MiB, 1);
	struct mbu_rcache_entry *e1, *e2;

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	if (!monitored()) {
		mbu_rcache_fini(&c);
		munmap(a, MiB);
		cr_skip_test("no monitor: %s", mbu_rcache_monitor(NULL));
	}
	e1 = use(&c, a, MiB / 2);
	e2 = use(&c, a + MiB / 4, MiB / 2);
	cr_assert_neq(e1, e2);
	cr_assert_eq(e2->start, (uintptr_t)a);
	cr_assert_eq(e2->end, (uintptr_t)a + 3 * MiB / 4);
	/* The first, still in use, survives until it is put. */
	cr_assert_eq(f.live, 2);
	mbu_rcache_put(&c, e1);
	cr_assert_eq(f.live, 1);
	mbu_rcache_put(&c, e2);
	mbu_rcache_put(&c, use(&c, a + 4096, MiB / 2));
	cr_assert_eq(f.regs, 2);
	mbu_rcache_fini(&c);
	munmap(a, MiB);
}

Test(rcache, limits_evict_the_least_recently_used)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	char *a = map(NULL, 8 * MiB, 1);

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 2, 3 * MiB), 0);
	if (!monitored()) {
		mbu_rcache_fini(&c);
		munmap(a, 8 * MiB);
		cr_skip_test("no monitor: %s", mbu_rcache_monitor(NULL));
	}
	mbu_rcache_put(&c, use(&c, a, MiB));
	mbu_rcache_put(&c, use(&c, a + 2 * MiB, MiB));
	mbu_rcache_put(&c, use(&c, a, MiB));		/* a is now the newest */
	mbu_rcache_put(&c, use(&c, a + 4 * MiB, MiB));	/* count: a+2M goes */
	cr_assert_eq(c.st.evicted, 1);
	cr_assert_eq(f.live, 2);
	mbu_rcache_put(&c, use(&c, a, MiB));
	cr_assert_eq(c.st.hits, 2);
	/* Larger than the byte limit: registered for one use. */
	mbu_rcache_put(&c, use(&c, a + 4 * MiB, 4 * MiB));
	cr_assert_eq(c.st.uncached, 1);
	mbu_rcache_fini(&c);
	cr_assert_eq(f.live, 0);
	munmap(a, 8 * MiB);
}

Test(rcache, in_use_when_unmapped_is_released_at_put)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	char *a = map(NULL, MiB, 1);
	struct mbu_rcache_entry *e;

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	e = use(&c, a, MiB);
	munmap(a, MiB);
	cr_assert_eq(f.live, 1);
	mbu_rcache_put(&c, e);
	cr_assert_eq(f.live, 0);
	mbu_rcache_fini(&c);
}

Test(rcache, off_registers_every_time)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	char *a = map(NULL, MiB, 1);

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 0, 1ul << 30), 0);
	for (int i = 0; i < 3; i++)
		mbu_rcache_put(&c, use(&c, a, MiB));
	cr_assert_eq(f.regs, 3);
	cr_assert_eq(f.live, 0);
	cr_assert_eq(mbu_rcache_get(&c, a, 0, &(struct mbu_rcache_entry *){ NULL }), -22);
	mbu_rcache_fini(&c);
	munmap(a, MiB);
}

/* Another thread unmaps a buffer and maps a new one at its address; the
 * lookup made right after it has done so must see the new memory. */
struct swap {
	char *buf;
	int turn;	/* odd: the swapper's, even: the looker's */
};

static void *swapper(void *arg)
{
	struct swap *s = arg;

	for (int i = 1; i < 400; i += 2) {
		while (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE) != i)
			;
		munmap(s->buf, MiB);
		s->buf = map(s->buf, MiB, (uint64_t)i + 1);
		__atomic_store_n(&s->turn, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

Test(rcache, unmapped_by_another_thread)
{
	struct fake f = { 0 };
	struct mbu_rcache c;
	struct swap s = { .buf = map(NULL, MiB, 1), .turn = 0 };
	pthread_t t;

	cr_assert_eq(mbu_rcache_init(&c, &fake_ops, &f, 1024, 1ul << 30), 0);
	cr_assert_eq(pthread_create(&t, NULL, swapper, &s), 0);
	for (int i = 0; i < 400; i += 2) {
		while (__atomic_load_n(&s.turn, __ATOMIC_ACQUIRE) != i)
			;
		mbu_rcache_put(&c, use(&c, s.buf, MiB));
		mbu_rcache_put(&c, use(&c, s.buf, MiB));
		__atomic_store_n(&s.turn, i + 1, __ATOMIC_RELEASE);
	}
	pthread_join(t, NULL);
	cr_assert_eq(f.regs, monitored() ? 200 : 400);
	mbu_rcache_fini(&c);
	cr_assert_eq(f.live, 0);
	munmap(s.buf, MiB);
}
