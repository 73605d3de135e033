/*
 * The few helpers every MPI test program shares: a CHECK that reports the
 * rank, file and line of a failed expectation and keeps going, and a finish
 * that turns any failure on any rank into a non-zero exit of every rank.
 */
#ifndef MT_H
#define MT_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_fails, mt_checks, mt_rank;

#define CHECK(cond)                                                                       \
	do {                                                                              \
		mt_checks++;                                                              \
		if (!(cond)) {                                                            \
			mt_fails++;                                                       \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", mt_rank,    \
				__FILE__, __LINE__, #cond);                               \
		}                                                                         \
	} while (0)

#define CHECK_MPI(call) CHECK((call) == MPI_SUCCESS)

static inline void mt_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/* MT_LEAN=1 (set by the across-hosts checks with 8 ranks on this machine's
 * 2 cores, where every collective takes tens of milliseconds whichever MPI
 * runs it): loops that repeat one path many times (the type x operation
 * matrix, 64 communicator duplicates) run a few rounds. The on-node runs
 * keep the full loops; the lean ones keep every distinct path. */
static inline int mt_lean(void)
{
	const char *s = getenv("MT_LEAN");

	return s && s[0] == '1';
}

/* Every rank learns whether any rank failed; rank 0 prints the summary. */
static inline int mt_finish(const char *name)
{
	int bad = mt_fails, anybad = 0, checks = mt_checks, total = 0, size;

	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (mt_rank == 0)
		printf("%s: %d ranks, %d checks, %d failed\n", name, size, total, anybad);
	MPI_Finalize();
	return anybad ? 1 : 0;
}

/* 2x2 integer matrices, whose product is associative but not commutative:
 * a user op whose result shows the order in which ranks were combined. */
static inline void mt_matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *a = in, *b = inout;

	(void)dt;
	for (int k = 0; k < *len; k++, a += 4, b += 4) {
		int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
			    a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
		memcpy(b, c, sizeof(c));
	}
}

static inline void mt_mat_of(int r, int *m)
{
	m[0] = 1;
	m[1] = r % 3;
	m[2] = (r + 1) % 2;
	m[3] = 1;
}

#endif
