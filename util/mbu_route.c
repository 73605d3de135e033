/* The route's acknowledgement setting, by rtnetlink (see mbu_route.h). One
 * RTM_GETROUTE request for the address, as `ip route get` sends, on a
 * socket opened for the question and closed after it. Also the
 * namespace's TCP congestion control, from /proc. */
#include "mbu_route.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* RTAX_QUICKACK inside an RTA_METRICS attribute of `len` bytes. */
static int metrics_quickack(const struct rtattr *m, int len)
{
	for (; RTA_OK(m, len); m = RTA_NEXT(m, len)) {
		uint32_t v;

		if (m->rta_type != RTAX_QUICKACK)
			continue;
		if (RTA_PAYLOAD(m) < sizeof(v))
			return -EINVAL;
		memcpy(&v, RTA_DATA(m), sizeof(v));
		return v != 0;
	}
	/* A well-formed list ends exactly where its attribute does. */
	return len ? -EINVAL : 0;
}

int mbu_route_parse_quickack(const void *reply, size_t len)
{
	const struct nlmsghdr *h = reply;
	int left = len > 65536 ? 65536 : (int)len;

	/* The first route in the reply answers; an error reply, or a reply
	 * with none, says there is no route to ask about. */
	for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		const struct rtmsg *rt = NLMSG_DATA(h);
		const struct rtattr *a;
		int alen;

		if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE)
			return -ENOENT;
		if (h->nlmsg_type != RTM_NEWROUTE)
			continue;
		if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
			return -EINVAL;
		a = RTM_RTA(rt);
		alen = (int)RTM_PAYLOAD(h);
		for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
			if (a->rta_type == RTA_METRICS)
				return metrics_quickack(RTA_DATA(a), (int)RTA_PAYLOAD(a));
		return alen ? -EINVAL : 0;
	}
	return left ? -EINVAL : -ENOENT;
}

int mbu_route_quickack(uint32_t ip)
{
	struct {
		struct nlmsghdr h;
		struct rtmsg rt;
		char attr[RTA_SPACE(sizeof(uint32_t))];
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	union {
		char b[8192];
		struct nlmsghdr align;
	} reply;
	struct rtattr *a;
	uint32_t dst = htonl(ip);
	ssize_t n;
	int fd, ret;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(req.rt) + RTA_SPACE(sizeof(dst)));
	req.h.nlmsg_type = RTM_GETROUTE;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	req.rt.rtm_family = AF_INET;
	req.rt.rtm_dst_len = 32;
	a = (struct rtattr *)req.attr;
	a->rta_type = RTA_DST;
	a->rta_len = RTA_LENGTH(sizeof(dst));
	memcpy(RTA_DATA(a), &dst, sizeof(dst));

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	do
		n = recv(fd, reply.b, sizeof(reply.b), 0);
	while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : mbu_route_parse_quickack(reply.b, (size_t)n);
	close(fd);
	return ret;
}

int mbu_tcp_cc(char *name, size_t len)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "re");
	int ret = 0;

	if (len < 2)
		return -EINVAL;
	name[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(name, (int)len, f))
		ret = ferror(f) ? -EIO : -ENOENT;
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	if (!ret && !name[0])
		ret = -ENOENT;
	return ret;
}
