#include "harness/context/context_format.hpp"

#include <cstdio>
#include <stdexcept>

namespace gpu_bench {

std::string format_cuda_version(int v) {
  if (v <= 0) return "unavailable";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string start_phases_text(const std::vector<std::pair<std::string, double>>& phases) {
  if (phases.empty()) return {};
  double total = 0;
  for (const auto& phase : phases) total += phase.second;
  char part[96];
  std::snprintf(part, sizeof part, "%.2f", total);
  std::string out = part;
  for (const auto& [name, s] : phases) {
    std::snprintf(part, sizeof part, " %s=%.2f", name.c_str(), s);
    out += part;
  }
  return out;
}

std::string format_gpu_uuid(const std::array<unsigned char, 16>& b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

void check_context(const context_list& facts) {
  for (const auto& [key, value] : facts) {
    bool ok = !key.empty() && key.find('.') != std::string::npos && key.front() != '.' && key.back() != '.';
    // '-' joins the two GPUs of a pair (topology.0-1.link).
    for (char c : key)
      ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-');
    if (!ok) throw std::logic_error("context key is not dotted lower-case: " + key);
    if (value.empty()) throw std::logic_error("context value is empty for " + key);
  }
}

}  // namespace gpu_bench
