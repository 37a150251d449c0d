#include "harness/run/settings_context.hpp"

#include <algorithm>
#include <optional>

#include "harness/run/rounds.hpp"

namespace gpu_bench {

context_list run_settings_context(const options& opts, const std::string& filter) {
  context_list context;
  context.emplace_back("gpu_bench.gate", opts.gate ? "on" : "off");
  context.emplace_back("gpu_bench.preset", opts.preset);
  // The tools read a run that names its cases as whole without the cases it leaves out.
  if (opts.preset != "gate" && !filter.empty()) context.emplace_back("gpu_bench.filter", filter);
  context.emplace_back("gpu_bench.noise_target_pct", fact_text(std::optional<double>(opts.noise_pct)));
  context.emplace_back("gpu_bench.max_time_per_case_s", fact_text(std::optional<double>(opts.max_time_per_case_s)));
  context.emplace_back("gpu_bench.min_samples", std::to_string(opts.min_samples));
  context.emplace_back("gpu_bench.rounds", std::to_string(opts.rounds));
  context.emplace_back("gpu_bench.health_poll_ms", std::to_string(opts.health_poll_ms));
  context.emplace_back("gpu_bench.link_rounds", std::to_string(rounds_of_case(round_kind::link)));
  context.emplace_back("gpu_bench.host_rounds", std::to_string(rounds_of_case(round_kind::host)));
  context.emplace_back("gpu_bench.placements", std::to_string(opts.placements));
  context.emplace_back("gpu_bench.link_max_rounds",
                       std::to_string(std::max(opts.link_max_rounds, rounds_of_case(round_kind::link))));
  context.emplace_back("gpu_bench.target_detectable_pct", fact_text(std::optional<double>(opts.target_detectable_pct)));
  // How a case's figure combines its rounds (docs/json.md): from five rounds the mean of the fastest half.
  // Files before this key held their mean, then ones with "trimmed" a fifth trimmed at each end, then
  // "trimmed25" a quarter.
  context.emplace_back("gpu_bench.round_center", "fastest_half");
  return context;
}

}  // namespace gpu_bench
