#ifndef HERDR_CSQLITE_SHIM_H
#define HERDR_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
