// Builders for regex programs (the prefix encoding of tokensieve/dfa.hpp), for tests and benches.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tokensieve/dfa.hpp"

namespace regex_program {

using Program = std::vector<int32_t>;
using tokensieve::OP_ALT;
using tokensieve::OP_BYTES;
using tokensieve::OP_REPEAT;
using tokensieve::OP_SEQ;

// One byte in the union of inclusive ranges.
inline Program bytes(const std::vector<std::pair<int, int>>& ranges) {
  Program p{OP_BYTES, static_cast<int32_t>(ranges.size())};
  for (const auto& [lo, hi] : ranges) {
    p.push_back(lo);
    p.push_back(hi);
  }
  return p;
}
inline Program byte(int b) { return bytes({{b, b}}); }

inline Program node(int32_t op, const std::vector<Program>& kids) {
  Program p{op, static_cast<int32_t>(kids.size())};
  for (const Program& k : kids) p.insert(p.end(), k.begin(), k.end());
  return p;
}
inline Program seq(const std::vector<Program>& kids) { return node(OP_SEQ, kids); }
inline Program alt(const std::vector<Program>& kids) { return node(OP_ALT, kids); }
inline Program rep(int min, int max, const Program& kid) {
  Program p{OP_REPEAT, min, max};
  p.insert(p.end(), kid.begin(), kid.end());
  return p;
}
inline Program star(const Program& kid) { return rep(0, -1, kid); }
inline Program opt(const Program& kid) { return rep(0, 1, kid); }
inline Program empty_string() { return seq({}); }
inline Program empty_language() { return alt({}); }

// The bytes of `s`, in sequence.
inline Program lit(const std::string& s) {
  std::vector<Program> kids;
  for (unsigned char c : s) kids.push_back(byte(c));
  return seq(kids);
}

inline std::string utf8_encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// UTF-8 encodings of the code points lo..hi (surrogates excluded), as an alternation of byte-range
// sequences: split the range until both ends encode to equally long sequences that differ only in
// a suffix that spans whole continuation-byte ranges (the usual utf8-ranges construction).
inline Program utf8_range(uint32_t lo, uint32_t hi) {
  std::vector<Program> alts;
  std::vector<std::pair<uint32_t, uint32_t>> work{{lo, hi}};
  while (!work.empty()) {
    auto [a, b] = work.back();
    work.pop_back();
    if (a > b) continue;
    if (a <= 0xDFFF && b >= 0xD800) {  // cut out the surrogates
      if (a < 0xD800) work.push_back({a, 0xD7FF});
      if (b > 0xDFFF) work.push_back({0xE000, b});
      continue;
    }
    bool split = false;
    for (uint32_t max : {0x7Fu, 0x7FFu, 0xFFFFu}) {  // different encoded lengths
      if (a <= max && b > max) {
        work.push_back({a, max});
        work.push_back({max + 1, b});
        split = true;
        break;
      }
    }
    if (split) continue;
    for (int i = 1; i < 4 && !split; ++i) {  // suffix of i continuation bytes must be full
      const uint32_t m = (1u << (6 * i)) - 1;
      if ((a & ~m) == (b & ~m)) continue;
      if ((a & m) != 0) {
        work.push_back({a, a | m});
        work.push_back({(a | m) + 1, b});
        split = true;
      } else if ((b & m) != m) {
        work.push_back({a, (b & ~m) - 1});
        work.push_back({b & ~m, b});
        split = true;
      }
    }
    if (split) continue;
    const std::string ea = utf8_encode(a), eb = utf8_encode(b);
    std::vector<Program> parts;
    for (size_t i = 0; i < ea.size(); ++i) {
      parts.push_back(bytes({{static_cast<unsigned char>(ea[i]), static_cast<unsigned char>(eb[i])}}));
    }
    alts.push_back(seq(parts));
  }
  return alts.size() == 1 ? alts[0] : alt(alts);
}

// The JSON string terminal "([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*" over UTF-8.
inline Program json_string() {
  const Program plain = alt({utf8_range(0x20, 0x21), utf8_range(0x23, 0x5B), utf8_range(0x5D, 0x10FFFF)});
  const Program escape = seq({byte('\\'), alt({byte('"'), byte('\\'), byte('/'), byte('b'), byte('f'),
                                               byte('n'), byte('r'), byte('t')})});
  const Program hex = bytes({{'0', '9'}, {'a', 'f'}, {'A', 'F'}});
  const Program unicode = seq({byte('\\'), byte('u'), rep(4, 4, hex)});
  return seq({byte('"'), star(alt({plain, escape, unicode})), byte('"')});
}

}  // namespace regex_program
