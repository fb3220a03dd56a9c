/*
** serve_http.c -- the HTTP side of `sqlq serve`, on libmicrohttpd (one
** internal thread answers every request; docs/serve.md says why this
** library).  Every request passes, in this order:
**
**   1. with a token: "Authorization: Bearer TOKEN", compared in constant
**      time (401 otherwise, whatever else the request holds); without one,
**      a Host header naming a loopback address or localhost (403: a DNS
**      rebinding page cannot send it);
**   2. its target parses (serve_parse_target(): the raw target, as the
**      URI log callback sees it, before libmicrohttpd decodes anything);
**   3. GET (or HEAD) for what is read, POST for actions (405 otherwise);
**   4. a POST: the header "X-Sqlq-Csrf: 1", which a page of another site
**      cannot send without a CORS preflight that this server never
**      grants; no Sec-Fetch-Site other than same-origin or none; no Origin
**      other than the Host's (403); --read-only refuses it (403); a body,
**      when there is one, is JSON (415 otherwise) of at most
**      SERVE_MAX_BODY bytes (413) that serve_parse_body() takes (400).
**
** Every answer, 4xx and 5xx included, carries the headers of
** add_headers(): a Content-Security-Policy among them.  Errors are JSON
** {"error":"..."}.
*/
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "serve.h"

/*
** libmicrohttpd is loaded with dlopen when `sqlq serve` starts (with
** SQLQ_DLOPEN, the default, as the backends' client libraries are:
** README.md), so that the other commands do not load it and the TLS
** libraries it links; SERVE_MHD_API lists every function called here, and
** each is redirected to the loaded one.  Built without SQLQ_DLOPEN it is
** linked.
*/
#define SERVE_MHD_API(X) \
  X(MHD_add_response_header) \
  X(MHD_create_response_from_buffer) \
  X(MHD_destroy_response) \
  X(MHD_get_daemon_info) \
  X(MHD_lookup_connection_value) \
  X(MHD_queue_response) \
  X(MHD_start_daemon) \
  X(MHD_stop_daemon)
#define SERVE_MHD_SONAME "libmicrohttpd.so.12"

#ifdef SQLQ_DLOPEN
#include <dlfcn.h>

#define SERVE_MHD_ID(name) SERVE_MHD_##name,
#define SERVE_MHD_NAME(name) #name,
enum { SERVE_MHD_API(SERVE_MHD_ID) SERVE_MHD_COUNT };
static void (*mhd_fns[SERVE_MHD_COUNT])(void);
/* The loaded function name, typed as its declaration (a macro is not
** expanded again inside itself). */
#define SERVE_MHD(name) ((__typeof__(&name))mhd_fns[SERVE_MHD_##name])
#define MHD_add_response_header SERVE_MHD(MHD_add_response_header)
#define MHD_create_response_from_buffer SERVE_MHD(MHD_create_response_from_buffer)
#define MHD_destroy_response SERVE_MHD(MHD_destroy_response)
#define MHD_get_daemon_info SERVE_MHD(MHD_get_daemon_info)
#define MHD_lookup_connection_value SERVE_MHD(MHD_lookup_connection_value)
#define MHD_queue_response SERVE_MHD(MHD_queue_response)
#define MHD_start_daemon SERVE_MHD(MHD_start_daemon)
#define MHD_stop_daemon SERVE_MHD(MHD_stop_daemon)

/* Load the library and its functions, once.  It stays loaded until the
** process ends.  Returns 0, or -1 with a message in why.  As for the
** backends' libraries (src/dl.c), tests, and only tests, may set
** SQLQ_TEST_LIBDIR to a directory to open DIR/soname instead (read with
** secure_getenv(): a set-user-ID program ignores it). */
static int mhd_load(char *why, size_t why_size) {
  static const char *const names[] = {SERVE_MHD_API(SERVE_MHD_NAME) NULL};
  static void *lib;
  const char *dir = secure_getenv("SQLQ_TEST_LIBDIR");
  char path[4096];
  size_t i;
  if (lib != NULL) {
    return 0;
  }
  snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", SERVE_MHD_SONAME);
  if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
    snprintf(why, why_size, "cannot load %s (install the package libmicrohttpd12)",
             SERVE_MHD_SONAME);
    return -1;
  }
  for (i = 0; names[i] != NULL; i++) {
    void *fn = dlsym(lib, names[i]);
    if (fn == NULL) {
      snprintf(why, why_size, "%s lacks %s", SERVE_MHD_SONAME, names[i]);
      dlclose(lib);
      lib = NULL;
      return -1;
    }
    memcpy(&mhd_fns[i], &fn, sizeof fn);
  }
  return 0;
}
#else
static int mhd_load(char *why, size_t why_size) {
  (void)why;
  (void)why_size;
  return 0;
}
#endif

/* One request: what the URI log callback copied, and the body so far. */
typedef struct request {
  char *target; /* the raw request target, NUL-terminated */
  int started;  /* the access handler saw the headers */
  char *body;
  size_t body_len;
  int body_too_big;
} request;

struct serve_http {
  struct MHD_Daemon *daemon;
};

static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *conn) {
  request *req = calloc(1, sizeof *req);
  (void)cls;
  (void)conn;
  if (req != NULL && (req->target = strdup(uri ? uri : "")) == NULL) {
    free(req);
    req = NULL;
  }
  return req;
}

static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  request *req = *con_cls;
  (void)cls;
  (void)conn;
  (void)toe;
  if (req != NULL) {
    free(req->target);
    free(req->body);
    free(req);
    *con_cls = NULL;
  }
}

/* The headers of every answer.  The API and /metrics load nothing, so the
** policy allows nothing; the dashboard's files may load this server's
** script, style and images, and fetch from it, nothing else (no inline
** script or style, no other origin).  No page may frame them. */
static void add_headers(struct MHD_Response *resp, const serve_reply *r) {
  MHD_add_response_header(resp, "Content-Type", r->content_type);
  MHD_add_response_header(resp, "Content-Security-Policy",
                          r->asset ? "default-src 'none'; script-src 'self'; style-src 'self'; "
                                     "img-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
                                     "base-uri 'none'; form-action 'none'"
                                   : "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
                                     "form-action 'none'");
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(resp, "X-Frame-Options", "DENY");
  MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(resp, "Cache-Control", "no-store");
  if (r->status == 401) {
    MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"sqlq\"");
  }
  if (r->status == 405) {
    MHD_add_response_header(resp, "Allow", "GET, HEAD, POST");
  }
}

static enum MHD_Result send_reply(serve_ctx *ctx, struct MHD_Connection *conn, serve_reply *r) {
  struct MHD_Response *resp;
  enum MHD_Result ret;
  static const char oom[] = "{\"error\":\"out of memory\"}";
  ctx->requests++;
  if (r->asset != NULL) {
    resp = MHD_create_response_from_buffer(r->len, (void *)r->asset, MHD_RESPMEM_PERSISTENT);
  } else if (r->body == NULL) {
    r->status = 500;
    r->content_type = "application/json";
    resp = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
  } else {
    resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
      free(r->body);
    }
  }
  r->body = NULL;
  if (resp == NULL) {
    ctx->failed++;
    return MHD_NO;
  }
  if (r->status >= 500) {
    ctx->failed++;
  } else if (r->status >= 400) {
    ctx->refused++;
  }
  add_headers(resp, r);
  ret = MHD_queue_response(conn, r->status, resp);
  MHD_destroy_response(resp);
  return ret;
}

static const char *header(struct MHD_Connection *conn, const char *name) {
  return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* Step 1: whether the request may go on; else r is set. */
static int check_access(serve_ctx *ctx, struct MHD_Connection *conn, serve_reply *r) {
  const char *auth = header(conn, "Authorization");
  if (ctx->token != NULL) {
    if (auth == NULL || strncmp(auth, "Bearer ", 7) != 0 ||
        !serve_equal_secret(auth + 7, strlen(auth + 7), ctx->token, ctx->token_len)) {
      serve_reply_error(r, 401, "a token is needed: Authorization: Bearer TOKEN");
      return 0;
    }
  } else if (!serve_host_is_local(header(conn, "Host"))) {
    serve_reply_error(r, 403, "without a token, the Host must be 127.0.0.1, [::1] or localhost");
    return 0;
  }
  return 1;
}

/* Whether the Origin header origin is http://HOST or https://HOST (behind
** a TLS proxy that keeps the Host) of the Host header. */
static int same_origin(const char *origin, const char *host) {
  size_t skip = strncmp(origin, "http://", 7) == 0    ? 7
                : strncmp(origin, "https://", 8) == 0 ? 8
                                                      : 0;
  return host != NULL && skip > 0 && strcmp(origin + skip, host) == 0;
}

/* Step 4 for a POST: whether it may act; else r is set. */
static int check_action(serve_ctx *ctx, struct MHD_Connection *conn, const request *req,
                        serve_body *body, serve_reply *r) {
  const char *csrf = header(conn, "X-Sqlq-Csrf");
  const char *site = header(conn, "Sec-Fetch-Site");
  const char *origin = header(conn, "Origin");
  const char *type = header(conn, "Content-Type");
  const char *why = NULL;
  if (csrf == NULL || strcmp(csrf, "1") != 0) {
    serve_reply_error(r, 403, "an action needs the header X-Sqlq-Csrf: 1");
  } else if (site != NULL && strcmp(site, "same-origin") != 0 && strcmp(site, "none") != 0) {
    serve_reply_error(r, 403, "a cross-site action is refused (Sec-Fetch-Site)");
  } else if (origin != NULL && !same_origin(origin, header(conn, "Host"))) {
    serve_reply_error(r, 403, "a cross-site action is refused (Origin)");
  } else if (ctx->read_only) {
    serve_reply_error(r, 403, "sqlq serve runs --read-only: no actions");
  } else if (req->body_too_big) {
    serve_reply_error(r, 413, "the body is too large");
  } else if (req->body_len > 0 && (type == NULL || strncmp(type, "application/json", 16) != 0 ||
                                   (type[16] != '\0' && type[16] != ';'))) {
    serve_reply_error(r, 415, "a body must be application/json");
  } else if (serve_parse_body(req->body, req->body_len, body, &why) != 0) {
    serve_reply_error(r, 400, why);
  } else {
    return 1;
  }
  return 0;
}

/* Steps 1 to 4 and the answer, once the whole request is in. */
static void answer(serve_ctx *ctx, struct MHD_Connection *conn, const request *req,
                   const char *method, serve_reply *r) {
  static serve_target t; /* one thread answers: too large for its stack */
  static serve_body body;
  const char *why = NULL;
  int post = strcmp(method, "POST") == 0;
  int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  body.n_ids = 0;
  if (!check_access(ctx, conn, r)) {
    /* r is set */
  } else if (serve_parse_target(req->target, strlen(req->target), &t, &why) != 0) {
    serve_reply_error(r, 400, why);
  } else if (!get && !post) {
    serve_reply_error(r, 405, "only GET, HEAD and POST");
  } else if (post && !check_action(ctx, conn, req, &body, r)) {
    /* r is set */
  } else if (t.n_segments == 1 && strcmp(t.segments[0], "metrics") == 0) {
    if (post || t.n_params > 0) {
      serve_reply_error(r, post ? 405 : 400, "GET /metrics takes no query string");
    } else {
      serve_metrics(ctx, r);
    }
  } else if (t.n_segments >= 1 && strcmp(t.segments[0], "api") == 0) {
    serve_api(ctx, &t, post, &body, r);
  } else if (!serve_dash(&t, post, r)) {
    serve_reply_error(r, 404, "no such resource: see /, /api/v1/queues and /metrics");
  }
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
  serve_ctx *ctx = cls;
  request *req = *con_cls;
  serve_reply r = {0};
  (void)url;
  (void)version;
  if (req == NULL) {
    return MHD_NO; /* memory ran out in uri_logger(): drop the connection */
  }
  if (!req->started) {
    req->started = 1;
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    if (req->body_too_big || req->body_len + n > SERVE_MAX_BODY) {
      req->body_too_big = 1;
      return MHD_YES;
    }
    char *p = realloc(req->body, req->body_len + n + 1);
    if (p == NULL) {
      return MHD_NO;
    }
    memcpy(p + req->body_len, upload_data, n);
    req->body = p;
    req->body_len += n;
    p[req->body_len] = '\0';
    return MHD_YES;
  }
  answer(ctx, conn, req, method, &r);
  return send_reply(ctx, conn, &r);
}

struct serve_http *serve_http_start(serve_ctx *ctx, const void *addr, size_t addr_len,
                                    unsigned *port_out, char *why, size_t why_size) {
  const struct sockaddr *sa = addr;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
  struct serve_http *h = calloc(1, sizeof *h);
  const union MHD_DaemonInfo *info;
  (void)addr_len;
  if (h == NULL) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  if (mhd_load(why, why_size) != 0) {
    free(h);
    return NULL;
  }
  if (sa->sa_family == AF_INET6) {
    flags |= MHD_USE_IPv6;
  }
  errno = 0;
  h->daemon = MHD_start_daemon(
    flags, 0, NULL, NULL, handle, ctx, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_URI_LOG_CALLBACK,
    uri_logger, NULL, MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL, MHD_OPTION_CONNECTION_LIMIT,
    (unsigned)64, MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)32, MHD_OPTION_CONNECTION_TIMEOUT,
    (unsigned)30, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_END);
  if (h->daemon == NULL) {
    snprintf(why, why_size, "%s", errno ? strerror(errno) : "libmicrohttpd refused to start");
    free(h);
    return NULL;
  }
  info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
  *port_out = info ? info->port : 0;
  return h;
}

void serve_http_stop(struct serve_http *h) {
  if (h != NULL) {
    MHD_stop_daemon(h->daemon);
    free(h);
  }
}
