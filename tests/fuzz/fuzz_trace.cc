// libFuzzer target "trace": see fuzz_bodies.h fuzz_trace() for the input shape and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_trace)
