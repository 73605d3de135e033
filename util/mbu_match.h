/* Tag matching, for the matchbox provider and libmpi's host engine: the
 * posted-receive queue and the unexpected-message queue, with libfabric's
 * semantics (a message (src, tag) matches a receive when (tag & ~ignore) ==
 * (rtag & ~ignore) and the receive's source is the sender or FI_ADDR_UNSPEC;
 * the earliest posted matching receive wins; the earliest arrived matching
 * message is taken).
 *
 * Why four structures per queue: the common MPI cases, a fully specified
 * (source, tag), any-source with a specific tag, and a specific source with a
 * wildcard tag, must cost the same with ten entries or ten thousand. Posted
 * receives are filed by their shape (exact, any-source, wildcard-tag,
 * wildcard-both) in hash maps keyed by what they specify; a message probes each
 * map once and takes the candidate with the lowest posting sequence number.
 * Unexpected messages are filed in all shapes at once (by (src, tag), by tag,
 * by source, and in arrival order), so a receive probes exactly the one index
 * its own shape selects. Only the two wildcard-tag shapes scan, and they scan
 * only entries of the same source (or, for the full wildcard, in order until
 * the first match).
 *
 * Why the indexes are built lazily: most queues are short (a message or two
 * waiting, a window of receives for one peer), and filing an entry in three
 * hash maps costs more than reading a few list entries. A queue starts as
 * its plain ordered list (`all`), which is matched by a scan; the first scan
 * that reads more than scan_limit entries files every entry in the indexes,
 * in order, and the queue stays indexed until it is empty again. A scan is
 * thus never longer than scan_limit entries plus the one that builds. */
#ifndef MBU_MATCH_H
#define MBU_MATCH_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#include "mbu_list.h"
#include "mbu_qmap.h"

#define MBU_SRC_ANY ((uint64_t)-1)	/* FI_ADDR_UNSPEC */
#define MBU_MATCH_SCAN 16		/* entries scanned before indexing */

struct mbu_mentry {
	struct mbu_dlist link[4];
	struct mbu_qnode *node[3];
	uint64_t src;
	uint64_t tag;		/* stored masked: tag & ~ignore */
	uint64_t ignore;
	uint64_t seq;
	uint8_t shape;
};

struct mbu_posted {
	struct mbu_qmap exact;		/* (src, tag) */
	struct mbu_qmap anysrc;		/* (tag), src any, ignore 0 */
	struct mbu_qmap srcwild;	/* (src), ignore != 0 */
	struct mbu_dlist wild;		/* src any, ignore != 0 */
	struct mbu_dlist all;		/* every posted entry, in posting order */
	uint64_t seq;
	size_t count;
	size_t scan_limit;		/* 0: always indexed */
	bool indexed;
};

struct mbu_unexp {
	struct mbu_qmap exact;		/* (src, tag) */
	struct mbu_qmap bytag;		/* (tag) */
	struct mbu_qmap bysrc;		/* (src) */
	struct mbu_dlist all;		/* arrival order */
	size_t count;
	size_t scan_limit;		/* 0: always indexed */
	bool indexed;
};

int mbu_posted_init(struct mbu_posted *q);
void mbu_posted_fini(struct mbu_posted *q);
/* For an empty queue: index after `limit` scanned entries (0: always). */
void mbu_posted_set_scan(struct mbu_posted *q, size_t limit);
/* Returns 0 or -ENOMEM (and then q is unchanged). */
int mbu_posted_insert(struct mbu_posted *q, struct mbu_mentry *e,
		      uint64_t src, uint64_t tag, uint64_t ignore);
struct mbu_mentry *mbu_posted_match(struct mbu_posted *q, uint64_t src, uint64_t tag);
void mbu_posted_remove(struct mbu_posted *q, struct mbu_mentry *e);
static inline struct mbu_mentry *mbu_posted_entry_of_all(struct mbu_dlist *it)
{
	return mbu_container_of(it, struct mbu_mentry, link[1]);
}

int mbu_unexp_init(struct mbu_unexp *q);
void mbu_unexp_fini(struct mbu_unexp *q);
void mbu_unexp_set_scan(struct mbu_unexp *q, size_t limit);
int mbu_unexp_insert(struct mbu_unexp *q, struct mbu_mentry *e, uint64_t src, uint64_t tag);
struct mbu_mentry *mbu_unexp_find(struct mbu_unexp *q, uint64_t src, uint64_t tag,
				  uint64_t ignore);
/* The empty queue is answered inline: receives posted ahead of their
 * messages ask it every time, and a call costs more than the test. */
static inline struct mbu_mentry *mbu_unexp_match(struct mbu_unexp *q, uint64_t src,
						 uint64_t tag, uint64_t ignore)
{
	return q->count ? mbu_unexp_find(q, src, tag, ignore) : NULL;
}
void mbu_unexp_remove(struct mbu_unexp *q, struct mbu_mentry *e);
/* Re-keys e under source src; 0, or -ENOMEM and then nothing changed. */
int mbu_unexp_rekey(struct mbu_unexp *q, struct mbu_mentry *e, uint64_t src);
static inline struct mbu_mentry *mbu_unexp_entry_of_all(struct mbu_dlist *it)
{
	return mbu_container_of(it, struct mbu_mentry, link[3]);
}

static inline bool mbu_tag_match(uint64_t mtag, uint64_t rtag_masked, uint64_t ignore)
{
	return (mtag & ~ignore) == rtag_masked;
}

#endif
