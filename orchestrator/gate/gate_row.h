// One row of the isolation gate's report (gate/gate.h): a check, what was expected, what the
// guest showed, and whether it passed. Header-only: the rows are written by gate/gate.cc and
// gate/runtime_check.cc.
#pragma once

#include <string>

namespace isolab {

struct GateRow {
  std::string check;
  std::string expected;
  std::string effective;
  bool pass = true;
  bool warning = false;  // pass, but worth a look
  std::string detail;
};

}  // namespace isolab
