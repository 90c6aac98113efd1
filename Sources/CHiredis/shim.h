#ifndef HERDR_CHIREDIS_SHIM_H
#define HERDR_CHIREDIS_SHIM_H
#include <hiredis/hiredis.h>
#endif
