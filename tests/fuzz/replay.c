/*
** replay.c -- main() of the replay programs (replay_NAME): run a harness's
** LLVMFuzzerTestOneInput() once on each file named on the command line,
** or in a directory named there, as libFuzzer does with a corpus before
** it fuzzes.  The normal and sanitizer builds run the seed corpus so, which
** makes each reproducer kept there a regression test without clang.
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Absent unless the harness defines it. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static size_t runs;

static void run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  FZ_CHECK(f != NULL, "cannot open %s", path);
  size_t cap = 4096, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  FZ_CHECK(buf != NULL && !ferror(f), "cannot read %s", path);
  fclose(f);
  /* A copy of exactly n bytes, so that ASan sees a read past the input. */
  uint8_t *input = malloc(n ? n : 1);
  FZ_CHECK(input != NULL, "out of memory");
  memcpy(input, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(input, n);
  free(input);
  runs++;
}

static void run_path(const char *path) {
  struct stat st;
  FZ_CHECK(stat(path, &st) == 0, "no such file or directory: %s", path);
  if (!S_ISDIR(st.st_mode)) {
    run_file(path);
    return;
  }
  struct dirent **names;
  int n = scandir(path, &names, NULL, alphasort);
  FZ_CHECK(n >= 0, "cannot read the directory %s", path);
  for (int i = 0; i < n; i++) {
    char *full;
    if (names[i]->d_name[0] != '.') {
      FZ_CHECK(asprintf(&full, "%s/%s", path, names[i]->d_name) >= 0, "out of memory");
      run_path(full);
      free(full);
    }
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 64;
  }
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) run_path(argv[i]);
  printf("%s: %zu inputs ran without a finding\n", argv[0], runs);
  FZ_CHECK(runs > 0, "no input to run");
  return 0;
}
