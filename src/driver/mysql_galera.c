/*
** mysql_galera.c -- what sqlq refuses on a MariaDB Galera cluster.
**
** Galera replicates row changes, certified at COMMIT; it does not
** replicate user-level locks.  GET_LOCK on one node of a cluster excludes
** only the sessions of that node: two holders on two nodes would run at
** once, silently.  So the features whose exclusion is a GET_LOCK, named
** locks (mysql_lock.c) and the turns of subscribers making a table's
** triggers (mysql_sub.c), ask first whether the server is a node of a
** cluster, and refuse there with SQLQ_UNAVAILABLE (exit 69 in the CLI)
** and one line that says why.  Everything else stays correct on a
** cluster: its exclusion is the rows it writes, which certification
** orders across the nodes (a conflict fails one COMMIT with the deadlock
** error 1213, and the core runs the transaction again; docs/scale.md,
** "MariaDB Galera").  The wait's own GET_LOCK (mysql_wait.c) is only a
** timed sleep on a lock of its handle, and stays.
**
** A server is a node when @@wsrep_on is ON and @@wsrep_provider is not
** 'none' (a server built with Galera but running alone has the provider
** 'none').  SHOW GLOBAL VARIABLES answers on every server, MySQL's and a
** MariaDB built without Galera too (no rows: not a node).  The answer is
** kept for the handle's life: a server does not join a cluster under its
** sessions.
*/
#include <string.h>

#include "mysql_int.h"

/* Ask conn whether its server is a node of a Galera cluster. */
static int ask(sqlq_db *db, MYSQL *conn, int *node) {
  static const char sql[] =
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_provider')";
  int on = 0, provider = 0;
  if (mysql_query(conn, sql) != 0) return sqlq__my_error(db, conn, NULL, "SHOW GLOBAL VARIABLES");
  MYSQL_RES *res = mysql_store_result(conn);
  if (res == NULL) return sqlq__my_error(db, conn, NULL, "SHOW GLOBAL VARIABLES");
  MYSQL_ROW row;
  while ((row = mysql_fetch_row(res)) != NULL) {
    if (row[0] == NULL || row[1] == NULL) continue;
    if (strcmp(row[0], "wsrep_on") == 0) on = strcmp(row[1], "ON") == 0;
    if (strcmp(row[0], "wsrep_provider") == 0) provider = strcmp(row[1], "none") != 0;
  }
  mysql_free_result(res);
  *node = on && provider;
  return SQLQ_OK;
}

int sqlq__my_galera(sqlq_db *db, MYSQL *conn, int *node) {
  mysql_db *m = MY(db);
  if (m->galera < 0) {
    int rc = ask(db, conn, node);
    if (rc != SQLQ_OK) return rc;
    m->galera = *node;
  }
  *node = m->galera;
  return SQLQ_OK;
}

int sqlq__my_refuse_on_galera(sqlq_db *db, MYSQL *conn, const char *what, const char *why) {
  int node = 0, rc = sqlq__my_galera(db, conn, &node);
  if (rc != SQLQ_OK || !node) return rc;
  return sqlq__error(db, SQLQ_UNAVAILABLE,
                     "%s are refused on a Galera cluster (%s is a node), where %s"
                     " (docs/scale.md, \"MariaDB Galera\")",
                     what, db->url_redacted, why);
}
