/* The registration cache seen from outside: rank 0 sends large messages to
 * rank 1 on another host (the data goes by the receiver's fi_read of a
 * registration of the sender's buffer) from buffers that are sent from
 * again, unmapped and mapped anew at the same address, given back with
 * madvise, and malloc'd and freed; rank 1 checks every byte of every
 * message. A stale registration would hand rank 1 the old pages. With -C 1 the
 * sender also requires that the cache worked: the second send of one buffer
 * found its registration, and the unmapping dropped one. Needs a matchbox
 * build and two hosts (FTX_HOSTS=2). */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fi_ext_matchbox.h>

#define MALLOCS 24

struct round {
	const char *what;
	uint64_t seed;
	size_t len;
};

static size_t msg_len;

static void *map_at(void *hint, size_t len)
{
	void *p = mmap(hint, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int send_one(struct ftx *t, void *buf, size_t len, uint64_t seed, const char *what)
{
	ftx_fill(buf, len, seed);
	/* The send completes when the receiver has read the data: only then
	 * may its memory go. */
	if (ftx_tsend(t, buf, len, 1, seed, NULL) || ftx_wait_sends(t))
		FTX_FAIL(t, "send (%s)", what);
	return 0;
}

static int sender(struct ftx *t, bool require)
{
	struct fi_matchbox_net_stats ns;
	size_t nlen = sizeof(ns);
	char *a, *b;
	uint64_t seed = 1;
	bool same;

	a = map_at(NULL, msg_len);
	if (!a)
		FTX_FAIL(t, "mmap");
	if (send_one(t, a, msg_len, seed++, "first") ||
	    send_one(t, a, msg_len, seed++, "same buffer again"))
		return 1;
	munmap(a, msg_len);
	b = map_at(a, msg_len);
	if (!b)
		b = map_at(NULL, msg_len);
	if (!b)
		FTX_FAIL(t, "mmap");
	same = b == a;
	if (send_one(t, b, msg_len, seed++, "mapped again at the same address"))
		return 1;
	if (madvise(b, msg_len, MADV_DONTNEED))
		FTX_FAIL(t, "madvise");
	if (send_one(t, b, msg_len, seed++, "given back with madvise"))
		return 1;
	munmap(b, msg_len);
	for (int i = 0; i < MALLOCS; i++) {
		size_t len = msg_len + (size_t)(i % 4) * 4096;
		char *p = malloc(len);

		if (!p)
			FTX_FAIL(t, "malloc");
		if (send_one(t, p, len, seed++, "malloc'd"))
			return 1;
		free(p);
	}
	if (fi_getopt(&t->ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_NET_STATS, &ns, &nlen) ||
	    nlen < sizeof(ns))
		FTX_FAIL(t, "no registration cache counts (a matchbox build is needed)");
	printf("registration cache: %llu hits, %llu misses, %llu for one use, %llu invalidated "
	       "(remapped at the same address: %s)\n",
	       (unsigned long long)ns.mr_cache_hits, (unsigned long long)ns.mr_cache_misses,
	       (unsigned long long)ns.mr_cache_uncached,
	       (unsigned long long)ns.mr_cache_invalidated, same ? "yes" : "no");
	if (ns.mr_cache_hits + ns.mr_cache_misses == 0)
		FTX_FAIL(t, "no large message went by fi_read");
	if (require) {
		if (ns.mr_cache_hits < 1)
			FTX_FAIL(t, "the second send of one buffer registered it again");
		if (same && ns.mr_cache_invalidated < 1)
			FTX_FAIL(t, "unmapping a registered buffer dropped no registration");
		if (ns.mr_cache_uncached)
			FTX_FAIL(t, "%llu registrations made for one use",
				 (unsigned long long)ns.mr_cache_uncached);
	}
	return 0;
}

static int receiver(struct ftx *t)
{
	char *buf = malloc(msg_len + MALLOCS * 4096);
	int n = 4 + MALLOCS;

	if (!buf)
		FTX_FAIL(t, "malloc");
	for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
		size_t len = seed <= 4 ? msg_len : msg_len + (size_t)((seed - 5) % 4) * 4096;
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;

		if (ftx_trecv(t, buf, msg_len + MALLOCS * 4096, 0, seed, 0, NULL) ||
		    ftx_wait_rx(t, &e, NULL, &err) != 1)
			FTX_FAIL(t, "receive %llu", (unsigned long long)seed);
		if (e.len != len || !ftx_check(buf, len, seed))
			FTX_FAIL(t, "message %llu: %zu bytes, data %s", (unsigned long long)seed,
				 e.len, ftx_check(buf, e.len < len ? e.len : len, seed) ? "right"
				 : "wrong (a stale registration?)");
	}
	free(buf);
	return 0;
}

static int run(struct ftx *t)
{
	bool require = strcmp(ftx_opt(t, 'C', "0"), "0") != 0;

	msg_len = (size_t)strtoull(ftx_opt(t, 'L', "1048576"), NULL, 0);
	/* Above the net wire's eager limit (64 KiB by default), or the data
	 * would not be registered at all. */
	if (msg_len < 131072)
		FTX_FAIL(t, "-L %zu: a large message is at least 128 KiB here", msg_len);
	ftx_barrier(t);
	if (t->rank == 0 ? sender(t, require) : receiver(t))
		return 1;
	ftx_barrier(t);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_regcache", 2, 0, run };

	return ftx_main(argc, argv, &spec);
}
