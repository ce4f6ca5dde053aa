// The JUnit XML form of a Comparison, for CI.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"

namespace isolab {

// JUnit XML following the structure of the Jenkins xUnit plugin's junit-10.xsd (one
// <testsuites> with one <testsuite name tests failures errors skipped time>): one <testcase
// classname="isolab.compare.<spec>.primary|secondary" name="<row>"> per metric row; only a
// primary "regressed" is a <failure> (a secondary one passes, its <system-out> saying it does not
// set the exit status), "inconclusive" is <skipped>; testcase "kernel-health.<B>" fails when a
// kernel-failure class counts against B, "isolation-gate.<B>" (when a cell was gated) when a gate
// check does, "build-warnings.<B>" when a new warning is in a file B's series touches. Settings,
// the exit status basis, forced and differences are <properties>; the text report is the
// suite's <system-out>. Every attribute and text value is XML-escaped, characters not allowed in
// XML 1.0 and invalid UTF-8 bytes become '?'.
std::string render_junit(const Comparison& c);

}  // namespace isolab
