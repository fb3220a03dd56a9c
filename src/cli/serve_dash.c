/*
** serve_dash.c -- the dashboard of `sqlq serve` (docs/serve.md): "/" is its
** one page, "/dash/NAME" its files (style, script, icon).  They are the
** files of src/cli/dash/, which CMake builds into the binary as
** serve_assets.c (scripts/embed_assets.cmake): nothing is read from disk or
** the network at run time.  The page draws everything with its script from
** the JSON API (/api/v1/), so these answers hold no data of the database.
*/
#include <string.h>

#include "serve.h"

/* The asset called name, or NULL. */
static const serve_asset *find_asset(const char *name) {
  size_t i;
  for (i = 0; i < serve_assets_count; i++) {
    if (strcmp(serve_assets[i].name, name) == 0) {
      return &serve_assets[i];
    }
  }
  return NULL;
}

int serve_dash(const serve_target *t, int post, serve_reply *r) {
  const serve_asset *a = NULL;
  if (t->n_segments == 0) {
    a = find_asset("index.html");
  } else if (t->n_segments == 2 && strcmp(t->segments[0], "dash") == 0 &&
             strcmp(t->segments[1], "index.html") != 0) {
    a = find_asset(t->segments[1]);
  }
  if (a == NULL) {
    return 0;
  }
  if (post || t->n_params > 0) {
    serve_reply_error(r, post ? 405 : 400, "the dashboard's files take GET and no query string");
    return 1;
  }
  r->status = 200;
  r->content_type = a->content_type;
  r->asset = a->data;
  r->len = a->len;
  return 1;
}
