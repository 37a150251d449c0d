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

#include "fixtures/peak.hpp"

TEST(Peak, PcieAndMemory) {
  EXPECT_NEAR(*pcie_peak_gbps(5, 16), 63.015, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(4, 16), 31.51, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(3, 8), 7.877, 0.01);
  EXPECT_NEAR(*pcie_peak_gbps(1, 1), 0.25, 1e-9);
  EXPECT_FALSE(pcie_peak_gbps(0, 16).has_value());
  EXPECT_FALSE(pcie_peak_gbps(5, 0).has_value());
  EXPECT_NEAR(*memory_peak_gbps(2619, 5120), 3352.3, 0.1);  // an H100 SXM's HBM3
  EXPECT_FALSE(memory_peak_gbps(0, 5120).has_value());
}

TEST(Peak, ImpossibleRatesFailAndPossibleOnesPass) {
  peaks p;
  p.host_link_gbps = 63.0;
  p.host_link_name = "PCIe gen5 x16";
  p.memory_gbps = 3352.0;
  p.l2_bytes = 50u << 20;
  EXPECT_EQ(impossible_rate(p, "h2d", 1 << 28, 55.2), "");
  EXPECT_NE(impossible_rate(p, "h2d", 1 << 28, 70.0).find("exceeds the PCIe gen5 x16 peak of 63.0"), std::string::npos);
  EXPECT_EQ(impossible_rate(p, "bidir", 1 << 28, 100.0), "");
  EXPECT_NE(impossible_rate(p, "bidir", 1 << 28, 130.0), "");
  EXPECT_EQ(impossible_rate(p, "d2d", 1u << 30, 1500.0), "");
  EXPECT_NE(impossible_rate(p, "d2d", 1u << 30, 1800.0).find("device memory peak"), std::string::npos);
  EXPECT_EQ(impossible_rate(p, "d2d", 16u << 20, 1800.0), "");   // fits in L2: not judged
  EXPECT_EQ(impossible_rate(peaks{}, "h2d", 1 << 28, 1e6), "");  // nothing known: nothing judged
}
