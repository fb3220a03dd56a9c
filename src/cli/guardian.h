/*
** guardian.h -- running a command under a guardian (guardian.c), for the
** commands that run other programs (`sqlq work`, `sqlq lock`): the command
** never outlives the sqlq process that started it, even one killed with
** SIGKILL, and what the guardian inherited (a lock's hold) outlives the
** command's whole tree.  POSIX plus Linux's prctl() and signalfd().
*/
#ifndef SQLQ_CLI_GUARDIAN_H
#define SQLQ_CLI_GUARDIAN_H

#include <stddef.h>
#include <sys/types.h>

/* Run argv (execvpe) as a guarded command C, with stdin_fd (unless -1) as
** its stdin and envp as its environment (NULL: the caller's), and return
** the pid of its guardian G, or -1 with errno set.  envp needs to stay valid
** only until this returns (G and C have their copies).  The caller reaps G with waitpid(): G
** ends the way C did (same exit code, or killed by the same signal, with
** no core dump), and the caller never sees C.
**
** Design: G is a child subreaper (PR_SET_CHILD_SUBREAPER) that forks C and
** polls a "lifeline" pipe whose only write end the caller holds for life
** (one pipe for all of a caller's guardians).  End-of-file on it means the
** caller died, even by SIGKILL: G then SIGKILLs its children, reaps, and
** repeats until it has none, since the children of each dead process of
** C's tree become G's, whatever process group or session they moved to;
** only then does G exit, so what G inherited from the caller by fork (a
** lock's hold) outlives the whole tree.  C dies with G (PR_SET_PDEATHSIG).
** When C ends, G exits at once: processes C left in the background are
** left alone, as a shell or flock(1) would.  C stays in the caller's
** process group (terminal signals and job control reach it as before).
**
** SIGTERM, SIGINT, SIGHUP and SIGQUIT that the caller sends to G are
** passed on to C; G ignores them from anyone else (a terminal or a kill of
** the process group reaches C directly).  A signal the caller ignores stays
** ignored for C; the other signals start with their default action.
** cli_kill_guarded() kills C's whole tree at once. */
pid_t cli_spawn_guarded(char **argv, int stdin_fd, char *const *envp);

/* The descriptors of a command started with cli_spawn_guarded_io(), all
** owned by the caller: stdin_fd and stdout_fd (-1: the caller's own) go to
** C's stdin and stdout, and G closes them once C has them, so that C holds
** the only copies G got; G closes the nclose descriptors of close_fds at
** once (the caller's ends of the pipes of its other commands, which G
** would otherwise keep open for as long as it lives). */
typedef struct cli_spawn_io {
  int stdin_fd;
  int stdout_fd;
  const int *close_fds;
  size_t nclose;
} cli_spawn_io;

/* cli_spawn_guarded() with C's stdin and stdout given by io (whose
** descriptors must not be 0, 1 or 2 unless -1). */
pid_t cli_spawn_guarded_io(char **argv, const cli_spawn_io *io, char *const *envp);

/* Tell the guardian G (from cli_spawn_guarded) to SIGKILL its command and
** every process of the command's tree, as when the caller dies; G then
** ends as killed by SIGKILL, for the caller to reap.  This is the last
** step of stopping a command that a SIGTERM (sent to G, passed on to C)
** did not end within a grace period.  Returns kill()'s result. */
int cli_kill_guarded(pid_t guardian);

#endif /* SQLQ_CLI_GUARDIAN_H */
