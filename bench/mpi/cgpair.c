/*
 * Instructions per 8-byte message, on each side, without the spin of a
 * waiting rank (which depends on timing, not on the code): rank 0 sends N
 * messages (MPI_Isend + MPI_Wait each) while rank 1 sleeps; then rank 1,
 * with all of them already delivered to its side, receives them (MPI_Irecv +
 * MPI_Wait each), which covers discovering each frame, matching, copying and
 * completing it. Only those two loops are measured: run under
 * valgrind --tool=callgrind --collect-atstart=no; bench/callgrind_pair.sh
 * does, and splits the counts by library. A warm-up round first fills the
 * pools and connections, so the measured round is the steady state.
 * With "blocking", the loops are MPI_Send and MPI_Recv instead. With
 * "posted", rank 1 posts its N receives first (measured), and once the
 * messages have arrived completes them with one MPI_Waitall (measured): the
 * expected path, as in osu_bw's window.
 * With "vectorK" (vector16, vector256, ...), the default loops send and
 * receive one MPI_Type_vector of K doubles, every other one (8K bytes in K
 * runs): what packing and unpacking add, as a halo's column does.
 * With "idle", rank 1 posts one receive and tests it N times while rank 0
 * sends nothing (measured): what a polling MPI_Test costs when nothing has
 * arrived, the loop of a rank that waits on a neighbour.
 * A fourth argument sets the default, blocking and posted loops' message
 * size in bytes (0 to 8; 8 by default): 0 shows what an empty message costs,
 * the osu_latency 0-byte row.
 * Without valgrind it still runs (the client requests are no-ops).
 * usage: cgpair [N [blocking|posted|idle|vectorK|default [BYTES]]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

static int blocking, posted, idle;
/* What the default and blocking loops send: 8 bytes, or a vector. */
static char msg8[8];
static void *msg = msg8;
static int msg_count = 8;
static MPI_Datatype msg_type = MPI_BYTE;

enum { MAXN = 1024 };

/* Receives posted before their messages arrive. Rank 0 waits a second
 * after the barrier so that rank 1 is out of it (a barrier may drive
 * point-to-point progress, which would complete receives unmeasured). */
static void posted_round(int rank, int n, int measured)
{
	static char bufs[MAXN][8];
	static MPI_Request rq[MAXN];

	if (rank == 1) {
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		for (int i = 0; i < n; i++)
			MPI_Irecv(bufs[i], msg_count, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &rq[i]);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		sleep(1);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		for (int i = 0; i < n; i++)
			MPI_Send(bufs[i], msg_count, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
	} else if (rank == 1) {
		sleep(3);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Tests that find nothing; rank 0 sends the message once rank 1 is done. */
static void idle_round(int rank, int n, int measured)
{
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		MPI_Request r;
		int flag = 0;

		MPI_Irecv(msg8, 8, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &r);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		for (int i = 0; i < n && !flag; i++)
			MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		if (flag)
			fprintf(stderr, "cgpair idle: the receive completed early\n");
		MPI_Send(msg8, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	} else if (rank == 0) {
		MPI_Recv(msg8, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(msg8, 8, MPI_BYTE, 1, 6, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void round_of(int rank, int n, int measured)
{
	if (idle) {
		idle_round(rank, n, measured);
		return;
	}
	if (posted) {
		posted_round(rank, n, measured);
		return;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		for (int i = 0; i < n; i++) {
			MPI_Request r;

			if (blocking) {
				MPI_Send(msg, msg_count, msg_type, 1, 5, MPI_COMM_WORLD);
				continue;
			}
			MPI_Isend(msg, msg_count, msg_type, 1, 5, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
	} else if (rank == 1) {
		/* Long enough for rank 0's sends even under valgrind. */
		sleep(2);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		for (int i = 0; i < n; i++) {
			MPI_Request r;

			if (blocking) {
				MPI_Recv(msg, msg_count, msg_type, 0, 5, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				continue;
			}
			MPI_Irecv(msg, msg_count, msg_type, 0, 5, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int rank, n = argc > 1 ? atoi(argv[1]) : 100;

	blocking = argc > 2 && !strcmp(argv[2], "blocking");
	posted = argc > 2 && !strcmp(argv[2], "posted");
	idle = argc > 2 && !strcmp(argv[2], "idle");
	if (n < 1 || n > MAXN)
		n = n < 1 ? 1 : MAXN;
	if (argc > 3) {
		msg_count = atoi(argv[3]);
		msg_count = msg_count < 0 ? 0 : msg_count > 8 ? 8 : msg_count;
	}

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc > 2 && !strncmp(argv[2], "vector", 6)) {
		int k = atoi(argv[2] + 6);

		k = k < 1 ? 16 : k;
		msg = calloc(2 * (size_t)k, sizeof(double));
		MPI_Type_vector(k, 1, 2, MPI_DOUBLE, &msg_type);
		MPI_Type_commit(&msg_type);
		msg_count = 1;
	}
	round_of(rank, n, 0);
	round_of(rank, n, 1);
	if (rank == 0)
		printf("cgpair %d messages of %d bytes%s\n", n, msg_type == MPI_BYTE ? msg_count : -1,
		       blocking ? " (blocking)" : posted ? " (posted)" : idle ? " (idle tests)" :
		       msg_type != MPI_BYTE ? " (vector)" : "");
	if (msg_type != MPI_BYTE) {
		MPI_Type_free(&msg_type);
		free(msg);
	}
	MPI_Finalize();
	return 0;
}
