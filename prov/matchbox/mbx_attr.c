/* fi_getinfo for matchbox: builds the one fi_info the provider offers and
 * answers -FI_ENODATA when the hints ask for anything it cannot honour. Each
 * check names the hint it refuses at FI_LOG_INFO, so `FI_LOG_LEVEL=info
 * fi_info -p matchbox ...` explains an empty answer. */
#include "mbx.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>

#define REFUSE(...)						\
	do {							\
		MBX_INFO(FI_LOG_CORE, __VA_ARGS__);		\
		return false;					\
	} while (0)

static bool check_tx(const struct fi_tx_attr *tx, uint64_t caps)
{
	if (!tx)
		return true;
	if (tx->caps & ~(MBX_CAPS))
		REFUSE("tx_attr caps 0x%llx unsupported\n", (unsigned long long)tx->caps);
	if (tx->msg_order & ~MBX_MSG_ORDER)
		REFUSE("tx msg_order 0x%llx unsupported\n", (unsigned long long)tx->msg_order);
	if (tx->comp_order & ~FI_ORDER_NONE)
		REFUSE("tx comp_order unsupported\n");
	if (tx->inject_size > mbx_param.inject_size)
		REFUSE("inject_size %zu > %zu\n", tx->inject_size, mbx_param.inject_size);
	if (tx->size > mbx_param.tx_size)
		REFUSE("tx size %zu > %zu\n", tx->size, mbx_param.tx_size);
	if (tx->iov_limit > MBX_IOV_LIMIT)
		REFUSE("tx iov_limit %zu > %d\n", tx->iov_limit, MBX_IOV_LIMIT);
	if (tx->rma_iov_limit > MBX_IOV_LIMIT)
		REFUSE("rma_iov_limit %zu > %d\n", tx->rma_iov_limit, MBX_IOV_LIMIT);
	(void)caps;
	return true;
}

static bool check_rx(const struct fi_rx_attr *rx)
{
	if (!rx)
		return true;
	if (rx->caps & ~(MBX_CAPS))
		REFUSE("rx_attr caps 0x%llx unsupported\n", (unsigned long long)rx->caps);
	if (rx->msg_order & ~MBX_MSG_ORDER)
		REFUSE("rx msg_order 0x%llx unsupported\n", (unsigned long long)rx->msg_order);
	if (rx->comp_order & ~FI_ORDER_NONE)
		REFUSE("rx comp_order unsupported\n");
	if (rx->size > mbx_param.rx_size)
		REFUSE("rx size %zu > %zu\n", rx->size, mbx_param.rx_size);
	if (rx->iov_limit > MBX_IOV_LIMIT)
		REFUSE("rx iov_limit %zu > %d\n", rx->iov_limit, MBX_IOV_LIMIT);
	return true;
}

static bool check_hints(uint32_t version, const struct fi_info *h)
{
	struct mbx_sockname sn;
	struct mbx_addr a;

	if (h->caps & ~MBX_CAPS)
		REFUSE("caps 0x%llx not offered\n", (unsigned long long)(h->caps & ~MBX_CAPS));
	if (!mbx_addr_format_ok(h->addr_format))
		REFUSE("addr_format %u unsupported\n", h->addr_format);
	if (h->src_addr &&
	    mbx_addr_decode(h->src_addr, h->src_addrlen, h->addr_format, &a, &sn) < 0)
		REFUSE("src_addr is not an address matchbox can use\n");
	if (h->dest_addr &&
	    mbx_addr_decode(h->dest_addr, h->dest_addrlen, h->addr_format, &a, &sn) < 0)
		REFUSE("dest_addr is not an address matchbox can use\n");
	if (h->ep_attr) {
		const struct fi_ep_attr *e = h->ep_attr;

		if (e->type != FI_EP_UNSPEC && e->type != FI_EP_RDM)
			REFUSE("ep type %d unsupported\n", e->type);
		if (e->protocol != FI_PROTO_UNSPEC)
			REFUSE("protocol %u unsupported\n", e->protocol);
		if (e->max_msg_size > MBX_MAX_MSG_SIZE)
			REFUSE("max_msg_size too large\n");
		if (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1)
			REFUSE("scalable endpoints unsupported\n");
		if (e->rx_ctx_cnt == FI_SHARED_CONTEXT || e->tx_ctx_cnt == FI_SHARED_CONTEXT)
			REFUSE("shared contexts unsupported\n");
		if (e->auth_key_size)
			REFUSE("auth keys unsupported\n");
	}
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (d->name && strcmp(d->name, MBX_DOMAIN_NAME))
			REFUSE("domain %s unknown\n", d->name);
		if (d->cq_data_size > MBX_CQ_DATA_SIZE)
			REFUSE("cq_data_size %zu > 8\n", d->cq_data_size);
		/* tx/rx_ctx_cnt count the domain's queues over all its
		 * endpoints: a program that duplicates our answer into its
		 * hints (fabtests' multi_ep) asks for what we offered. */
		if (d->max_ep_tx_ctx > 1 || d->max_ep_rx_ctx > 1)
			REFUSE("more than one context per endpoint unsupported\n");
		if (d->ep_cnt > MBX_DOM_COUNT || d->tx_ctx_cnt > MBX_DOM_COUNT ||
		    d->rx_ctx_cnt > MBX_DOM_COUNT || d->cq_cnt > MBX_DOM_COUNT ||
		    d->cntr_cnt > MBX_DOM_COUNT)
			REFUSE("more than %d endpoints, queues or counters per domain\n",
			       MBX_DOM_COUNT);
		if (d->caps & ~(MBX_DOM_CAPS))
			REFUSE("domain caps unsupported\n");
		if (d->auth_key_size)
			REFUSE("auth keys unsupported\n");
		if (FI_VERSION_GE(version, FI_VERSION(1, 5)) &&
		    (d->mr_mode & (FI_MR_BASIC | FI_MR_SCALABLE)) == FI_MR_BASIC &&
		    d->mr_mode != FI_MR_BASIC)
			REFUSE("mr_mode mixes old and new styles\n");
		/* Since 1.5 scalable registration is mr_mode 0; the old bit
		 * with RMA is refused, as libfabric's getinfo tests expect. */
		if (FI_VERSION_GE(version, FI_VERSION(1, 5)) && d->mr_mode == FI_MR_SCALABLE &&
		    (h->caps & (FI_RMA | FI_ATOMIC)))
			REFUSE("mr_mode FI_MR_SCALABLE is for API versions before 1.5\n");
	}
	if (h->fabric_attr) {
		const struct fi_fabric_attr *f = h->fabric_attr;

		if (f->name && strcmp(f->name, MBX_FABRIC_NAME))
			REFUSE("fabric %s unknown\n", f->name);
		if (f->prov_name && strcmp(f->prov_name, MBX_PROV_NAME))
			REFUSE("provider %s is not matchbox\n", f->prov_name);
	}
	if (!check_tx(h->tx_attr, h->caps) || !check_rx(h->rx_attr))
		return false;
	return true;
}

static uint64_t pick_caps(const struct fi_info *h)
{
	uint64_t caps;

	if (!h || !h->caps)
		return MBX_CAPS;
	/* Only the primary capabilities asked for (fi_getinfo(3)); the
	 * secondary ones we always have come along. */
	caps = h->caps;
	if (!(caps & (FI_SEND | FI_RECV)))
		caps |= FI_SEND | FI_RECV;
	/* FI_RMA or FI_ATOMIC with no direction named means every direction
	 * (fi_getinfo(3)); the answer names them, so the endpoint can check. */
	if ((caps & (FI_RMA | FI_ATOMIC)) &&
	    !(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)))
		caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	return caps | FI_LOCAL_COMM | (mbx_param.net ? FI_REMOTE_COMM : 0);
}

/* With no format hinted, the hint's own addresses decide it. */
static uint32_t pick_format(const struct fi_info *h)
{
	const void *a;
	size_t len;
	const struct sockaddr *sa;

	if (!h)
		return FI_ADDR_STR;
	if (h->addr_format)
		return h->addr_format;
	a = h->src_addr ? h->src_addr : h->dest_addr;
	len = h->src_addr ? h->src_addrlen : h->dest_addrlen;
	sa = a;
	if (a && len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET)
		return FI_SOCKADDR_IN;
	if (a && len >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6)
		return FI_SOCKADDR_IN6;
	return FI_ADDR_STR;
}

static struct fi_info *build_info(uint32_t version, const struct fi_info *h)
{
	struct fi_info *fi = fi_allocinfo();
	uint64_t caps = pick_caps(h);

	if (!fi)
		return NULL;
	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = pick_format(h);
	if (h && h->dest_addr) {
		fi->dest_addr = malloc(h->dest_addrlen);
		if (!fi->dest_addr)
			goto err;
		memcpy(fi->dest_addr, h->dest_addr, h->dest_addrlen);
		fi->dest_addrlen = h->dest_addrlen;
	}

	/* Domain capabilities belong to info->caps, not to the contexts. */
	fi->tx_attr->caps = caps & MBX_TX_CAPS;
	fi->tx_attr->mode = 0;
	fi->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags : 0;
	fi->tx_attr->msg_order = MBX_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = mbx_param.inject_size;
	fi->tx_attr->size = mbx_param.tx_size;
	fi->tx_attr->iov_limit = MBX_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = MBX_IOV_LIMIT;

	fi->rx_attr->caps = caps & MBX_RX_CAPS;
	fi->rx_attr->mode = 0;
	fi->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags : 0;
	fi->rx_attr->msg_order = MBX_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = mbx_param.unexp_max;
	fi->rx_attr->size = mbx_param.rx_size;
	fi->rx_attr->iov_limit = MBX_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = MBX_WIRE_VERSION;
	fi->ep_attr->max_msg_size = MBX_MAX_MSG_SIZE;
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->max_order_raw_size = 0;
	fi->ep_attr->max_order_war_size = 0;
	fi->ep_attr->max_order_waw_size = 0;
	/* The matcher compares all 64 tag bits under the caller's mask, so any
	 * field layout a caller asks for is honoured as asked; without one we
	 * report the generic all-64-bit format (no ignored leading bits), which
	 * is what MPIs read to size their communicator/rank/tag fields. */
	fi->ep_attr->mem_tag_format = !(caps & FI_TAGGED) ? 0 :
				      h && h->ep_attr && h->ep_attr->mem_tag_format ?
				      h->ep_attr->mem_tag_format : MBX_TAG_GENERIC;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(MBX_DOMAIN_NAME);
	fi->domain_attr->threading = h && h->domain_attr && h->domain_attr->threading ?
				     h->domain_attr->threading : FI_THREAD_SAFE;
	/* Control operations need no progress calls; a caller that promises
	 * to make them anyway (MANUAL) loses nothing. */
	fi->domain_attr->control_progress = h && h->domain_attr &&
					    h->domain_attr->control_progress == FI_PROGRESS_MANUAL ?
					    FI_PROGRESS_MANUAL : FI_PROGRESS_AUTO;
	/* Manual unless asked: the progress thread costs every call a lock. */
	fi->domain_attr->data_progress = h && h->domain_attr &&
					 h->domain_attr->data_progress == FI_PROGRESS_AUTO ?
					 FI_PROGRESS_AUTO : FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = h && h->domain_attr ? h->domain_attr->av_type : FI_AV_UNSPEC;
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)))
		fi->domain_attr->mr_mode = h && h->domain_attr &&
					   h->domain_attr->mr_mode == FI_MR_BASIC ?
					   FI_MR_BASIC : FI_MR_SCALABLE;
	else
		/* See MBX_MR_MODES: no mode is required. */
		fi->domain_attr->mr_mode = h && h->domain_attr &&
					   h->domain_attr->mr_mode == FI_MR_BASIC ? FI_MR_BASIC : 0;
	fi->domain_attr->mr_key_size = sizeof(uint64_t);
	fi->domain_attr->cq_data_size = MBX_CQ_DATA_SIZE;
	fi->domain_attr->cq_cnt = MBX_DOM_COUNT;
	fi->domain_attr->ep_cnt = MBX_DOM_COUNT;
	fi->domain_attr->tx_ctx_cnt = MBX_DOM_COUNT;
	fi->domain_attr->rx_ctx_cnt = MBX_DOM_COUNT;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->max_ep_stx_ctx = 0;
	fi->domain_attr->max_ep_srx_ctx = 0;
	fi->domain_attr->cntr_cnt = MBX_DOM_COUNT;
	fi->domain_attr->mr_iov_limit = MBX_IOV_LIMIT;
	fi->domain_attr->caps = FI_LOCAL_COMM | (mbx_param.net ? FI_REMOTE_COMM : 0);
	fi->domain_attr->mode = 0;
	fi->domain_attr->mr_cnt = 65536;

	fi->fabric_attr->name = strdup(MBX_FABRIC_NAME);
	/* prov_name is filled in by libfabric's core, which appends the name
	 * of the provider that answered to whatever the provider put there. */
	fi->fabric_attr->prov_version = MBX_PROV_VERSION;
	fi->fabric_attr->api_version = MBX_API_VERSION;
	if (!fi->domain_attr->name || !fi->fabric_attr->name)
		goto err;
	return fi;
err:
	fi_freeinfo(fi);
	return NULL;
}

/* Copies `len` bytes of `addr` into a fresh allocation at *dst. */
static int set_addr(void **dst, size_t *dlen, const void *addr, size_t len)
{
	void *p = malloc(len);

	if (!p)
		return -FI_ENOMEM;
	memcpy(p, addr, len);
	free(*dst);
	*dst = p;
	*dlen = len;
	return 0;
}

static int set_sockname(void **dst, size_t *dlen, const struct mbx_sockname *sn, uint32_t fmt)
{
	char buf[128];
	size_t len = sizeof(buf);
	int ret = mbx_addr_encode(sn, fmt, buf, &len);

	return ret ? ret : set_addr(dst, dlen, buf, len);
}

/* The addresses of fi_getinfo(3): with FI_SOURCE, node and service say
 * where the endpoint will be bound (src_addr); without it they name the
 * peer (dest_addr), either as a full matchbox address or as the IP and
 * port of its listener, which fi_av_insert resolves. src_addr is always
 * set: the hint's, or the listener address an endpoint gets by default
 * (the net wire's IP, an ephemeral port). */
static int fill_addrs(struct fi_info *fi, const char *node, const char *service,
		      uint64_t flags, const struct fi_info *hints)
{
	struct mbx_sockname sn;
	struct mbx_addr a;
	int ret;

	if ((flags & FI_SOURCE) && (node || service)) {
		ret = mbx_sockname_lookup(node, service, !node, &sn);
		if (ret)
			return ret;
		ret = set_sockname(&fi->src_addr, &fi->src_addrlen, &sn, fi->addr_format);
		if (ret)
			return ret;
	} else if (node) {
		if (!mbx_parse_addr(node, strlen(node) + 1, &a)) {
			if (fi->addr_format != FI_ADDR_STR) {
				MBX_INFO(FI_LOG_CORE, "node %s is a string in a sockaddr format\n",
					 node);
				return -FI_ENODATA;
			}
			ret = set_addr(&fi->dest_addr, &fi->dest_addrlen, node, strlen(node) + 1);
		} else {
			/* Without a service the port is 0: an AV refuses it,
			 * as it names no listener. */
			ret = mbx_sockname_lookup(node, service, false, &sn);
			if (!ret)
				ret = set_sockname(&fi->dest_addr, &fi->dest_addrlen, &sn,
						   fi->addr_format);
		}
		if (ret)
			return ret;
	}
	if (!fi->src_addr && hints && hints->src_addr)
		return set_addr(&fi->src_addr, &fi->src_addrlen, hints->src_addr,
				hints->src_addrlen);
	if (!fi->src_addr) {
		sn.ip = mbx_param.net ? mbx_net_pick_ip() : 0;
		if (!sn.ip)
			sn.ip = 0x7f000001u;
		sn.port = 0;
		return set_sockname(&fi->src_addr, &fi->src_addrlen, &sn, fi->addr_format);
	}
	return 0;
}

int mbx_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *fi;
	int ret;

	*info = NULL;
	if (hints && !check_hints(version, hints))
		return -FI_ENODATA;
	fi = build_info(version, hints);
	if (!fi)
		return -FI_ENOMEM;
	ret = fill_addrs(fi, node, service, flags, hints);
	if (ret) {
		fi_freeinfo(fi);
		return ret;
	}
	*info = fi;
	return 0;
}
