/*
** firebird_api.h -- the functions of libfbclient that the driver calls, and
** their redirection to the library loaded at the first open (sqlq_dl.h).
**
** A call of a function missing here fails to link when built with
** SQLQ_DLOPEN; a name listed here without its redirect fails to compile.
*/
#ifndef SQLQ_FIREBIRD_API_H
#define SQLQ_FIREBIRD_API_H

#include <ibase.h>

#include "sqlq_dl.h"

#define SQLQ__FB_API(X) \
  X(fb_interpret) \
  X(fb_sqlstate) \
  X(isc_attach_database) \
  X(isc_cancel_blob) \
  X(isc_cancel_events) \
  X(isc_close_blob) \
  X(isc_commit_transaction) \
  X(isc_create_blob2) \
  X(isc_create_database) \
  X(isc_database_info) \
  X(isc_detach_database) \
  X(isc_dsql_allocate_statement) \
  X(isc_dsql_describe) \
  X(isc_dsql_describe_bind) \
  X(isc_dsql_exec_immed2) \
  X(isc_dsql_execute) \
  X(isc_dsql_execute2) \
  X(isc_dsql_execute_immediate) \
  X(isc_dsql_fetch) \
  X(isc_dsql_free_statement) \
  X(isc_dsql_prepare) \
  X(isc_dsql_sql_info) \
  X(isc_event_block) \
  X(isc_event_counts) \
  X(isc_free) \
  X(isc_get_segment) \
  X(isc_open_blob2) \
  X(isc_put_segment) \
  X(isc_que_events) \
  X(isc_rollback_transaction) \
  X(isc_start_transaction) \
  X(isc_transaction_info) \
  X(isc_vax_integer)

enum { SQLQ__FB_API(SQLQ__DL_ID) SQLQ__FB_API_COUNT };

extern sqlq__dl_lib sqlq__fb_lib;

#ifdef SQLQ_DLOPEN
#define fb_interpret SQLQ__DL_FN(sqlq__fb_lib, fb_interpret)
#define fb_sqlstate SQLQ__DL_FN(sqlq__fb_lib, fb_sqlstate)
#define isc_attach_database SQLQ__DL_FN(sqlq__fb_lib, isc_attach_database)
#define isc_cancel_blob SQLQ__DL_FN(sqlq__fb_lib, isc_cancel_blob)
#define isc_cancel_events SQLQ__DL_FN(sqlq__fb_lib, isc_cancel_events)
#define isc_close_blob SQLQ__DL_FN(sqlq__fb_lib, isc_close_blob)
#define isc_commit_transaction SQLQ__DL_FN(sqlq__fb_lib, isc_commit_transaction)
#define isc_create_blob2 SQLQ__DL_FN(sqlq__fb_lib, isc_create_blob2)
#define isc_create_database SQLQ__DL_FN(sqlq__fb_lib, isc_create_database)
#define isc_database_info SQLQ__DL_FN(sqlq__fb_lib, isc_database_info)
#define isc_detach_database SQLQ__DL_FN(sqlq__fb_lib, isc_detach_database)
#define isc_dsql_allocate_statement SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_allocate_statement)
#define isc_dsql_describe SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_describe)
#define isc_dsql_describe_bind SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_describe_bind)
#define isc_dsql_exec_immed2 SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_exec_immed2)
#define isc_dsql_execute SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_execute)
#define isc_dsql_execute2 SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_execute2)
#define isc_dsql_execute_immediate SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_execute_immediate)
#define isc_dsql_fetch SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_fetch)
#define isc_dsql_free_statement SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_free_statement)
#define isc_dsql_prepare SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_prepare)
#define isc_dsql_sql_info SQLQ__DL_FN(sqlq__fb_lib, isc_dsql_sql_info)
#define isc_event_block SQLQ__DL_FN(sqlq__fb_lib, isc_event_block)
#define isc_event_counts SQLQ__DL_FN(sqlq__fb_lib, isc_event_counts)
#define isc_free SQLQ__DL_FN(sqlq__fb_lib, isc_free)
#define isc_get_segment SQLQ__DL_FN(sqlq__fb_lib, isc_get_segment)
#define isc_open_blob2 SQLQ__DL_FN(sqlq__fb_lib, isc_open_blob2)
#define isc_put_segment SQLQ__DL_FN(sqlq__fb_lib, isc_put_segment)
#define isc_que_events SQLQ__DL_FN(sqlq__fb_lib, isc_que_events)
#define isc_rollback_transaction SQLQ__DL_FN(sqlq__fb_lib, isc_rollback_transaction)
#define isc_start_transaction SQLQ__DL_FN(sqlq__fb_lib, isc_start_transaction)
#define isc_transaction_info SQLQ__DL_FN(sqlq__fb_lib, isc_transaction_info)
#define isc_vax_integer SQLQ__DL_FN(sqlq__fb_lib, isc_vax_integer)
#endif

#endif
