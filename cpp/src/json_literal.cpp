// A JSON string literal's automaton without the general pipeline.
//
// Property names are the commonest terminal there is: every object schema brings new ones, and
// each is built the first time it is met. Its program spells every character three ways at
// most (raw, short escape, \u escape with hex letters in either case; printable ASCII but
// & < > only raw, or as its short escape for " and \), which the general builder parses,
// partitions into byte classes, inserts into a choice trie and minimizes, where the automaton
// itself is a chain of small tries that can be written down at once.
//
// The program is recognized, not trusted: the characters are read off it, their spellings made
// here, and the program must be exactly the words those spellings encode to (the encoding of
// ir.py's seq/alt of tokensieve/frontends/json_schema/strings.py's escaped_chars). Any other
// program, however close, goes to the general builder, so the shortcut can only ever be
// missed, never wrong; tests/unit/native/test_json_literal_dfa.py checks that it is taken and that
// its automaton is the general builder's, state for state.
#include "json_literal.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "byte_blocks.hpp"
#include "tokensieve/scratch_allocator.hpp"

namespace tokensieve::detail {
namespace {

constexpr int32_t kQuote = 0x22, kBackslash = 0x5C;

// A byte set of a spelling: one byte (lo == hi), or a hex letter in both cases (lo upper, hi
// lower): the only two shapes spellings use, each one OP_BYTES node.
struct ByteChoice {
  int32_t lo, hi;
  bool operator==(const ByteChoice& o) const { return lo == o.lo && hi == o.hi; }
};

// One spelling of a character: up to 12 byte sets (a surrogate pair's two \u escapes).
struct Spelling {
  std::array<ByteChoice, 12> sets;
  int32_t size = 0;
  void push(int32_t lo, int32_t hi) { sets[size++] = {lo, hi}; }
  void push(int32_t byte) { push(byte, byte); }
};

// Every spelling of one character, in the front-ends' order: raw, short escape, \u escape
// (none for printable ASCII, U+0020..U+007E, but & < >: json_value.py's PLAIN_ASCII).
struct Spellings {
  std::array<Spelling, 3> of;
  int32_t count = 0;
};

int32_t short_escape(uint32_t cp) {
  switch (cp) {
    case 0x22: return '"';
    case 0x5C: return '\\';
    case 0x2F: return '/';
    case 0x08: return 'b';
    case 0x0C: return 'f';
    case 0x0A: return 'n';
    case 0x0D: return 'r';
    case 0x09: return 't';
    default: return 0;
  }
}

// The code point a short escape letter stands for, or -1.
int64_t unescape_short(int32_t letter) {
  switch (letter) {
    case '"': return 0x22;
    case '\\': return 0x5C;
    case '/': return 0x2F;
    case 'b': return 0x08;
    case 'f': return 0x0C;
    case 'n': return 0x0A;
    case 'r': return 0x0D;
    case 't': return 0x09;
    default: return -1;
  }
}

void push_hex(Spelling& s, uint32_t unit) {
  for (int shift = 12; shift >= 0; shift -= 4) {
    const auto d = static_cast<int32_t>((unit >> shift) & 15);
    if (d < 10) {
      s.push(0x30 + d);
    } else {
      s.push(0x41 + d - 10, 0x61 + d - 10);
    }
  }
}

// The spellings of `cp`; false for what has none (a lone surrogate is not UTF-8).
bool spell(uint32_t cp, Spellings& out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  out.count = 0;
  if (cp >= 0x20 && cp != 0x22 && cp != 0x5C) {  // control characters, " and \ only escaped
    Spelling& raw = out.of[out.count++];
    raw.size = 0;
    if (cp < 0x80) {
      raw.push(static_cast<int32_t>(cp));
    } else if (cp < 0x800) {
      raw.push(static_cast<int32_t>(0xC0 | cp >> 6));
      raw.push(static_cast<int32_t>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      raw.push(static_cast<int32_t>(0xE0 | cp >> 12));
      raw.push(static_cast<int32_t>(0x80 | ((cp >> 6) & 0x3F)));
      raw.push(static_cast<int32_t>(0x80 | (cp & 0x3F)));
    } else {
      raw.push(static_cast<int32_t>(0xF0 | cp >> 18));
      raw.push(static_cast<int32_t>(0x80 | ((cp >> 12) & 0x3F)));
      raw.push(static_cast<int32_t>(0x80 | ((cp >> 6) & 0x3F)));
      raw.push(static_cast<int32_t>(0x80 | (cp & 0x3F)));
    }
  }
  if (const int32_t letter = short_escape(cp)) {
    Spelling& s = out.of[out.count++];
    s.size = 0;
    s.push(kBackslash);
    s.push(letter);
  }
  // Printable ASCII has no \u escape, but for Go's HTML-safe & < > (json_value.py's PLAIN_ASCII).
  if (cp >= 0x20 && cp <= 0x7E && cp != '&' && cp != '<' && cp != '>') return true;
  Spelling& u = out.of[out.count++];
  u.size = 0;
  u.push(kBackslash);
  u.push('u');
  if (cp < 0x10000) {
    push_hex(u, cp);
  } else {
    const uint32_t v = cp - 0x10000;
    push_hex(u, 0xD800 + (v >> 10));
    u.push(kBackslash);
    u.push('u');
    push_hex(u, 0xDC00 + (v & 0x3FF));
  }
  return true;
}

// Reads a program against expected words; every read is bounds-checked.
struct Reader {
  const int32_t* p;
  size_t length;
  size_t pos;

  bool take(std::initializer_list<int32_t> words) {
    if (pos + words.size() > length) return false;
    for (int32_t w : words) {
      if (p[pos++] != w) return false;
    }
    return true;
  }
  bool set(ByteChoice c) {
    return c.lo == c.hi ? take({OP_BYTES, 1, c.lo, c.lo}) : take({OP_BYTES, 2, c.lo, c.lo, c.hi, c.hi});
  }
  // A spelling as an alternative: one byte set alone, several in a sequence.
  bool spelling(const Spelling& s) {
    if (s.size == 1) return set(s.sets[0]);
    if (!take({OP_SEQ, s.size})) return false;
    for (int32_t i = 0; i < s.size; ++i) {
      if (!set(s.sets[i])) return false;
    }
    return true;
  }
  // A character in the literal's sequence: an alternation of its spellings, or its one
  // spelling spliced into the sequence (seq() flattens). Counts the sequence items it takes.
  bool character(const Spellings& s, int32_t& items) {
    if (s.count == 1) {
      for (int32_t i = 0; i < s.of[0].size; ++i) {
        if (!set(s.of[0].sets[i])) return false;
      }
      items += s.of[0].size;
      return true;
    }
    if (!take({OP_ALT, s.count})) return false;
    for (int32_t k = 0; k < s.count; ++k) {
      if (!spelling(s.of[k])) return false;
    }
    items += 1;
    return true;
  }
  // The byte of a one-byte OP_BYTES node at `at`, or -1.
  int32_t single(size_t at) const {
    if (at + 4 > length || p[at] != OP_BYTES || p[at + 1] != 1 || p[at + 2] != p[at + 3]) return -1;
    return p[at + 2] >= 0 && p[at + 2] <= 255 ? p[at + 2] : -1;
  }
  // The value of the hex digit node at `at` (advanced past it), or -1.
  int32_t hex_digit(size_t& at) const {
    const int32_t b = single(at);
    if (b >= 0x30 && b <= 0x39) {
      at += 4;
      return b - 0x30;
    }
    if (at + 6 > length || p[at] != OP_BYTES || p[at + 1] != 2 || p[at + 2] < 0x41 || p[at + 2] > 0x46) return -1;
    const int32_t d = p[at + 2] - 0x41 + 10;
    at += 6;
    return d;
  }
  // The character whose spellings start here, read off its first spelling (the caller checks
  // the rest against spell()), or -1.
  int64_t character_here() const {
    if (pos + 2 > length) return -1;
    if (p[pos] == OP_ALT) {
      const size_t first = pos + 2;
      const int32_t b = single(first);
      if (b >= 0) return b < 0x80 ? b : -1;  // raw ASCII
      if (first + 2 > length || p[first] != OP_SEQ) return -1;
      const int32_t m = p[first + 1];
      const int32_t lead = single(first + 2);
      if (lead == kBackslash) return m == 2 ? unescape_short(single(first + 6)) : -1;  // no raw spelling
      if (m < 2 || m > 4 || lead < 0) return -1;  // raw UTF-8 of m bytes
      auto cp = static_cast<uint32_t>(lead & (0x7F >> m));
      for (int32_t i = 1; i < m; ++i) {
        const int32_t c = single(first + 2 + 4 * static_cast<size_t>(i));
        if (c < 0x80 || c > 0xBF) return -1;
        cp = cp << 6 | static_cast<uint32_t>(c & 0x3F);
      }
      return cp;
    }
    // One spelling, spliced: printable ASCII raw, " or \ as its short escape, or a control
    // character's \u00XX.
    const int32_t b = single(pos);
    if (b >= 0x20 && b <= 0x7E && b != kBackslash) return b;
    if (b != kBackslash) return -1;
    const int32_t letter = single(pos + 4);
    if (letter != 'u') return letter == '"' || letter == '\\' ? unescape_short(letter) : -1;
    size_t at = pos + 8;
    int64_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      const int32_t d = hex_digit(at);
      if (d < 0) return -1;
      cp = cp << 4 | d;
    }
    return cp;
  }
};

// Reads one literal's program at in.pos: [SEQ n] ["] characters... ["]. Appends the
// characters' spellings to `chars`; false (in.pos anywhere) when the words are not that.
bool read_literal(Reader& in, ScratchVector<Spellings>& chars) {
  if (in.pos + 2 > in.length || in.p[in.pos] != OP_SEQ) return false;
  const int32_t n = in.p[in.pos + 1];
  in.pos += 2;
  if (n < 2 || !in.take({OP_BYTES, 1, kQuote, kQuote})) return false;
  chars.reserve(chars.size() + std::min(static_cast<size_t>(n), (in.length - in.pos) / 4));  // (a character takes 4 words at least)
  int32_t items = 1;
  while (items < n - 1) {
    const int64_t cp = in.character_here();
    if (cp < 0) return false;
    chars.emplace_back();
    if (!spell(static_cast<uint32_t>(cp), chars.back()) || !in.character(chars.back(), items)) return false;
  }
  return items == n - 1 && in.take({OP_BYTES, 1, kQuote, kQuote});
}

// Byte classes as build_dfa() makes them from the byte sets of `edges` (each an edge with a
// ByteChoice `set`): bytes that no set tells apart share a class, classes numbered by their
// first byte. Refined set by set (each set's bytes leave their block for a fresh one); the
// distinct sets are one or two bytes each. Returns the class count.
template <typename Edges>
int32_t literal_classes(const Edges& edges, std::vector<uint8_t>& class_of) {
  ByteBlocks blocks;
  std::array<uint8_t, 256> seen_single{};
  std::array<uint8_t, 6> seen_pair{};
  int32_t set_id = 0;
  for (const auto& e : edges) {
    uint8_t& seen = e.set.lo == e.set.hi ? seen_single[e.set.lo] : seen_pair[e.set.lo - 0x41];
    if (seen) continue;
    seen = 1;
    blocks.move(e.set.lo, set_id);
    if (e.set.hi != e.set.lo) blocks.move(e.set.hi, set_id);
    ++set_id;
  }
  class_of.assign(256, 0);
  ScratchVector<int32_t> class_of_block(blocks.num_blocks(), -1);
  int32_t num_classes = 0;
  for (int byte = 0; byte < 256; ++byte) {
    int32_t& c = class_of_block[blocks.block[byte]];
    if (c < 0) c = num_classes++;
    class_of[byte] = static_cast<uint8_t>(c);
  }
  return num_classes;
}

// A literal automaton's edges over byte classes: the classes (literal_classes), and each
// state's row of (class, target) pairs ascending by class, rows in state order (`row_begin[s]`
// .. `row_begin[s + 1]`; a pair set's two bytes are two cells).
struct LiteralRows {
  std::vector<uint8_t> class_of;
  int32_t num_classes = 0;
  ScratchVector<int32_t> row_begin;
  ScratchVector<std::pair<int32_t, int32_t>> row;
};

template <typename Edges>
LiteralRows literal_rows(const Edges& edges, int32_t num_states) {
  LiteralRows out;
  out.num_classes = literal_classes(edges, out.class_of);
  out.row_begin.assign(static_cast<size_t>(num_states) + 1, 0);
  for (const auto& e : edges) out.row_begin[e.from + 1] += e.set.lo == e.set.hi ? 1 : 2;
  for (int32_t s = 0; s < num_states; ++s) out.row_begin[s + 1] += out.row_begin[s];
  ScratchVector<int32_t> row_fill(out.row_begin.begin(), out.row_begin.end() - 1);  // (a counting sort by state)
  out.row.resize(static_cast<size_t>(out.row_begin[num_states]));
  for (const auto& e : edges) {
    out.row[row_fill[e.from]++] = {out.class_of[e.set.lo], e.to};
    if (e.set.hi != e.set.lo) out.row[row_fill[e.from]++] = {out.class_of[e.set.hi], e.to};
  }
  for (int32_t s = 0; s < num_states; ++s) {
    std::sort(out.row.begin() + out.row_begin[s], out.row.begin() + out.row_begin[s + 1]);
  }
  return out;
}

// The blocks of a literal trie's states (no cycle): states in depth-first post-order, each
// joining the block of an earlier state with the same acceptance (`final_state` alone accepts)
// and the same (class, target block) row, else a block of its own. `block_of` (sized to the
// states) and `member` (a state of each block) receive them.
void minimize_trie(int32_t start, int32_t final_state, const ScratchVector<int32_t>& row_begin,
                   const ScratchVector<std::pair<int32_t, int32_t>>& row, ScratchVector<int32_t>& block_of,
                   ScratchVector<int32_t>& member) {
  const auto num_states = static_cast<int32_t>(row_begin.size()) - 1;
  ScratchVector<int32_t> order;
  order.reserve(num_states);
  {
    ScratchVector<uint8_t> seen(num_states, 0);
    ScratchVector<std::pair<int32_t, int32_t>> stack{{start, row_begin[start]}};
    seen[start] = 1;
    while (!stack.empty()) {
      auto& [q, next] = stack.back();
      if (next == row_begin[q + 1]) {
        order.push_back(q);
        stack.pop_back();
        continue;
      }
      const int32_t t = row[next++].second;
      if (!seen[t]) {
        seen[t] = 1;
        stack.emplace_back(t, row_begin[t]);  // invalidates q and next
      }
    }
  }
  ScratchVector<uint64_t> block_hash;
  size_t capacity = 64;
  while (capacity < 2 * static_cast<size_t>(num_states)) capacity *= 2;
  ScratchVector<int32_t> table(capacity, -1);
  auto hash_of = [&](int32_t q) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (q == final_state ? 1u : 0u);
    for (int32_t i = row_begin[q]; i < row_begin[q + 1]; ++i) {
      const uint64_t edge = (static_cast<uint64_t>(row[i].first) << 32) | static_cast<uint32_t>(block_of[row[i].second]);
      h = (h ^ edge) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 29;
    }
    return h;
  };
  auto same = [&](int32_t a, int32_t b) {
    if ((a == final_state) != (b == final_state) || row_begin[a + 1] - row_begin[a] != row_begin[b + 1] - row_begin[b]) {
      return false;
    }
    for (int32_t i = row_begin[a], j = row_begin[b]; i < row_begin[a + 1]; ++i, ++j) {
      if (row[i].first != row[j].first || block_of[row[i].second] != block_of[row[j].second]) return false;
    }
    return true;
  };
  for (const int32_t q : order) {
    const uint64_t h = hash_of(q);
    size_t slot = h & (capacity - 1);
    while (table[slot] >= 0 && !(block_hash[table[slot]] == h && same(member[table[slot]], q))) {
      slot = (slot + 1) & (capacity - 1);
    }
    if (table[slot] < 0) {
      table[slot] = static_cast<int32_t>(member.size());
      member.push_back(q);
      block_hash.push_back(h);
    }
    block_of[q] = table[slot];
  }
}

// The automaton of `count` literals read from `in` (which must then be at its end), or nothing
// when the words are not literals, the trie passes `max_states` states, or its byte sets would
// not make a deterministic trie.
std::optional<Dfa> literal_trie(Reader& in, int32_t count, int32_t max_states) {
  // The literals' trie over characters: state 0 starts, state 1 is the one accepting state,
  // state 2 follows the opening quote and is the trie's root. A *node* stands for a prefix of
  // some literals that ends with a whole character; each character goes from its node to the
  // child node along its spellings, which share their first byte sets with the spellings of
  // the node's other characters (every \u escape begins with a backslash). Edges are kept in a
  // list per state, newest first.
  struct Edge {
    int32_t from;
    ByteChoice set;
    int32_t to;
    int32_t next_of_from;  // the state's next edge in its list, or -1
  };
  ScratchVector<Edge> edges;
  ScratchVector<int32_t> first_edge;
  ScratchVector<uint8_t> is_node;
  auto new_state = [&](bool node) {
    first_edge.push_back(-1);
    is_node.push_back(node ? 1 : 0);
    return static_cast<int32_t>(first_edge.size() - 1);
  };
  auto add_edge = [&](int32_t from, ByteChoice set, int32_t to) {
    edges.push_back({from, set, to, first_edge[from]});
    first_edge[from] = static_cast<int32_t>(edges.size() - 1);
  };
  auto overlap = [](ByteChoice a, ByteChoice b) { return a.lo == b.lo || a.lo == b.hi || a.hi == b.lo || a.hi == b.hi; };
  // The edge from `from` on exactly `set`, or -1; -2 when another edge's set overlaps it (the
  // spellings would not make a deterministic trie: not a program the front-ends write).
  auto edge_on = [&](int32_t from, ByteChoice set) {
    for (int32_t e = first_edge[from]; e >= 0; e = edges[e].next_of_from) {
      if (edges[e].set == set) return e;
      if (overlap(edges[e].set, set)) return -2;
    }
    return -1;
  };
  const int32_t start = new_state(false);
  const int32_t final_state = new_state(true);
  const int32_t root = new_state(true);
  add_edge(start, {kQuote, kQuote}, root);

  ScratchVector<Spellings> chars;
  for (int32_t i = 0; i < count; ++i) {
    chars.clear();
    if (!read_literal(in, chars)) return std::nullopt;
    int32_t at = root;
    for (const Spellings& s : chars) {
      int32_t child = -1;  // made (or found) by the first of the character's spellings
      for (int32_t k = 0; k < s.count; ++k) {
        const Spelling& sp = s.of[k];
        int32_t from = at;
        for (int32_t j = 0; j < sp.size; ++j) {
          const bool last = j + 1 == sp.size;
          const int32_t e = edge_on(from, sp.sets[j]);
          if (e == -2) return std::nullopt;
          if (e >= 0) {
            const int32_t to = edges[e].to;
            // A shared edge that ends the character must reach its child (an earlier literal
            // with the same prefix made it); one within a spelling must stay within spellings.
            if (last != (is_node[to] != 0) || to == final_state || (last && child >= 0 && to != child)) {
              return std::nullopt;
            }
            if (last) child = to;
            from = to;
            continue;
          }
          int32_t to;
          if (!last) {
            to = new_state(false);
          } else {
            if (child < 0) child = new_state(true);
            to = child;
          }
          add_edge(from, sp.sets[j], to);
          from = to;
        }
      }
      at = child;
      if (static_cast<int64_t>(first_edge.size()) > max_states) return std::nullopt;
    }
    const int32_t e = edge_on(at, {kQuote, kQuote});
    if (e == -2 || (e >= 0 && edges[e].to != final_state)) return std::nullopt;
    if (e < 0) add_edge(at, {kQuote, kQuote}, final_state);
  }
  if (in.pos != in.length) return std::nullopt;

  const auto num_states = static_cast<int32_t>(first_edge.size());
  LiteralRows rows = literal_rows(edges, num_states);
  const int32_t num_classes = rows.num_classes;
  const ScratchVector<int32_t>& row_begin = rows.row_begin;
  const ScratchVector<std::pair<int32_t, int32_t>>& row = rows.row;

  // Several literals are minimized (literals that end alike share their last states). One is
  // minimal as built: every state's remaining strings spell a different rest of it, or end its
  // character with a different byte set (raw UTF-8 continuation bytes, hex digits, escape
  // letters), so each state is its own block.
  ScratchVector<int32_t> block_of(num_states, -1), member;  // member: a state of each block
  if (count == 1) {
    for (int32_t q = 0; q < num_states; ++q) block_of[q] = q;
    member.assign(block_of.begin(), block_of.end());
  } else {
    minimize_trie(start, final_state, row_begin, row, block_of, member);
  }

  // Blocks numbered breadth-first from the start's, classes ascending, as build_dfa() numbers.
  const auto num_blocks = static_cast<int32_t>(member.size());
  ScratchVector<int32_t> number(num_blocks, Dfa::kDead), queue{block_of[start]};
  number[block_of[start]] = 0;
  std::vector<int32_t> out_trans(static_cast<size_t>(num_blocks) * num_classes, Dfa::kDead);
  std::vector<uint8_t> out_accepting(num_blocks);
  for (size_t k = 0; k < queue.size(); ++k) {
    const int32_t q = member[queue[k]];
    out_accepting[k] = q == final_state ? 1 : 0;
    for (int32_t i = row_begin[q]; i < row_begin[q + 1]; ++i) {
      const int32_t b = block_of[row[i].second];
      if (number[b] == Dfa::kDead) {
        number[b] = static_cast<int32_t>(queue.size());
        queue.push_back(b);
      }
      out_trans[k * num_classes + row[i].first] = number[b];
    }
  }
  return Dfa(Dfa::Unchecked{}, num_classes, std::move(rows.class_of), std::move(out_trans), std::move(out_accepting), 0);
}

}  // namespace

std::optional<Dfa> build_json_literal(const int32_t* program, size_t length, int32_t max_states) {
  // Recognize: [SEQ n] ["] characters... ["], nothing after.
  if (length < 10 || program[0] != OP_SEQ) return std::nullopt;
  Reader in{program, length, 0};
  return literal_trie(in, 1, max_states);
}

std::optional<Dfa> build_json_literal_set(const int32_t* program, size_t length, int32_t max_states) {
  // Recognize: [ALT n] literal_1 ... literal_n, nothing after.
  if (length < 12 || program[0] != OP_ALT || program[1] < 1) return std::nullopt;
  Reader in{program, length, 2};
  return literal_trie(in, program[1], max_states);
}

}  // namespace tokensieve::detail
