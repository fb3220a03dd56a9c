/*
** guardian.c -- running a command under a guardian process that kills the
** command's whole tree when its caller dies, however it dies.  The
** contract and the design are in guardian.h.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "guardian.h"

/* The signal with which a caller tells its guardian to kill the command's
** whole tree at once (cli_kill_guarded). */
#define GUARD_KILL SIGUSR1

/* The signals a guardian takes from a signalfd instead of by default:
** SIGCHLD, GUARD_KILL, and those it passes on when they come from its
** caller. */
static const int guard_signals[] = {SIGCHLD, GUARD_KILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT};

/* The lifeline: the caller keeps the write end (close-on-exec) open for as
** long as it lives and never writes to it; every guardian polls the read
** end, where end-of-file means the caller is gone. */
static int lifeline[2] = {-1, -1};

static void guard_set(sigset_t *set) {
  size_t i;
  sigemptyset(set);
  for (i = 0; i < sizeof guard_signals / sizeof guard_signals[0]; i++) {
    sigaddset(set, guard_signals[i]);
  }
}

/* Give every signal that has a handler its default action, in this
** process only: a vfork()ed child shares its parent's memory, where no
** handler may run (as glibc's posix_spawn does). */
static void default_handlers(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 &&
        ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)))
      signal(sig, SIG_DFL);
  }
}

/* C: in a child just vfork()ed by the guardian (so sharing its memory until
** the exec: it only makes system calls, writes nothing of the guardian's
** but errno, and runs no signal handler), unblock every signal, arrange to
** be killed with SIGKILL when the parent dies (and die at once if it
** already has), put io's stdin_fd (unless -1) on stdin and its stdout_fd
** (unless -1) on stdout and execvpe(argv) with
** envp (NULL: this process's environment).  When the program cannot be
** run, prints one line and exits 127 (not found) or 126.  vfork() rather
** than fork(): the guardian is suspended for the few system calls up to
** the exec instead of having its page tables copied, about a tenth of
** what `sqlq lock -n NAME -- true` costs (docs/benchmarks.md, "Start-up"). */
static void exec_child(pid_t parent, const cli_spawn_io *io, char **argv, char *const *envp)
  __attribute__((noreturn));
static void exec_child(pid_t parent, const cli_spawn_io *io, char **argv, char *const *envp) {
  int stdin_fd = io->stdin_fd;
  sigset_t none;
  default_handlers();
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* The parent may have died between fork() and prctl(): then the death
  ** signal will never come, so check by hand. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
    _exit(EXIT_SOFTWARE);
  }
  /* fd 0 can only be stdin_fd if stdin was closed: then keep it open across
  ** exec instead of duplicating it. */
  if (stdin_fd >= 0 && (stdin_fd == STDIN_FILENO ? fcntl(stdin_fd, F_SETFD, 0) != 0
                                                 : dup2(stdin_fd, STDIN_FILENO) < 0)) {
    _exit(EXIT_SOFTWARE);
  }
  /* The caller keeps every descriptor of io above stderr. */
  if (io->stdout_fd >= 0 && dup2(io->stdout_fd, STDOUT_FILENO) < 0) {
    _exit(EXIT_SOFTWARE);
  }
  execvpe(argv[0], argv, envp != NULL ? envp : environ);
  dprintf(STDERR_FILENO, "sqlq: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}

/* SIGKILL every child of this process, found in /proc (the pid of a child
** stays valid until this process reaps it). */
static void kill_children(void) {
  pid_t self = getpid();
  struct dirent *e;
  DIR *dir = opendir("/proc");
  if (dir == NULL) {
    return;
  }
  while ((e = readdir(dir)) != NULL) {
    char path[300], buf[256], *paren;
    ssize_t n;
    int fd, ppid;
    if (e->d_name[0] < '1' || e->d_name[0] > '9') {
      continue;
    }
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
      continue;
    }
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
      continue;
    }
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID ...", where COMM may hold anything. */
    paren = strrchr(buf, ')');
    if (paren != NULL && sscanf(paren + 1, " %*c %d", &ppid) == 1 && ppid == self) {
      kill((pid_t)atoi(e->d_name), SIGKILL);
    }
  }
  closedir(dir);
}

/* Kill the guardian's whole tree: it is a subreaper, so the children of
** each process that dies become its children, to be killed in the next
** round.  Returns once it has no child left. */
static void kill_tree(pid_t c) {
  kill(c, SIGKILL);
  for (;;) {
    pid_t got;
    kill_children();
    while ((got = waitpid(-1, NULL, 0)) < 0 && errno == EINTR) {}
    if (got < 0) {
      return;
    }
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
  }
}

/* Exit the way a process with wait status status did: with its exit code,
** or killed by the same signal (without a core dump). */
static void exit_like(int status) __attribute__((noreturn));
static void exit_like(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core = {0, 0};
    sigset_t one;
    setrlimit(RLIMIT_CORE, &no_core);
    prctl(PR_SET_DUMPABLE, 0);
    signal(sig, SIG_DFL);
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SOFTWARE);
}

/* G: close io's close_fds, start argv as C (with io and envp as for
** exec_child), close io's stdin_fd and stdout_fd, which C has on its stdin
** and stdout (so that only C holds them: the caller sees end-of-file when
** C ends, and C sees it when the caller closes its end), and watch C, the
** lifeline and the signals.  Never returns.  Entered with guard_signals
** blocked. */
static void guardian(pid_t caller, char **argv, const cli_spawn_io *io, char *const *envp)
  __attribute__((noreturn));
static void guardian(pid_t caller, char **argv, const cli_spawn_io *io, char *const *envp) {
  pid_t self = getpid(), c;
  struct pollfd fds[2];
  sigset_t set;
  size_t i;

  close(lifeline[1]);
  for (i = 0; i < io->nclose; i++) {
    close(io->close_fds[i]);
  }
  /* Drop the caller's handlers; a signal the caller ignores stays ignored
  ** for the command (a blocked signal still reaches the signalfd).  SIGCHLD
  ** ignored would reap children unseen, GUARD_KILL ignored would be lost:
  ** they get their default. */
  for (i = 0; i < sizeof guard_signals / sizeof guard_signals[0]; i++) {
    struct sigaction old;
    int sig = guard_signals[i];
    if (sig == SIGCHLD || sig == GUARD_KILL || sigaction(sig, NULL, &old) != 0 ||
        (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_IGN) {
      signal(sig, SIG_DFL);
    }
  }
  guard_set(&set);
  fds[0].fd = lifeline[0];
  fds[1].fd = signalfd(-1, &set, SFD_CLOEXEC);
  if (fds[1].fd < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || (c = vfork()) < 0) {
    dprintf(STDERR_FILENO, "sqlq: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(EXIT_SOFTWARE);
  }
  if (c == 0) {
    exec_child(self, io, argv, envp);
  }
  if (io->stdout_fd > STDERR_FILENO) {
    close(io->stdout_fd);
  }
  if (io->stdin_fd > STDERR_FILENO) {
    close(io->stdin_fd);
  }
  for (;;) {
    struct signalfd_siginfo si;
    fds[0].events = fds[1].events = POLLIN;
    fds[0].revents = fds[1].revents = 0;
    if (poll(fds, 2, -1) < 0) {
      continue;
    }
    if (fds[0].revents) {
      /* Nobody writes to the lifeline: the caller is gone. */
      kill_tree(c);
      _exit(EXIT_SOFTWARE);
    }
    if (read(fds[1].fd, &si, sizeof si) != (ssize_t)sizeof si) {
      continue;
    }
    if (si.ssi_signo == SIGCHLD) {
      pid_t got;
      int status;
      /* C, or an orphan of its tree handed to this subreaper. */
      while ((got = waitpid(-1, &status, WNOHANG)) > 0) {
        if (got == c) {
          exit_like(status);
        }
      }
    } else if ((pid_t)si.ssi_pid == caller && si.ssi_signo == GUARD_KILL) {
      kill_tree(c);
      exit_like(SIGKILL); /* a wait status: killed by SIGKILL */
    } else if ((pid_t)si.ssi_pid == caller) {
      kill(c, (int)si.ssi_signo);
    }
  }
}

pid_t cli_spawn_guarded(char **argv, int stdin_fd, char *const *envp) {
  cli_spawn_io io = {.stdin_fd = stdin_fd, .stdout_fd = -1, .close_fds = NULL, .nclose = 0};
  return cli_spawn_guarded_io(argv, &io, envp);
}

pid_t cli_spawn_guarded_io(char **argv, const cli_spawn_io *io, char *const *envp) {
  pid_t caller = getpid(), g;
  sigset_t set, old;
  int saved;
  if (lifeline[1] < 0 && pipe2(lifeline, O_CLOEXEC) != 0) {
    return -1;
  }
  /* Blocked across fork(): G takes them from its signalfd from birth. */
  guard_set(&set);
  sigprocmask(SIG_BLOCK, &set, &old);
  g = fork();
  if (g == 0) {
    guardian(caller, argv, io, envp);
  }
  saved = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  return g;
}

int cli_kill_guarded(pid_t guardian) {
  return kill(guardian, GUARD_KILL);
}
