// libzbar (Debian libzbar-dev): QR decoding for `herdr-remote pair --image`.
#include <zbar.h>
