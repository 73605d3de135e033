/* The net wire's flow-control arithmetic (util/mbu_credit.h): the shared
 * receive queue's size grows with log n, windows stay between the floor and
 * the ceiling and fit the budget, and, in a simulated receiver whose
 * connections come and go while senders push as fast as their credits
 * allow and frames are consumed in random order, the frames in the queue
 * never outnumber the buffers posted (no drop), and every sender gets all
 * its frames through (no deadlock). Last, the count of frames a peer has
 * taken, which lets small frames leave a drained connection for datagrams,
 * only moves forward and never past what was sent. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "mbu_credit.h"

Test(credit, budget_grows_with_log_n)
{
	cr_assert_eq(mbu_srq_budget(0, 8, 32), 32);
	cr_assert_eq(mbu_srq_budget(1, 8, 32), 40);
	cr_assert_eq(mbu_srq_budget(3, 8, 32), 48);
	cr_assert_eq(mbu_srq_budget(4, 8, 32), 56);
	cr_assert_eq(mbu_srq_budget(62, 8, 32), 80);
	cr_assert_eq(mbu_srq_budget(4095, 8, 32), 12 * 8 + 32);
	cr_assert_eq(mbu_srq_budget(UINT32_MAX, 8, 32), 32 * 8 + 32);
}

Test(credit, windows_fit_the_budget)
{
	static const uint32_t ks[] = { 0, 1, 8, 64 }, bs[] = { 1, 32, 1000 }, ws[] = { 1, 2, 16, 64 };

	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < 3; j++)
			for (unsigned l = 0; l < 4; l++) {
				for (uint32_t n = 1; n <= 5000; n++) {
					uint32_t w = mbu_win_target(n, ks[i], bs[j], ws[l]);
					uint32_t x = mbu_srq_budget(n, ks[i], bs[j]);

					cr_assert(w >= mbu_win_floor(ws[l]) && w <= ws[l]);
					if (w > mbu_win_floor(ws[l]))
						cr_assert_leq(n * w + MBU_CREDIT_MARGIN, x);
					cr_assert_geq(mbu_srq_target(n, ks[i], bs[j], n * w),
						      n * w + MBU_CREDIT_MARGIN);
				}
			}
	/* The defaults: one connection streams with the full window; 62
	 * share 80 buffers at the floor. */
	cr_assert_eq(mbu_win_target(1, 8, 32, 16), 16);
	cr_assert_eq(mbu_win_target(62, 8, 32, 16), 2);
	cr_assert_eq(mbu_srq_target(62, 8, 32, 62 * 2), 62 * 2 + 8);
}

#define MAXC 64

struct sender {
	bool open;
	uint32_t credits;	/* held by the sender */
	uint32_t pending;	/* credits on their way back (in the receiver's frame) */
	uint64_t sent, to_send;
};

struct sim {
	struct sender s[MAXC];
	struct mbu_credit_rx rx[MAXC];
	int queue[1 << 14];	/* connection of each frame waiting in the SRQ */
	int nq;
	uint32_t committed, nconns, posted, wmax;
	unsigned rng;
};

static unsigned rnd(struct sim *m)
{
	m->rng = m->rng * 1103515245u + 12345u;
	return (m->rng >> 8) & 0xffffff;
}

static void open_conn(struct sim *m, int c)
{
	m->s[c] = (struct sender){ .open = true, .credits = mbu_win_floor(m->wmax),
				    .to_send = 200 + rnd(m) % 300 };
	mbu_credit_open(&m->rx[c], m->wmax, &m->committed);
	m->nconns++;
}

static void repost(struct sim *m)
{
	uint32_t t = mbu_srq_target(m->nconns, 8, 32, m->committed);

	if (m->posted < t)
		m->posted = t;	/* posted buffers are never taken back */
}

static void return_credits(struct sim *m, int c, uint32_t target)
{
	/* The receiver sends owed credits once half a window is owed, as the
	 * provider does, or when told to flush. */
	if (m->rx[c].owed && (m->rx[c].owed * 2 >= target || target == 0)) {
		m->s[c].pending += m->rx[c].owed;
		mbu_credit_sent(&m->rx[c]);
	}
}

static void run(unsigned seed, uint32_t wmax)
{
	struct sim *m = calloc(1, sizeof(*m));
	int live = 0, step;

	m->rng = seed;
	m->wmax = wmax;
	for (step = 0; step < 2000000; step++) {
		int c = (int)(rnd(m) % MAXC);
		unsigned what = rnd(m) % 100;
		uint32_t target = mbu_win_target(m->nconns, 8, 32, m->wmax);

		repost(m);
		cr_assert_leq((uint32_t)m->nq, m->posted - MBU_CREDIT_MARGIN,
			      "the queue holds more frames than buffers (step %d)", step);
		if (what < 2 && !m->s[c].open && live < MAXC) {
			open_conn(m, c);
			live++;
			target = mbu_win_target(m->nconns, 8, 32, m->wmax);
			if (mbu_credit_grow(&m->rx[c], target, &m->committed)) {
				repost(m);
				return_credits(m, c, 0);
			}
		} else if (what < 40 && m->s[c].open && m->s[c].credits &&
			   m->s[c].sent < m->s[c].to_send) {
			m->s[c].credits--;
			m->s[c].sent++;
			m->queue[m->nq++] = c;
		} else if (what < 75 && m->nq) {
			int i = (int)(rnd(m) % (unsigned)m->nq), from = m->queue[i];

			m->queue[i] = m->queue[--m->nq];
			mbu_credit_consumed(&m->rx[from], target, &m->committed);
			return_credits(m, from, target);
		} else if (what < 90 && m->s[c].pending) {
			m->s[c].credits += m->s[c].pending;
			cr_assert_leq(m->s[c].credits, m->wmax);
			m->s[c].pending = 0;
		} else if (what < 95 && m->s[c].open) {
			/* the receiver's periodic pass: grow, flush */
			if (mbu_credit_grow(&m->rx[c], target, &m->committed))
				repost(m);
			return_credits(m, c, 0);
		} else if (m->s[c].open && m->s[c].sent == m->s[c].to_send) {
			bool busy = false;

			for (int i = 0; i < m->nq; i++)
				busy |= m->queue[i] == c;
			if (!busy) {	/* a quiet connection closes */
				mbu_credit_close(&m->rx[c], &m->committed);
				m->s[c].open = false;
				m->nconns--;
				live--;
			}
		}
	}
	/* Drain: every sender must finish with what the protocol gives it. */
	for (int round = 0; round < 1000000; round++) {
		bool all = true;

		for (int c = 0; c < MAXC; c++) {
			uint32_t target = mbu_win_target(m->nconns, 8, 32, m->wmax);

			if (!m->s[c].open)
				continue;
			if (mbu_credit_grow(&m->rx[c], target, &m->committed))
				repost(m);
			return_credits(m, c, 0);
			m->s[c].credits += m->s[c].pending;
			m->s[c].pending = 0;
			if (m->s[c].credits && m->s[c].sent < m->s[c].to_send) {
				m->s[c].credits--;
				m->s[c].sent++;
				m->queue[m->nq++] = c;
			}
			all &= m->s[c].sent == m->s[c].to_send;
		}
		while (m->nq) {
			int from = m->queue[--m->nq];

			mbu_credit_consumed(&m->rx[from], mbu_win_target(m->nconns, 8, 32, m->wmax),
					    &m->committed);
		}
		if (all)
			break;
	}
	for (int c = 0; c < MAXC; c++)
		if (m->s[c].open)
			cr_assert_eq(m->s[c].sent, m->s[c].to_send, "sender %d starved", c);
	free(m);
}

/* One connection streams with the full window; 63 more open and all
 * stream: the first one's window must shrink to the new target as it
 * consumes, so that the promised buffers fit the log-sized budget. */
Test(credit, windows_shrink_when_connections_are_added)
{
	struct mbu_credit_rx rx[64];
	uint32_t committed = 0, held[64], t, c, i, round;

	mbu_credit_open(&rx[0], 16, &committed);
	mbu_credit_grow(&rx[0], mbu_win_target(1, 8, 32, 16), &committed);
	mbu_credit_sent(&rx[0]);
	held[0] = rx[0].lent;
	cr_assert_eq(held[0], 16);
	for (c = 1; c < 64; c++) {
		mbu_credit_open(&rx[c], 16, &committed);
		held[c] = rx[c].lent;
	}
	t = mbu_win_target(64, 8, 32, 16);
	for (round = 0; round < 100; round++) {
		for (c = 0; c < 64; c++) {
			/* the sender spends what it holds; the receiver consumes */
			for (i = 0; i < held[c]; i++)
				mbu_credit_consumed(&rx[c], t, &committed);
			mbu_credit_grow(&rx[c], t, &committed);
			held[c] = rx[c].owed;
			mbu_credit_sent(&rx[c]);
		}
	}
	for (c = 0; c < 64; c++)
		cr_assert_leq(rx[c].lent + rx[c].owed, t, "connection %u kept a window of %u", c,
			      rx[c].lent + rx[c].owed);
	cr_assert_leq(committed + MBU_CREDIT_MARGIN,
		      mbu_srq_target(64, 8, 32, 64 * mbu_win_floor(16)));
}

Test(credit, simulated_receiver_never_overrun_nor_stuck, .timeout = 60)
{
	run(1, 16);
	run(7, 2);
	run(42, 64);
	run(99, 1);
}

/* The connection budget: logarithmic in the job, with a floor that keeps
 * small jobs fully connected, and a fixed setting taken as it is. */
Test(credit, connection_budget)
{
	cr_assert_eq(mbu_conn_budget(0, 0), 8);
	cr_assert_eq(mbu_conn_budget(4, 0), 8);
	cr_assert_eq(mbu_conn_budget(16, 0), 8);
	cr_assert_eq(mbu_conn_budget(17, 0), 10);
	cr_assert_eq(mbu_conn_budget(64, 0), 12);
	cr_assert_eq(mbu_conn_budget(65, 0), 14);
	cr_assert_eq(mbu_conn_budget(1u << 20, 0), 40);
	cr_assert_eq(mbu_conn_budget(64, 3), 3);
	/* Grows like log2: from 1k to 1M endpoints it only doubles. */
	cr_assert_eq(mbu_conn_budget(1u << 20, 0), 2 * mbu_conn_budget(1u << 10, 0));
}

Test(credit, taken_count_moves_forward_only)
{
	uint32_t seen = 0;

	mbu_count_seen(&seen, 3, 5);
	cr_assert_eq(seen, 3);
	mbu_count_seen(&seen, 2, 5);	/* stale: an older header */
	cr_assert_eq(seen, 3);
	mbu_count_seen(&seen, 6, 5);	/* more than was sent: corrupt */
	cr_assert_eq(seen, 3);
	mbu_count_seen(&seen, 5, 5);
	cr_assert_eq(seen, 5);
	mbu_count_seen(&seen, 0x80000005u, 5);	/* far ahead is behind, wrapped */
	cr_assert_eq(seen, 5);

	/* Across the wrap of 32 bits. */
	seen = 0xfffffffeu;
	mbu_count_seen(&seen, 1, 2);
	cr_assert_eq(seen, 1);
	mbu_count_seen(&seen, 0xffffffffu, 2);
	cr_assert_eq(seen, 1);
	mbu_count_seen(&seen, 3, 2);
	cr_assert_eq(seen, 1);
	mbu_count_seen(&seen, 2, 2);
	cr_assert_eq(seen, 2);
}
