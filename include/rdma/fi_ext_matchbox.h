/* Provider-specific extensions of the matchbox libfabric provider.
 *
 * Statistics: fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS,
 * &stats, &len) with len = sizeof(struct fi_matchbox_stats) copies the
 * endpoint's counters (a caller built against an older header passes the
 * older size and gets the fields it knows); FI_MATCHBOX_OPT_NET_STATS with struct
 * fi_matchbox_net_stats copies those of its net wire (all zero when the
 * endpoint has none). */
#ifndef FI_EXT_MATCHBOX_H
#define FI_EXT_MATCHBOX_H

#include <stdint.h>
#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Option names in FI_OPT_ENDPOINT, chosen far above libfabric's own. */
#define FI_MATCHBOX_OPT_BASE	0x6d620000
#define FI_MATCHBOX_OPT_STATS	(FI_MATCHBOX_OPT_BASE + 1)	/* struct fi_matchbox_stats */
#define FI_MATCHBOX_OPT_NET_STATS (FI_MATCHBOX_OPT_BASE + 2)	/* struct fi_matchbox_net_stats */

struct fi_matchbox_stats {
	uint64_t shm_peers;		/* same-node peers this endpoint has opened */
	uint64_t eager_sent;		/* messages sent eagerly */
	uint64_t rdv_cma;		/* large messages pulled with CMA */
	uint64_t rdv_copy;		/* large messages through the two-copy pipeline */
	uint64_t unexpected;		/* messages that arrived before their receive */
	uint64_t backpressure;		/* times a full ring or buffer queued a send */
	uint64_t bad_frames;		/* frames rejected as malformed */
	uint64_t rdv_read;		/* large messages pulled from another host with fi_read */
	/* RMA this endpoint started toward same-node peers: moved straight
	 * between the address spaces with CMA, or through the target's
	 * progress in frames (refused by the target's table, CQ data, fence,
	 * atomics, or CMA not allowed). */
	uint64_t rma_cma;
	uint64_t rma_frames;
	/* Large messages sent to another host whose request carried their
	 * first bytes (FI_MATCHBOX_NET_RTS_HEAD). */
	uint64_t rdv_head;
};

/* The net wire (peers on other hosts). Connections are counted per
 * endpoint; "made" are the ones this endpoint asked for, "accepted" the
 * ones it took from a peer, so made + accepted - closed == open. */
struct fi_matchbox_net_stats {
	uint64_t peers;			/* other-host peers known */
	uint64_t conns_open;		/* connections up now */
	uint64_t conns_max;		/* most ever up at once */
	uint64_t conns_made;
	uint64_t conns_accepted;
	uint64_t conns_refused;		/* requests refused (lost a simultaneous connect) */
	uint64_t conns_closed;		/* closed: idle teardown or by the peer */
	uint64_t dgram_msgs;		/* frames sent on the datagram channel */
	uint64_t conn_msgs;		/* frames sent on connections */
	uint64_t retransmits;		/* datagrams sent again after a timeout */
	uint64_t duplicates;		/* datagrams received twice and dropped */
	uint64_t bad_frames;		/* frames rejected by the checks */
	uint64_t credit_waits;		/* times a connection had no credit left */
	uint64_t srq_posted;		/* buffers in the high-priority shared receive queue */
	/* Low-priority connections: a second connection to a peer, opened when
	 * it first has clear-to-send data, whose buffers come from a second
	 * queue of larger buffers (sizes in bytes below). */
	uint64_t lo_conns_open;
	uint64_t lo_conns_max;
	uint64_t lo_conns_made;		/* made or accepted */
	uint64_t lo_msgs;		/* frames sent on low-priority connections */
	uint64_t srq_lo_posted;
	uint64_t srq_buf_hi;		/* bytes of frame per high-priority buffer */
	uint64_t srq_buf_lo;
	/* Adaptive connections not made because our connection budget
	 * (FI_MATCHBOX_CONN_MAX) was full, and requests the peer declined
	 * because its own was: the peer stays on datagrams. */
	uint64_t conns_over_budget;
	/* Messages to a peer on datagrams after which adaptive mode connects
	 * it (FI_MATCHBOX_CONN_THRESHOLD, or the core's default); 0: never
	 * for that reason, as over tcp/udp, where a connection would carry
	 * none of the small messages that datagrams carry faster. */
	uint64_t busy_threshold;
	/* The registration cache of large sends' data for the peer's fi_read
	 * (FI_MATCHBOX_MR_CACHE_MAX_COUNT/_SIZE): lookups that found a
	 * registration, ones that made one, registrations made for one use
	 * (no memory monitor, or memory it cannot watch), and registrations
	 * dropped because their memory was unmapped or given back. */
	uint64_t mr_cache_hits;
	uint64_t mr_cache_misses;
	uint64_t mr_cache_uncached;
	uint64_t mr_cache_invalidated;
	/* User RMA to other hosts by the core provider's own fi_write and
	 * fi_read (the rest goes in frames, through the target's progress):
	 * operations posted that way; as a target, keys offered to peers for
	 * it and offers withdrawn because the region closed or got a counter. */
	uint64_t rma_core;
	uint64_t rma_keys_offered;
	uint64_t rma_keys_withdrawn;
	/* Rails (FI_MATCHBOX_NET_RAILS): 1 + the extra ones open, and the
	 * bytes of large messages this endpoint pulled over each with
	 * fi_read (rail 0: the connections of the net wire itself). */
	uint64_t rails;
	uint64_t rail_read_bytes[4];
	/* Connection rings (FI_MATCHBOX_CONN_RING): rings this endpoint
	 * offers on its connections now, and the connection frames above
	 * (conn_msgs) that went by RDMA write into a peer's ring. */
	uint64_t rings_open;
	uint64_t ring_msgs;
};

/* Tagged operations beyond libfabric's (fi_open_ops on an endpoint with
 * this name; matchbox only). trecv_now is fi_trecv, except that a receive
 * which meets a message already whole in the provider completes inside the
 * call: it returns 1 and fills *done as its CQ entry would have been, and
 * writes no CQ entry (a bound counter still counts it). It returns 0 when
 * the receive was posted, whose completion comes through the CQ as usual
 * (a truncated message's too), or a negative fi_errno as fi_trecv does.
 * An MPI library completes such a receive without a CQ write and read.
 *
 * trecv_take completes a receive only if it can do so at once: when the
 * oldest waiting message the receive matches is whole in the provider,
 * fits len and has none of the tag bits in `refuse`, it is copied to buf,
 * *done is filled as its CQ entry would have been (op_context NULL) and
 * the call returns 1. Otherwise it returns 0 and changes nothing: nothing
 * is posted, and the message (if any) stays first in line for the next
 * receive. A negative fi_errno for bad arguments. Neither kind of receive
 * writes a CQ entry when it returns 1. It is what an MPI library needs
 * for a blocking receive of a message that is already there: no request,
 * no context, no completion to dispatch.
 *
 * waiting returns the address of the endpoint's count of messages waiting
 * for a tagged receive, valid while the endpoint is open, so that a caller
 * can skip trecv_take when there are none without a call. It is a hint:
 * with FI_PROGRESS_AUTO it may be stale (read it with a relaxed atomic
 * load); trecv_take decides under the endpoint's lock. */
#define FI_MATCHBOX_TAGGED_OPS "matchbox_tagged_v1"

struct fi_cq_tagged_entry;
struct fid_ep;

struct fi_matchbox_tagged_ops {
	size_t size;
	ssize_t (*trecv_now)(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
			     uint64_t tag, uint64_t ignore, void *context,
			     struct fi_cq_tagged_entry *done);
	ssize_t (*trecv_take)(struct fid_ep *ep, void *buf, size_t len, fi_addr_t src,
			      uint64_t tag, uint64_t ignore, uint64_t refuse,
			      struct fi_cq_tagged_entry *done);
	const size_t *(*waiting)(struct fid_ep *ep);
};

#ifdef __cplusplus
}
#endif

#endif
