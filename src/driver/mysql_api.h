/*
** mysql_api.h -- the functions of libmariadb that the driver calls, and
** their redirection to the library loaded at the first open (sqlq_dl.h).
**
** A call of a function missing here fails to link when built with
** SQLQ_DLOPEN; a name listed here without its redirect fails to compile.
*/
#ifndef SQLQ_MYSQL_API_H
#define SQLQ_MYSQL_API_H

#include <mysql.h>

#include "sqlq_dl.h"

#define SQLQ__MY_API(X) \
  X(mysql_close) \
  X(mysql_errno) \
  X(mysql_error) \
  X(mysql_fetch_fields) \
  X(mysql_fetch_row) \
  X(mysql_free_result) \
  X(mysql_get_socket) \
  X(mysql_init) \
  X(mysql_next_result) \
  X(mysql_num_fields) \
  X(mysql_options) \
  X(mysql_query) \
  X(mysql_read_query_result) \
  X(mysql_real_connect) \
  X(mysql_send_query) \
  X(mysql_server_init) \
  X(mysql_stmt_affected_rows) \
  X(mysql_stmt_bind_param) \
  X(mysql_stmt_bind_result) \
  X(mysql_stmt_close) \
  X(mysql_stmt_data_seek) \
  X(mysql_stmt_errno) \
  X(mysql_stmt_error) \
  X(mysql_stmt_execute) \
  X(mysql_stmt_fetch) \
  X(mysql_stmt_fetch_column) \
  X(mysql_stmt_field_count) \
  X(mysql_stmt_free_result) \
  X(mysql_stmt_init) \
  X(mysql_stmt_insert_id) \
  X(mysql_stmt_num_rows) \
  X(mysql_stmt_prepare) \
  X(mysql_stmt_reset) \
  X(mysql_stmt_result_metadata) \
  X(mysql_stmt_store_result) \
  X(mysql_store_result) \
  X(mysql_thread_id)

enum { SQLQ__MY_API(SQLQ__DL_ID) SQLQ__MY_API_COUNT };

extern sqlq__dl_lib sqlq__my_lib;

#ifdef SQLQ_DLOPEN
#define mysql_close SQLQ__DL_FN(sqlq__my_lib, mysql_close)
#define mysql_errno SQLQ__DL_FN(sqlq__my_lib, mysql_errno)
#define mysql_error SQLQ__DL_FN(sqlq__my_lib, mysql_error)
#define mysql_fetch_fields SQLQ__DL_FN(sqlq__my_lib, mysql_fetch_fields)
#define mysql_fetch_row SQLQ__DL_FN(sqlq__my_lib, mysql_fetch_row)
#define mysql_free_result SQLQ__DL_FN(sqlq__my_lib, mysql_free_result)
#define mysql_get_socket SQLQ__DL_FN(sqlq__my_lib, mysql_get_socket)
#define mysql_init SQLQ__DL_FN(sqlq__my_lib, mysql_init)
#define mysql_next_result SQLQ__DL_FN(sqlq__my_lib, mysql_next_result)
#define mysql_num_fields SQLQ__DL_FN(sqlq__my_lib, mysql_num_fields)
#define mysql_options SQLQ__DL_FN(sqlq__my_lib, mysql_options)
#define mysql_query SQLQ__DL_FN(sqlq__my_lib, mysql_query)
#define mysql_read_query_result SQLQ__DL_FN(sqlq__my_lib, mysql_read_query_result)
#define mysql_real_connect SQLQ__DL_FN(sqlq__my_lib, mysql_real_connect)
#define mysql_send_query SQLQ__DL_FN(sqlq__my_lib, mysql_send_query)
#define mysql_server_init SQLQ__DL_FN(sqlq__my_lib, mysql_server_init)
#define mysql_stmt_affected_rows SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_affected_rows)
#define mysql_stmt_bind_param SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_bind_param)
#define mysql_stmt_bind_result SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_bind_result)
#define mysql_stmt_close SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_close)
#define mysql_stmt_data_seek SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_data_seek)
#define mysql_stmt_errno SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_errno)
#define mysql_stmt_error SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_error)
#define mysql_stmt_execute SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_execute)
#define mysql_stmt_fetch SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_fetch)
#define mysql_stmt_fetch_column SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_fetch_column)
#define mysql_stmt_field_count SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_field_count)
#define mysql_stmt_free_result SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_free_result)
#define mysql_stmt_init SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_init)
#define mysql_stmt_insert_id SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_insert_id)
#define mysql_stmt_num_rows SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_num_rows)
#define mysql_stmt_prepare SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_prepare)
#define mysql_stmt_reset SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_reset)
#define mysql_stmt_result_metadata SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_result_metadata)
#define mysql_stmt_store_result SQLQ__DL_FN(sqlq__my_lib, mysql_stmt_store_result)
#define mysql_store_result SQLQ__DL_FN(sqlq__my_lib, mysql_store_result)
#define mysql_thread_id SQLQ__DL_FN(sqlq__my_lib, mysql_thread_id)
#endif

#endif
