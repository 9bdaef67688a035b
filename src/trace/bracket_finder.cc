#include "trace/bracket_finder.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define MFU_X86 1
#endif

namespace mfu::trace {
namespace {

constexpr uint64_t kEvenBits = 0x5555555555555555ull;

// Bit i = xor of bits 0..i: the "inside a string" mask from quote positions.
inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// simdjson's find_escaped_branchless: the quotes that are not escaped,
// given a block's backslash and quote masks (updates the escape carry).
inline uint64_t UnescapedQuotes(uint64_t backslash, uint64_t quotes, BlockState& st) {
  backslash &= ~st.escaped;
  const uint64_t follows_escape = backslash << 1 | st.escaped;
  const uint64_t odd_starts = backslash & ~kEvenBits & ~follows_escape;
  uint64_t even_starts = 0;
  st.escaped = __builtin_add_overflow(odd_starts, backslash, &even_starts) ? 1 : 0;
  const uint64_t escaped = (kEvenBits ^ (even_starts << 1)) & follows_escape;
  return quotes & ~escaped;
}

// The brackets outside strings, from the prefix xor of the unescaped quotes
// (updates the string carry).
inline uint64_t UnquotedBrackets(uint64_t quote_prefix_xor, uint64_t brackets, BlockState& st) {
  const uint64_t in_string = quote_prefix_xor ^ st.in_string;
  st.in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
  return brackets & ~in_string;
}

inline size_t Emit(uint64_t brackets, uint32_t base, uint32_t* out) {
  size_t k = 0;
  while (brackets != 0) {
    out[k++] = base + static_cast<uint32_t>(__builtin_ctzll(brackets));
    brackets &= brackets - 1;
  }
  return k;
}

size_t FindScalar(const char* p, size_t n, uint32_t* out, BlockState& st) {
  size_t count = 0;
  for (size_t at = 0; at < n; at += 64) {
    uint64_t backslash = 0, quotes = 0, brackets = 0;
    for (int i = 0; i < 64; ++i) {
      const char c = p[at + static_cast<size_t>(i)];
      const uint64_t bit = uint64_t{1} << i;
      backslash |= c == '\\' ? bit : 0;
      quotes |= c == '"' ? bit : 0;
      brackets |= (c == '{' || c == '}' || c == '[' || c == ']') ? bit : 0;
    }
    count += Emit(UnquotedBrackets(PrefixXor(UnescapedQuotes(backslash, quotes, st)), brackets, st),
                  static_cast<uint32_t>(at), out + count);
  }
  return count;
}

#if defined(MFU_X86)
inline uint64_t Movemask16(__m128i v, int shift) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(v))) << shift;
}

size_t FindSse2(const char* p, size_t n, uint32_t* out, BlockState& st) {
  const __m128i backslash_c = _mm_set1_epi8('\\'), quote_c = _mm_set1_epi8('"');
  const __m128i open_brace = _mm_set1_epi8('{'), close_brace = _mm_set1_epi8('}');
  const __m128i open_bracket = _mm_set1_epi8('['), close_bracket = _mm_set1_epi8(']');
  size_t count = 0;
  for (size_t at = 0; at < n; at += 64) {
    uint64_t backslash = 0, quotes = 0, brackets = 0;
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at + 16 * static_cast<size_t>(i)));
      backslash |= Movemask16(_mm_cmpeq_epi8(v, backslash_c), 16 * i);
      quotes |= Movemask16(_mm_cmpeq_epi8(v, quote_c), 16 * i);
      const __m128i b = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, open_brace), _mm_cmpeq_epi8(v, close_brace)),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, open_bracket), _mm_cmpeq_epi8(v, close_bracket)));
      brackets |= Movemask16(b, 16 * i);
    }
    count += Emit(UnquotedBrackets(PrefixXor(UnescapedQuotes(backslash, quotes, st)), brackets, st),
                  static_cast<uint32_t>(at), out + count);
  }
  return count;
}

__attribute__((target("pclmul"))) inline uint64_t PrefixXorClmul(uint64_t x) {
  const __m128i all_ones = _mm_set1_epi8(static_cast<char>(0xFF));
  const __m128i r = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)), all_ones, 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(r));
}

__attribute__((target("avx2,pclmul"))) inline uint64_t Movemask32(__m256i v, int shift) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(v))) << shift;
}

__attribute__((target("avx2,pclmul"))) size_t FindAvx2(const char* p, size_t n, uint32_t* out, BlockState& st) {
  const __m256i backslash_c = _mm256_set1_epi8('\\'), quote_c = _mm256_set1_epi8('"');
  const __m256i open_brace = _mm256_set1_epi8('{'), close_brace = _mm256_set1_epi8('}');
  const __m256i open_bracket = _mm256_set1_epi8('['), close_bracket = _mm256_set1_epi8(']');
  size_t count = 0;
  for (size_t at = 0; at < n; at += 64) {
    uint64_t backslash = 0, quotes = 0, brackets = 0;
    for (int i = 0; i < 2; ++i) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + at + 32 * static_cast<size_t>(i)));
      backslash |= Movemask32(_mm256_cmpeq_epi8(v, backslash_c), 32 * i);
      quotes |= Movemask32(_mm256_cmpeq_epi8(v, quote_c), 32 * i);
      const __m256i b =
          _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, open_brace), _mm256_cmpeq_epi8(v, close_brace)),
                          _mm256_or_si256(_mm256_cmpeq_epi8(v, open_bracket), _mm256_cmpeq_epi8(v, close_bracket)));
      brackets |= Movemask32(b, 32 * i);
    }
    count += Emit(UnquotedBrackets(PrefixXorClmul(UnescapedQuotes(backslash, quotes, st)), brackets, st),
                  static_cast<uint32_t>(at), out + count);
  }
  return count;
}

#endif

}  // namespace

std::vector<BracketFinderImpl> AvailableBracketFinders() {
  std::vector<BracketFinderImpl> all{{"scalar", FindScalar}};
#if defined(MFU_X86)
  all.push_back({"sse2", FindSse2});
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul"))
    all.push_back({"avx2", FindAvx2});
#endif
  return all;
}

BracketFinder BestBracketFinder() {
  static const BracketFinder best = AvailableBracketFinders().back().find;
  return best;
}

}  // namespace mfu::trace
