/*
 * A rank that computes for seconds without calling MPI must not be taken
 * for a dead one. The first half of the ranks send their partner in the
 * second half (rank + size / 2: on another host under across.sh) a small
 * and a 1 MiB message, then wait in MPI_Waitall, where the library
 * retransmits and probes; the partners make no MPI call for
 * MT_QUIET_S seconds (default 8) before they receive and answer. With the
 * net wire's old default (10 attempts, about 5 s) the senders declared
 * their partners unreachable and the job failed.
 */
#include "mt.h"

#include <unistd.h>

enum { BIG = 1 << 20 };

int main(int argc, char **argv)
{
	const char *q = getenv("MT_QUIET_S");
	unsigned quiet = q ? (unsigned)atoi(q) : 8;
	int size, rank, half, small = 0, ok = 1;
	char *big = malloc(BIG);
	MPI_Request rq[2];

	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank = mt_rank;
	half = size / 2;
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank < half) {
		int peer = rank + half;

		small = 1000 + rank;
		for (int i = 0; i < BIG; i++)
			big[i] = (char)(i * 7 + rank);
		CHECK_MPI(MPI_Isend(&small, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[0]));
		CHECK_MPI(MPI_Isend(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &rq[1]));
		CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		CHECK_MPI(MPI_Recv(&small, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(small == 2000 + rank);
	} else if (rank < 2 * half) {
		int peer = rank - half;

		sleep(quiet); /* computing: no MPI call at all */
		CHECK_MPI(MPI_Recv(&small, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(small == 1000 + peer);
		CHECK_MPI(MPI_Recv(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < BIG; i++)
			ok &= big[i] == (char)(i * 7 + peer);
		CHECK(ok);
		small = 2000 + peer;
		CHECK_MPI(MPI_Send(&small, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
	}
	free(big);
	return mt_finish("t_quiet");
}
