/* Entry point of the matchbox provider: its fi_provider, its parameters
 * (every tunable is declared here once, with its default and help text, so
 * `fi_info -e` and doc/fi_matchbox.7.md can list them) and the stubs that
 * fill unimplemented ops-table slots. */
#include "mbx.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct mbx_params mbx_param = {
	.eager_limit = 65536,
	.inject_size = 4096,
	.ring_size = 256 * 1024,
	.copy_min = 64 * 1024,
	.chunk_size = 128 * 1024,
	.nchunks = 8,
	.shm_peers = 256,
	.shm_prefault = 16,
	.tx_size = 1024,
	.rx_size = 1024,
	.unexp_max = 256 * 1024 * 1024,
	.nt_min = 8 * 1024 * 1024,
	.nt_rate = 12000,
	.spin_us = 50,
	.auto_nap_us = 100,
	.large_proto = MBX_LARGE_AUTO,
	.net = true,
	.conn_mode = MBX_CONN_ADAPTIVE,
	.conn_threshold = 0,
	.conn_idle_ms = 0,
	.srq_k = 8,
	.srq_b = 32,
	.net_credits = 32,
	.conn_ring = 256 * 1024,
	.conn_rings = 16,
	.conn_ring_lone = MBX_CONN_RING_LONE_AUTO,
	.net_frame = 65536,
	.net_eager = 65536,
	.net_rto_ms = 20,
	/* About 10 minutes (timeouts double up to 1 s): a rank that computes
	 * or writes a checkpoint without calling the library acknowledges
	 * nothing, and its peers must not take it for a dead one (at 10
	 * attempts, 5 s, a 10-second compute phase failed the job). */
	.net_tries = 600,
	.net_rma = true,
	.net_small_dgram = true,
	.net_rma_chunk = 0, /* chosen per core (mbx_net.c) */
	.net_rma_alone = MBX_RMA_ALONE_AUTO,
	.net_rts_head = MBX_RTS_HEAD_AUTO,
	.net_rma_core_max = SIZE_MAX,
	.mr_cache_max_count = 1024,
	.mr_cache_max_size = (size_t)1 << 30,
	.resolve_ms = 5000,
	.rma_cma = MBX_RMA_CMA_AUTO,
};

static void get_size(const char *name, size_t *v, size_t lo, size_t hi);

static void get_str(const char *name, char *dst, size_t len)
{
	char *s = NULL;

	if (fi_param_get_str(&mbx_prov, name, &s) == FI_SUCCESS && s)
		snprintf(dst, len, "%s", s);
}

static void net_params(void)
{
	static const char *const modes[] = { "static", "ondemand", "adaptive", "partial" };
	/* In the order of enum mbx_rail_policy. */
	static const char *const policies[] = { "stripe", "round_robin", "binding" };
	char mode[16] = "";
	int v, i;

	fi_param_define(&mbx_prov, "net", FI_PARAM_BOOL,
			"Reach endpoints on other hosts through the net wire (default: yes)");
	fi_param_define(&mbx_prov, "net_iface", FI_PARAM_STRING,
			"Network interface of the net wire (default: the first IPv4 interface that is up and not loopback)");
	fi_param_define(&mbx_prov, "net_rails", FI_PARAM_STRING,
			"Comma-separated extra network interfaces (at most 3) over which large messages from other hosts are also read; frames stay on net_iface's (default: none)");
	fi_param_define(&mbx_prov, "net_rail_prov", FI_PARAM_STRING,
			"Core provider of the extra rails (default: verbs;ofi_rxm where it matches, else tcp;ofi_rxm)");
	fi_param_define(&mbx_prov, "rail_policy", FI_PARAM_STRING,
			"How a large message's reads use the rails: stripe (its pieces over every rail, each to the one with the most room), round_robin (each message whole on the next rail), binding (each peer on one rail) (default: stripe)");
	fi_param_define(&mbx_prov, "net_msg_prov", FI_PARAM_STRING,
			"Core provider of the connected channel (default: verbs if it serves unregistered buffers, else tcp)");
	fi_param_define(&mbx_prov, "net_dgram_prov", FI_PARAM_STRING,
			"Core provider of the datagram channel (default: verbs if it serves unregistered buffers, else udp)");
	fi_param_define(&mbx_prov, "conn_mode", FI_PARAM_STRING,
			"Connection management: static (all pairs at start), ondemand (at the first message), adaptive (datagrams, a connection after conn_threshold messages), partial (peers at AV distance 2^k at start, the rest adaptive) (default: adaptive)");
	fi_param_define(&mbx_prov, "conn_threshold", FI_PARAM_SIZE_T,
			"Messages to one peer on the datagram channel before adaptive mode connects it (default: 0, meaning 16 where a connection carries small messages, as over verbs or with net_small_dgram off, and never where small messages go by datagram anyway)");
	fi_param_define(&mbx_prov, "conn_max", FI_PARAM_SIZE_T,
			"Connections adaptive and partial modes make or accept because a peer sent conn_threshold messages; busy peers past it stay on datagrams. Connections a large frame needs, and partial mode's neighbours, are not counted (default: 0, meaning 2*ceil(log2(job size)), at least 8)");
	fi_param_define(&mbx_prov, "conn_idle_ms", FI_PARAM_SIZE_T,
			"Close connections idle this long, rebuilt on demand; 0 keeps them (default: %zu)",
			mbx_param.conn_idle_ms);
	fi_param_define(&mbx_prov, "srq_k", FI_PARAM_SIZE_T,
			"Shared receive queue: k in x = log2(n)*k + b buffers for n connections (default: %zu)",
			mbx_param.srq_k);
	fi_param_define(&mbx_prov, "srq_b", FI_PARAM_SIZE_T,
			"Shared receive queue: b in x = log2(n)*k + b (default: %zu)", mbx_param.srq_b);
	fi_param_define(&mbx_prov, "conn_ring", FI_PARAM_SIZE_T,
			"Bytes of the ring a high-priority connection to another host receives frames in by RDMA write, a power of 2; 0: none, frames by send only (default: %zu)",
			mbx_param.conn_ring);
	fi_param_define(&mbx_prov, "conn_rings", FI_PARAM_SIZE_T,
			"Connections per endpoint that get a ring, the first ones up (default: %zu)",
			mbx_param.conn_rings);
	fi_param_define(&mbx_prov, "conn_ring_lone", FI_PARAM_SIZE_T,
			"Largest frame written into a ring when none of its sender's frames waits there untaken (a ping-pong); larger lone frames go by send (default: chosen per connection: any over a core that is not tcp, 4608 where the route to the peer acknowledges TCP data at once, else 0)");
	fi_param_define(&mbx_prov, "net_credits", FI_PARAM_SIZE_T,
			"Frames a sender may have unconsumed on one connection (default: %zu)",
			mbx_param.net_credits);
	fi_param_define(&mbx_prov, "net_frame", FI_PARAM_SIZE_T,
			"Largest data per net frame: rendezvous chunk and low-priority receive buffer size (default: %zu)",
			mbx_param.net_frame);
	fi_param_define(&mbx_prov, "net_eager", FI_PARAM_SIZE_T,
			"Largest message sent eagerly to another host; sizes the high-priority receive buffers (default: %zu)",
			mbx_param.net_eager);
	fi_param_define(&mbx_prov, "net_rto_ms", FI_PARAM_SIZE_T,
			"First retransmission timeout of the datagram channel, doubled per attempt (default: %zu)",
			mbx_param.net_rto_ms);
	fi_param_define(&mbx_prov, "net_rma", FI_PARAM_BOOL,
			"Large messages to other hosts pulled with fi_read where the core can (default: yes)");
	fi_param_define(&mbx_prov, "net_small_dgram", FI_PARAM_BOOL,
			"Frames that fit a datagram go by datagram to a peer with a connection too, once nothing on the connection waits for its matcher; not over verbs (default: yes)");
	fi_param_define(&mbx_prov, "net_rma_chunk", FI_PARAM_SIZE_T,
			"Bytes per fi_read of a large message or piece of an RMA operation to another host; up to 8 times this are in flight per connection (default 0: 1 MiB over tcp unless its congestion control is bbr, else 128 KiB)");
	fi_param_define(&mbx_prov, "net_rma_alone", FI_PARAM_SIZE_T,
			"A large message from another host read while no other from that peer is: what is left of it goes in one fi_read once it is no more than this many bytes; 0: always pieces of net_rma_chunk (default: 16 MiB over tcp unless its congestion control is bbr, else 256 KiB)");
	fi_param_define(&mbx_prov, "net_rts_head", FI_PARAM_SIZE_T,
			"A large message to another host offered for fi_read carries up to this many of its first bytes in its request, at most an eager frame's worth and never more than is left to read after them; the receiver reads the rest; 0: the request carries none (default: none over tcp, 65536 over other cores)");
	fi_param_define(&mbx_prov, "net_rma_core_max", FI_PARAM_SIZE_T,
			"Largest fi_write/fi_read to another host that goes by the core provider's own RMA once the target has offered its key; larger ones, and all with this 0, go in frames through the target's progress (default: no limit)");
	fi_param_define(&mbx_prov, "mr_cache_max_count", FI_PARAM_SIZE_T,
			"Registrations of large sends' data (for the peer's fi_read) kept for reuse per endpoint, watched by a userfaultfd monitor; 0 turns the cache off (default: %zu)",
			mbx_param.mr_cache_max_count);
	fi_param_define(&mbx_prov, "mr_cache_max_size", FI_PARAM_SIZE_T,
			"Bytes of memory the registration cache keeps registered per endpoint (default: %zu)",
			mbx_param.mr_cache_max_size);
	fi_param_define(&mbx_prov, "auto_nap_us", FI_PARAM_SIZE_T,
			"With FI_PROGRESS_AUTO, microseconds the progress thread waits between polls when it cannot sleep on a doorbell (several endpoints, or net peers) (default: %zu)",
			mbx_param.auto_nap_us);
	fi_param_define(&mbx_prov, "net_tries", FI_PARAM_SIZE_T,
			"Attempts before a silent peer is declared lost; timeouts double up to 1 s, so the default is about 10 minutes (default: %zu)",
			mbx_param.net_tries);
	if (fi_param_get_bool(&mbx_prov, "net", &v) == FI_SUCCESS)
		mbx_param.net = v != 0;
	if (fi_param_get_bool(&mbx_prov, "net_rma", &v) == FI_SUCCESS)
		mbx_param.net_rma = v != 0;
	if (fi_param_get_bool(&mbx_prov, "net_small_dgram", &v) == FI_SUCCESS)
		mbx_param.net_small_dgram = v != 0;
	get_str("net_iface", mbx_param.net_iface, sizeof(mbx_param.net_iface));
	get_str("net_msg_prov", mbx_param.net_msg_prov, sizeof(mbx_param.net_msg_prov));
	get_str("net_rails", mbx_param.net_rails, sizeof(mbx_param.net_rails));
	get_str("net_rail_prov", mbx_param.net_rail_prov, sizeof(mbx_param.net_rail_prov));
	mode[0] = 0;
	get_str("rail_policy", mode, sizeof(mode));
	if (mode[0]) {
		for (i = 0; i < 3 && strcmp(mode, policies[i]); i++)
			;
		if (i < 3)
			mbx_param.rail_policy = i;
		else
			MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_RAIL_POLICY=%s unknown; using stripe\n", mode);
	}
	mode[0] = 0;
	get_str("net_dgram_prov", mbx_param.net_dgram_prov, sizeof(mbx_param.net_dgram_prov));
	get_str("conn_mode", mode, sizeof(mode));
	if (mode[0]) {
		for (i = 0; i < 4 && strcmp(mode, modes[i]); i++)
			;
		if (i < 4)
			mbx_param.conn_mode = (enum mbx_conn_mode)i;
		else
			MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_CONN_MODE=%s unknown; using adaptive\n", mode);
	}
	get_size("auto_nap_us", &mbx_param.auto_nap_us, 1, 1000000);
	get_size("conn_threshold", &mbx_param.conn_threshold, 0, 1 << 30);
	get_size("conn_idle_ms", &mbx_param.conn_idle_ms, 0, 1 << 30);
	get_size("conn_max", &mbx_param.conn_max, 0, 1 << 30);
	get_size("srq_k", &mbx_param.srq_k, 0, 1024);
	get_size("srq_b", &mbx_param.srq_b, 1, 1 << 16);
	get_size("net_credits", &mbx_param.net_credits, 1, 1024);
	get_size("conn_ring", &mbx_param.conn_ring, 0, (size_t)1 << 26);
	get_size("conn_rings", &mbx_param.conn_rings, 0, 1 << 20);
	get_size("conn_ring_lone", &mbx_param.conn_ring_lone, 0, (size_t)1 << 26);
	/* A power of 2, and room for a few of the largest eager frames. */
	if (mbx_param.conn_ring) {
		size_t r = 65536;

		while (r < mbx_param.conn_ring)
			r *= 2;
		mbx_param.conn_ring = r;
	}
	get_size("net_frame", &mbx_param.net_frame, 1024, 1 << 20);
	get_size("net_eager", &mbx_param.net_eager, 256, 1 << 20);
	get_size("net_rto_ms", &mbx_param.net_rto_ms, 1, 10000);
	get_size("net_tries", &mbx_param.net_tries, 1, 1000000);
	get_size("net_rma_chunk", &mbx_param.net_rma_chunk, 0, (size_t)1 << 30);
	if (mbx_param.net_rma_chunk && mbx_param.net_rma_chunk < 4096) {
		MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_NET_RMA_CHUNK=%zu below 4096, choosing by the core\n",
			 mbx_param.net_rma_chunk);
		mbx_param.net_rma_chunk = 0;
	}
	get_size("net_rma_alone", &mbx_param.net_rma_alone, 0, (size_t)1 << 30);
	get_size("net_rts_head", &mbx_param.net_rts_head, 0, 1 << 20);
	get_size("net_rma_core_max", &mbx_param.net_rma_core_max, 0, (size_t)1 << 40);
	get_size("mr_cache_max_count", &mbx_param.mr_cache_max_count, 0, (size_t)1 << 24);
	get_size("mr_cache_max_size", &mbx_param.mr_cache_max_size, 4096, SIZE_MAX);
	/* A net peer's staging ring (private memory, touched only as frames
	 * pass, and given back when empty) holds two of the largest frames. */
	mbx_param.net_ring_size = mbx_param.ring_size;
	while (mbx_param.net_frame + 4096 > mbu_ring_max_frame(mbx_param.net_ring_size) / 2)
		mbx_param.net_ring_size *= 2;
	/* A message too large for a DATA frame is never sent eagerly. Smaller
	 * eager frames make smaller high-priority buffers, at the price of a
	 * rendezvous for the sizes between (a round trip more: 64 KiB took 62
	 * us one way by rendezvous, 30 eager, across the namespace bed). */
	if (mbx_param.net_eager > mbx_param.net_frame)
		mbx_param.net_eager = mbx_param.net_frame;
}

static void mbx_cleanup(void)
{
}

struct fi_provider mbx_prov = {
	.name = MBX_PROV_NAME,
	.version = MBX_PROV_VERSION,
	.fi_version = MBX_API_VERSION,
	.getinfo = mbx_getinfo,
	.fabric = mbx_fabric_open,
	.cleanup = mbx_cleanup,
};

static bool is_pow2(size_t v)
{
	return v && !(v & (v - 1));
}

static void get_size(const char *name, size_t *v, size_t lo, size_t hi)
{
	size_t x;

	if (fi_param_get_size_t(&mbx_prov, name, &x) == FI_SUCCESS) {
		if ((x < lo || x > hi) && *v == (size_t)-1)
			MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_%s=%zu out of range [%zu, %zu], keeping "
				 "the default\n", name, x, lo, hi);
		else if (x < lo || x > hi)
			MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_%s=%zu out of range [%zu, %zu], keeping %zu\n",
				 name, x, lo, hi, *v);
		else
			*v = x;
	}
}


void mbx_params_init(void)
{
	char *s = NULL;
	const char *job;
	int v;

	fi_param_define(&mbx_prov, "eager_limit", FI_PARAM_SIZE_T,
			"Largest message sent eagerly, in one frame; larger ones use rendezvous (default: %zu)",
			mbx_param.eager_limit);
	fi_param_define(&mbx_prov, "inject_size", FI_PARAM_SIZE_T,
			"Largest fi_inject/fi_tinject payload, reported as tx_attr->inject_size (default: %zu)",
			mbx_param.inject_size);
	fi_param_define(&mbx_prov, "ring_size", FI_PARAM_SIZE_T,
			"Bytes of each per-peer shared-memory frame ring, a power of two (default: %zu)",
			mbx_param.ring_size);
	fi_param_define(&mbx_prov, "large_proto", FI_PARAM_STRING,
			"Large-message mechanism: auto (CMA below copy_min, two-copy pipeline from copy_min up), adaptive (from copy_min up, whichever of the two lately moved such messages faster), cma, or copy (default: auto)");
	fi_param_define(&mbx_prov, "copy_min", FI_PARAM_SIZE_T,
			"With large_proto=auto, messages of at least this size use the pipelined two-copy path (default: %zu)",
			mbx_param.copy_min);
	fi_param_define(&mbx_prov, "copy_chunk", FI_PARAM_SIZE_T,
			"Chunk size of the pipelined two-copy path (default: %zu)",
			mbx_param.chunk_size);
	fi_param_define(&mbx_prov, "copy_chunks", FI_PARAM_SIZE_T,
			"Chunks in flight per peer on the pipelined two-copy path (default: %zu)",
			mbx_param.nchunks);
	fi_param_define(&mbx_prov, "shm_peers", FI_PARAM_SIZE_T,
			"Most same-node endpoints that can send to one endpoint (default: %zu)",
			mbx_param.shm_peers);
	fi_param_define(&mbx_prov, "shm_prefault", FI_PARAM_SIZE_T,
			"Same-node peers whose rings an endpoint populates when it first "
			"sends to them (default: %zu)", mbx_param.shm_prefault);
	fi_param_define(&mbx_prov, "tx_size", FI_PARAM_SIZE_T,
			"Sends the provider can hold at once per endpoint (default: %zu)",
			mbx_param.tx_size);
	fi_param_define(&mbx_prov, "rx_size", FI_PARAM_SIZE_T,
			"Receives that can be posted at once per endpoint (default: %zu)",
			mbx_param.rx_size);
	fi_param_define(&mbx_prov, "unexp_max", FI_PARAM_SIZE_T,
			"Bytes of unexpected eager data buffered per endpoint before senders are held back (default: %zu)",
			mbx_param.unexp_max);
	fi_param_define(&mbx_prov, "nt_min", FI_PARAM_SIZE_T,
			"Two-copy receives of at least this size copy out with non-temporal stores (default: %zu)",
			mbx_param.nt_min);
	fi_param_define(&mbx_prov, "nt_rate", FI_PARAM_SIZE_T,
			"A sender copies a payload of 8 KiB or more into a same-node peer's memory with non-temporal stores while its ordinary copies there run below this many MB/s; 0: never (default: %zu)",
			mbx_param.nt_rate);
	fi_param_define(&mbx_prov, "spin_us", FI_PARAM_INT,
			"Microseconds blocking waits poll before they sleep (default: %d)",
			mbx_param.spin_us);
	fi_param_define(&mbx_prov, "resolve_ms", FI_PARAM_SIZE_T,
			"How long fi_av_insert waits for an endpoint named by IP address and port to tell its full address (default: %zu)",
			mbx_param.resolve_ms);
	fi_param_define(&mbx_prov, "rma_cma", FI_PARAM_STRING,
			"RMA between endpoints on one node: auto (CMA, without the target's CPU, to a target not seen progressing; frames through its progress to one that is), always (CMA), or never (default: auto)");
	fi_param_define(&mbx_prov, "job", FI_PARAM_STRING,
			"Job key; endpoints with different keys never exchange data (default: PMIX_NAMESPACE, else SLURM_JOB_ID, else \"default\")");

	get_size("eager_limit", &mbx_param.eager_limit, 64, 1 << 20);
	get_size("inject_size", &mbx_param.inject_size, 0, 1 << 16);
	get_size("ring_size", &mbx_param.ring_size, 16384, 1 << 28);
	get_size("copy_min", &mbx_param.copy_min, 0, SIZE_MAX);
	get_size("copy_chunk", &mbx_param.chunk_size, 4096, 1 << 24);
	get_size("copy_chunks", &mbx_param.nchunks, 2, 64);
	get_size("shm_peers", &mbx_param.shm_peers, 1, 4096);
	get_size("shm_prefault", &mbx_param.shm_prefault, 0, 4096);
	get_size("tx_size", &mbx_param.tx_size, 16, 1 << 20);
	get_size("rx_size", &mbx_param.rx_size, 16, 1 << 20);
	get_size("unexp_max", &mbx_param.unexp_max, 0, SIZE_MAX);
	get_size("nt_min", &mbx_param.nt_min, 0, SIZE_MAX);
	get_size("nt_rate", &mbx_param.nt_rate, 0, SIZE_MAX);
	get_size("resolve_ms", &mbx_param.resolve_ms, 1, 3600000);
	if (fi_param_get_int(&mbx_prov, "spin_us", &v) == FI_SUCCESS && v >= 0)
		mbx_param.spin_us = v;
	if (!is_pow2(mbx_param.ring_size)) {
		MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_RING_SIZE must be a power of two; using 262144\n");
		mbx_param.ring_size = 256 * 1024;
	}
	/* A frame must always fit: eager data plus header in half a ring. */
	while (mbx_param.eager_limit + 4096 > mbu_ring_max_frame(mbx_param.ring_size))
		mbx_param.ring_size *= 2;
	if (mbx_param.inject_size > mbx_param.eager_limit)
		mbx_param.inject_size = mbx_param.eager_limit;
	net_params();
	if (fi_param_get_str(&mbx_prov, "large_proto", &s) == FI_SUCCESS && s) {
		if (!strcmp(s, "cma"))
			mbx_param.large_proto = MBX_LARGE_CMA;
		else if (!strcmp(s, "copy"))
			mbx_param.large_proto = MBX_LARGE_COPY;
		else if (!strcmp(s, "adaptive"))
			mbx_param.large_proto = MBX_LARGE_ADAPTIVE;
		else if (strcmp(s, "auto"))
			MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_LARGE_PROTO=%s unknown; using auto\n", s);
	}
	s = NULL;
	if (fi_param_get_str(&mbx_prov, "rma_cma", &s) == FI_SUCCESS && s) {
		if (!strcmp(s, "always") || !strcmp(s, "1"))
			mbx_param.rma_cma = MBX_RMA_CMA_ALWAYS;
		else if (!strcmp(s, "never") || !strcmp(s, "0"))
			mbx_param.rma_cma = MBX_RMA_CMA_NEVER;
		else if (strcmp(s, "auto"))
			MBX_WARN(FI_LOG_CORE, "FI_MATCHBOX_RMA_CMA=%s unknown; using auto\n", s);
	}
	s = NULL;
	if (fi_param_get_str(&mbx_prov, "job", &s) != FI_SUCCESS || !s) {
		job = getenv("PMIX_NAMESPACE");
		if (!job)
			job = getenv("SLURM_JOB_ID");
		s = (char *)(job ? job : "default");
	}
	snprintf(mbx_param.job, sizeof(mbx_param.job), "%s", s);
}

FI_EXT_INI
{
	mbx_params_init();
	return &mbx_prov;
}

/* ---- stubs ---- */

int mbx_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int mbx_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int mbx_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
		    void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int mbx_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}

int mbx_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
		   void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}
