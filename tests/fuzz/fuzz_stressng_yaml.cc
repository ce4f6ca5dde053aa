// libFuzzer target "stressng_yaml": see fuzz_bodies.h fuzz_stressng_yaml() for the input shape and
// the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_stressng_yaml)
