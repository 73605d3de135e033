/* Provider-specific extensions of the matchbox libfabric provider.
 *
 * Statistics: fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_MATCHBOX_OPT_STATS,
 * &stats, &len) with len = sizeof(struct fi_matchbox_stats) copies the
 * endpoint's counters. Later issues add the communication-marker flags for
 * multi-rail scheduling here, in the bits named below. */
#ifndef FI_EXT_MATCHBOX_H
#define FI_EXT_MATCHBOX_H

#include <stdint.h>
#include <rdma/fabric.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Option names in FI_OPT_ENDPOINT, chosen far above libfabric's own. */
#define FI_MATCHBOX_OPT_BASE	0x6d620000
#define FI_MATCHBOX_OPT_STATS	(FI_MATCHBOX_OPT_BASE + 1)	/* struct fi_matchbox_stats */

struct fi_matchbox_stats {
	uint64_t shm_peers;		/* same-node peers this endpoint has opened */
	uint64_t eager_sent;		/* messages sent eagerly */
	uint64_t rdv_cma;		/* large messages pulled with CMA */
	uint64_t rdv_copy;		/* large messages through the two-copy pipeline */
	uint64_t unexpected;		/* messages that arrived before their receive */
	uint64_t backpressure;		/* times a full ring or buffer queued a send */
	uint64_t bad_frames;		/* frames rejected as malformed */
};

#ifdef __cplusplus
}
#endif

#endif
