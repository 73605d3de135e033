/* The flow-control arithmetic of the net wire's connections, kept pure so
 * that it can be tested alone. One shared receive queue serves every
 * connection of an endpoint; it holds x = ceil(log2(n+1))·k + b buffers for
 * n connections (Shipman et al.), so memory grows with log n, not n. Each
 * connection's sender may have at most its window of frames unconsumed at
 * the receiver; the windows share the budget out (less a margin for
 * control frames, which take no credit), between a floor that keeps every
 * connection moving and a ceiling. Because the windows are what the
 * receiver lends, a queue of x + margin buffers can never be overrun, and
 * since every window is at least the floor, no sender waits for ever.
 * Where n·floor exceeds the budget, the queue grows past x to n·floor +
 * margin: slow, but never a drop nor a deadlock. */
#ifndef MBU_CREDIT_H
#define MBU_CREDIT_H

#include <stdint.h>

#define MBU_CREDIT_MARGIN 8u	/* buffers kept for credit and close frames */
#define MBU_CREDIT_FLOOR 2u	/* smallest window */

/* ceil(log2(v)), 0 for v <= 1. */
static inline uint32_t mbu_ceil_log2(uint64_t v)
{
	uint32_t lg = 0;

	while (lg < 64 && (1ull << lg) < v)
		lg++;
	return lg;
}

static inline uint32_t mbu_srq_budget(uint32_t nconns, uint32_t k, uint32_t b)
{
	return mbu_ceil_log2((uint64_t)nconns + 1) * k + b;
}

static inline uint32_t mbu_win_floor(uint32_t wmax)
{
	return wmax < MBU_CREDIT_FLOOR ? wmax : MBU_CREDIT_FLOOR;
}

/* The window each of `nconns` connections gets; `wmax` >= 1 is the ceiling. */
static inline uint32_t mbu_win_target(uint32_t nconns, uint32_t k, uint32_t b, uint32_t wmax)
{
	uint32_t x = mbu_srq_budget(nconns, k, b), w;

	if (!nconns)
		return wmax;
	w = x > MBU_CREDIT_MARGIN ? (x - MBU_CREDIT_MARGIN) / nconns : 0;
	if (w > wmax)
		w = wmax;
	return w < mbu_win_floor(wmax) ? mbu_win_floor(wmax) : w;
}

/* Connections a process makes, or accepts, because a peer got busy
 * (adaptive mode's message count), among `peers` endpoints: 2·ceil(log2
 * peers), at least 8, unless `fixed` names a number. Like MVAPICH's hybrid
 * UD/RC design, the peers past it stay on datagrams, so an all-to-all does
 * not connect every pair; a pattern that talks to few peers (a stencil,
 * log2(N) butterfly partners) still gets all its connections. */
static inline uint32_t mbu_conn_budget(uint32_t peers, uint32_t fixed)
{
	uint32_t lg = mbu_ceil_log2(peers);

	if (fixed)
		return fixed;
	return 2 * lg < 8 ? 8 : 2 * lg;
}

/* Buffers to keep posted: the budget, or what has been lent if more. */
static inline uint32_t mbu_srq_target(uint32_t nconns, uint32_t k, uint32_t b, uint32_t committed)
{
	uint32_t x = mbu_srq_budget(nconns, k, b), need = committed + MBU_CREDIT_MARGIN;

	return x > need ? x : need;
}

/* The receiving side of one connection: `lent` credits the sender holds or
 * has spent on frames not yet consumed, `owed` the ones to hand back (or
 * newly granted) with the next frame; `*committed` sums lent + owed over
 * all connections, the buffers promised. */
struct mbu_credit_rx {
	uint32_t lent, owed;
};

static inline void mbu_credit_open(struct mbu_credit_rx *r, uint32_t wmax, uint32_t *committed)
{
	r->lent = mbu_win_floor(wmax);
	r->owed = 0;
	*committed += r->lent;
}

static inline void mbu_credit_close(struct mbu_credit_rx *r, uint32_t *committed)
{
	*committed -= r->lent + r->owed;
	r->lent = r->owed = 0;
}

/* A frame that took a credit was consumed. Its credit goes back only while
 * the sender's window is under `target`: that is how a window shrinks when
 * connections are added. */
static inline void mbu_credit_consumed(struct mbu_credit_rx *r, uint32_t target,
				       uint32_t *committed)
{
	if (!r->lent)
		return;	/* a frame from a connection since closed */
	r->lent--;
	(*committed)--;
	if (r->lent + r->owed < target) {
		r->owed++;
		(*committed)++;
	}
}

/* Grow the window to `target` (post the buffers first); returns the credits
 * added to `owed`. */
static inline uint32_t mbu_credit_grow(struct mbu_credit_rx *r, uint32_t target,
				       uint32_t *committed)
{
	uint32_t add;

	if (r->lent + r->owed >= target)
		return 0;
	add = target - r->lent - r->owed;
	r->owed += add;
	*committed += add;
	return add;
}

/* The owed credits left with a frame. */
static inline void mbu_credit_sent(struct mbu_credit_rx *r)
{
	r->lent += r->owed;
	r->owed = 0;
}

/* A peer's running count of our frames it has taken, as its latest header
 * says: `*seen` moves forward to `got` only if that is ahead of it and not
 * past `sent`, what we sent (32-bit counts that wrap). A stale header from
 * a frame that overtook a newer one, or a corrupt one, changes nothing, so
 * `*seen == sent` is never true while a frame of ours is still untaken. */
static inline void mbu_count_seen(uint32_t *seen, uint32_t got, uint32_t sent)
{
	if ((int32_t)(got - *seen) > 0 && (int32_t)(got - sent) <= 0)
		*seen = got;
}

#endif
