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

/// setns(fd, CLONE_NEWNET): moves the calling thread into the network namespace open at `fd`.
int csystem_setns_network(int fd);

/// Makes `fd` (an open /dev/net/tun) the TUN interface `name` (IFF_TUN | IFF_NO_PI: bare IP
/// packets) in the calling thread's network namespace; the kernel's name for it in `actual`.
int csystem_tun_attach(int fd, const char *name, char *actual, unsigned long actual_size);

/// prctl(PR_SET_PDEATHSIG, signal): the caller gets `signal` when its parent thread ends.
int csystem_set_parent_death_signal(int signal);

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (threads made later inherit it) and
/// returns a signalfd (non-blocking, close-on-exec) that reads them.
int csystem_termination_signalfd(void);

/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC).
int csystem_timerfd_create(void);

/// Arms the timer for the absolute CLOCK_MONOTONIC time `nanoseconds` (0 disarms it).
int csystem_timerfd_set_absolute(int fd, long long nanoseconds);

/// CLOCK_MONOTONIC in nanoseconds.
long long csystem_monotonic_nanoseconds(void);

/// A NETLINK_ROUTE socket (non-blocking, close-on-exec) subscribed to the kernel's link, address
/// and route changes, IPv4 and IPv6; -1 with errno on failure (nothing left open).
int csystem_route_monitor_open(void);

/// Bytes a TCP socket of ours may hold written but not yet sent (TCP_NOTSENT_LOWAT).
#define CSYSTEM_TCP_UNSENT_LIMIT (128 * 1024)

/// An interactive TCP socket on every road: TCP_NODELAY (keystrokes are tiny; Nagle would hold
/// them back), and TCP_NOTSENT_LOWAT at CSYSTEM_TCP_UNSENT_LIMIT, so bulk output queues in the
/// program, where the flow window bounds it, not in the kernel behind a keystroke's answer. 0, or
/// -1 with errno when TCP_NODELAY could not be set (TCP_NOTSENT_LOWAT is best effort).
int csystem_tcp_interactive(int fd);

/// malloc_trim(0): glibc gives the free pages of every malloc arena back to the kernel (the
/// pages stay mapped, and are zero-filled on their next use). 1 when it released any, else 0;
/// it has no failure to report.
int csystem_malloc_trim(void);

#endif
