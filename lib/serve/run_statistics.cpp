#include "serve/run_statistics.hpp"

#include <string_view>

#include "analysis/observation.hpp"

namespace tp::serve {

void RunStatistics::add(simdjson::dom::object record) {
  const auto observation = analysis::observe(record);
  if (!observation) return;
  std::string_view run;
  if (record["run"].get_string().get(run) == simdjson::SUCCESS && run != run_) {
    if (!run_.empty()) stats_ = fresh();
    run_.assign(run);
  }
  stats_.add(*observation);
  ++added_;
}

}  // namespace tp::serve
