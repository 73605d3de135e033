/*
 * Communicators and groups: dup, split (with keys that reverse the order and
 * an MPI_UNDEFINED colour), split_type(SHARED), create, compare, free, names
 * and TAG_UB; the group calls; and isolation: a message on one communicator
 * is never received on another, even by a wildcard receive.
 */
#include "mt.h"

#include <sys/stat.h>

static int rank, size;

static void dup_and_isolation(void)
{
	MPI_Comm d;
	int res, v = rank, got = -1, flag;
	MPI_Status st;
	char name[MPI_MAX_OBJECT_NAME];
	int len;

	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
	CHECK(res == MPI_CONGRUENT);
	CHECK_MPI(MPI_Comm_compare(d, d, &res));
	CHECK(res == MPI_IDENT);
	CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
	CHECK(!strcmp(name, "MPI_COMM_WORLD"));
	CHECK_MPI(MPI_Comm_set_name(d, "my dup"));
	MPI_Comm_get_name(d, name, &len);
	CHECK(!strcmp(name, "my dup") && len == 6);

	/* Send on d, look for it on WORLD with wildcards: not there. */
	MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 3, d);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Barrier(d);
	CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag);
	CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &st));
	CHECK(got == (rank - 1 + size) % size && st.MPI_TAG == 3);
	/* Collective traffic on WORLD never matches a pending user wildcard receive. */
	{
		MPI_Request rq;
		int sum = 0, one = 1;
		MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Test(&rq, &flag, &st);
		CHECK(!flag && sum == size);
		MPI_Send(&v, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
		MPI_Wait(&rq, &st);
		CHECK(got == rank && st.MPI_TAG == 9);
	}
	CHECK_MPI(MPI_Comm_free(&d));
	CHECK(d == MPI_COMM_NULL);
}

static void split(void)
{
	MPI_Comm half, rev, none, shared;
	int r, s, res;

	/* Two colours; keys reverse the order in each. */
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
	MPI_Comm_size(half, &s);
	MPI_Comm_rank(half, &r);
	CHECK(s == (size + 1 - rank % 2) / 2);
	CHECK(r == s - 1 - rank / 2);
	{
		/* The members are the right ones: sum of world ranks. */
		int sum = 0, expect = 0;
		MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
		for (int i = rank % 2; i < size; i += 2)
			expect += i;
		CHECK(sum == expect);
	}
	/* Same key for everyone: order by the old rank. */
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &rev));
	MPI_Comm_rank(rev, &r);
	CHECK(r == rank);
	CHECK_MPI(MPI_Comm_compare(rev, MPI_COMM_WORLD, &res));
	CHECK(res == MPI_CONGRUENT);
	MPI_Comm_free(&rev);
	/* Reversed keys: same members, other order. */
	MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
	MPI_Comm_compare(rev, MPI_COMM_WORLD, &res);
	CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR));
	MPI_Comm_free(&rev);
	/* Rank 0 opts out. */
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
	CHECK((rank == 0) == (none == MPI_COMM_NULL));
	if (none != MPI_COMM_NULL) {
		MPI_Comm_size(none, &s);
		CHECK(s == size - 1);
		MPI_Comm_free(&none);
	}
	/* The shared communicator holds exactly the ranks of this node: same host
	 * name and network namespace (namespaces are the test cluster's hosts). */
	CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
	MPI_Comm_size(shared, &s);
	{
		char (*nodes)[320] = calloc((size_t)size, sizeof(*nodes));
		char me[320];
		struct stat st;
		int len, same = 0;

		MPI_Get_processor_name(me, &len);
		if (stat("/proc/self/ns/net", &st))
			st.st_ino = 0;
		snprintf(me + len, sizeof(me) - (size_t)len, "/%llu", (unsigned long long)st.st_ino);
		MPI_Allgather(me, 320, MPI_CHAR, nodes, 320, MPI_CHAR, MPI_COMM_WORLD);
		for (int i = 0; i < size; i++)
			same += !strcmp(nodes[i], me);
#ifndef OPEN_MPI /* Open MPI groups by its own node names, blind to namespaces */
		CHECK(s == same);
#else
		(void)same;
#endif
		free(nodes);
	}
	MPI_Comm_free(&shared);
	/* Point-to-point inside the split. */
	MPI_Comm_size(half, &s);
	MPI_Comm_rank(half, &r);
	{
		int v = r, got = -1;
		MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % s, 0, &got, 1, MPI_INT, (r - 1 + s) % s, 0, half,
			     MPI_STATUS_IGNORE);
		CHECK(got == (r - 1 + s) % s);
	}
	MPI_Comm_free(&half);
}

static void groups_and_create(void)
{
	MPI_Group world, evens, odds, u, in, diff, g;
	MPI_Comm ec;
	int n = (size + 1) / 2, *ranks = malloc(sizeof(int) * (size_t)size), res, gs, gr;
	int *out = malloc(sizeof(int) * (size_t)size);

	CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
	MPI_Group_size(world, &gs);
	MPI_Group_rank(world, &gr);
	CHECK(gs == size && gr == rank);
	for (int i = 0; i < n; i++)
		ranks[i] = 2 * i;
	CHECK_MPI(MPI_Group_incl(world, n, ranks, &evens));
	CHECK_MPI(MPI_Group_excl(world, n, ranks, &odds));
	MPI_Group_size(evens, &gs);
	CHECK(gs == n);
	MPI_Group_size(odds, &gs);
	CHECK(gs == size - n);
	MPI_Group_rank(evens, &gr);
	CHECK(gr == (rank % 2 ? MPI_UNDEFINED : rank / 2));
	CHECK_MPI(MPI_Group_union(evens, odds, &u));
	MPI_Group_compare(u, world, &res);
	CHECK(res == (size <= 2 ? MPI_IDENT : MPI_SIMILAR));
	CHECK_MPI(MPI_Group_intersection(evens, odds, &in));
	MPI_Group_size(in, &gs);
	CHECK(gs == 0);
	CHECK(in == MPI_GROUP_EMPTY);
	CHECK_MPI(MPI_Group_difference(world, odds, &diff));
	MPI_Group_compare(diff, evens, &res);
	CHECK(res == MPI_IDENT);
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	CHECK_MPI(MPI_Group_translate_ranks(world, size, ranks, evens, out));
	for (int i = 0; i < size; i++)
		CHECK(out[i] == (i % 2 ? MPI_UNDEFINED : i / 2));
	/* Comm_create from the even group. */
	CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &ec));
	CHECK((rank % 2 == 0) == (ec != MPI_COMM_NULL));
	if (ec != MPI_COMM_NULL) {
		int s, r, sum = 0;
		MPI_Comm_size(ec, &s);
		MPI_Comm_rank(ec, &r);
		CHECK(s == n && r == rank / 2);
		MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ec);
		CHECK(sum == n * (n - 1));
		MPI_Comm_group(ec, &g);
		MPI_Group_compare(g, evens, &res);
		CHECK(res == MPI_IDENT);
		MPI_Group_free(&g);
		MPI_Comm_free(&ec);
	}
	MPI_Group_free(&world);
	MPI_Group_free(&evens);
	MPI_Group_free(&odds);
	MPI_Group_free(&u);
	MPI_Group_free(&in);
	MPI_Group_free(&diff);
	CHECK(diff == MPI_GROUP_NULL);
	free(ranks);
	free(out);
}

/* Many communicators created and freed: ids keep agreeing, and each new
 * one's first collective builds its node and leader communicators across
 * hosts (64: each costs tens of milliseconds oversubscribed across the
 * namespace hosts of tests/netns). */
static void many(void)
{
	for (int i = 0, n = mt_lean() ? 8 : 64; i < n; i++) {
		MPI_Comm d;
		int v = i, got = -1;
		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_MAX, d);
		CHECK(got == i);
		MPI_Comm_free(&d);
	}
	{
		MPI_Comm self;
		int s, r;
		MPI_Comm_dup(MPI_COMM_SELF, &self);
		MPI_Comm_size(self, &s);
		MPI_Comm_rank(self, &r);
		CHECK(s == 1 && r == 0);
		MPI_Comm_free(&self);
	}
}

/* Before this, only some ranks have ever reduced anything: every rank must
 * still pick the same algorithm for the library's own reductions (a new
 * context is agreed by one). At 4 ranks, with ranks 1 and 2 the ones that
 * have, a library that set up its operations lazily hangs here. Runs first
 * in the program for that reason. */
static void first_reduction_on_some_ranks(void)
{
	MPI_Comm d;
	int v = 1, w = 2, got = -1;

	if (rank == 1 || rank == 2)
		CHECK_MPI(MPI_Reduce_local(&v, &w, 1, MPI_INT, MPI_SUM));
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	v = rank;
	CHECK_MPI(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_MAX, d));
	CHECK(got == size - 1);
	MPI_Comm_free(&d);
}

/* Contexts: Comm_idup on every overlapping pair of neighbours at once (a
 * process in two agreements must not get one context for both), an
 * intercommunicator's idup that does not wait for the other group, and a
 * context given back by Comm_free being used again, past the number that
 * exist. */
static void contexts(void)
{
	MPI_Comm pair[2] = {MPI_COMM_NULL, MPI_COMM_NULL}, dup[2], local, inter, idup;
	MPI_Request r[2];
	int n = 0;

	if (size >= 3) {
		/* pair[0]: with the left neighbour, pair[1]: with the right (ring) */
		for (int p = 0; p < size; p++) {
			MPI_Group wg, g;
			int m[2] = {p, (p + 1) % size};
			MPI_Comm c;

			MPI_Comm_group(MPI_COMM_WORLD, &wg);
			MPI_Group_incl(wg, 2, m, &g);
			CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
			if (p == rank)
				pair[1] = c;
			else if ((p + 1) % size == rank)
				pair[0] = c;
			MPI_Group_free(&g);
			MPI_Group_free(&wg);
		}
		/* Even ranks start left then right, odd ones right then left. */
		for (int k = 0; k < 2; k++) {
			int i = rank % 2 ? 1 - k : k;
			CHECK_MPI(MPI_Comm_idup(pair[i], &dup[i], &r[i]));
		}
		CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
		/* A message to each neighbour on each duplicate: received on the
		 * right one, as its content says. */
		{
			int mine[2], got[2] = {-1, -1};
			MPI_Request q[4];

			for (int i = 0; i < 2; i++) {
				int peer;

				MPI_Comm_rank(dup[i], &peer);
				mine[i] = rank * 10 + i;
				MPI_Irecv(&got[i], 1, MPI_INT, 1 - peer, 7, dup[i], &q[2 * i]);
				MPI_Isend(&mine[i], 1, MPI_INT, 1 - peer, 7, dup[i], &q[2 * i + 1]);
			}
			CHECK_MPI(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
			CHECK(got[0] == ((rank - 1 + size) % size) * 10 + 1);
			CHECK(got[1] == ((rank + 1) % size) * 10);
		}
		for (int i = 0; i < 2; i++) {
			MPI_Comm_free(&dup[i]);
			MPI_Comm_free(&pair[i]);
		}
	}
	if (size >= 2) {
		/* Group 0 holds its leader in a receive until group 1's members
		 * have started the idup; they must not wait for group 0 to. */
		int grp = rank % 2, lr, lsize, rsize, v, sum = -1;

		MPI_Comm_split(MPI_COMM_WORLD, grp, rank, &local);
		CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - grp, 9, &inter));
		MPI_Comm_rank(inter, &lr);
		MPI_Comm_size(inter, &lsize);
		MPI_Comm_remote_size(inter, &rsize);
		if (grp == 1) {
			CHECK_MPI(MPI_Comm_idup(inter, &idup, &r[0]));
			if (lr == 0)
				CHECK_MPI(MPI_Send(&lr, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
		} else {
			if (lr == 0)
				CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK_MPI(MPI_Comm_idup(inter, &idup, &r[0]));
		}
		CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
		v = lr;
		CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, idup));
		CHECK(sum == rsize * (rsize - 1) / 2);
		MPI_Comm_free(&idup);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&local);
	}
	/* More creations than there are contexts, each freed: all succeed.
	 * (Our number of contexts; other MPIs run this test too.) */
#ifdef MBMPI_HANDLE
	for (int i = 0; i < 9000; i++) {
		MPI_Comm d;

		if (MPI_Comm_dup(MPI_COMM_SELF, &d) != MPI_SUCCESS)
			break;
		n++;
		MPI_Comm_free(&d);
	}
	CHECK(n == 9000);
#endif
	(void)n;
}

/* A copy callback that makes a communicator: it runs as Comm_idup ends,
 * from inside the library's progress, and its creation must still finish. */
static MPI_Comm made_in_copy = MPI_COMM_NULL, made_from = MPI_COMM_NULL;

static int copy_makes_comm(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
	(void)old;
	(void)key;
	(void)extra;
	/* not a dup of the communicator that has the attribute: that would
	 * call this again */
	if (MPI_Comm_dup(made_from, &made_in_copy) != MPI_SUCCESS)
		return MPI_ERR_OTHER;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

static void creation_in_callback(void)
{
	int kv, x = 5, sum = -1, one = 1;
	MPI_Comm c;
	MPI_Request r;

	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &made_from));
	CHECK_MPI(MPI_Comm_create_keyval(copy_makes_comm, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
	CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &x));
	CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(made_in_copy != MPI_COMM_NULL);
	if (made_in_copy != MPI_COMM_NULL) {
		CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, made_in_copy));
		CHECK(sum == size);
		MPI_Comm_free(&made_in_copy);
	}
	MPI_Comm_free(&c);
	MPI_Comm_delete_attr(MPI_COMM_WORLD, kv);
	MPI_Comm_free_keyval(&kv);
	MPI_Comm_free(&made_from);
}

#ifdef MBMPI_HANDLE
/* As many communicators alive as can be: the one past the last fails
 * with an error (MPI_ERR_OTHER) under MPI_ERRORS_RETURN, and freeing
 * them makes room again. On MPI_COMM_SELF: the limit is each process's,
 * and thousands of creations over the network would be slow. */
static void too_many(void)
{
	enum { MAX = 9000 };
	MPI_Comm *live = malloc(sizeof(*live) * MAX);
	int n = 0, err = MPI_SUCCESS, cls = -1;

	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	while (n < MAX && (err = MPI_Comm_dup(MPI_COMM_SELF, &live[n])) == MPI_SUCCESS)
		n++;
	MPI_Error_class(err, &cls);
	CHECK(n < MAX && n > 8000);
	CHECK(cls == MPI_ERR_OTHER);
	while (n > 0)
		CHECK_MPI(MPI_Comm_free(&live[--n]));
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &live[0]));
	MPI_Comm_free(&live[0]);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	free(live);
}
#endif

/* Group_range_incl/excl, Comm_create_group over a subset (the others do
 * not call), Comm_idup and Comm_dup_with_info. */
static void more_constructors(void)
{
	MPI_Group wg, g, h;
	MPI_Comm c;
	MPI_Request r;
	MPI_Info info, got;
	int ranges[2][3], n, x, flag;
	char v[16];

	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	/* Every other rank from the top down, then rank 0 if not already in. */
	ranges[0][0] = size - 1;
	ranges[0][1] = 0;
	ranges[0][2] = -2;
	CHECK_MPI(MPI_Group_range_incl(wg, 1, ranges, &g));
	MPI_Group_size(g, &n);
	CHECK(n == (size + 1) / 2);
	{
		int r0 = 0, t;

		MPI_Group_translate_ranks(g, 1, &r0, wg, &t);
		CHECK(t == size - 1);
	}
	CHECK_MPI(MPI_Group_range_excl(wg, 1, ranges, &h));
	MPI_Group_size(h, &n);
	CHECK(n == size / 2);
	MPI_Group_free(&h);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	ranges[1][0] = 0;
	ranges[1][1] = size;
	ranges[1][2] = 1;
	h = MPI_GROUP_NULL;
	{
		int cls;

		MPI_Error_class(MPI_Group_range_incl(wg, 2, ranges, &h), &cls);
		CHECK(cls == MPI_ERR_RANK && h == MPI_GROUP_NULL);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

	/* Only the members of g call: the others go straight on. */
	MPI_Group_rank(g, &n);
	if (n != MPI_UNDEFINED) {
		int gs, sum = 0;

		CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g, 9, &c));
		CHECK(c != MPI_COMM_NULL);
		MPI_Comm_size(c, &gs);
		MPI_Group_size(g, &x);
		CHECK(gs == x);
		x = rank;
		CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
		{
			int want = 0;

			for (int i = size - 1; i >= 0; i -= 2)
				want += i;
			CHECK(sum == want);
		}
		MPI_Comm_free(&c);
	}
	MPI_Group_free(&g);
	MPI_Group_free(&wg);

	CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	x = 1;
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c));
	CHECK(x == size);
	MPI_Comm_free(&c);

	MPI_Info_create(&info);
	MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
	CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
	MPI_Info_free(&info);
	CHECK_MPI(MPI_Comm_get_info(c, &got));
	CHECK_MPI(MPI_Info_get(got, "mpi_assert_no_any_tag", sizeof(v) - 1, v, &flag));
	CHECK(flag && !strcmp(v, "true"));
	MPI_Info_free(&got);
	MPI_Comm_free(&c);

#if MPI_VERSION >= 4 || defined(MBMPI_HANDLE)	/* ours has it; Open MPI 4.1 does not */
	/* The non-blocking one (MPI-4): the info is copied at the call. */
	MPI_Info_create(&info);
	MPI_Info_set(info, "mpi_assert_no_any_source", "true");
	CHECK_MPI(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c, &r));
	MPI_Info_free(&info);
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Comm_get_info(c, &got));
	CHECK_MPI(MPI_Info_get(got, "mpi_assert_no_any_source", sizeof(v) - 1, v, &flag));
	CHECK(flag && !strcmp(v, "true"));
	MPI_Info_free(&got);
	x = 1;
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c));
	CHECK(x == size);
	MPI_Comm_free(&c);
#endif
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	first_reduction_on_some_ranks();
	dup_and_isolation();
	split();
	groups_and_create();
	many();
	more_constructors();
	contexts();
	creation_in_callback();
#ifdef MBMPI_HANDLE	/* our limit and error class */
	too_many();
#endif
	return mt_finish("t_comm");
}
