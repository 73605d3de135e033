/* The net wire's extra rails (see mbx_rail.h): one reliable datagram
 * endpoint of a core provider per extra interface, its table of the peers'
 * rails, its CQ, and the registrations that let peers read our data over
 * it. No frame ever travels on a rail; only fi_read. Everything runs under
 * the domain lock, from the net wire's progress. */
#include "mbx.h"
#include "mbx_net.h"
#include "mbx_rail.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rail {
	char iface[IFNAMSIZ];
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
};

struct mbx_rails {
	unsigned n;
	struct rail r[MBX_RAILS_MAX - 1];
	struct mbx_rail_name name[MBX_RAILS_MAX - 1];
};

static void rail_close(struct rail *r)
{
	struct fid *fids[] = { r->ep ? &r->ep->fid : NULL, r->av ? &r->av->fid : NULL,
			       r->cq ? &r->cq->fid : NULL, r->dom ? &r->dom->fid : NULL,
			       r->fab ? &r->fab->fid : NULL };
	size_t i;

	for (i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			fi_close(fids[i]);
	if (r->info)
		fi_freeinfo(r->info);
	memset(r, 0, sizeof(*r));
}

static int rail_open(struct rail *r, const char *iface, struct mbx_rail_name *name)
{
	static const char *const order[] = { "verbs;ofi_rxm", "tcp;ofi_rxm", NULL };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT, .size = 1024,
				      .wait_obj = FI_WAIT_NONE };
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	const char *const *p;
	uint32_t ip = mbx_net_iface_ip(iface);
	int ret;

	snprintf(r->iface, sizeof(r->iface), "%s", iface);
	if (!ip) {
		MBX_WARN(FI_LOG_EP_CTRL, "rail %s: no IPv4 address on it; left out\n", iface);
		return -FI_ENODEV;
	}
	for (p = order; *p && !r->info; p++)
		r->info = mbx_net_core_info(mbx_param.net_rail_prov[0] ? mbx_param.net_rail_prov : *p,
					     FI_EP_RDM, ip, FI_RMA | FI_READ | FI_REMOTE_READ);
	if (!r->info) {
		MBX_WARN(FI_LOG_EP_CTRL, "rail %s: no core provider with fi_read on it; left out\n",
			 iface);
		return -FI_ENODATA;
	}
	ret = fi_fabric(r->info->fabric_attr, &r->fab, NULL);
	if (!ret)
		ret = fi_domain(r->fab, r->info, &r->dom, NULL);
	if (!ret)
		ret = fi_av_open(r->dom, &av_attr, &r->av, NULL);
	if (!ret)
		ret = fi_cq_open(r->dom, &cq_attr, &r->cq, NULL);
	if (!ret)
		ret = fi_endpoint(r->dom, r->info, &r->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(r->ep, &r->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(r->ep);
	if (!ret)
		ret = fi_getname(&r->ep->fid, &sin, &len);
	if (!ret && (sin.sin_family != AF_INET || !sin.sin_port))
		ret = -FI_EADDRNOTAVAIL;
	if (ret) {
		MBX_WARN(FI_LOG_EP_CTRL, "rail %s over %s: %s; left out\n", iface,
			 r->info->fabric_attr->prov_name, fi_strerror(-ret));
		return ret;
	}
	name->ip = ntohl(sin.sin_addr.s_addr);
	name->port = ntohs(sin.sin_port);
	name->rsvd = 0;
	MBX_INFO(FI_LOG_EP_CTRL, "rail %s over %s on %08x port %u\n", iface,
		 r->info->fabric_attr->prov_name, name->ip, name->port);
	return 0;
}

int mbx_rails_open(const char *ifaces, struct mbx_rails **out)
{
	struct mbx_rails *rs;
	char list[256], *save = NULL, *tok;

	*out = NULL;
	if (!ifaces || !ifaces[0])
		return 0;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -FI_ENOMEM;
	snprintf(list, sizeof(list), "%s", ifaces);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (rs->n == MBX_RAILS_MAX - 1) {
			MBX_WARN(FI_LOG_EP_CTRL, "rails: at most %u extra interfaces; %s and after "
				 "left out\n", MBX_RAILS_MAX - 1, tok);
			break;
		}
		/* Peers pair rails by position in the list: past one that
		 * did not open, ours would pair with the wrong networks. */
		if (rail_open(&rs->r[rs->n], tok, &rs->name[rs->n])) {
			rail_close(&rs->r[rs->n]);
			if (strtok_r(NULL, ",", &save))
				MBX_WARN(FI_LOG_EP_CTRL, "rails after %s left out too, so that "
					 "the rest pair with the peers' by position\n", tok);
			break;
		}
		rs->n++;
	}
	if (!rs->n) {
		free(rs);
		return 0;
	}
	*out = rs;
	return 0;
}

void mbx_rails_close(struct mbx_rails *rs)
{
	unsigned i;

	if (!rs)
		return;
	for (i = 0; i < rs->n; i++)
		rail_close(&rs->r[i]);
	free(rs);
}

unsigned mbx_rails_count(const struct mbx_rails *rs)
{
	return rs ? rs->n : 0;
}

const struct mbx_rail_name *mbx_rails_names(const struct mbx_rails *rs)
{
	return rs->name;
}

const char *mbx_rails_iface(const struct mbx_rails *rs, unsigned i)
{
	return rs->r[i].iface;
}

int mbx_rails_reg(struct mbx_rails *rs, void *addr, size_t len, uint64_t key,
		  struct fid_mr **mrs)
{
	struct iovec iov = { addr, len };
	unsigned i;
	int ret;

	for (i = 0; i < rs->n; i++) {
		ret = fi_mr_regv(rs->r[i].dom, &iov, 1, FI_REMOTE_READ, 0, key, 0, &mrs[i], NULL);
		if (!ret && fi_mr_key(mrs[i]) != key) {
			/* A core that chooses its own keys cannot share ours. */
			fi_close(&mrs[i]->fid);
			ret = -FI_EKEYREJECTED;
		}
		if (ret) {
			while (i--)
				fi_close(&mrs[i]->fid);
			memset(mrs, 0, rs->n * sizeof(*mrs));
			return ret;
		}
	}
	return 0;
}

void mbx_rails_dereg(struct mbx_rails *rs, struct fid_mr **mrs)
{
	unsigned i;

	for (i = 0; i < rs->n; i++)
		if (mrs[i])
			fi_close(&mrs[i]->fid);
}

fi_addr_t mbx_rails_peer(struct mbx_rails *rs, unsigned i, const struct mbx_rail_name *peer)
{
	struct sockaddr_in sin;
	fi_addr_t a = FI_ADDR_NOTAVAIL;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(peer->ip);
	sin.sin_port = htons(peer->port);
	if (fi_av_insert(rs->r[i].av, &sin, 1, &a, 0, NULL) != 1)
		return FI_ADDR_NOTAVAIL;
	return a;
}

int mbx_rails_read(struct mbx_rails *rs, unsigned i, fi_addr_t peer, const struct iovec *iov,
		   size_t cnt, uint64_t raddr, size_t len, uint64_t key, void *ctx)
{
	struct fi_rma_iov riov = { raddr, len, key };
	struct fi_msg_rma msg;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.iov_count = cnt;
	msg.addr = peer;
	msg.rma_iov = &riov;
	msg.rma_iov_count = 1;
	msg.context = ctx;
	return (int)fi_readmsg(rs->r[i].ep, &msg, 0);
}

int mbx_rails_poll(struct mbx_rails *rs, unsigned i, void **ctx, int *err, int max)
{
	struct fi_cq_entry e[32];
	ssize_t got;
	int k, n = 0;

	if (max > 32)
		max = 32;
	got = fi_cq_read(rs->r[i].cq, e, (size_t)max);
	if (got > 0) {
		for (k = 0; k < got; k++) {
			ctx[n] = e[k].op_context;
			err[n++] = 0;
		}
	} else if (got == -FI_EAVAIL) {
		struct fi_cq_err_entry ee = { 0 };

		if (fi_cq_readerr(rs->r[i].cq, &ee, 0) > 0 && ee.op_context) {
			ctx[n] = ee.op_context;
			err[n++] = ee.err ? ee.err : FI_EIO;
		}
	}
	return n;
}
