/* Memory registration: fi_mr_reg/regv/regattr, the domain's key table, and
 * the check an RMA target makes before it touches a byte. Keys are the
 * caller's (mr_mode without FI_MR_PROV_KEY: a key already in use is
 * refused) or chosen here. Remote addresses are virtual addresses with
 * FI_MR_VIRT_ADDR, else offsets from the region's start plus the
 * registration's `offset`. */
#include "mbx.h"
#include "mbx_net.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(const struct mbx_mr_table *t, uint64_t key)
{
	return mbu_hash2(key, 0x6d72) & t->mask;
}

static struct mbx_mr *table_find(const struct mbx_mr_table *t, uint64_t key)
{
	size_t i;

	if (!t->slot)
		return NULL;
	for (i = slot_of(t, key); t->slot[i]; i = (i + 1) & t->mask)
		if (t->slot[i] != MBX_MR_TOMB && t->slot[i]->mr.key == key)
			return t->slot[i];
	return NULL;
}

static int table_put(struct mbx_mr_table *t, struct mbx_mr *mr)
{
	size_t i;

	if (!t->slot || (t->used + 1) * 2 > t->mask + 1) {
		struct mbx_mr_table n = { .mask = t->slot ? (t->mask + 1) * 2 - 1 : 63 };

		n.slot = calloc(n.mask + 1, sizeof(*n.slot));
		if (!n.slot)
			return -FI_ENOMEM;
		for (i = 0; t->slot && i <= t->mask; i++)
			if (t->slot[i] && t->slot[i] != MBX_MR_TOMB)
				table_put(&n, t->slot[i]);
		free(t->slot);
		*t = n;
	}
	for (i = slot_of(t, mr->mr.key); t->slot[i] && t->slot[i] != MBX_MR_TOMB; i = (i + 1) & t->mask)
		;
	if (!t->slot[i])
		t->used++;
	t->slot[i] = mr;
	return 0;
}

static void table_del(struct mbx_mr_table *t, struct mbx_mr *mr)
{
	size_t i;

	for (i = slot_of(t, mr->mr.key); t->slot[i]; i = (i + 1) & t->mask) {
		if (t->slot[i] == mr) {
			t->slot[i] = MBX_MR_TOMB;
			return;
		}
	}
}

void mbx_mr_table_fini(struct mbx_mr_table *t)
{
	free(t->slot);
	t->slot = NULL;
}

int mbx_mr_check(struct mbx_domain *d, uint64_t key, uint64_t addr, uint64_t len,
		 uint64_t access, struct iovec *iov, size_t *cnt, struct mbx_mr **mrp)
{
	struct mbx_mr *mr = table_find(&d->mrs, key);
	uint64_t off, base;
	size_t i, n = 0;

	/* A zero-length access names no memory (it is how CQ data alone is
	 * sent, or a read used as a flush): never refused, and attributed to
	 * the region only if the key names one that allows it. */
	if (!len) {
		*cnt = 0;
		if (mrp)
			*mrp = mr && (mr->access & access) == access ? mr : NULL;
		return 0;
	}
	if (!mr)
		return FI_EKEYREJECTED;
	if ((mr->access & access) != access)
		return FI_EACCES;
	base = (d->mr_mode & FI_MR_VIRT_ADDR) ?
	       (uint64_t)(uintptr_t)(mr->iov_cnt ? mr->iov[0].iov_base : NULL) : mr->offset;
	/* Outside the region is as forbidden as the wrong access, and is
	 * reported the same way, as libfabric's own providers do. */
	if (addr < base || addr - base > mr->len || len > mr->len - (addr - base))
		return FI_EACCES;
	off = addr - base;
	for (i = 0; i < mr->iov_cnt && len; i++) {
		size_t seg = mr->iov[i].iov_len;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		if (n == MBX_IOV_LIMIT)
			return FI_EINVAL;
		iov[n].iov_base = (char *)mr->iov[i].iov_base + off;
		iov[n].iov_len = seg - off < len ? seg - off : len;
		len -= iov[n].iov_len;
		off = 0;
		n++;
	}
	*cnt = n;
	if (mrp)
		*mrp = mr;
	return 0;
}

static int mr_close(struct fid *fid)
{
	struct mbx_mr *mr = mbu_container_of(fid, struct mbx_mr, mr.fid);
	struct mbx_domain *d = mr->dom;

	mbx_lock(d);
	/* No initiator may reach the memory by CMA once this returns, nor
	 * through a net wire's core (those told the key are told it is
	 * withdrawn, ahead of anything we send them later). */
	mbx_kt_withdraw(d, mr);
	mbx_net_mr_revoke(mr);
	table_del(&d->mrs, mr);
	mbx_unlock(d);
	if (mr->cntr)
		atomic_fetch_sub(&mr->cntr->refs, 1);
	atomic_fetch_sub(&d->refs, 1);
	free(mr);
	return 0;
}

static int mr_control(struct fid *fid, int cmd, void *arg)
{
	(void)fid; (void)arg;
	return cmd == FI_ENABLE ? 0 : -FI_ENOSYS;
}

/* FI_RMA_EVENT: a counter that counts the remote reads and writes of this
 * region. */
static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mbx_mr *mr = mbu_container_of(fid, struct mbx_mr, mr.fid);
	struct mbx_cntr *c;

	if (!bfid || bfid->fclass != FI_CLASS_CNTR)
		return -FI_EINVAL;
	if (!flags || (flags & ~(uint64_t)(FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return -FI_EBADFLAGS;
	c = mbu_container_of(bfid, struct mbx_cntr, cntr.fid);
	if (c->dom != mr->dom)
		return -FI_EINVAL;
	if (mr->cntr)
		return -FI_EALREADY;
	mbx_lock(mr->dom);
	mr->cntr = c;
	mr->cntr_flags = flags;
	/* From now on every access must pass through us to be counted. */
	if (mr->kt_idx >= 0)
		mbu_keytab_set_flags(&mr->dom->kt, mr->kt_idx, MBU_KT_OWNER);
	mbx_net_mr_revoke(mr);
	atomic_fetch_add(&c->refs, 1);
	mbx_unlock(mr->dom);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mr_bind,
	.control = mr_control,
	.ops_open = mbx_no_ops_open,
	.tostr = mbx_no_tostr,
	.ops_set = mbx_no_ops_set,
};

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **out)
{
	struct mbx_domain *d = mbu_container_of(fid, struct mbx_domain, domain.fid);
	const uint64_t access_ok = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
				   FI_REMOTE_READ | FI_REMOTE_WRITE;
	struct mbx_mr *mr;
	size_t i;
	int ret;

	if (!attr || !out || (attr->iov_count && !attr->mr_iov))
		return -FI_EINVAL;
	if (attr->iov_count > MBX_IOV_LIMIT)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_RMA_EVENT)
		return -FI_EBADFLAGS;
	if (attr->access & ~access_ok)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_EOPNOTSUPP;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	for (i = 0; i < attr->iov_count; i++) {
		mr->iov[i] = attr->mr_iov[i];
		mr->len += attr->mr_iov[i].iov_len;
	}
	mr->iov_cnt = attr->iov_count;
	mr->access = attr->access;
	mr->offset = attr->offset;
	mr->dom = d;
	mr->kt_idx = -1;
	mr->mr.fid.fclass = FI_CLASS_MR;
	mr->mr.fid.context = attr->context;
	mr->mr.fid.ops = &mr_fi_ops;
	mr->mr.mem_desc = mr;
	mbx_lock(d);
	if (d->mr_mode & FI_MR_PROV_KEY) {
		do
			mr->mr.key = ++d->next_key;
		while (table_find(&d->mrs, mr->mr.key));
	} else if (table_find(&d->mrs, attr->requested_key)) {
		mbx_unlock(d);
		free(mr);
		return -FI_ENOKEY;
	} else {
		mr->mr.key = attr->requested_key;
	}
	ret = table_put(&d->mrs, mr);
	if (!ret)
		mbx_kt_publish(d, mr);
	mbx_unlock(d);
	if (ret) {
		free(mr);
		return ret;
	}
	atomic_fetch_add(&d->refs, 1);
	*out = &mr->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t requested_key, uint64_t flags,
		   struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return mr_regattr(fid, &attr, flags, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		  uint64_t offset, uint64_t requested_key, uint64_t flags,
		  struct fid_mr **mr, void *context)
{
	struct iovec iov = { (void *)buf, len };

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

struct fi_ops_mr mbx_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};
