/* FI_PROGRESS_AUTO: a domain opened with automatic data progress runs one
 * thread that progresses its endpoints, so that a transfer moves while the
 * program computes and makes no libfabric call (a rendezvous pull, the copy
 * out of an unexpected frame, the net wire's acknowledgements and credit).
 * The thread takes the domain lock like any caller; such a domain always
 * locks. When nothing is under way it sleeps on its endpoint's doorbell,
 * which senders ring as they do for any sleeping receiver. Net frames ring
 * no doorbell, and one thread cannot sleep on several doorbells, so with net
 * peers or several endpoints it naps for auto_nap_us between polls instead.
 * While the program itself is calling into an endpoint the thread leaves it
 * alone. Closing an endpoint waits until the thread has left its doorbell. */
#include "mbx.h"
#include "mbx_net.h"
#include "mbu_futex.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

_Thread_local bool mbx_auto_thread;

/* Work that no doorbell announces: polling it is the only way on. */
static bool ep_busy(struct mbx_ep *ep)
{
	return mbx_ep_work_visible(ep) || !mbu_dlist_empty(&ep->draining) || mbx_net_busy(ep);
}

static void nap(struct mbx_domain *d, long us)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += us * 1000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	(void)pthread_cond_timedwait(&d->auto_cv, &d->lock, &t);
}

static void *auto_main(void *arg)
{
	struct mbx_domain *d = arg;

	mbx_auto_thread = true;
	mbx_lock(d);
	while (!d->auto_stop) {
		struct mbx_ep *only = NULL;
		struct mbu_dlist *it;
		bool busy = false;
		int n = 0, calling = 0;

		mbu_dlist_foreach(&d->eps, it) {
			struct mbx_ep *ep = mbu_container_of(it, struct mbx_ep, dom_link);

			if (!ep->enabled || !ep->seg)
				continue;
			n++;
			/* The program progressed it since our last pass: it is
			 * in a call, and taking turns with it on the lock would
			 * only slow it down. */
			if (ep->progress_ticks != ep->auto_seen) {
				ep->auto_seen = ep->progress_ticks;
				calling++;
				continue;
			}
			mbx_ep_progress(ep);
			ep->auto_seen = ep->progress_ticks;
			busy |= ep_busy(ep);
			only = ep;
		}
		if (calling && calling == n) {
			nap(d, (long)mbx_param.auto_nap_us);
		} else if (busy) {
			mbx_unlock(d);
			sched_yield();
			mbx_lock(d);
		} else if (n == 1 && only && !only->net) {
			d->auto_ep = only;
			mbx_ep_wait(only, 50 * 1000 * 1000L);	/* wakes for liveness checks */
			d->auto_ep = NULL;
			pthread_cond_broadcast(&d->auto_cv);
		} else {
			nap(d, n ? (long)mbx_param.auto_nap_us : 10000);
		}
	}
	mbx_unlock(d);
	return NULL;
}

int mbx_auto_start(struct mbx_domain *d)
{
	int ret;

	pthread_cond_init(&d->auto_cv, NULL);
	ret = pthread_create(&d->auto_tid, NULL, auto_main, d);
	if (ret) {
		MBX_WARN(FI_LOG_DOMAIN, "progress thread: %s\n", strerror(ret));
		pthread_cond_destroy(&d->auto_cv);
		return -FI_EOTHER;
	}
	d->auto_on = true;
	return 0;
}

void mbx_auto_stop(struct mbx_domain *d)
{
	if (!d->auto_on)
		return;
	mbx_lock(d);
	d->auto_stop = true;
	pthread_cond_broadcast(&d->auto_cv);
	mbx_unlock(d);
	pthread_join(d->auto_tid, NULL);
	pthread_cond_destroy(&d->auto_cv);
	d->auto_on = false;
}

/* With the domain lock held, at the start of an endpoint's close: the thread
 * must not be asleep on its doorbell (in its segment) once it is unmapped,
 * nor progress it again. */
void mbx_auto_forget(struct mbx_ep *ep)
{
	struct mbx_domain *d = ep->dom;

	mbu_dlist_remove(&ep->dom_link);
	while (d->auto_on && d->auto_ep == ep) {
		atomic_fetch_add(&ep->seg->doorbell, 1);
		mbu_futex_wake(&ep->seg->doorbell);
		pthread_cond_wait(&d->auto_cv, &d->lock);
	}
}
