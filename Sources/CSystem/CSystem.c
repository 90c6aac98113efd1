#define _GNU_SOURCE
#include "CSystem.h"
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <unistd.h>

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
