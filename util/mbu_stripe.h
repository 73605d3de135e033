/* Sharing one large transfer out over several rails (NICs, or providers
 * that reach the same peer), kept pure so that it can be tested alone. Each
 * rail gets a share in proportion to the bandwidth it showed on earlier
 * striped transfers, so that all finish together (Vishnu et al.'s
 * striping, weighted as Open MPI's OB1 weights its BTLs, but by what was
 * measured, not by what an interface claims). Each rail's meter
 * (struct mbu_meter) counts the bytes its reads complete over the time it
 * had reads in flight: what the rail moves when it has work, whatever share
 * it had. (Timing each transfer from its posting to its rail's last
 * completion, as a first version did, depends on how many transfers queue
 * ahead of it: across two NICs at 1 Gb/s, a window of 64 KiB messages
 * settled at 28% for one of two equal NICs.) A rail whose share
 * would be under 1/MBU_STRIPE_MIN_DIV costs its round trip for little: the
 * others take its bytes, except on every MBU_STRIPE_PROBE-th such transfer,
 * when it gets that minimum so that it is measured again (a rail that was
 * slow once is not left out for ever). */
#ifndef MBU_STRIPE_H
#define MBU_STRIPE_H

#include <stddef.h>
#include <stdint.h>

#define MBU_STRIPE_MIN_DIV 16
#define MBU_STRIPE_PROBE 64
#define MBU_STRIPE_ALIGN 64	/* every share but the last starts and ends on this */
#define MBU_STRIPE_MAX 8

/* Fills part[0..n) with the bytes of len each rail moves, given their
 * measured bandwidths bw (any unit; n at most MBU_STRIPE_MAX) and the
 * count of transfers that left a slow rail out, *skipped; returns how many
 * rails got bytes. The parts add up to len (n at least 1). */
static inline int mbu_stripe_shares(const double *bw, int n, size_t len, unsigned long *skipped,
				    size_t *part)
{
	double w[MBU_STRIPE_MAX], sum = 0, kept = 0;
	int slow = 0, skip, used = 0, last = 0;
	size_t given = 0;

	if (n < 1)
		return 0;
	if (n > MBU_STRIPE_MAX)
		n = MBU_STRIPE_MAX;
	for (int i = 0; i < n; i++)
		sum += w[i] = bw[i] > 0 ? bw[i] : 0;
	for (int i = 0; i < n; i++)
		slow |= w[i] < sum / MBU_STRIPE_MIN_DIV;
	skip = slow && ++*skipped % MBU_STRIPE_PROBE;
	for (int i = 0; i < n; i++) {
		if (w[i] < sum / MBU_STRIPE_MIN_DIV)
			w[i] = skip ? 0 : sum / MBU_STRIPE_MIN_DIV;
		kept += w[i];
	}
	for (int i = 0; i < n; i++) {
		part[i] = kept > 0 ? (size_t)((double)len * (w[i] / kept)) & ~(size_t)(MBU_STRIPE_ALIGN - 1)
				   : 0;
		if (part[i] > len - given)
			part[i] = len - given;
		given += part[i];
		if (w[i] > 0)
			last = i;
	}
	/* What rounding left goes to the last rail that reads. */
	part[last] += len - given;
	for (int i = 0; i < n; i++)
		used += part[i] != 0;
	return used;
}

/* A rail's bandwidth after a sample of bytes moved in ns: a quarter of the
 * new sample, so one slow sample moves the shares but does not swing
 * them. */
static inline double mbu_stripe_sample(double avg, size_t bytes, uint64_t ns)
{
	return ns ? 0.75 * avg + 0.25 * ((double)bytes / (double)ns) : avg;
}

/* Busy time a sample covers. Completions come in bursts: over tcp;ofi_rxm
 * with 64 reads of 512 KiB in flight on a 1 Gb/s NIC, three completed
 * within 2.4 ms after none for 35 ms, and 2 ms samples read 0.3 to 1 GB/s
 * off a wire of 0.125. Over 10 ms they read 0.10-0.12. */
#define MBU_METER_NS 10000000u

struct mbu_meter {
	uint64_t start;		/* when the clock last started: busy, or sampled */
	uint64_t busy;		/* busy ns counted before start */
	size_t acc;		/* bytes completed since the last sample */
	unsigned inflight;	/* reads posted and not yet complete */
};

/* A read of the rail's posted at now: the clock runs while any is in
 * flight, so that the time a rail sat idle (waiting for a request to send,
 * say) does not count against it. */
static inline void mbu_meter_post(struct mbu_meter *m, uint64_t now)
{
	if (!m->inflight++)
		m->start = now;
}

/* A read of bytes completed at now: when the busy time since the last
 * sample reaches MBU_METER_NS, updates *bw (mbu_stripe_sample) with the
 * bytes over that time and returns 1. */
static inline int mbu_meter_done(struct mbu_meter *m, size_t bytes, uint64_t now, double *bw)
{
	uint64_t t = m->busy + (now - m->start);

	if (m->inflight)
		m->inflight--;
	m->acc += bytes;
	m->busy = t;
	m->start = now;
	if (t < MBU_METER_NS || !m->acc)
		return 0;
	*bw = mbu_stripe_sample(*bw, m->acc, t);
	m->busy = 0;
	m->acc = 0;
	return 1;
}

#endif
