/* The published registration table (see mbu_keytab.h): open addressing on
 * the key with tombstones, each slot a seqlock with a count of readers. */
#include "mbu_keytab.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "mbu_qmap.h"

static uint32_t home(const struct mbu_keytab *kt, uint64_t key)
{
	return (uint32_t)(mbu_hash2(key, 0x6b74) & kt->mask);
}

size_t mbu_keytab_size(uint32_t nslots)
{
	return MBU_KEYTAB_HDR_SIZE + (size_t)nslots * sizeof(struct mbu_keytab_slot);
}

static void view(struct mbu_keytab *kt, void *mem)
{
	kt->hdr = mem;
	kt->slot = (struct mbu_keytab_slot *)((char *)mem + MBU_KEYTAB_HDR_SIZE);
	kt->mask = kt->hdr->nslots - 1;
}

void mbu_keytab_init(struct mbu_keytab *kt, void *mem, uint32_t nslots, int32_t pid)
{
	struct mbu_keytab_hdr *h = mem;

	h->version = MBU_KEYTAB_VERSION;
	h->nslots = nslots;
	h->pid = pid;
	/* A reader that sees the magic sees the rest of the header. */
	atomic_thread_fence(memory_order_release);
	h->magic = MBU_KEYTAB_MAGIC;
	view(kt, mem);
}

int mbu_keytab_attach(struct mbu_keytab *kt, void *mem, size_t size)
{
	const struct mbu_keytab_hdr *h = mem;

	if (!mem || size < MBU_KEYTAB_HDR_SIZE || h->magic != MBU_KEYTAB_MAGIC)
		return -EPROTO;
	atomic_thread_fence(memory_order_acquire);
	if (h->version != MBU_KEYTAB_VERSION || !h->nslots || (h->nslots & (h->nslots - 1)) ||
	    (size - MBU_KEYTAB_HDR_SIZE) / sizeof(struct mbu_keytab_slot) < h->nslots)
		return -EPROTO;
	view(kt, mem);
	return 0;
}

/* The owner's writes to one slot, bracketed by the sequence count. */
static void write_begin(struct mbu_keytab_slot *s)
{
	uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void write_end(struct mbu_keytab_slot *s)
{
	uint64_t q = atomic_load_explicit(&s->seq, memory_order_relaxed);

	/* seq_cst: ordered before the owner's load of `active` that follows
	 * a withdrawal (the other half is in mbu_keytab_acquire). */
	atomic_store_explicit(&s->seq, q + 1, memory_order_seq_cst);
}

int mbu_keytab_publish(struct mbu_keytab *kt, const struct mbu_keytab_entry *e)
{
	uint32_t i, s = home(kt, e->key);

	for (i = 0; i <= kt->mask; i++, s = (s + 1) & kt->mask) {
		struct mbu_keytab_slot *sl = &kt->slot[s];

		if (atomic_load_explicit(&sl->state, memory_order_relaxed) == MBU_KT_LIVE)
			continue;
		write_begin(sl);
		atomic_store_explicit(&sl->key, e->key, memory_order_relaxed);
		atomic_store_explicit(&sl->raddr, e->raddr, memory_order_relaxed);
		atomic_store_explicit(&sl->va, e->va, memory_order_relaxed);
		atomic_store_explicit(&sl->len, e->len, memory_order_relaxed);
		atomic_store_explicit(&sl->flags, e->flags, memory_order_relaxed);
		atomic_store_explicit(&sl->state, MBU_KT_LIVE, memory_order_relaxed);
		write_end(sl);
		return (int)s;
	}
	return -ENOSPC;
}

void mbu_keytab_set_flags(struct mbu_keytab *kt, int idx, uint32_t flags)
{
	struct mbu_keytab_slot *sl = &kt->slot[idx];

	write_begin(sl);
	atomic_store_explicit(&sl->flags, flags, memory_order_relaxed);
	write_end(sl);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mbu_keytab_withdraw(struct mbu_keytab *kt, int idx, uint64_t timeout_ns)
{
	struct mbu_keytab_slot *sl = &kt->slot[idx];
	uint64_t start = 0;

	write_begin(sl);
	atomic_store_explicit(&sl->state, MBU_KT_TOMB, memory_order_relaxed);
	atomic_store_explicit(&sl->key, 0, memory_order_relaxed);
	atomic_store_explicit(&sl->flags, 0, memory_order_relaxed);
	write_end(sl);
	/* Readers hold a slot for one system call at a time: normally this
	 * loop is not entered at all. */
	while (atomic_load_explicit(&sl->active, memory_order_seq_cst)) {
		if (!start)
			start = now_ns();
		else if (now_ns() - start > timeout_ns)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

int mbu_keytab_acquire(struct mbu_keytab *kt, uint64_t key, struct mbu_keytab_entry *e)
{
	uint32_t i, s = home(kt, key);

	for (i = 0; i <= kt->mask; i++, s = (s + 1) & kt->mask) {
		struct mbu_keytab_slot *sl = &kt->slot[s];
		uint64_t q = atomic_load_explicit(&sl->seq, memory_order_acquire);
		uint32_t state;

		if (q & 1)
			return -ENOENT;		/* being written: ask the owner */
		state = atomic_load_explicit(&sl->state, memory_order_relaxed);
		e->key = atomic_load_explicit(&sl->key, memory_order_relaxed);
		e->raddr = atomic_load_explicit(&sl->raddr, memory_order_relaxed);
		e->va = atomic_load_explicit(&sl->va, memory_order_relaxed);
		e->len = atomic_load_explicit(&sl->len, memory_order_relaxed);
		e->flags = atomic_load_explicit(&sl->flags, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&sl->seq, memory_order_relaxed) != q)
			return -ENOENT;
		if (state == MBU_KT_EMPTY)
			return -ENOENT;
		if (state != MBU_KT_LIVE || e->key != key)
			continue;
		/* Announce the use, then make sure the entry did not change
		 * in between: if it did, its owner may not wait for us. */
		atomic_fetch_add_explicit(&sl->active, 1, memory_order_seq_cst);
		if (atomic_load_explicit(&sl->seq, memory_order_seq_cst) != q) {
			atomic_fetch_sub_explicit(&sl->active, 1, memory_order_release);
			return -ENOENT;
		}
		return (int)s;
	}
	return -ENOENT;
}

void mbu_keytab_release(struct mbu_keytab *kt, int idx)
{
	atomic_fetch_sub_explicit(&kt->slot[idx].active, 1, memory_order_release);
}
