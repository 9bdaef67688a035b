// Several logs of one job merged into one timeline, and the findings'
// evidence lines taken from the files' text.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mfu/log_analysis.h"

namespace mfu {
namespace {

constexpr size_t kMaxEvidence = 240;

// Removes ANSI escape sequences (CSI "ESC [ ... final", and a lone ESC).
std::string StripAnsi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      if (text[i] != '\r')
        out.push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~'))
        ++i;
    }
  }
  return out;
}

std::string Trimmed(std::string_view text) {
  std::string s = StripAnsi(text);
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t'))
    ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
    --e;
  s = s.substr(b, e - b);
  if (s.size() > kMaxEvidence) {
    s.resize(kMaxEvidence - 3);
    s += "...";
  }
  return s;
}

void FillHeader(LogHeader& into, const LogHeader& from) {
  auto fill = [](int64_t& a, int64_t b) {
    if (a == 0)
      a = b;
  };
  auto fill_s = [](std::string& a, const std::string& b) {
    if (a.empty())
      a = b;
  };
  fill(into.world_size, from.world_size);
  fill(into.tensor_parallel, from.tensor_parallel);
  fill(into.pipeline_parallel, from.pipeline_parallel);
  fill(into.context_parallel, from.context_parallel);
  fill(into.data_parallel, from.data_parallel);
  fill(into.global_batch, from.global_batch);
  fill(into.micro_batch, from.micro_batch);
  fill(into.grad_accum, from.grad_accum);
  fill(into.seq_len, from.seq_len);
  fill(into.train_iters, from.train_iters);
  fill(into.log_interval, from.log_interval);
  fill(into.num_layers, from.num_layers);
  fill(into.hidden_size, from.hidden_size);
  fill(into.num_attention_heads, from.num_attention_heads);
  fill(into.num_query_groups, from.num_query_groups);
  fill(into.ffn_hidden_size, from.ffn_hidden_size);
  fill(into.vocab_size, from.vocab_size);
  fill(into.num_experts, from.num_experts);
  fill(into.moe_router_topk, from.moe_router_topk);
  fill(into.moe_ffn_hidden_size, from.moe_ffn_hidden_size);
  fill(into.tokens_per_step, from.tokens_per_step);
  fill_s(into.model_name, from.model_name);
  fill_s(into.device_name, from.device_name);
  fill_s(into.precision, from.precision);
  fill_s(into.recompute, from.recompute);
  fill_s(into.job_id, from.job_id);
  if (!(into.parameters > 0))
    into.parameters = from.parameters;
  if (!(into.peak_flops_used > 0)) {
    into.peak_flops_used = from.peak_flops_used;
    into.peak_flops_line = 0;  // the line is in another file
  }
  into.swiglu = into.swiglu || from.swiglu;
}

}  // namespace

StatusOr<LogTimeline> MergeTrainingLogs(std::vector<LogTimeline> timelines) {
  if (timelines.empty())
    return InvalidArgumentError("no training logs given");
  LogTimeline out = std::move(timelines[0]);
  for (size_t k = 1; k < timelines.size(); ++k) {
    LogTimeline& t = timelines[k];
    const int32_t offset = out.attempts;
    for (LogStep& s : t.steps) {
      s.attempt += offset;
      out.steps.push_back(s);
    }
    for (LogEvent& e : t.events) {
      e.attempt += offset;
      out.events.push_back(std::move(e));
    }
    out.attempts += std::max<int32_t>(1, t.attempts);
    FillHeader(out.header, t.header);
    out.origin += ", " + t.origin;
    LogReadStats& st = out.stats;
    st.bytes += t.stats.bytes;
    st.lines += t.stats.lines;
    st.step_lines += t.stats.step_lines;
    st.duplicate_lines += t.stats.duplicate_lines;
    st.partial_lines += t.stats.partial_lines;
    st.header_lines += t.stats.header_lines;
    st.ranks_seen = std::max(st.ranks_seen, t.stats.ranks_seen);
    for (const std::string& f : t.stats.formats_seen) {
      if (std::find(st.formats_seen.begin(), st.formats_seen.end(), f) == st.formats_seen.end())
        st.formats_seen.push_back(f);
    }
  }
  return out;
}

void AttachEvidence(std::string_view text, std::string_view origin, std::vector<LogFinding>& findings) {
  std::vector<std::pair<int64_t, size_t>> wanted;  // (line, finding index)
  for (size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].origin == origin && findings[i].line > 0)
      wanted.emplace_back(findings[i].line, i);
  }
  std::sort(wanted.begin(), wanted.end());
  size_t at = 0, w = 0;
  int64_t line = 1;
  while (w < wanted.size() && at <= text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos)
      end = text.size();
    while (w < wanted.size() && wanted[w].first == line) {
      findings[wanted[w].second].evidence = Trimmed(text.substr(at, end - at));
      ++w;
    }
    if (end == text.size())
      break;
    at = end + 1;
    ++line;
  }
}

}  // namespace mfu
