/*
 * mpi.h of Matchbox's thin MPI library. Handles are opaque pointers; the
 * predefined ones are small integers cast to those pointer types, so they are
 * constant expressions and no data symbol of the library is ever copied into
 * a program. Every function exists as MPI_x (weak) and PMPI_x, the MPI
 * profiling interface. The set is MPI-3.1 point-to-point, datatypes, groups,
 * communicators and blocking collectives; what is missing is not declared.
 */
#ifndef MBMPI_MPI_H
#define MBMPI_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define MATCHBOX_MPI 1

typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct mbmpi_comm *MPI_Comm;
typedef struct mbmpi_group *MPI_Group;
typedef struct mbmpi_dtype *MPI_Datatype;
typedef struct mbmpi_op *MPI_Op;
typedef struct mbmpi_req *MPI_Request;
typedef struct mbmpi_errh *MPI_Errhandler;
typedef struct mbmpi_msg *MPI_Message;
typedef struct mbmpi_info *MPI_Info;
typedef struct mbmpi_win *MPI_Win;

typedef struct MPI_Status {
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
	int mbmpi_cancelled;
	size_t mbmpi_bytes;
} MPI_Status;

#define MBMPI_HANDLE(type, n) ((type)(intptr_t)(n))

#define MPI_COMM_NULL MBMPI_HANDLE(MPI_Comm, 0)
#define MPI_COMM_WORLD MBMPI_HANDLE(MPI_Comm, 1)
#define MPI_COMM_SELF MBMPI_HANDLE(MPI_Comm, 2)

#define MPI_GROUP_NULL MBMPI_HANDLE(MPI_Group, 0)
#define MPI_GROUP_EMPTY MBMPI_HANDLE(MPI_Group, 1)

#define MPI_REQUEST_NULL MBMPI_HANDLE(MPI_Request, 0)
#define MPI_MESSAGE_NULL MBMPI_HANDLE(MPI_Message, 0)
#define MPI_MESSAGE_NO_PROC MBMPI_HANDLE(MPI_Message, 1)
#define MPI_INFO_NULL MBMPI_HANDLE(MPI_Info, 0)
#define MPI_INFO_ENV MBMPI_HANDLE(MPI_Info, 1)

#define MPI_ERRHANDLER_NULL MBMPI_HANDLE(MPI_Errhandler, 0)
#define MPI_ERRORS_ARE_FATAL MBMPI_HANDLE(MPI_Errhandler, 1)
#define MPI_ERRORS_RETURN MBMPI_HANDLE(MPI_Errhandler, 2)
#define MPI_ERRORS_ABORT MBMPI_HANDLE(MPI_Errhandler, 3)

/* Datatypes: the numbers index the library's table of predefined types. */
#define MPI_DATATYPE_NULL MBMPI_HANDLE(MPI_Datatype, 0)
#define MPI_CHAR MBMPI_HANDLE(MPI_Datatype, 1)
#define MPI_SIGNED_CHAR MBMPI_HANDLE(MPI_Datatype, 2)
#define MPI_UNSIGNED_CHAR MBMPI_HANDLE(MPI_Datatype, 3)
#define MPI_BYTE MBMPI_HANDLE(MPI_Datatype, 4)
#define MPI_WCHAR MBMPI_HANDLE(MPI_Datatype, 5)
#define MPI_SHORT MBMPI_HANDLE(MPI_Datatype, 6)
#define MPI_UNSIGNED_SHORT MBMPI_HANDLE(MPI_Datatype, 7)
#define MPI_INT MBMPI_HANDLE(MPI_Datatype, 8)
#define MPI_UNSIGNED MBMPI_HANDLE(MPI_Datatype, 9)
#define MPI_LONG MBMPI_HANDLE(MPI_Datatype, 10)
#define MPI_UNSIGNED_LONG MBMPI_HANDLE(MPI_Datatype, 11)
#define MPI_LONG_LONG_INT MBMPI_HANDLE(MPI_Datatype, 12)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG MBMPI_HANDLE(MPI_Datatype, 13)
#define MPI_FLOAT MBMPI_HANDLE(MPI_Datatype, 14)
#define MPI_DOUBLE MBMPI_HANDLE(MPI_Datatype, 15)
#define MPI_LONG_DOUBLE MBMPI_HANDLE(MPI_Datatype, 16)
#define MPI_INT8_T MBMPI_HANDLE(MPI_Datatype, 17)
#define MPI_INT16_T MBMPI_HANDLE(MPI_Datatype, 18)
#define MPI_INT32_T MBMPI_HANDLE(MPI_Datatype, 19)
#define MPI_INT64_T MBMPI_HANDLE(MPI_Datatype, 20)
#define MPI_UINT8_T MBMPI_HANDLE(MPI_Datatype, 21)
#define MPI_UINT16_T MBMPI_HANDLE(MPI_Datatype, 22)
#define MPI_UINT32_T MBMPI_HANDLE(MPI_Datatype, 23)
#define MPI_UINT64_T MBMPI_HANDLE(MPI_Datatype, 24)
#define MPI_C_BOOL MBMPI_HANDLE(MPI_Datatype, 25)
#define MPI_C_FLOAT_COMPLEX MBMPI_HANDLE(MPI_Datatype, 26)
#define MPI_C_COMPLEX MBMPI_HANDLE(MPI_Datatype, 61)
#define MPI_C_DOUBLE_COMPLEX MBMPI_HANDLE(MPI_Datatype, 27)
#define MPI_C_LONG_DOUBLE_COMPLEX MBMPI_HANDLE(MPI_Datatype, 28)
#define MPI_AINT MBMPI_HANDLE(MPI_Datatype, 29)
#define MPI_OFFSET MBMPI_HANDLE(MPI_Datatype, 30)
#define MPI_COUNT MBMPI_HANDLE(MPI_Datatype, 31)
#define MPI_PACKED MBMPI_HANDLE(MPI_Datatype, 32)
#define MPI_FLOAT_INT MBMPI_HANDLE(MPI_Datatype, 33)
#define MPI_DOUBLE_INT MBMPI_HANDLE(MPI_Datatype, 34)
#define MPI_LONG_INT MBMPI_HANDLE(MPI_Datatype, 35)
#define MPI_2INT MBMPI_HANDLE(MPI_Datatype, 36)
#define MPI_SHORT_INT MBMPI_HANDLE(MPI_Datatype, 37)
#define MPI_LONG_DOUBLE_INT MBMPI_HANDLE(MPI_Datatype, 38)
/* MPI-1's bound markers, kept for the programs that still build structs
 * with them. */
#define MPI_LB MBMPI_HANDLE(MPI_Datatype, 39)
#define MPI_UB MBMPI_HANDLE(MPI_Datatype, 40)
#define MPI_CXX_BOOL MBMPI_HANDLE(MPI_Datatype, 41)
#define MPI_CXX_FLOAT_COMPLEX MBMPI_HANDLE(MPI_Datatype, 42)
#define MPI_CXX_DOUBLE_COMPLEX MBMPI_HANDLE(MPI_Datatype, 43)
#define MPI_CXX_LONG_DOUBLE_COMPLEX MBMPI_HANDLE(MPI_Datatype, 44)
/* Fortran's types, for C programs that name them and for the Fortran
 * bindings: each behaves as the C type of the same size. */
#define MPI_CHARACTER MBMPI_HANDLE(MPI_Datatype, 45)
#define MPI_INTEGER MBMPI_HANDLE(MPI_Datatype, 46)
#define MPI_REAL MBMPI_HANDLE(MPI_Datatype, 47)
#define MPI_DOUBLE_PRECISION MBMPI_HANDLE(MPI_Datatype, 48)
#define MPI_LOGICAL MBMPI_HANDLE(MPI_Datatype, 49)
#define MPI_COMPLEX MBMPI_HANDLE(MPI_Datatype, 50)
#define MPI_DOUBLE_COMPLEX MBMPI_HANDLE(MPI_Datatype, 51)
#define MPI_INTEGER1 MBMPI_HANDLE(MPI_Datatype, 52)
#define MPI_INTEGER2 MBMPI_HANDLE(MPI_Datatype, 53)
#define MPI_INTEGER4 MBMPI_HANDLE(MPI_Datatype, 54)
#define MPI_INTEGER8 MBMPI_HANDLE(MPI_Datatype, 55)
#define MPI_REAL4 MBMPI_HANDLE(MPI_Datatype, 56)
#define MPI_REAL8 MBMPI_HANDLE(MPI_Datatype, 57)
#define MPI_COMPLEX8 MBMPI_HANDLE(MPI_Datatype, 58)
#define MPI_COMPLEX16 MBMPI_HANDLE(MPI_Datatype, 59)
#define MPI_2INTEGER MBMPI_HANDLE(MPI_Datatype, 60)
#define MPI_2REAL MBMPI_HANDLE(MPI_Datatype, 62)
#define MPI_2DOUBLE_PRECISION MBMPI_HANDLE(MPI_Datatype, 63)
#define MPI_INTEGER16 MBMPI_HANDLE(MPI_Datatype, 64)
#define MBMPI_NUM_PREDEF_TYPES 65

#define MPI_OP_NULL MBMPI_HANDLE(MPI_Op, 0)
#define MPI_MAX MBMPI_HANDLE(MPI_Op, 1)
#define MPI_MIN MBMPI_HANDLE(MPI_Op, 2)
#define MPI_SUM MBMPI_HANDLE(MPI_Op, 3)
#define MPI_PROD MBMPI_HANDLE(MPI_Op, 4)
#define MPI_LAND MBMPI_HANDLE(MPI_Op, 5)
#define MPI_BAND MBMPI_HANDLE(MPI_Op, 6)
#define MPI_LOR MBMPI_HANDLE(MPI_Op, 7)
#define MPI_BOR MBMPI_HANDLE(MPI_Op, 8)
#define MPI_LXOR MBMPI_HANDLE(MPI_Op, 9)
#define MPI_BXOR MBMPI_HANDLE(MPI_Op, 10)
#define MPI_MINLOC MBMPI_HANDLE(MPI_Op, 11)
#define MPI_MAXLOC MBMPI_HANDLE(MPI_Op, 12)
#define MPI_REPLACE MBMPI_HANDLE(MPI_Op, 13)
#define MPI_NO_OP MBMPI_HANDLE(MPI_Op, 14)
#define MBMPI_NUM_PREDEF_OPS 15

#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_IN_PLACE ((void *)1)
#define MPI_BOTTOM ((void *)0)
/* Real objects, not small constants cast to pointers: compilers check the
 * array arguments they are passed as. */
extern int mbmpi_unweighted[1], mbmpi_weights_empty[1];
#define MPI_UNWEIGHTED (mbmpi_unweighted)
#define MPI_WEIGHTS_EMPTY (mbmpi_weights_empty)

/* Topologies (MPI_Topo_test). */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)

#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_COMM_TYPE_SHARED 1

/* Datatype constructors (MPI_Type_get_envelope). */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_HINDEXED_BLOCK 11
#define MPI_COMBINER_STRUCT_INTEGER 12
#define MPI_COMBINER_STRUCT 13
#define MPI_COMBINER_SUBARRAY 14
#define MPI_COMBINER_DARRAY 15
#define MPI_COMBINER_F90_REAL 16
#define MPI_COMBINER_F90_COMPLEX 17
#define MPI_COMBINER_F90_INTEGER 18
#define MPI_COMBINER_RESIZED 19

#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128

typedef struct mbmpi_file *MPI_File;
#define MPI_FILE_NULL MBMPI_HANDLE(MPI_File, 0)
/* MPI-IO's constants, for programs that name them (there is no MPI-IO). */
#define MPI_MODE_CREATE 1
#define MPI_MODE_RDONLY 2
#define MPI_MODE_WRONLY 4
#define MPI_MODE_RDWR 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_EXCL 64
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_ERRCODES_IGNORE ((int *)0)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 256
#define MPI_MAX_OBJECT_NAME 64
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_BSEND_OVERHEAD 64

/* Predefined attribute keys (MPI_Comm_get_attr). */
#define MPI_TAG_UB 1
#define MPI_HOST 2
#define MPI_IO 3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_APPNUM 5
#define MPI_UNIVERSE_SIZE 6
#define MPI_LASTUSEDCODE 7
/* Window attributes (MPI_Win_get_attr). */
#define MPI_WIN_BASE 10
#define MPI_WIN_SIZE 11
#define MPI_WIN_DISP_UNIT 12
#define MPI_WIN_CREATE_FLAVOR 13
#define MPI_WIN_MODEL 14

#define MPI_WIN_NULL MBMPI_HANDLE(MPI_Win, 0)
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384

/* Error classes; codes and classes are the same numbers here. */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_INFO 22
#define MPI_ERR_UNSUPPORTED_OPERATION 23
#define MPI_ERR_PROC_FAILED 24
#define MPI_ERR_WIN 25
#define MPI_ERR_BASE 26
#define MPI_ERR_SIZE 27
#define MPI_ERR_DISP 28
#define MPI_ERR_LOCKTYPE 29
#define MPI_ERR_ASSERT 30
#define MPI_ERR_RMA_CONFLICT 31
#define MPI_ERR_RMA_SYNC 32
#define MPI_ERR_RMA_RANGE 33
#define MPI_ERR_RMA_ATTACH 34
#define MPI_ERR_RMA_SHARED 35
#define MPI_ERR_RMA_FLAVOR 36
#define MPI_ERR_INFO_KEY 37
#define MPI_ERR_INFO_VALUE 38
#define MPI_ERR_INFO_NOKEY 39
#define MPI_ERR_SPAWN 40
#define MPI_ERR_PORT 41
#define MPI_ERR_SERVICE 42
#define MPI_ERR_NAME 43
#define MPI_ERR_FILE 44
#define MPI_ERR_NOT_SAME 45
#define MPI_ERR_AMODE 46
#define MPI_ERR_UNSUPPORTED_DATAREP 47
#define MPI_ERR_NO_SUCH_FILE 48
#define MPI_ERR_FILE_EXISTS 49
#define MPI_ERR_BAD_FILE 50
#define MPI_ERR_ACCESS 51
#define MPI_ERR_NO_SPACE 52
#define MPI_ERR_QUOTA 53
#define MPI_ERR_READ_ONLY 54
#define MPI_ERR_FILE_IN_USE 55
#define MPI_ERR_DUP_DATAREP 56
#define MPI_ERR_CONVERSION 57
#define MPI_ERR_IO 58
/* The tool information interface's classes (MPI_T_* return them). */
#define MPI_T_ERR_MEMORY 59
#define MPI_T_ERR_NOT_INITIALIZED 60
#define MPI_T_ERR_CANNOT_INIT 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_INVALID_HANDLE 64
#define MPI_T_ERR_OUT_OF_HANDLES 65
#define MPI_T_ERR_OUT_OF_SESSIONS 66
#define MPI_T_ERR_INVALID_SESSION 67
#define MPI_T_ERR_CVAR_SET_NOT_NOW 68
#define MPI_T_ERR_CVAR_SET_NEVER 69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE 71
#define MPI_T_ERR_PVAR_NO_ATOMIC 72
#define MPI_T_ERR_INVALID_NAME 73
#define MPI_T_ERR_INVALID 74
#define MPI_ERR_LASTCODE 74

typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *code, ...);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *code, ...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *code, ...);
/* MPI-1 and MPI-2 names of the same. */
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;

/* Attribute callbacks. A null copy function copies nothing, a null delete
 * function does nothing; the DUP functions copy the value. */
typedef int MPI_Comm_copy_attr_function(MPI_Comm comm, int keyval, void *extra, void *in, void *out,
					int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval, void *val, void *extra);
typedef int MPI_Type_copy_attr_function(MPI_Datatype type, int keyval, void *extra, void *in,
					void *out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype type, int keyval, void *val, void *extra);
typedef int MPI_Win_copy_attr_function(MPI_Win win, int keyval, void *extra, void *in, void *out,
				       int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int keyval, void *val, void *extra);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
int mbmpi_comm_dup_fn(MPI_Comm, int, void *, void *, void *, int *) __attribute__((visibility("default")));
int mbmpi_type_dup_fn(MPI_Datatype, int, void *, void *, void *, int *) __attribute__((visibility("default")));
int mbmpi_win_dup_fn(MPI_Win, int, void *, void *, void *, int *) __attribute__((visibility("default")));
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN (mbmpi_comm_dup_fn)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN (mbmpi_type_dup_fn)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN (mbmpi_win_dup_fn)
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)
#define MPI_DUP_FN (mbmpi_comm_dup_fn)

/* Generalized requests. */
typedef int MPI_Grequest_query_function(void *extra, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra);
typedef int MPI_Grequest_cancel_function(void *extra, int complete);

#if defined(__GNUC__)
#define MBMPI_EXPORT __attribute__((visibility("default")))
#else
#define MBMPI_EXPORT
#endif

/* Declares MPI_name and its profiling twin PMPI_name. */
#define MBMPI_FN(ret, name, args) \
	MBMPI_EXPORT ret MPI_##name args; \
	MBMPI_EXPORT ret PMPI_##name args;

/* Environment */
MBMPI_FN(int, Init, (int *argc, char ***argv))
MBMPI_FN(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
MBMPI_FN(int, Finalize, (void))
MBMPI_FN(int, Initialized, (int *flag))
MBMPI_FN(int, Finalized, (int *flag))
MBMPI_FN(int, Query_thread, (int *provided))
MBMPI_FN(int, Is_thread_main, (int *flag))
MBMPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
MBMPI_FN(double, Wtime, (void))
MBMPI_FN(double, Wtick, (void))
MBMPI_FN(int, Get_processor_name, (char *name, int *resultlen))
MBMPI_FN(int, Get_version, (int *version, int *subversion))
MBMPI_FN(int, Get_library_version, (char *version, int *resultlen))
MBMPI_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
MBMPI_FN(int, Error_class, (int errorcode, int *errorclass))
MBMPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
MBMPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
MBMPI_FN(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler))
MBMPI_FN(int, Errhandler_free, (MPI_Errhandler *errhandler))
MBMPI_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
MBMPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
MBMPI_FN(int, Free_mem, (void *base))
MBMPI_FN(int, Get_address, (const void *location, MPI_Aint *address))
MBMPI_FN(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
MBMPI_FN(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))

/* Point-to-point */
MBMPI_FN(int, Send, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
MBMPI_FN(int, Ssend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
MBMPI_FN(int, Rsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
MBMPI_FN(int, Bsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
MBMPI_FN(int, Isend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Issend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Irsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ibsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Recv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status))
MBMPI_FN(int, Irecv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Send_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ssend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Rsend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Bsend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Recv_init, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Start, (MPI_Request *req))
MBMPI_FN(int, Startall, (int count, MPI_Request reqs[]))
MBMPI_FN(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
			 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			 MPI_Comm comm, MPI_Status *status))
MBMPI_FN(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype dt, int dest, int sendtag,
				 int source, int recvtag, MPI_Comm comm, MPI_Status *status))
MBMPI_FN(int, Buffer_attach, (void *buffer, int size))
MBMPI_FN(int, Buffer_detach, (void *buffer_addr, int *size))
MBMPI_FN(int, Buffer_flush, (void))
MBMPI_FN(int, Buffer_iflush, (MPI_Request *request))
MBMPI_FN(int, Wait, (MPI_Request *req, MPI_Status *status))
MBMPI_FN(int, Test, (MPI_Request *req, int *flag, MPI_Status *status))
MBMPI_FN(int, Waitall, (int count, MPI_Request reqs[], MPI_Status statuses[]))
MBMPI_FN(int, Testall, (int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]))
MBMPI_FN(int, Waitany, (int count, MPI_Request reqs[], int *index, MPI_Status *status))
MBMPI_FN(int, Testany, (int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status))
MBMPI_FN(int, Waitsome, (int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]))
MBMPI_FN(int, Testsome, (int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]))
MBMPI_FN(int, Request_get_status, (MPI_Request req, int *flag, MPI_Status *status))
MBMPI_FN(int, Cancel, (MPI_Request *req))
MBMPI_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))
MBMPI_FN(int, Request_free, (MPI_Request *req))
MBMPI_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
MBMPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
MBMPI_FN(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status))
MBMPI_FN(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status))
MBMPI_FN(int, Mrecv, (void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status))
MBMPI_FN(int, Imrecv, (void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *req))
MBMPI_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype dt, int *count))
MBMPI_FN(int, Get_elements, (const MPI_Status *status, MPI_Datatype dt, int *count))
MBMPI_FN(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype dt, MPI_Count *count))
MBMPI_FN(int, Status_set_elements, (MPI_Status *status, MPI_Datatype dt, int count))
MBMPI_FN(int, Status_set_cancelled, (MPI_Status *status, int flag))

/* Datatypes */
MBMPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_indexed, (int count, const int blocklengths[], const int displs[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_hindexed, (int count, const int blocklengths[], const MPI_Aint displs[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_indexed_block, (int count, int blocklength, const int displs[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint displs[], MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_struct, (int count, const int blocklengths[], const MPI_Aint displs[], const MPI_Datatype types[], MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype))
MBMPI_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype))
MBMPI_FN(int, Type_commit, (MPI_Datatype *dt))
MBMPI_FN(int, Type_free, (MPI_Datatype *dt))
MBMPI_FN(int, Type_get_extent, (MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent))
MBMPI_FN(int, Type_get_true_extent, (MPI_Datatype dt, MPI_Aint *true_lb, MPI_Aint *true_extent))
MBMPI_FN(int, Type_size, (MPI_Datatype dt, int *size))
MBMPI_FN(int, Type_size_x, (MPI_Datatype dt, MPI_Count *size))
MBMPI_FN(int, Type_set_name, (MPI_Datatype dt, const char *name))
MBMPI_FN(int, Type_get_name, (MPI_Datatype dt, char *name, int *resultlen))
MBMPI_FN(int, Pack, (const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize, int *position, MPI_Comm comm))
MBMPI_FN(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype dt, MPI_Comm comm))
MBMPI_FN(int, Pack_size, (int incount, MPI_Datatype dt, MPI_Comm comm, int *size))

/* Groups and communicators */
MBMPI_FN(int, Comm_size, (MPI_Comm comm, int *size))
MBMPI_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
MBMPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
MBMPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
MBMPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
MBMPI_FN(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
MBMPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
MBMPI_FN(int, Comm_free, (MPI_Comm *comm))
MBMPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
MBMPI_FN(int, Comm_test_inter, (MPI_Comm comm, int *flag))
MBMPI_FN(int, Comm_get_attr, (MPI_Comm comm, int keyval, void *attribute_val, int *flag))
MBMPI_FN(int, Comm_set_name, (MPI_Comm comm, const char *name))
MBMPI_FN(int, Comm_get_name, (MPI_Comm comm, char *name, int *resultlen))
MBMPI_FN(int, Group_size, (MPI_Group group, int *size))
MBMPI_FN(int, Group_rank, (MPI_Group group, int *rank))
MBMPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
MBMPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
MBMPI_FN(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MBMPI_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MBMPI_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup))
MBMPI_FN(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
MBMPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result))
MBMPI_FN(int, Group_free, (MPI_Group *group))

/* Collectives */
MBMPI_FN(int, Barrier, (MPI_Comm comm))
MBMPI_FN(int, Bcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm))
MBMPI_FN(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm))
MBMPI_FN(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm))
MBMPI_FN(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt, MPI_Op op))
MBMPI_FN(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		       MPI_Datatype recvtype, int root, MPI_Comm comm))
MBMPI_FN(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm))
MBMPI_FN(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			MPI_Datatype recvtype, int root, MPI_Comm comm))
MBMPI_FN(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
			 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
MBMPI_FN(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			 MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
			  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt,
			       MPI_Op op, MPI_Comm comm))
MBMPI_FN(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt,
				     MPI_Op op, MPI_Comm comm))
MBMPI_FN(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm))
MBMPI_FN(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm))
MBMPI_FN(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
			  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))

/* One-sided communication */
MBMPI_FN(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
MBMPI_FN(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
			     MPI_Win *win))
MBMPI_FN(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
				    MPI_Win *win))
MBMPI_FN(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
MBMPI_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
MBMPI_FN(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
MBMPI_FN(int, Win_detach, (MPI_Win win, const void *base))
MBMPI_FN(int, Win_free, (MPI_Win *win))
MBMPI_FN(int, Win_get_group, (MPI_Win win, MPI_Group *group))
MBMPI_FN(int, Win_get_attr, (MPI_Win win, int keyval, void *attribute_val, int *flag))
MBMPI_FN(int, Win_set_name, (MPI_Win win, const char *name))
MBMPI_FN(int, Win_get_name, (MPI_Win win, char *name, int *resultlen))
MBMPI_FN(int, Win_create_errhandler, (MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler))
MBMPI_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
MBMPI_FN(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
MBMPI_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode))
MBMPI_FN(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
		    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
MBMPI_FN(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
		    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
MBMPI_FN(int, Accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			   int target_rank, MPI_Aint target_disp, int target_count,
			   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MBMPI_FN(int, Get_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			       void *result_addr, int result_count, MPI_Datatype result_datatype,
			       int target_rank, MPI_Aint target_disp, int target_count,
			       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MBMPI_FN(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
			     MPI_Aint target_disp, MPI_Op op, MPI_Win win))
MBMPI_FN(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr, void *result_addr,
				 MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
MBMPI_FN(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
		     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
		     MPI_Request *request))
MBMPI_FN(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
		     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
		     MPI_Request *request))
MBMPI_FN(int, Raccumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			    int target_rank, MPI_Aint target_disp, int target_count,
			    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MBMPI_FN(int, Rget_accumulate, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
				void *result_addr, int result_count, MPI_Datatype result_datatype,
				int target_rank, MPI_Aint target_disp, int target_count,
				MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request))
MBMPI_FN(int, Win_fence, (int assert, MPI_Win win))
MBMPI_FN(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
MBMPI_FN(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
MBMPI_FN(int, Win_complete, (MPI_Win win))
MBMPI_FN(int, Win_wait, (MPI_Win win))
MBMPI_FN(int, Win_test, (MPI_Win win, int *flag))
MBMPI_FN(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
MBMPI_FN(int, Win_unlock, (int rank, MPI_Win win))
MBMPI_FN(int, Win_lock_all, (int assert, MPI_Win win))
MBMPI_FN(int, Win_unlock_all, (MPI_Win win))
MBMPI_FN(int, Win_flush, (int rank, MPI_Win win))
MBMPI_FN(int, Win_flush_all, (MPI_Win win))
MBMPI_FN(int, Win_flush_local, (int rank, MPI_Win win))
MBMPI_FN(int, Win_flush_local_all, (MPI_Win win))
MBMPI_FN(int, Win_sync, (MPI_Win win))

/* Process topologies */
MBMPI_FN(int, Dims_create, (int nnodes, int ndims, int dims[]))
MBMPI_FN(int, Cart_create, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
			    MPI_Comm *comm_cart))
MBMPI_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
MBMPI_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
MBMPI_FN(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest))
MBMPI_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
MBMPI_FN(int, Cartdim_get, (MPI_Comm comm, int *ndims))
MBMPI_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
MBMPI_FN(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank))
MBMPI_FN(int, Graph_create, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
			     MPI_Comm *comm_graph))
MBMPI_FN(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
MBMPI_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
MBMPI_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
MBMPI_FN(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
MBMPI_FN(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank))
MBMPI_FN(int, Dist_graph_create_adjacent, (MPI_Comm comm, int indegree, const int sources[],
					   const int sourceweights[], int outdegree, const int destinations[],
					   const int destweights[], MPI_Info info, int reorder,
					   MPI_Comm *comm_dist_graph))
MBMPI_FN(int, Dist_graph_create, (MPI_Comm comm, int n, const int sources[], const int degrees[],
				  const int destinations[], const int weights[], MPI_Info info, int reorder,
				  MPI_Comm *comm_dist_graph))
MBMPI_FN(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree, int *weighted))
MBMPI_FN(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
				     int maxoutdegree, int destinations[], int destweights[]))
MBMPI_FN(int, Topo_test, (MPI_Comm comm, int *status))

/* Neighbourhood collectives */
MBMPI_FN(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				   int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
				    MPI_Comm comm))
MBMPI_FN(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				  int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
				   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
				   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MBMPI_FN(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
				   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
				   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
MBMPI_FN(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
				     MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
				    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
				    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
				    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
				    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
				    MPI_Request *req))

/* Non-blocking collectives */
MBMPI_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ibcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
			MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
			   MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
			 MPI_Request *req))
MBMPI_FN(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
			  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
			  MPI_Request *req))
MBMPI_FN(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *req))
MBMPI_FN(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
			   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
			   MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
			   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype dt,
				MPI_Op op, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt,
				      MPI_Op op, MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
		      MPI_Request *req))
MBMPI_FN(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
			MPI_Request *req))

/* MPI-4 */
MBMPI_FN(int, Isendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
			  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
			  MPI_Comm comm, MPI_Request *req))
MBMPI_FN(int, Isendrecv_replace, (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
				  int source, int recvtag, MPI_Comm comm, MPI_Request *req))

/* Persistent collectives (MPI-4) */
MBMPI_FN(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Bcast_init, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Info info,
			   MPI_Request *req))
MBMPI_FN(int, Reduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
			    int root, MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Allreduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
			       MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Gather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			    MPI_Request *req))
MBMPI_FN(int, Gatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
			     MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Scatter_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			     MPI_Request *req))
MBMPI_FN(int, Scatterv_init, (const void *sendbuf, const int sendcounts[], const int displs[],
			      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
			      MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			       MPI_Request *req))
MBMPI_FN(int, Allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
				const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
				MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			      MPI_Request *req))
MBMPI_FN(int, Alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
			       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
			       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Alltoallw_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
			       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
			       MPI_Request *req))
MBMPI_FN(int, Reduce_scatter_init, (const void *sendbuf, void *recvbuf, const int recvcounts[],
				    MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Reduce_scatter_block_init, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype dt,
					  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Scan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
			  MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Exscan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
			    MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Neighbor_allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
					MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Neighbor_allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					 void *recvbuf, const int recvcounts[], const int displs[],
					 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Neighbor_alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
				       MPI_Info info, MPI_Request *req))
MBMPI_FN(int, Neighbor_alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
					MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
					const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
					MPI_Request *req))
MBMPI_FN(int, Neighbor_alltoallw_init, (const void *sendbuf, const int sendcounts[],
					const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
					const int recvcounts[], const MPI_Aint rdispls[],
					const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
					MPI_Request *req))

MBMPI_FN(int, Op_create, (MPI_User_function *fn, int commute, MPI_Op *op))
MBMPI_FN(int, Op_free, (MPI_Op *op))
MBMPI_FN(int, Op_commutative, (MPI_Op op, int *commute))

/* Datatypes: envelopes, arrays, MPI-1 names, external32 */
MBMPI_FN(int, Type_get_envelope, (MPI_Datatype dt, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner))
MBMPI_FN(int, Type_get_contents, (MPI_Datatype dt, int max_integers, int max_addresses, int max_datatypes, int integers[], MPI_Aint addresses[], MPI_Datatype datatypes[]))
MBMPI_FN(int, Type_create_subarray, (int ndims, const int sizes[], const int subsizes[], const int starts[], int order, MPI_Datatype old, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_darray, (int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[], const int psizes[], int order, MPI_Datatype old, MPI_Datatype *newtype))
MBMPI_FN(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *newtype))
MBMPI_FN(int, Type_hindexed, (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype old, MPI_Datatype *newtype))
MBMPI_FN(int, Type_struct, (int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[], MPI_Datatype *newtype))
MBMPI_FN(int, Type_extent, (MPI_Datatype dt, MPI_Aint *extent))
MBMPI_FN(int, Type_lb, (MPI_Datatype dt, MPI_Aint *lb))
MBMPI_FN(int, Type_ub, (MPI_Datatype dt, MPI_Aint *ub))
MBMPI_FN(int, Address, (void *location, MPI_Aint *address))
MBMPI_FN(int, Type_get_extent_x, (MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent))
MBMPI_FN(int, Type_get_true_extent_x, (MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent))
MBMPI_FN(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype dt, MPI_Count count))
MBMPI_FN(int, Type_match_size, (int typeclass, int size, MPI_Datatype *type))
MBMPI_FN(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
MBMPI_FN(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
MBMPI_FN(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype dt, MPI_Aint *size))
MBMPI_FN(int, Pack_external, (const char datarep[], const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, MPI_Aint outsize, MPI_Aint *position))
MBMPI_FN(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype dt))

/* Intercommunicators and more communicator constructors */
MBMPI_FN(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm))
MBMPI_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
MBMPI_FN(int, Comm_remote_size, (MPI_Comm comm, int *size))
MBMPI_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
MBMPI_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request))
MBMPI_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
/* MPI-4.0, as MPICH and Open MPI 5 have it. */
MBMPI_FN(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
				    MPI_Request *request))
MBMPI_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
MBMPI_FN(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
MBMPI_FN(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))

/* C and Fortran handles */
MBMPI_FN(MPI_Fint, Comm_c2f, (MPI_Comm comm))
MBMPI_FN(MPI_Comm, Comm_f2c, (MPI_Fint comm))
MBMPI_FN(MPI_Fint, Type_c2f, (MPI_Datatype type))
MBMPI_FN(MPI_Datatype, Type_f2c, (MPI_Fint type))
MBMPI_FN(MPI_Fint, Group_c2f, (MPI_Group group))
MBMPI_FN(MPI_Group, Group_f2c, (MPI_Fint group))
MBMPI_FN(MPI_Fint, Request_c2f, (MPI_Request request))
MBMPI_FN(MPI_Request, Request_f2c, (MPI_Fint request))
MBMPI_FN(MPI_Fint, Op_c2f, (MPI_Op op))
MBMPI_FN(MPI_Op, Op_f2c, (MPI_Fint op))
MBMPI_FN(MPI_Fint, Info_c2f, (MPI_Info info))
MBMPI_FN(MPI_Info, Info_f2c, (MPI_Fint info))
MBMPI_FN(MPI_Fint, Win_c2f, (MPI_Win win))
MBMPI_FN(MPI_Win, Win_f2c, (MPI_Fint win))
MBMPI_FN(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
MBMPI_FN(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
MBMPI_FN(MPI_Fint, Message_c2f, (MPI_Message message))
MBMPI_FN(MPI_Message, Message_f2c, (MPI_Fint message))
MBMPI_FN(MPI_Fint, File_c2f, (MPI_File file))
MBMPI_FN(MPI_File, File_f2c, (MPI_Fint file))
MBMPI_FN(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
MBMPI_FN(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))

/* Generalized requests */
MBMPI_FN(int, Grequest_start, (MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel, void *extra, MPI_Request *request))
MBMPI_FN(int, Grequest_complete, (MPI_Request request))

/* Attributes and keyvals */
MBMPI_FN(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del, int *keyval, void *extra))
MBMPI_FN(int, Comm_free_keyval, (int *keyval))
MBMPI_FN(int, Comm_set_attr, (MPI_Comm comm, int keyval, void *val))
MBMPI_FN(int, Comm_delete_attr, (MPI_Comm comm, int keyval))
MBMPI_FN(int, Type_create_keyval, (MPI_Type_copy_attr_function *copy, MPI_Type_delete_attr_function *del, int *keyval, void *extra))
MBMPI_FN(int, Type_free_keyval, (int *keyval))
MBMPI_FN(int, Type_set_attr, (MPI_Datatype type, int keyval, void *val))
MBMPI_FN(int, Type_get_attr, (MPI_Datatype type, int keyval, void *val, int *flag))
MBMPI_FN(int, Type_delete_attr, (MPI_Datatype type, int keyval))
MBMPI_FN(int, Win_create_keyval, (MPI_Win_copy_attr_function *copy, MPI_Win_delete_attr_function *del, int *keyval, void *extra))
MBMPI_FN(int, Win_free_keyval, (int *keyval))
MBMPI_FN(int, Win_set_attr, (MPI_Win win, int keyval, void *val))
MBMPI_FN(int, Win_delete_attr, (MPI_Win win, int keyval))
MBMPI_FN(int, Keyval_create, (MPI_Copy_function *copy, MPI_Delete_function *del, int *keyval, void *extra))
MBMPI_FN(int, Keyval_free, (int *keyval))
MBMPI_FN(int, Attr_put, (MPI_Comm comm, int keyval, void *val))
MBMPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void *val, int *flag))
MBMPI_FN(int, Attr_delete, (MPI_Comm comm, int keyval))

/* Info */
MBMPI_FN(int, Info_create, (MPI_Info *info))
MBMPI_FN(int, Info_set, (MPI_Info info, const char *key, const char *value))
MBMPI_FN(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
MBMPI_FN(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))
MBMPI_FN(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
MBMPI_FN(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
MBMPI_FN(int, Info_delete, (MPI_Info info, const char *key))
MBMPI_FN(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
MBMPI_FN(int, Info_free, (MPI_Info *info))
MBMPI_FN(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value, int *flag))
MBMPI_FN(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))
MBMPI_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
MBMPI_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info))
MBMPI_FN(int, Win_set_info, (MPI_Win win, MPI_Info info))
MBMPI_FN(int, Win_get_info, (MPI_Win win, MPI_Info *info))

/* Errors and error handlers beyond communicators */
MBMPI_FN(int, Add_error_class, (int *errorclass))
MBMPI_FN(int, Add_error_code, (int errorclass, int *errorcode))
MBMPI_FN(int, Add_error_string, (int errorcode, const char *string))
MBMPI_FN(int, Errhandler_create, (MPI_Handler_function *fn, MPI_Errhandler *errhandler))
MBMPI_FN(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
MBMPI_FN(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler))
MBMPI_FN(int, File_create_errhandler, (MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler))
MBMPI_FN(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
MBMPI_FN(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler))
MBMPI_FN(int, File_call_errhandler, (MPI_File file, int errorcode))

/* What cannot work here: present, failing with a clear class. */
MBMPI_FN(int, Comm_get_parent, (MPI_Comm *parent))
MBMPI_FN(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[]))
MBMPI_FN(int, Comm_spawn_multiple, (int count, char *commands[], char **argvs[], const int maxprocs[], const MPI_Info info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[]))
MBMPI_FN(int, Open_port, (MPI_Info info, char *port_name))
MBMPI_FN(int, Close_port, (const char *port_name))
MBMPI_FN(int, Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
MBMPI_FN(int, Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm))
MBMPI_FN(int, Comm_disconnect, (MPI_Comm *comm))
MBMPI_FN(int, Comm_join, (int fd, MPI_Comm *intercomm))
MBMPI_FN(int, Publish_name, (const char *service, MPI_Info info, const char *port))
MBMPI_FN(int, Unpublish_name, (const char *service, MPI_Info info, const char *port))
MBMPI_FN(int, Lookup_name, (const char *service, MPI_Info info, char *port))
MBMPI_FN(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))
MBMPI_FN(int, File_close, (MPI_File *fh))
MBMPI_FN(int, File_delete, (const char *filename, MPI_Info info))
MBMPI_FN(int, Pcontrol, (const int level, ...))

#undef MBMPI_FN

/* The tool information interface (MPI_T), C only. The control variables
 * are the library's parameters (mpirun --params lists the same), read-only;
 * there are no performance variables yet. */
typedef struct mbmpi_t_enum *MPI_T_enum;
typedef struct mbmpi_t_cvar *MPI_T_cvar_handle;
typedef struct mbmpi_t_pvar *MPI_T_pvar_handle;
typedef struct mbmpi_t_session *MPI_T_pvar_session;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
enum {
	MPI_T_VERBOSITY_USER_BASIC = 1, MPI_T_VERBOSITY_USER_DETAIL, MPI_T_VERBOSITY_USER_ALL,
	MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_VERBOSITY_TUNER_ALL,
	MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
	MPI_T_BIND_NO_OBJECT = 1, MPI_T_BIND_MPI_COMM, MPI_T_BIND_MPI_DATATYPE,
	MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE, MPI_T_BIND_MPI_GROUP, MPI_T_BIND_MPI_OP,
	MPI_T_BIND_MPI_REQUEST, MPI_T_BIND_MPI_WIN, MPI_T_BIND_MPI_MESSAGE, MPI_T_BIND_MPI_INFO
};
enum {
	MPI_T_SCOPE_CONSTANT = 1, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL, MPI_T_SCOPE_GROUP,
	MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL, MPI_T_SCOPE_ALL_EQ
};
enum {
	MPI_T_PVAR_CLASS_STATE = 1, MPI_T_PVAR_CLASS_LEVEL, MPI_T_PVAR_CLASS_SIZE,
	MPI_T_PVAR_CLASS_PERCENTAGE, MPI_T_PVAR_CLASS_HIGHWATERMARK,
	MPI_T_PVAR_CLASS_LOWWATERMARK, MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_AGGREGATE,
	MPI_T_PVAR_CLASS_TIMER, MPI_T_PVAR_CLASS_GENERIC
};

#define MBMPI_TFN(name, args) \
	MBMPI_EXPORT int MPI_T_##name args; \
	MBMPI_EXPORT int PMPI_T_##name args;
MBMPI_TFN(init_thread, (int required, int *provided))
MBMPI_TFN(finalize, (void))
MBMPI_TFN(enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
MBMPI_TFN(enum_get_item, (MPI_T_enum enumtype, int index, int *value, char *name, int *name_len))
MBMPI_TFN(cvar_get_num, (int *num_cvar))
MBMPI_TFN(cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity,
			  MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
			  int *bind, int *scope))
MBMPI_TFN(cvar_get_index, (const char *name, int *cvar_index))
MBMPI_TFN(cvar_handle_alloc, (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
			      int *count))
MBMPI_TFN(cvar_handle_free, (MPI_T_cvar_handle *handle))
MBMPI_TFN(cvar_read, (MPI_T_cvar_handle handle, void *buf))
MBMPI_TFN(cvar_write, (MPI_T_cvar_handle handle, const void *buf))
MBMPI_TFN(pvar_get_num, (int *num_pvar))
MBMPI_TFN(pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity,
			  int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
			  int *desc_len, int *bind, int *readonly, int *continuous, int *atomic))
MBMPI_TFN(pvar_get_index, (const char *name, int var_class, int *pvar_index))
MBMPI_TFN(pvar_session_create, (MPI_T_pvar_session *session))
MBMPI_TFN(pvar_session_free, (MPI_T_pvar_session *session))
MBMPI_TFN(pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index, void *obj_handle,
			      MPI_T_pvar_handle *handle, int *count))
MBMPI_TFN(pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
MBMPI_TFN(pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MBMPI_TFN(pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MBMPI_TFN(pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
MBMPI_TFN(pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf))
MBMPI_TFN(pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
MBMPI_TFN(pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
MBMPI_TFN(category_get_num, (int *num_cat))
MBMPI_TFN(category_get_info, (int cat_index, char *name, int *name_len, char *desc,
			      int *desc_len, int *num_cvars, int *num_pvars, int *num_categories))
MBMPI_TFN(category_get_index, (const char *name, int *cat_index))
MBMPI_TFN(category_get_cvars, (int cat_index, int len, int indices[]))
MBMPI_TFN(category_get_pvars, (int cat_index, int len, int indices[]))
MBMPI_TFN(category_get_categories, (int cat_index, int len, int indices[]))
MBMPI_TFN(category_changed, (int *stamp))
#undef MBMPI_TFN

/* Extension: fi_getopt(FI_OPT_ENDPOINT, optname, ...) on the endpoint the
 * point-to-point engine opened, so that a program can read a provider's own
 * counters (matchbox: FI_MATCHBOX_OPT_STATS and FI_MATCHBOX_OPT_NET_STATS
 * from rdma/fi_ext_matchbox.h). Between MPI_Init and MPI_Finalize only.
 * Returns MPI_SUCCESS, MPI_ERR_UNSUPPORTED_OPERATION when the provider does
 * not know the option, MPI_ERR_ARG for a NULL or too short buffer, or
 * MPI_ERR_OTHER outside Init..Finalize. */
#define MPIX_FABRIC_GETOPT 1
MBMPI_EXPORT int MPIX_Fabric_getopt(int optname, void *optval, size_t *optlen);

#ifdef __cplusplus
}
#endif
#endif
