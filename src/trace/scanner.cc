#include "trace/scanner.h"

#include <algorithm>
#include <cstring>

#include "trace/bracket_finder.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mfu::trace {
namespace {

// First byte in [p, end) that is '"' or '\\'.
const char* FindQuoteOrBackslash(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (mask != 0)
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '\\')
    ++p;
  return p;
}

// First byte in [p, end) that is a quote or a bracket.
const char* FindStructural(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open_brace = _mm_set1_epi8('{');
  const __m128i close_brace = _mm_set1_epi8('}');
  const __m128i open_bracket = _mm_set1_epi8('[');
  const __m128i close_bracket = _mm_set1_epi8(']');
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i hit =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, open_brace)),
                     _mm_or_si128(_mm_cmpeq_epi8(v, close_brace),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, open_bracket), _mm_cmpeq_epi8(v, close_bracket))));
    int mask = _mm_movemask_epi8(hit);
    if (mask != 0)
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && *p != '"' && *p != '{' && *p != '}' && *p != '[' && *p != ']')
    ++p;
  return p;
}

bool IsSpaceOrComma(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ',';
}

std::string Snippet(const char* p, const char* end) {
  size_t n = static_cast<size_t>(end - p);
  return std::string(p, n < 80 ? n : 80);
}

}  // namespace

void TraceScanner::AppendMetadata(const char* begin, const char* end) {
  if (begin >= end || metadata_truncated_)
    return;
  size_t n = static_cast<size_t>(end - begin);
  if (metadata_.size() + n > kMaxMetadataBytes) {
    metadata_truncated_ = true;
    return;
  }
  metadata_.append(begin, n);
}

// Length (97 lines, over STYLE.md's 40): the resumable tokenizer loop of
// `mfu trace`. Each mode's branch ends in `continue` or `break` of this one
// loop over the chunk and moves `p` and `segment`, so split into functions
// each would hand back both the cursor and the loop decision; the per-byte
// work already lives in ScanEventsFast, FindStructural and OnStructural.
void TraceScanner::Scan(const char* data, uint64_t base, size_t size, std::vector<EventSpan>& events,
                        DiagnosticCounter& diagnostics) {
  const char* const end = data + size;
  const char* p = data + (pos_ - base);
  while (p < end) {
    if (mode_ == Mode::kAfter) {
      const char* q = p;
      while (q < end && IsSpaceOrComma(*q) && *q != ',')
        ++q;
      if (q < end)
        diagnostics.Add(DiagnosticId::k_trailing_bytes, base + static_cast<uint64_t>(q - data), Snippet(q, end));
      p = end;
      break;
    }
    const bool capture = mode_ == Mode::kObject;
    const char* segment = p;
    if (in_string_) {
      // Inside a string: only '"' (unescaped) ends it.
      while (p < end) {
        if (escaped_) {
          escaped_ = false;
          ++p;
          continue;
        }
        const char* q = FindQuoteOrBackslash(p, end);
        if (string_at_depth1_ && key_.size() < 32)
          key_.append(p, static_cast<size_t>(std::min<ptrdiff_t>(q - p, 32)));
        p = q;
        if (p == end)
          break;
        if (*p == '\\') {
          escaped_ = true;
          ++p;
          continue;
        }
        ++p;  // closing quote
        in_string_ = false;
        if (string_at_depth1_) {
          last_key_is_events_ = key_ == "traceEvents";
          string_at_depth1_ = false;
        }
        break;
      }
      if (capture)
        AppendMetadata(segment, p);
      continue;
    }
    if (mode_ == Mode::kEvents && end - p >= 64) {
      p = ScanEventsFast(p, end, data, base, events, diagnostics);
      continue;
    }
    // Between events at the array level every byte is checked; elsewhere skip
    // to the next quote or bracket.
    if (mode_ == Mode::kEvents && depth_ == 2) {
      while (p < end && IsSpaceOrComma(*p))
        ++p;
      if (p == end)
        break;
      char c = *p;
      if (c != '{' && c != ']') {
        // Counted once by CheckGap when the next element starts or the array ends.
        // Skip the stray value: a string or a scalar up to the next separator.
        if (c == '"') {
          in_string_ = true;
          ++p;
          continue;
        }
        if (c == '[') {
          CheckGap(data, base, last_event_end_, base + static_cast<uint64_t>(p - data), diagnostics);
          diagnostics.Add(DiagnosticId::k_event_not_object, base + static_cast<uint64_t>(p - data), Snippet(p, end));
          ++depth_;  // a nested array element: scanned as structure, not an event
          ++p;
          continue;
        }
        while (p < end && !IsSpaceOrComma(*p) && *p != ']' && *p != '{')
          ++p;
        continue;
      }
    } else {
      p = FindStructural(p, end);
      if (capture)
        AppendMetadata(segment, p);
      if (p == end)
        break;
    }
    const uint64_t offset = base + static_cast<uint64_t>(p - data);
    const char c = *p++;
    if (mode_ == Mode::kEvents && ((depth_ == 2 && (c == '{' || c == '[')) || (depth_ == 2 && c == ']'))) {
      CheckGap(data, base, last_event_end_, offset, diagnostics);
      if (c == '[') {
        diagnostics.Add(DiagnosticId::k_event_not_object, offset, Snippet(p - 1, end));
      }
    }
    OnStructural(c, offset, events, diagnostics, p - 1, end);
  }
  pos_ = base + size;
  SettleChunkEnd(data, base, pos_, diagnostics);
}

void TraceScanner::SettleChunkEnd(const char* data, uint64_t base, uint64_t end, DiagnosticCounter& diagnostics) {
  if (mode_ != Mode::kEvents)
    return;
  if (event_start_ != kNone) {
    oversized_ = oversized_ || end - event_start_ > max_event_bytes_;
    return;
  }
  if (depth_ == 2) {
    CheckGap(data, base, last_event_end_, end, diagnostics);
  } else {
    last_event_end_ = end;  // inside a stray nested array: its bytes are not checked
  }
}

void TraceScanner::OnStructural(char c, uint64_t offset, std::vector<EventSpan>& events, DiagnosticCounter& diagnostics,
                                const char* where, const char* data_end) {
  (void)diagnostics;
  (void)data_end;
  switch (c) {
    case '"':
      in_string_ = true;
      escaped_ = false;
      if (mode_ == Mode::kObject && depth_ == 1) {
        string_at_depth1_ = true;
        key_.clear();
      }
      if (mode_ == Mode::kObject)
        AppendMetadata(where, where + 1);
      return;
    case '{':
    case '[':
      if (mode_ == Mode::kBefore) {
        if (c == '{') {
          mode_ = Mode::kObject;
          depth_ = 1;
          AppendMetadata(where, where + 1);
        } else {
          // Chrome's JSON Array Format: the document is the events array.
          bare_array_ = true;
          mode_ = Mode::kEvents;
          depth_ = 2;
          saw_events_ = true;
          EndGap(offset + 1);
          AppendText("{\"traceEvents\":[]");
        }
        return;
      }
      ++depth_;
      if (mode_ == Mode::kObject) {
        if (depth_ == 2 && c == '[' && last_key_is_events_) {
          mode_ = Mode::kEvents;
          saw_events_ = true;
          EndGap(offset + 1);
          AppendText("[]");
          return;
        }
        AppendMetadata(where, where + 1);
        return;
      }
      if (mode_ == Mode::kEvents && depth_ == 3 && c == '{')
        event_start_ = offset;
      return;
    case '}':
    case ']':
      --depth_;
      if (mode_ == Mode::kEvents) {
        if (!CloseAtEventDepth(c, offset, events, diagnostics) && depth_ == 1) {
          mode_ = Mode::kObject;
          last_key_is_events_ = false;
          if (bare_array_) {
            AppendText("}");
            depth_ = 0;
            mode_ = Mode::kAfter;
          }
        }
        return;
      }
      if (mode_ == Mode::kObject) {
        AppendMetadata(where, where + 1);
        if (depth_ == 0)
          mode_ = Mode::kAfter;
      }
      return;
    default:
      return;
  }
}

void TraceScanner::CheckGap(const char* data, uint64_t base, uint64_t from, uint64_t to,
                            DiagnosticCounter& diagnostics) {
  from = std::max(from, base);  // bytes before this buffer were checked already
  // Count each stray element: a token starting after a separator, strings
  // (which may hold separators) included. The state carries over from the
  // previous chunk's part of the gap.
  bool separated = gap_separated_, in_string = gap_in_string_, escaped = gap_escaped_;
  for (uint64_t o = from; o < to; ++o) {
#if defined(__SSE2__)
    // Runs of spaces (gigabytes of padding) 16 bytes at a time.
    if (!in_string) {
      const __m128i space = _mm_set1_epi8(' ');
      while (to - o >= 16 &&
             _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + (o - base))),
                                              space)) == 0xFFFF) {
        separated = true;
        o += 16;
      }
      if (o == to)
        break;
    }
#endif
    const char c = data[o - base];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (IsSpaceOrComma(c)) {
      separated = true;
      continue;
    }
    if (separated) {
      const char* at = data + (o - base);
      diagnostics.Add(DiagnosticId::k_event_not_object, o, Snippet(at, data + (to - base)));
      separated = false;
    }
    if (c == '"')
      in_string = true;
  }
  last_event_end_ = std::max(last_event_end_, to);
  gap_separated_ = separated;
  gap_in_string_ = in_string;
  gap_escaped_ = escaped;
}

const char* TraceScanner::ScanEventsFast(const char* p, const char* end, const char* data, uint64_t base,
                                         std::vector<EventSpan>& events, DiagnosticCounter& diagnostics) {
  // Pieces of up to 64 KiB: the SIMD pass lists the unquoted brackets, this
  // loop keeps the depth and cuts events.
  constexpr size_t kPiece = 64u << 10;
  static const BracketFinder find = BestBracketFinder();
  BlockState st;
  st.in_string = in_string_ ? ~uint64_t{0} : 0;
  st.escaped = escaped_ ? 1 : 0;
  const size_t most = std::min(kPiece, static_cast<size_t>(end - p));
  if (brackets_.size() < most)
    brackets_.resize(most);
  while (end - p >= 64) {
    const size_t n = std::min(static_cast<size_t>(end - p) & ~size_t{63}, kPiece);
    const size_t count = find(p, n, brackets_.data(), st);
    for (size_t k = 0; k < count; ++k) {
      const uint32_t at = brackets_[k];
      const char c = p[at];
      const uint64_t offset = base + static_cast<uint64_t>(p + at - data);
      if (c == '{' || c == '[') {
        ++depth_;
        if (depth_ == 3) {
          CheckGap(data, base, last_event_end_, offset, diagnostics);
          if (c == '{') {
            event_start_ = offset;
          } else {  // an array element: not an event
            diagnostics.Add(DiagnosticId::k_event_not_object, offset, Snippet(p + at, end));
            EndGap(offset + 1);
          }
        }
        continue;
      }
      --depth_;
      if (!CloseAtEventDepth(c, offset, events, diagnostics) && depth_ == 1) {
        CheckGap(data, base, last_event_end_, offset, diagnostics);
        // The events array closed: hand the rest to the byte scanner.
        mode_ = Mode::kObject;
        last_key_is_events_ = false;
        in_string_ = false;
        escaped_ = false;
        if (bare_array_) {
          AppendText("}");
          depth_ = 0;
          mode_ = Mode::kAfter;
        }
        return p + at + 1;
      }
    }
    p += n;
  }
  in_string_ = st.in_string != 0;
  escaped_ = st.escaped != 0;
  return p;
}

}  // namespace mfu::trace
