#ifndef HERDR_CSYSTEM_H
#define HERDR_CSYSTEM_H

// Linux calls that Swift's Glibc module hides behind _GNU_SOURCE or does not import.
#include <spawn.h>

/// pipe2(fds, O_CLOEXEC | extra): both ends close on exec, atomically, so a concurrent spawn
/// elsewhere in the process cannot inherit them.
int csystem_pipe_cloexec(int fds[2], int extra_flags);

/// Adds "close every descriptor from `lowest` up" to spawn file actions (glibc 2.34+).
int csystem_spawn_closefrom(posix_spawn_file_actions_t *actions, int lowest);

/// Adds a chdir to spawn file actions (glibc 2.29+).
int csystem_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path);

/// setfsuid(2): the calling thread's file-system user (Linux credentials are per thread).
/// Leaving 0 also drops the thread's file capabilities, so root cannot bypass permissions.
int csystem_setfsuid(unsigned int uid);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int csystem_eventfd_nonblocking(void);

/// O_NONBLOCK for pipe2's extra flags.
int csystem_o_nonblock(void);

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC): the accepted socket closes on exec, atomically.
int csystem_accept_cloexec(int fd);

/// epoll_create1(EPOLL_CLOEXEC).
int csystem_epoll_create(void);

/// epoll_ctl with the event's data set to `fd` (struct epoll_event is packed on x86-64, which
/// Swift does not import faithfully, so it never crosses into Swift).
int csystem_epoll_ctl(int epfd, int op, int fd, unsigned int events);

/// epoll_wait into two plain arrays (at most 256 events): ready descriptors and their events.
int csystem_epoll_wait(int epfd, int *fds, unsigned int *events, int max_events, int timeout_ms);

unsigned int csystem_epollin(void);
unsigned int csystem_epollout(void);
unsigned int csystem_epollrdhup(void);
unsigned int csystem_epollerr(void);
unsigned int csystem_epollhup(void);

/// A new pseudo-terminal: the master (close-on-exec, not the caller's controlling terminal) in
/// `*master`, the slave's path in `slave_path`; IUTF8 on and the window `cols`×`rows` set. -1 with
/// errno on failure (nothing left open).
int csystem_openpty(int *master, char *slave_path, unsigned long path_size, unsigned short cols, unsigned short rows);

/// Sets the window size of a terminal (TIOCSWINSZ; on a PTY master the child gets SIGWINCH).
int csystem_set_window_size(int fd, unsigned short cols, unsigned short rows);

/// Spawn attributes for a terminal's child: a new session (POSIX_SPAWN_SETSID, so opening the
/// slave makes it the controlling terminal), every signal at its default, none blocked.
int csystem_spawn_terminal_attributes(posix_spawnattr_t *attributes);

/// malloc_trim(0): glibc gives the free pages of every malloc arena back to the kernel (the
/// pages stay mapped, and are zero-filled on their next use). 1 when it released any, else 0;
/// it has no failure to report.
int csystem_malloc_trim(void);

#endif
