#include "query/thread_filter.hpp"

#include <memory>
#include <utility>

namespace tp {

Verdict ThreadFilter::judge(NdjsonLine& line) {
  why_.clear();
  const Verdict verdict = filter_.judge(line.root, why_);
  if (verdict == Verdict::bad) {
    line.problem = why_;
  } else if (quick_enabled() && !shapes_.full()) {
    shapes_.learn(line.text);
  }
  return verdict;
}

std::optional<bool> ThreadFilter::quick(std::string_view text) {
  const CheckedLine* line = shapes_.match(text);
  if (line == nullptr) return std::nullopt;
  return filter_.selects(*line);
}

ChunkHandler chunk_filter(FilterCriteria criteria) {
  auto filter = std::make_shared<ThreadFilter>(std::move(criteria));
  ChunkLineHandler on_line = [filter](NdjsonLine& line, OutBuffer& out) {
    const Verdict verdict = filter->judge(line);
    if (verdict == Verdict::bad) return simdjson::INCORRECT_TYPE;
    if (verdict == Verdict::selected) pass_line(line.text, out);
    return simdjson::SUCCESS;
  };
  if (!filter->quick_enabled()) return on_line;
  return {std::move(on_line), [filter](std::string_view text, std::uint64_t /*number*/, OutBuffer& out) {
            const std::optional<bool> selected = filter->quick(text);
            if (selected == true) pass_line(text, out);
            return selected.has_value();
          }};
}

}  // namespace tp
