// NVML asked through libnvidia-ml, loaded at run time, so a machine without it still runs. What its answers
// mean is nvml_answers.cpp's.
#include "harness/context/nvml.hpp"

#if defined(GPU_BENCH_HAVE_NVML)
#include <dlfcn.h>
#include <nvml.h>
#include <unistd.h>

#include <map>
#include <mutex>

#endif

namespace gpu_bench {

#if defined(GPU_BENCH_HAVE_NVML)
namespace {

struct nvml_api {
  void* lib = nullptr;
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlSystemGetDriverVersion) driver_version = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_bus_id = nullptr;
  decltype(&nvmlDeviceGetIndex) index = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkGeneration) gen = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkGeneration) gen_max = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkWidth) width = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkWidth) width_max = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock = nullptr;
  decltype(&nvmlDeviceGetEccMode) ecc = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) reasons = nullptr;
  decltype(&nvmlDeviceGetMemoryBusWidth) bus_width = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) processes = nullptr;
  decltype(&nvmlDeviceGetTopologyCommonAncestor) common_ancestor = nullptr;
  decltype(&nvmlDeviceGetP2PStatus) p2p_status = nullptr;
  decltype(&nvmlDeviceGetNvLinkState) nvlink_state = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemotePciInfo_v2) nvlink_remote = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemoteDeviceType) nvlink_remote_type = nullptr;
  decltype(&nvmlDeviceGetFieldValues) field_values = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlDeviceGetEnforcedPowerLimit) power_limit = nullptr;
  // nvmlDeviceGetTemperature's own type, spelt out: CUDA 13's nvml.h marks the function deprecated (in favour
  // of nvmlDeviceGetTemperatureV, which older drivers lack), and naming it would fail a -Werror build.
  nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
  decltype(&nvmlDeviceGetTemperatureThreshold) temperature_threshold = nullptr;
  decltype(&nvmlDeviceGetPcieReplayCounter) pcie_replay = nullptr;
  decltype(&nvmlDeviceGetNvLinkErrorCounter) nvlink_errors = nullptr;
  // Declared here rather than taken from nvml.h, whose older releases lack it: one unsigned, isC2cEnabled.
  nvmlReturn_t (*c2c_mode)(nvmlDevice_t, unsigned int*) = nullptr;
  bool ok = false;
};

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

const nvml_api& api() {
  static const nvml_api a = [] {
    nvml_api x;
    x.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!x.lib) return x;
    bind(x.lib, x.init, "nvmlInit_v2");
    bind(x.lib, x.driver_version, "nvmlSystemGetDriverVersion");
    bind(x.lib, x.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(x.lib, x.index, "nvmlDeviceGetIndex");
    bind(x.lib, x.gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    bind(x.lib, x.gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
    bind(x.lib, x.width, "nvmlDeviceGetCurrPcieLinkWidth");
    bind(x.lib, x.width_max, "nvmlDeviceGetMaxPcieLinkWidth");
    bind(x.lib, x.max_clock, "nvmlDeviceGetMaxClockInfo");
    bind(x.lib, x.ecc, "nvmlDeviceGetEccMode");
    bind(x.lib, x.clock, "nvmlDeviceGetClockInfo");
    bind(x.lib, x.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    bind(x.lib, x.bus_width, "nvmlDeviceGetMemoryBusWidth");
    bind(x.lib, x.processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    bind(x.lib, x.common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
    bind(x.lib, x.p2p_status, "nvmlDeviceGetP2PStatus");
    bind(x.lib, x.nvlink_state, "nvmlDeviceGetNvLinkState");
    bind(x.lib, x.nvlink_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    bind(x.lib, x.nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    bind(x.lib, x.field_values, "nvmlDeviceGetFieldValues");
    bind(x.lib, x.power, "nvmlDeviceGetPowerUsage");
    bind(x.lib, x.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    bind(x.lib, x.temperature, "nvmlDeviceGetTemperature");
    bind(x.lib, x.temperature_threshold, "nvmlDeviceGetTemperatureThreshold");
    bind(x.lib, x.pcie_replay, "nvmlDeviceGetPcieReplayCounter");
    bind(x.lib, x.nvlink_errors, "nvmlDeviceGetNvLinkErrorCounter");
    bind(x.lib, x.c2c_mode, "nvmlDeviceGetC2cModeInfoV");
    x.ok = x.init && x.by_bus_id && x.init() == NVML_SUCCESS;
    return x;
  }();
  return a;
}

template <class F, class... Args>
std::optional<unsigned> read_uint(F f, nvmlDevice_t dev, Args... args) {
  unsigned int v = 0;
  if (f && f(dev, args..., &v) == NVML_SUCCESS) return v;
  return std::nullopt;
}

static_assert(kNvmlFieldNvlinkSpeedCommon == NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON);
static_assert(kNvmlFieldNvlinkLinkCount == NVML_FI_DEV_NVLINK_LINK_COUNT);
static_assert(kNvmlFieldNvlinkSpeed == NVML_FI_DEV_NVLINK_GET_SPEED);
static_assert(kNvmlFieldNvlinkCrcFlitTotal == NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL);
static_assert(kNvmlFieldNvlinkCrcDataTotal == NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL);
static_assert(kNvmlFieldNvlinkReplayTotal == NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL);
static_assert(kNvmlFieldNvlinkRecoveryTotal == NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL);

// The driver's answers about one device's NVLinks.
// One field of nvmlDeviceGetFieldValues as a count; nullopt where NVML gives none or a negative one.
std::optional<unsigned long long> field_value(const nvml_api& a, nvmlDevice_t dev, unsigned id, unsigned scope) {
  if (!a.field_values) return std::nullopt;
  nvmlFieldValue_t v{};
  v.fieldId = id;
  v.scopeId = scope;
  if (a.field_values(dev, 1, &v) != NVML_SUCCESS || v.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  switch (v.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return v.value.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return v.value.ullVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      if (v.value.sllVal >= 0) return static_cast<unsigned long long>(v.value.sllVal);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

class driver_nvlinks final : public nvlink_source {
 public:
  driver_nvlinks(const nvml_api& a, nvmlDevice_t dev) : a_(a), dev_(dev) {}
  unsigned max_links() const override { return NVML_NVLINK_MAX_LINKS; }
  state link_state(unsigned link) const override {
    if (!a_.nvlink_state) return state::unanswered;
    nvmlEnableState_t on{};
    switch (a_.nvlink_state(dev_, link, &on)) {
      case NVML_SUCCESS:
        return on == NVML_FEATURE_ENABLED ? state::up : state::down;
      case NVML_ERROR_NOT_SUPPORTED:
      case NVML_ERROR_INVALID_ARGUMENT:
        return state::absent;
      default:
        return state::unanswered;
    }
  }
  std::optional<std::string> remote_bus(unsigned link) const override {
    nvmlPciInfo_t pci{};
    if (!a_.nvlink_remote || a_.nvlink_remote(dev_, link, &pci) != NVML_SUCCESS) return std::nullopt;
    return std::string(pci.busId);
  }
  std::optional<nvlink_end> remote_end(unsigned link) const override {
    nvmlIntNvLinkDeviceType_t type{};
    if (!a_.nvlink_remote_type || a_.nvlink_remote_type(dev_, link, &type) != NVML_SUCCESS) return std::nullopt;
    switch (type) {
      case NVML_NVLINK_DEVICE_TYPE_GPU:
        return nvlink_end::gpu;
      case NVML_NVLINK_DEVICE_TYPE_SWITCH:
        return nvlink_end::nvswitch;
      case NVML_NVLINK_DEVICE_TYPE_UNKNOWN:
        return nvlink_end::unknown;
      default:
        return nvlink_end::other;
    }
  }
  std::optional<unsigned long long> field(unsigned id, unsigned scope) const override {
    return field_value(a_, dev_, id, scope);
  }

 private:
  const nvml_api& a_;
  nvmlDevice_t dev_;
};

// The driver's answers about one device's link error counters.
class driver_link_errors final : public link_error_source {
 public:
  driver_link_errors(const nvml_api& a, nvmlDevice_t dev) : a_(a), dev_(dev) {}
  std::optional<unsigned long long> pcie_replay() const override {
    if (const auto v = read_uint(a_.pcie_replay, dev_)) return *v;
    return std::nullopt;
  }
  std::optional<unsigned long long> nvlink_errors(unsigned link, nvlink_error which) const override {
    nvmlNvLinkErrorCounter_t counter{};
    switch (which) {
      case nvlink_error::crc_flit:
        counter = NVML_NVLINK_ERROR_DL_CRC_FLIT;
        break;
      case nvlink_error::crc_data:
        counter = NVML_NVLINK_ERROR_DL_CRC_DATA;
        break;
      case nvlink_error::replay:
        counter = NVML_NVLINK_ERROR_DL_REPLAY;
        break;
      case nvlink_error::recovery:
        counter = NVML_NVLINK_ERROR_DL_RECOVERY;
        break;
    }
    unsigned long long v = 0;
    if (!a_.nvlink_errors || a_.nvlink_errors(dev_, link, counter, &v) != NVML_SUCCESS) return std::nullopt;
    return v;
  }
  std::optional<unsigned long long> nvlink_total(nvlink_error which) const override {
    switch (which) {
      case nvlink_error::crc_flit:
        return field_value(a_, dev_, kNvmlFieldNvlinkCrcFlitTotal, 0);
      case nvlink_error::crc_data:
        return field_value(a_, dev_, kNvmlFieldNvlinkCrcDataTotal, 0);
      case nvlink_error::replay:
        return field_value(a_, dev_, kNvmlFieldNvlinkReplayTotal, 0);
      case nvlink_error::recovery:
        return field_value(a_, dev_, kNvmlFieldNvlinkRecoveryTotal, 0);
    }
    return std::nullopt;
  }

 private:
  const nvml_api& a_;
  nvmlDevice_t dev_;
};

// mW, as NVML gives power, in W.
std::optional<double> watts(const std::optional<unsigned>& milliwatts) {
  if (!milliwatts) return std::nullopt;
  return *milliwatts / 1000.0;
}

}  // namespace

bool nvml_started() {
  return api().ok;
}

nvml_facts read_nvml_facts(const std::string& pci_bus_id) {
  nvml_facts f;
  const nvml_api& a = api();
  if (!a.ok) return f;
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (a.driver_version && a.driver_version(buf, sizeof buf) == NVML_SUCCESS) f.driver_version = buf;
  nvmlDevice_t dev{};
  if (a.by_bus_id(pci_bus_id.c_str(), &dev) != NVML_SUCCESS) return f;
  f.index = read_uint(a.index, dev);
  f.pcie_gen = read_uint(a.gen, dev);
  f.pcie_gen_max = read_uint(a.gen_max, dev);
  f.pcie_width = read_uint(a.width, dev);
  f.pcie_width_max = read_uint(a.width_max, dev);
  f.clock_sm_max_mhz = read_uint(a.max_clock, dev, NVML_CLOCK_SM);
  nvmlEnableState_t current{}, pending{};
  if (a.ecc && a.ecc(dev, &current, &pending) == NVML_SUCCESS) f.ecc = current == NVML_FEATURE_ENABLED;
  f.memory_clock_max_mhz = read_uint(a.max_clock, dev, NVML_CLOCK_MEM);
  f.memory_bus_width_bits = read_uint(a.bus_width, dev);
  if (a.processes) {
    unsigned int count = 64;
    std::vector<nvmlProcessInfo_t> infos(count);
    if (a.processes(dev, &count, infos.data()) == NVML_SUCCESS) {
      for (unsigned int i = 0; i < count; ++i)
        if (infos[i].pid != static_cast<unsigned int>(getpid())) f.other_pids.push_back(infos[i].pid);
      f.other_processes = static_cast<int>(f.other_pids.size());
    }
  }
  f.nvlink = read_nvml_nvlinks(pci_bus_id);
  unsigned int c2c_enabled = 0;
  if (a.c2c_mode && a.c2c_mode(dev, &c2c_enabled) == NVML_SUCCESS) f.c2c = c2c_enabled != 0;
  f.power_limit_w = watts(read_uint(a.power_limit, dev));
  f.temp_slowdown_c = read_uint(a.temperature_threshold, dev, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
  f.temp_shutdown_c = read_uint(a.temperature_threshold, dev, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
  f.link_errors = read_link_errors(driver_link_errors(a, dev), f.nvlink);
  return f;
}

const nvlink_facts& read_nvml_nvlinks(const std::string& pci_bus_id) {
  static std::map<std::string, nvlink_facts> read;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (const auto it = read.find(pci_bus_id); it != read.end()) return it->second;
  nvlink_facts& f = read[pci_bus_id];
  const nvml_api& a = api();
  nvmlDevice_t dev{};
  if (a.ok && a.by_bus_id(pci_bus_id.c_str(), &dev) == NVML_SUCCESS) f = read_nvlinks(driver_nvlinks(a, dev));
  return f;
}

std::vector<std::vector<gpu_link>> read_nvml_links(const std::vector<std::string>& pci_bus_ids,
                                                   const std::vector<nvlink_facts>& nvlinks) {
  const std::size_t n = pci_bus_ids.size();
  std::vector<std::vector<gpu_link>> links(n, std::vector<gpu_link>(n));
  const nvml_api& a = api();
  if (!a.ok || nvlinks.size() != n) return links;
  std::vector<std::optional<nvmlDevice_t>> devs(n);
  for (std::size_t i = 0; i < n; ++i) {
    nvmlDevice_t d{};
    if (a.by_bus_id(pci_bus_ids[i].c_str(), &d) == NVML_SUCCESS) devs[i] = d;
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j || !devs[i] || !devs[j]) continue;
      gpu_link& l = links[i][j];
      nvmlGpuP2PStatus_t status{};
      std::optional<bool> p2p;
      if (a.p2p_status && a.p2p_status(*devs[i], *devs[j], NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS)
        p2p = status == NVML_P2P_STATUS_OK;
      const nvlink_pair joined = pair_nvlinks(nvlinks[i], pci_bus_ids[i], nvlinks[j], pci_bus_ids[j], p2p);
      l.nvlinks = joined.links;
      l.nvlink_gbps = joined.gbps;
      // A link counted between them, or NVML's own answer, which also covers GPUs joined through NVSwitches
      // whose links it could not follow.
      if ((joined.links && *joined.links > 0) || p2p.value_or(false))
        l.nvlink = true;
      else if (p2p || joined.links)
        l.nvlink = false;
      // The PCIe level names the path only where there is no NVLink (link_name), and walks the PCI tree.
      nvmlGpuTopologyLevel_t level{};
      if (!l.nvlink.value_or(false) && a.common_ancestor &&
          a.common_ancestor(*devs[i], *devs[j], &level) == NVML_SUCCESS)
        l.pcie_level = static_cast<int>(level);
    }
  return links;
}

nvml_state read_nvml_state(const std::string& pci_bus_id, bool edge) {
  nvml_state st;
  const nvml_api& a = api();
  nvmlDevice_t dev{};
  if (!a.ok || a.by_bus_id(pci_bus_id.c_str(), &dev) != NVML_SUCCESS) return st;
  unsigned int v = 0;
  if (a.clock && a.clock(dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) st.sm_clock_mhz = v;
  unsigned long long r = 0;
  if (a.reasons && a.reasons(dev, &r) == NVML_SUCCESS) st.clock_event_reasons = r;
  if (a.gen && a.gen(dev, &v) == NVML_SUCCESS) st.pcie_gen = v;
  if (a.width && a.width(dev, &v) == NVML_SUCCESS) st.pcie_width = v;
  if (edge) {
    st.power_w = watts(read_uint(a.power, dev));
    st.temp_c = read_uint(a.temperature, dev, NVML_TEMPERATURE_GPU);
    st.mem_clock_mhz = read_uint(a.clock, dev, NVML_CLOCK_MEM);
  }
  return st;
}

link_error_counts read_nvml_link_errors(const std::string& pci_bus_id, bool nvlink) {
  const nvml_api& a = api();
  nvmlDevice_t dev{};
  if (!a.ok || a.by_bus_id(pci_bus_id.c_str(), &dev) != NVML_SUCCESS) return {};
  if (!nvlink) return read_link_errors(driver_link_errors(a, dev), nvlink_facts{});
  // The links up are read once per GPU and process: each case reads the counters at its start and end, and
  // reading the links takes several NVML calls per link.
  static std::mutex lock;
  static std::map<std::string, nvlink_facts> links;
  nvlink_facts up;
  {
    std::lock_guard<std::mutex> hold(lock);
    auto it = links.find(pci_bus_id);
    if (it == links.end()) it = links.emplace(pci_bus_id, read_nvml_nvlinks(pci_bus_id)).first;
    up = it->second;
  }
  return read_link_errors(driver_link_errors(a, dev), up);
}

#else

bool nvml_started() {
  return false;
}
nvml_facts read_nvml_facts(const std::string&) {
  return {};
}
const nvlink_facts& read_nvml_nvlinks(const std::string&) {
  static const nvlink_facts none;
  return none;
}
std::vector<std::vector<gpu_link>> read_nvml_links(const std::vector<std::string>& pci_bus_ids,
                                                   const std::vector<nvlink_facts>&) {
  return std::vector<std::vector<gpu_link>>(pci_bus_ids.size(), std::vector<gpu_link>(pci_bus_ids.size()));
}
nvml_state read_nvml_state(const std::string&, bool) {
  return {};
}
link_error_counts read_nvml_link_errors(const std::string&, bool) {
  return {};
}

#endif

}  // namespace gpu_bench
