#include <gtest/gtest.h>

#include "fixtures/context/context_format.hpp"
#include "fixtures/context/host_facts.hpp"

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

#include "fixtures/context/profile.hpp"

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

TEST(Peak, NvlinkLanes) {
  EXPECT_DOUBLE_EQ(*nvlink_lane_gbps(4), 25.0);
  EXPECT_DOUBLE_EQ(*nvlink_lane_gbps(5), 50.0);
  EXPECT_FALSE(nvlink_lane_gbps(0).has_value());
  EXPECT_FALSE(nvlink_lane_gbps(9).has_value());
}

TEST(Peak, BeyondPeakNamesThePeak) {
  EXPECT_EQ(beyond_peak(55.2, 63.0, "PCIe gen5 x16 peak per direction"), "");
  EXPECT_EQ(beyond_peak(64.0, 63.0, "x"), "");  // within the slack for event timing
  EXPECT_EQ(beyond_peak(70.0, 63.0, "PCIe gen5 x16 peak per direction"),
            "impossible: 70.0 GB/s exceeds the PCIe gen5 x16 peak per direction of 63.0 GB/s");
  EXPECT_EQ(beyond_peak(1e6, std::nullopt, "x"), "");  // nothing known: nothing judged
}

#include <map>

#include "fixtures/context/gpu_context.hpp"
#include "fixtures/context/topology.hpp"

TEST(PerGpuFacts, FirstGpuFormKeyedUnderTheIndex) {
  const context_list c = indexed_gpu_facts(
      5,
      {{"gpu.pcie_gen_max", "4"}, {"profile.host_link", "PCIe gen4 x8"}, {"host.cpu", "X"}, {"driver.version", "1"}});
  const context_list want = {{"gpu.5.pcie_gen_max", "4"}, {"gpu.5.profile.host_link", "PCIe gen4 x8"}};
  EXPECT_EQ(c, want);
}

TEST(PerGpuFacts, EachGpuItsOwnLinkPeaksClocksAndHealth) {
  // GPU 5 of a node: a Gen5 x16 card in a Gen4 x8 slot, its link idling at Gen1.
  device_facts f;
  f.device = 5;
  f.name = "NVIDIA H100 80GB HBM3";
  f.uuid = "GPU-00000000-0000-0000-0000-000000000005";
  f.pci_bus_id = "0000:e5:00.0";
  f.l2_bytes = 52428800;
  f.nvml.pcie_gen = 1;
  f.nvml.pcie_gen_max = 4;
  f.nvml.pcie_width = 8;
  f.nvml.pcie_width_max = 8;
  f.nvml.clock_sm_max_mhz = 1980;
  f.nvml.memory_clock_max_mhz = 2619;
  f.nvml.memory_bus_width_bits = 5120;
  f.nvml.other_processes = 0;
  f.nvml.nvlinks_active = 0;
  const context_list c = per_gpu_context(f);
  EXPECT_NO_THROW(check_context(c));
  const std::map<std::string, std::string> m(c.begin(), c.end());
  EXPECT_EQ(m.at("gpu.5.pcie_gen"), "1");
  EXPECT_EQ(m.at("gpu.5.pcie_gen_max"), "4");
  EXPECT_EQ(m.at("gpu.5.pcie_width_max"), "8");
  EXPECT_EQ(m.at("gpu.5.profile.host_link"), "PCIe gen4 x8");
  EXPECT_EQ(m.at("gpu.5.profile.host_link_gbps"), "15.7538");
  EXPECT_EQ(m.at("gpu.5.profile.memory_gbps"), "3352.32");
  EXPECT_EQ(m.at("gpu.5.profile.nvlink_gbps"), "none");
  EXPECT_EQ(m.at("gpu.5.clock_sm_mhz"), "1980");
  EXPECT_EQ(m.at("gpu.5.other_processes"), "0");
  EXPECT_EQ(m.count("gpu.5.ecc"), 1u);
  EXPECT_EQ(m.count("gpu.5.local_cpus"), 1u);  // `unavailable` on a machine without that bus
  // The identity is written with the topology (gpu.N.name, ...), once.
  EXPECT_EQ(m.count("gpu.5.name"), 0u);
  EXPECT_EQ(m.count("gpu.5.uuid"), 0u);
  for (const auto& [key, value] : c) EXPECT_EQ(key.rfind("gpu.5.", 0), 0u) << key;
}

TEST(HostFacts, LocalCpusOfAnAbsentDeviceAreUnavailable) {
  EXPECT_EQ(gpu_local_cpus("fffe:ab:1f.7"), "unavailable");
}
