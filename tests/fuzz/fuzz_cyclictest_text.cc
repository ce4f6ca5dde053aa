// libFuzzer target "cyclictest_text": see fuzz_bodies.h fuzz_cyclictest_text() for the input shape
// and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_cyclictest_text)
