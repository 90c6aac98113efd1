// libvterm (Debian libvterm-dev): the terminal emulator that keeps a screen session's screen.
#include <vterm.h>
