// libFuzzer target "gate": see fuzz_bodies.h fuzz_gate() for the input shape and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_gate)
