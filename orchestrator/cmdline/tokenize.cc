#include "cmdline/tokenize.h"

#include <cstdio>
#include <cstring>

#include "base/error.h"

namespace isolab {

bool kernel_isspace(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= '\t' && u <= '\r') || u == 0xA0;
}

std::string normalize_param_name(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c == '-') c = '_';
  return out;
}

std::string CmdlineToken::canonical() const {
  return value ? normalized + "=" + *value : normalized;
}

std::vector<CmdlineToken> tokenize_cmdline(std::string_view line) {
  if (line.size() > kMaxCmdlineBytes)
    throw Error("kernel command line of " + std::to_string(line.size()) +
                " bytes exceeds the limit of " + std::to_string(kMaxCmdlineBytes) + " bytes");
  for (size_t i = 0; i < line.size(); ++i) {
    const auto u = static_cast<unsigned char>(line[i]);
    if (u == 0x7f || (u < 0x20 && !(u >= '\t' && u <= '\r'))) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "binary byte 0x%02x at offset %zu", u, i);
      throw Error(std::string("kernel command line contains a ") + buf +
                  " (not a text command line)");
    }
  }
  // Work on a NUL-terminated copy and mirror next_arg() step by step, including its in-place
  // NUL writes, so that every quirk matches.
  std::vector<char> buf(line.begin(), line.end());
  buf.push_back('\0');
  char* const base = buf.data();
  std::vector<CmdlineToken> out;
  bool after_dashes = false;

  char* args = base;
  while (kernel_isspace(*args)) ++args;
  while (*args) {
    const size_t start_off = static_cast<size_t>(args - base);
    unsigned i = 0, equals = 0;
    int in_quote = 0, quoted = 0;
    bool value_quote_removed = false;
    if (*args == '"') {
      ++args;
      in_quote = 1;
      quoted = 1;
    }
    for (i = 0; args[i]; ++i) {
      if (kernel_isspace(args[i]) && !in_quote) break;
      if (equals == 0 && args[i] == '=') equals = i;
      if (args[i] == '"') in_quote = !in_quote;
    }
    const size_t end_off = static_cast<size_t>(args + i - base);
    char* param = args;
    char* val = nullptr;
    if (equals) {
      args[equals] = '\0';
      val = args + equals + 1;
      if (*val == '"') {
        ++val;
        value_quote_removed = true;
        if (args[i - 1] == '"') args[i - 1] = '\0';
      }
    }
    if (quoted && i > 0 && args[i - 1] == '"') args[i - 1] = '\0';
    if (args[i]) {
      args[i] = '\0';
      args += i + 1;
    } else {
      args += i;
    }
    while (kernel_isspace(*args)) ++args;

    CmdlineToken t;
    t.name = param;
    t.normalized = normalize_param_name(t.name);
    if (val) t.value = std::string(val);
    t.quoted = quoted || value_quote_removed;
    t.raw = std::string(line.substr(start_off, end_off - start_off));
    t.offset = start_off;
    if (!val && !after_dashes && std::strcmp(param, "--") == 0) {
      after_dashes = true;
      continue;
    }
    t.after_dashes = after_dashes;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace isolab
