/*
 * Sequence-number bookkeeping for reliable delivery over datagrams; see
 * mbu_rel.h. Sequence numbers wrap at 2^32, so every comparison is made on
 * the signed difference, which is right while fewer than 2^31 packets
 * separate the two (the window is 64).
 */
#include "mbu_rel.h"

#include <string.h>

static inline int32_t seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

void mbu_rel_tx_init(struct mbu_rel_tx *t, uint64_t rto_ns, uint32_t max_tries)
{
	memset(t, 0, sizeof(*t));
	t->rto_ns = rto_ns;
	t->max_tries = max_tries ? max_tries : 1;
}

void mbu_rel_rx_init(struct mbu_rel_rx *r)
{
	memset(r, 0, sizeof(*r));
}

int64_t mbu_rel_tx_push(struct mbu_rel_tx *t, void *pkt, uint64_t now_ns)
{
	struct mbu_rel_tx_ent *e;
	uint32_t seq = t->next_seq;

	if (!pkt || mbu_rel_tx_inflight(t) >= MBU_REL_WINDOW)
		return -1;
	e = &t->ent[seq % MBU_REL_WINDOW];
	e->pkt = pkt;
	e->sent_ns = now_ns;
	e->tries = 1;
	t->next_seq++;
	return seq;
}

static int release_one(struct mbu_rel_tx *t, uint32_t seq, void (*release)(void *, void *),
		       void *arg)
{
	struct mbu_rel_tx_ent *e = &t->ent[seq % MBU_REL_WINDOW];

	if (!e->pkt)
		return 0;
	if (release)
		release(e->pkt, arg);
	e->pkt = NULL;
	return 1;
}

int mbu_rel_tx_ack(struct mbu_rel_tx *t, uint32_t cum, uint64_t sack,
		   void (*release)(void *pkt, void *arg), void *arg)
{
	int n = 0;

	/* cum may not move backwards nor past what was ever sent. */
	if (seq_diff(cum, t->una) < 0 || seq_diff(cum, t->next_seq) > 0)
		return 0;
	while (t->una != cum)
		n += release_one(t, t->una++, release, arg);
	for (int i = 0; i < 64 && sack; i++, sack >>= 1) {
		uint32_t seq = cum + 1 + (uint32_t)i;

		if (!(sack & 1))
			continue;
		if (seq_diff(seq, t->next_seq) >= 0)
			break; /* claims a packet never sent: ignore the rest */
		n += release_one(t, seq, release, arg);
	}
	/* Slide past a prefix the selective acks already freed. */
	while (t->una != t->next_seq && !t->ent[t->una % MBU_REL_WINDOW].pkt)
		t->una++;
	return n;
}

int mbu_rel_tx_poll(struct mbu_rel_tx *t, uint64_t now_ns,
		    void (*resend)(uint32_t seq, void *pkt, void *arg), void *arg)
{
	for (uint32_t seq = t->una; seq != t->next_seq; seq++) {
		struct mbu_rel_tx_ent *e = &t->ent[seq % MBU_REL_WINDOW];
		uint64_t wait;

		if (!e->pkt)
			continue;
		wait = t->rto_ns << (e->tries - 1 < 16 ? e->tries - 1 : 16);
		if (wait > MBU_REL_RTO_MAX_NS)
			wait = t->rto_ns > MBU_REL_RTO_MAX_NS ? t->rto_ns : MBU_REL_RTO_MAX_NS;
		if (now_ns - e->sent_ns < wait)
			continue;
		if (e->tries >= t->max_tries)
			return -1;
		e->tries++;
		e->sent_ns = now_ns;
		resend(seq, e->pkt, arg);
	}
	return 0;
}

enum mbu_rel_verdict mbu_rel_rx_push(struct mbu_rel_rx *r, uint32_t seq, void *pkt)
{
	int32_t d = seq_diff(seq, r->expect);
	void **slot;

	if (d < 0) {
		r->dups++;
		return MBU_REL_DUPLICATE;
	}
	if (d >= MBU_REL_WINDOW)
		return MBU_REL_OUT_OF_WINDOW;
	slot = &r->held[seq % MBU_REL_WINDOW];
	if (*slot) {
		r->dups++;
		return MBU_REL_DUPLICATE;
	}
	*slot = pkt;
	return MBU_REL_ACCEPT;
}

void *mbu_rel_rx_pop(struct mbu_rel_rx *r)
{
	void **slot = &r->held[r->expect % MBU_REL_WINDOW];
	void *pkt = *slot;

	if (!pkt)
		return NULL;
	*slot = NULL;
	r->expect++;
	return pkt;
}

void mbu_rel_rx_ack(const struct mbu_rel_rx *r, uint32_t *cum, uint64_t *sack)
{
	uint32_t c = r->expect;
	uint64_t bits = 0;

	/* Arrived but not yet popped still counts as arrived. */
	while (seq_diff(c, r->expect) < MBU_REL_WINDOW && r->held[c % MBU_REL_WINDOW])
		c++;
	for (int i = 0; i < 64; i++) {
		uint32_t seq = c + 1 + (uint32_t)i;

		if (seq_diff(seq, r->expect) >= MBU_REL_WINDOW)
			break;
		if (r->held[seq % MBU_REL_WINDOW])
			bits |= 1ull << i;
	}
	*cum = c;
	*sack = bits;
}
