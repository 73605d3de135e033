/*
 * MPI_THREAD_MULTIPLE: four threads per rank at once, each with its own
 * communicator for collectives and probes, all of them also sending on
 * MPI_COMM_WORLD with their own tags: a ring of non-blocking exchanges,
 * blocking sends and receives, Probe then Recv, Allreduce and Barrier,
 * checked value by value. The main thread is the only one MPI_Is_thread_main
 * names.
 */
#include "mt.h"

#include <pthread.h>

#define NT 4
#define ITERS 200

static int rank, size;
static MPI_Comm comms[NT];
static int fails[NT];

#define TCHECK(t, cond)                                                                         \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fails[t]++;                                                             \
			fprintf(stderr, "rank %d thread %d: %s:%d: check failed: %s\n", rank, t,  \
				__FILE__, __LINE__, #cond);                                     \
		}                                                                               \
	} while (0)

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, right = (rank + 1) % size, left = (rank - 1 + size) % size;
	MPI_Comm c = comms[t];

	{
		int main_thread = 1;

		MPI_Is_thread_main(&main_thread);
		TCHECK(t, main_thread == 0);
	}
	for (int i = 0; i < ITERS; i++) {
		int out[2] = {rank, i * NT + t}, in[2] = {-1, -1}, sum = 0, x = t + i;
		MPI_Request rq[2];
		MPI_Status st;

		/* World, the thread's own tag: the neighbours' threads of the same
		 * number answer. */
		MPI_Irecv(in, 2, MPI_INT, left, t, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(out, 2, MPI_INT, right, t, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		TCHECK(t, in[0] == left && in[1] == i * NT + t);

		/* Own communicator: probe for anyone, then receive what it saw. */
		MPI_Send(out, 2, MPI_INT, right, 7, c);
		MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
		TCHECK(t, st.MPI_SOURCE == left && st.MPI_TAG == 7);
		MPI_Recv(in, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, c, MPI_STATUS_IGNORE);
		TCHECK(t, in[0] == left && in[1] == i * NT + t);

		if (i % 20 == 0) {
			MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
			TCHECK(t, sum == size * x);
			MPI_Barrier(c);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NT];
	int provided = -1, flag = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mt_rank = rank;
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(provided == MPI_THREAD_MULTIPLE);
	MPI_Query_thread(&provided);
	CHECK(provided == MPI_THREAD_MULTIPLE);
	MPI_Is_thread_main(&flag);
	CHECK(flag == 1);
	for (int t = 0; t < NT; t++)
		MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < NT; t++) {
		pthread_join(th[t], NULL);
		mt_checks += 4 * ITERS;
		mt_fails += fails[t];
	}
	for (int t = 0; t < NT; t++)
		MPI_Comm_free(&comms[t]);
	return mt_finish("t_thread");
}
