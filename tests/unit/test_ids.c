/* util/mbu_ids: agreements on ids (MPI context ids) among overlapping groups
 * of simulated processes, run in many interleavings. What must hold: the
 * members of one agreement take the same id; no process ever has one id
 * twice; every agreement ends (no two agreements retry each other forever,
 * whatever order the processes start them in); ids run out only when they
 * are really used up, and come back when put. */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mbu_ids.h"

#define NP 8
#define NG 64

struct proc {
	struct mbu_ids ids;
	int owner[MBU_IDS];		/* which agreement holds each id, -1 none */
};

enum { M_IDLE, M_OFFERED, M_DONE };

struct group {
	int n, members[NP];
	uint64_t key;
	int round;			/* the try every member is on or past */
	int state[NP];
	int mround[NP];			/* the try this member's offer is for */
	struct mbu_ids_agree a[NP];
	uint64_t result[MBU_IDS_MSG_WORDS];
	bool have_result;
	int id[NP], err[NP];
	bool freed;
};

static struct proc procs[NP];
static struct group groups[NG];
static int ngroups;
static unsigned rng = 12345;

static unsigned rnd(unsigned n)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) % n;
}

static void reset(void)
{
	for (int p = 0; p < NP; p++) {
		mbu_ids_init(&procs[p].ids, 1);
		for (unsigned i = 0; i < MBU_IDS; i++)
			procs[p].owner[i] = -1;
	}
	memset(groups, 0, sizeof(groups));
	ngroups = 0;
}

static int add_group(const int *members, int n)
{
	struct group *g = &groups[ngroups];

	g->n = n;
	memcpy(g->members, members, sizeof(int) * (size_t)n);
	g->key = (uint64_t)ngroups;
	return ngroups++;
}

/* The all-reduce: once every member has offered for this try. */
static void maybe_reduce(struct group *g)
{
	if (g->have_result)
		return;
	for (int i = 0; i < g->n; i++)
		if (g->state[i] != M_OFFERED || g->mround[i] != g->round)
			return;
	for (unsigned w = 0; w < MBU_IDS_MSG_WORDS; w++) {
		uint64_t v = ~0ull;

		for (int i = 0; i < g->n; i++)
			v &= g->a[i].offer[w];
		g->result[w] = v;
	}
	g->have_result = true;
}

static void start(struct group *g, int i)
{
	struct proc *p = &procs[g->members[i]];

	mbu_ids_begin(&p->ids, &g->a[i], g->key);
	mbu_ids_offer(&p->ids, &g->a[i]);
	g->state[i] = M_OFFERED;
	g->mround[i] = g->round;
	maybe_reduce(g);
}

/* One member reads the try's result. The try's result stays until every
 * member has read it; a member that must try again offers at once. */
static void take(struct group *g, int i)
{
	struct proc *p = &procs[g->members[i]];
	unsigned id = 0;
	int r = mbu_ids_take(&p->ids, &g->a[i], g->result, &id);
	bool all_read = true;

	if (r == 0) {
		cr_assert_eq(p->owner[id], -1, "process %d has id %u twice (groups %d and %ld)",
			     g->members[i], id, p->owner[id], (long)(g - groups));
		cr_assert(id >= 1, "a reserved id was offered");
		p->owner[id] = (int)(g - groups);
		g->id[i] = (int)id;
		g->state[i] = M_DONE;
	} else if (r == -ENOSPC) {
		g->err[i] = r;
		g->state[i] = M_DONE;
	} else {
		cr_assert_eq(r, -EAGAIN);
		g->mround[i] = g->round + 1;
		mbu_ids_offer(&p->ids, &g->a[i]);
	}
	for (int j = 0; j < g->n; j++)
		if (g->state[j] == M_OFFERED && g->mround[j] == g->round)
			all_read = false;
	if (all_read) {
		g->round++;
		g->have_result = false;
		maybe_reduce(g);
	}
}

static bool can_take(const struct group *g, int i)
{
	return g->have_result && g->state[i] == M_OFFERED && g->mround[i] == g->round;
}

static void check_done(const struct group *g)
{
	for (int i = 0; i < g->n; i++) {
		cr_assert_eq(g->state[i], M_DONE);
		cr_assert_eq(g->err[i], g->err[0], "members disagree on running out");
		if (!g->err[0])
			cr_assert_eq(g->id[i], g->id[0], "members took different ids");
	}
}

static void put_group(struct group *g)
{
	for (int i = 0; i < g->n; i++)
		if (!g->err[i]) {
			struct proc *p = &procs[g->members[i]];

			cr_assert_eq(p->owner[g->id[i]], (int)(g - groups));
			p->owner[g->id[i]] = -1;
			mbu_ids_put(&p->ids, (unsigned)g->id[i]);
		}
	g->freed = true;
}

/* Runs every group to its end in a random order of start and take actions,
 * with the processes' starts in the order of `order` (each process starts
 * its groups in the order they appear there). Returns the steps taken. */
static int run(bool random_starts)
{
	int steps = 0;

	for (;;) {
		int cand[NG * NP][2], nc = 0;

		for (int gi = 0; gi < ngroups; gi++) {
			struct group *g = &groups[gi];

			for (int i = 0; i < g->n; i++) {
				if (g->state[i] == M_IDLE) {
					/* A process starts its groups in group order unless random. */
					bool earlier_idle = false;

					for (int gj = 0; gj < gi && !random_starts; gj++)
						for (int j = 0; j < groups[gj].n; j++)
							if (groups[gj].members[j] == g->members[i] &&
							    groups[gj].state[j] == M_IDLE)
								earlier_idle = true;
					if (!earlier_idle) {
						cand[nc][0] = gi;
						cand[nc++][1] = i;
					}
				} else if (can_take(g, i)) {
					cand[nc][0] = gi;
					cand[nc++][1] = i;
				}
			}
		}
		if (!nc)
			break;
		{
			int k = (int)rnd((unsigned)nc);
			struct group *g = &groups[cand[k][0]];
			int i = cand[k][1];

			if (g->state[i] == M_IDLE)
				start(g, i);
			else
				take(g, i);
		}
		cr_assert_lt(++steps, 200000, "agreements retried without end");
	}
	for (int gi = 0; gi < ngroups; gi++)
		check_done(&groups[gi]);
	return steps;
}

Test(ids, two_members_take_the_lowest_free)
{
	int m[2] = {0, 1};

	reset();
	add_group(m, 2);
	run(false);
	cr_assert_eq(groups[0].id[0], 1);
	add_group(m, 2);
	run(false);
	cr_assert_eq(groups[1].id[0], 2);
	put_group(&groups[0]);
	add_group(m, 2);
	run(false);
	cr_assert_eq(groups[2].id[0], 1, "a put id is taken again");
}

static unsigned first_free(int p)
{
	unsigned i = 0;

	while (i < MBU_IDS && mbu_ids_used(&procs[p].ids, i))
		i++;
	return i;
}

/* Process 0 uses many ids with process 1; a group of 0 and 2 finds one
 * free in both even though 2's first offer is ids 0 has taken. */
Test(ids, members_with_different_use_agree)
{
	int a[2] = {0, 1}, b[2] = {0, 2};
	unsigned want;

	reset();
	for (int i = 0; i < 40; i++)
		add_group(a, 2);
	run(false);
	/* more of 0's ids used, by groups this test does not track, until its
	 * lowest free id is past what 2 offers first */
	while (mbu_ids_used(&procs[0].ids, 0) && first_free(0) <= MBU_IDS_FIRST + 40) {
		unsigned id = 0;
		struct mbu_ids_agree x;
		uint64_t all[MBU_IDS_MSG_WORDS];

		mbu_ids_begin(&procs[0].ids, &x, 1000);
		mbu_ids_offer(&procs[0].ids, &x);
		memcpy(all, x.offer, sizeof(all));
		cr_assert_eq(mbu_ids_take(&procs[0].ids, &x, all, &id), 0);
	}
	want = first_free(0);
	add_group(b, 2);
	run(false);
	cr_assert_eq(groups[40].id[0], (int)want, "took %d, not %u", groups[40].id[0], want);
	cr_assert(groups[40].round >= 1, "the first offers could not meet");
}

/* Comm_idup on a chain of overlapping pairs, all started before any ends:
 * the case a "next unused id" agreement gets wrong. */
Test(ids, overlapping_pairs_all_started)
{
	reset();
	for (int p = 0; p + 1 < NP; p++) {
		int m[2] = {p, p + 1};
		add_group(m, 2);
	}
	for (int gi = 0; gi < ngroups; gi++)
		for (int i = 0; i < 2; i++)
			start(&groups[gi], i);
	run(true);
	for (int p = 1; p + 1 < NP; p++)
		cr_assert_neq(groups[p - 1].id[0], groups[p].id[0]);
}

/* Two groups of the same two processes, started in opposite orders: each
 * first try holds what the other's needs. They must still both end. */
Test(ids, crossed_starts_end)
{
	int m[2] = {0, 1};

	reset();
	for (int k = 0; k < 4; k++) {
		add_group(m, 2);
		add_group(m, 2);
		start(&groups[2 * k], 0);
		start(&groups[2 * k + 1], 0);
		start(&groups[2 * k + 1], 1);
		start(&groups[2 * k], 1);
	}
	run(true);
	for (int gi = 0; gi < ngroups; gi++)
		for (int gj = 0; gj < gi; gj++)
			cr_assert_neq(groups[gi].id[0], groups[gj].id[0]);
}

Test(ids, running_out_is_reported_alike_and_put_ids_return)
{
	int m[2] = {0, 1};
	int got = 0, last = -1;

	reset();
	for (;;) {
		int gi = ngroups;

		if (ngroups == NG) {
			/* reuse the slots of groups that hold ids: only the ids matter */
			memset(groups, 0, sizeof(groups));
			ngroups = 0;
			gi = 0;
			for (int p = 0; p < NP; p++)
				for (unsigned i = 0; i < MBU_IDS; i++)
					if (procs[p].owner[i] >= 0)
						procs[p].owner[i] = NG;	/* held elsewhere */
		}
		add_group(m, 2);
		run(false);
		if (groups[gi].err[0]) {
			cr_assert_eq(groups[gi].err[0], -ENOSPC);
			break;
		}
		last = groups[gi].id[0];
		got++;
	}
	cr_assert_eq(got, (int)MBU_IDS - 1, "every id but the reserved one is used once");
	mbu_ids_put(&procs[0].ids, 77);
	mbu_ids_put(&procs[1].ids, 77);
	procs[0].owner[77] = procs[1].owner[77] = -1;
	memset(groups, 0, sizeof(groups));
	ngroups = 0;
	add_group(m, 2);
	run(false);
	cr_assert_eq(groups[0].err[0], 0);
	cr_assert_eq(groups[0].id[0], 77);
	(void)last;
}

/* Random groups started and read in random orders, some put again while
 * others are under way. */
Test(ids, random_overlapping_agreements)
{
	for (int iter = 0; iter < 200; iter++) {
		reset();
		rng = (unsigned)iter * 7919u + 1;
		for (int gi = 0; gi < 24; gi++) {
			int m[NP], n = 0;

			for (int p = 0; p < NP; p++)
				if (rnd(3) == 0)
					m[n++] = p;
			if (n == 0)
				m[n++] = (int)rnd(NP);
			add_group(m, n);
			groups[gi].key = rnd(1000) * 64 + (uint64_t)gi;
		}
		run(true);
		for (int gi = 0; gi < ngroups; gi++) {
			cr_assert_eq(groups[gi].err[0], 0);
			if (rnd(2))
				put_group(&groups[gi]);
		}
		/* a second wave over what is left */
		{
			int base = ngroups;

			for (int gi = 0; gi < 24 && ngroups < NG; gi++) {
				int m[NP], n = 0;

				for (int p = 0; p < NP; p++)
					if (rnd(2) == 0)
						m[n++] = p;
				if (n == 0)
					m[n++] = 0;
				add_group(m, n);
				groups[ngroups - 1].key = (uint64_t)(base + gi);
			}
			run(true);
		}
	}
}

/* The crossed case again, with every try read in the order that keeps the
 * two agreements holding each other's ids: without the rule that a
 * starved agreement goes first by key, this never ends. */
Test(ids, crossed_starts_adversarial_order)
{
	int m[2] = {0, 1};
	/* (group, member) in the order their tries are read, each round */
	static const int order[4][2] = {{0, 0}, {1, 1}, {1, 0}, {0, 1}};
	int rounds = 0;

	reset();
	add_group(m, 2);
	add_group(m, 2);
	start(&groups[0], 0);
	start(&groups[1], 0);
	start(&groups[1], 1);
	start(&groups[0], 1);
	while (groups[0].state[0] != M_DONE || groups[0].state[1] != M_DONE ||
	       groups[1].state[0] != M_DONE || groups[1].state[1] != M_DONE) {
		for (int k = 0; k < 4; k++)
			if (can_take(&groups[order[k][0]], order[k][1]))
				take(&groups[order[k][0]], order[k][1]);
		cr_assert_lt(++rounds, 64, "the two agreements kept each other from ending");
	}
	check_done(&groups[0]);
	check_done(&groups[1]);
	cr_assert_neq(groups[0].id[0], groups[1].id[0]);
}
