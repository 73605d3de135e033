/* Wildcard and ordering stress across N ranks (default 4). A shared seed
 * gives every rank the whole traffic plan: each rank sends -M messages to
 * random peers with tags from a small set and random sizes. Receivers post
 * batches of receives of four shapes (exact, any-source, any-tag, both
 * wildcards), each chosen to match some message still expected, and check:
 * every payload; and libfabric's ordering rule, that if messages a < b come
 * from the same source and a also matches the receive that took b, then a
 * was taken by a receive posted earlier. -L caps the message size,
 * -P selects the receive shapes (bit mask, default all four). */
#include "ftx.h"

#include <stdlib.h>
#include <string.h>

#define NTAGS 4

struct msg {
	int src, dst, tag, seq;
	size_t size;
	bool got;
	long recv_idx;
};

struct post {
	int src;		/* -1: any */
	int tag;		/* -1: any */
	char *buf;
};

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static size_t max_size = 320000;
/* receive shapes in use, bit i = shape i: 0 exact, 1 any source, 2 any tag,
 * 3 both wildcards */
static uint32_t shapes = 15;
/* what an any-tag receive ignores (-I): all bits by default */
static uint64_t tag_ignore = ~0ULL;

static size_t pick_size(void)
{
	uint32_t r = rnd() % 100;
	size_t s = r < 70 ? 8 + rnd() % 256 : r < 95 ? 1000 + rnd() % 15000 :
		   20000 + rnd() % 300000;

	return s < max_size ? s : max_size;
}

static bool matches(const struct post *p, const struct msg *m)
{
	return (p->src < 0 || p->src == m->src) && (p->tag < 0 || p->tag == m->tag);
}

static uint64_t seed_of(const struct msg *m)
{
	return ((uint64_t)m->src << 40) ^ ((uint64_t)m->dst << 32) ^ (uint64_t)m->seq;
}

static int run(struct ftx *t)
{
	int per = atoi(ftx_opt(t, 'M', "400")), total = per * t->size, i, j;
	int batch = atoi(ftx_opt(t, 'B', "16"));
	struct msg *plan = calloc((size_t)total, sizeof(*plan));
	int *seqs = calloc((size_t)t->size * (size_t)t->size, sizeof(int));
	struct msg **mine;
	int nmine = 0, left;
	struct post *posts;
	long nposts = 0;
	char **sbufs;

	if (t->size < 2)
		FTX_FAIL(t, "needs at least 2 ranks");
	max_size = strtoull(ftx_opt(t, 'L', "320000"), NULL, 0);
	shapes = (uint32_t)strtoul(ftx_opt(t, 'P', "15"), NULL, 0) & 15;
	if (!shapes)
		FTX_FAIL(t, "-P needs at least one shape");
	tag_ignore = strtoull(ftx_opt(t, 'I', "0xffffffffffffffff"), NULL, 0);
	if ((tag_ignore & 3) != 3)
		FTX_FAIL(t, "-I must ignore at least the two low bits (the tags)");
	if (max_size < 8)
		FTX_FAIL(t, "-L must be at least 8");
	rng = 0x1234567ULL;
	for (i = 0; i < total; i++) {
		struct msg *m = &plan[i];

		m->src = i % t->size;
		do
			m->dst = (int)(rnd() % (uint32_t)t->size);
		while (m->dst == m->src);
		m->tag = (int)(rnd() % NTAGS);
		m->size = pick_size();
		m->seq = seqs[m->src * t->size + m->dst]++;
		m->recv_idx = -1;
	}
	mine = calloc((size_t)total, sizeof(*mine));
	for (i = 0; i < total; i++)
		if (plan[i].dst == t->rank)
			mine[nmine++] = &plan[i];
	posts = calloc((size_t)(nmine + 1) * (size_t)(batch + 1), sizeof(*posts));
	sbufs = calloc((size_t)total, sizeof(*sbufs));

	/* Send everything first: most messages arrive unexpected, the rest
	 * meet receives already posted. */
	for (i = 0; i < total; i++) {
		struct msg *m = &plan[i];
		if (m->src != t->rank)
			continue;
		sbufs[i] = malloc(m->size + 1);
		ftx_fill(sbufs[i], m->size, seed_of(m));
		if (ftx_tsend(t, sbufs[i], m->size, m->dst, (uint64_t)m->tag, NULL))
			FTX_FAIL(t, "send");
		ftx_progress(t);
	}

	rng = 0xabcdefULL + (uint64_t)t->rank;
	left = nmine;
	while (left) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		struct post *p;
		struct msg *m = NULL;
		bool live = false;
		long idx;
		int r;

		/* Wait only while some pending receive matches a message still
		 * to come; otherwise post a batch aimed at distinct ones. */
		for (idx = 0; idx < nposts && !live; idx++)
			for (j = 0; j < nmine && !live && posts[idx].buf; j++)
				live = !mine[j]->got && matches(&posts[idx], mine[j]);
		if (!live) {
			int k = batch < left ? batch : left;
			bool *aimed = calloc((size_t)nmine, sizeof(*aimed));

			for (i = 0; i < k; i++) {
				struct msg *target;
				uint32_t shape;

				do
					shape = rnd() % 4;
				while (!(shapes & (1u << shape)));
				int at;

				do
					at = (int)(rnd() % (uint32_t)nmine);
				while (mine[at]->got || aimed[at]);
				aimed[at] = true;
				target = mine[at];
				p = &posts[nposts];
				p->src = (shape & 1) ? -1 : target->src;
				p->tag = (shape & 2) ? -1 : target->tag;
				p->buf = malloc(400000);
				if (ftx_trecv(t, p->buf, 400000, p->src,
					      p->tag < 0 ? 0 : (uint64_t)p->tag,
					      p->tag < 0 ? tag_ignore : 0, (void *)(intptr_t)nposts))
					FTX_FAIL(t, "recv");
				nposts++;
			}
			free(aimed);
			continue;
		}
		r = ftx_wait_rx(t, &e, NULL, &err);
		if (r != 1) {
			long pend = 0;

			for (idx = 0; idx < nposts; idx++)
				pend += posts[idx].buf != NULL;
			FTX_FAIL(t, "receive failed (%d, err %d) with %d messages still to come, "
				 "%ld receives pending, %ld posted", r, r == 0 ? err.err : 0, left,
				 pend, nposts);
		}
		idx = (long)(intptr_t)e.op_context;
		if (idx < 0 || idx >= nposts || !posts[idx].buf)
			FTX_FAIL(t, "bad context");
		p = &posts[idx];
		/* Identify the message by tag, size and payload (the payload's
		 * seed names source and sequence). */
		for (j = 0; j < nmine; j++) {
			struct msg *c = mine[j];

			if (c->got || c->tag != (int)e.tag || c->size != e.len || !matches(p, c))
				continue;
			if (ftx_check(p->buf, e.len, seed_of(c))) {
				m = c;
				break;
			}
		}
		if (!m)
			FTX_FAIL(t, "receive %ld got a message nobody sent (tag %lu len %zu)",
				 idx, (unsigned long)e.tag, e.len);
		m->got = true;
		m->recv_idx = idx;
		free(p->buf);
		p->buf = NULL;
		left--;
	}
	/* The ordering rule, checked after the fact. */
	for (i = 0; i < nmine; i++) {
		for (j = 0; j < nmine; j++) {
			struct msg *a = mine[i], *b = mine[j];

			if (a->src != b->src || a->seq >= b->seq)
				continue;
			if (matches(&posts[b->recv_idx], a) && a->recv_idx > b->recv_idx)
				FTX_FAIL(t, "order: msg seq %d from %d taken by receive %ld after seq %d by %ld",
					 a->seq, a->src, a->recv_idx, b->seq, b->recv_idx);
		}
	}
	if (ftx_wait_sends(t))
		FTX_FAIL(t, "send errors");
	for (i = 0; i < total; i++)
		free(sbufs[i]);
	for (i = 0; i < nposts; i++)
		free(posts[i].buf);
	free(sbufs);
	free(posts);
	free(mine);
	free(seqs);
	free(plan);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct ftx_spec spec = { "ftx_wild", 4, FI_DIRECTED_RECV, run };

	return ftx_main(argc, argv, &spec);
}
