/*
 * The demo's MPI program: a token goes once around the ranks (point-to-point),
 * then everyone agrees on a sum (a collective). Build it with mpicc and run
 * it with mpirun; it prints where it ran and what it computed.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, token = 0, sum = 0, len;
	char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &len);
	t0 = MPI_Wtime();
	if (size > 1) {
		if (rank == 0) {
			token = 1;
			MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token++;
			MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
		}
	}
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Get_library_version(lib, &len);
		printf("%s\n%d ranks on %s: token went round with value %d, sum of ranks %d, %.1f us\n",
		       lib, size, host, token, sum, (MPI_Wtime() - t0) * 1e6);
	}
	MPI_Finalize();
	return 0;
}
