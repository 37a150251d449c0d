#include "harness/cuda/check.hpp"

#include <cstdio>

namespace gpu_bench {
namespace {
std::string describe(cudaError_t code, const char* expr, const char* file, int line) {
  // Only the file's base name: the build directory means nothing to a reader.
  std::string f = file;
  const auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ") from " + expr + " at " + f + ":" +
         std::to_string(line);
}
}  // namespace

cuda_error::cuda_error(cudaError_t code, const char* expr, const char* file, int line)
    : std::runtime_error(describe(code, expr, file, line)), code_(code) {}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  if (code == cudaErrorMemoryAllocation) (void)cudaGetLastError();  // not sticky: clear it for the next case
  throw cuda_error(code, expr, file, line);
}

void report_cuda_error(cudaError_t code, const char* expr, const char* file, int line) noexcept {
  // At process exit the runtime may already be gone; that is not worth a line.
  if (code == cudaErrorCudartUnloading) return;
  std::fprintf(stderr, "gpu_bench: warning: %s\n", describe(code, expr, file, line).c_str());
}

std::string format_bytes(unsigned long long bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", bytes);
  else
    std::snprintf(buf, sizeof buf, "%.4g %s", v, units[u]);
  return buf;
}

}  // namespace gpu_bench
