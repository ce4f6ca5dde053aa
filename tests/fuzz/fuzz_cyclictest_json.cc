// libFuzzer target "cyclictest_json": see fuzz_bodies.h fuzz_cyclictest_json() for the input shape
// and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_cyclictest_json)
