#include "harness/context/health.hpp"

#include <algorithm>
#include <chrono>

namespace gpu_bench {
void add_reading(health_summary& s, const nvml_state& r) {
  if (!r.sm_clock_mhz && !r.clock_event_reasons && !r.pcie_gen) return;
  if (r.sm_clock_mhz) {
    const double n = s.samples;
    s.sm_clock_mean_mhz = (s.sm_clock_mean_mhz * n + *r.sm_clock_mhz) / (n + 1);
    s.sm_clock_min_mhz = s.samples == 0 ? *r.sm_clock_mhz : std::min(s.sm_clock_min_mhz, *r.sm_clock_mhz);
  }
  if (r.clock_event_reasons) s.harmful_reasons |= harmful_clock_reasons(*r.clock_event_reasons);
  if (r.pcie_gen) s.pcie_gen_min = std::min(s.pcie_gen_min.value_or(*r.pcie_gen), *r.pcie_gen);
  if (r.pcie_width) s.pcie_width_min = std::min(s.pcie_width_min.value_or(*r.pcie_width), *r.pcie_width);
  ++s.samples;
}

namespace {

// The most any reading of `readings` holds of `field`.
template <class T>
std::optional<double> most(const std::vector<nvml_state>& readings, std::optional<T> nvml_state::*field) {
  std::optional<double> top;
  for (const nvml_state& r : readings)
    if (r.*field) top = std::max(top.value_or(static_cast<double>(*(r.*field))), static_cast<double>(*(r.*field)));
  return top;
}

// The first reading's `field`: the case's first GPU.
template <class T>
std::optional<double> first(const std::vector<nvml_state>& readings, std::optional<T> nvml_state::*field) {
  if (readings.empty() || !(readings.front().*field)) return std::nullopt;
  return static_cast<double>(*(readings.front().*field));
}

}  // namespace

std::vector<std::pair<std::string, double>> edge_counters(const case_edges& e) {
  std::vector<std::pair<std::string, double>> out;
  const auto put = [&out](const char* name, const std::optional<double>& v) {
    if (v) out.emplace_back(name, *v);
  };
  put("power_w_start", most(e.start, &nvml_state::power_w));
  put("power_w_end", most(e.end, &nvml_state::power_w));
  put("temp_c_start", most(e.start, &nvml_state::temp_c));
  put("temp_c_end", most(e.end, &nvml_state::temp_c));
  put("sm_clock_mhz_start", first(e.start, &nvml_state::sm_clock_mhz));
  put("sm_clock_mhz_end", first(e.end, &nvml_state::sm_clock_mhz));
  put("mem_clock_mhz_start", first(e.start, &nvml_state::mem_clock_mhz));
  put("mem_clock_mhz_end", first(e.end, &nvml_state::mem_clock_mhz));
  unsigned long long rose = 0;
  for (std::size_t i = 0; i < e.errors_start.size() && i < e.errors_end.size(); ++i)
    rose += link_errors_rise(e.errors_start[i], e.errors_end[i], e.seconds);
  if (rose > 0) out.emplace_back("link_errors_rose", static_cast<double>(rose));
  return out;
}

health_sampler::health_sampler(std::vector<std::string> pci_bus_ids, int period_ms, bool edges, bool nvlink)
    : buses_(std::move(pci_bus_ids)),
      period_ms_(period_ms),
      with_edges_(edges),
      with_nvlink_(nvlink),
      edges_started_(std::chrono::steady_clock::now()),
      summaries_(buses_.size()) {
  sample_all(with_edges_);
  const bool readable =
      std::any_of(summaries_.begin(), summaries_.end(), [](const health_summary& s) { return s.samples > 0; });
  // NVML cannot read these GPUs, or no polling is asked for: no thread.
  if (!readable || period_ms_ <= 0) return;
  thread_ = std::thread([this] {
    for (;;) {
      {
        // Woken at once by stop(): a case's end does not wait out the polling period.
        std::unique_lock<std::mutex> hold(wake_mutex_);
        if (wake_.wait_for(hold, std::chrono::milliseconds(period_ms_), [this] { return stop_.load(); })) return;
      }
      sample_all();
    }
  });
}

void health_sampler::sample_all(bool edge) {
  for (std::size_t i = 0; i < buses_.size(); ++i) {
    if (edge)
      edges_.errors_start.push_back(buses_[i].empty() ? link_error_counts{}
                                                      : read_nvml_link_errors(buses_[i], with_nvlink_));
    const nvml_state r = buses_[i].empty() ? nvml_state{} : read_nvml_state(buses_[i], edge);
    if (edge) edges_.start.push_back(r);
    if (buses_[i].empty()) continue;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> hold(mutex_);
    add_reading(summaries_[i], r);
    if (r.clock_event_reasons && harmful_clock_reasons(*r.clock_event_reasons) != 0) held_down_.push_back(now);
  }
}

bool health_sampler::held_down_between(std::chrono::steady_clock::time_point origin, double from_s, double to_s) const {
  const auto from =
      origin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(from_s));
  const auto to =
      origin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(to_s));
  std::lock_guard<std::mutex> hold(mutex_);
  for (const auto& t : held_down_)
    if (t >= from && t <= to) return true;
  return false;
}

health_sampler::~health_sampler() {
  (void)stop();
}

std::vector<health_summary> health_sampler::stop() {
  {
    std::lock_guard<std::mutex> hold(wake_mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The end's readings, once: the case's own work has ended, and the polling with it.
  if (with_edges_ && edges_.end.empty()) {
    for (const std::string& bus : buses_) {
      edges_.end.push_back(bus.empty() ? nvml_state{} : read_nvml_state(bus, true));
      edges_.errors_end.push_back(bus.empty() ? link_error_counts{} : read_nvml_link_errors(bus, with_nvlink_));
    }
    edges_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - edges_started_).count();
  }
  std::lock_guard<std::mutex> hold(mutex_);
  return summaries_;
}

}  // namespace gpu_bench
