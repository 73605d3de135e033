/*
 * The MPI layer's parameters, one table for the library (which reads them)
 * and for `mpirun --params` (which lists them with their defaults), so the
 * list a user sees is the list the code reads.
 */
#ifndef MBMPI_PARAMS_H
#define MBMPI_PARAMS_H

#define MBMPI_PARAMS(X)                                                                         \
	X("MATCHBOX_MPI_ENGINE", "auto",                                                        \
	  "point-to-point engine: tagged (the provider matches), host (libmpi matches over FI_MSG/FI_RMA), auto (tagged over matchbox, cxi, psm2, psm3, opx, unless MATCHBOX_MPI_HOST_NET_DOMAINS names several NICs)") \
	X("MATCHBOX_MPI_PROVIDER", "matchbox",                                                  \
	  "libfabric provider of the tagged engine: any tagged RDM provider, e.g. shm or tcp;ofi_rxm") \
	X("MATCHBOX_MPI_PROGRESS", "manual",                                                    \
	  "manual, or thread: the provider's automatic progress (FI_PROGRESS_AUTO)")           \
	X("MATCHBOX_MPI_VERBOSE", "0",                                                          \
	  "1: print the engine, providers and why once per job; 2: also each rank's frames and bytes per host-engine rail at the end") \
	X("MATCHBOX_MPI_HOST_PROVIDERS", "auto",                                                    \
	  "host engine: one provider for all peers, or node,net (e.g. shm,tcp;ofi_rxm; auto: MATCHBOX_MPI_PROVIDER)") \
	X("MATCHBOX_MPI_HOST_NET_DOMAINS", "auto",                                                  \
	  "host engine: the net provider's domains (NICs) to open it on, comma-separated, up to 4 (e.g. eth0,eth1 or mlx5_0,mlx5_1); large reads from other nodes are striped over them (auto: the first domain the provider offers)") \
	X("MATCHBOX_MPI_HOST_STRIPE", "auto",                                                       \
	  "host engine: reads of at least this many bytes are striped over every rail that reaches the peer (auto: 65536 between nodes with several NICs, never within a node; 0: never)") \
	X("MATCHBOX_MPI_HOST_EAGER", "8192",                                                    \
	  "host engine: largest message sent eagerly within a node")                            \
	X("MATCHBOX_MPI_HOST_EAGER_NET", "auto",                                                    \
	  "host engine: largest message sent eagerly to another node (auto: what the provider carries in one trip, with multi-receive buffers)") \
	X("MATCHBOX_MPI_HOST_PUSH_FRAMES", "2",                                                 \
	  "host engine: a contiguous message to another node of up to this many one-trip frames goes as that many frames back to back, with no rendezvous (0 or 1: never)") \
	X("MATCHBOX_MPI_HOST_FRAG", "1",                                                        \
	  "host engine: 1 sends large non-contiguous messages in fragments packed as they go, 0 packs them whole") \
	X("MATCHBOX_MPI_HOST_RXBUFS", "64",                                                     \
	  "host engine: receive buffers posted per rail (with multi-receive, their memory in 4 buffers)") \
	X("MATCHBOX_MPI_HOST_MULTI_RECV", "auto",                                                   \
	  "host engine: 1 uses FI_MULTI_RECV buffers where offered, 0 one frame per buffer (auto: on, except over shm)") \
	X("MATCHBOX_MPI_HOST_RDMA", "1",                                                        \
	  "host engine: 1 lets the receiver read rendezvous data with fi_read, 0 always clear-to-send") \
	X("MATCHBOX_MPI_HOST_MR_CACHE", "256",                                                  \
	  "host engine: registrations of send buffers kept for reuse per rail (0: one per send)") \
	X("MATCHBOX_MPI_MAX_MSG", "0",                                                          \
	  "largest single fabric message; bigger MPI messages go in chunks (0: the provider's max_msg_size)") \
	X("MATCHBOX_MPI_TRECV_NOW", "1",                                                        \
	  "tagged engine over matchbox: 1 completes a receive of a message already there inside the call, 0 through the CQ (to compare)") \
	X("MATCHBOX_MPI_TAGGED_SYNC_ACK", "0",                                                  \
	  "tagged engine over matchbox: 1 acknowledges a synchronous send with a message to a receive posted for it, as over other providers; 0 lets the provider complete the send once it is matched (FI_MATCH_COMPLETE)") \
	X("MATCHBOX_MPI_TAGGED_PUSH_FRAMES", "2",                                               \
	  "tagged engine over matchbox: a contiguous message to another node of up to this many of matchbox's one-trip frames (FI_MATCHBOX_NET_EAGER, 64 KiB) goes as that many pieces back to back, with no rendezvous (0 or 1: never)") \
	X("MATCHBOX_MPI_TAGGED_FRAG", "65536",                                                  \
	  "tagged engine: a non-contiguous message larger than this goes in pieces of this many bytes (a power of two), each packed and unpacked as it goes, 8 in flight (0: packed whole)") \
	X("MATCHBOX_MPI_TAGGED_WHOLE", "4194304",                                               \
	  "tagged engine: a contiguous message to a rank on the same node larger than this goes in pieces of 1 MiB, which a non-contiguous receive unpacks as they land, 4 in flight (0: whole)") \
	X("MATCHBOX_MPI_TAGGED_WHOLE_NET", "16777216",                                          \
	  "tagged engine: the same for a rank on another node (0: whole)") \
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
