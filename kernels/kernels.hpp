#pragma once
// Plain host launchers for the project's kernels. Nothing here knows of Google Benchmark; each launcher
// checks its launch and throws gpu_bench::cuda_error.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpu_bench::kernels {

// SM-driven copy of `bytes` (a multiple of 4) between any two addresses the GPU can reach: device memory,
// mapped host memory, managed memory. 16-byte accesses where both ends allow it.
void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

// Two SM-driven copies of `bytes` each at once, in one launch: half the blocks copy src0 to dst0, the other
// half src1 to dst1, and the grid is no larger than what the GPU holds resident at once (a larger grid
// would run its first half before its second: one direction after the other). Each half writes the
// globaltimer span of its work into spans_ns[2 * half] (start) and [2 * half + 1] (end), which
// reset_spans must have set to (max, 0) before.
void copy_two_ways(void* dst0, const void* src0, void* dst1, const void* src1, std::size_t bytes,
                   unsigned long long* spans_ns, cudaStream_t stream);
void reset_spans(unsigned long long* spans_ns, int count, cudaStream_t stream);

// `count` copies of `bytes` (a multiple of 4) each, copy i from srcs[i] to dsts[i], in one launch: the
// pointer arrays live in device memory, the addresses anywhere the GPU can reach (mapped host memory too).
void scatter_copy(const void* const* srcs, void* const* dsts, std::size_t bytes, std::size_t count,
                  cudaStream_t stream);

// The most destinations copy_to_many takes in one launch.
constexpr int kMaxCopyDestinations = 16;

// One source copied to `count` destinations (at most kMaxCopyDestinations) in one launch, `bytes` (a
// multiple of 16, every address 16-byte aligned) to each: the grid is one wave, split evenly between the
// destinations, so every destination is written at once. An all-to-all pushed by SMs, one kernel per GPU.
void copy_to_many(void* const* dsts, int count, const void* src, std::size_t bytes, cudaStream_t stream);

void fill_pattern(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);
void fill_poison(void* dst, std::size_t bytes, std::uint32_t seed, cudaStream_t stream);
// Adds the number of words of `src` that differ from the pattern to *count (device-visible memory).
void count_mismatches(const void* src, std::size_t bytes, std::uint32_t seed, unsigned long long* count,
                      cudaStream_t stream);

// One thread that holds `stream` until *flag becomes non-zero, or sets *timed_out after `timeout_ns`.
void gate_spin(const volatile int* flag, int* timed_out, unsigned long long timeout_ns, cudaStream_t stream);

}  // namespace gpu_bench::kernels

namespace gpu_bench::kernels {

// Overlap's kernel: a[i] += sum over k < work of sqrt(sin^2(x) + cos^2(x)),
// x = float(offset + i + k), for i in [0, n). Each term is 1 up to rounding, so a[i] grows by `work`.
void sincos_work(float* a, std::size_t offset, std::size_t n, int work, cudaStream_t stream);

// max |out[i] - in[i] - expected_add| over i < n, as the bit pattern of a non-negative float in *max_bits
// (NaN counts as the largest error). `in` and `out` must be GPU-addressable.
void max_add_error(const float* in, const float* out, std::size_t n, float expected_add, unsigned* max_bits,
                   cudaStream_t stream);

}  // namespace gpu_bench::kernels

namespace gpu_bench::kernels {

// c = a + b over n floats, one thread per element in blocks of 1024 (the timing experiment's kernel).
void add(float* c, const float* a, const float* b, std::size_t n, cudaStream_t stream);

// The three steps of normalising an array in place (a /= sum(a)): a block-wise partial sum into
// `partial` (`blocks` floats), one thread summing those into *sum, and the division.
void partial_reduce(const float* a, std::size_t n, float* partial, int blocks, cudaStream_t stream);
void single_thread_sum(const float* partial, int count, float* sum, cudaStream_t stream);
void divide_by(float* a, std::size_t n, const float* sum, int blocks, cudaStream_t stream);

// `blocks` blocks of `threads` threads that each stay resident for `ns` nanoseconds; block b sets
// marks[b] = stamp when it is done (so a test can see every block ran).
void busy(int blocks, int threads, unsigned long long ns, unsigned* marks, unsigned stamp, cudaStream_t stream);

// A kernel that does nothing: the launch itself is what is measured.
void empty(cudaStream_t stream);

}  // namespace gpu_bench::kernels

namespace gpu_bench::kernels {

// Latency's chase: one thread loads p = *p `loads` times from p = *cursor, then stores p back in *cursor
// (device memory), so the next launch goes on from there. uncached: every load is ld.global.cv, fetched from
// the memory itself whatever a cache holds (host and managed memory: each load crosses the link).
void chase(void** cursor, std::uint64_t loads, bool uncached, cudaStream_t stream);

// Writes the cycle into `lines` lines of `line_bytes` (a multiple of 8) from `base` (a GPU address): line i's
// first 8 bytes get the GPU address of line next[i], the rest of the line zeros. `next` is in device memory.
void write_cycle(void* base, const std::uint32_t* next, std::size_t lines, std::size_t line_bytes, cudaStream_t stream);

// Adds to *count the lines i = 0, step, 2 step, ... whose first 8 bytes are not the GPU address of line
// next[i] (each read from the memory itself).
void count_cycle_mismatches(const void* base, const std::uint32_t* next, std::size_t lines, std::size_t line_bytes,
                            std::size_t step, unsigned long long* count, cudaStream_t stream);

}  // namespace gpu_bench::kernels
