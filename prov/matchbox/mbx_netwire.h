/* The net wire's frames and connection data (mbx_net.c), in a header of
 * their own so that a test can speak them: tests/prov/test_hostile.c
 * connects to an endpoint the way a peer does and sends it frames no peer
 * would, to prove that every check in front of the matcher holds. */
#ifndef MBX_NETWIRE_H
#define MBX_NETWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "mbx_proto.h"

#define NET_MAGIC	0x6d62786eu	/* "mbxn" */
#define NET_VERSION	8u
#define DGRAM_MAX	1472u		/* one Ethernet frame of UDP payload */

enum { NT_DATA = 1, NT_ACK, NT_CREDIT, NT_PROBE, NT_CLOSE_REQ, NT_CLOSE_ACK, NT_CLOSE_NAK,
       NT_RING, NT_MAX };
/* Only ever in a connection ring: the rest of the lap is skipped. */
#define NT_PAD	0x7fu
/* A peer's connections come in two classes, each with its own shared
 * receive queue (Shipman et al.): high priority for eager data and control,
 * in small buffers, and low priority for the DATA frames of clear-to-send
 * transfers, in large ones. Only the high class is ordered with the
 * matcher; DATA frames name their receive and offset, so they may overtake.
 * A low connection is opened the first time a peer has DATA to send. */
enum { CL_HI = 0, CL_LO = 1, CL_N };
enum { CH_DGRAM = 0, CH_CONN = 1, CH_LO = 2 };	/* CH_CONN: the high class */
#define CH_OF(cls) ((uint8_t)((cls) + 1))
/* Every net frame starts with this; a DATA frame carries one wire frame
 * (mbx_proto.h) after it, or on a high-class connection a batch of them.
 * A connection frame carries only the first CHDR bytes: the connection
 * already says who sent it (its request named both ends), and the receiver
 * learns which of its peers that is from `peer`, the id it gave the sender
 * when the connection was made (its receive buffers are shared by all
 * connections, so the completion does not say). Kept short on purpose: the
 * kernel grows a TCP connection's receive window on every segment of 128
 * bytes or more, and a connection whose window grew while a few KiB wait
 * unread sends its acknowledgement from the reader's recvfrom, several
 * microseconds per message for the rest of the run (doc/engines.md,
 * sessions 43 and 44). With the full header an 8-byte message took 144
 * bytes on the wire and switched every connection; with this one every
 * small message (MBX_OP_SMALL) stays under 128. */
struct nhdr {
	uint32_t magic;
	uint8_t version, type, chan, flags;
	uint32_t len;		/* whole net frame */
	uint32_t consumed;	/* high-class frames of the receiver's taken here */
	uint32_t credits;	/* connection: frames the sender has consumed */
	uint32_t win;		/* connection: the sender's window toward it now */
	union {
		uint32_t peer;	/* connection: the receiver's id of the sender */
		uint32_t dst_ep; /* datagram: the receiving endpoint */
	};
	union {
		int32_t dst_pid; /* datagram: the receiving process */
		/* Connection with a ring: of the two ways the sender's frames
		 * go on it (send, ring write), how many went the other way
		 * before this one, so that the receiver takes them in order. */
		uint32_t xcount;
	};
	/* datagram only: */
	uint64_t sack;
	uint32_t seq;		/* DATA/PROBE */
	uint32_t cum;		/* piggybacked acknowledgement (NF_ACK) */
	struct mbx_addr src;
	uint32_t rsvd;
};

#define HDR ((uint32_t)sizeof(struct nhdr))
#define CHDR ((uint32_t)offsetof(struct nhdr, sack))
_Static_assert(HDR % 8 == 0 && CHDR % 8 == 0, "frames after the header stay 8-byte aligned");
_Static_assert(16 + CHDR + sizeof(struct mbx_wire_small) + MBX_SMALL_MAX < 128,
	       "a small message stays under the kernel's window-growing size (with tcp's "
	       "16-byte header)");
/* A connection send may carry several frames of the high class
 * (mbu_batch.h); at most this many. */
#define BATCH_MAX	64u

/* An NT_RING frame's body: where the sender's connection ring is (the
 * peer writes its frames at base + position under key, and tells the room
 * it made by writing its position to base + 2 * size), and the number its
 * frames' trailers are tagged with. */
struct ring_tell {
	uint64_t base, key, size, nonce;
};
/* A frame in a ring: the net header and frames as by send, 8-byte
 * aligned, then this trailer; whole once the trailer has arrived. */
#define RING_TRAILER	8u
#define RING_ALIGN(v)	(((v) + 7u) & ~(uint64_t)7u)

/* Connection request data: who asks, and whom. */
struct cm_param {
	uint32_t magic;
	uint32_t dst_ep;
	struct mbx_addr src;
	int32_t dst_pid;
	uint32_t id;		/* the asker's id of the target, for its frames' `peer` */
	uint8_t cls;
	uint8_t busy;		/* asked because the peer got busy: within budget only */
	uint8_t buf[CL_N][3];	/* the asker's buffer sizes (24 bits, little-endian;
				 * at most 1 MiB and headers): they must be ours */
};
/* The acceptance's data: the acceptor's id of the asker. */
struct cm_accept {
	uint32_t magic;
	uint32_t id;
};
/* libfabric's verbs carries 55 bytes of connection data (the 56 of the IB
 * connection manager less its own 1-byte header) and refuses a longer
 * fi_connect; other cores are checked when the net wire opens. */
#define CM_DATA_VERBS	55u
_Static_assert(sizeof(struct cm_param) <= CM_DATA_VERBS, "connection request data");

static inline void put24(uint8_t b[3], size_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
}

static inline uint32_t get24(const uint8_t b[3])
{
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

/* Why a connection request was rejected, in the rejection's data: a peer
 * whose buffers cannot take our frames must fail, not retry for ever. */
struct cm_reject {
	uint32_t magic;
	uint32_t reason;
};

enum { REJ_SIZES = 1, REJ_BUDGET };
/* The connections' receive buffers, high and low class, for the eager
 * limit and frame size in force (FI_MATCHBOX_NET_EAGER, _FRAME). */
static inline uint32_t net_buf_hi(size_t eager)
{
	size_t v = HDR + sizeof(struct mbx_wire) + MBX_WIRE_OP_HDR_MAX + eager;

	return (uint32_t)(v < DGRAM_MAX ? DGRAM_MAX : v);	/* RTS frames must fit */
}

static inline uint32_t net_buf_lo(size_t frame)
{
	return (uint32_t)(HDR + sizeof(struct mbx_wire) + frame);
}

#endif
