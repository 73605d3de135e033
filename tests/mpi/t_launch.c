/*
 * An MPI program that misbehaves on request, for the launcher's contract
 * (mpi/tests/mpirun_check.sh drives it the way it drives pmix_ranks):
 *   ok | exit CODE RANK | kill RANK | nofinalize RANK | abort CODE | hang | sleep
 * ("sleep": every rank sleeps for ever without calling MPI, as one that
 * computes would, for the check that a killed mpirun's ranks end.)
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ok";
	int rank, size, arg = argc > 2 ? atoi(argv[2]) : 0, who = argc > 3 ? atoi(argv[3]) : 0;
	int one = 1, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (!strcmp(mode, "exit") && rank == who) {
		fflush(stdout);
		_exit(arg);
	}
	if (!strcmp(mode, "kill") && rank == arg)
		raise(SIGKILL);
	if (!strcmp(mode, "nofinalize") && rank == arg)
		return 0;
	if (!strcmp(mode, "abort") && rank == size - 1)
		MPI_Abort(MPI_COMM_WORLD, arg);
	if (!strcmp(mode, "hang"))
		for (;;)
			MPI_Barrier(MPI_COMM_WORLD);
	if (!strcmp(mode, "sleep"))
		for (;;)
			sleep(1);
	/* The others wait in a collective that can never finish, as a real job would. */
	if (strcmp(mode, "ok")) {
		if (!strcmp(mode, "exit") || !strcmp(mode, "kill") || !strcmp(mode, "nofinalize") ||
		    !strcmp(mode, "abort"))
			for (;;)
				MPI_Barrier(MPI_COMM_WORLD);
	}
	printf("rank %d of %d: sum %d ok\n", rank, size, sum);
	MPI_Finalize();
	return sum == size ? 0 : 1;
}
