/* Wire format of the shm wire: what one matchbox endpoint writes into
 * another's segment. A segment belongs to one receiving endpoint; it holds a
 * header and `nslots` slots, and each sending endpoint on the node claims one
 * slot, which gives it a frame ring and a bulk area of `nchunks` chunks for
 * the pipelined two-copy protocol.
 *
 * Protocols, chosen per message by size:
 *  - EAGER (size <= eager limit): header and payload in one frame.
 *  - RTS (larger): the sender describes its buffer (iovs in its own address
 *    space) and waits. After the match the receiver either pulls the data
 *    with process_vm_readv (CMA, one copy on the receiver's core) or answers
 *    CTS, after which the sender copies chunks into the bulk area while the
 *    receiver copies them out (two copies, both cores busy). FIN tells the
 *    sender its buffer is free and the data delivered.
 *  - ACK answers an eager send that asked for delivery completion.
 *
 * RMA (version 3): WRITE frames carry a piece of an fi_write with the
 * target's key and address (struct mbx_wire_rma after the header); the
 * last one (MBX_WF_LAST) is answered by WACK with the outcome. A READ frame
 * asks for one remote segment; the target answers with RDATA frames, or
 * with RERR. The target checks key, range and access
 * before it touches a byte, and its progress does the copy.
 *
 * Version 5: an RTS to another host offered for fi_read (MBX_WF_RMA)
 * addresses its data in the registration from its first iov's addr on,
 * because a cached registration may start before the buffer.
 *
 * Version 6: on the copy path a receiver may send the CTS of the next
 * matched message while the previous one still drains; its bulk_base is
 * then the chunk after the previous message's last, and the sender fills
 * the bulk area for the CTSs in the order they came.
 *
 * Version 7: RMA to another host may go by the core provider's own
 * fi_write/fi_read. An initiator that can use it marks the last WRITE or
 * READ frame of an operation with MBX_WF_WANTKEY; the target then answers
 * KEY (before WACK or the read's data) naming the region and the core's
 * key for it. When the region is closed or starts counting its accesses,
 * the target sends KEY again with core key 0 to every peer it offered the
 * key to: that frame is ordered before anything the target sends later,
 * so an initiator told by a later message that the key is valid again
 * has dropped its stale entry first.
 *
 * Segment version 5: the header says whether RMA may reach the owner's
 * memory with CMA (rma_direct) and names its domain's table of published
 * registrations (util/mbu_keytab.h). Such RMA writes no frame at all.
 *
 * Version 8: an RTS may carry the message's first bytes after its iovs
 * (MBX_WF_HEAD), so that they cross while the receiver's fi_read of the
 * rest is still to be asked for; the receiver reads from the end of the
 * head, or ignores it (clear-to-send, any other protocol) and takes the
 * whole message as before.
 *
 * Version 1. Nothing has been retired yet; a retired field or op keeps its
 * number and gets a comment here. */
#ifndef MBX_PROTO_H
#define MBX_PROTO_H

#include <stdatomic.h>
#include <stdint.h>

#include "mbu_ring.h"

#define MBX_SEG_MAGIC	0x6d62782d73686d31ULL	/* "mbx-shm1" */
#define MBX_SEG_VERSION	6u
#define MBX_WIRE_MAGIC	0x6d62u
#define MBX_WIRE_VERSION 8u
#define MBX_FRAME_KIND	1u
#define MBX_NAME_MAX	64
#define MBX_ADDR_LEN	63	/* "mbx://" + 7 x 8 hex digits + NUL */
#define MBX_IOV_LIMIT	8
#define MBX_KT_NAME_MAX	48

/* An endpoint's identity; its text form is the FI_ADDR_STR address
 * "mbx://" followed by the seven fields below as 8 hex digits each, so every
 * address is exactly MBX_ADDR_LEN bytes with its NUL: under the 64 bytes
 * (FI_NAME_MAX) that Open MPI and others reserve for a name. */
struct mbx_addr {
	uint32_t host;		/* hash of the host name and network namespace */
	uint32_t uid;
	int32_t pid;
	uint32_t ep;
	uint32_t job;		/* hash of the job key: jobs never mix */
	uint32_t ip;		/* IPv4 address of the net wire, host order; 0: none */
	uint32_t ports;		/* datagram port << 16 | connection port */
};

enum mbx_wire_op {
	MBX_OP_EAGER = 1,
	MBX_OP_RTS = 2,
	MBX_OP_CTS = 3,
	MBX_OP_FIN = 4,
	MBX_OP_ACK = 5,
	MBX_OP_SMALL = 6,	/* eager in the short header (struct mbx_wire_small) */
	MBX_OP_DATA = 7,	/* net rendezvous: `size` bytes at offset `data` of send `id` */
	MBX_OP_WRITE = 8,	/* RMA: `size` bytes for rma.addr under rma.key; `tag` is the
				 * whole write's length, `data` its CQ data */
	MBX_OP_READ = 9,	/* RMA: send back `size` bytes from rma.addr; `data` is the
				 * segment's offset in the read */
	MBX_OP_RDATA = 10,	/* read `id`: `size` bytes at offset `data` */
	MBX_OP_WACK = 11,	/* write `id` is placed; `tag`: 0 or the fi_errno */
	MBX_OP_RERR = 12,	/* read `id`: the segment of `size` bytes at offset
				 * `data` failed at the target; `tag`: the fi_errno */
	MBX_OP_ATOMIC = 13,	/* atomic `id`: elements of `size` bytes in all, at
				 * offset `data` of the operation, for atomic.addr
				 * under atomic.key; `tag`: MBX_ATOMIC_TAG(kind, op,
				 * datatype); operands, then compare values, follow */
	MBX_OP_ARESP = 14,	/* atomic `id`: the piece at offset `data` of `size`
				 * bytes is applied (`tag` 0, and for a fetching
				 * atomic the old values follow) or refused (`tag`:
				 * the fi_errno, nothing follows) */
	MBX_OP_KEY = 15,	/* net RMA: our region under key `id` starts at remote
				 * address `data` and is `size` bytes long; `tag`:
				 * the core's key (low 32 bits; 0: withdrawn, forget
				 * it) and MBX_KEY_READ/WRITE above them */
	MBX_OP_RAILS = 16,	/* net: our extra rails (mbx_rail.h): `size` struct
				 * mbx_rail_name follow; sent before the first RTS
				 * with MBX_WF_RAILS */
	MBX_OP_MAX
};

enum mbx_wire_flags {
	MBX_WF_TAGGED = 1 << 0,
	MBX_WF_CQDATA = 1 << 1,
	MBX_WF_ACKREQ = 1 << 2,	/* eager: answer with ACK after placement */
	MBX_WF_RMA = 1 << 3,	/* net RTS: the data is registered for fi_read under
				 * the key in rsvd2, at offset 0 (iov addrs are
				 * offsets) */
	MBX_WF_LAST = 1 << 4,	/* the last WRITE frame of a write: answer with WACK */
	MBX_WF_WANTKEY = 1 << 5,	/* last WRITE/READ frame: offer the core's key (KEY) */
	MBX_WF_RAILS = 1 << 6,	/* net RTS with MBX_WF_RMA: the key is the same on every
				 * rail of the RAILS frame */
	MBX_WF_HEAD = 1 << 7,	/* RTS: the message's first bytes follow the iovs (the
				 * rest of the frame, fewer than `size`) */
};

#define MBX_KEY_READ	(1ull << 32)
#define MBX_KEY_WRITE	(1ull << 33)

/* After the header of WRITE and READ frames. */
struct mbx_wire_rma {
	uint64_t key;
	uint64_t addr;
};

struct mbx_wire_atomic {
	uint64_t key;
	uint64_t addr;
	uint64_t cqdata;	/* with MBX_WF_CQDATA on the last piece */
};

/* The largest header an RMA or atomic frame adds after struct mbx_wire:
 * receive buffers leave room for it, so that a write of the eager size
 * still goes in one frame. */
#define MBX_WIRE_OP_HDR_MAX sizeof(struct mbx_wire_atomic)
_Static_assert(sizeof(struct mbx_wire_rma) <= MBX_WIRE_OP_HDR_MAX, "op header room");

#define MBX_ATOMIC_TAG(kind, op, dt) ((uint64_t)(kind) << 16 | (uint64_t)(op) << 8 | (uint64_t)(dt))
#define MBX_ATOMIC_KIND(tag) ((int)((tag) >> 16 & 0xff))
#define MBX_ATOMIC_OP(tag) ((int)((tag) >> 8 & 0xff))
#define MBX_ATOMIC_DT(tag) ((int)((tag) & 0xff))

struct mbx_wire {
	struct mbu_frame f;
	uint16_t magic;
	uint8_t version;
	uint8_t op;
	uint8_t flags;
	uint8_t iov_cnt;	/* RTS: number of mbx_wire_iov after the header */
	uint16_t rsvd;
	uint32_t rsvd2;		/* RTS with MBX_WF_RMA: the memory key */
	uint64_t tag;
	uint64_t data;		/* CQ data; CTS: first bulk chunk number */
	uint64_t size;		/* message bytes; CTS: bytes wanted; FIN: bytes taken */
	uint64_t id;		/* sender's operation id, echoed in CTS/FIN/ACK */
};

/* The short header of small eager messages: no size (the frame length says
 * it) and no id (never used with an acknowledgement request), so up to
 * MBX_SMALL_MAX bytes of data share the header's cache line, and a small
 * message costs the receiver one line instead of two. */
struct mbx_wire_small {
	struct mbu_frame f;
	uint16_t magic;
	uint8_t version;
	uint8_t op;
	uint8_t flags;
	uint8_t rsvd[3];
	uint64_t tag;
	uint64_t data;
};

#define MBX_SMALL_MAX (64u - (unsigned)sizeof(struct mbx_wire_small))

struct mbx_wire_iov {
	uint64_t addr;
	uint64_t len;
};

/* Bytes of an RTS frame after its iovs: its head (MBX_WF_HEAD). Only for a
 * frame whose iovs fit its length (mbx_frame_ok checks that first). */
static inline uint32_t mbx_rts_head(const struct mbx_wire *w)
{
	return w->f.len - (uint32_t)(sizeof(*w) + w->iov_cnt * sizeof(struct mbx_wire_iov));
}

/* A slot's life: FREE -> CLAIMED (a sender took it) -> READY (filled in) ->
 * CLOSED (its sender closed its endpoint, after its last frame) -> FREE
 * again once the receiver has drained it. The receiver also retires a READY
 * slot whose sender process has died. */
enum mbx_slot_state {
	MBX_SLOT_FREE = 0,
	MBX_SLOT_CLAIMED = 1,
	MBX_SLOT_READY = 2,
	MBX_SLOT_CLOSED = 3,
};

struct mbx_slot {
	_Alignas(64) _Atomic uint32_t state;
	int32_t sender_pid;
	char sender_name[MBX_NAME_MAX];
	/* The sender populated the ring's pages before READY: the receiver
	 * maps them too (mbu_shm_prefault), allocating none of its own. */
	uint32_t prefaulted;
	_Alignas(64) _Atomic uint64_t bulk_filled;	/* written by the sender */
	_Alignas(64) _Atomic uint64_t bulk_drained;	/* written by the receiver */
	struct mbu_ring_shared ring;
	/* ring data (ring_size bytes), then bulk (nchunks * chunk_size) */
};

struct mbx_seg_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint64_t slot_size;
	uint64_t ring_size;
	uint64_t chunk_size;
	uint32_t nchunks;
	int32_t pid;
	/* The owner has a CQ or counter that sleeps (set at enable, then fixed):
	 * only then must senders pay the fence and look for sleepers. */
	_Atomic uint32_t waitable;
	/* The owner sleeps in a file descriptor (after fi_trywait): senders
	 * also send a byte to its wake socket, named here (abstract
	 * AF_UNIX, NUL-terminated, written before waitable is set). */
	_Atomic uint32_t fd_armed;
	char wake_name[48];
	_Alignas(64) _Atomic uint32_t doorbell;
	_Atomic uint32_t sleepers;
	_Alignas(64) _Atomic uint32_t nslots_used;	/* highest slot ever claimed + 1 */
	_Atomic uint32_t claims;	/* bumped on every claim: receivers look again */
	_Atomic uint32_t closed;	/* the owner closed its endpoint */
	/* Version 5: RMA to this endpoint may go straight to memory with CMA
	 * for regions its domain publishes in the table named here (see
	 * mbu_keytab.h); 0 while the owner must see every access (counters
	 * of remote accesses on the endpoint) or publishes nothing. */
	_Alignas(64) _Atomic uint32_t rma_direct;
	char kt_name[MBX_KT_NAME_MAX];
	/* The owner's progress calls, published every 16th: an initiator
	 * that sees it move knows the owner is serving frames now. */
	_Alignas(64) _Atomic uint64_t ticks;
};

#define MBX_SEG_HDR_SIZE 4096u
#define MBX_SLOT_HDR_SIZE ((sizeof(struct mbx_slot) + 63) & ~(size_t)63)

static inline struct mbx_slot *mbx_seg_slot(struct mbx_seg_hdr *h, uint32_t i)
{
	return (struct mbx_slot *)((char *)h + MBX_SEG_HDR_SIZE + (size_t)i * h->slot_size);
}

static inline uint8_t *mbx_slot_ring(struct mbx_slot *s)
{
	return (uint8_t *)s + MBX_SLOT_HDR_SIZE;
}

static inline uint8_t *mbx_slot_bulk(struct mbx_seg_hdr *h, struct mbx_slot *s)
{
	return mbx_slot_ring(s) + h->ring_size;
}

#endif
