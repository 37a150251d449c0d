#include "harness/context/host_facts.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpu_bench {
namespace {
std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}
}  // namespace

std::optional<std::string> cpu_model_from_cpuinfo(std::string_view cpuinfo) {
  std::size_t pos = 0;
  while (pos < cpuinfo.size()) {
    std::size_t eol = cpuinfo.find('\n', pos);
    if (eol == std::string_view::npos) eol = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(pos, eol - pos);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == "model name") {
      std::string model = trim(line.substr(colon + 1));
      if (!model.empty()) return model;
    }
    pos = eol + 1;
  }
  return std::nullopt;
}

std::optional<std::string> selected_from_bracketed(std::string_view text) {
  const std::size_t open = text.find('[');
  const std::size_t close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1) return std::nullopt;
  return std::string(text.substr(open + 1, close - open - 1));
}

std::string sysfs_pci_address(std::string_view bus_id) {
  std::string s(bus_id);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);
  return s;
}

std::optional<std::uint64_t> mem_available_from_meminfo(std::string_view meminfo) {
  const std::size_t pos = meminfo.find("MemAvailable:");
  if (pos == std::string_view::npos) return std::nullopt;
  std::istringstream in(std::string(meminfo.substr(pos + 13, 64)));
  std::uint64_t kib = 0;
  if (!(in >> kib)) return std::nullopt;
  return kib * 1024;
}

std::optional<double> uptime_from_proc(std::string_view text) {
  std::istringstream in{std::string(text)};
  double seconds = 0;
  if (!(in >> seconds) || !(seconds >= 0)) return std::nullopt;
  return seconds;
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string host_cpu() {
  const auto text = read_text_file("/proc/cpuinfo");
  const auto model = text ? cpu_model_from_cpuinfo(*text) : std::nullopt;
  return model.value_or(kUnavailable);
}

std::string host_kernel() {
  utsname u{};
  if (uname(&u) != 0) return kUnavailable;
  return u.release;
}

std::string host_thp() {
  const auto text = read_text_file("/sys/kernel/mm/transparent_hugepage/enabled");
  const auto sel = text ? selected_from_bracketed(*text) : std::nullopt;
  return sel.value_or(kUnavailable);
}

std::string gpu_numa_node(std::string_view pci_bus_id) {
  const auto text = read_text_file("/sys/bus/pci/devices/" + sysfs_pci_address(pci_bus_id) + "/numa_node");
  if (!text) return kUnavailable;
  const std::string node = trim(*text);
  if (node.empty()) return kUnavailable;
  return node == "-1" ? "none" : node;
}

std::string gpu_local_cpus(std::string_view pci_bus_id) {
  const auto text = read_text_file("/sys/bus/pci/devices/" + sysfs_pci_address(pci_bus_id) + "/local_cpulist");
  return fact_text(text ? trim(*text) : std::string());
}

std::optional<std::uint64_t> host_mem_available() {
  const auto text = read_text_file("/proc/meminfo");
  return text ? mem_available_from_meminfo(*text) : std::nullopt;
}

std::optional<double> host_uptime_s() {
  const auto text = read_text_file("/proc/uptime");
  return text ? uptime_from_proc(*text) : std::nullopt;
}

std::string host_clocksource() {
  const auto text = read_text_file("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  if (!text) return std::string(kUnavailable);
  const auto end = text->find_last_not_of(" \n\t");
  return end == std::string::npos ? std::string(kUnavailable) : text->substr(0, end + 1);
}

double steady_clock_read_ns(int batches, int reads) {
  using clock = std::chrono::steady_clock;
  batches = std::max(1, batches);
  reads = std::max(2, reads);
  std::vector<double> per_read;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = clock::now();
    for (int i = 0; i < reads - 1; ++i) (void)clock::now();
    per_read.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / reads);
  }
  const auto mid = per_read.begin() + batches / 2;
  std::nth_element(per_read.begin(), mid, per_read.end());
  return *mid;
}

}  // namespace gpu_bench
