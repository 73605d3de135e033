/* The net wire: how a matchbox endpoint reaches endpoints on other hosts.
 *
 * Frames to a net peer are written into a private per-peer ring with the
 * same calls as the shm wire (so ordering and back-pressure are the ring's),
 * and this layer moves them onto one of two channels built on libfabric core
 * providers: a datagram channel (FI_EP_DGRAM, udp) made reliable with
 * util/mbu_rel, and a connection (FI_EP_MSG, tcp; verbs where it can serve
 * unregistered buffers) whose receive buffers all come from one shared
 * receive context, with per-connection credits. Which channel, and when a
 * connection is made or closed, is the connection-management mode
 * (FI_MATCHBOX_CONN_MODE). Inbound frames are checked, then handed to the
 * same matcher as shm frames. */
#ifndef MBX_NET_H
#define MBX_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <rdma/fabric.h>

struct mbx_ep;
struct mbx_peer;
struct mbx_net;
struct mbx_npeer;
struct mbx_mr;
struct mbx_rma_req;
struct mbx_wire;
struct fi_matchbox_net_stats;

/* Opens the net wire of an endpoint and puts its address and ports into
 * ep->addr. No usable network is not an error: ep->net stays NULL and the
 * endpoint reaches its own host only. */
int mbx_net_open(struct mbx_ep *ep);
/* Ships what is still queued (bounded by FI_MATCHBOX_NET_LINGER_MS), then
 * closes everything. */
void mbx_net_close(struct mbx_ep *ep);
int mbx_net_peer_init(struct mbx_ep *ep, struct mbx_peer *p);
void mbx_net_peer_fini(struct mbx_ep *ep, struct mbx_peer *p);
/* Frames were committed to p's ring. */
void mbx_net_kick(struct mbx_ep *ep, struct mbx_peer *p);
/* Rendezvous by fi_read where the core has FI_RMA and the peer's connection
 * is up: the sender registers its data (key into *key), the receiver pulls
 * it (mbx_net_read_done() follows, in mbx_progress.c). Both return a
 * negative fi_errno when the path is not available now; the caller then
 * uses the clear-to-send path. A registration of one buffer comes from the
 * registration cache and may start before it: the data is at *base in it.
 * mbx_net_rma_release() gives back what the send held. */
int mbx_net_rma_reg(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_tx *tx, uint32_t *key,
		    uint64_t *base);
/* The most of a message's first bytes its RTS may carry (0: none). */
size_t mbx_net_rts_head(const struct mbx_ep *ep);
/* Extra rails (mbx_rail.h). Before an RTS whose registration is on them
 * (tx->rails), a peer not yet told gets our rail addresses: their number,
 * and *names, when it must be told (then mbx_net_rails_told() once the
 * frame is written); 0 otherwise. */
unsigned mbx_net_rails_untold(struct mbx_ep *ep, struct mbx_peer *p, const void **names);
void mbx_net_rails_told(struct mbx_ep *ep, struct mbx_peer *p);
/* A RAILS frame from p: cnt addresses (struct mbx_rail_name) after the
 * header, checked for their count already. */
void mbx_net_rails_learn(struct mbx_ep *ep, struct mbx_peer *p, const void *names, unsigned cnt);
void mbx_net_rma_release(struct mbx_ep *ep, struct mbx_tx *tx);
/* Posts reads of rx->rd_key from rx->rd_next on while the connection's read
 * window has room; 0 when something is in flight, all is asked for or rx
 * waits for room (a completion on the connection makes room). */
int mbx_net_read(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rx *rx);
/* User RMA by the core's own fi_write/fi_read (wire version 7, see
 * mbx_proto.h). Initiator: a write or read whose key the peer has offered,
 * within the region and its access, goes on the peer's connection: 0 when
 * posted or completed with an access error here; 1 when it is for the
 * frames (with r->wantkey set if the target should offer its key); a
 * negative fi_errno (-FI_EAGAIN) to give the caller. */
int mbx_net_rma(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_rma_req *r);
/* Core operations of ours toward p not completed yet (a fence waits). */
bool mbx_net_rma_busy(struct mbx_peer *p);
/* A KEY frame from p: remember or forget the offer. */
void mbx_net_key(struct mbx_ep *ep, struct mbx_peer *p, const struct mbx_wire *w);
/* Target: may p reach `mr` through our core? Then its core key goes into
 * *ckey (registered at the first offer) and p is remembered as told. */
int mbx_net_key_offer(struct mbx_ep *ep, struct mbx_peer *p, struct mbx_mr *mr, uint64_t *ckey);
/* Target: `mr` is closing or will count its accesses: every peer told its
 * key is told it is withdrawn, and the core registrations are closed. */
void mbx_net_mr_revoke(struct mbx_mr *mr);
void mbx_net_progress(struct mbx_ep *ep);
/* Something is under way that only polling will move. */
bool mbx_net_busy(struct mbx_ep *ep);
/* Sleeping in descriptors: the net wire's descriptors that become readable
 * when it has work (at most 4, into fds; their number); then, after
 * progress, whether the endpoint may sleep in them now: 0 yes, -FI_EAGAIN
 * work arrived, -FI_EBUSY only polling moves what is under way. Arming
 * starts a timer that wakes the sleeper within 100 ms while there are net
 * peers; disarming stops it. */
int mbx_net_wait_fds(struct mbx_ep *ep, int *fds);
int mbx_net_arm(struct mbx_ep *ep);
void mbx_net_disarm(struct mbx_ep *ep);
void mbx_net_stats(struct mbx_ep *ep, struct fi_matchbox_net_stats *s);
/* The IPv4 address of interface `name` (host order; "" for the first one
 * up that is not loopback), 0 if none. */
uint32_t mbx_net_iface_ip(const char *name);
/* A core provider's fi_info bound to `ip` with the modes the net wire and
 * the rails use (FI_CONTEXT2, no mr_mode bits, FI_THREAD_DOMAIN), found
 * also when FI_PROVIDER hides it; NULL if none. */
struct fi_info *mbx_net_core_info(const char *prov, enum fi_ep_type type, uint32_t ip,
				  uint64_t caps);

#endif
