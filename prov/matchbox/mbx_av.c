/* Address vectors. FI_AV_TABLE and FI_AV_MAP behave alike here: an fi_addr_t
 * is the entry's index, which the send path turns into a peer with one array
 * load. Entries are never reused after removal, so a stale fi_addr_t cannot
 * silently name a different peer. A reverse index (address -> fi_addr_t)
 * answers FI_SOURCE and directed receives for incoming messages. */
#include "mbx.h"

#include <stdio.h>
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

static int rev_put(struct mbx_av_rev *r, uint64_t k0, uint64_t k1, fi_addr_t idx)
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
	if (s->used && s->idx != FI_ADDR_NOTAVAIL)
		return 0;	/* the first live insert of an address keeps it */
	if (!s->used)
		r->used++;
	s->used = true;
	s->k0 = k0;
	s->k1 = k1;
	s->idx = idx;
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

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = mbx_no_bind,
	.control = mbx_no_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static int av_insert(struct fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct mbx_av *av = mbu_container_of(fav, struct mbx_av, av);
	const char *p = addr;
	size_t i;
	int n = 0;

	(void)context;
	if (!addr && count)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_MORE)
		return -FI_EBADFLAGS;
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
	/* Several addresses come packed, each NUL-terminated. Every matchbox
	 * address has the same length (MBX_ADDR_LEN), so callers that instead
	 * use the fi_getname length as a fixed stride land on the same bytes. */
	for (i = 0; i < count; i++) {
		const char *s = p;
		struct mbx_addr a;
		size_t len = strnlen(s, MBX_NAME_MAX) + 1;
		fi_addr_t idx = av->count;

		if (len > MBX_NAME_MAX) {
			/* No terminator: the rest cannot be located safely. */
			for (; i < count; i++)
				if (fi_addr)
					fi_addr[i] = FI_ADDR_NOTAVAIL;
			break;
		}
		p += len;
		if (mbx_parse_addr(s, len, &a)) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			continue;
		}
		if (rev_put(rev_of(av), mbx_addr_k0(&a), mbx_addr_k1(&a), idx)) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			continue;
		}
		av->tab[idx].addr = a;
		av->tab[idx].valid = true;
		av->count++;
		if (fi_addr)
			fi_addr[i] = idx;
		n++;
	}
	av->gen++;
	mbx_unlock(av->dom);
	return n;
}

static int av_insertsvc(struct fid_av *av, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)service;
	if (!node)
		return -FI_EINVAL;
	return av_insert(av, node, 1, fi_addr, flags, context);
}

static int av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			const char *service, size_t svccnt, fi_addr_t *fi_addr,
			uint64_t flags, void *context)
{
	(void)av; (void)node; (void)nodecnt; (void)service; (void)svccnt;
	(void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
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

		if (s->used && s->idx == fi_addr[i])
			s->idx = FI_ADDR_NOTAVAIL;
		e->valid = false;
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

static const char *av_straddr(struct fid_av *av, const void *addr, char *buf, size_t *len)
{
	struct mbx_addr a;
	int n;

	(void)av;
	if (!buf || !len || !*len)
		return NULL;
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
	if (attr->flags & ~(uint64_t)(FI_SYMMETRIC))
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
	av->dom = d;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	atomic_fetch_add(&d->refs, 1);
	*fav = &av->av;
	return 0;
}
