// libpng 1.6 (Debian libpng-dev): the simplified png_image API, to read a picture as 8-bit gray.
#include <png.h>
