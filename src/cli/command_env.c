/*
** command_env.c -- the environment of the commands that `sqlq work` and
** `sqlq lock` run: the caller's, without SQLQ_URL (which may hold a
** password) and with the variables the tool sets for each command.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Whether the environment entry "NAME=value" is the variable name. */
static int env_is(const char *entry, const char *name) {
  size_t len = strlen(name);
  return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

/* Whether entry is one of the NULL-terminated names (names may be NULL). */
static int env_is_any(const char *entry, const char *const *names) {
  for (; names != NULL && *names != NULL; names++) {
    if (env_is(entry, *names)) {
      return 1;
    }
  }
  return 0;
}

char **cli_command_env(const cli_global *g, int pass_url, const char *const *names, char ***slots) {
  static const char url_name[] = "SQLQ_URL=";
  size_t inherited = 0, n_names = 0, url_size = pass_url ? sizeof url_name + strlen(g->url) : 0;
  size_t i, n = 0;
  char **env;
  while (environ[inherited] != NULL) {
    inherited++;
  }
  while (names != NULL && names[n_names] != NULL) {
    n_names++;
  }
  /* The array, then the SQLQ_URL entry, in one block. */
  env = malloc((inherited + 2 + n_names) * sizeof *env + url_size);
  if (env == NULL) {
    return NULL;
  }
  for (i = 0; i < inherited; i++) {
    if (!env_is(environ[i], "SQLQ_URL") && !env_is_any(environ[i], names)) {
      env[n++] = environ[i];
    }
  }
  if (pass_url) {
    char *url = (char *)(env + inherited + 2 + n_names);
    snprintf(url, url_size, "%s%s", url_name, g->url);
    env[n++] = url;
  }
  if (slots != NULL) {
    *slots = env + n;
  }
  memset(env + n, 0, (n_names + 1) * sizeof *env);
  return env;
}
