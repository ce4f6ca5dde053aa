// libFuzzer target "json_document": see fuzz_bodies.h fuzz_json_document() for the checks.
#include "fuzz_bodies.h"

ISOLAB_FUZZ_TARGET(isolab::fuzz::fuzz_json_document)
