/*
 * Instructions to pack and then unpack 1 MiB of a strided field: a vector
 * of blocks of B doubles, two doubles apart, once through MPI_Pack and once
 * through MPI_Unpack (after one warm-up of each). Only those two calls are
 * measured: run under valgrind --tool=callgrind --collect-atstart=no;
 * bench/callgrind_pack.sh does, with our library and with Open MPI.
 * usage: cgpack [B]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

int main(int argc, char **argv)
{
	int bl = argc > 1 ? atoi(argv[1]) : 1, blocks, pos = 0, size;
	MPI_Datatype vec;
	double *field;
	char *packed;

	bl = bl < 1 ? 1 : bl;
	blocks = (1 << 20) / (8 * bl);
	MPI_Init(&argc, &argv);
	MPI_Type_vector(blocks, bl, bl + 2, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	field = calloc((size_t)blocks * (size_t)(bl + 2), sizeof(double));
	packed = malloc(1 << 20);
	MPI_Pack_size(1, vec, MPI_COMM_WORLD, &size);
	for (int measured = 0; measured < 2; measured++) {
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
		pos = 0;
		MPI_Pack(field, 1, vec, packed, size, &pos, MPI_COMM_WORLD);
		pos = 0;
		MPI_Unpack(packed, size, &pos, field, 1, vec, MPI_COMM_WORLD);
		if (measured)
			CALLGRIND_TOGGLE_COLLECT;
	}
	printf("cgpack: 1 MiB in blocks of %d doubles\n", bl);
	MPI_Type_free(&vec);
	free(field);
	free(packed);
	MPI_Finalize();
	return 0;
}
