/* The route's acknowledgement setting (util/mbu_route.h): the parser reads
 * RTAX_QUICKACK from a route reply's metrics, says 0 for a route without
 * it, refuses error replies and replies whose lengths do not fit, and never
 * reads past the bytes it is given (random replies under the sanitizer
 * build); and the kernel answers a real question about the loopback. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "mbu_route.h"

/* A reply being built: one netlink message, attributes appended. */
struct reply {
	_Alignas(8) unsigned char b[512];
};

static struct nlmsghdr *hdr(struct reply *r)
{
	return (struct nlmsghdr *)r->b;
}

static struct rtattr *put(struct reply *r, struct rtattr *nest, unsigned short type,
			  const void *data, size_t len)
{
	size_t off = NLMSG_ALIGN(hdr(r)->nlmsg_len);
	struct rtattr *a = (struct rtattr *)(r->b + off);

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(r->b + off + RTA_LENGTH(0), data, len);
	hdr(r)->nlmsg_len = (uint32_t)(off + RTA_ALIGN(a->rta_len));
	if (nest)
		nest->rta_len = (unsigned short)((unsigned char *)a + RTA_ALIGN(a->rta_len) -
						 (unsigned char *)nest);
	return a;
}

static void route(struct reply *r)
{
	struct rtmsg *rt;
	uint32_t table = RT_TABLE_MAIN, dst = 0x0b6433c6;

	memset(r, 0, sizeof(*r));
	hdr(r)->nlmsg_type = RTM_NEWROUTE;
	hdr(r)->nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	rt = NLMSG_DATA(hdr(r));
	rt->rtm_family = 2;
	rt->rtm_dst_len = 32;
	put(r, NULL, RTA_TABLE, &table, sizeof(table));
	put(r, NULL, RTA_DST, &dst, sizeof(dst));
}

/* A route whose metrics hold an MTU and, if `qa` >= 0, RTAX_QUICKACK = qa. */
static void route_with_metrics(struct reply *r, int qa)
{
	uint32_t mtu = 1500, v = (uint32_t)qa;
	struct rtattr *m;

	route(r);
	m = put(r, NULL, RTA_METRICS, NULL, 0);
	put(r, m, RTAX_MTU, &mtu, sizeof(mtu));
	if (qa >= 0)
		put(r, m, RTAX_QUICKACK, &v, sizeof(v));
}

Test(route, quickack_read_from_the_metrics)
{
	struct reply r;

	route_with_metrics(&r, 1);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), 1);
	route_with_metrics(&r, 0);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), 0);
	route_with_metrics(&r, -1);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), 0);
	route(&r);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), 0);
}

Test(route, errors_and_bad_lengths_refused)
{
	struct reply r;
	struct nlmsgerr *e;
	struct rtattr *m;

	memset(&r, 0, sizeof(r));
	hdr(&r)->nlmsg_type = NLMSG_ERROR;
	hdr(&r)->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	e = NLMSG_DATA(hdr(&r));
	e->error = -ENETUNREACH;
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), -ENOENT);
	cr_assert_eq(mbu_route_parse_quickack(r.b, 0), -ENOENT);

	/* The message claims more than was received. */
	route_with_metrics(&r, 1);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len - 4), -EINVAL);
	/* A quick-ack metric too short for its value. */
	route(&r);
	m = put(&r, NULL, RTA_METRICS, NULL, 0);
	put(&r, m, RTAX_QUICKACK, "\1", 1);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), -EINVAL);
	/* A metrics attribute that runs past its message. */
	route_with_metrics(&r, 1);
	m = (struct rtattr *)(r.b + NLMSG_LENGTH(sizeof(struct rtmsg)) + 2 * RTA_SPACE(4));
	cr_assert_eq(m->rta_type, RTA_METRICS);
	m->rta_len = (unsigned short)(m->rta_len + 64);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), -EINVAL);
	/* A route message too short for its own header. */
	route(&r);
	hdr(&r)->nlmsg_len = NLMSG_LENGTH(4);
	cr_assert_eq(mbu_route_parse_quickack(r.b, hdr(&r)->nlmsg_len), -EINVAL);
}

/* Random bytes, each reply in a buffer of exactly its length so that the
 * sanitizer build sees any read past it. */
Test(route, random_replies_stay_in_bounds)
{
	struct reply r;

	srand(7);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(rand() % 200);
		unsigned char *b = malloc(len ? len : 1);
		int ret;

		cr_assert(b);
		route_with_metrics(&r, rand() % 3 - 1);
		memcpy(b, r.b, len);
		/* Keep the header often plausible so the parse goes deep. */
		for (int k = rand() % 4; k > 0 && len; k--)
			b[rand() % len] = (unsigned char)rand();
		ret = mbu_route_parse_quickack(b, len);
		cr_assert(ret == 0 || ret == 1 || ret == -EINVAL || ret == -ENOENT, "%d", ret);
		free(b);
	}
}

Test(route, the_kernel_answers_for_the_loopback)
{
	int ret = mbu_route_quickack(0x7f000001);

	cr_assert(ret == 0 || ret == 1, "mbu_route_quickack(127.0.0.1): %d", ret);
}

/* The namespace's congestion control: a name without its newline, whatever
 * the buffer's size; too small a buffer is refused and changes nothing. */
Test(route, the_congestion_control_is_a_name)
{
	char name[32], small[3] = "xy";
	int ret = mbu_tcp_cc(name, sizeof(name));

	cr_assert_eq(ret, 0, "mbu_tcp_cc: %d", ret);
	cr_assert(name[0] && !strchr(name, '\n'), "'%s'", name);
	cr_assert_eq(mbu_tcp_cc(small, 1), -EINVAL);
	cr_assert_str_eq(small, "xy");
	ret = mbu_tcp_cc(small, sizeof(small));
	cr_assert(ret == 0 && strlen(small) <= 2 && !strchr(small, '\n'), "%d '%s'", ret, small);
}
