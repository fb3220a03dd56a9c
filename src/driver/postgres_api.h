/*
** postgres_api.h -- the functions of libpq that the driver calls, and
** their redirection to the library loaded at the first open (sqlq_dl.h).
**
** A call of a function missing here fails to link when built with
** SQLQ_DLOPEN; a name listed here without its redirect fails to compile.
*/
#ifndef SQLQ_POSTGRES_API_H
#define SQLQ_POSTGRES_API_H

#include <libpq-fe.h>

#include "sqlq_dl.h"

#define SQLQ__PG_API(X) \
  X(PQbackendPID) \
  X(PQclear) \
  X(PQcmdStatus) \
  X(PQcmdTuples) \
  X(PQconnectdbParams) \
  X(PQconsumeInput) \
  X(PQdb) \
  X(PQenterPipelineMode) \
  X(PQerrorMessage) \
  X(PQexec) \
  X(PQexecParams) \
  X(PQexecPrepared) \
  X(PQexitPipelineMode) \
  X(PQfinish) \
  X(PQflush) \
  X(PQfreemem) \
  X(PQgetResult) \
  X(PQgetisnull) \
  X(PQgetlength) \
  X(PQgetvalue) \
  X(PQhost) \
  X(PQisBusy) \
  X(PQnotifies) \
  X(PQntuples) \
  X(PQpipelineStatus) \
  X(PQpipelineSync) \
  X(PQport) \
  X(PQprepare) \
  X(PQresultErrorField) \
  X(PQresultStatus) \
  X(PQsendQuery) \
  X(PQsendQueryParams) \
  X(PQsendQueryPrepared) \
  X(PQsetNoticeProcessor) \
  X(PQsocket) \
  X(PQstatus) \
  X(PQtransactionStatus) \
  X(PQuser)

enum { SQLQ__PG_API(SQLQ__DL_ID) SQLQ__PG_API_COUNT };

extern sqlq__dl_lib sqlq__pg_lib;

#ifdef SQLQ_DLOPEN
#define PQbackendPID SQLQ__DL_FN(sqlq__pg_lib, PQbackendPID)
#define PQclear SQLQ__DL_FN(sqlq__pg_lib, PQclear)
#define PQcmdStatus SQLQ__DL_FN(sqlq__pg_lib, PQcmdStatus)
#define PQcmdTuples SQLQ__DL_FN(sqlq__pg_lib, PQcmdTuples)
#define PQconnectdbParams SQLQ__DL_FN(sqlq__pg_lib, PQconnectdbParams)
#define PQconsumeInput SQLQ__DL_FN(sqlq__pg_lib, PQconsumeInput)
#define PQdb SQLQ__DL_FN(sqlq__pg_lib, PQdb)
#define PQenterPipelineMode SQLQ__DL_FN(sqlq__pg_lib, PQenterPipelineMode)
#define PQerrorMessage SQLQ__DL_FN(sqlq__pg_lib, PQerrorMessage)
#define PQexec SQLQ__DL_FN(sqlq__pg_lib, PQexec)
#define PQexecParams SQLQ__DL_FN(sqlq__pg_lib, PQexecParams)
#define PQexecPrepared SQLQ__DL_FN(sqlq__pg_lib, PQexecPrepared)
#define PQexitPipelineMode SQLQ__DL_FN(sqlq__pg_lib, PQexitPipelineMode)
#define PQfinish SQLQ__DL_FN(sqlq__pg_lib, PQfinish)
#define PQflush SQLQ__DL_FN(sqlq__pg_lib, PQflush)
#define PQfreemem SQLQ__DL_FN(sqlq__pg_lib, PQfreemem)
#define PQgetResult SQLQ__DL_FN(sqlq__pg_lib, PQgetResult)
#define PQgetisnull SQLQ__DL_FN(sqlq__pg_lib, PQgetisnull)
#define PQgetlength SQLQ__DL_FN(sqlq__pg_lib, PQgetlength)
#define PQgetvalue SQLQ__DL_FN(sqlq__pg_lib, PQgetvalue)
#define PQhost SQLQ__DL_FN(sqlq__pg_lib, PQhost)
#define PQisBusy SQLQ__DL_FN(sqlq__pg_lib, PQisBusy)
#define PQnotifies SQLQ__DL_FN(sqlq__pg_lib, PQnotifies)
#define PQntuples SQLQ__DL_FN(sqlq__pg_lib, PQntuples)
#define PQpipelineStatus SQLQ__DL_FN(sqlq__pg_lib, PQpipelineStatus)
#define PQpipelineSync SQLQ__DL_FN(sqlq__pg_lib, PQpipelineSync)
#define PQport SQLQ__DL_FN(sqlq__pg_lib, PQport)
#define PQprepare SQLQ__DL_FN(sqlq__pg_lib, PQprepare)
#define PQresultErrorField SQLQ__DL_FN(sqlq__pg_lib, PQresultErrorField)
#define PQresultStatus SQLQ__DL_FN(sqlq__pg_lib, PQresultStatus)
#define PQsendQuery SQLQ__DL_FN(sqlq__pg_lib, PQsendQuery)
#define PQsendQueryParams SQLQ__DL_FN(sqlq__pg_lib, PQsendQueryParams)
#define PQsendQueryPrepared SQLQ__DL_FN(sqlq__pg_lib, PQsendQueryPrepared)
#define PQsetNoticeProcessor SQLQ__DL_FN(sqlq__pg_lib, PQsetNoticeProcessor)
#define PQsocket SQLQ__DL_FN(sqlq__pg_lib, PQsocket)
#define PQstatus SQLQ__DL_FN(sqlq__pg_lib, PQstatus)
#define PQtransactionStatus SQLQ__DL_FN(sqlq__pg_lib, PQtransactionStatus)
#define PQuser SQLQ__DL_FN(sqlq__pg_lib, PQuser)
#endif

#endif
