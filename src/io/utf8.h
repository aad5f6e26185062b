// attnviz io: small UTF-8 helpers shared by the JSON, NPY string and SVG code.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnviz {

// Appends code point cp as UTF-8; surrogates and values > 0x10FFFF become U+FFFD.
void AppendUtf8(uint32_t cp, std::string* out);
// Decodes one UTF-8 sequence at s[*pos], advancing *pos. Returns false (and advances one
// byte) on an invalid, overlong, surrogate or truncated sequence.
bool DecodeUtf8(const char* s, size_t len, size_t* pos, uint32_t* cp);
// Whole-string decode; invalid sequences become U+FFFD.
void DecodeUtf8Lossy(const std::string& s, std::vector<uint32_t>* out);
// True if s is valid UTF-8 (no overlongs, no surrogates).
bool IsValidUtf8(const std::string& s);
// Number of code points (invalid bytes count as one each).
size_t Utf8Length(const std::string& s);
// Text from a file made safe to print on a terminal or show in the UI: control characters (C0,
// DEL, C1 such as ESC ] ... BEL), bidirectional overrides (U+202A-U+202E, U+2066-U+2069, ...),
// backslash and double quote are written as escapes (\x1b, \u202e, \\, \"), invalid UTF-8 bytes
// as \xNN; text longer than max_chars code points is cut and ends in "...(N bytes)".
std::string PrintableText(const std::string& s, size_t max_chars = 200);
// A token as a figure labels it: a leading word-start marker (SentencePiece U+2581, GPT-2's
// U+0120) is a space, so the label starts after it ("\u2581cat" -> "cat"; a lone marker stays).
std::string WithoutWordStart(const std::string& token);

}  // namespace attnviz
