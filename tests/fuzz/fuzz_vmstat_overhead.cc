// libFuzzer target "vmstat_overhead": see fuzz_bodies.h fuzz_vmstat_overhead() for the input shape
// and the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_vmstat_overhead)
