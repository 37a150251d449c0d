#include <gtest/gtest.h>

#include <algorithm>

#include "harness/context/context_format.hpp"
#include "harness/context/host_facts.hpp"
#include "harness/run/settings_context.hpp"

using namespace gpu_bench;

TEST(Context, CudaVersions) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(0), "unavailable");
}

TEST(Context, StartPhasesAreTheirTotalThenEachInOrder) {
  EXPECT_EQ(start_phases_text({}), "");
  EXPECT_EQ(start_phases_text({{"driver", 0.254}, {"registration", 0.081}, {"device", 0.3}}),
            "0.64 driver=0.25 registration=0.08 device=0.30");
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

TEST(HostFacts, Uptime) {
  EXPECT_DOUBLE_EQ(uptime_from_proc("350735.47 2343889.90\n").value(), 350735.47);
  EXPECT_FALSE(uptime_from_proc("").has_value());
  EXPECT_FALSE(uptime_from_proc("up\n").has_value());
  EXPECT_FALSE(uptime_from_proc("-3 1\n").has_value());
}

#include "harness/context/profile.hpp"

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

#include <map>

#include "harness/context/nvml.hpp"

namespace {
// NVML's answers about one GPU's NVLinks, made up: a link not in `states` is one the device does not have.
struct fake_nvml final : nvlink_source {
  unsigned max = 18;
  std::map<unsigned, state> states;
  std::map<unsigned, std::string> buses;
  std::map<unsigned, nvlink_end> ends;
  std::map<std::pair<unsigned, unsigned>, unsigned long long> fields;  // (field id, scope) -> value

  unsigned max_links() const override { return max; }
  state link_state(unsigned link) const override {
    const auto it = states.find(link);
    return it == states.end() ? state::absent : it->second;
  }
  std::optional<std::string> remote_bus(unsigned link) const override {
    const auto it = buses.find(link);
    return it == buses.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::optional<nvlink_end> remote_end(unsigned link) const override {
    const auto it = ends.find(link);
    return it == ends.end() ? std::nullopt : std::optional<nvlink_end>(it->second);
  }
  std::optional<unsigned long long> field(unsigned id, unsigned scope) const override {
    const auto it = fields.find({id, scope});
    return it == fields.end() ? std::nullopt : std::optional<unsigned long long>(it->second);
  }
};

// A GPU of an HGX H200 board: 18 NVLinks up, each to an NVSwitch, at 26562 MB/s each (nvidia-smi nvlink -s:
// 26.562 GB/s), as NVML of a header with NVML_NVLINK_MAX_LINKS 36 and a driver of 18 links answers.
fake_nvml hgx_gpu(const std::string& switch_bus) {
  fake_nvml g;
  g.max = 36;
  for (unsigned l = 0; l < 18; ++l) {
    g.states[l] = nvlink_source::state::up;
    g.ends[l] = nvlink_end::nvswitch;
    g.buses[l] = switch_bus;
    g.fields[{kNvmlFieldNvlinkSpeed, l}] = 26562;
  }
  g.fields[{kNvmlFieldNvlinkLinkCount, 0}] = 18;
  g.fields[{kNvmlFieldNvlinkSpeedCommon, 0}] = 26562;
  return g;
}
}  // namespace

TEST(Nvlink, SwitchedGpusOfAnHgxBoard) {
  const nvlink_facts a = read_nvlinks(hgx_gpu("00000000:05:00.0"));
  const nvlink_facts b = read_nvlinks(hgx_gpu("00000000:06:00.0"));
  ASSERT_TRUE(a.up.has_value());
  EXPECT_EQ(*a.up, 18u);
  EXPECT_DOUBLE_EQ(*a.link_gbps, 26.562);
  EXPECT_NEAR(*a.gbps, 18 * 26.562, 1e-9);
  EXPECT_EQ(a.links.front().remote_bus, "0000:05:00.0");
  // Behind the switches a pair may use every link of each, one pair at a time: NV18, as nvidia-smi topo -m says.
  const nvlink_pair p = pair_nvlinks(a, "0000:18:00.0", b, "0000:2a:00.0", true);
  EXPECT_EQ(*p.links, 18u);
  EXPECT_NEAR(*p.gbps, 478.116, 1e-9);
  // Switches that do not join them (another NVLink partition): no NVLink between them.
  const nvlink_pair apart = pair_nvlinks(a, "0000:18:00.0", b, "0000:2a:00.0", false);
  EXPECT_EQ(*apart.links, 0u);
  EXPECT_EQ(*apart.gbps, 0.0);
  // Without NVML's word on the pair, switch links say nothing of it.
  const nvlink_pair unsure = pair_nvlinks(a, "0000:18:00.0", b, "0000:2a:00.0", std::nullopt);
  EXPECT_FALSE(unsure.links.has_value());
  EXPECT_FALSE(unsure.gbps.has_value());
}

TEST(Nvlink, LinksStraightToTheOtherGpuAndAGpuWithout) {
  // Two GPUs joined by a bridge of 4 links (NVML answers only the common speed), and one on PCIe alone.
  fake_nvml a, b, pcie;
  for (unsigned l = 0; l < 4; ++l) {
    a.states[l] = b.states[l] = nvlink_source::state::up;
    a.ends[l] = b.ends[l] = nvlink_end::gpu;
    a.buses[l] = "00000000:2A:00.0";  // NVML's spelling of b's bus; CUDA's is 0000:2a:00.0
    b.buses[l] = "00000000:18:00.0";
  }
  a.states[4] = nvlink_source::state::down;
  a.fields[{kNvmlFieldNvlinkSpeedCommon, 0}] = b.fields[{kNvmlFieldNvlinkSpeedCommon, 0}] = 25781;
  const nvlink_facts fa = read_nvlinks(a), fb = read_nvlinks(b), fc = read_nvlinks(pcie);
  EXPECT_EQ(*fa.up, 4u);
  EXPECT_DOUBLE_EQ(*fa.link_gbps, 25.781);
  EXPECT_NEAR(*fa.gbps, 4 * 25.781, 1e-9);
  EXPECT_EQ(*fc.up, 0u);
  EXPECT_EQ(*fc.gbps, 0.0);
  EXPECT_FALSE(fc.link_gbps.has_value());
  const nvlink_pair ab = pair_nvlinks(fa, "0000:18:00.0", fb, "0000:2a:00.0", std::nullopt);
  EXPECT_EQ(*ab.links, 4u);
  EXPECT_NEAR(*ab.gbps, 103.124, 1e-9);
  const nvlink_pair ac = pair_nvlinks(fa, "0000:18:00.0", fc, "0000:3a:00.0", false);
  EXPECT_EQ(*ac.links, 0u);
  EXPECT_EQ(*ac.gbps, 0.0);
}

TEST(Nvlink, WhatNvmlDoesNotAnswerStaysUnread) {
  fake_nvml g = hgx_gpu("00000000:05:00.0");
  g.states[7] = nvlink_source::state::unanswered;  // it may be up
  const nvlink_facts f = read_nvlinks(g);
  EXPECT_FALSE(f.up.has_value());
  EXPECT_FALSE(f.gbps.has_value());
  EXPECT_FALSE(pair_nvlinks(f, "0000:18:00.0", read_nvlinks(hgx_gpu("0")), "0000:2a:00.0", true).links.has_value());
  // No speed from NVML: the links are counted, their rate unread.
  fake_nvml slow = hgx_gpu("00000000:05:00.0");
  slow.fields.clear();
  const nvlink_facts s = read_nvlinks(slow);
  EXPECT_EQ(*s.up, 18u);
  EXPECT_FALSE(s.link_gbps.has_value());
  EXPECT_FALSE(s.gbps.has_value());
  // A link whose far end NVML cannot name may reach the other GPU: the pair is unread.
  fake_nvml lost = hgx_gpu("00000000:05:00.0");
  lost.ends.erase(3);
  lost.buses.erase(3);
  const nvlink_pair p =
      pair_nvlinks(read_nvlinks(lost), "0000:18:00.0", read_nvlinks(hgx_gpu("0")), "0000:2a:00.0", true);
  EXPECT_FALSE(p.links.has_value());
  // Links of different speeds: the GPU's peak is their sum, one link's rate NVML's common speed.
  fake_nvml mixed = hgx_gpu("00000000:05:00.0");
  mixed.fields[{kNvmlFieldNvlinkSpeed, 0}] = 13281;
  const nvlink_facts m = read_nvlinks(mixed);
  EXPECT_NEAR(*m.gbps, 17 * 26.562 + 13.281, 1e-9);
  EXPECT_DOUBLE_EQ(*m.link_gbps, 26.562);
}

namespace {
// NVML's answers about one GPU's link error counters, made up: a (link, counter) not in `nvlink` goes
// unanswered, as does the PCIe replay counter where `replays` is empty.
struct fake_errors final : link_error_source {
  std::optional<unsigned long long> replays;
  std::map<std::pair<unsigned, nvlink_error>, unsigned long long> nvlink;
  std::map<nvlink_error, unsigned long long> totals;  // NVML's totals over the links, where it gives them
  std::optional<unsigned long long> pcie_replay() const override { return replays; }
  std::optional<unsigned long long> nvlink_errors(unsigned link, nvlink_error which) const override {
    const auto it = nvlink.find({link, which});
    return it == nvlink.end() ? std::nullopt : std::optional<unsigned long long>(it->second);
  }
  std::optional<unsigned long long> nvlink_total(nvlink_error which) const override {
    const auto it = totals.find(which);
    return it == totals.end() ? std::nullopt : std::optional<unsigned long long>(it->second);
  }
};

// Every counter of links 0 to 17 answered: link l's CRC flit errors l, CRC data errors 2, replays 0,
// recoveries 1 on link 5 alone.
fake_errors hgx_errors() {
  fake_errors e;
  e.replays = 3;
  for (unsigned l = 0; l < 18; ++l) {
    e.nvlink[{l, nvlink_error::crc_flit}] = l;
    e.nvlink[{l, nvlink_error::crc_data}] = 2;
    e.nvlink[{l, nvlink_error::replay}] = 0;
    e.nvlink[{l, nvlink_error::recovery}] = l == 5 ? 1 : 0;
  }
  return e;
}
}  // namespace

TEST(LinkErrors, EachCounterIsSummedOverTheLinksUp) {
  const nvlink_facts links = read_nvlinks(hgx_gpu("00000000:05:00.0"));
  const link_error_counts want = {{"pcie_replay", 3},
                                  {"nvlink_crc_flit", 153},  // 0 + 1 + ... + 17
                                  {"nvlink_crc_data", 36},
                                  {"nvlink_replay", 0},  // a counter that answered 0 is written as 0
                                  {"nvlink_recovery", 1}};
  EXPECT_EQ(read_link_errors(hgx_errors(), links), want);
  // Links down count for nothing, even where NVML answers for them.
  fake_nvml some = hgx_gpu("00000000:05:00.0");
  for (unsigned l = 9; l < 18; ++l) some.states[l] = nvlink_source::state::down;
  fake_errors e = hgx_errors();
  for (unsigned l = 9; l < 18; ++l) e.nvlink.erase({l, nvlink_error::replay});
  const link_error_counts half = read_link_errors(e, read_nvlinks(some));
  EXPECT_EQ(half.at(1), (std::pair<std::string, unsigned long long>("nvlink_crc_flit", 36)));  // 0 + ... + 8
  EXPECT_EQ(half.at(3), (std::pair<std::string, unsigned long long>("nvlink_replay", 0)));
}

TEST(LinkErrors, ACounterNvmlDoesNotAnswerIsLeftOut) {
  const nvlink_facts links = read_nvlinks(hgx_gpu("00000000:05:00.0"));
  fake_errors e = hgx_errors();
  e.replays.reset();
  e.nvlink.erase({7, nvlink_error::crc_data});  // one link's answer missing: no sum is the GPU's
  for (unsigned l = 0; l < 18; ++l) e.nvlink.erase({l, nvlink_error::recovery});
  const link_error_counts want = {{"nvlink_crc_flit", 153}, {"nvlink_replay", 0}};
  EXPECT_EQ(read_link_errors(e, links), want);
  // A GPU without NVLink has its PCIe counter alone, as has one whose links' states went unanswered.
  fake_nvml pcie;
  EXPECT_EQ(read_link_errors(hgx_errors(), read_nvlinks(pcie)), (link_error_counts{{"pcie_replay", 3}}));
  fake_nvml unread = hgx_gpu("00000000:05:00.0");
  unread.states[7] = nvlink_source::state::unanswered;
  EXPECT_EQ(read_link_errors(hgx_errors(), read_nvlinks(unread)), (link_error_counts{{"pcie_replay", 3}}));
  EXPECT_TRUE(read_link_errors(fake_errors{}, read_nvlinks(pcie)).empty());
}

TEST(LinkErrors, NvmlsTotalIsTakenWhereItGivesOne) {
  // A total answers for its counter in one call; the counters without one are still summed link by link.
  const nvlink_facts links = read_nvlinks(hgx_gpu("00000000:05:00.0"));
  fake_errors e = hgx_errors();
  e.totals[nvlink_error::crc_flit] = 1000;
  e.totals[nvlink_error::replay] = 7;
  const link_error_counts want = {{"pcie_replay", 3},
                                  {"nvlink_crc_flit", 1000},
                                  {"nvlink_crc_data", 36},
                                  {"nvlink_replay", 7},
                                  {"nvlink_recovery", 1}};
  EXPECT_EQ(read_link_errors(e, links), want);
}

TEST(LinkErrors, ContextKeysAndTheirRise) {
  const link_error_counts start = {{"pcie_replay", 3}, {"nvlink_crc_flit", 153}, {"nvlink_replay", 0}};
  const link_error_counts end = {{"pcie_replay", 5}, {"nvlink_crc_flit", 153}, {"nvlink_recovery", 4}};
  const context_list c = link_error_context(2, start, "start");
  const context_list want = {{"gpu.2.errors.pcie_replay.start", "3"},
                             {"gpu.2.errors.nvlink_crc_flit.start", "153"},
                             {"gpu.2.errors.nvlink_replay.start", "0"}};
  EXPECT_EQ(c, want);
  EXPECT_NO_THROW(check_context(c));
  EXPECT_EQ(link_error_context(0, {{"pcie_replay", 18446744073709551615ull}}, "end"),
            (context_list{{"gpu.0.errors.pcie_replay.end", "18446744073709551615"}}));
  // Only counters read at both ends count: pcie_replay rose by 2; recovery was not read at the start.
  EXPECT_EQ(link_errors_rise(start, end), 2u);
  EXPECT_EQ(link_errors_rise(end, start), 0u);  // a counter never falls but by a reset, which is no error
  EXPECT_EQ(link_errors_rise(start, {}), 0u);
}

TEST(LinkErrors, CrcErrorsCountOnlyAtAFaultsRate) {
  // A default run on two NVLinked H200s: nvlink_crc_data rose by 2934 in 343 s, with no replay.
  const link_error_counts start = {{"pcie_replay", 0}, {"nvlink_crc_data", 490}, {"nvlink_replay", 0}};
  const link_error_counts healthy = {{"pcie_replay", 0}, {"nvlink_crc_data", 3424}, {"nvlink_replay", 0}};
  EXPECT_EQ(link_errors_rise(start, healthy, 343.0), 0u);
  EXPECT_EQ(link_errors_rise(start, healthy), 2934u);  // no window: any rise counts
  // 100 a second over a 0.5 s case is a fault, and so is any replay beside it.
  const link_error_counts faulty = {{"pcie_replay", 1}, {"nvlink_crc_data", 540}, {"nvlink_replay", 2}};
  EXPECT_EQ(link_errors_rise(start, faulty, 0.5), 53u);
  const link_error_counts flit = {{"nvlink_crc_flit", 0}};
  EXPECT_EQ(link_errors_rise(flit, {{"nvlink_crc_flit", 49}}, 0.5), 0u);
  EXPECT_EQ(link_errors_rise(flit, {{"nvlink_crc_flit", 50}}, 0.5), 50u);
}

TEST(Peak, BeyondPeakNamesThePeak) {
  EXPECT_EQ(beyond_peak(55.2, 63.0, "PCIe gen5 x16 peak per direction"), "");
  EXPECT_EQ(beyond_peak(64.0, 63.0, "x"), "");  // within the slack for event timing
  EXPECT_EQ(beyond_peak(70.0, 63.0, "PCIe gen5 x16 peak per direction"),
            "impossible: 70.0 GB/s exceeds the PCIe gen5 x16 peak per direction of 63.0 GB/s");
  EXPECT_EQ(beyond_peak(1e6, std::nullopt, "x"), "");  // nothing known: nothing judged
}

#include <map>

#include "harness/context/gpu_context.hpp"
#include "harness/context/topology.hpp"

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
  f.nvml.index = 2;  // CUDA's GPU 5 is NVML's GPU 2 where CUDA orders the GPUs otherwise
  f.nvml.nvlink.up = 0;
  f.nvml.nvlink.gbps = 0.0;
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
  EXPECT_EQ(m.at("gpu.5.nvlinks"), "0");
  EXPECT_EQ(m.at("gpu.5.nvlink_link_gbps"), "none");
  EXPECT_EQ(m.at("gpu.5.clock_sm_mhz"), "1980");
  EXPECT_EQ(m.at("gpu.5.other_processes"), "0");
  EXPECT_EQ(m.at("gpu.5.nvml_index"), "2");
  EXPECT_EQ(m.at("gpu.5.power_limit_w"), "unavailable");  // NVML did not say
  EXPECT_EQ(m.at("gpu.5.temp_shutdown_c"), "unavailable");
  EXPECT_EQ(m.count("gpu.5.errors.pcie_replay.start"), 0u);  // an unread counter is absent, never 0
  EXPECT_EQ(m.count("gpu.5.ecc"), 1u);
  EXPECT_EQ(m.count("gpu.5.local_cpus"), 1u);  // `unavailable` on a machine without that bus
  // The identity is written with the topology (gpu.N.name, ...), once.
  EXPECT_EQ(m.count("gpu.5.name"), 0u);
  EXPECT_EQ(m.count("gpu.5.uuid"), 0u);
  for (const auto& [key, value] : c) EXPECT_EQ(key.rfind("gpu.5.", 0), 0u) << key;
}

TEST(PerGpuFacts, NvlinksAndTheirPeak) {
  device_facts f;
  f.device = 2;
  f.nvml.nvlink = read_nvlinks(hgx_gpu("00000000:05:00.0"));
  f.nvml.power_limit_w = 700.0;
  f.nvml.temp_slowdown_c = 87;
  f.nvml.temp_shutdown_c = 92;
  f.nvml.link_errors = read_link_errors(hgx_errors(), f.nvml.nvlink);
  const context_list c = per_gpu_context(f);
  EXPECT_NO_THROW(check_context(c));
  const std::map<std::string, std::string> m(c.begin(), c.end());
  EXPECT_EQ(m.at("gpu.2.power_limit_w"), "700");
  EXPECT_EQ(m.at("gpu.2.temp_slowdown_c"), "87");
  EXPECT_EQ(m.at("gpu.2.temp_shutdown_c"), "92");
  EXPECT_EQ(m.at("gpu.2.errors.pcie_replay.start"), "3");
  EXPECT_EQ(m.at("gpu.2.errors.nvlink_crc_flit.start"), "153");
  EXPECT_EQ(m.at("gpu.2.errors.nvlink_recovery.start"), "1");
  EXPECT_EQ(m.count("gpu.2.errors.pcie_replay.end"), 0u);  // the run's end writes those
  // The first selected GPU's limits are gpu.* too, as its other facts; its counters are gpu.N.* alone.
  const context_list first = device_context(f);
  const std::map<std::string, std::string> g(first.begin(), first.end());
  EXPECT_EQ(g.at("gpu.power_limit_w"), "700");
  EXPECT_EQ(g.at("gpu.temp_shutdown_c"), "92");
  for (const auto& [key, value] : first) EXPECT_EQ(key.find("errors"), std::string::npos) << key;
  EXPECT_EQ(m.at("gpu.2.nvlinks"), "18");
  EXPECT_EQ(m.at("gpu.2.nvlink_link_gbps"), "26.562");
  EXPECT_EQ(m.at("gpu.2.profile.nvlink_gbps"), "478.116");
  const context_list unread = per_gpu_context(device_facts{});
  const std::map<std::string, std::string> u(unread.begin(), unread.end());
  EXPECT_EQ(u.at("gpu.0.nvlinks"), "unavailable");
  EXPECT_EQ(u.at("gpu.0.nvlink_link_gbps"), "unavailable");
  EXPECT_EQ(u.at("gpu.0.profile.nvlink_gbps"), "unavailable");
  EXPECT_EQ(u.at("gpu.0.nvml_index"), "unavailable");  // never CUDA's index in its place
}

TEST(HostFacts, LocalCpusOfAnAbsentDeviceAreUnavailable) {
  EXPECT_EQ(gpu_local_cpus("fffe:ab:1f.7"), "unavailable");
}

TEST(Context, ARunWithoutAFilterWritesNoFilterFactAndItsSettingsPassTheCheck) {
  options o;
  set_current_options(o);
  const context_list unfiltered = run_settings_context(o, "");
  EXPECT_NO_THROW(check_context(unfiltered));
  for (const auto& [key, value] : unfiltered) EXPECT_NE(key, "gpu_bench.filter");
  const context_list filtered = run_settings_context(o, "^Events/");
  EXPECT_NO_THROW(check_context(filtered));
  EXPECT_NE(std::find(filtered.begin(), filtered.end(),
                      std::make_pair(std::string("gpu_bench.filter"), std::string("^Events/"))),
            filtered.end());
  o.preset = "gate";
  for (const auto& [key, value] : run_settings_context(o, "^Events/")) EXPECT_NE(key, "gpu_bench.filter");
}
