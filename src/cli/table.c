/*
** table.c -- text tables on stdout, each column padded to its widest cell
** (`sqlq stats`, `sqlq jobs`, ...).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_table_init(cli_table *t, size_t ncols, const char *const *header) {
  t->ncols = ncols;
  t->ncells = 0;
  t->cap = 0;
  t->cells = NULL;
  return cli_table_add(t, header);
}

int cli_table_add(cli_table *t, const char *const *row) {
  size_t i;
  if (t->ncells + t->ncols > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : t->ncols * 16;
    char **cells = realloc(t->cells, cap * sizeof *cells);
    if (cells == NULL) {
      return -1;
    }
    t->cells = cells;
    t->cap = cap;
  }
  for (i = 0; i < t->ncols; i++) {
    char *copy = strdup(row[i]);
    if (copy == NULL) {
      while (i > 0) {
        free(t->cells[t->ncells + --i]);
      }
      return -1;
    }
    t->cells[t->ncells + i] = copy;
  }
  t->ncells += t->ncols;
  return 0;
}

static int table_print(const cli_table *t, FILE *out) {
  size_t col, cell;
  size_t *width = calloc(t->ncols, sizeof *width);
  if (width == NULL) {
    return -1;
  }
  for (cell = 0; cell < t->ncells; cell++) {
    size_t len = strlen(t->cells[cell]);
    col = cell % t->ncols;
    if (len > width[col]) {
      width[col] = len;
    }
  }
  for (cell = 0; cell < t->ncells; cell++) {
    col = cell % t->ncols;
    if (col + 1 == t->ncols) {
      fprintf(out, "%s\n", t->cells[cell]);
    } else {
      fprintf(out, "%-*s  ", (int)width[col], t->cells[cell]);
    }
  }
  free(width);
  return 0;
}

static void table_free(cli_table *t) {
  size_t i;
  for (i = 0; i < t->ncells; i++) {
    free(t->cells[i]);
  }
  free(t->cells);
  t->cells = NULL;
  t->ncells = t->cap = 0;
}

int cli_table_finish(cli_table *t, int ok, const char *cmd) {
  ok = ok && table_print(t, stdout) == 0;
  table_free(t);
  if (!ok) {
    cli_error("%s: out of memory", cmd);
    return EXIT_SOFTWARE;
  }
  return 0;
}
