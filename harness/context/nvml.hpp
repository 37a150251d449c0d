#pragma once
// What only NVML knows: the driver's version string, PCIe link state, clocks, ECC mode, NVLinks, power and
// temperature and their limits, link error counters. NVML is loaded at run time, so the binary starts where
// there is no driver; every fact it cannot read stays empty. What the NVLink and error counter answers mean
// (read_nvlinks, pair_nvlinks, read_link_errors) is pure, and tested on made-up answers.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/context/context_format.hpp"
#include "harness/context/topology.hpp"

namespace gpu_bench {

// The field ids gpu_bench asks nvmlDeviceGetFieldValues for, as nvml.h defines them (nvml.cpp checks them
// against the header it is built with).
inline constexpr unsigned kNvmlFieldNvlinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: MB/s
inline constexpr unsigned kNvmlFieldNvlinkLinkCount = 91;    // NVML_FI_DEV_NVLINK_LINK_COUNT
inline constexpr unsigned kNvmlFieldNvlinkSpeed = 164;       // NVML_FI_DEV_NVLINK_GET_SPEED: MB/s, scope the link
// Each NVLink error counter's total over the GPU's links, one field each: NVML_FI_DEV_NVLINK_CRC_FLIT_,
// _CRC_DATA_, _REPLAY_ and _RECOVERY_ERROR_COUNT_TOTAL.
inline constexpr unsigned kNvmlFieldNvlinkCrcFlitTotal = 38;
inline constexpr unsigned kNvmlFieldNvlinkCrcDataTotal = 45;
inline constexpr unsigned kNvmlFieldNvlinkReplayTotal = 52;
inline constexpr unsigned kNvmlFieldNvlinkRecoveryTotal = 59;

// What an NVLink ends at (nvmlDeviceGetNvLinkRemoteDeviceType).
enum class nvlink_end { gpu, nvswitch, other, unknown };

// NVML's answers about one GPU's NVLinks, link by link: an interface, so that what gpu_bench makes of them is
// tested on a table of made-up answers. nvml.cpp answers from the driver.
class nvlink_source {
 public:
  virtual ~nvlink_source() = default;
  // nvmlDeviceGetNvLinkState: up (NVML_FEATURE_ENABLED), down, absent (NVML_ERROR_NOT_SUPPORTED or
  // NVML_ERROR_INVALID_ARGUMENT: the device has no such link), unanswered (any other error).
  enum class state { up, down, absent, unanswered };
  virtual unsigned max_links() const = 0;  // NVML_NVLINK_MAX_LINKS
  virtual state link_state(unsigned link) const = 0;
  // nvmlDeviceGetNvLinkRemotePciInfo_v2's busId, as NVML spells it; nullopt where unanswered.
  virtual std::optional<std::string> remote_bus(unsigned link) const = 0;
  // nvmlDeviceGetNvLinkRemoteDeviceType; nullopt where unanswered.
  virtual std::optional<nvlink_end> remote_end(unsigned link) const = 0;
  // nvmlDeviceGetFieldValues of one field at one scope (a link, or 0); nullopt where NVML gave no value.
  virtual std::optional<unsigned long long> field(unsigned id, unsigned scope) const = 0;
};

// One NVLink that is up.
struct nvlink_link {
  unsigned index = 0;
  std::optional<double> gbps;  // one direction: NVML's link speed in MB/s / 1000, as nvidia-smi nvlink -s prints it
  nvlink_end end = nvlink_end::unknown;
  std::string remote_bus;  // sysfs form (0000:1b:00.0); empty where unanswered
};

// One GPU's NVLinks.
struct nvlink_facts {
  std::optional<unsigned> up;      // links up; 0 without NVLink; nullopt where a link's state went unanswered
  std::vector<nvlink_link> links;  // every link up
  // The rate of one link, one direction: the links' own where they agree, else NVML's common speed.
  std::optional<double> link_gbps;
  std::optional<double> gbps;  // one direction over every link up; 0 without NVLink
};

// Asks `nvml` about links 0 to NVML_FI_DEV_NVLINK_LINK_COUNT - 1 (NVML_NVLINK_MAX_LINKS - 1 where it does not
// say), at most max_links(). A link's speed is NVML_FI_DEV_NVLINK_GET_SPEED of it, else
// NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON; nothing is read where NVML gave no answer.
nvlink_facts read_nvlinks(const nvlink_source& nvml);

// How many NVLinks join GPU a to GPU b, and their peak per direction: a's links whose far end is b, plus,
// where both GPUs have links that end at NVSwitches, as many as the one with fewer has (a pair behind the
// switches can use each GPU's every switch link), provided NVML says the pair reaches each other over NVLink
// (`p2p_nvlink`: nvmlDeviceGetP2PStatus with NVML_P2P_CAPS_INDEX_NVLINK; nullopt where unanswered). Both
// stay empty where either GPU's links are unread, where a link's far end is unknown (it might be b), or where
// switch links count and NVML gave no P2P answer.
struct nvlink_pair {
  std::optional<unsigned> links;
  std::optional<double> gbps;  // 0 without a link
};
nvlink_pair pair_nvlinks(const nvlink_facts& a, const std::string& a_bus, const nvlink_facts& b,
                         const std::string& b_bus, std::optional<bool> p2p_nvlink);

// Which of a link's error counters: nvmlDeviceGetNvLinkErrorCounter's NVML_NVLINK_ERROR_DL_CRC_FLIT, _CRC_DATA,
// _REPLAY and _RECOVERY.
enum class nvlink_error { crc_flit, crc_data, replay, recovery };

// NVML's answers about one GPU's link error counters: an interface, so that what gpu_bench makes of them is
// tested on made-up answers. nvml.cpp answers from the driver; nullopt where NVML gave no value.
class link_error_source {
 public:
  virtual ~link_error_source() = default;
  virtual std::optional<unsigned long long> pcie_replay() const = 0;  // nvmlDeviceGetPcieReplayCounter
  virtual std::optional<unsigned long long> nvlink_errors(unsigned link, nvlink_error which) const = 0;
  // The counter's total over the GPU's links (kNvmlFieldNvlink*Total): one NVML call where the links take one
  // each, so a case's start and end stay cheap. nullopt where NVML gives no total.
  virtual std::optional<unsigned long long> nvlink_total(nvlink_error) const { return std::nullopt; }
};

// A GPU's link error counters, each as NVML answered it, by name: pcie_replay, then nvlink_crc_flit,
// nvlink_crc_data, nvlink_replay and nvlink_recovery, each NVML's total where it gives one, else summed over
// the GPU's NVLinks that are up. A
// counter NVML did not answer (for one link of them or more) is left out, never written as 0; a GPU without
// NVLink, or whose links' states went unanswered, has no nvlink counters.
using link_error_counts = std::vector<std::pair<std::string, unsigned long long>>;
link_error_counts read_link_errors(const link_error_source& nvml, const nvlink_facts& links);
// The counters as context keys of CUDA's GPU `gpu` at a moment `at` of the run (start, end):
// gpu.<gpu>.errors.<name>.<at>, each a decimal integer.
context_list link_error_context(int gpu, const link_error_counts& counts, const std::string& at);
// NVLink CRC errors a second from which they are a fault: DCGM's limit. The link corrects them by replay,
// and a healthy H200's NVLinks count several a second. The tools judge a run's counters with the same
// (tools/gpu_bench_tools/reading/error_counters.py).
constexpr double kNvlinkCrcFaultPerS = 100;
// How much the counters rose from `start` to `end`, `seconds` apart: each counter's rise, where both read it,
// added. A CRC counter's rise counts only at kNvlinkCrcFaultPerS or more; any rise counts where `seconds`
// is not above 0.
unsigned long long link_errors_rise(const link_error_counts& start, const link_error_counts& end, double seconds = 0);

struct nvml_facts {
  std::optional<std::string> driver_version;
  // NVML's index of the GPU (nvmlDeviceGetIndex): the number nvidia-smi and dcgm-exporter give it, which
  // differs from CUDA's wherever CUDA orders the GPUs otherwise (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER).
  std::optional<unsigned> index;
  std::optional<unsigned> pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
  std::optional<unsigned> clock_sm_max_mhz, memory_clock_max_mhz, memory_bus_width_bits;
  std::optional<bool> ecc;
  std::optional<int> other_processes;  // compute processes on this GPU besides this one
  std::vector<unsigned> other_pids;    // and their process ids
  nvlink_facts nvlink;
  std::optional<bool> c2c;                    // host memory reached over NVLink-C2C (Grace Hopper) rather than PCIe
  std::optional<double> power_limit_w{};      // nvmlDeviceGetEnforcedPowerLimit, mW / 1000
  std::optional<unsigned> temp_slowdown_c{};  // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
  std::optional<unsigned> temp_shutdown_c{};  // NVML_TEMPERATURE_THRESHOLD_SHUTDOWN
  link_error_counts link_errors{};            // as the facts were read: the run's start
};

// Whether NVML answers: the first call loads the library and starts it on every GPU of the machine.
bool nvml_started();

// `pci_bus_id` as CUDA reports it (cudaDeviceGetPCIBusId).
nvml_facts read_nvml_facts(const std::string& pci_bus_id);
// The NVLinks alone, read once per process and GPU (read_nvml_facts's too).
const nvlink_facts& read_nvml_nvlinks(const std::string& pci_bus_id);

// What connects each ordered pair of the GPUs with these bus ids and NVLinks (read_nvml_facts's, in the same
// order): links[i][j] for i != j (the diagonal is left empty). Every field stays empty where NVML cannot
// answer.
std::vector<std::vector<gpu_link>> read_nvml_links(const std::vector<std::string>& pci_bus_ids,
                                                   const std::vector<nvlink_facts>& nvlinks);

// One reading of what changes while a case runs; nullopt fields could not be read.
struct nvml_state {
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned long long> clock_event_reasons;  // NVML's nvmlClocksEventReason* bits
  std::optional<unsigned> pcie_gen, pcie_width;
  // Read only at a case's start and end (`edge`): the board's power draw (nvmlDeviceGetPowerUsage, mW / 1000),
  // the GPU's temperature (NVML_TEMPERATURE_GPU) and the memory clock (NVML_CLOCK_MEM).
  std::optional<double> power_w{};
  std::optional<unsigned> temp_c{};
  std::optional<unsigned> mem_clock_mhz{};
};
// Empty (every field nullopt) where NVML or the device cannot be read. `edge` adds power, temperature and the
// memory clock.
nvml_state read_nvml_state(const std::string& pci_bus_id, bool edge = false);
// The GPU's link error counters now (read_link_errors of the driver's answers); none where NVML cannot
// read the device. Without `nvlink`, pcie_replay alone: reading the NVLink counters took about 35 ms a time
// on an H200 with 18 NVLinks.
link_error_counts read_nvml_link_errors(const std::string& pci_bus_id, bool nvlink = true);

// The reasons that mean the clocks were held down by power or heat (not idling, not a clock setting).
unsigned long long harmful_clock_reasons(unsigned long long reasons);
// "sw_power_cap,hw_thermal_slowdown" for the harmful bits of `reasons`.
std::string describe_clock_reasons(unsigned long long reasons);

}  // namespace gpu_bench
