// libFuzzer target "channel": see fuzz_bodies.h fuzz_channel() for the input shape and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_channel)
