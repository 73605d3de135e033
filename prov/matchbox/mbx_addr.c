/* Addresses: an endpoint's identity (host, user, process, endpoint, job,
 * net wire address) and its text form, the FI_ADDR_STR "mbx://" string that
 * fi_getname hands out and fi_av_insert takes. */
#include "mbx.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mbu_futex.h"

uint32_t mbx_fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

uint32_t mbx_host_id(void)
{
	static uint32_t id;
	char host[256] = "";

	if (!id) {
		struct stat st;
		size_t n;

		/* A host is a kernel and a network namespace: processes in other
		 * namespaces share our /dev/shm but stand for other nodes (the
		 * test cluster of tests/netns/), so they must not be reached by shm. */
		gethostname(host, sizeof(host) - 32);
		n = strlen(host);
		if (!stat("/proc/self/ns/net", &st))
			snprintf(host + n, sizeof(host) - n, "/%llu", (unsigned long long)st.st_ino);
		id = mbx_fnv1a(host) | 1;
	}
	return id;
}

uint32_t mbx_job_id(void)
{
	return mbx_fnv1a(mbx_param.job);
}

int mbx_format_addr(const struct mbx_addr *a, char *buf, size_t len)
{
	int n = snprintf(buf, len, "mbx://%08x%08x%08x%08x%08x%08x%08x", a->host, a->uid,
			 (uint32_t)a->pid, a->ep, a->job, a->ip, a->ports);

	return n < 0 || (size_t)n >= len ? -FI_ETOOSMALL : n + 1;
}

static int parse_hex32(const char **p, uint32_t *out, char stop)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (isxdigit((unsigned char)*s) && n < 9) {
		v = v * 16 + (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' :
					(tolower((unsigned char)*s) - 'a' + 10));
		s++;
		n++;
	}
	if (n != 8 || *s != stop)
		return -FI_EINVAL;
	*out = (uint32_t)v;
	*p = s + (stop ? 1 : 0);
	return 0;
}

int mbx_parse_addr(const void *addr, size_t len, struct mbx_addr *out)
{
	const char *s = addr, *p;
	struct mbx_addr a;
	uint32_t pid;

	if (!addr || len < 8 || len > MBX_NAME_MAX || !memchr(s, '\0', len))
		return -FI_EINVAL;
	if (strncmp(s, "mbx://", 6))
		return -FI_EINVAL;
	p = s + 6;
	memset(&a, 0, sizeof(a));
	if (strlen(p) == 56) {
		uint32_t *f[7] = { &a.host, &a.uid, &pid, &a.ep, &a.job, &a.ip, &a.ports };
		char field[9];
		int i;

		for (i = 0; i < 7; i++) {
			const char *q = field;

			memcpy(field, p + 8 * i, 8);
			field[8] = '\0';
			if (parse_hex32(&q, f[i], '\0'))
				return -FI_EINVAL;
		}
	} else if (parse_hex32(&p, &a.host, ':') || parse_hex32(&p, &a.uid, ':') ||
		   parse_hex32(&p, &pid, ':') || parse_hex32(&p, &a.ep, ':') ||
		   parse_hex32(&p, &a.job, '\0')) {
		/* The older colon form names a same-host endpoint only. */
		return -FI_EINVAL;
	}
	a.pid = (int32_t)pid;
	if (a.pid <= 0)
		return -FI_EINVAL;
	*out = a;
	return 0;
}

void mbx_shm_name(const struct mbx_addr *a, char *buf, size_t len)
{
	snprintf(buf, len, "/mbx-%u-%d-%x-%x", a->uid, a->pid, a->job, a->ep);
}

/* ---- listener addresses and the name service ----
 *
 * Programs written for sockets-style providers name a peer by IP and port
 * (fi_getinfo node/service, FI_SOCKADDR_IN, fi_av_insertsvc). A matchbox
 * endpoint's identity is more than that (process, endpoint, job), so every
 * endpoint also owns a small kernel UDP socket, its name service, bound to
 * the address it was opened with (info->src_addr) or to an ephemeral port.
 * Inserting an IP:port into an AV asks that socket for the full "mbx://"
 * address (a request and an answer, retried until FI_MATCHBOX_RESOLVE_MS);
 * from then on the peer is an ordinary matchbox peer, reached by shm when it
 * is on this host and by the net wire otherwise. The socket is plain UDP
 * rather than a core provider's endpoint so that it works whichever core
 * carries the data (verbs UD has no ports). Answers are given from the
 * endpoint's progress; an endpoint of this process is answered from a
 * process-wide list instead, since its progress cannot run while the
 * inserting thread waits. */

#define WHOIS_MAGIC	0x6d627877u	/* "mbxw" */
#define WHOIS_VERSION	1u
enum { WHOIS_ASK = 1, WHOIS_ANSWER = 2, WHOIS_REFUSED = 3 };

struct whois {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t nonce;
	uint32_t job;		/* the asker's job: other jobs are refused */
	char name[MBX_NAME_MAX];	/* answer: the full address */
};

struct local_name {
	struct mbu_dlist link;
	int fd;
	struct mbx_sockname sn;	/* as bound: ip 0 is every local address */
	uint32_t adv_ip;	/* the net wire's address, also answered for ip 0 */
	struct mbx_addr addr;
};

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mbu_dlist names = { &names, &names };

static bool is_loopback(uint32_t ip)
{
	return (ip >> 24) == 127;
}

bool mbx_addr_format_ok(uint32_t fmt)
{
	return fmt == FI_FORMAT_UNSPEC || fmt == FI_ADDR_STR || fmt == FI_SOCKADDR ||
	       fmt == FI_SOCKADDR_IN || fmt == FI_SOCKADDR_IN6;
}

size_t mbx_addr_stride(uint32_t fmt)
{
	switch (fmt) {
	case FI_SOCKADDR_IN:
		return sizeof(struct sockaddr_in);
	case FI_SOCKADDR_IN6:
	case FI_SOCKADDR:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;	/* strings: each ends at its NUL */
	}
}

static int from_sockaddr(const void *addr, size_t len, struct mbx_sockname *sn)
{
	const struct sockaddr *sa = addr;

	if (len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = addr;

		sn->ip = ntohl(sin->sin_addr.s_addr);
		sn->port = ntohs(sin->sin_port);
		return 0;
	}
	if (len >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = addr;

		/* The net wire is IPv4: a v6 name is usable when it is an
		 * IPv4-mapped address or the loopback. */
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			memcpy(&sn->ip, &s6->sin6_addr.s6_addr[12], 4), sn->ip = ntohl(sn->ip);
		else if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			sn->ip = INADDR_LOOPBACK;
		else if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr))
			sn->ip = 0;
		else
			return -FI_EADDRNOTAVAIL;
		sn->port = ntohs(s6->sin6_port);
		return 0;
	}
	return -FI_EINVAL;
}

static int parse_sockname_str(const char *s, struct mbx_sockname *sn)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	char *end;
	unsigned long port;
	size_t hl;
	bool v6 = false;

	if (!strncmp(s, "fi_sockaddr_in://", 17)) {
		s += 17;
	} else if (!strncmp(s, "fi_sockaddr_in6://", 18)) {
		s += 18;
		v6 = true;
	} else {
		return -FI_EINVAL;
	}
	if (v6) {
		const char *close = strchr(s, ']');

		if (*s != '[' || !close || close[1] != ':')
			return -FI_EINVAL;
		hl = (size_t)(close - s - 1);
		s++;
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -FI_EINVAL;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host))
		return -FI_EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port > 65535)
		return -FI_EINVAL;
	if (v6) {
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };

		if (inet_pton(AF_INET6, host, &s6.sin6_addr) != 1)
			return -FI_EINVAL;
		return from_sockaddr(&s6, sizeof(s6), sn);
	}
	{
		struct in_addr in;

		if (inet_pton(AF_INET, host, &in) != 1)
			return -FI_EINVAL;
		sn->ip = ntohl(in.s_addr);
		sn->port = (uint16_t)port;
	}
	return 0;
}

int mbx_addr_decode(const void *addr, size_t len, uint32_t fmt, struct mbx_addr *full,
		    struct mbx_sockname *sn)
{
	const char *s = addr;

	if (!addr || !len)
		return -FI_EINVAL;
	if (fmt == FI_FORMAT_UNSPEC)
		fmt = memchr(s, '\0', len < MBX_NAME_MAX ? len : MBX_NAME_MAX) &&
		      (!strncmp(s, "mbx://", 6) || !strncmp(s, "fi_", 3)) ? FI_ADDR_STR : FI_SOCKADDR;
	if (fmt != FI_ADDR_STR)
		return from_sockaddr(addr, len, sn) ? -FI_EINVAL : MBX_ADDR_SOCKNAME;
	if (!memchr(s, '\0', len < MBX_NAME_MAX ? len : MBX_NAME_MAX))
		return -FI_EINVAL;
	if (!mbx_parse_addr(s, len, full))
		return MBX_ADDR_FULL;
	return parse_sockname_str(s, sn) ? -FI_EINVAL : MBX_ADDR_SOCKNAME;
}

int mbx_addr_encode(const struct mbx_sockname *sn, uint32_t fmt, void *buf, size_t *len)
{
	char str[64];
	size_t need;
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} u;
	const void *src = &u;

	memset(&u, 0, sizeof(u));
	switch (fmt) {
	case FI_SOCKADDR_IN:
	case FI_SOCKADDR:
		u.in.sin_family = AF_INET;
		u.in.sin_addr.s_addr = htonl(sn->ip);
		u.in.sin_port = htons(sn->port);
		need = sizeof(u.in);
		break;
	case FI_SOCKADDR_IN6:
		u.in6.sin6_family = AF_INET6;
		u.in6.sin6_port = htons(sn->port);
		if (sn->ip) {
			uint32_t be = htonl(sn->ip);

			u.in6.sin6_addr.s6_addr[10] = 0xff;
			u.in6.sin6_addr.s6_addr[11] = 0xff;
			memcpy(&u.in6.sin6_addr.s6_addr[12], &be, 4);
		}
		need = sizeof(u.in6);
		break;
	default: {
		struct in_addr in = { .s_addr = htonl(sn->ip) };
		char ip[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &in, ip, sizeof(ip));
		need = (size_t)snprintf(str, sizeof(str), "fi_sockaddr_in://%s:%u", ip,
					(unsigned)sn->port) + 1;
		src = str;
		break;
	}
	}
	if (!buf || *len < need) {
		*len = need;
		return -FI_ETOOSMALL;
	}
	memcpy(buf, src, need);
	*len = need;
	return 0;
}

int mbx_sockname_lookup(const char *node, const char *service, bool passive,
			struct mbx_sockname *sn)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *res;
	int ret;

	if (passive)
		hints.ai_flags = AI_PASSIVE;
	ret = getaddrinfo(node, service ? service : "0", &hints, &res);
	if (ret) {
		MBX_INFO(FI_LOG_CORE, "%s:%s: %s\n", node ? node : "*", service ? service : "0",
			 gai_strerror(ret));
		return -FI_ENODATA;
	}
	ret = from_sockaddr(res->ai_addr, res->ai_addrlen, sn);
	freeaddrinfo(res);
	return ret ? -FI_ENODATA : 0;
}

int mbx_name_open(struct mbx_ep *ep, const struct mbx_sockname *want)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sin);
	struct local_name *ln;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		MBX_WARN(FI_LOG_EP_CTRL, "name service socket: %s\n", strerror(errno));
		return -FI_EOTHER;
	}
	sin.sin_addr.s_addr = htonl(want ? want->ip : 0);
	sin.sin_port = htons(want ? want->port : 0);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen)) {
		int err = errno;

		MBX_WARN(FI_LOG_EP_CTRL, "name service at %08x:%u: %s\n",
			 want ? want->ip : 0, want ? want->port : 0, strerror(err));
		close(fd);
		return err == EADDRINUSE ? -FI_EADDRINUSE :
		       err == EADDRNOTAVAIL ? -FI_EADDRNOTAVAIL : -FI_EOTHER;
	}
	ln = calloc(1, sizeof(*ln));
	if (!ln) {
		close(fd);
		return -FI_ENOMEM;
	}
	ep->name_fd = fd;
	ep->sname.ip = ntohl(sin.sin_addr.s_addr);
	ep->sname.port = ntohs(sin.sin_port);
	ln->fd = fd;
	ln->sn = ep->sname;
	ln->adv_ip = ep->addr.ip;
	ln->addr = ep->addr;
	ep->name_entry = ln;
	pthread_mutex_lock(&names_lock);
	mbu_dlist_insert_tail(&ln->link, &names);
	pthread_mutex_unlock(&names_lock);
	return 0;
}

/* setname changes the endpoint number: what the list answers follows. */
void mbx_name_update(struct mbx_ep *ep)
{
	if (!ep->name_entry)
		return;
	pthread_mutex_lock(&names_lock);
	ep->name_entry->addr = ep->addr;
	pthread_mutex_unlock(&names_lock);
}

void mbx_name_close(struct mbx_ep *ep)
{
	if (ep->name_entry) {
		pthread_mutex_lock(&names_lock);
		mbu_dlist_remove(&ep->name_entry->link);
		pthread_mutex_unlock(&names_lock);
		free(ep->name_entry);
		ep->name_entry = NULL;
	}
	if (ep->name_fd > 0)
		close(ep->name_fd);
	ep->name_fd = -1;
}

void mbx_name_own(const struct mbx_ep *ep, struct mbx_sockname *sn)
{
	*sn = ep->sname;
	if (!sn->ip)
		sn->ip = ep->addr.ip ? ep->addr.ip : INADDR_LOOPBACK;
}

/* Answers what waits on one name socket; names_lock held. */
static void answer(struct local_name *ln)
{
	struct whois q, a;
	struct sockaddr_storage from;
	socklen_t flen;
	ssize_t n;
	int budget = 16;

	while (budget--) {
		flen = sizeof(from);
		n = recvfrom(ln->fd, &q, sizeof(q), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
		if (n < 0)
			return;
		if ((size_t)n != sizeof(q) || q.magic != WHOIS_MAGIC ||
		    q.version != WHOIS_VERSION || q.type != WHOIS_ASK)
			continue;	/* not ours: nothing is answered to it */
		memset(&a, 0, sizeof(a));
		a.magic = WHOIS_MAGIC;
		a.version = WHOIS_VERSION;
		a.nonce = q.nonce;
		a.job = ln->addr.job;
		if (q.job != ln->addr.job) {
			a.type = WHOIS_REFUSED;
		} else {
			a.type = WHOIS_ANSWER;
			mbx_format_addr(&ln->addr, a.name, sizeof(a.name));
		}
		(void)sendto(ln->fd, &a, sizeof(a), 0, (struct sockaddr *)&from, flen);
	}
}

void mbx_name_poll(struct mbx_ep *ep)
{
	if (!ep->name_entry)
		return;
	pthread_mutex_lock(&names_lock);
	answer(ep->name_entry);
	pthread_mutex_unlock(&names_lock);
}

/* While this thread waits for an answer, the endpoints of this process
 * answer others: two processes resolving each other at once would
 * otherwise both wait out the timeout. */
static void answer_all(void)
{
	struct mbu_dlist *it;

	pthread_mutex_lock(&names_lock);
	mbu_dlist_foreach(&names, it)
		answer(mbu_container_of(it, struct local_name, link));
	pthread_mutex_unlock(&names_lock);
}

bool mbx_name_resolve_local(const struct mbx_sockname *sn, struct mbx_addr *out)
{
	struct mbu_dlist *it;
	bool found = false;

	pthread_mutex_lock(&names_lock);
	mbu_dlist_foreach(&names, it) {
		struct local_name *ln = mbu_container_of(it, struct local_name, link);

		if (ln->sn.port != sn->port)
			continue;
		if (ln->sn.ip == sn->ip ||
		    (!ln->sn.ip && (is_loopback(sn->ip) || sn->ip == ln->adv_ip))) {
			*out = ln->addr;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return found;
}

int mbx_name_resolve(const struct mbx_sockname *sn, struct mbx_addr *out)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct whois q = { .magic = WHOIS_MAGIC, .version = WHOIS_VERSION, .type = WHOIS_ASK };
	uint64_t deadline, next = 0;
	int fd, ret = -FI_ETIMEDOUT;

	if (!sn->port)
		return -FI_EADDRNOTAVAIL;
	if (mbx_name_resolve_local(sn, out))
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -FI_EOTHER;
	to.sin_addr.s_addr = htonl(sn->ip);
	to.sin_port = htons(sn->port);
	q.job = mbx_job_id();
	q.nonce = (uint32_t)mbu_now_ns() ^ (uint32_t)getpid() << 12;
	deadline = mbu_now_ns() + mbx_param.resolve_ms * 1000000ULL;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = mbu_now_ns();
		struct whois a;

		if (now >= deadline)
			break;
		if (now >= next) {
			/* A refused send (nobody there yet) is retried like a lost one. */
			(void)sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&to, sizeof(to));
			next = now + 50000000ULL;
		}
		answer_all();
		if (poll(&pfd, 1, 5) <= 0)
			continue;
		if (recv(fd, &a, sizeof(a), MSG_DONTWAIT) != (ssize_t)sizeof(a) ||
		    a.magic != WHOIS_MAGIC || a.version != WHOIS_VERSION || a.nonce != q.nonce)
			continue;
		if (a.type == WHOIS_REFUSED) {
			MBX_WARN(FI_LOG_AV, "%08x:%u belongs to another job\n", sn->ip, sn->port);
			ret = -FI_EACCES;
			break;
		}
		a.name[MBX_NAME_MAX - 1] = '\0';
		if (a.type != WHOIS_ANSWER || mbx_parse_addr(a.name, sizeof(a.name), out) ||
		    out->job != q.job)
			continue;	/* malformed: nothing trusted from it */
		ret = 0;
		break;
	}
	close(fd);
	if (ret == -FI_ETIMEDOUT)
		MBX_WARN(FI_LOG_AV, "no matchbox endpoint answered at %08x:%u within %zu ms\n",
			 sn->ip, sn->port, mbx_param.resolve_ms);
	return ret;
}
