/* Whether this host's route to an IPv4 address acknowledges TCP data as it
 * arrives (`ip route ... quickack 1`, the RTAX_QUICKACK metric), asked of
 * the kernel by rtnetlink as `ip route get` does. Linux's default is to
 * delay acknowledgements, and a reader that finds one still owed sends it
 * from its own recv; matchbox's connection rings put a lone frame over
 * libfabric's tcp into that state, so whether the route acknowledges at
 * once decides whether a ping-pong's frames may go into the ring
 * (prov/matchbox/mbx_net.c). The reply's parser stands alone so that the
 * unit test can hand it replies of its own, well-formed and not. */
#ifndef MBU_ROUTE_H
#define MBU_ROUTE_H

#include <stddef.h>
#include <stdint.h>

/* `ip` in host byte order. 1: the route acknowledges at once; 0: it
 * delays (no metric, or 0); a negative errno when the kernel could not be
 * asked or gave no route. Blocks for at most about 100 ms. */
int mbu_route_quickack(uint32_t ip);

/* The same answer from an rtnetlink reply of `len` bytes: 1 or 0 as above,
 * -ENOENT for an error reply or no route in it, -EINVAL for a reply whose
 * lengths do not fit; nothing past `len` is read. */
int mbu_route_parse_quickack(const void *reply, size_t len);

/* This network namespace's TCP congestion control for new connections
 * (/proc/sys/net/ipv4/tcp_congestion_control), into name (len bytes, at
 * least 2): 0, or a negative errno with name empty. How large a read over
 * libfabric's tcp may be follows from it: bbr paces a large response by a
 * bandwidth estimate that a ping-pong's small messages keep low. */
int mbu_tcp_cc(char *name, size_t len);

#endif
