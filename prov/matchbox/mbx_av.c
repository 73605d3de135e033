/* Address vectors. FI_AV_TABLE and FI_AV_MAP behave alike here: an fi_addr_t
 * is the entry's index, which the send path turns into a peer with one array
 * load. Addresses come in the domain's format: full "mbx://" strings, or
 * listener addresses (sockaddrs, "fi_sockaddr_in://" strings) that are
 * resolved to full ones when inserted (mbx_addr.c). Entries are never reused after removal, so a stale fi_addr_t cannot
 * silently name a different peer. A reverse index (address -> fi_addr_t)
 * answers FI_SOURCE and directed receives for incoming messages. */
#include "mbx.h"

#include <stdio.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>

struct mbx_rev_slot {
	uint64_t k0, k1;
	fi_addr_t idx;
	bool used;
};
#define rev_slot mbx_rev_slot

static struct mbx_av_rev *rev_of(struct mbx_av *av)
{
	return &av->rev;
}

static int rev_init(struct mbx_av_rev *r)
{
	r->s = calloc(64, sizeof(*r->s));
	r->mask = 63;
	r->used = 0;
	return r->s ? 0 : -FI_ENOMEM;
}

static struct rev_slot *rev_find(struct mbx_av_rev *r, uint64_t k0, uint64_t k1)
{
	size_t i = mbu_hash2(k0, k1) & r->mask;

	while (r->s[i].used) {
		if (r->s[i].k0 == k0 && r->s[i].k1 == k1)
			return &r->s[i];
		i = (i + 1) & r->mask;
	}
	return &r->s[i];
}

/* Records idx for an address unless a live entry has it already; *canon
 * gets the entry that keeps it. */
static int rev_put(struct mbx_av_rev *r, uint64_t k0, uint64_t k1, fi_addr_t idx,
		   fi_addr_t *canon)
{
	struct rev_slot *s;

	if ((r->used + 1) * 2 > r->mask + 1) {
		struct mbx_av_rev n;
		size_t i;

		n.mask = (r->mask + 1) * 2 - 1;
		n.used = 0;
		n.s = calloc(n.mask + 1, sizeof(*n.s));
		if (!n.s)
			return -FI_ENOMEM;
		for (i = 0; i <= r->mask; i++)
			if (r->s[i].used)
				*rev_find(&n, r->s[i].k0, r->s[i].k1) = r->s[i], n.used++;
		free(r->s);
		*r = n;
	}
	s = rev_find(r, k0, k1);
	if (s->used && s->idx != FI_ADDR_NOTAVAIL) {
		*canon = s->idx;	/* the first live insert of an address keeps it */
		return 0;
	}
	if (!s->used)
		r->used++;
	s->used = true;
	s->k0 = k0;
	s->k1 = k1;
	s->idx = idx;
	*canon = idx;
	return 0;
}

fi_addr_t mbx_av_reverse(struct mbx_av *av, const struct mbx_addr *a)
{
	struct rev_slot *s;

	if (!av)
		return FI_ADDR_NOTAVAIL;
	s = rev_find(rev_of(av), mbx_addr_k0(a), mbx_addr_k1(a));
	return s->used ? s->idx : FI_ADDR_NOTAVAIL;
}

static int av_close(struct fid *fid)
{
	struct mbx_av *av = mbu_container_of(fid, struct mbx_av, av.fid);

	if (atomic_load(&av->refs))
		return -FI_EBUSY;
	free(rev_of(av)->s);
	free(av->tab);
	atomic_fetch_sub(&av->dom->refs, 1);
	free(av);
	return 0;
}

static int av_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mbx_av *av = mbu_container_of(fid, struct mbx_av, av.fid);

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (av->eq)
		return -FI_EBUSY;
	av->eq = mbu_container_of(bfid, struct fid_eq, fid);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = av_bind,
	.control = mbx_no_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

/* One address of an insert, decoded before the AV is locked. */
struct av_in {
	struct mbx_addr a;
	struct mbx_sockname sn;
	bool has_sn, resolved;
	int err;
};

/* A listener address must name a host and a port to be worth keeping; an
 * endpoint of this process is resolved at once, others at first use. */
static void decoded(struct av_in *in, int kind)
{
	in->has_sn = kind == MBX_ADDR_SOCKNAME;
	in->err = kind < 0 ? kind : 0;
	if (in->has_sn && (!in->sn.ip || !in->sn.port))
		in->err = -FI_EINVAL;
	in->resolved = !in->err && (!in->has_sn || mbx_name_resolve_local(&in->sn, &in->a));
}

int mbx_av_resolve_locked(struct mbx_av *av, fi_addr_t a)
{
	struct mbx_sockname sn;
	struct mbx_addr full;
	int ret;

	if (a >= av->count || !av->tab[a].valid)
		return -FI_EADDRNOTAVAIL;
	if (av->tab[a].resolved)
		return 0;
	sn = av->tab[a].sn;
	mbx_unlock(av->dom);
	ret = mbx_name_resolve(&sn, &full);
	mbx_lock(av->dom);
	/* Removed, or resolved by another thread, while we asked. */
	if (a >= av->count || !av->tab[a].valid)
		return -FI_EADDRNOTAVAIL;
	if (av->tab[a].resolved)
		return 0;
	if (ret)
		return ret == -FI_ETIMEDOUT ? -FI_EHOSTUNREACH : ret;
	ret = rev_put(rev_of(av), mbx_addr_k0(&full), mbx_addr_k1(&full), a,
		      &av->tab[a].canon);
	if (ret)
		return ret;
	av->tab[a].addr = full;
	av->tab[a].resolved = true;
	av->gen++;
	return 0;
}

static int av_commit(struct mbx_av *av, struct av_in *in, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	int *errs = (flags & FI_SYNC_ERR) ? context : NULL;
	size_t i;
	int n = 0;

	mbx_lock(av->dom);
	if (av->count + count > av->cap) {
		size_t cap = av->cap ? av->cap : 64;
		struct mbx_av_entry *t;

		while (cap < av->count + count)
			cap *= 2;
		t = realloc(av->tab, cap * sizeof(*t));
		if (!t) {
			mbx_unlock(av->dom);
			return -FI_ENOMEM;
		}
		av->tab = t;
		av->cap = cap;
	}
	for (i = 0; i < count; i++) {
		fi_addr_t idx = av->count;

		if (!in[i].err && in[i].resolved)
			in[i].err = rev_put(rev_of(av), mbx_addr_k0(&in[i].a),
					    mbx_addr_k1(&in[i].a), idx, &av->tab[idx].canon);
		if (errs)
			errs[i] = -in[i].err;
		if (in[i].err) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			if (av->event) {
				struct fi_eq_err_entry e = {
					.fid = &av->av.fid, .context = context, .data = i,
					.err = -in[i].err, .prov_errno = in[i].err,
				};

				mbx_eq_write_err(av->eq, &e);
			}
			continue;
		}
		av->tab[idx].addr = in[i].a;
		av->tab[idx].sn = in[i].sn;
		av->tab[idx].has_sn = in[i].has_sn;
		av->tab[idx].resolved = in[i].resolved;
		av->tab[idx].valid = true;
		av->count++;
		if (fi_addr)
			fi_addr[i] = idx;
		n++;
	}
	av->gen++;
	mbx_unlock(av->dom);
	if (av->event) {
		/* An AV opened with FI_EVENT reports the outcome on its EQ. */
		struct fi_eq_entry e = { .fid = &av->av.fid, .context = context, .data = (uint64_t)n };

		fi_eq_write(av->eq, FI_AV_COMPLETE, &e, sizeof(e), 0);
		return 0;
	}
	return n;
}

static int check_flags(struct mbx_av *av, uint64_t flags, void *context)
{
	if (flags & ~(uint64_t)(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	if ((flags & FI_SYNC_ERR) && (!context || av->event))
		return -FI_EINVAL;
	if (av->event && !av->eq)
		return -FI_ENOEQ;
	return 0;
}

static int av_insert(struct fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	size_t stride = mbx_addr_stride(av->fmt);
	const char *p = addr;
	struct av_in *in;
	size_t i;
	int ret;

	if (!addr && count)
		return -FI_EINVAL;
	ret = check_flags(av, flags, context);
	if (ret)
		return ret;
	in = calloc(count ? count : 1, sizeof(*in));
	if (!in)
		return -FI_ENOMEM;
	/* Strings come packed, each NUL-terminated. Every full matchbox
	 * address has the same length (MBX_ADDR_LEN), so callers that instead
	 * use the fi_getname length as a fixed stride land on the same bytes.
	 * Sockaddrs come at their format's fixed size. */
	for (i = 0; i < count; i++) {
		size_t len = stride ? stride : strnlen(p, MBX_NAME_MAX) + 1;

		if (!stride && len > MBX_NAME_MAX) {
			/* No terminator: the rest cannot be located safely. */
			for (; i < count; i++)
				in[i].err = -FI_EINVAL;
			break;
		}
		if (av->fmt == FI_SOCKADDR && ((const struct sockaddr *)p)->sa_family == AF_INET)
			len = sizeof(struct sockaddr_in);
		decoded(&in[i], mbx_addr_decode(p, len, av->fmt, &in[i].a, &in[i].sn));
		p += len;
	}
	ret = av_commit(av, in, count, fi_addr, flags, context);
	free(in);
	return ret;
}

static int av_insertsvc(struct fid_av *fav, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	struct av_in in = { .err = 0 };
	int ret;

	if (!node || !service)
		return -FI_EINVAL;
	ret = check_flags(av, flags, context);
	if (ret)
		return ret;
	ret = mbx_sockname_lookup(node, service, false, &in.sn);
	decoded(&in, ret ? -FI_EINVAL : MBX_ADDR_SOCKNAME);
	return av_commit(av, &in, 1, fi_addr, flags, context);
}

/* fi_av_insertsym: nodecnt consecutive IPv4 addresses from `node`, each
 * with svccnt consecutive ports from `service`, in that order. */
static int av_insertsym(struct fid_av *fav, const char *node, size_t nodecnt,
			const char *service, size_t svccnt, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	struct mbx_sockname base;
	struct av_in *in;
	size_t i, j;
	int ret;

	if (!node || !service || !nodecnt || !svccnt || nodecnt > 65536 || svccnt > 65536)
		return -FI_EINVAL;
	ret = check_flags(av, flags, context);
	if (ret)
		return ret;
	ret = mbx_sockname_lookup(node, service, false, &base);
	if (ret)
		return -FI_EINVAL;
	if ((uint64_t)base.port + svccnt - 1 > 65535 ||
	    (uint64_t)base.ip + nodecnt - 1 > UINT32_MAX)
		return -FI_EINVAL;
	in = calloc(nodecnt * svccnt, sizeof(*in));
	if (!in)
		return -FI_ENOMEM;
	for (i = 0; i < nodecnt; i++) {
		for (j = 0; j < svccnt; j++) {
			struct av_in *e = &in[i * svccnt + j];

			e->sn.ip = base.ip + (uint32_t)i;
			e->sn.port = (uint16_t)(base.port + j);
			decoded(e, MBX_ADDR_SOCKNAME);
		}
	}
	ret = av_commit(av, in, nodecnt * svccnt, fi_addr, flags, context);
	free(in);
	return ret;
}

/* The entry that kept an address was removed: a later live insert of the same
 * address takes over, and every live copy is reported under it, so a directed
 * receive on a copy still matches. Removal is rare; a scan is fine. */
static fi_addr_t rehome(struct mbx_av *av, const struct mbx_addr *a)
{
	fi_addr_t i, to = FI_ADDR_NOTAVAIL;

	for (i = 0; i < av->count; i++) {
		struct mbx_av_entry *e = &av->tab[i];

		if (!e->valid || !e->resolved || mbx_addr_k0(&e->addr) != mbx_addr_k0(a) ||
		    mbx_addr_k1(&e->addr) != mbx_addr_k1(a))
			continue;
		if (to == FI_ADDR_NOTAVAIL)
			to = i;
		e->canon = to;
	}
	return to;
}

static int av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	size_t i;
	int ret = 0;

	if (!fi_addr && count)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	mbx_lock(av->dom);
	for (i = 0; i < count; i++) {
		if (fi_addr[i] >= av->count || !av->tab[fi_addr[i]].valid) {
			ret = -FI_EINVAL;
			continue;
		}
		struct mbx_av_entry *e = &av->tab[fi_addr[i]];
		struct rev_slot *s = rev_find(rev_of(av), mbx_addr_k0(&e->addr),
					      mbx_addr_k1(&e->addr));

		e->valid = false;
		if (e->resolved && s->used && s->idx == fi_addr[i])
			s->idx = rehome(av, &e->addr);
	}
	av->gen++;
	mbx_unlock(av->dom);
	return ret;
}

static int av_lookup(struct fid_av *fav, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	char buf[MBX_NAME_MAX];
	int n, ret = 0;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	mbx_lock(av->dom);
	if (fi_addr >= av->count || !av->tab[fi_addr].valid) {
		mbx_unlock(av->dom);
		return -FI_EINVAL;
	}
	if (mbx_addr_stride(av->fmt)) {
		/* A sockaddr AV hands back the listener address it was given. */
		struct mbx_sockname sn = av->tab[fi_addr].sn;
		bool has = av->tab[fi_addr].has_sn;

		mbx_unlock(av->dom);
		if (!has)
			return -FI_EADDRNOTAVAIL;
		return mbx_addr_encode(&sn, av->fmt, addr, addrlen);
	}
	ret = mbx_av_resolve_locked(av, fi_addr);
	if (ret) {
		mbx_unlock(av->dom);
		return ret;
	}
	n = mbx_format_addr(&av->tab[fi_addr].addr, buf, sizeof(buf));
	mbx_unlock(av->dom);
	if (n < 0)
		return n;
	if (*addrlen < (size_t)n)
		ret = -FI_ETOOSMALL;
	memcpy(addr, buf, *addrlen < (size_t)n ? *addrlen : (size_t)n);
	*addrlen = (size_t)n;
	return ret;
}

static const char *av_straddr(struct fid_av *fav, const void *addr, char *buf, size_t *len)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	struct mbx_sockname sn;
	struct mbx_addr a;
	int n;

	if (!buf || !len || !*len)
		return NULL;
	if (addr && mbx_addr_stride(av->fmt)) {
		char tmp[128];
		size_t tl = sizeof(tmp);

		if (mbx_addr_decode(addr, mbx_addr_stride(av->fmt), av->fmt, &a, &sn) !=
			    MBX_ADDR_SOCKNAME ||
		    mbx_addr_encode(&sn, FI_ADDR_STR, tmp, &tl))
			snprintf(tmp, sizeof(tmp), "(invalid)"), tl = sizeof("(invalid)");
		snprintf(buf, *len, "%s", tmp);
		*len = tl;
		return buf;
	}
	if (addr && !mbx_parse_addr(addr, strnlen(addr, MBX_NAME_MAX) + 1, &a)) {
		/* full address: below */
	} else if (addr && mbx_addr_decode(addr, strnlen(addr, MBX_NAME_MAX) + 1, FI_ADDR_STR,
					   &a, &sn) == MBX_ADDR_SOCKNAME) {
		n = snprintf(buf, *len, "%s", (const char *)addr);
		*len = (size_t)n + 1;
		return buf;
	}
	if (!addr || mbx_parse_addr(addr, strnlen(addr, MBX_NAME_MAX) + 1, &a)) {
		snprintf(buf, *len, "(invalid)");
		*len = sizeof("(invalid)");
		return buf;
	}
	n = mbx_format_addr(&a, buf, *len);
	if (n < 0) {
		char tmp[MBX_NAME_MAX];

		n = mbx_format_addr(&a, tmp, sizeof(tmp));
		memcpy(buf, tmp, *len - 1);
		buf[*len - 1] = '\0';
	}
	*len = (size_t)n;
	return buf;
}

static int av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **s,
		  void *context)
{
	(void)av; (void)attr; (void)s; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = av_set,
};

int mbx_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **fav,
		void *context)
{
	struct mbx_domain *d = mbu_container_of(domain, struct mbx_domain, domain);
	struct mbx_av *av;

	if (!attr || !fav)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_TABLE && attr->type != FI_AV_MAP)
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)(FI_SYMMETRIC | FI_EVENT))
		return -FI_EBADFLAGS;
	if (attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	if (rev_init(rev_of(av))) {
		free(av);
		return -FI_ENOMEM;
	}
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	av->event = attr->flags & FI_EVENT;
	av->fmt = d->info->addr_format ? d->info->addr_format : FI_ADDR_STR;
	av->dom = d;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	atomic_fetch_add(&d->refs, 1);
	*fav = &av->av;
	return 0;
}
