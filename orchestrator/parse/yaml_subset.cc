#include "parse/yaml_subset.h"

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/text.h"
#include "parse/text_util.h"

namespace isolab {

using nlohmann::json;
using namespace parse_detail;

namespace {

constexpr std::size_t kMaxYamlBytes = 64u << 20;
constexpr int kMaxDepth = 64;

struct YLine {
  std::size_t indent;
  std::string_view content;
  std::size_t line_no;
};

[[noreturn]] void yaml_fail(std::size_t line_no, const std::string& why, std::string_view text) {
  throw Error("stress-ng yaml: line " + std::to_string(line_no) + ": " + why + ": " + quote(text));
}

std::string unquote_scalar(std::string_view s, std::size_t line_no) {
  s = trim(s);
  if (s.empty()) return "";
  if (s.front() == '\'') {
    if (s.size() < 2 || s.back() != '\'')
      yaml_fail(line_no, "unterminated single-quoted scalar", s);
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      out.push_back(s[i]);
      if (s[i] == '\'' && i + 2 < s.size() && s[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (s.front() == '"') {
    if (s.size() < 2 || s.back() != '"') yaml_fail(line_no, "unterminated double-quoted scalar", s);
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] == '\\' && i + 2 < s.size()) {
        char e = s[++i];
        out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
      } else {
        out.push_back(s[i]);
      }
    }
    return out;
  }
  // Plain scalar: " #" starts a comment.
  std::size_t hash = s.find(" #");
  if (hash != std::string_view::npos) s = trim(s.substr(0, hash));
  return std::string(s);
}

// Position of the ':' that ends a mapping key (followed by a blank or the end), outside quotes;
// npos if the text is not "key: ...".
std::size_t key_colon(std::string_view s) {
  char q = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (q) {
      if (c == q) q = 0;
      continue;
    }
    if ((c == '\'' || c == '"') && i == 0) {
      q = c;
      continue;
    }
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\t')) return i;
  }
  return std::string_view::npos;
}

class FlowParser {
 public:
  FlowParser(std::string_view s, std::size_t line_no) : s_(s), line_no_(line_no) {}
  json parse_all() {
    json v = value(0);
    ws();
    if (i_ != s_.size()) fail("unexpected text after a flow collection");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    std::size_t from = i_ > 40 ? i_ - 40 : 0;
    yaml_fail(line_no_, why + " at column " + std::to_string(i_ + 1), s_.substr(from, 100));
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  std::string scalar(bool is_key) {
    ws();
    if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"')) {
      char q = s_[i_];
      std::size_t start = i_++;
      while (i_ < s_.size()) {
        if (s_[i_] == q) {
          if (q == '\'' && i_ + 1 < s_.size() && s_[i_ + 1] == '\'') {
            i_ += 2;
            continue;
          }
          break;
        }
        if (q == '"' && s_[i_] == '\\') ++i_;
        ++i_;
      }
      if (i_ >= s_.size()) fail("unterminated quoted scalar");
      ++i_;
      return unquote_scalar(s_.substr(start, i_ - start), line_no_);
    }
    std::size_t start = i_;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ',' || c == ']' || c == '}' || c == '[' || c == '{') break;
      if (is_key && c == ':' && (i_ + 1 == s_.size() || s_[i_ + 1] == ' ')) break;
      ++i_;
    }
    return std::string(trim(s_.substr(start, i_ - start)));
  }
  json value(int depth) {
    if (depth > kMaxDepth) fail("collections nested too deeply");
    ws();
    if (i_ >= s_.size()) fail("missing value");
    if (s_[i_] == '[') {
      ++i_;
      json arr = json::array();
      ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return arr;
      }
      while (true) {
        arr.push_back(value(depth + 1));
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          ws();
          if (i_ < s_.size() && s_[i_] == ']') {  // trailing comma
            ++i_;
            return arr;
          }
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (s_[i_] == '{') {
      ++i_;
      json obj = json::object();
      ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return obj;
      }
      while (true) {
        std::string key = scalar(true);
        ws();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':' after key \"" + key + "\"");
        ++i_;
        obj[key] = value(depth + 1);
        ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          ws();
          if (i_ < s_.size() && s_[i_] == '}') {
            ++i_;
            return obj;
          }
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    return json(scalar(false));
  }

  std::string_view s_;
  std::size_t line_no_;
  std::size_t i_ = 0;
};

class BlockParser {
 public:
  explicit BlockParser(std::vector<YLine> lines) : lines_(std::move(lines)) {}
  json parse_document() {
    if (lines_.empty()) return json(nullptr);
    json v = node(lines_[0].indent, 0);
    if (pos_ < lines_.size())
      yaml_fail(lines_[pos_].line_no, "unexpected indentation", lines_[pos_].content);
    return v;
  }

 private:
  static bool is_dash(std::string_view c) { return c == "-" || c.substr(0, 2) == "- "; }

  json node(std::size_t indent, int depth) {
    if (depth > kMaxDepth)
      yaml_fail(lines_[pos_].line_no, "nested too deeply", lines_[pos_].content);
    const YLine& l = lines_[pos_];
    if (is_dash(l.content)) return sequence(indent, depth);
    if (key_colon(l.content) == std::string_view::npos) {
      // A lone scalar or flow collection.
      ++pos_;
      return inline_value(l.content, l.line_no);
    }
    return mapping(indent, depth);
  }

  json inline_value(std::string_view rest, std::size_t line_no) {
    rest = trim(rest);
    if (!rest.empty() && (rest.front() == '[' || rest.front() == '{')) {
      // A flow collection may continue on the following lines until its brackets balance.
      std::string text(rest);
      while (!balanced(text) && pos_ < lines_.size()) {
        text += ' ';
        text += lines_[pos_].content;
        ++pos_;
      }
      return FlowParser(text, line_no).parse_all();
    }
    return json(unquote_scalar(rest, line_no));
  }

  static bool balanced(std::string_view t) {
    int d = 0;
    char q = 0;
    for (char c : t) {
      if (q) {
        if (c == q) q = 0;
      } else if (c == '\'' || c == '"') {
        q = c;
      } else if (c == '[' || c == '{') {
        ++d;
      } else if (c == ']' || c == '}') {
        --d;
      }
    }
    return d <= 0;
  }

  json mapping(std::size_t indent, int depth) {
    json obj = json::object();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent &&
           !is_dash(lines_[pos_].content)) {
      const YLine l = lines_[pos_];
      std::size_t colon = key_colon(l.content);
      if (colon == std::string_view::npos)
        yaml_fail(l.line_no, "expected \"key: value\"", l.content);
      std::string key = unquote_scalar(l.content.substr(0, colon), l.line_no);
      std::string_view rest = trim(l.content.substr(colon + 1));
      ++pos_;
      if (!rest.empty()) {
        obj[key] = inline_value(rest, l.line_no);
      } else if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
        obj[key] = node(lines_[pos_].indent, depth + 1);
      } else if (pos_ < lines_.size() && lines_[pos_].indent == indent &&
                 is_dash(lines_[pos_].content)) {
        obj[key] = sequence(indent, depth + 1);  // "key:\n- item" at the same indentation
      } else {
        obj[key] = nullptr;
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent)
      yaml_fail(lines_[pos_].line_no, "unexpected indentation", lines_[pos_].content);
    return obj;
  }

  json sequence(std::size_t indent, int depth) {
    json arr = json::array();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && is_dash(lines_[pos_].content)) {
      YLine& l = lines_[pos_];
      std::string_view after = l.content.substr(1);
      std::size_t blanks = 0;
      while (blanks < after.size() && after[blanks] == ' ') ++blanks;
      after.remove_prefix(blanks);
      if (after.empty()) {
        ++pos_;
        if (pos_ < lines_.size() && lines_[pos_].indent > indent)
          arr.push_back(node(lines_[pos_].indent, depth + 1));
        else
          arr.push_back(nullptr);
        continue;
      }
      // "- key: value": the item's content starts a node at the column after the dash.
      l.indent = indent + 1 + blanks;
      l.content = after;
      arr.push_back(node(l.indent, depth + 1));
    }
    return arr;
  }

  std::vector<YLine> lines_;
  std::size_t pos_ = 0;
};

}  // namespace

json parse_yaml_subset(std::string_view text) {
  if (text.size() > kMaxYamlBytes)
    throw Error("stress-ng yaml: " + std::to_string(text.size()) +
                " bytes is more than the 64 MiB limit");
  std::vector<YLine> lines;
  bool started = false;
  auto raw = text_lines(text);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    std::string_view l = raw[i];
    std::size_t indent = 0;
    while (indent < l.size() && l[indent] == ' ') ++indent;
    std::string_view content = trim(l.substr(indent));
    if (content.empty() || content.front() == '#') continue;
    if (indent < l.size() && l[indent] == '\t') yaml_fail(i + 1, "tab used for indentation", l);
    if (indent == 0 && (content == "---" || content.substr(0, 4) == "--- ")) {
      if (started || !lines.empty()) break;  // a second document: not read
      started = true;
      continue;
    }
    if (indent == 0 && content == "...") break;
    lines.push_back({indent, content, i + 1});
  }
  return BlockParser(std::move(lines)).parse_document();
}

}  // namespace isolab
