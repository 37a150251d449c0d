#include <gtest/gtest.h>

#include "fixtures/health.hpp"
#include "fixtures/nvml.hpp"

using namespace gpu_bench;

TEST(Health, SummaryFoldsReadings) {
  health_summary s;
  add_reading(s, nvml_state{});  // nothing readable: not a sample
  EXPECT_EQ(s.samples, 0);
  add_reading(s, nvml_state{1980u, 0x1ull, 5u, 16u});  // idle is not harmful
  add_reading(s, nvml_state{1500u, 0x4ull, 4u, 16u});  // power cap, link at gen4
  EXPECT_EQ(s.samples, 2);
  EXPECT_DOUBLE_EQ(s.sm_clock_mean_mhz, 1740.0);
  EXPECT_EQ(s.sm_clock_min_mhz, 1500u);
  EXPECT_EQ(s.harmful_reasons, 0x4ull);
  EXPECT_EQ(*s.pcie_gen_min, 4u);
  EXPECT_EQ(describe_clock_reasons(0x4 | 0x40 | 0x1), "sw_power_cap,hw_thermal_slowdown");
  EXPECT_EQ(harmful_clock_reasons(0x1 | 0x2), 0u);
}

TEST(Health, TargetFromContext) {
  const health_target t = health_target_from_context({{"gpu.pci_bus_id", "0000:00:06.0"},
                                                      {"gpu.pcie_gen_max", "5"},
                                                      {"gpu.pcie_width_max", "16"},
                                                      {"gpu.memory_clock_mhz", "2619"},
                                                      {"gpu.memory_bus_width_bits", "5120"},
                                                      {"gpu.l2_bytes", "52428800"}});
  EXPECT_EQ(t.pci_bus_id, "0000:00:06.0");
  EXPECT_NEAR(*t.limits.host_link_gbps, 63.0, 0.1);
  EXPECT_EQ(t.limits.host_link_name, "PCIe gen5 x16");
  EXPECT_NEAR(*t.limits.memory_gbps, 3352.3, 0.1);
  EXPECT_EQ(t.limits.l2_bytes, 52428800u);
  const health_target u = health_target_from_context({{"gpu.pcie_gen_max", "unavailable"}});
  EXPECT_FALSE(u.limits.host_link_gbps.has_value());
  EXPECT_FALSE(u.pcie_gen_max.has_value());
}
