/*
 * Reliability for a datagram channel (the net wire's UD/udp path, issue 4):
 * sequence numbers, cumulative acknowledgements with a 64-packet selective
 * bitmap, retransmission on a timeout that doubles per attempt, a bounded
 * number of attempts, duplicate suppression and in-order release of what
 * arrived out of order. Pure bookkeeping: the caller owns the packets and
 * the clock, so the whole thing is tested against a simulated lossy,
 * duplicating, reordering channel (tests/unit/test_rel.c).
 */
#ifndef MBU_REL_H
#define MBU_REL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MBU_REL_WINDOW 64 /* packets in flight per peer, and the SACK width */

struct mbu_rel_tx_ent {
	void *pkt;          /* NULL: slot free */
	uint64_t sent_ns;   /* last (re)transmission */
	uint32_t tries;
};

/* Retransmission timeouts double from rto_ns up to this ceiling, so that a
 * dead peer is declared lost in bounded time (about max_tries seconds at
 * worst) rather than after minutes of exponential waiting. */
#define MBU_REL_RTO_MAX_NS 1000000000ULL

/* Sender half, one per peer. */
struct mbu_rel_tx {
	uint32_t next_seq;  /* sequence number of the next new packet */
	uint32_t una;       /* oldest unacknowledged */
	uint64_t rto_ns;    /* first retransmission timeout */
	uint32_t max_tries; /* attempts before the peer is declared lost */
	struct mbu_rel_tx_ent ent[MBU_REL_WINDOW];
};

/* Receiver half, one per peer. */
struct mbu_rel_rx {
	uint32_t expect;    /* next sequence number to release */
	void *held[MBU_REL_WINDOW]; /* arrived ahead of `expect` */
	uint64_t dups;      /* duplicates dropped (for statistics) */
};

enum mbu_rel_verdict { MBU_REL_ACCEPT, MBU_REL_DUPLICATE, MBU_REL_OUT_OF_WINDOW };

void mbu_rel_tx_init(struct mbu_rel_tx *t, uint64_t rto_ns, uint32_t max_tries);
void mbu_rel_rx_init(struct mbu_rel_rx *r);

/* Sequence number for `pkt`, or -1 when the window is full (back-pressure). */
int64_t mbu_rel_tx_push(struct mbu_rel_tx *t, void *pkt, uint64_t now_ns);

/* An acknowledgement: everything before `cum` arrived, and bit i of `sack`
 * says packet cum + 1 + i did. `release` is called for each packet now
 * known delivered. Returns the number released; acks from outside the
 * window are ignored (a stale or forged ack must not free anything). */
int mbu_rel_tx_ack(struct mbu_rel_tx *t, uint32_t cum, uint64_t sack,
		   void (*release)(void *pkt, void *arg), void *arg);

/* Calls `resend` for every packet whose timeout expired (and restarts its
 * timer with the doubled timeout). Returns -1 once a packet has used up its
 * attempts: the peer is unreachable and the caller fails its operations. */
int mbu_rel_tx_poll(struct mbu_rel_tx *t, uint64_t now_ns,
		    void (*resend)(uint32_t seq, void *pkt, void *arg), void *arg);

static inline uint32_t mbu_rel_tx_inflight(const struct mbu_rel_tx *t)
{
	return t->next_seq - t->una;
}

/* A data packet with sequence `seq` arrived. On ACCEPT the receiver keeps
 * `pkt` until mbu_rel_rx_pop hands it back in order; otherwise the caller
 * drops it (and still acknowledges, since its ack may have been lost). */
enum mbu_rel_verdict mbu_rel_rx_push(struct mbu_rel_rx *r, uint32_t seq, void *pkt);

/* The next packet in order, or NULL. */
void *mbu_rel_rx_pop(struct mbu_rel_rx *r);
/* Would mbu_rel_rx_pop hand a packet back now? */
static inline bool mbu_rel_rx_peek(const struct mbu_rel_rx *r)
{
	return r->held[r->expect % MBU_REL_WINDOW] != NULL;
}

/* The acknowledgement to send: cumulative `expect` and the bitmap of held
 * packets after it. */
void mbu_rel_rx_ack(const struct mbu_rel_rx *r, uint32_t *cum, uint64_t *sack);

#endif
