/*
 * Attributes, info objects, user error classes and codes, generalized
 * requests, the MPI-1 names of attribute and error-handler calls, and the
 * calls that exist only to say they cannot work here (spawn, MPI-IO).
 * Callbacks count their calls so each test can say exactly how many copy
 * and delete callbacks MPI made, with which values.
 */
#include "mt.h"

static int rank, size;
static int copies, deletes, last_deleted;

static int copy_cb(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
	(void)comm, (void)key;
	copies++;
	CHECK(extra == &copies);
	*(intptr_t *)out = (intptr_t)in + 1;
	*flag = 1;
	return MPI_SUCCESS;
}

static int nocopy_cb(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
	(void)comm, (void)key, (void)extra, (void)in, (void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

static int del_cb(MPI_Comm comm, int key, void *val, void *extra)
{
	(void)comm, (void)key, (void)extra;
	deletes++;
	last_deleted = (int)(intptr_t)val;
	return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
	(void)comm, (void)key, (void)extra, (void)in, (void)out, (void)flag;
	return MPI_ERR_OTHER;
}

static void comm_attrs(void)
{
	int k1, k2, k3, flag, *tag_ub;
	void *v;
	MPI_Comm d, d2;

	CHECK_MPI(MPI_Comm_create_keyval(copy_cb, del_cb, &k1, &copies));
	CHECK_MPI(MPI_Comm_create_keyval(nocopy_cb, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
	CHECK_MPI(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k3, NULL));
	CHECK(k1 != k2 && k2 != k3 && k1 != MPI_KEYVAL_INVALID);
	MPI_Comm_dup(MPI_COMM_WORLD, &d);

	CHECK_MPI(MPI_Comm_get_attr(d, k1, &v, &flag));
	CHECK(flag == 0);
	CHECK_MPI(MPI_Comm_set_attr(d, k1, (void *)(intptr_t)10));
	CHECK_MPI(MPI_Comm_set_attr(d, k2, (void *)(intptr_t)20));
	CHECK_MPI(MPI_Attr_put(d, k3, (void *)(intptr_t)30));
	CHECK_MPI(MPI_Comm_get_attr(d, k1, &v, &flag));
	CHECK(flag && (intptr_t)v == 10);
	CHECK_MPI(MPI_Attr_get(d, k3, &v, &flag));
	CHECK(flag && (intptr_t)v == 30);

	/* Replacing runs the delete callback on the old value. */
	deletes = 0;
	CHECK_MPI(MPI_Comm_set_attr(d, k1, (void *)(intptr_t)11));
	CHECK(deletes == 1 && last_deleted == 10);

	/* Dup: k1 copied by its callback (value + 1), k2 not, k3 as is. */
	copies = 0;
	CHECK_MPI(MPI_Comm_dup(d, &d2));
	CHECK(copies == 1);
	CHECK_MPI(MPI_Comm_get_attr(d2, k1, &v, &flag));
	CHECK(flag && (intptr_t)v == 12);
	CHECK_MPI(MPI_Comm_get_attr(d2, k2, &v, &flag));
	CHECK(flag == 0);
	CHECK_MPI(MPI_Comm_get_attr(d2, k3, &v, &flag));
	CHECK(flag && (intptr_t)v == 30);

	/* Delete, then free: the callbacks see the values. */
	deletes = 0;
	CHECK_MPI(MPI_Comm_delete_attr(d, k1));
	CHECK(deletes == 1 && last_deleted == 11);
	CHECK_MPI(MPI_Comm_get_attr(d, k1, &v, &flag));
	CHECK(flag == 0);
	/* A freed keyval still serves the attributes that use it. */
	CHECK_MPI(MPI_Comm_free_keyval(&k1));
	CHECK(k1 == MPI_KEYVAL_INVALID);
	deletes = 0;
	CHECK_MPI(MPI_Comm_free(&d2));
	CHECK(deletes == 1 && last_deleted == 12);
	MPI_Comm_free(&d);

	/* A copy callback's error fails the dup and leaves no communicator. */
	{
		int kf, cls;

		MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kf, NULL);
		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		MPI_Comm_set_attr(d, kf, NULL);
		MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
		d2 = MPI_COMM_NULL;
		MPI_Error_class(MPI_Comm_dup(d, &d2), &cls);
		CHECK(cls == MPI_ERR_OTHER);
		CHECK(d2 == MPI_COMM_NULL);
		MPI_Comm_free(&d);
		MPI_Comm_free_keyval(&kf);
	}

	/* Predefined keys still answer, user ones cannot take their place. */
	CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
	CHECK(flag && *tag_ub >= 32767);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	{
		int cls;

		MPI_Error_class(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), &cls);
		CHECK(cls == MPI_ERR_KEYVAL);
		MPI_Error_class(MPI_Comm_delete_attr(MPI_COMM_WORLD, k2), &cls);
		CHECK(cls == MPI_ERR_KEYVAL);
		MPI_Error_class(MPI_Comm_free_keyval(&k1), &cls);
		CHECK(cls == MPI_ERR_KEYVAL);
		/* A type keyval is not a communicator keyval. */
		{
			int tk;

			MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL);
			MPI_Error_class(MPI_Comm_set_attr(MPI_COMM_WORLD, tk, NULL), &cls);
			CHECK(cls == MPI_ERR_KEYVAL);
			MPI_Type_free_keyval(&tk);
		}
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Comm_free_keyval(&k2);
	MPI_Keyval_free(&k3);
	CHECK(k3 == MPI_KEYVAL_INVALID);
}

static int type_dels;

static int type_del(MPI_Datatype t, int key, void *val, void *extra)
{
	(void)t, (void)key, (void)val, (void)extra;
	type_dels++;
	return MPI_SUCCESS;
}

static int win_dels;

static int win_del(MPI_Win w, int key, void *val, void *extra)
{
	(void)w, (void)key, (void)extra;
	win_dels += (int)(intptr_t)val;
	return MPI_SUCCESS;
}

static void type_and_win_attrs(void)
{
	MPI_Datatype t, t2;
	MPI_Win w;
	int k, wk, flag, *buf;
	void *v;

	MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_del, &k, NULL);
	MPI_Type_contiguous(3, MPI_INT, &t);
	CHECK_MPI(MPI_Type_set_attr(t, k, (void *)(intptr_t)5));
	CHECK_MPI(MPI_Type_dup(t, &t2));
	CHECK_MPI(MPI_Type_get_attr(t2, k, &v, &flag));
	CHECK(flag && (intptr_t)v == 5);
	type_dels = 0;
	MPI_Type_free(&t);
	MPI_Type_free(&t2);
	CHECK(type_dels == 2);
	/* Predefined types take attributes too. */
	CHECK_MPI(MPI_Type_set_attr(MPI_INT, k, (void *)(intptr_t)6));
	CHECK_MPI(MPI_Type_get_attr(MPI_INT, k, &v, &flag));
	CHECK(flag && (intptr_t)v == 6);
	CHECK_MPI(MPI_Type_delete_attr(MPI_INT, k));
	CHECK(type_dels == 3);
	MPI_Type_free_keyval(&k);

	buf = calloc(4, sizeof(int));
	MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, &wk, NULL);
	MPI_Win_create(buf, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
	CHECK_MPI(MPI_Win_set_attr(w, wk, (void *)(intptr_t)7));
	CHECK_MPI(MPI_Win_get_attr(w, wk, &v, &flag));
	CHECK(flag && (intptr_t)v == 7);
	CHECK_MPI(MPI_Win_get_attr(w, MPI_WIN_BASE, &v, &flag));
	CHECK(flag && v == buf);
	win_dels = 0;
	MPI_Win_free(&w);
	CHECK(win_dels == 7);
	MPI_Win_free_keyval(&wk);
	free(buf);
}

static void info(void)
{
	MPI_Info i, d;
	char key[MPI_MAX_INFO_KEY + 1], val[8];
	int n, flag, len, cls;

	CHECK_MPI(MPI_Info_create(&i));
	CHECK_MPI(MPI_Info_get_nkeys(i, &n));
	CHECK(n == 0);
	CHECK_MPI(MPI_Info_set(i, "b", "2"));
	CHECK_MPI(MPI_Info_set(i, "a", "one"));
	CHECK_MPI(MPI_Info_set(i, "b", "two!"));
	CHECK_MPI(MPI_Info_get_nkeys(i, &n));
	CHECK(n == 2);
	CHECK_MPI(MPI_Info_get_nthkey(i, 0, key));
	CHECK(!strcmp(key, "b"));
	CHECK_MPI(MPI_Info_get_valuelen(i, "b", &len, &flag));
	CHECK(flag && len == 4);
	/* valuelen counts characters, the terminator comes on top. */
	CHECK_MPI(MPI_Info_get(i, "b", 2, val, &flag));
	CHECK(flag && !strcmp(val, "tw"));
	CHECK_MPI(MPI_Info_get(i, "zz", 7, val, &flag));
	CHECK(!flag);
	CHECK_MPI(MPI_Info_dup(i, &d));
	CHECK_MPI(MPI_Info_delete(i, "b"));
	CHECK_MPI(MPI_Info_get_nkeys(i, &n));
	CHECK(n == 1);
	CHECK_MPI(MPI_Info_get(d, "b", 7, val, &flag));
	CHECK(flag && !strcmp(val, "two!"));

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Info_delete(i, "b"), &cls);
	CHECK(cls == MPI_ERR_INFO_NOKEY);
	MPI_Error_class(MPI_Info_set(i, "", "x"), &cls);
	CHECK(cls == MPI_ERR_INFO_KEY);
	MPI_Error_class(MPI_Info_get_nthkey(i, 5, key), &cls);
	CHECK(cls == MPI_ERR_ARG);
	MPI_Error_class(MPI_Info_set(MPI_INFO_ENV, "x", "y"), &cls);
	CHECK(cls == MPI_ERR_INFO);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	{
		char cmd[MPI_MAX_INFO_VAL + 1];

		CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, cmd, &flag));
		CHECK(flag && strstr(cmd, "t_attr"));
	}
	MPI_Info_free(&d);
	CHECK_MPI(MPI_Info_free(&i));
	CHECK(i == MPI_INFO_NULL);
}

static void user_errors(void)
{
	int cls, code, code2, c2, len, *last, flag;
	char s[MPI_MAX_ERROR_STRING];

	CHECK_MPI(MPI_Add_error_class(&cls));
	CHECK(cls > MPI_ERR_LASTCODE);
	CHECK_MPI(MPI_Add_error_code(cls, &code));
	CHECK_MPI(MPI_Add_error_code(MPI_ERR_ARG, &code2));
	CHECK(code != cls && code2 != code);
	CHECK_MPI(MPI_Add_error_string(code, "the frobnicator broke"));
	CHECK_MPI(MPI_Error_string(code, s, &len));
	CHECK(!strcmp(s, "the frobnicator broke") && len == (int)strlen(s));
	CHECK_MPI(MPI_Error_class(code, &c2));
	CHECK(c2 == cls);
	CHECK_MPI(MPI_Error_class(code2, &c2));
	CHECK(c2 == MPI_ERR_ARG);
	CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
	CHECK(flag && *last >= code2);
	/* A user code raised through a handler that returns comes back. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code) == MPI_SUCCESS);
	MPI_Error_class(MPI_Add_error_code(code, &c2), &c2);
	CHECK(c2 == MPI_ERR_ARG);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static int handler_calls, handler_code;

static void handler(MPI_Comm *c, int *code, ...)
{
	(void)c;
	handler_calls++;
	handler_code = *code;
}

static void legacy_errhandlers(void)
{
	MPI_Errhandler h, got;
	MPI_Comm d;

	CHECK_MPI(MPI_Errhandler_create(handler, &h));
	MPI_Comm_dup(MPI_COMM_WORLD, &d);
	CHECK_MPI(MPI_Errhandler_set(d, h));
	CHECK_MPI(MPI_Errhandler_get(d, &got));
	CHECK(got == h);
	MPI_Errhandler_free(&got);
	handler_calls = 0;
	MPI_Send(NULL, 0, MPI_INT, size + 3, 0, d);
	CHECK(handler_calls == 1 && handler_code == MPI_ERR_RANK);
	MPI_Errhandler_free(&h);
	MPI_Comm_free(&d);

	/* Files: only MPI_FILE_NULL, whose handler returns by default. */
	{
		MPI_File f;
		int cls;

		CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
		CHECK(got == MPI_ERRORS_RETURN);
		MPI_Errhandler_free(&got);
		MPI_Error_class(MPI_File_open(MPI_COMM_WORLD, "x", 0, MPI_INFO_NULL, &f), &cls);
		CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION);
	}
}

struct greq_state {
	int queried, freed, cancelled;
};

static int gq(void *extra, MPI_Status *st)
{
	struct greq_state *s = extra;

	s->queried++;
	MPI_Status_set_elements(st, MPI_INT, 3);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int gf(void *extra)
{
	((struct greq_state *)extra)->freed++;
	return MPI_SUCCESS;
}

static int gc(void *extra, int complete)
{
	((struct greq_state *)extra)->cancelled += complete ? 10 : 1;
	return MPI_SUCCESS;
}

static void grequests(void)
{
	struct greq_state s = {0};
	MPI_Request r;
	MPI_Status st;
	int flag, n;

	CHECK_MPI(MPI_Grequest_start(gq, gf, gc, &s, &r));
	CHECK_MPI(MPI_Test(&r, &flag, &st));
	CHECK(!flag && s.queried == 0);
	CHECK_MPI(MPI_Cancel(&r));
	CHECK(s.cancelled == 1);
	CHECK_MPI(MPI_Grequest_complete(r));
	CHECK_MPI(MPI_Wait(&r, &st));
	CHECK(r == MPI_REQUEST_NULL);
	CHECK(s.queried == 1 && s.freed == 1);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == 3);
	/* Freed before completion: the free callback runs at completion. */
	s = (struct greq_state){0};
	CHECK_MPI(MPI_Grequest_start(gq, gf, gc, &s, &r));
	{
		MPI_Request keep = r;

		CHECK_MPI(MPI_Request_free(&r));
		CHECK(s.freed == 0);
		CHECK_MPI(MPI_Grequest_complete(keep));
	}
	CHECK(s.freed == 1 && s.queried == 0);
}

/* C to Fortran and back: predefined handles keep their numbers, objects
 * get stable ones, and a status survives the trip. */
static void handles(void)
{
	MPI_Comm d;
	MPI_Datatype t;
	MPI_Fint fc, ft, fs[sizeof(MPI_Status) / sizeof(MPI_Fint)];
	MPI_Status st, back;

	CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
	CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
	MPI_Comm_dup(MPI_COMM_WORLD, &d);
	MPI_Type_vector(2, 1, 2, MPI_INT, &t);
	fc = MPI_Comm_c2f(d);
	ft = MPI_Type_c2f(t);
	CHECK(fc != MPI_Comm_c2f(MPI_COMM_WORLD) && MPI_Comm_c2f(d) == fc);
	CHECK(MPI_Comm_f2c(fc) == d && MPI_Type_f2c(ft) == t);
	CHECK(MPI_Comm_f2c(-5) == MPI_COMM_NULL);
	MPI_Comm_free(&d);
	MPI_Type_free(&t);
	st.MPI_SOURCE = 3;
	st.MPI_TAG = 44;
	MPI_Status_set_elements(&st, MPI_INT, 5);
	CHECK_MPI(MPI_Status_c2f(&st, fs));
	CHECK_MPI(MPI_Status_f2c(fs, &back));
	{
		int n;

		MPI_Get_count(&back, MPI_INT, &n);
		CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 44 && n == 5);
	}
}

static void cannot_here(void)
{
	MPI_Comm parent = MPI_COMM_WORLD, ic = MPI_COMM_WORLD;
	int cls, errs[2] = {0, 0};

	CHECK_MPI(MPI_Comm_get_parent(&parent));
	CHECK(parent == MPI_COMM_NULL);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Comm_spawn("true", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic,
				       errs), &cls);
	CHECK(cls == MPI_ERR_SPAWN && ic == MPI_COMM_NULL && errs[1] == MPI_ERR_SPAWN);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	CHECK_MPI(MPI_Pcontrol(1));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	rank = mt_rank;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	comm_attrs();
	type_and_win_attrs();
	info();
	user_errors();
	legacy_errhandlers();
	grequests();
	handles();
	cannot_here();
	(void)rank;
	return mt_finish("t_attr");
}
