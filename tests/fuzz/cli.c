/*
** cli.c -- fuzz the sqlq tool's argument parsing: every command, through
** cli_main() (src/cli/dispatch.c), the tool's own dispatch.
**
** Input: one byte that picks the database, then the words of the command
** line after `sqlq --url URL`, separated by NUL bytes (at most 64 words).
** The database is either
**   - "sqlite:" (even byte), a URL the library refuses with SQLQ_MISUSE,
**     so that every command parses and checks its arguments and then
**     fails to open: no command gets further, and under any retry policy a
**     bad URL is fatal; or
**   - a scratch SQLite file (odd byte), a fresh copy for each input of a
**     database made once with the schema, a queue with jobs, a ring and a
**     pool, so that the commands also run.
** The tool must never block or start a process here:
**   - inputs that give --url again before the command are skipped (they
**     could name a server);
**   - on the scratch database, `work` and `lock` (which run commands),
**     `bench` (threads, processes, sleeps), `ring read` with anything
**     that could mean --follow and `cron` with a word "run" (both wait for
**     ever) are skipped;
**   - fork() is defined here to abort, so a shape these rules miss is
**     reported as a crash with its input instead of running a program.
** stdin is /dev/null (push and ring push read an empty payload).
**
** Checks: the exit code is a sysexits code the tool documents (0 or 64 on
** the refused URL, where nothing gets past opening, or the conflict code
** that `lock --tempfail` was given, or 65 from serve's token file, read
** before the database is opened; 0, 64, 65, 69 or 75 on the scratch
** database); a failure prints exactly one line "sqlq: ..." on stderr and a
** success nothing there; and the sanitizers' checks.
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/cli/cli.h"
#include "fuzz.h"

#define MAX_WORDS 64

/* The scratch database: its URL, its path and the bytes of the template. */
static char scratch_url[600], scratch_path[512];
static unsigned char *template_db;
static size_t template_len;

pid_t fork(void) {
  fz_fail(__FILE__, __LINE__, "the tool tried to start a process");
}

/* Make the template: the schema, jobs (one dead, one delayed, one in a
** group, one with a dedupe key), a ring and a pool. */
static void make_template(const char *path) {
  char url[600];
  snprintf(url, sizeof url, "sqlite:%s?sync=off", path);
  sqlq_db *db = fz_open_init(url, 0);
  sqlq_job_spec spec = {.payload = "hello", .payload_len = 5};
  FZ_STATUS(db, sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_OK);
  spec.delay = 3600;
  spec.dedupe_key = "k";
  FZ_STATUS(db, sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_OK);
  spec.delay = 0;
  spec.dedupe_key = NULL;
  spec.group_key = "g";
  spec.priority = 5;
  FZ_STATUS(db, sqlq_enqueue(db, "q", &spec, NULL, NULL), SQLQ_OK);
  spec.group_key = NULL;
  spec.max_attempts = 1;
  FZ_STATUS(db, sqlq_enqueue(db, "dead", &spec, NULL, NULL), SQLQ_OK);
  sqlq_job *jobs;
  size_t n;
  FZ_STATUS(db, sqlq_claim(db, "dead", 1, NULL, &jobs, &n), SQLQ_OK);
  FZ_CHECK(n == 1, "no job to kill");
  FZ_STATUS(db, sqlq_fail(db, jobs[0].id, jobs[0].token, "boom", NULL), SQLQ_OK);
  sqlq_jobs_free(jobs, n);
  FZ_STATUS(db, sqlq_pause(db, "paused"), SQLQ_OK);
  FZ_STATUS(db, sqlq_ring_create(db, "r", 3), SQLQ_OK);
  for (int i = 0; i < 5; i++) FZ_STATUS(db, sqlq_ring_push(db, "r", "entry", 5, NULL), SQLQ_OK);
  FZ_STATUS(db, sqlq_pool_add(db, "p", "a", NULL), SQLQ_OK);
  FZ_STATUS(db, sqlq_pool_add(db, "p", "b", NULL), SQLQ_OK);
  sqlq_close(db);

  FILE *f = fopen(path, "rb");
  FZ_CHECK(f != NULL, "cannot read the template %s", path);
  struct stat st;
  FZ_CHECK(fstat(fileno(f), &st) == 0 && st.st_size > 0, "empty template");
  template_len = (size_t)st.st_size;
  template_db = malloc(template_len);
  FZ_CHECK(template_db && fread(template_db, 1, template_len, f) == template_len,
           "cannot read the template");
  fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  int null = open("/dev/null", O_RDONLY);
  FZ_CHECK(null >= 0 && dup2(null, STDIN_FILENO) == STDIN_FILENO, "cannot make stdin /dev/null");
  if (null != STDIN_FILENO) close(null);
  char template_path[400];
  snprintf(template_path, sizeof template_path, "%s/template.db", fz_scratch_dir());
  make_template(template_path);
  snprintf(scratch_path, sizeof scratch_path, "%s/run.db", fz_scratch_dir());
  snprintf(scratch_url, sizeof scratch_url, "sqlite:%s?sync=off", scratch_path);
  return 0;
}

/* Lay a fresh copy of the template at scratch_path, without what an
** earlier run left beside it. */
static void fresh_scratch(void) {
  static const char *const leftovers[] = {"-wal", "-shm", "-journal", "-sqlq"};
  char side[600];
  for (size_t i = 0; i < sizeof leftovers / sizeof leftovers[0]; i++) {
    snprintf(side, sizeof side, "%s%s", scratch_path, leftovers[i]);
    unlink(side);
  }
  int fd = open(scratch_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FZ_CHECK(fd >= 0 && write(fd, template_db, template_len) == (ssize_t)template_len,
           "cannot copy the template");
  close(fd);
}

/* Could word turn on `ring read --follow`?  Any long option that --follow
** starts with (getopt takes abbreviations), any short option group with an
** f: broader than getopt, which is safe. */
static int may_follow(const char *w) {
  if (strncmp(w, "--", 2) == 0) {
    size_t n = strcspn(w, "=");
    return n > 2 && strncmp(w, "--follow", n) == 0;
  }
  return w[0] == '-' && strchr(w, 'f') != NULL;
}

/* The index in words of the command's name, past the global options as
** getopt sees them: -1 when there is none, -2 when the options give --url
** (or an abbreviation of it). */
static int command_at(char **words, int n) {
  for (int i = 0; i < n; i++) {
    const char *w = words[i];
    if (strncmp(w, "--u", 3) == 0) return -2;
    if (w[0] != '-' || w[1] == '\0') return i;
    if (strcmp(w, "--") == 0) return i + 1 < n ? i + 1 : -1;
  }
  return -1;
}

/* Whether the words may run on the scratch database (see the top). */
static int safe_on_scratch(char **words, int n, int cmd) {
  static const char *const never[] = {"work", "lock", "bench"};
  if (cmd == -1) return 1;
  const char *name = words[cmd];
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
    if (strcmp(name, never[i]) == 0) return 0;
  if (strcmp(name, "ring") == 0)
    for (int i = cmd + 1; i < n; i++)
      if (may_follow(words[i])) return 0;
  if (strcmp(name, "cron") == 0)
    for (int i = cmd + 1; i < n; i++)
      if (strcmp(words[i], "run") == 0) return 0;
  /* `help work` prints usage only. */
  return 1;
}

/* Check what the tool printed on stderr for exit code code: nothing after
** a success, one line "sqlq: ..." after a failure.  (`lock --tempfail -E
** 0` is a failure that exits 0: quiet says whether that was possible.) */
static void check_stderr(const char *err, size_t len, int code, int quiet) {
  if (code == 0 && (quiet || len == 0)) {
    FZ_CHECK(len == 0, "exit 0 with a message on stderr: %.300s", err);
    return;
  }
  FZ_CHECK(len > 6 && strncmp(err, "sqlq: ", 6) == 0,
           "exit %d without a 'sqlq: ' line on stderr: '%.300s'", code, err);
  FZ_CHECK(memchr(err, '\n', len) == err + len - 1 && strlen(err) == len,
           "exit %d with other than one line on stderr: '%.300s'", code, err);
}

/* Whether `lock` may exit with code: its conflict code (-E) comes from the
** command line, so any whole number 0..255 among the words may be one. */
static int lock_code(char **words, int n, int cmd, int code) {
  if (cmd < 0 || strcmp(words[cmd], "lock") != 0) return 0;
  if (code == EXIT_TEMPFAIL) return 1;
  for (int i = cmd + 1; i < n; i++) {
    const char *w = words[i];
    /* -E3 and --conflict-exit-code=3 as well as -E 3. */
    if (strncmp(w, "-E", 2) == 0)
      w += 2;
    else if (strchr(w, '='))
      w = strchr(w, '=') + 1;
    char *end;
    long v = strtol(w, &end, 10);
    if (*w && *end == '\0' && v == code) return 1;
  }
  return 0;
}

/* Whether code is the data error of a command that reads a file of its
** arguments before it opens the database: `serve` and its token file. */
static int file_code(char **words, int cmd, int code) {
  return code == EXIT_DATAERR && cmd >= 0 && strcmp(words[cmd], "serve") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return -1;
  int scratch = data[0] & 1;
  /* The words: the rest of the input split at its NULs, in a copy with a
  ** NUL at its end; none when there is no rest. */
  char *text = malloc(size);
  FZ_CHECK(text != NULL, "out of memory");
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  char *argv[3 + MAX_WORDS + 1];
  int n = 0;
  for (char *w = text; size > 1 && w < text + size && n < MAX_WORDS; w += strlen(w) + 1)
    argv[3 + n++] = w;
  int cmd = command_at(argv + 3, n);
  if (cmd == -2 || (scratch && !safe_on_scratch(argv + 3, n, cmd))) {
    free(text);
    return -1;
  }
  argv[0] = "sqlq";
  argv[1] = "--url";
  argv[2] = scratch ? scratch_url : "sqlite:";
  argv[3 + n] = NULL;
  if (scratch) fresh_scratch();

  char *out = NULL, *err = NULL;
  size_t out_len = 0, err_len = 0;
  FILE *real_out = stdout, *real_err = stderr;
  stdout = open_memstream(&out, &out_len);
  stderr = open_memstream(&err, &err_len);
  FZ_CHECK(stdout != NULL && stderr != NULL, "cannot capture the output");
  int code = cli_main(3 + n, argv);
  fclose(stdout);
  fclose(stderr);
  stdout = real_out;
  stderr = real_err;

  int conflict = lock_code(argv + 3, n, cmd, code);
  if (scratch)
    FZ_CHECK(code == 0 || code == EXIT_USAGE || code == EXIT_DATAERR || code == EXIT_UNAVAILABLE ||
               code == EXIT_TEMPFAIL,
             "exit %d on the scratch database: %.300s", code, err);
  else
    FZ_CHECK(code == 0 || code == EXIT_USAGE || conflict || file_code(argv + 3, cmd, code),
             "exit %d where the URL cannot open: %.300s", code, err);
  check_stderr(err, err_len, code, !conflict);
  free(out);
  free(err);
  free(text);
  return 0;
}
