#include "io/utf8.h"

#include <cstdio>
#include <cstring>

namespace attnviz {

void AppendUtf8(uint32_t cp, std::string* out) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out->push_back((char)cp);
  } else if (cp < 0x800) {
    out->push_back((char)(0xC0 | (cp >> 6)));
    out->push_back((char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back((char)(0xE0 | (cp >> 12)));
    out->push_back((char)(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back((char)(0x80 | (cp & 0x3F)));
  } else {
    out->push_back((char)(0xF0 | (cp >> 18)));
    out->push_back((char)(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back((char)(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back((char)(0x80 | (cp & 0x3F)));
  }
}

bool DecodeUtf8(const char* s, size_t len, size_t* pos, uint32_t* cp) {
  const unsigned char* u = (const unsigned char*)s;
  size_t i = *pos;
  unsigned char c = u[i];
  int extra;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    *pos = i + 1;
    return true;
  }
  if ((c & 0xE0) == 0xC0) {
    extra = 1;
    v = c & 0x1F;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2;
    v = c & 0x0F;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3;
    v = c & 0x07;
    min = 0x10000;
  } else {
    *pos = i + 1;
    return false;
  }
  if (i + (size_t)extra >= len) {
    *pos = i + 1;
    return false;
  }
  for (int k = 1; k <= extra; ++k) {
    unsigned char cc = u[i + k];
    if ((cc & 0xC0) != 0x80) {
      *pos = i + 1;
      return false;
    }
    v = (v << 6) | (cc & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *pos = i + 1;
    return false;
  }
  *cp = v;
  *pos = i + 1 + extra;
  return true;
}

void DecodeUtf8Lossy(const std::string& s, std::vector<uint32_t>* out) {
  out->clear();
  size_t pos = 0;
  while (pos < s.size()) {
    uint32_t cp;
    if (!DecodeUtf8(s.data(), s.size(), &pos, &cp)) cp = 0xFFFD;
    out->push_back(cp);
  }
}

bool IsValidUtf8(const std::string& s) {
  size_t pos = 0;
  uint32_t cp;
  while (pos < s.size())
    if (!DecodeUtf8(s.data(), s.size(), &pos, &cp)) return false;
  return true;
}

size_t Utf8Length(const std::string& s) {
  size_t pos = 0, n = 0;
  uint32_t cp;
  while (pos < s.size()) {
    DecodeUtf8(s.data(), s.size(), &pos, &cp);
    ++n;
  }
  return n;
}

namespace {

bool IsBidiControl(uint32_t cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string WithoutWordStart(const std::string& token) {
  for (const char* mark : {"\xE2\x96\x81", "\xC4\xA0"}) {
    const size_t n = std::strlen(mark);
    if (token.size() > n && token.compare(0, n, mark) == 0) return token.substr(n);
  }
  return token;
}

std::string PrintableText(const std::string& s, size_t max_chars) {
  std::string out;
  size_t pos = 0, chars = 0;
  char b[12];
  while (pos < s.size()) {
    if (chars == max_chars) {
      out += "\xE2\x80\xA6(" + std::to_string(s.size()) + " bytes)";
      break;
    }
    const size_t start = pos;
    uint32_t cp;
    ++chars;
    if (!DecodeUtf8(s.data(), s.size(), &pos, &cp)) {
      std::snprintf(b, sizeof(b), "\\x%02x", (unsigned)(unsigned char)s[start]);
      out += b;
    } else if (cp == '\\' || cp == '"') {
      out.push_back('\\');
      out.push_back((char)cp);
    } else if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(b, sizeof(b), "\\x%02x", (unsigned)cp);
      out += b;
    } else if ((cp >= 0x80 && cp <= 0x9F) || IsBidiControl(cp)) {
      std::snprintf(b, sizeof(b), "\\u%04x", (unsigned)cp);
      out += b;
    } else {
      out.append(s, start, pos - start);
    }
  }
  return out;
}

}  // namespace attnviz
