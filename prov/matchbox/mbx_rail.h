/* Extra rails of the net wire: more NICs (or more connections on one)
 * toward the same peers, used only to pull the data of large messages.
 *
 * Rail 0 is the net wire itself (mbx_net.c): every frame, and so MPI's
 * order, stays on it. Each extra rail is a reliable datagram endpoint of a
 * core provider (tcp;ofi_rxm here, verbs;ofi_rxm on a cluster) bound to one
 * interface; the core makes its connections. A sender registers a large
 * message's data on every rail under the same key as on rail 0, so the
 * receiver may read any piece of it over any rail both sides have
 * (Vishnu, Benton and Panda's striping). The peer learns a sender's rail
 * addresses from an MBX_OP_RAILS frame that precedes its first such RTS. */
#ifndef MBX_RAIL_H
#define MBX_RAIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fabric.h>

/* Rail 0 and up to three more. */
#define MBX_RAILS_MAX 4u

enum mbx_rail_policy {
	MBX_RAIL_STRIPE = 0,	/* every large message's pieces over all rails */
	MBX_RAIL_ROUND_ROBIN,	/* each large message whole on the next rail */
	MBX_RAIL_BINDING,	/* all of a peer's large messages on one rail */
};

struct mbx_rails;

/* One rail's address, as the RAILS frame carries it (host order). */
struct mbx_rail_name {
	uint32_t ip;
	uint16_t port;
	uint16_t rsvd;
};

/* Opens a rail on each interface of the comma-separated list (at most
 * MBX_RAILS_MAX - 1), in order. An interface without IPv4 or core provider
 * is left out with a warning, and so are those after it (rails pair with
 * the peers' by position); none at all gives *out NULL and 0. */
int mbx_rails_open(const char *ifaces, struct mbx_rails **out);
void mbx_rails_close(struct mbx_rails *r);
/* Extra rails open: rail k (1 <= k <= count) is index k - 1 below. */
unsigned mbx_rails_count(const struct mbx_rails *r);
const struct mbx_rail_name *mbx_rails_names(const struct mbx_rails *r);
const char *mbx_rails_iface(const struct mbx_rails *r, unsigned i);

/* Registers [addr, addr + len) for remote reads on every rail under `key`;
 * mrs gets one registration per rail. All or nothing. */
int mbx_rails_reg(struct mbx_rails *r, void *addr, size_t len, uint64_t key,
		  struct fid_mr **mrs);
void mbx_rails_dereg(struct mbx_rails *r, struct fid_mr **mrs);

/* The address of a peer's rail i in our rail i's table (inserted the first
 * time); FI_ADDR_NOTAVAIL if it cannot be. */
fi_addr_t mbx_rails_peer(struct mbx_rails *r, unsigned i, const struct mbx_rail_name *peer);

/* A read of `len` bytes at offset `raddr` under `key` of the peer's
 * registration, into (iov, cnt), completing with `ctx`. */
int mbx_rails_read(struct mbx_rails *r, unsigned i, fi_addr_t peer, const struct iovec *iov,
		   size_t cnt, uint64_t raddr, size_t len, uint64_t key, void *ctx);

/* Completions of rail i: up to max contexts into ctx and their errors (0
 * or a positive fi_errno) into err; their number. Also what makes the core
 * serve the peers' reads of our data, so it is called while any is
 * possible. */
int mbx_rails_poll(struct mbx_rails *r, unsigned i, void **ctx, int *err, int max);

#endif
