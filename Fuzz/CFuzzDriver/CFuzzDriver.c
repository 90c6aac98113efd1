// Declarations only (include/CFuzzDriver.h): SwiftPM needs a source file in a C target.
#include "CFuzzDriver.h"
