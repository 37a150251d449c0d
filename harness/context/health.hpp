#pragma once
// Measurement health: a background thread reads the GPU's SM clock, clock event reasons and PCIe link
// through NVML while a case runs, so a figure taken while power or heat held the clocks down, or with the
// link trained below its maximum, is marked and, as --on-throttle says, warned about, skipped or failed.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/context/nvml.hpp"

namespace gpu_bench {

struct health_summary {
  int samples = 0;
  double sm_clock_mean_mhz = 0;
  unsigned sm_clock_min_mhz = 0;
  unsigned long long harmful_reasons = 0;  // OR of every sample's harmful clock event reasons
  std::optional<unsigned> pcie_gen_min, pcie_width_min;
};

// Folds one reading into a summary (pure; tested without a GPU).
void add_reading(health_summary& s, const nvml_state& r);

// The GPUs of a case as read at its start and at its end, outside its samples: one entry per GPU, in the
// case's order (its first GPU first).
struct case_edges {
  std::vector<nvml_state> start, end;
  std::vector<link_error_counts> errors_start, errors_end;
  double seconds = 0;  // from the start's readings to the end's
};
// The counters a case reports of them (pure; docs/json.md): power_w_start and _end and temp_c_start and _end,
// the most any of its GPUs read; sm_clock_mhz_start and _end and mem_clock_mhz_start and _end, its first GPU's;
// link_errors_rose, how much the link error counters of all its GPUs rose together (link_errors_rise over
// `seconds`), only where they rose.
// A figure no GPU read is left out.
std::vector<std::pair<std::string, double>> edge_counters(const case_edges& e);

class health_sampler {
 public:
  // Polls each GPU of `pci_bus_ids` (the GPUs a case uses) every `period_ms` from construction until
  // stop(); a GPU NVML cannot read gets no samples, and none readable, or a period of 0, means no thread
  // (the reading at construction stays the only one). With `edges`, the
  // first reading (at construction) and one more in stop(), after the polling ended, also read power,
  // temperature, the memory clock and the link error counters: edges() gives them. The NVLink counters
  // are read only with `nvlink`: for a case whose copies cross NVLink.
  health_sampler(std::vector<std::string> pci_bus_ids, int period_ms, bool edges = false, bool nvlink = false);
  ~health_sampler();
  health_sampler(const health_sampler&) = delete;
  health_sampler& operator=(const health_sampler&) = delete;
  // One summary per bus id, in the order given. The readings of the end (with `edges`) stay out of them.
  std::vector<health_summary> stop();
  // The readings of the case's start and end (empty without `edges`); the end's once stop() has run.
  const case_edges& edges() const { return edges_; }
  // Whether any GPU had its clocks held down by power or heat in a reading taken between `from_s` and
  // `to_s` seconds after `origin`: what ties a throttled reading to the samples taken around it.
  bool held_down_between(std::chrono::steady_clock::time_point origin, double from_s, double to_s) const;
  // How far apart two readings are, seconds.
  double period_s() const { return period_ms_ / 1000.0; }

 private:
  void sample_all(bool edge = false);
  mutable std::mutex mutex_;  // guards summaries_ and held_down_ against the polling thread
  std::vector<std::chrono::steady_clock::time_point> held_down_;  // when a reading saw harmful reasons
  std::vector<std::string> buses_;
  int period_ms_;
  bool with_edges_, with_nvlink_;
  std::chrono::steady_clock::time_point edges_started_;
  case_edges edges_;  // written only before the polling thread starts and after it ended
  std::atomic<bool> stop_{false};
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::vector<health_summary> summaries_;
  std::thread thread_;
};

}  // namespace gpu_bench
