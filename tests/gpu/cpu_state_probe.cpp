// Do a host's CPUs differ in speed at one moment, and does that change over time? For every CPU this process
// may use, pinned there in turn: what one steady-clock read costs (the median over batches of reads) and how
// fast a 64 MiB memcpy runs between two touched buffers. One JSON object a line:
// {"t_s", "cpu", "clock_read_ns", "memcpy_gbps"}. usage: cpu_state_probe [SECONDS] [PERIOD_S]
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {
using clock_type = std::chrono::steady_clock;

double clock_read_ns() {
  std::vector<double> per_read;
  for (int b = 0; b < 11; ++b) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < 999; ++i) (void)clock_type::now();
    per_read.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / 1000);
  }
  std::sort(per_read.begin(), per_read.end());
  return per_read[5];
}

double memcpy_gbps(std::vector<char>& a, std::vector<char>& b) {
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = clock_type::now();
    std::memcpy(b.data(), a.data(), a.size());
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    best = std::max(best, a.size() / s / 1e9);
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 60;
  const double period = argc > 2 ? std::atof(argv[2]) : 5;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  std::vector<char> a(64u << 20, 1), b(64u << 20, 2);
  const auto start = clock_type::now();
  while (std::chrono::duration<double>(clock_type::now() - start).count() < seconds) {
    const double t = std::chrono::duration<double>(clock_type::now() - start).count();
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (!CPU_ISSET(c, &allowed)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      if (sched_setaffinity(0, sizeof one, &one) != 0) return 1;
      const double ns = clock_read_ns();
      const double gbps = memcpy_gbps(a, b);
      std::printf("{\"t_s\": %.1f, \"cpu\": %d, \"clock_read_ns\": %.1f, \"memcpy_gbps\": %.2f}\n", t, c, ns, gbps);
    }
    std::fflush(stdout);
    sched_setaffinity(0, sizeof allowed, &allowed);
    std::this_thread::sleep_for(std::chrono::duration<double>(period));
  }
}
