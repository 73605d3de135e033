/*
 * The MPI layer's parameters, one table for the library (which reads them)
 * and for `mpirun --params` (which lists them with their defaults), so the
 * list a user sees is the list the code reads.
 */
#ifndef MBMPI_PARAMS_H
#define MBMPI_PARAMS_H

#define MBMPI_PARAMS(X)                                                                         \
	X("MATCHBOX_MPI_PROVIDER", "matchbox",                                                  \
	  "libfabric provider of the tagged engine: any tagged RDM provider, e.g. shm or tcp;ofi_rxm") \
	X("MATCHBOX_MPI_MAX_MSG", "0",                                                          \
	  "largest single fabric message; bigger MPI messages go in chunks (0: the provider's max_msg_size)") \
	X("MATCHBOX_MPI_TAGGED_FRAG", "65536",                                                  \
	  "tagged engine: a non-contiguous message larger than this goes in pieces of this many bytes (a power of two), each packed and unpacked as it goes, 8 in flight (0: packed whole)") \
	X("MATCHBOX_MPI_YIELD", "auto",                                                         \
	  "give the core away in blocking waits: 1, 0, or auto (when ranks on the node outnumber its cores)") \
	X("MATCHBOX_MPI_SPIN", "64",                                                            \
	  "idle polls of a blocking wait before it starts yielding")                            \
	X("MATCHBOX_MPI_COLL_SHM", "16384",                                                     \
	  "collectives among ranks of one node go through a shared segment when each rank's part fits this many bytes (0: always point to point)") \
	X("MATCHBOX_MPI_COLL_HIER", "1",                                                        \
	  "barrier, bcast (below 128 KiB) and allreduce (commutative ops, up to MATCHBOX_MPI_COLL_SHM bytes) over several nodes: 1 within each node by shared memory and between nodes among one leader each, 0 point to point among all ranks") \
	X("MATCHBOX_MPI_BARRIER", "auto", "barrier algorithm: dissemination")                 \
	X("MATCHBOX_MPI_BCAST", "auto",                                                         \
	  "bcast algorithm: binomial, scatter_allgather (auto: binomial below 128 KiB or 4 ranks)") \
	X("MATCHBOX_MPI_ALLREDUCE", "auto",                                                     \
	  "allreduce algorithm: recursive_doubling, rabenseifner (auto: rabenseifner from 16 KiB, commutative ops)") \
	X("MATCHBOX_MPI_ALLGATHER", "auto",                                                     \
	  "allgather algorithm: recursive_doubling, bruck, ring (auto: ring from 64 KiB in all)") \
	X("MATCHBOX_MPI_ALLTOALL", "auto",                                                      \
	  "alltoall algorithm: bruck, pairwise, linear (auto: bruck up to 256 bytes a block from 8 ranks, else linear up to 8 KiB, else pairwise)") \
	X("MATCHBOX_MPI_REDUCE_SCATTER", "auto",                                                \
	  "reduce_scatter algorithm: pairwise, reduce_scatterv (auto: pairwise for commutative ops)") \
	X("MATCHBOX_MPI_WIN_SHARED", "1",                                                       \
	  "MPI_Win_allocate on ranks of one node: 1 maps one shared segment and accesses it directly, 0 goes through the provider's RMA")

#endif
