// libFuzzer target "oslat": see fuzz_bodies.h fuzz_oslat() for the input shape and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_oslat)
