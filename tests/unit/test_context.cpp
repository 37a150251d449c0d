#include <gtest/gtest.h>

#include "fixtures/context_format.hpp"
#include "fixtures/host_facts.hpp"

using namespace gpu_bench;

TEST(Context, CudaVersions) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(0), "unavailable");
}

TEST(Context, UuidLooksLikeNvidiaSmi) {
  std::array<unsigned char, 16> b{};
  for (unsigned i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(i * 17);
  EXPECT_EQ(format_gpu_uuid(b), "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

TEST(Context, KeysAreDottedLowerCaseAndValuesNonEmpty) {
  EXPECT_NO_THROW(check_context({{"gpu.name", "X"}, {"host.gpu_numa_node", "0"}}));
  EXPECT_THROW(check_context({{"gpu.Name", "X"}}), std::logic_error);
  EXPECT_THROW(check_context({{"gpuname", "X"}}), std::logic_error);
  EXPECT_THROW(check_context({{"gpu.name", ""}}), std::logic_error);
}

TEST(HostFacts, Parsers) {
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags: x\n").value(),
            "AMD EPYC 9654 96-Core Processor");
  EXPECT_FALSE(cpu_model_from_cpuinfo("processor: 0\n").has_value());
  EXPECT_EQ(selected_from_bracketed("always [madvise] never\n").value(), "madvise");
  EXPECT_FALSE(selected_from_bracketed("always madvise never").has_value());
  EXPECT_EQ(sysfs_pci_address("0000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(sysfs_pci_address("00000000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(mem_available_from_meminfo("MemTotal: 100 kB\nMemAvailable:    2048 kB\n").value(), 2048u * 1024u);
  EXPECT_FALSE(mem_available_from_meminfo("MemTotal: 100 kB\n").has_value());
}
