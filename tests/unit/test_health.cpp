#include <gtest/gtest.h>

#include <map>

#include "harness/context/gpu_context.hpp"
#include "harness/context/health.hpp"
#include "harness/context/nvml.hpp"
#include "harness/context/profile.hpp"
#include "harness/run/options.hpp"

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

namespace {
nvml_state edge_reading(unsigned sm, double power, unsigned temp, unsigned mem) {
  nvml_state r;
  r.sm_clock_mhz = sm;
  r.power_w = power;
  r.temp_c = temp;
  r.mem_clock_mhz = mem;
  return r;
}
}  // namespace

TEST(Health, ACasesEdgesAreItsHottestGpusPowerAndTemperatureAndItsFirstGpusClocks) {
  case_edges e;
  // Two GPUs: the second draws more and runs hotter at the start, the first at the end.
  e.start = {edge_reading(1980, 121.5, 35, 2619), edge_reading(1755, 130.25, 38, 2619)};
  e.end = {edge_reading(1980, 480.0, 52, 2619), edge_reading(1410, 301.0, 47, 1593)};
  e.errors_start = {{{"pcie_replay", 3}}, {{"pcie_replay", 0}, {"nvlink_replay", 10}}};
  e.errors_end = e.errors_start;
  const std::map<std::string, double> c = [&] {
    const auto v = edge_counters(e);
    return std::map<std::string, double>(v.begin(), v.end());
  }();
  const std::map<std::string, double> want = {{"power_w_start", 130.25},     {"power_w_end", 480.0},
                                              {"temp_c_start", 38},          {"temp_c_end", 52},
                                              {"sm_clock_mhz_start", 1980},  {"sm_clock_mhz_end", 1980},
                                              {"mem_clock_mhz_start", 2619}, {"mem_clock_mhz_end", 2619}};
  EXPECT_EQ(c, want);  // no link error rose: no link_errors_rose
  // Counters that rose on either GPU: their rises added.
  e.errors_end = {{{"pcie_replay", 4}}, {{"pcie_replay", 0}, {"nvlink_replay", 12}}};
  const auto rose = edge_counters(e);
  EXPECT_EQ(rose.back(), (std::pair<std::string, double>("link_errors_rose", 3.0)));
  // NVLink CRC errors at the rate of a healthy link, 8.6 a second over a 0.5 s case, are no error.
  e.seconds = 0.5;
  e.errors_start = {{{"nvlink_crc_data", 490}}, {{"nvlink_crc_data", 400}}};
  e.errors_end = {{{"nvlink_crc_data", 494}}, {{"nvlink_crc_data", 405}}};
  EXPECT_EQ(edge_counters(e).size(), want.size());
  e.errors_end = {{{"nvlink_crc_data", 540}}, {{"nvlink_crc_data", 405}}};
  EXPECT_EQ(edge_counters(e).back(), (std::pair<std::string, double>("link_errors_rose", 50.0)));
  // What no GPU read is left out; the first GPU's clocks are never another's.
  case_edges partly;
  partly.start = {nvml_state{}, edge_reading(1755, 130.25, 38, 2619)};
  partly.end = {nvml_state{}, nvml_state{}};
  const auto v = edge_counters(partly);
  const std::map<std::string, double> seen(v.begin(), v.end());
  EXPECT_EQ(seen, (std::map<std::string, double>{{"power_w_start", 130.25}, {"temp_c_start", 38}}));
  EXPECT_TRUE(edge_counters(case_edges{}).empty());
}

TEST(Health, ASamplerWithoutEdgesReadsNone) {
  health_sampler quiet({"", ""}, kDefaultHealthPollMs);
  (void)quiet.stop();
  EXPECT_TRUE(quiet.edges().start.empty());
  EXPECT_TRUE(quiet.edges().end.empty());
  // With edges, one reading per GPU at each end, in the case's order, whatever NVML could read.
  health_sampler edged({"", ""}, kDefaultHealthPollMs, true);
  EXPECT_EQ(edged.edges().start.size(), 2u);
  EXPECT_TRUE(edged.edges().end.empty());  // not before the case ends
  (void)edged.stop();
  (void)edged.stop();
  EXPECT_EQ(edged.edges().end.size(), 2u);
  EXPECT_EQ(edged.edges().errors_end.size(), 2u);
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
