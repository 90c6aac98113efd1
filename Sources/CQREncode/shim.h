#ifndef HERDR_CQRENCODE_SHIM_H
#define HERDR_CQRENCODE_SHIM_H

// libqrencode 4 (Debian libqrencode-dev): QRcode_encodeData, QRcode_free.
#include <qrencode.h>

#endif
