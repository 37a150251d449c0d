#include <gtest/gtest.h>

#include <map>

#include "fixtures/context/gpu_context.hpp"
#include "fixtures/context/health.hpp"
#include "fixtures/context/nvml.hpp"
#include "fixtures/context/profile.hpp"

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

TEST(Profile, FromTypedFacts) {
  device_facts f;
  f.pci_bus_id = "0000:00:06.0";
  f.l2_bytes = 52428800;
  f.nvml.pcie_gen_max = 5;
  f.nvml.pcie_width_max = 16;
  f.nvml.memory_clock_max_mhz = 2619;
  f.nvml.memory_bus_width_bits = 5120;
  f.nvml.nvlink.up = 0;
  f.nvml.nvlink.gbps = 0.0;
  const device_profile p = profile_from(f);
  EXPECT_EQ(p.pci_bus_id, "0000:00:06.0");
  EXPECT_NEAR(*p.host_link_gbps, 63.0, 0.1);
  EXPECT_EQ(p.host_link_name, "PCIe gen5 x16");
  EXPECT_NEAR(*p.memory_gbps, 3352.3, 0.1);
  EXPECT_EQ(p.l2_bytes, 52428800u);
  const auto c = profile_context(p);
  std::map<std::string, std::string> m(c.begin(), c.end());
  EXPECT_EQ(m.at("profile.host_link"), "PCIe gen5 x16");
  EXPECT_EQ(m.at("profile.host_link_gbps"), "63.0154");
  EXPECT_EQ(m.at("profile.memory_gbps"), "3352.32");
  EXPECT_EQ(m.at("profile.nvlink_gbps"), "none");
  EXPECT_NO_THROW(check_context(c));

  f.nvml.nvlink.up = 18;  // NVML's link speeds, not a table by NVLink version (whose numbering is NVML's own)
  f.nvml.nvlink.gbps = 18 * 26.562;
  EXPECT_DOUBLE_EQ(*profile_from(f).nvlink_gbps, 18 * 26.562);

  device_facts gen4x8 = f;  // a Gen5 x16 card in a Gen4 x8 slot: NVML's maximum is the slot's
  gen4x8.nvml.pcie_gen_max = 4;
  gen4x8.nvml.pcie_width_max = 8;
  EXPECT_NEAR(*profile_from(gen4x8).host_link_gbps, 15.75, 0.01);

  device_facts grace = f;  // host memory over NVLink-C2C
  grace.nvml.c2c = true;
  EXPECT_EQ(profile_from(grace).host_link_name, "NVLink-C2C");
  EXPECT_DOUBLE_EQ(*profile_from(grace).host_link_gbps, 450.0);

  const device_profile u = profile_from(device_facts{});
  EXPECT_FALSE(u.host_link_gbps.has_value());
  EXPECT_FALSE(u.pcie_gen_max.has_value());
  const auto uc = profile_context(u);
  std::map<std::string, std::string> um(uc.begin(), uc.end());
  EXPECT_EQ(um.at("profile.host_link"), "unavailable");
  EXPECT_EQ(um.at("profile.nvlink_gbps"), "unavailable");
}
