/* The datagram reliability bookkeeping (util/mbu_rel.*) against a simulated
 * channel that loses, duplicates, delays and reorders both data and
 * acknowledgements: every packet must be released to the receiver exactly
 * once and in order, the sender must end with nothing in flight, a dead
 * channel must be declared lost after the allowed attempts, bogus acks must
 * free nothing, and all of it must hold across the 2^32 wrap. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "mbu_rel.h"

struct pkt {
	uint32_t seq;
	int payload;
};

struct dgram {
	uint64_t due;
	bool is_ack;
	uint32_t seq, cum;
	uint64_t sack;
	struct pkt *p;
};

struct sim {
	struct dgram q[1 << 16];
	int n;
	unsigned rng;
	int loss, dup;      /* percent */
	uint64_t now;
	struct mbu_rel_tx tx;
	struct mbu_rel_rx rx;
	int sent_payloads, delivered, released;
	uint64_t datagrams;
};

static unsigned rnd(struct sim *s)
{
	s->rng = s->rng * 1103515245u + 12345u;
	return (s->rng >> 8) & 0xffff;
}

static void put(struct sim *s, struct dgram d)
{
	int copies = 1 + ((int)(rnd(s) % 100) < s->dup);

	for (int c = 0; c < copies; c++) {
		if ((int)(rnd(s) % 100) < s->loss)
			continue;
		cr_assert_lt(s->n, 1 << 16);
		d.due = s->now + 5000 + rnd(s) % 40000; /* 5..45 us: reorders */
		s->q[s->n++] = d;
		s->datagrams++;
	}
}

static void resend(uint32_t seq, void *p, void *arg)
{
	struct sim *s = arg;

	put(s, (struct dgram){.seq = seq, .p = p});
}

static void release(void *p, void *arg)
{
	struct sim *s = arg;

	(void)p;
	s->released++;
}

/* Runs until `total` payloads are delivered and acknowledged; returns false
 * on a give-up or when the time limit passes first. */
static bool run(struct sim *s, int total, uint64_t limit_ns)
{
	static struct pkt pkts[1 << 20];

	while ((s->delivered < total || mbu_rel_tx_inflight(&s->tx)) && s->now < limit_ns) {
		/* Send what the window allows. */
		while (s->sent_payloads < total && mbu_rel_tx_inflight(&s->tx) < MBU_REL_WINDOW) {
			struct pkt *p = &pkts[s->sent_payloads % (1 << 20)];
			int64_t seq;

			p->payload = s->sent_payloads;
			seq = mbu_rel_tx_push(&s->tx, p, s->now);
			cr_assert_geq(seq, 0);
			p->seq = (uint32_t)seq;
			s->sent_payloads++;
			put(s, (struct dgram){.seq = p->seq, .p = p});
		}
		/* Deliver what is due. */
		for (int i = 0; i < s->n;) {
			struct dgram d = s->q[i];

			if (d.due > s->now) {
				i++;
				continue;
			}
			s->q[i] = s->q[--s->n];
			if (d.is_ack) {
				mbu_rel_tx_ack(&s->tx, d.cum, d.sack, release, s);
			} else {
				struct pkt *p;
				uint32_t cum;
				uint64_t sack;

				mbu_rel_rx_push(&s->rx, d.seq, d.p);
				while ((p = mbu_rel_rx_pop(&s->rx))) {
					cr_assert_eq(p->payload, s->delivered, "out of order or twice: got %d, want %d",
						     p->payload, s->delivered);
					s->delivered++;
				}
				mbu_rel_rx_ack(&s->rx, &cum, &sack);
				put(s, (struct dgram){.is_ack = true, .cum = cum, .sack = sack});
			}
		}
		if (mbu_rel_tx_poll(&s->tx, s->now, resend, s) < 0)
			return false;
		s->now += 2000;
	}
	return s->delivered == total && !mbu_rel_tx_inflight(&s->tx);
}

static void start(struct sim *s, unsigned seed, int loss, int dup, uint32_t first_seq)
{
	memset(s, 0, sizeof(*s));
	s->rng = seed;
	s->loss = loss;
	s->dup = dup;
	mbu_rel_tx_init(&s->tx, 100000, 30);
	mbu_rel_rx_init(&s->rx);
	s->tx.next_seq = s->tx.una = s->rx.expect = first_seq;
}

Test(rel, lossy_duplicating_reordering_channel, .timeout = 60)
{
	static struct sim s;
	int loss[] = {0, 5, 20, 40};

	for (int k = 0; k < 4; k++) {
		start(&s, 7u + (unsigned)k, loss[k], 10, 0);
		cr_assert(run(&s, 20000, 600ull * 1000000000ull), "loss %d%%: gave up", loss[k]);
		cr_assert_eq(s.delivered, 20000);
		cr_assert_eq(s.released, 20000, "every packet released once");
		cr_assert_eq(mbu_rel_tx_inflight(&s.tx), 0);
		if (loss[k] > 0)
			cr_assert_gt(s.rx.dups + s.datagrams, 20000u, "no retransmission happened");
	}
}

Test(rel, sequence_numbers_wrap, .timeout = 60)
{
	static struct sim s;

	start(&s, 99, 20, 10, 0xffffff00u);
	cr_assert(run(&s, 5000, 600ull * 1000000000ull));
	cr_assert_eq(s.delivered, 5000);
	cr_assert_eq(s.rx.expect, 0xffffff00u + 5000u, "did not wrap");
}

static void count_resend(uint32_t seq, void *p, void *arg)
{
	(void)seq;
	(void)p;
	++*(int *)arg;
}

Test(rel, dead_channel_is_declared_lost)
{
	struct mbu_rel_tx t;
	int x = 1, resends = 0, ret = 0;
	uint64_t now = 0;

	mbu_rel_tx_init(&t, 1000, 5);
	cr_assert_eq(mbu_rel_tx_push(&t, &x, now), 0);
	/* Timeouts double: 1, 2, 4, 8 us after each attempt; the 5th attempt's
	 * timeout (16 us) ends it. */
	for (now = 0; now <= 40000 && (ret = mbu_rel_tx_poll(&t, now, count_resend, &resends)) == 0;
	     now += 100)
		;
	cr_assert_eq(ret, -1);
	cr_assert_eq(resends, 4);
	cr_assert_geq(now, 31000);
	cr_assert_leq(now, 31100);
}

Test(rel, backoff_is_capped)
{
	struct mbu_rel_tx t;
	int x = 1, resends = 0, ret = 0;
	uint64_t now = 0, step = 10000000ULL; /* 10 ms */

	mbu_rel_tx_init(&t, 200000000ULL, 10);
	cr_assert_eq(mbu_rel_tx_push(&t, &x, now), 0);
	/* 0.2, 0.4, 0.8 s, then 1 s for each of the remaining 7 attempts:
	 * lost at 8.4 s, not at 0.2 * (2^10 - 1) = 204.6 s. */
	for (now = 0; now <= 300000000000ULL &&
		      (ret = mbu_rel_tx_poll(&t, now, count_resend, &resends)) == 0;
	     now += step)
		;
	cr_assert_eq(ret, -1);
	cr_assert_eq(resends, 9);
	cr_assert_geq(now, 8400000000ULL);
	cr_assert_leq(now, 8400000000ULL + step);
}

Test(rel, bogus_acks_free_nothing)
{
	struct mbu_rel_tx t;
	int p[8], released = 0;

	mbu_rel_tx_init(&t, 1000, 3);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(mbu_rel_tx_push(&t, &p[i], 0), i);
	{
		struct mbu_rel_tx full;
		mbu_rel_tx_init(&full, 1000, 3);
		for (int i = 0; i < MBU_REL_WINDOW; i++)
			cr_assert_eq(mbu_rel_tx_push(&full, &p[0], 0), i);
		cr_assert_eq(mbu_rel_tx_push(&full, &p[0], 0), -1, "window full");
	}
	/* Beyond what was sent, and selective bits beyond it. */
	cr_assert_eq(mbu_rel_tx_ack(&t, 9, 0, release, &released), 0);
	cr_assert_eq(mbu_rel_tx_ack(&t, 0, ~0ull << 10, release, &released), 0);
	cr_assert_eq(mbu_rel_tx_inflight(&t), 8);
	/* A real one, then a stale one behind it. */
	cr_assert_eq(mbu_rel_tx_ack(&t, 3, 1ull << 1, NULL, NULL), 4); /* 0,1,2 and 5 */
	cr_assert_eq(mbu_rel_tx_ack(&t, 1, 0, NULL, NULL), 0);
	cr_assert_eq(t.una, 3);
	cr_assert_eq(mbu_rel_tx_ack(&t, 5, 0, NULL, NULL), 2); /* 3, 4; 5 was already */
	cr_assert_eq(t.una, 6, "una slides past the selectively acknowledged 5");
}

Test(rel, receiver_window_and_duplicates)
{
	struct mbu_rel_rx r;
	int a, b, c;
	uint32_t cum;
	uint64_t sack;

	mbu_rel_rx_init(&r);
	cr_assert_eq(mbu_rel_rx_push(&r, 2, &c), MBU_REL_ACCEPT);
	cr_assert_eq(mbu_rel_rx_push(&r, 2, &c), MBU_REL_DUPLICATE);
	cr_assert_eq(mbu_rel_rx_push(&r, MBU_REL_WINDOW, &c), MBU_REL_OUT_OF_WINDOW);
	cr_assert_null(mbu_rel_rx_pop(&r));
	mbu_rel_rx_ack(&r, &cum, &sack);
	cr_assert_eq(cum, 0);
	cr_assert_eq(sack, 1ull << 1); /* packet 2 = cum + 1 + 1 */
	cr_assert_eq(mbu_rel_rx_push(&r, 0, &a), MBU_REL_ACCEPT);
	cr_assert_eq(mbu_rel_rx_push(&r, 1, &b), MBU_REL_ACCEPT);
	cr_assert_eq(mbu_rel_rx_pop(&r), &a);
	cr_assert_eq(mbu_rel_rx_pop(&r), &b);
	cr_assert_eq(mbu_rel_rx_pop(&r), &c);
	cr_assert_null(mbu_rel_rx_pop(&r));
	cr_assert_eq(mbu_rel_rx_push(&r, 1, &b), MBU_REL_DUPLICATE);
	cr_assert_eq(r.dups, 2);
}
