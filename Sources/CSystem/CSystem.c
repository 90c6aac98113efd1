#define _GNU_SOURCE
#include "CSystem.h"
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <malloc.h>

int csystem_pipe_cloexec(int fds[2], int extra_flags) { return pipe2(fds, O_CLOEXEC | extra_flags); }

int csystem_spawn_closefrom(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int csystem_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int csystem_setfsuid(unsigned int uid) { return setfsuid(uid); }

int csystem_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int csystem_o_nonblock(void) { return O_NONBLOCK; }

int csystem_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }

#include <sys/epoll.h>

int csystem_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int csystem_epoll_ctl(int epfd, int op, int fd, unsigned int events) {
    struct epoll_event event = {.events = events, .data = {.fd = fd}};
    return epoll_ctl(epfd, op, fd, &event);
}

int csystem_epoll_wait(int epfd, int *fds, unsigned int *events, int max_events, int timeout_ms) {
    struct epoll_event ready[256];
    if (max_events > 256) max_events = 256;
    int count = epoll_wait(epfd, ready, max_events, timeout_ms);
    for (int i = 0; i < count; i++) {
        fds[i] = ready[i].data.fd;
        events[i] = ready[i].events;
    }
    return count;
}

unsigned int csystem_epollin(void) { return EPOLLIN; }
unsigned int csystem_epollout(void) { return EPOLLOUT; }
unsigned int csystem_epollrdhup(void) { return EPOLLRDHUP; }
unsigned int csystem_epollerr(void) { return EPOLLERR; }
unsigned int csystem_epollhup(void) { return EPOLLHUP; }

int csystem_openpty(int *master, char *slave_path, unsigned long path_size, unsigned short cols, unsigned short rows) {
    int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct termios attributes;
    struct winsize size = {.ws_row = rows, .ws_col = cols};
    if (grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, slave_path, path_size) != 0 ||
        tcgetattr(fd, &attributes) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    attributes.c_iflag |= IUTF8;
    if (tcsetattr(fd, TCSANOW, &attributes) != 0 || ioctl(fd, TIOCSWINSZ, &size) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    *master = fd;
    return 0;
}

int csystem_set_window_size(int fd, unsigned short cols, unsigned short rows) {
    struct winsize size = {.ws_row = rows, .ws_col = cols};
    return ioctl(fd, TIOCSWINSZ, &size);
}

int csystem_spawn_terminal_attributes(posix_spawnattr_t *attributes) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    int result = posix_spawnattr_setsigdefault(attributes, &all);
    if (result == 0) result = posix_spawnattr_setsigmask(attributes, &none);
    if (result == 0)
        result = posix_spawnattr_setflags(
            attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    return result;
}

#include <sched.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>

int csystem_setns_network(int fd) { return setns(fd, CLONE_NEWNET); }

int csystem_tun_attach(int fd, const char *name, char *actual, unsigned long actual_size) {
    struct ifreq request;
    memset(&request, 0, sizeof request);
    if (strlen(name) >= IFNAMSIZ || actual_size < IFNAMSIZ) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    request.ifr_flags = IFF_TUN | IFF_NO_PI;
    if (ioctl(fd, TUNSETIFF, &request) != 0) return -1;
    memcpy(actual, request.ifr_name, IFNAMSIZ);
    actual[IFNAMSIZ - 1] = 0;
    return 0;
}

int csystem_set_parent_death_signal(int signal) { return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0, 0, 0); }

int csystem_termination_signalfd(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    int result = pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (result != 0) {
        errno = result;
        return -1;
    }
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int csystem_timerfd_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int csystem_timerfd_set_absolute(int fd, long long nanoseconds) {
    struct itimerspec value;
    memset(&value, 0, sizeof value);
    value.it_value.tv_sec = nanoseconds / 1000000000LL;
    value.it_value.tv_nsec = nanoseconds % 1000000000LL;
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &value, NULL);
}

long long csystem_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);  // cannot fail: the clock exists and &now is valid
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int csystem_route_monitor_open(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl local;
    memset(&local, 0, sizeof local);
    local.nl_family = AF_NETLINK;
    local.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&local, sizeof local) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int csystem_tcp_interactive(int fd) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) return -1;
    // Best effort (Linux 3.12+): without it the kernel only queues more before the window.
    int unsent = CSYSTEM_TCP_UNSENT_LIMIT;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &unsent, sizeof unsent);
    return 0;
}
int csystem_malloc_trim(void) { return malloc_trim(0); }
