/* Agreeing on an id that no member of a group is using, when each process
 * belongs to many groups that agree at unrelated times: MPI context ids,
 * which every member of a new communicator must use for it and none may be
 * using for another. Each member offers a mask of ids it could take, the
 * group intersects the masks (an all-reduce with bitwise AND), and every
 * member takes the lowest id in the intersection.
 *
 * Why offers, and not just "the free ids": a process can be in several
 * agreements at once (non-blocking Comm_idup on overlapping communicators,
 * a blocking Comm_dup while an idup is out). If two of them offered the
 * same free id, both could win it and the process would have two
 * communicators on one context. So an id offered in one agreement is not
 * offered in another until the first has taken its id and let go of the
 * rest. An agreement whose intersection is empty tries again; to keep two
 * agreements that each hold what the other needs from retrying forever,
 * one that has failed once ("starved") offers everything free, and while
 * a starved agreement is out, agreements that rank after it (a larger key,
 * the same on every member) offer nothing. The starved agreement with the
 * smallest key therefore gets every free id of every member on its next
 * try. A first try offers at most MBU_IDS_FIRST ids so that an agreement
 * waiting for a slow member does not hold every id of the fast ones.
 *
 * This is pure bookkeeping: the caller moves the masks. */
#ifndef MBU_IDS_H
#define MBU_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "mbu_list.h"

#define MBU_IDS 8192u			/* ids 0 .. MBU_IDS-1 */
#define MBU_IDS_WORDS (MBU_IDS / 64u)
#define MBU_IDS_FIRST 256u		/* most ids a first try offers */

/* What is reduced with bitwise AND: the offered ids, then a word that is
 * all ones when this member offered every id it has free (so an empty
 * intersection of such offers means the ids are used up, not held). */
#define MBU_IDS_MSG_WORDS (MBU_IDS_WORDS + 1u)

struct mbu_ids {
	uint64_t used[MBU_IDS_WORDS];
	uint64_t offered[MBU_IDS_WORDS];
	struct mbu_dlist pending;
};

struct mbu_ids_agree {
	uint64_t key;			/* orders agreements: smaller goes first */
	bool starved;
	bool out;			/* an offer is out */
	bool pending;			/* begun and not over */
	uint64_t offer[MBU_IDS_MSG_WORDS];
	struct mbu_dlist link;
};

/* ids [0, reserved) are never offered. */
void mbu_ids_init(struct mbu_ids *ids, unsigned reserved);

/* An agreement starts (and is pending until it takes an id or ends). */
void mbu_ids_begin(struct mbu_ids *ids, struct mbu_ids_agree *a, uint64_t key);

/* Fills a->offer, this member's part of the next try, and holds those ids. */
void mbu_ids_offer(struct mbu_ids *ids, struct mbu_ids_agree *a);

/* Given the AND of every member's offer: 0 and *id when an id was agreed
 * (it is now used, the agreement is over), -EAGAIN when the agreement must
 * offer again, -ENOSPC when every member offered all it had free and no id
 * is common (the agreement is over). */
int mbu_ids_take(struct mbu_ids *ids, struct mbu_ids_agree *a, const uint64_t *all, unsigned *id);

/* Ends an agreement early (an error): lets go of what it offered. Safe
 * on one that is already over. */
void mbu_ids_end(struct mbu_ids *ids, struct mbu_ids_agree *a);

/* An id taken earlier is free again. */
void mbu_ids_put(struct mbu_ids *ids, unsigned id);

bool mbu_ids_used(const struct mbu_ids *ids, unsigned id);

#endif
