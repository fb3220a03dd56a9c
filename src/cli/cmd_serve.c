/*
** cmd_serve.c -- `sqlq serve`: a dashboard, a JSON API and Prometheus
** metrics over HTTP
** for the database's queues (docs/serve.md).  This file reads the flags and
** the token, opens the database, starts the listener (serve_http.c) and
** waits for SIGINT or SIGTERM, then stops: requests under way are answered,
** the listener closes, the handle closes.
**
** Safe by default: the listener is 127.0.0.1:8089 unless --listen says
** otherwise; any address but exactly 127.0.0.1 or ::1 needs a token, which
** comes from --token-file or $SQLQ_SERVE_TOKEN, never from the command line
** (where ps(1) would show it).  A token, once given, is asked of every
** request, on loopback too.
**
** Built only with libmicrohttpd (SQLQ_HAVE_MICROHTTPD); without it the
** command says so in one line and exits 69.
*/
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

static const char serve_usage[] =
  "usage: sqlq [--url URL] serve [--listen ADDR:PORT] [--read-only] [--token-file FILE]\n"
  "                              [--count-limit N]\n"
  "\n"
  "Serve a dashboard (/), a JSON API (/api/v1/) and Prometheus metrics\n"
  "(/metrics) of the database's queues over HTTP until SIGINT or SIGTERM.  Prints\n"
  "\"listening on http://ADDR:PORT/\" once it listens.  See docs/serve.md.\n"
  "\n"
  "  -l, --listen ADDR:PORT  where to listen (default 127.0.0.1:8089; IPv6 as\n"
  "                          [::1]:8089; port 0: any free port).  Any address\n"
  "                          but 127.0.0.1 or ::1 needs a token\n"
  "  -r, --read-only         refuse every action (POST) with 403\n"
  "  -c, --count-limit N     the queues' counts the API and the dashboard show\n"
  "                          stop at N (default 10000, 1 to 1000000000): a page\n"
  "                          reads at most that many jobs per count and refresh\n"
  "  -t, --token-file FILE   the token every request must carry as\n"
  "                          \"Authorization: Bearer TOKEN\": the file's first\n"
  "                          line, 16 to 1024 printable ASCII characters;\n"
  "                          else $SQLQ_SERVE_TOKEN\n"
  "  -h, --help              print this help\n";

#define TOKEN_MIN 16
#define TOKEN_MAX 1024

/* Parse ADDR:PORT or [ADDR6]:PORT into *ss.  Returns 0 or -1. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, int *loopback) {
  char host[64];
  const char *colon, *h = s;
  size_t host_len;
  long long port;
  memset(ss, 0, sizeof *ss);
  if (s[0] == '[') {
    const char *end = strchr(s, ']');
    if (end == NULL || end[1] != ':') {
      return -1;
    }
    h = s + 1;
    host_len = (size_t)(end - h);
    colon = end + 1;
  } else {
    if ((colon = strrchr(s, ':')) == NULL || memchr(s, ':', (size_t)(colon - s)) != NULL) {
      return -1;
    }
    host_len = (size_t)(colon - s);
  }
  if (host_len == 0 || host_len >= sizeof host || cli_parse_int(colon + 1, 0, 65535, &port) != 0) {
    return -1;
  }
  memcpy(host, h, host_len);
  host[host_len] = '\0';
  if (s[0] != '[') {
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    if (inet_pton(AF_INET, host, &in->sin_addr) != 1) {
      return -1;
    }
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    *len = sizeof *in;
    *loopback = in->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
  } else {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1) {
      return -1;
    }
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)port);
    *len = sizeof *in6;
    *loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
  }
  return 0;
}

/* Check a token: TOKEN_MIN to TOKEN_MAX printable ASCII characters but
** space.  Returns 0 or -1. */
static int check_token(const char *t) {
  size_t n = strlen(t), i;
  if (n < TOKEN_MIN || n > TOKEN_MAX) {
    return -1;
  }
  for (i = 0; i < n; i++) {
    if (t[i] <= 0x20 || t[i] >= 0x7f) {
      return -1;
    }
  }
  return 0;
}

/* Read the token from the first line of path into out (TOKEN_MAX + 2
** bytes).  Returns 0, or prints one line and returns the exit code. */
static int read_token_file(const char *path, char *out) {
  FILE *f = fopen(path, "r");
  size_t n;
  if (f == NULL) {
    cli_error("serve: cannot read the token file '%.200s': %s", path, strerror(errno));
    return EXIT_USAGE;
  }
  n = fread(out, 1, TOKEN_MAX + 1, f);
  fclose(f);
  out[n] = '\0';
  out[strcspn(out, "\r\n")] = '\0';
  if (check_token(out) != 0) {
    cli_error("serve: the token file's first line must be %d to %d printable ASCII characters",
              TOKEN_MIN, TOKEN_MAX);
    return EXIT_DATAERR;
  }
  return 0;
}

#ifdef SQLQ_HAVE_MICROHTTPD
/* Listen with ctx until SIGINT or SIGTERM.  Returns the exit code. */
static int serve(serve_ctx *ctx, const struct sockaddr_storage *ss, socklen_t len) {
  char why[256], shown[INET6_ADDRSTRLEN];
  struct serve_http *h;
  unsigned port = 0;
  sigset_t stop, old;
  int sig = 0;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  /* Blocked before libmicrohttpd's thread starts, which inherits the mask:
  ** only sigwait() below takes them.  A client that goes away must not kill
  ** the server with SIGPIPE. */
  pthread_sigmask(SIG_BLOCK, &stop, &old);
  signal(SIGPIPE, SIG_IGN);
  if ((h = serve_http_start(ctx, ss, len, &port, why, sizeof why)) == NULL) {
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    cli_error("serve: cannot listen: %s", why);
    return EXIT_UNAVAILABLE;
  }
  if (ss->ss_family == AF_INET) {
    inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, shown, sizeof shown);
    printf("listening on http://%s:%u/\n", shown, port);
  } else {
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, shown, sizeof shown);
    printf("listening on http://[%s]:%u/\n", shown, port);
  }
  fflush(stdout);
  while (sigwait(&stop, &sig) != 0) {}
  serve_http_stop(h);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return 0;
}
#endif

int cmd_serve(const cli_global *g, int argc, char **argv) {
  static const struct option options[] = {
    {"listen", required_argument, NULL, 'l'},
    {"read-only", no_argument, NULL, 'r'},
    {"count-limit", required_argument, NULL, 'c'},
    {"token-file", required_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
  };
  const char *listen = "127.0.0.1:8089", *token_file = NULL, *env;
  static char token[TOKEN_MAX + 2];
  struct sockaddr_storage ss;
  socklen_t len = 0;
  serve_ctx ctx;
  int c, code, loopback = 0;
  long long count_limit = SERVE_COUNT_LIMIT;

  memset(&ctx, 0, sizeof ctx);
  while ((c = cli_getopt("serve", argc, argv, ":l:rc:t:h", options)) != -1) {
    switch (c) {
    case 'l':
      listen = optarg;
      break;
    case 'r':
      ctx.read_only = 1;
      break;
    case 'c':
      if (cli_parse_int(optarg, 1, SQLQ_SUMMARY_LIMIT_MAX, &count_limit) != 0) {
        return cli_usage_error("serve",
                               "--count-limit takes a whole number from 1 to %d, not '%.40s'",
                               SQLQ_SUMMARY_LIMIT_MAX, optarg);
      }
      break;
    case 't':
      token_file = optarg;
      break;
    case 'h':
      fputs(serve_usage, stdout);
      return 0;
    default:
      return EXIT_USAGE;
    }
  }
  ctx.count_limit = count_limit;
  if (optind < argc) {
    return cli_usage_error("serve", "unexpected argument '%.40s'", argv[optind]);
  }
  if (parse_listen(listen, &ss, &len, &loopback) != 0) {
    return cli_usage_error("serve", "--listen takes ADDR:PORT or [ADDR6]:PORT, not '%.60s'",
                           listen);
  }
  token[0] = '\0';
  if (token_file != NULL) {
    if ((code = read_token_file(token_file, token)) != 0) {
      return code;
    }
  } else if ((env = getenv("SQLQ_SERVE_TOKEN")) != NULL && env[0] != '\0') {
    if (check_token(env) != 0) {
      cli_error("serve: $SQLQ_SERVE_TOKEN must be %d to %d printable ASCII characters", TOKEN_MIN,
                TOKEN_MAX);
      return EXIT_DATAERR;
    }
    snprintf(token, sizeof token, "%s", env);
  }
  if (token[0] != '\0') {
    ctx.token = token;
    ctx.token_len = strlen(token);
  } else if (!loopback) {
    return cli_usage_error("serve",
                           "listening on '%.60s' needs a token (--token-file or "
                           "$SQLQ_SERVE_TOKEN): only 127.0.0.1 and ::1 go without",
                           listen);
  }
  if ((ctx.db = cli_open(g, &code)) == NULL) {
    return code;
  }
#ifdef SQLQ_HAVE_MICROHTTPD
  code = serve(&ctx, &ss, len);
#else
  (void)len;
  cli_error("serve: this sqlq was built without libmicrohttpd (install libmicrohttpd-dev and "
            "build again)");
  code = EXIT_UNAVAILABLE;
#endif
  serve_counts_free(&ctx.counts);
  sqlq_close(ctx.db);
  return code;
}
