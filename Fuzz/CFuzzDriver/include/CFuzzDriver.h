#ifndef HERDR_CFUZZDRIVER_H
#define HERDR_CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry for programs that have their own main (SwiftPM names an executable's main
// <module>_main, so libFuzzer's own main is not the one that runs). Linked only when built with
// -sanitize=fuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
