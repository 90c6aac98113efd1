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
