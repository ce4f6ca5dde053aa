#include "cli/source_dir.h"

namespace isolab {

const char* isolab_source_dir() { return ISOLAB_SOURCE_DIR; }

}  // namespace isolab
