// XML text: the escapes of the five special characters, and untrusted strings made safe for XML
// 1.0 text and attribute values (the JUnit report, the HTML page and its SVG plots).
#pragma once

#include <string>
#include <string_view>

namespace isolab {

// The entity for & < > ' " ("&amp;", "&lt;", "&gt;", "&apos;", "&quot;"), "" for any other
// character.
std::string_view xml_entity(char c);

// Escapes & < > " ' for XML text and attributes and replaces characters not allowed in XML 1.0
// (controls other than tab/LF/CR) and invalid UTF-8 bytes with '?'.
std::string xml_escape(const std::string& s);

}  // namespace isolab
