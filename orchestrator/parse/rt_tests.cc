#include "parse/rt_tests.h"

#include <algorithm>
#include <cctype>

#include "base/files.h"

namespace isolab {

std::string rt_tests_null_nonfinite(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    std::size_t j = i;
    if (text[j] == '-' || text[j] == '+') ++j;
    std::size_t word_end = j;
    while (word_end < text.size() && std::isalpha(static_cast<unsigned char>(text[word_end])))
      ++word_end;
    std::string word(text.substr(j, word_end - j));
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    bool prev_ok = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
    if (prev_ok && (word == "nan" || word == "inf" || word == "infinity")) {
      out += "null";
      i = word_end - 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::map<std::string, std::string> rt_tests_versions(const std::string& tool,
                                                     const std::string& printed_raw,
                                                     std::vector<std::string>* notes) {
  if (printed_raw.empty()) return {};
  const std::string printed = sanitize_excerpt(printed_raw, 40);
  const bool two_decimals = printed.size() >= 3 && printed[printed.size() - 3] == '.';
  if (notes && two_decimals && printed.back() == '0')
    notes->push_back(tool + " version \"" + printed +
                     "\" is ambiguous: rt-tests prints its version with %1.2f, so " +
                     printed.substr(0, printed.size() - 1) + " and " + printed + " print the same");
  return {{tool, printed}};
}

}  // namespace isolab
