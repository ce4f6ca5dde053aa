#include "base/json_document.h"

#include <algorithm>
#include <set>
#include <vector>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"

namespace isolab {

namespace {

using json = nlohmann::json;
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kQuoteBytes = 80;

// "line L column C" of byte offset at (0-based) in text.
std::string where(std::string_view text, std::size_t at) {
  at = std::min(at, text.size());
  const auto before = text.substr(0, at);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const std::size_t bol = before.rfind('\n');
  const std::size_t column = at - (bol == std::string_view::npos ? 0 : bol + 1) + 1;
  return "line " + std::to_string(line) + " column " + std::to_string(column);
}

// One open array or object of the structure scan: the keys seen so far (object) and the
// member or element being read, for the JSON pointer of a duplicate.
struct Open {
  bool object = false;
  bool want_key = false;
  std::string key;
  std::size_t index = 0;
  std::set<std::string> keys;
};

std::string pointer_of(const std::vector<Open>& open, const std::string& key) {
  std::string p;
  for (std::size_t i = 0; i + 1 < open.size(); ++i)
    p += "/" + (open[i].object ? json_pointer_token(open[i].key) : std::to_string(open[i].index));
  return p + "/" + json_pointer_token(key);
}

// Offset of the quote closing the string that opens at text[at], or npos.
std::size_t string_end(std::string_view text, std::size_t at) {
  for (std::size_t i = at + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i;
  }
  return std::string_view::npos;
}

// A member name at text[at, end]: refused when the object already has it. A name nlohmann
// cannot decode is left for its parse to report.
void take_key(std::vector<Open>& open, std::string_view text, std::size_t at, std::size_t end,
              const std::string& what) {
  const json k = json::parse(text.substr(at, end - at + 1), nullptr, false);
  if (!k.is_string()) return;
  Open& o = open.back();
  o.key = k.get<std::string>();
  o.want_key = false;
  if (o.keys.insert(o.key).second) return;
  throw Error(what + ": duplicate key '" + sanitize_excerpt(o.key, kQuoteBytes) + "' at " +
              sanitize_excerpt(pointer_of(open, o.key), kQuoteBytes) + " (" + where(text, at) +
              ")");
}

// Walks the brackets, strings and commas of text (without building anything), refusing
// nesting deeper than kMaxJsonDepth and a key given twice in one object. Stops quietly where
// the text stops being JSON: the parse that follows names that place.
void check_structure(std::string_view text, const std::string& what) {
  std::vector<Open> open;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = string_end(text, i);
      if (end == std::string_view::npos) return;
      if (!open.empty() && open.back().want_key) take_key(open, text, i, end, what);
      i = end;
    } else if (c == '{' || c == '[') {
      open.push_back(Open{c == '{', c == '{', {}, 0, {}});
      if (open.size() > kMaxJsonDepth)
        throw Error(what + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " at " +
                    where(text, i));
    } else if (c == '}' || c == ']') {
      if (open.empty()) return;
      open.pop_back();
    } else if (c == ',' && !open.empty()) {
      open.back().want_key = open.back().object;
      ++open.back().index;
    }
  }
}

// nlohmann's reason without its own position prefix, and its "last read: '...'" (which can be
// a whole 4 MiB string) cut to kQuoteBytes.
std::string reason_of(std::string_view w) {
  if (const auto col = w.find("column "); col != std::string_view::npos)
    if (const auto colon = w.find(": ", col); colon != std::string_view::npos)
      w.remove_prefix(colon + 2);
  constexpr std::string_view kLastRead = "last read: '";
  const auto lr = w.find(kLastRead);
  if (lr == std::string_view::npos) return sanitize_excerpt(w, 2 * kQuoteBytes);
  auto quoted = w.substr(lr + kLastRead.size());
  if (!quoted.empty() && quoted.back() == '\'') quoted.remove_suffix(1);
  return std::string(w.substr(0, lr + kLastRead.size())) + sanitize_excerpt(quoted, kQuoteBytes) +
         "'";
}

// A SAX handler that builds nothing and keeps where nlohmann's parser stopped: its
// parse_error() gets the byte position that the exceptions other than parse_error (a number no
// double holds: out_of_range 406) do not carry.
struct ErrorPosition : nlohmann::json_sax<json> {
  std::size_t position = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t at, const std::string&,
                   const nlohmann::detail::exception&) override {
    position = at;
    return false;
  }
};

}  // namespace

json parse_json_document(std::string_view text, const std::string& what) {
  check_structure(text, what);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw Error(what + ": not valid JSON at " + where(text, at) + " (byte " +
                std::to_string(e.byte) + "): " + reason_of(e.what()));
  } catch (const json::exception& e) {  // e.g. a number no double holds
    ErrorPosition sax;
    json::sax_parse(text, &sax);
    if (sax.position == 0) throw Error(what + ": not valid JSON: " + reason_of(e.what()));
    const std::size_t at = sax.position - 1;
    throw Error(what + ": not valid JSON at " + where(text, at) + " (byte " +
                std::to_string(sax.position) + "): " + reason_of(e.what()));
  }
}

std::string directory_given(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? path.string() + " is a directory" : "";
}

json read_json_document(const std::filesystem::path& file, std::size_t max_bytes) {
  if (const std::string dir = directory_given(file); !dir.empty()) throw Error(dir);
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) throw Error(file.string() + ": cannot read: " + ec.message());
  if (size > max_bytes)
    throw Error(file.string() + " is " + std::to_string(size) + " bytes, over the " +
                std::to_string(max_bytes / kMiB) + " MiB limit");
  return parse_json_document(read_file(file, max_bytes), file.string());
}

}  // namespace isolab
