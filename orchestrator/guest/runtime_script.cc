#include "guest/runtime_script.h"

#include <regex>

#include "base/error.h"

namespace isolab {

namespace {

void check_setting(const std::string& value, const char* re_text, const char* what) {
  if (!std::regex_match(value, std::regex(re_text)))
    throw Error(std::string("guest runtime settings: bad ") + what + " '" + value + "'");
}

// The helpers: rt_line appends a record line, rt_read a file's first line with tabs as spaces.
constexpr const char* kHelpers =
    ": > /tmp/runtime\n"
    "rt_read() { cat \"$1\" 2>/dev/null | tr '\\t\\n' '  ' | sed 's/ *$//'; }\n"
    "rt_sysctl() {\n"
    "  if [ ! -e \"$2\" ]; then\n"
    "    echo \"isolab: setup: sysctl $1: $2 does not exist in this kernel\"; skip=1\n"
    "    printf 'sysctl\\t%s\\tmissing\\t\\n' \"$1\" >> /tmp/runtime; return\n"
    "  fi\n"
    "  echo \"$3\" > \"$2\"; w=$?\n"
    "  printf 'sysctl\\t%s\\t%s\\t%s\\n' \"$1\" $w \"$(rt_read $2)\" >> /tmp/runtime\n"
    "}\n"
    "rt_write() {\n"
    "  echo \"$3\" > \"$2\" 2>/dev/null; w=$?\n"
    "  printf '%s\\t%s\\t%s\\n' \"$1\" $w \"$(rt_read $2)\" >> /tmp/runtime\n"
    "}\n";

std::string sysctl_lines(const GuestRuntime& r) {
  std::string sh;
  for (const auto& [name, value] : r.sysctls) {
    check_setting(name, "[a-z0-9_]+(\\.[A-Za-z0-9_-]+)+", "sysctl name");
    check_setting(value, "[A-Za-z0-9 _.,:+=-]{1,100}", "sysctl value");
    std::string path = "/proc/sys/" + name;
    for (std::size_t i = 10; i < path.size(); ++i)
      if (path[i] == '.') path[i] = '/';
    sh += "rt_sysctl " + name + " " + path + " '" + value + "'\n";
  }
  return sh;
}

std::string move_lines(const GuestRuntime& r) {
  if (r.housekeeping.empty()) return "";
  check_setting(r.housekeeping, "[0-9][0-9,-]*", "housekeeping cpulist");
  check_setting(r.housekeeping_mask, "[0-9a-f][0-9a-f,]*", "housekeeping mask");
  const std::string& l = r.housekeeping;
  const std::string& m = r.housekeeping_mask;
  return "rt_write workqueue_cpumask /sys/devices/virtual/workqueue/cpumask " + m + "\n" +
         "rt_write default_smp_affinity /proc/irq/default_smp_affinity " + m + "\n" +
         "for d in /proc/irq/[0-9]*; do\n"
         "  echo " +
         l +
         " > $d/smp_affinity_list 2>/dev/null; w=$?\n"
         "  printf 'irq\\t%s\\t%s\\t%s\\n' ${d##*/} $w \"$(rt_read $d/smp_affinity_list)\" "
         ">> /tmp/runtime\n"
         "done\n"
         "for p in /proc/[0-9]*; do\n"
         "  [ -z \"$(cat $p/cmdline 2>/dev/null)\" ] && [ -e $p/comm ] || continue\n"
         "  taskset -p -c " +
         l +
         " ${p##*/} > /dev/null 2>&1; w=$?\n"
         "  a=$(grep Cpus_allowed_list $p/status 2>/dev/null | cut -f2)\n"
         "  printf 'kthread\\t%s\\t%s\\t%s\\t%s\\n' ${p##*/} $w \"$(rt_read $p/comm)\" \"$a\" "
         ">> /tmp/runtime\n"
         "done\n";
}

}  // namespace

std::string render_runtime_settings(const GuestRuntime& r) {
  if (r.empty()) return "";
  return std::string("echo \"isolab: the customer's runtime settings\"\n") + kHelpers +
         sysctl_lines(r) + move_lines(r) + "rec runtime 0 /tmp/runtime\n";
}

}  // namespace isolab
