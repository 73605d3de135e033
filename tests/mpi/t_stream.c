/*
 * A stream of large messages in windows, as bandwidth benchmarks send them:
 * the first half of the ranks and their partners in the second half (rank +
 * size / 2: on another host under across.sh) take turns sending windows of
 * MT_STREAM_WINDOW (64) messages of MT_STREAM_BYTES (1 MiB) each, every
 * message from and into a buffer of its own, and the receiver checks every
 * word. A window's requests arrive together while the receiver's progress
 * calls are long (the core serving large reads), which is where datagrams
 * were dropped: across.sh counts the hosts' dropped datagrams and the
 * provider's retransmissions. A sender starts a window once its receiver
 * has posted it (a message of 0 bytes), so that no request waits for a
 * receiver busy checking the last window, which would be retransmitted.
 */
#include "mt.h"

#include <stdint.h>

static uint64_t word(int window, int msg, size_t i)
{
	return (uint64_t)window << 56 | (uint64_t)msg << 40 | i;
}

int main(int argc, char **argv)
{
	const char *e = getenv("MT_STREAM_WINDOW");
	int window = e ? atoi(e) : 64, rounds, size;
	size_t bytes, words;
	uint64_t *buf;
	MPI_Request *rq;

	mt_init(&argc, &argv);
	e = getenv("MT_STREAM_ROUNDS");
	rounds = e ? atoi(e) : 4;
	e = getenv("MT_STREAM_BYTES");
	bytes = e ? (size_t)atol(e) : (size_t)1 << 20;
	words = bytes / sizeof(uint64_t);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	buf = malloc((size_t)window * words * sizeof(*buf));
	rq = malloc((size_t)window * sizeof(*rq));
	CHECK(buf && rq && window > 0 && words > 0);
	if (buf && rq && window > 0 && words > 0 && size >= 2 && mt_rank < size / 2 * 2) {
		int half = size / 2, lead = mt_rank < half;
		int peer = lead ? mt_rank + half : mt_rank - half;

		for (int w = 0; w < 2 * rounds; w++) {
			int sending = (w % 2 == 0) == lead;
			long bad = 0;

			if (sending) {
				for (int m = 0; m < window; m++)
					for (size_t i = 0; i < words; i++)
						buf[(size_t)m * words + i] = word(w, m, i);
				CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, window, MPI_COMM_WORLD,
						   MPI_STATUS_IGNORE));
			}
			for (int m = 0; m < window; m++) {
				uint64_t *b = buf + (size_t)m * words;

				if (sending) {
					CHECK_MPI(MPI_Isend(b, (int)bytes, MPI_BYTE, peer, m, MPI_COMM_WORLD,
							    &rq[m]));
				} else {
					memset(b, 0, bytes);
					CHECK_MPI(MPI_Irecv(b, (int)bytes, MPI_BYTE, peer, m, MPI_COMM_WORLD,
							    &rq[m]));
				}
			}
			if (!sending)
				CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, window, MPI_COMM_WORLD));
			CHECK_MPI(MPI_Waitall(window, rq, MPI_STATUSES_IGNORE));
			if (!sending) {
				for (int m = 0; m < window; m++)
					for (size_t i = 0; i < words; i++)
						bad += buf[(size_t)m * words + i] != word(w, m, i);
				CHECK(bad == 0);
				if (bad)
					fprintf(stderr, "rank %d: window %d: %ld words wrong\n", mt_rank, w, bad);
			}
		}
	}
	free(buf);
	free(rq);
	return mt_finish("t_stream");
}
