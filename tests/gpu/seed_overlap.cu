// The program Overlap's speedups are held to: the copy/compute overlap demo of the seed material (NVIDIA's
// "How to Overlap Data Transfers in CUDA C/C++"), kept as it is (the same kernel, pinned memory, a blocking
// cudaMemcpy baseline on the legacy default stream, "V1" issuing each chunk's copy in, kernel and copy out
// in turn, "V2" all copies in, then all kernels, then all copies out, events on the legacy default stream)
// but for its size and stream count, which come from the command line, and repetitions, interleaved so that
// a load that comes and goes falls on all three alike. Each run's output is checked as the demo checks it
// (every element 1). Prints one JSON object per line, one per stream count:
//   {"streams": S, "bytes": N, "sequential_ms": [...], "v1_ms": [...], "v2_ms": [...], "max_error": E}
// usage: seed_overlap BYTES STREAMS[,STREAMS...] REPETITIONS [DEVICE]
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "tests/gpu/skip_without_gpu.hpp"

namespace {

__global__ void kernel(float* a, int offset) {
  int i = offset + threadIdx.x + blockIdx.x * blockDim.x;
  float x = (float)i;
  float s = sinf(x);
  float c = cosf(x);
  a[i] = a[i] + sqrtf(s * s + c * c);
}

float max_error(const float* a, int n) {
  float worst = 0;
  for (int i = 0; i < n; i++) {
    const float error = std::fabs(a[i] - 1.0f);
    if (!(error <= worst)) worst = std::isnan(error) ? INFINITY : error;
  }
  return worst;
}

std::string join(const std::vector<float>& v) {
  std::ostringstream out;
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: seed_overlap BYTES STREAMS[,STREAMS...] REPETITIONS [DEVICE]\n");
    return 2;
  }
  const int blockSize = 256;
  const long long bytes_arg = std::atoll(argv[1]);
  std::vector<int> stream_counts;
  for (std::stringstream list(argv[2]); list.good();) {
    std::string item;
    std::getline(list, item, ',');
    if (!item.empty()) stream_counts.push_back(std::atoi(item.c_str()));
  }
  const int repetitions = std::atoi(argv[3]);
  const int devId = argc > 4 ? std::atoi(argv[4]) : 0;
  const int n = static_cast<int>(bytes_arg / static_cast<long long>(sizeof(float)));
  for (int nStreams : stream_counts) {
    if (nStreams < 1 || n <= 0 || static_cast<long long>(n) * 4 != bytes_arg || n % (blockSize * nStreams) != 0) {
      std::fprintf(stderr, "seed_overlap: %lld bytes do not split into %d chunks of whole %d-thread blocks\n",
                   bytes_arg, nStreams, blockSize);
      return 2;
    }
  }
  if (repetitions < 1) {
    std::fprintf(stderr, "seed_overlap: at least one repetition\n");
    return 2;
  }
  if (!gpu_bench::test::gpu_visible("seed_overlap")) return gpu_bench::test::kSkipCode;
  try {
    // The demo's byte counts are int, which 512 MiB would overflow: size_t here.
    const std::size_t total = static_cast<std::size_t>(n) * sizeof(float);
    CUDA_CHECK(cudaSetDevice(devId));
    float *a = nullptr, *d_a = nullptr;
    CUDA_CHECK(cudaMallocHost((void**)&a, total));
    CUDA_CHECK(cudaMalloc((void**)&d_a, total));
    cudaEvent_t startEvent, stopEvent;
    CUDA_CHECK(cudaEventCreate(&startEvent));
    CUDA_CHECK(cudaEventCreate(&stopEvent));
    float worst = 0;
    auto timed = [&](auto&& body) {
      std::memset(a, 0, total);
      CUDA_CHECK(cudaEventRecord(startEvent, 0));
      body();
      CUDA_CHECK(cudaEventRecord(stopEvent, 0));
      CUDA_CHECK(cudaEventSynchronize(stopEvent));
      CUDA_CHECK(cudaGetLastError());
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, startEvent, stopEvent));
      const float e = max_error(a, n);
      if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
      return ms;
    };
    for (int nStreams : stream_counts) {
      const int streamSize = n / nStreams;
      const std::size_t streamBytes = static_cast<std::size_t>(streamSize) * sizeof(float);
      std::vector<cudaStream_t> stream(static_cast<std::size_t>(nStreams));
      for (auto& s : stream) CUDA_CHECK(cudaStreamCreate(&s));
      std::vector<float> seq, v1, v2;
      worst = 0;
      // One unreported round of each first: the demo's own first run pays for the context's first use.
      for (int rep = -1; rep < repetitions; ++rep) {
        const float t_seq = timed([&] {
          CUDA_CHECK(cudaMemcpy(d_a, a, total, cudaMemcpyHostToDevice));
          kernel<<<n / blockSize, blockSize>>>(d_a, 0);
          CUDA_CHECK(cudaMemcpy(a, d_a, total, cudaMemcpyDeviceToHost));
        });
        const float t_v1 = timed([&] {
          for (int i = 0; i < nStreams; ++i) {
            const int offset = i * streamSize;
            CUDA_CHECK(cudaMemcpyAsync(&d_a[offset], &a[offset], streamBytes, cudaMemcpyHostToDevice, stream[i]));
            kernel<<<streamSize / blockSize, blockSize, 0, stream[i]>>>(d_a, offset);
            CUDA_CHECK(cudaMemcpyAsync(&a[offset], &d_a[offset], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
          }
        });
        const float t_v2 = timed([&] {
          for (int i = 0; i < nStreams; ++i) {
            const int offset = i * streamSize;
            CUDA_CHECK(cudaMemcpyAsync(&d_a[offset], &a[offset], streamBytes, cudaMemcpyHostToDevice, stream[i]));
          }
          for (int i = 0; i < nStreams; ++i) {
            const int offset = i * streamSize;
            kernel<<<streamSize / blockSize, blockSize, 0, stream[i]>>>(d_a, offset);
          }
          for (int i = 0; i < nStreams; ++i) {
            const int offset = i * streamSize;
            CUDA_CHECK(cudaMemcpyAsync(&a[offset], &d_a[offset], streamBytes, cudaMemcpyDeviceToHost, stream[i]));
          }
        });
        if (rep < 0) continue;
        seq.push_back(t_seq);
        v1.push_back(t_v1);
        v2.push_back(t_v2);
      }
      for (auto& s : stream) CUDA_CHECK(cudaStreamDestroy(s));
      std::printf(
          "{\"streams\": %d, \"bytes\": %zu, \"sequential_ms\": [%s], \"v1_ms\": [%s], \"v2_ms\": [%s], "
          "\"max_error\": %g}\n",
          nStreams, total, join(seq).c_str(), join(v1).c_str(), join(v2).c_str(), static_cast<double>(worst));
      std::fflush(stdout);
      if (!(worst <= 1e-5f)) {
        std::fprintf(stderr, "seed_overlap: max error %g at %d streams: the output is not all 1\n",
                     static_cast<double>(worst), nStreams);
        return 1;
      }
    }
    CUDA_CHECK(cudaEventDestroy(startEvent));
    CUDA_CHECK(cudaEventDestroy(stopEvent));
    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFreeHost(a));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seed_overlap: %s\n", e.what());
    return 1;
  }
  return 0;
}
