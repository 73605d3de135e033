/*
 * Mixed traffic, every byte and every order checked: each rank sends a
 * seeded random plan of messages to the others (sizes from empty to 640 KB,
 * so some go whole, some in one eager trip and some in pieces; half of them
 * from a strided vector), on three tags, while its receives, posted before
 * or after the sends, take them through named and wildcard receives,
 * contiguous or strided, and in some rounds through MPI_Improbe and
 * MPI_Mrecv or MPI_Imrecv. Each element says which message it belongs to,
 * so a message delivered into the wrong receive, pieces of two messages
 * interleaved, or one message overtaking another of its sender and tag is
 * caught, whatever path each took. The engines reorder, split and gate
 * messages in ways that depend on size and timing (mpi/TAGS.md); one
 * program that mixes them all keeps those paths honest with one another.
 */
#include <stdint.h>

#include "mt.h"

enum { TAGS = 3, MAXN = 160000, BLOCK = 4, STRIDE = 8, ROUNDS = 4 };

/* Element counts: empty, one eager trip, just above and below the 64 KiB
 * piece, a vector's first piece of 64 KiB against one of 16 bytes, and
 * several pieces. */
static const int sizes[] = {0, 2, 1024, 16384, 25000, 65536, 65540, MAXN};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

struct msg {
	int to, tag, n, vec, seq;
};

static uint64_t seed;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

/* Element k of message seq from src; element 0 names the message. */
static int val(int src, int seq, int k)
{
	if (k == 0)
		return (src << 20) | seq;
	return (int)((uint32_t)src * 7919u + (uint32_t)seq * 104729u + (uint32_t)k * 31u);
}

static size_t span(int n, int vec)
{
	return vec && n >= BLOCK ? (size_t)(n / BLOCK - 1) * STRIDE + BLOCK : (size_t)n;
}

/* Every rank's plan, from one seed per rank and round, so that each
 * receiver knows how many messages come from whom on which tag. */
static void make_plan(struct msg *plan, int size, int nm, int round)
{
	for (int s = 0; s < size; s++) {
		int seqs[TAGS][64] = {{0}};

		seed = 12345u + (uint64_t)round * 1000u + (uint64_t)s;
		for (int i = 0; i < nm; i++) {
			struct msg *m = &plan[s * nm + i];

			m->to = size > 1 ? (s + 1 + i % (size - 1)) % size : s;
			m->tag = (int)(rnd() % TAGS);
			m->n = sizes[rnd() % NSIZES];
			m->vec = m->n >= BLOCK && rnd() % 2;
			m->seq = seqs[m->tag][m->to % 64]++;
		}
	}
}

static long check_recv(const int *b, int n, int vec, int src, int *last)
{
	int seq = b[0] & 0xfffff;
	long bad = 0;

	if (b[0] >> 20 != src)
		return 1;
	bad += seq <= *last; /* overtook, or came twice */
	*last = seq;
	for (size_t x = 0, k = 0; k < (size_t)n; x++) {
		if (vec && x % STRIDE >= BLOCK) {
			bad += b[x] != -1; /* a gap written */
			continue;
		}
		bad += b[x] != val(src, seq, (int)k);
		k++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	int size, rank;
	long bad = 0, empties = 0;

	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	if (size > 64) {
		/* The plan numbers messages per receiver in 64 slots. */
		return mt_finish("t_mix");
	}
	int nm = size > 1 ? 24 / (size - 1) * (size - 1) : 8;
	struct msg *plan = malloc(sizeof(*plan) * (size_t)nm * (size_t)size);
	MPI_Request *rq = malloc(sizeof(*rq) * 2 * (size_t)nm);
	MPI_Status *st = malloc(sizeof(*st) * 2 * (size_t)nm);
	int **sb = calloc((size_t)nm, sizeof(int *)), **rb = calloc((size_t)nm, sizeof(int *));
	int *rsrc = malloc(sizeof(int) * (size_t)nm), *rtag = malloc(sizeof(int) * (size_t)nm);
	int *rvec = malloc(sizeof(int) * (size_t)nm);
	MPI_Datatype rv, sv[NSIZES];

	CHECK(plan && rq && st && sb && rb && rsrc && rtag && rvec);
	CHECK_MPI(MPI_Type_vector(MAXN / BLOCK, BLOCK, STRIDE, MPI_INT, &rv));
	CHECK_MPI(MPI_Type_commit(&rv));
	for (int i = 0; i < NSIZES; i++) {
		CHECK_MPI(MPI_Type_vector(sizes[i] / BLOCK ? sizes[i] / BLOCK : 1, BLOCK, STRIDE,
					  MPI_INT, &sv[i]));
		CHECK_MPI(MPI_Type_commit(&sv[i]));
	}
	for (int i = 0; i < nm; i++) {
		sb[i] = malloc(sizeof(int) * span(MAXN, 1));
		rb[i] = malloc(sizeof(int) * span(MAXN, 1));
		CHECK(sb[i] && rb[i]);
	}
	for (int round = 0; round < ROUNDS; round++) {
		struct msg *mine = plan + (size_t)rank * (size_t)nm;
		int count[64][TAGS] = {{0}}, last[64][TAGS];
		int nr = 0, named, recv_first, probe = round % 2;

		make_plan(plan, size, nm, round);
		for (int s = 0; s < size; s++)
			for (int i = 0; i < nm; i++)
				if (plan[s * nm + i].to == rank)
					count[s][plan[s * nm + i].tag]++;
		seed = 999u + (uint64_t)round * 77u + (uint64_t)rank;
		recv_first = (int)(rnd() % 2);
		/* Named receives first, then wildcards for the rest: a message
		 * matches the earliest posted receive that fits, so the named
		 * ones are all served and the wildcards take what is left. */
		for (int s = 0; s < size; s++)
			for (int t = 0; t < TAGS; t++)
				for (int j = (int)(rnd() % (unsigned)(count[s][t] + 1)); j < count[s][t];
				     j++) {
					rsrc[nr] = s;
					rtag[nr++] = t;
				}
		named = nr;
		for (; nr < nm; nr++) {
			rsrc[nr] = MPI_ANY_SOURCE;
			rtag[nr] = MPI_ANY_TAG;
		}
		for (int i = 0; i < nm; i++) {
			struct msg *m = &mine[i];
			size_t sp = span(m->n, m->vec);

			rvec[i] = (int)(rnd() % 2);
			for (size_t x = 0; x < sp; x++)
				sb[i][x] = -7;
			for (size_t x = 0, k = 0; k < (size_t)m->n; x++)
				if (!m->vec || x % STRIDE < BLOCK)
					sb[i][x] = val(rank, m->seq, (int)k++);
			for (size_t x = 0; x < span(MAXN, 1); x++)
				rb[i][x] = -1;
		}
		MPI_Barrier(MPI_COMM_WORLD);
		for (int pass = 0; pass < 2; pass++) {
			if ((pass == 0) == (recv_first == 1)) {
				for (int i = 0; i < nm; i++) {
					int tag = rtag[i];

					rq[i] = MPI_REQUEST_NULL;
					if (probe && i >= named)
						continue; /* taken by probe below */
					if (rvec[i])
						CHECK_MPI(MPI_Irecv(rb[i], 1, rv, rsrc[i], tag,
								    MPI_COMM_WORLD, &rq[i]));
					else
						CHECK_MPI(MPI_Irecv(rb[i], MAXN, MPI_INT, rsrc[i], tag,
								    MPI_COMM_WORLD, &rq[i]));
				}
			} else {
				for (int i = 0; i < nm; i++) {
					struct msg *m = &mine[i];
					int k = 0;

					while (sizes[k] != m->n)
						k++;
					if (m->vec)
						CHECK_MPI(MPI_Isend(sb[i], 1, sv[k], m->to, m->tag,
								    MPI_COMM_WORLD, &rq[nm + i]));
					else
						CHECK_MPI(MPI_Isend(sb[i], m->n, MPI_INT, m->to, m->tag,
								    MPI_COMM_WORLD, &rq[nm + i]));
				}
			}
		}
		/* The wildcard share by probe: a claimed message is matched at
		 * its probe, after every receive posted above. */
		for (int i = named; probe && i < nm; i++) {
			MPI_Message msg;
			int flag = 0, rc;

			do
				rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg,
						 &st[i]);
			while (rc == MPI_SUCCESS && !flag);
			CHECK(rc == MPI_SUCCESS);
			if (rc != MPI_SUCCESS)
				break;
			if (i % 2 && rvec[i])
				CHECK_MPI(MPI_Mrecv(rb[i], 1, rv, &msg, &st[i]));
			else if (i % 2)
				CHECK_MPI(MPI_Mrecv(rb[i], MAXN, MPI_INT, &msg, &st[i]));
			else if (rvec[i])
				CHECK_MPI(MPI_Imrecv(rb[i], 1, rv, &msg, &rq[i]));
			else
				CHECK_MPI(MPI_Imrecv(rb[i], MAXN, MPI_INT, &msg, &rq[i]));
		}
		{
			MPI_Status done[2 * 24];

			CHECK_MPI(MPI_Waitall(2 * nm, rq, done));
			for (int i = 0; i < nm; i++)
				if (!(probe && i >= named && i % 2))
					st[i] = done[i];
		}
		for (int s = 0; s < 64; s++)
			for (int t = 0; t < TAGS; t++)
				last[s][t] = -1;
		/* In posting order: two receives that could take messages of one
		 * sender and tag took them in the order they were sent. */
		for (int i = 0; i < nm; i++) {
			int n, src = st[i].MPI_SOURCE, tag = st[i].MPI_TAG;

			MPI_Get_count(&st[i], MPI_INT, &n);
			if (src < 0 || src >= size || tag < 0 || tag >= TAGS) {
				bad++;
				continue;
			}
			if (n == 0) {
				empties++;
				continue;
			}
			bad += check_recv(rb[i], n, rvec[i], src, &last[src][tag]) != 0;
		}
		for (int s = 0; s < size; s++)
			for (int i = 0; i < nm; i++)
				if (plan[s * nm + i].to == rank && plan[s * nm + i].n == 0)
					empties--;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	CHECK(bad == 0);
	CHECK(empties == 0); /* every empty receive was an empty message */
	for (int i = 0; i < NSIZES; i++)
		MPI_Type_free(&sv[i]);
	MPI_Type_free(&rv);
	for (int i = 0; i < nm; i++) {
		free(sb[i]);
		free(rb[i]);
	}
	free(plan);
	free(rq);
	free(st);
	free(sb);
	free(rb);
	free(rsrc);
	free(rtag);
	free(rvec);
	return mt_finish("t_mix");
}
