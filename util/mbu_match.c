/* Posted and unexpected queues of the matcher; see mbu_match.h for why they
 * are laid out this way. */
#include "mbu_match.h"

#include <errno.h>

enum { SHAPE_EXACT, SHAPE_ANYSRC, SHAPE_SRCWILD, SHAPE_WILD };

int mbu_posted_init(struct mbu_posted *q)
{
	int ret;

	ret = mbu_qmap_init(&q->exact, 64);
	if (ret)
		return ret;
	ret = mbu_qmap_init(&q->anysrc, 64);
	if (ret)
		goto err_exact;
	ret = mbu_qmap_init(&q->srcwild, 64);
	if (ret)
		goto err_anysrc;
	mbu_dlist_init(&q->wild);
	mbu_dlist_init(&q->all);
	q->seq = 0;
	q->count = 0;
	q->scan_limit = MBU_MATCH_SCAN;
	q->indexed = false;
	return 0;
err_anysrc:
	mbu_qmap_fini(&q->anysrc);
err_exact:
	mbu_qmap_fini(&q->exact);
	return ret;
}

void mbu_posted_fini(struct mbu_posted *q)
{
	mbu_qmap_fini(&q->exact);
	mbu_qmap_fini(&q->anysrc);
	mbu_qmap_fini(&q->srcwild);
}

void mbu_posted_set_scan(struct mbu_posted *q, size_t limit)
{
	if (q->count)
		return;
	q->scan_limit = limit;
	q->indexed = limit == 0;
}

/* Files an entry in the index its shape selects. */
static int posted_index_one(struct mbu_posted *q, struct mbu_mentry *e)
{
	struct mbu_qnode *n = NULL;

	if (e->shape == SHAPE_WILD) {
		mbu_dlist_insert_tail(&e->link[0], &q->wild);
		e->node[0] = NULL;
		return 0;
	}
	if (e->shape == SHAPE_EXACT)
		n = mbu_qmap_get(&q->exact, e->src, e->tag);
	else if (e->shape == SHAPE_ANYSRC)
		n = mbu_qmap_get(&q->anysrc, e->tag, 0);
	else
		n = mbu_qmap_get(&q->srcwild, e->src, 0);
	if (!n)
		return -ENOMEM;
	mbu_dlist_insert_tail(&e->link[0], &n->q);
	e->node[0] = n;
	return 0;
}

static void posted_unindex_one(struct mbu_posted *q, struct mbu_mentry *e)
{
	struct mbu_qnode *n = e->node[0];

	mbu_dlist_remove(&e->link[0]);
	if (n && mbu_dlist_empty(&n->q)) {
		struct mbu_qmap *m = e->shape == SHAPE_EXACT ? &q->exact :
				     e->shape == SHAPE_ANYSRC ? &q->anysrc : &q->srcwild;

		mbu_qmap_release(m, n);
	}
}

/* From a plain list to the indexes, in posting order so that every key's
 * queue is in posting order too. Out of memory, the queue stays a list:
 * slower, never wrong. */
static bool posted_build_index(struct mbu_posted *q)
{
	struct mbu_dlist *it, *undo;

	mbu_dlist_foreach(&q->all, it) {
		if (posted_index_one(q, mbu_posted_entry_of_all(it)))
			goto fail;
	}
	q->indexed = true;
	return true;
fail:
	for (undo = q->all.next; undo != it; undo = undo->next)
		posted_unindex_one(q, mbu_posted_entry_of_all(undo));
	return false;
}

int mbu_posted_insert(struct mbu_posted *q, struct mbu_mentry *e,
		      uint64_t src, uint64_t tag, uint64_t ignore)
{
	e->src = src;
	e->ignore = ignore;
	e->tag = tag & ~ignore;
	if (src != MBU_SRC_ANY)
		e->shape = ignore ? SHAPE_SRCWILD : SHAPE_EXACT;
	else
		e->shape = ignore ? SHAPE_WILD : SHAPE_ANYSRC;
	e->node[0] = NULL;
	if (q->indexed && posted_index_one(q, e))
		return -ENOMEM;
	e->seq = q->seq++;
	mbu_dlist_insert_tail(&e->link[1], &q->all);
	q->count++;
	return 0;
}

static inline struct mbu_mentry *first_of(struct mbu_qnode *n)
{
	return n ? mbu_container_of(n->q.next, struct mbu_mentry, link[0]) : NULL;
}

static inline struct mbu_mentry *earlier(struct mbu_mentry *a, struct mbu_mentry *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a->seq < b->seq ? a : b;
}

static inline bool posted_takes(const struct mbu_mentry *e, uint64_t src, uint64_t tag)
{
	return mbu_tag_match(tag, e->tag, e->ignore) && (e->src == MBU_SRC_ANY || e->src == src);
}

/* Scan a wildcard-tag list for the first match, but never past an entry that
 * is already later than the best candidate found elsewhere. */
static struct mbu_mentry *scan_wild(struct mbu_dlist *h, uint64_t tag,
				    uint64_t src, struct mbu_mentry *best)
{
	struct mbu_dlist *it;

	mbu_dlist_foreach(h, it) {
		struct mbu_mentry *e = mbu_container_of(it, struct mbu_mentry, link[0]);

		if (best && e->seq > best->seq)
			return NULL;
		if (posted_takes(e, src, tag))
			return e;
	}
	return NULL;
}

/* The plain list in posting order: the first match is the answer. Past
 * scan_limit entries the queue is indexed and the lookup goes there. */
static struct mbu_mentry *posted_scan(struct mbu_posted *q, uint64_t src, uint64_t tag,
				      bool *gave_up)
{
	size_t left = q->scan_limit;
	struct mbu_dlist *it;

	*gave_up = false;
	mbu_dlist_foreach(&q->all, it) {
		struct mbu_mentry *e = mbu_posted_entry_of_all(it);

		if (posted_takes(e, src, tag))
			return e;
		if (left && !--left && posted_build_index(q)) {
			*gave_up = true;
			return NULL;
		}
	}
	return NULL;
}

struct mbu_mentry *mbu_posted_match(struct mbu_posted *q, uint64_t src, uint64_t tag)
{
	struct mbu_mentry *best = NULL;
	struct mbu_qnode *n;

	if (!q->count)
		return NULL;
	if (!q->indexed) {
		bool gave_up;

		best = posted_scan(q, src, tag, &gave_up);
		if (!gave_up)
			return best;
	}
	best = first_of(mbu_qmap_find(&q->exact, src, tag));
	best = earlier(best, first_of(mbu_qmap_find(&q->anysrc, tag, 0)));
	n = mbu_qmap_find(&q->srcwild, src, 0);
	if (n)
		best = earlier(best, scan_wild(&n->q, tag, src, best));
	if (!mbu_dlist_empty(&q->wild))
		best = earlier(best, scan_wild(&q->wild, tag, src, best));
	return best;
}

void mbu_posted_remove(struct mbu_posted *q, struct mbu_mentry *e)
{
	if (q->indexed)
		posted_unindex_one(q, e);
	mbu_dlist_remove(&e->link[1]);
	if (!--q->count)
		q->indexed = q->scan_limit == 0;	/* every index is empty now */
}

int mbu_unexp_init(struct mbu_unexp *q)
{
	int ret;

	ret = mbu_qmap_init(&q->exact, 64);
	if (ret)
		return ret;
	ret = mbu_qmap_init(&q->bytag, 64);
	if (ret)
		goto err_exact;
	ret = mbu_qmap_init(&q->bysrc, 64);
	if (ret)
		goto err_bytag;
	mbu_dlist_init(&q->all);
	q->count = 0;
	q->scan_limit = MBU_MATCH_SCAN;
	q->indexed = false;
	return 0;
err_bytag:
	mbu_qmap_fini(&q->bytag);
err_exact:
	mbu_qmap_fini(&q->exact);
	return ret;
}

void mbu_unexp_fini(struct mbu_unexp *q)
{
	mbu_qmap_fini(&q->exact);
	mbu_qmap_fini(&q->bytag);
	mbu_qmap_fini(&q->bysrc);
}

void mbu_unexp_set_scan(struct mbu_unexp *q, size_t limit)
{
	if (q->count)
		return;
	q->scan_limit = limit;
	q->indexed = limit == 0;
}

/* Files an entry by (src, tag), by tag and by source, each list in arrival
 * order as long as entries are filed in arrival order. */
static int unexp_index_one(struct mbu_unexp *q, struct mbu_mentry *e)
{
	struct mbu_qnode *n0, *n1, *n2;

	n0 = mbu_qmap_get(&q->exact, e->src, e->tag);
	if (!n0)
		return -ENOMEM;
	n1 = mbu_qmap_get(&q->bytag, e->tag, 0);
	if (!n1)
		goto err0;
	n2 = mbu_qmap_get(&q->bysrc, e->src, 0);
	if (!n2)
		goto err1;
	e->node[0] = n0;
	e->node[1] = n1;
	e->node[2] = n2;
	mbu_dlist_insert_tail(&e->link[0], &n0->q);
	mbu_dlist_insert_tail(&e->link[1], &n1->q);
	mbu_dlist_insert_tail(&e->link[2], &n2->q);
	return 0;
err1:
	if (mbu_dlist_empty(&n1->q))
		mbu_qmap_release(&q->bytag, n1);
err0:
	if (mbu_dlist_empty(&n0->q))
		mbu_qmap_release(&q->exact, n0);
	return -ENOMEM;
}

static void unexp_unindex_one(struct mbu_unexp *q, struct mbu_mentry *e)
{
	struct mbu_qmap *maps[3] = { &q->exact, &q->bytag, &q->bysrc };

	for (int i = 0; i < 3; i++) {
		mbu_dlist_remove(&e->link[i]);
		if (mbu_dlist_empty(&e->node[i]->q))
			mbu_qmap_release(maps[i], e->node[i]);
	}
}

static bool unexp_build_index(struct mbu_unexp *q)
{
	struct mbu_dlist *it, *undo;

	mbu_dlist_foreach(&q->all, it) {
		if (unexp_index_one(q, mbu_unexp_entry_of_all(it)))
			goto fail;
	}
	q->indexed = true;
	return true;
fail:
	for (undo = q->all.next; undo != it; undo = undo->next)
		unexp_unindex_one(q, mbu_unexp_entry_of_all(undo));
	return false;
}

int mbu_unexp_insert(struct mbu_unexp *q, struct mbu_mentry *e, uint64_t src, uint64_t tag)
{
	e->src = src;
	e->tag = tag;
	e->ignore = 0;
	if (q->indexed && unexp_index_one(q, e))
		return -ENOMEM;
	mbu_dlist_insert_tail(&e->link[3], &q->all);
	q->count++;
	return 0;
}

static inline bool unexp_takes(const struct mbu_mentry *e, uint64_t src, uint64_t mtag,
			       uint64_t ignore)
{
	return mbu_tag_match(e->tag, mtag, ignore) && (src == MBU_SRC_ANY || e->src == src);
}

static struct mbu_mentry *unexp_scan(struct mbu_unexp *q, uint64_t src, uint64_t mtag,
				     uint64_t ignore, bool *gave_up)
{
	size_t left = q->scan_limit;
	struct mbu_dlist *it;

	*gave_up = false;
	mbu_dlist_foreach(&q->all, it) {
		struct mbu_mentry *e = mbu_unexp_entry_of_all(it);

		if (unexp_takes(e, src, mtag, ignore))
			return e;
		if (left && !--left && unexp_build_index(q)) {
			*gave_up = true;
			return NULL;
		}
	}
	return NULL;
}

struct mbu_mentry *mbu_unexp_find(struct mbu_unexp *q, uint64_t src, uint64_t tag,
				  uint64_t ignore)
{
	uint64_t mtag = tag & ~ignore;
	struct mbu_dlist *it;
	struct mbu_qnode *n;

	if (!q->count)
		return NULL;
	if (!q->indexed) {
		bool gave_up;
		struct mbu_mentry *e = unexp_scan(q, src, mtag, ignore, &gave_up);

		if (!gave_up)
			return e;
	}
	if (!ignore) {
		n = src != MBU_SRC_ANY ? mbu_qmap_find(&q->exact, src, mtag)
				       : mbu_qmap_find(&q->bytag, mtag, 0);
		if (!n)
			return NULL;
		return mbu_container_of(n->q.next, struct mbu_mentry,
					link[src != MBU_SRC_ANY ? 0 : 1]);
	}
	if (src != MBU_SRC_ANY) {
		n = mbu_qmap_find(&q->bysrc, src, 0);
		if (!n)
			return NULL;
		mbu_dlist_foreach(&n->q, it) {
			struct mbu_mentry *e = mbu_container_of(it, struct mbu_mentry, link[2]);

			if (mbu_tag_match(e->tag, mtag, ignore))
				return e;
		}
		return NULL;
	}
	mbu_dlist_foreach(&q->all, it) {
		struct mbu_mentry *e = mbu_unexp_entry_of_all(it);

		if (mbu_tag_match(e->tag, mtag, ignore))
			return e;
	}
	return NULL;
}

/* Moves a queued message to another source key. Unindexed, only its source
 * changes: the arrival-order list is all there is. Indexed, only the
 * source-keyed lists change; its place in arrival order (all) and among its
 * tag (bytag) stays, and in the new source's lists it goes last, which keeps
 * per-source order as long as nothing from that source was queued under the
 * new key first. */
int mbu_unexp_rekey(struct mbu_unexp *q, struct mbu_mentry *e, uint64_t src)
{
	struct mbu_qnode *n0, *n2;

	if (src == e->src)
		return 0;
	if (!q->indexed) {
		e->src = src;
		return 0;
	}
	n0 = mbu_qmap_get(&q->exact, src, e->tag);
	if (!n0)
		return -ENOMEM;
	n2 = mbu_qmap_get(&q->bysrc, src, 0);
	if (!n2) {
		if (mbu_dlist_empty(&n0->q))
			mbu_qmap_release(&q->exact, n0);
		return -ENOMEM;
	}
	mbu_dlist_remove(&e->link[0]);
	if (mbu_dlist_empty(&e->node[0]->q))
		mbu_qmap_release(&q->exact, e->node[0]);
	mbu_dlist_remove(&e->link[2]);
	if (mbu_dlist_empty(&e->node[2]->q))
		mbu_qmap_release(&q->bysrc, e->node[2]);
	e->src = src;
	e->node[0] = n0;
	e->node[2] = n2;
	mbu_dlist_insert_tail(&e->link[0], &n0->q);
	mbu_dlist_insert_tail(&e->link[2], &n2->q);
	return 0;
}

void mbu_unexp_remove(struct mbu_unexp *q, struct mbu_mentry *e)
{
	if (q->indexed)
		unexp_unindex_one(q, e);
	mbu_dlist_remove(&e->link[3]);
	if (!--q->count)
		q->indexed = q->scan_limit == 0;
}
