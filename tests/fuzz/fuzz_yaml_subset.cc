// libFuzzer target "yaml_subset": see fuzz_bodies.h fuzz_yaml_subset() for the input shape and the
// checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_yaml_subset)
