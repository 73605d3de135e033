/*
 * Bad arguments under MPI_ERRORS_RETURN: each call returns the right error
 * class and changes nothing (buffers untouched, no message sent or consumed,
 * nothing posted), and communication works normally afterwards. A truncated
 * receive reports MPI_ERR_TRUNCATE, writes nothing past the buffer, and the
 * message is consumed.
 */
#include "mt.h"

#include <stdbool.h>

int main(int argc, char **argv)
{
	int size, buf[8], guard[16], flag, cls;
	MPI_Datatype vec;
	MPI_Request rq = MPI_REQUEST_NULL;
	MPI_Status st;
	MPI_Comm dup;

	mt_init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int i = 0; i < 8; i++)
		buf[i] = i;

	CHECK(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
	CHECK(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD) == MPI_ERR_RANK);
	CHECK(MPI_Recv(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st) == MPI_ERR_RANK);
	CHECK(MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
	CHECK(MPI_Isend(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq) == MPI_ERR_COUNT);
	CHECK(rq == MPI_REQUEST_NULL);
	CHECK(MPI_Irecv(buf, -3, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq) == MPI_ERR_COUNT);
	CHECK(rq == MPI_REQUEST_NULL);
	CHECK(MPI_Send(buf, 1, MPI_INT, 0, -2, MPI_COMM_WORLD) == MPI_ERR_TAG);
	CHECK(MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD) == MPI_ERR_TAG);
	CHECK(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
	CHECK(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
	/* MPI_COMM_NULL goes to the world handler, which returns. */
	CHECK(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL) == MPI_ERR_COMM);
	CHECK(MPI_Barrier(MPI_COMM_NULL) == MPI_ERR_COMM);
	CHECK(MPI_Comm_dup(MPI_COMM_NULL, &dup) == MPI_ERR_COMM);
	/* An uncommitted datatype. */
	MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
	CHECK(MPI_Send(buf, 1, vec, 0, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
	CHECK(MPI_Recv(buf, 1, vec, 0, 0, MPI_COMM_WORLD, &st) == MPI_ERR_TYPE);
	CHECK(MPI_Bcast(buf, 1, vec, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
	MPI_Type_free(&vec);
	CHECK(MPI_Type_free(&vec) == MPI_ERR_TYPE);
	{
		MPI_Datatype t = MPI_INT;
		CHECK(MPI_Type_free(&t) == MPI_ERR_TYPE); /* predefined */
	}
	CHECK(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD) == MPI_ERR_ROOT);
	CHECK(MPI_Reduce(buf, guard, 1, MPI_INT, MPI_MAX, -1, MPI_COMM_WORLD) == MPI_ERR_ROOT);
	CHECK(MPI_Allreduce(buf, guard, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD) == MPI_ERR_OP);
	CHECK(MPI_Allreduce(buf, guard, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD) == MPI_ERR_OP);
	CHECK(MPI_Allreduce(buf, guard, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD) == MPI_ERR_OP);
	CHECK(MPI_Allreduce(buf, guard, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_ERR_OP);
	CHECK(MPI_Wait(NULL, &st) == MPI_ERR_REQUEST);
	{
		MPI_Request r = MPI_REQUEST_NULL;
		CHECK(MPI_Start(&r) == MPI_ERR_REQUEST);
		CHECK(MPI_Request_free(&r) == MPI_ERR_REQUEST);
	}
	CHECK(MPI_Error_class(MPI_ERR_LASTCODE + 5, &cls) != MPI_SUCCESS);
	for (int i = 0; i < 8; i++)
		CHECK(buf[i] == i);

	/* Nothing was sent by the failed calls: no message is waiting. */
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag);
	MPI_Barrier(MPI_COMM_WORLD);

	/* Truncation: 8 ints into room for 3; the guard after it is untouched.
	 * tcp;ofi_rxm 1.17 cannot do this: its tcp connection fails on a receive
	 * buffer that is too small ("dynamically provided rbuf is too small") and
	 * every later message on it is lost, so that provider skips this part. */
	const char *prov = getenv("MATCHBOX_MPI_PROVIDER");
	bool rxm = prov && strstr(prov, "rxm");
	if (rxm && mt_rank == 0)
		printf("t_errors: truncation part skipped: tcp;ofi_rxm 1.17 loses its connection on truncation\n");
	if (size >= 2 && mt_rank < 2 && !rxm) {
		int peer = 1 - mt_rank, cnt;
		if (mt_rank == 0) {
			CHECK_MPI(MPI_Send(buf, 8, MPI_INT, peer, 5, MPI_COMM_WORLD));
		} else {
			for (int i = 0; i < 16; i++)
				guard[i] = -1;
			CHECK(MPI_Recv(guard, 3, MPI_INT, peer, 5, MPI_COMM_WORLD, &st) == MPI_ERR_TRUNCATE);
			/* What lands in the buffer is undefined by MPI; past it, nothing. */
			for (int i = 3; i < 16; i++)
				CHECK(guard[i] == -1);
			MPI_Get_count(&st, MPI_INT, &cnt);
			CHECK(cnt <= 3);
			/* Non-blocking: the error shows in Wait. */
			MPI_Irecv(guard, 2, MPI_INT, peer, 6, MPI_COMM_WORLD, &rq);
			CHECK(MPI_Wait(&rq, &st) == MPI_ERR_TRUNCATE);
			/* In Waitall it is MPI_ERR_IN_STATUS with the class in the status. */
			MPI_Irecv(guard, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &rq);
			{
				MPI_Status sts[1];
				CHECK(MPI_Waitall(1, &rq, sts) == MPI_ERR_IN_STATUS);
				CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE);
			}
		}
		if (mt_rank == 0) {
			MPI_Send(buf, 8, MPI_INT, peer, 6, MPI_COMM_WORLD);
			MPI_Send(buf, 8, MPI_INT, peer, 7, MPI_COMM_WORLD);
		}
		/* The truncated messages were consumed: the next one is intact. */
		if (mt_rank == 0) {
			MPI_Send(buf, 8, MPI_INT, peer, 8, MPI_COMM_WORLD);
		} else {
			int in[8] = {0};
			CHECK_MPI(MPI_Recv(in, 8, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
			CHECK(st.MPI_TAG == 8 && in[7] == 7);
		}
	}
	/* Communication still works for everyone. */
	{
		int one = 1, sum = 0;
		CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK(sum == size);
	}
	return mt_finish("t_errors");
}
