/* A peer that dies must turn into error completions, never a hang: a child
 * process opens an endpoint and is killed while the parent has a large send
 * waiting for it (rendezvous) and a queue of small sends that its full ring
 * holds back. Every one of them must complete with an error within a few
 * seconds. So must a receive aimed at the dead peer, once what it sent
 * before it died has been matched. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "node.h"

/* A peer process with an endpoint that never makes progress, so that it
 * holds back what is sent to it, until kill_peer() ends it. */
struct silent_peer {
	pid_t pid;
	int go;
	char name[64];
};

static void spawn_silent_peer(struct silent_peer *sp)
{
	int up[2], go[2];
	char c;

	cr_assert_eq(pipe(up), 0);
	cr_assert_eq(pipe(go), 0);
	sp->pid = fork();
	if (sp->pid == 0) {
		struct node child;

		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlive a failed test */
		open_node(&child);
		if (write(up[1], child.name, sizeof(child.name)) != sizeof(child.name))
			_exit(1);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(up[0], sp->name, sizeof(sp->name)), (ssize_t)sizeof(sp->name));
	close(up[0]);
	close(up[1]);
	close(go[0]);
	sp->go = go[1];
}

static void kill_peer(struct silent_peer *sp)
{
	char c = 0;

	cr_assert_eq(write(sp->go, &c, 1), 1);
	kill(sp->pid, SIGKILL);
	waitpid(sp->pid, NULL, 0);
	close(sp->go);
}

Test(deadpeer, sends_to_a_killed_peer_fail, .timeout = 60)
{
	struct silent_peer sp;
	struct node me;
	fi_addr_t peer;
	char *big = malloc(1 << 20), small[512];
	int small_posted = 0, errors = 0, done = 0;
	double start;

	spawn_silent_peer(&sp);
	open_node(&me);
	cr_assert_eq(fi_av_insert(me.av, sp.name, 1, &peer, 0, NULL), 1);
	memset(big, 1, 1 << 20);
	cr_assert_eq(fi_tsend(me.ep, big, 1 << 20, NULL, peer, 1, big), 0);
	/* Fill the peer's ring and then the provider's send queue. */
	for (;;) {
		ssize_t r = fi_tsend(me.ep, small, sizeof(small), NULL, peer, 2, small);

		if (r == -FI_EAGAIN)
			break;
		cr_assert_eq(r, 0);
		small_posted++;
	}
	cr_assert_gt(small_posted, 100);
	/* Eager sends that reached the ring completed successfully; drain. */
	for (;;) {
		struct fi_cq_tagged_entry e;
		ssize_t r = fi_cq_read(me.cq, &e, 1);

		if (r != 1)
			break;
		done++;
	}
	kill_peer(&sp);
	start = now();
	while (done + errors < small_posted + 1 && now() - start < 10) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err = { 0 };
		ssize_t r = fi_cq_read(me.cq, &e, 1);

		if (r == 1) {
			done++;
		} else if (r == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(me.cq, &err, 0), 1);
			cr_assert_eq(err.err, FI_EHOSTUNREACH, "err %d", err.err);
			errors++;
		} else {
			cr_assert_eq(r, -FI_EAGAIN);
		}
	}
	cr_assert_eq(done + errors, small_posted + 1,
		     "only %d of %d sends completed after the peer died", done + errors,
		     small_posted + 1);
	cr_assert_geq(errors, 1, "the rendezvous send at least must fail");
	cr_assert_lt(now() - start, 5.0, "detection took %.1f s", now() - start);
	/* A new send to the dead peer fails at once. */
	cr_assert_eq(fi_tsend(me.ep, small, 8, NULL, peer, 3, NULL), -FI_EHOSTUNREACH);
	close_node(&me);
	free(big);
}

/* Injected sends carry no context and promise no completion: when the ones
 * a full ring held back fail with their peer, they count on the error
 * counter, and no CQ entry appears that the caller could not place. A send
 * posted with a context still gets its error entry. */
Test(deadpeer, failed_injects_count_without_cq_entries, .timeout = 60)
{
	int injected = 0, errors = 0;
	char small[64] = { 0 };
	struct silent_peer sp;
	struct node me;
	fi_addr_t peer;
	double start;

	spawn_silent_peer(&sp);
	open_node_cntr(&me, true);
	cr_assert_eq(fi_av_insert(me.av, sp.name, 1, &peer, 0, NULL), 1);
	/* Past the ring, injects wait in the provider's queue. */
	for (;;) {
		ssize_t r = fi_tinject(me.ep, small, sizeof(small), peer, 2);

		if (r == -FI_EAGAIN)
			break;
		cr_assert_eq(r, 0);
		cr_assert_lt(++injected, 1000000, "injects never pushed back");
	}
	cr_assert_gt(injected, 100);
	kill_peer(&sp);
	/* Until the failures are counted, then a little longer to see every
	 * entry they might have left. */
	start = now();
	for (double quiet = 0; now() - start < 10 && (!quiet || now() < quiet);) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err = { 0 };
		ssize_t r = fi_cq_read(me.cq, &e, 1);

		cr_assert_neq(r, 1, "an inject produced a completion");
		if (r == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(me.cq, &err, 0), 1);
			cr_assert_not_null(err.op_context, "an error entry without a context");
			errors++;
		}
		if (!quiet && fi_cntr_readerr(me.cntr) > 0)
			quiet = now() + 0.2;
	}
	cr_assert_gt(fi_cntr_readerr(me.cntr), 0, "the held-back injects never failed");
	cr_assert_eq(errors, 0);
	/* A send with a context still reports its failure. */
	cr_assert_eq(fi_tsend(me.ep, small, 8, NULL, peer, 3, small), -FI_EHOSTUNREACH);
	close_node(&me);
}

/* Waits up to 5 s for one completion; 0 and *e for success, else the
 * error entry's err. */
static int wait_one(struct node *n, struct fi_cq_tagged_entry *e, double *took)
{
	double start = now();

	while (now() - start < 5) {
		struct fi_cq_err_entry err = { 0 };
		ssize_t r = fi_cq_read(n->cq, e, 1);

		if (r == 1) {
			*took = now() - start;
			return 0;
		}
		if (r == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(n->cq, &err, 0), 1);
			*took = now() - start;
			e->op_context = err.op_context;
			return err.err;
		}
		cr_assert_eq(r, -FI_EAGAIN);
	}
	cr_assert_fail("no completion within 5 s");
	return -1;
}

/* The child sends one message to the parent, then dies. The parent's
 * receive of that message completes with its data; a second receive aimed
 * at the child, for a message it never sent, fails instead of waiting for
 * ever, and so does one posted after the death was noticed. */
Test(deadpeer, receives_aimed_at_a_killed_peer_fail, .timeout = 60)
{
	int up[2], down[2];
	char buf1[16] = "", buf2[16], buf3[16], c;
	struct fi_cq_tagged_entry e;
	char child_name[64];
	struct node me;
	fi_addr_t peer;
	double took;
	pid_t pid;

	cr_assert_eq(pipe(up), 0);
	cr_assert_eq(pipe(down), 0);
	pid = fork();
	if (pid == 0) {
		struct node child;
		char parent_name[64];
		fi_addr_t parent;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		open_node(&child);
		if (write(up[1], child.name, sizeof(child.name)) != sizeof(child.name) ||
		    read(down[0], parent_name, sizeof(parent_name)) != sizeof(parent_name) ||
		    fi_av_insert(child.av, parent_name, 1, &parent, 0, NULL) != 1 ||
		    fi_tsend(child.ep, "hello", 6, NULL, parent, 7, NULL) != 0)
			_exit(1);
		while (fi_cq_read(child.cq, &e, 1) == -FI_EAGAIN)
			;
		if (write(up[1], "s", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(up[0], child_name, sizeof(child_name)), (ssize_t)sizeof(child_name));
	open_node(&me);
	cr_assert_eq(fi_av_insert(me.av, child_name, 1, &peer, 0, NULL), 1);
	cr_assert_eq(write(down[1], me.name, sizeof(me.name)), (ssize_t)sizeof(me.name));
	cr_assert_eq(read(up[0], &c, 1), 1, "the child's send did not complete");
	cr_assert_eq(fi_trecv(me.ep, buf1, sizeof(buf1), NULL, peer, 7, 0, buf1), 0);
	cr_assert_eq(fi_trecv(me.ep, buf2, sizeof(buf2), NULL, peer, 8, 0, buf2), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(wait_one(&me, &e, &took), 0, "the message sent before the death was lost");
	cr_assert_eq(e.op_context, buf1);
	cr_assert_str_eq(buf1, "hello");
	cr_assert_eq(wait_one(&me, &e, &took), FI_EHOSTUNREACH);
	cr_assert_eq(e.op_context, buf2);
	cr_assert_lt(took, 3.0, "detection took %.1f s", took);
	/* Known dead now: a new receive aimed at it fails at once. */
	cr_assert_eq(fi_trecv(me.ep, buf3, sizeof(buf3), NULL, peer, 9, 0, buf3), 0);
	cr_assert_eq(wait_one(&me, &e, &took), FI_EHOSTUNREACH);
	cr_assert_eq(e.op_context, buf3);
	close_node(&me);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* A peer that dies before it sent us anything (it has no ring with us):
 * a receive aimed at it fails too, and a wildcard receive is left posted. */
Test(deadpeer, receive_aimed_at_a_silent_killed_peer_fails, .timeout = 60)
{
	struct fi_cq_tagged_entry e;
	struct silent_peer sp;
	char buf[16], any[16];
	struct node me;
	fi_addr_t peer;
	double took;

	spawn_silent_peer(&sp);
	open_node(&me);
	cr_assert_eq(fi_av_insert(me.av, sp.name, 1, &peer, 0, NULL), 1);
	/* A send makes the peer known to the liveness check, as any
	 * exchange with it would. */
	cr_assert_eq(fi_tsend(me.ep, "x", 2, NULL, peer, 1, NULL), 0);
	cr_assert_eq(wait_one(&me, &e, &took), 0);
	cr_assert_eq(fi_trecv(me.ep, buf, sizeof(buf), NULL, peer, 5, 0, buf), 0);
	cr_assert_eq(fi_trecv(me.ep, any, sizeof(any), NULL, FI_ADDR_UNSPEC, 5, 0, any), 0);
	kill_peer(&sp);
	cr_assert_eq(wait_one(&me, &e, &took), FI_EHOSTUNREACH);
	cr_assert_eq(e.op_context, buf);
	cr_assert_lt(took, 3.0, "detection took %.1f s", took);
	cr_assert_eq(fi_cancel(&me.ep->fid, any), 0);
	close_node(&me);
}
