/*
 * Intercommunicators: MPI_COMM_WORLD split in two (low ranks and high
 * ranks) and joined by MPI_Intercomm_create; sizes, groups and remote
 * groups; point-to-point across (with MPI_ANY_SOURCE and statuses naming
 * remote ranks); every blocking collective in both directions with the
 * MPI_ROOT / MPI_PROC_NULL convention, and again non-blocking (each waited
 * for, then two outstanding at once); dup, split, create and merge of the
 * intercommunicator; and the calls that need one failing on an
 * intracommunicator. One rank has no other group: it checks the errors only.
 */
#include "mt.h"

static int rank, size;

/* The blocking call, or its non-blocking twin waited for at once. */
static int nb;
static MPI_Request rq;
#define DO(blocking, nonblocking) (nb ? waited(nonblocking) : (blocking))

static int waited(int ret)
{
	return ret ? ret : MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

static void errors_on_intra(void)
{
	int n = -1, cls;
	MPI_Group g;
	MPI_Comm out;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), &cls);
	CHECK(cls == MPI_ERR_COMM && n == -1);
	MPI_Error_class(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), &cls);
	CHECK(cls == MPI_ERR_COMM);
	MPI_Error_class(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &out), &cls);
	CHECK(cls == MPI_ERR_COMM);
	CHECK_MPI(MPI_Comm_test_inter(MPI_COMM_WORLD, &n));
	CHECK(n == 0);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Every collective from group `low` to the other and back. */
static void collectives(MPI_Comm ic, int low, int lrank, int lsize, int rsize)
{
	int *buf = malloc(sizeof(int) * 64), *big = malloc(sizeof(int) * 64 * 8), ok, x, y;

	CHECK_MPI(DO(MPI_Barrier(ic), MPI_Ibarrier(ic, &rq)));
	for (int dir = 0; dir < 2; dir++) {
		int rootside = dir == 0 ? low : !low;
		int root = rootside ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;

		/* Bcast: 5 ints from the root group's rank 0. */
		for (int i = 0; i < 5; i++)
			buf[i] = rootside && lrank == 0 ? 100 * dir + i : -1;
		CHECK_MPI(DO(MPI_Bcast(buf, 5, MPI_INT, root, ic),
			     MPI_Ibcast(buf, 5, MPI_INT, root, ic, &rq)));
		ok = 1;
		for (int i = 0; i < 5; i++)
			ok &= rootside ? (lrank != 0 || buf[i] == 100 * dir + i) : buf[i] == 100 * dir + i;
		CHECK(ok);

		/* Reduce: the other group's ranks, summed, at the root. */
		x = lrank + 1;
		y = -1;
		CHECK_MPI(DO(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, root, ic),
			     MPI_Ireduce(&x, &y, 1, MPI_INT, MPI_SUM, root, ic, &rq)));
		if (root == MPI_ROOT)
			CHECK(y == rsize * (rsize + 1) / 2);

		/* Gather: lrank*10 from each of the other group, in rank order. */
		for (int i = 0; i < rsize; i++)
			big[i] = -1;
		x = lrank * 10 + dir;
		CHECK_MPI(DO(MPI_Gather(&x, 1, MPI_INT, big, 1, MPI_INT, root, ic),
			     MPI_Igather(&x, 1, MPI_INT, big, 1, MPI_INT, root, ic, &rq)));
		if (root == MPI_ROOT) {
			ok = 1;
			for (int i = 0; i < rsize; i++)
				ok &= big[i] == i * 10 + dir;
			CHECK(ok);
		}

		/* Scatter: element i to the other group's rank i. */
		for (int i = 0; i < rsize; i++)
			big[i] = 7 * i + dir;
		y = -1;
		CHECK_MPI(DO(MPI_Scatter(big, 1, MPI_INT, &y, 1, MPI_INT, root, ic),
			     MPI_Iscatter(big, 1, MPI_INT, &y, 1, MPI_INT, root, ic, &rq)));
		if (!rootside)
			CHECK(y == 7 * lrank + dir);
	}

	/* Allreduce: each side gets the other's sum. */
	x = (low ? 1000 : 1) * (lrank + 1);
	CHECK_MPI(DO(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic),
		     MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic, &rq)));
	CHECK(y == (low ? 1 : 1000) * rsize * (rsize + 1) / 2);

	/* Allgather: the other side's values in its rank order. */
	x = (low ? 500 : 0) + lrank;
	CHECK_MPI(DO(MPI_Allgather(&x, 1, MPI_INT, big, 1, MPI_INT, ic),
		     MPI_Iallgather(&x, 1, MPI_INT, big, 1, MPI_INT, ic, &rq)));
	ok = 1;
	for (int i = 0; i < rsize; i++)
		ok &= big[i] == (low ? 0 : 500) + i;
	CHECK(ok);

	/* Alltoall: block j goes to remote rank j. */
	for (int j = 0; j < rsize; j++)
		buf[j] = (low ? 1 : 2) * 100 + lrank * 10 + j;
	CHECK_MPI(DO(MPI_Alltoall(buf, 1, MPI_INT, big, 1, MPI_INT, ic),
		     MPI_Ialltoall(buf, 1, MPI_INT, big, 1, MPI_INT, ic, &rq)));
	ok = 1;
	for (int j = 0; j < rsize; j++)
		ok &= big[j] == (low ? 2 : 1) * 100 + j * 10 + lrank;
	CHECK(ok);

	/* Reduce_scatter_block: the vector is lsize*2 long here and rsize*2
	 * there; it must be the same length, so only when the sides match. */
	if (lsize == rsize) {
		for (int i = 0; i < 2 * lsize; i++)
			buf[i] = (low ? 1 : 3) * (i + 1);
		CHECK_MPI(DO(MPI_Reduce_scatter_block(buf, &big[0], 2, MPI_INT, MPI_SUM, ic),
			     MPI_Ireduce_scatter_block(buf, &big[0], 2, MPI_INT, MPI_SUM, ic, &rq)));
		CHECK(big[0] == rsize * (low ? 3 : 1) * (2 * lrank + 1));
		CHECK(big[1] == rsize * (low ? 3 : 1) * (2 * lrank + 2));
	}
	if (nb) {
		/* Gatherv with a gap, and two collectives outstanding at once. */
		int *counts = malloc(sizeof(int) * (size_t)rsize), *displs = malloc(sizeof(int) * (size_t)rsize);
		MPI_Request two[2];
		int z = -1, root = low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;

		for (int i = 0; i < rsize; i++) {
			counts[i] = 1;
			displs[i] = 2 * i;
			big[2 * i] = big[2 * i + 1] = -1;
		}
		x = 30 + lrank;
		CHECK_MPI(MPI_Igatherv(&x, 1, MPI_INT, big, counts, displs, MPI_INT, root, ic, &rq));
		CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		if (root == MPI_ROOT) {
			ok = 1;
			for (int i = 0; i < rsize; i++)
				ok &= big[2 * i] == 30 + i && big[2 * i + 1] == -1;
			CHECK(ok);
		}
		x = lrank + 1;
		buf[0] = low ? 77 : -1;
		CHECK_MPI(MPI_Ibcast(buf, 1, MPI_INT, low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0,
				     ic, &two[0]));
		CHECK_MPI(MPI_Iallreduce(&x, &z, 1, MPI_INT, MPI_SUM, ic, &two[1]));
		CHECK_MPI(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
		CHECK(buf[0] == 77 || (low && lrank != 0));
		CHECK(z == rsize * (rsize + 1) / 2);
		free(counts);
		free(displs);
	}
	free(buf);
	free(big);
}

int main(int argc, char **argv)
{
	MPI_Comm half, ic, dup, merged, sub, made;
	MPI_Group lg, rg, wg;
	int low, lrank, lsize, rsize, flag, cmp, n;

	mt_init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	errors_on_intra();
	if (size < 2)
		return mt_finish("t_inter");

	/* Low: ranks below size/2 (at 3 ranks: {0} and {1, 2}). */
	low = rank < size / 2;
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
	CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 42, &ic));
	CHECK_MPI(MPI_Comm_test_inter(ic, &flag));
	CHECK(flag == 1);
	MPI_Comm_rank(ic, &lrank);
	MPI_Comm_size(ic, &lsize);
	CHECK_MPI(MPI_Comm_remote_size(ic, &rsize));
	CHECK(lsize == (low ? size / 2 : size - size / 2));
	CHECK(rsize == size - lsize);
	CHECK(lrank == (low ? rank : rank - size / 2));

	/* The remote group is the other half, in world order. */
	CHECK_MPI(MPI_Comm_remote_group(ic, &rg));
	CHECK_MPI(MPI_Comm_group(ic, &lg));
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	{
		int r[64], w[64];

		for (int i = 0; i < rsize; i++)
			r[i] = i;
		MPI_Group_translate_ranks(rg, rsize, r, wg, w);
		n = 1;
		for (int i = 0; i < rsize; i++)
			n &= w[i] == (low ? size / 2 + i : i);
		CHECK(n);
		MPI_Group_size(lg, &n);
		CHECK(n == lsize);
	}

	/* Point-to-point: each rank sends its world rank to every remote rank,
	 * and takes them in from MPI_ANY_SOURCE. */
	{
		MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)rsize);
		int *seen = calloc((size_t)rsize, sizeof(int)), ok = 1;

		for (int j = 0; j < rsize; j++)
			CHECK_MPI(MPI_Isend(&rank, 1, MPI_INT, j, 5, ic, &rq[j]));
		for (int j = 0; j < rsize; j++) {
			MPI_Status st;
			int v = -1;

			CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
			ok &= st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && st.MPI_TAG == 5;
			if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize) {
				seen[st.MPI_SOURCE]++;
				ok &= v == (low ? size / 2 : 0) + st.MPI_SOURCE;
			}
		}
		MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE);
		for (int j = 0; j < rsize; j++)
			ok &= seen[j] == 1;
		CHECK(ok);
		/* A sendrecv with the remote rank of the same index, where it exists. */
		if (lrank < rsize) {
			int v = -1;

			CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, lrank, 6, &v, 1, MPI_INT, lrank, 6, ic,
					       MPI_STATUS_IGNORE));
			CHECK(v == (low ? size / 2 : 0) + lrank);
		}
		free(rq);
		free(seen);
	}

	collectives(ic, low, lrank, lsize, rsize);
	nb = 1;
	collectives(ic, low, lrank, lsize, rsize);
	nb = 0;

	/* Dup: congruent, its own context, same collectives. */
	CHECK_MPI(MPI_Comm_dup(ic, &dup));
	CHECK_MPI(MPI_Comm_compare(ic, dup, &cmp));
	CHECK(cmp == MPI_CONGRUENT);
	collectives(dup, low, lrank, lsize, rsize);

	/* Merge with the low group first, then with the high one first. */
	CHECK_MPI(MPI_Intercomm_merge(ic, !low, &merged));
	MPI_Comm_rank(merged, &n);
	CHECK(n == rank);
	MPI_Comm_size(merged, &n);
	CHECK(n == size);
	{
		int s = 0, x = rank;

		CHECK_MPI(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, merged));
		CHECK(s == size * (size - 1) / 2);
	}
	MPI_Comm_free(&merged);
	CHECK_MPI(MPI_Intercomm_merge(dup, low, &merged));
	MPI_Comm_rank(merged, &n);
	CHECK(n == (low ? rank + (size - size / 2) : rank - size / 2));
	MPI_Comm_free(&merged);

	/* Split by local rank parity: the even ones of both sides, the odd
	 * ones where both sides have some. */
	CHECK_MPI(MPI_Comm_split(ic, lrank % 2, lrank, &sub));
	{
		int want_r = lrank % 2 ? rsize / 2 : (rsize + 1) / 2;

		if (want_r == 0) {
			CHECK(sub == MPI_COMM_NULL);
		} else {
			CHECK(sub != MPI_COMM_NULL);
			if (sub != MPI_COMM_NULL) {
				MPI_Comm_remote_size(sub, &n);
				CHECK(n == want_r);
				MPI_Comm_size(sub, &n);
				CHECK(n == (lrank % 2 ? lsize / 2 : (lsize + 1) / 2));
				CHECK_MPI(MPI_Barrier(sub));
				MPI_Comm_free(&sub);
			}
		}
	}

	/* Create: each side without its rank 0 where it has more than one. */
	{
		MPI_Group g;
		int zero = 0, lrest = lsize > 1 ? lsize - 1 : lsize, rrest = rsize > 1 ? rsize - 1 : rsize;

		if (lsize > 1)
			MPI_Group_excl(lg, 1, &zero, &g);
		else
			MPI_Group_incl(lg, 1, &zero, &g);
		CHECK_MPI(MPI_Comm_create(ic, g, &made));
		if (lsize > 1 && lrank == 0) {
			CHECK(made == MPI_COMM_NULL);
		} else {
			CHECK(made != MPI_COMM_NULL);
			if (made != MPI_COMM_NULL) {
				int v = lrank, s = -1;

				MPI_Comm_remote_size(made, &n);
				CHECK(n == rrest);
				MPI_Comm_size(made, &n);
				CHECK(n == lrest);
				/* Sum of the other side's local ranks in ic. */
				CHECK_MPI(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, made));
				CHECK(s == (rsize > 1 ? rsize * (rsize - 1) / 2 : 0));
				MPI_Comm_free(&made);
			}
		}
		MPI_Group_free(&g);
	}

	/* Calls an intercommunicator cannot take. */
	{
		int cls, x = 0, y;
		MPI_Comm cart;
		int dims[1] = {lsize}, per[1] = {0};

		MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
		MPI_Error_class(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic), &cls);
		CHECK(cls == MPI_ERR_COMM);
		{
			MPI_Request r;

			MPI_Error_class(MPI_Iscan(&x, &y, 1, MPI_INT, MPI_SUM, ic, &r), &cls);
			CHECK(cls == MPI_ERR_COMM);
			MPI_Error_class(MPI_Ibcast(&x, 1, MPI_INT, rsize + 5, ic, &r), &cls);
			CHECK(cls == MPI_ERR_ROOT);
		}
		MPI_Error_class(MPI_Cart_create(ic, 1, dims, per, 0, &cart), &cls);
		CHECK(cls == MPI_ERR_COMM);
		MPI_Error_class(MPI_Bcast(&x, 1, MPI_INT, rsize + 5, ic), &cls);
		CHECK(cls == MPI_ERR_ROOT);
	}

	MPI_Group_free(&lg);
	MPI_Group_free(&rg);
	MPI_Group_free(&wg);
	CHECK_MPI(MPI_Comm_free(&dup));
	CHECK_MPI(MPI_Comm_free(&ic));
	CHECK(ic == MPI_COMM_NULL);
	MPI_Comm_free(&half);
	return mt_finish("t_inter");
}
