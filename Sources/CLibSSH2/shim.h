#ifndef HERDR_CLIBSSH2_SHIM_H
#define HERDR_CLIBSSH2_SHIM_H
#include <libssh2.h>
#endif
