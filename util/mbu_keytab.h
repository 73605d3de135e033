/* A table of memory registrations that one process (the owner) publishes in
 * shared memory so that other processes on the node can reach the memory
 * with process_vm_readv/writev without asking the owner first: one-sided
 * RMA in which the owner's CPU does nothing. Only the owner writes entries;
 * each slot is a seqlock, so a reader copies an entry and knows whether the
 * copy is whole. A reader that will use the memory also raises the slot's
 * `active` count and checks the entry again afterwards; the owner, when it
 * withdraws an entry, changes it first and then waits for `active` to fall
 * to zero. With sequentially consistent operations on both sides one of the
 * two always sees the other, so once a withdrawal returns no reader is
 * still using the region (the guarantee deregistration gives on an RDMA
 * NIC). Anything a reader cannot settle at once (an entry being written, a
 * full table, a key not found) means "ask the owner the slow way", never a
 * wrong answer. The table knows nothing of libfabric. */
#ifndef MBU_KEYTAB_H
#define MBU_KEYTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MBU_KEYTAB_MAGIC 0x6d62782d6b657931ULL	/* "mbx-key1" */
#define MBU_KEYTAB_VERSION 1u

/* Entry flags. */
#define MBU_KT_READ	(1u << 0)	/* remote reads allowed */
#define MBU_KT_WRITE	(1u << 1)	/* remote writes allowed */
#define MBU_KT_OWNER	(1u << 2)	/* the owner must see each access (it counts them) */

enum { MBU_KT_EMPTY = 0, MBU_KT_LIVE = 1, MBU_KT_TOMB = 2 };

struct mbu_keytab_slot {
	_Alignas(64) _Atomic uint64_t seq;	/* odd while the owner writes */
	_Atomic uint32_t active;		/* readers using the region now */
	_Atomic uint32_t state;			/* MBU_KT_EMPTY/LIVE/TOMB */
	_Atomic uint32_t flags;
	_Atomic uint64_t key;
	_Atomic uint64_t raddr;		/* the remote address of the region's first byte */
	_Atomic uint64_t va;		/* that byte in the owner's address space */
	_Atomic uint64_t len;
};

struct mbu_keytab_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;		/* a power of two */
	int32_t pid;			/* the owner */
};

#define MBU_KEYTAB_HDR_SIZE 64u

/* A process's view of a table (its own or a peer's). */
struct mbu_keytab {
	struct mbu_keytab_hdr *hdr;
	struct mbu_keytab_slot *slot;
	uint32_t mask;
};

/* What a reader learns of an entry. */
struct mbu_keytab_entry {
	uint64_t key, raddr, va, len;
	uint32_t flags;
};

/* Bytes a table of `nslots` (a power of two) needs. */
size_t mbu_keytab_size(uint32_t nslots);
/* Owner: lay out a fresh, zeroed table at `mem`. */
void mbu_keytab_init(struct mbu_keytab *kt, void *mem, uint32_t nslots, int32_t pid);
/* Reader: check a mapped table of `size` bytes before trusting its
 * geometry; 0, or -EPROTO for anything malformed. */
int mbu_keytab_attach(struct mbu_keytab *kt, void *mem, size_t size);

/* Owner: publish an entry; the slot number, or -ENOSPC when every probe
 * slot is taken (the region is then simply not published). */
int mbu_keytab_publish(struct mbu_keytab *kt, const struct mbu_keytab_entry *e);
/* Owner: change the flags of a published entry. */
void mbu_keytab_set_flags(struct mbu_keytab *kt, int idx, uint32_t flags);
/* Owner: withdraw an entry and wait until no reader uses it, polling for at
 * most `timeout_ns`; 0, or -ETIMEDOUT (a reader that died mid-access
 * leaves its count behind, and the owner must not hang for it). */
int mbu_keytab_withdraw(struct mbu_keytab *kt, int idx, uint64_t timeout_ns);

/* Reader: find `key` and hold its slot; the slot number with *e filled in,
 * or -ENOENT (not published, or changing right now). Every success must be
 * followed by mbu_keytab_release once the memory is no longer touched. */
int mbu_keytab_acquire(struct mbu_keytab *kt, uint64_t key, struct mbu_keytab_entry *e);
void mbu_keytab_release(struct mbu_keytab *kt, int idx);

#endif
