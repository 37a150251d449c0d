#pragma once
// Holds a stream for `ns` nanoseconds of the GPU's global timer: the bare test programs queue their timed
// copies behind it, so no host gap falls between a pair of events.
__global__ inline void hold(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
