#include "harness/run/registry.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "harness/context/health.hpp"
#include "harness/context/profile.hpp"
#include "harness/cuda/check.hpp"
#include "harness/measure/loop.hpp"
#include "harness/memory/cache_policy.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/case_health.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/progress.hpp"
#include "harness/run/thread_cpu.hpp"

namespace gpu_bench {
namespace {
std::vector<std::string>& name_list() {
  static std::vector<std::string> names;
  return names;
}

// The GPUs of each name of name_list(), in the same order.
std::vector<std::vector<int>>& gpu_list() {
  static std::vector<std::vector<int>> gpus;
  return gpus;
}

std::vector<family_descriptor>& family_list() {
  static std::vector<family_descriptor> list;
  return list;
}

// What register_case is registering for: the family, the device of a single-GPU family's cases and
// whether their names say it (device -1: a multi-GPU family).
struct registering {
  const family_descriptor* family = nullptr;
  int device = 0;
  bool name_device = false;
};
registering g_registering;

std::string& running_name() {
  static std::string name;
  return name;
}

// A registered case not yet handed to Google Benchmark, which runs its cases in the order they reach it.
struct held_case {
  std::string name;
  std::function<void(benchmark::State&)> run;
  std::vector<int> gpus;
  round_kind rounds;
  std::function<void(benchmark::internal::Benchmark*)> configure;
};
std::vector<held_case>* g_held = nullptr;  // where register_case holds its cases while register_all_families runs

void hand_over(held_case c) {
  auto* b = benchmark::RegisterBenchmark(c.name.c_str(), std::move(c.run));
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (c.configure) c.configure(b);
  name_list().push_back(c.name + "/manual_time");
  gpu_list().push_back(std::move(c.gpus));
}

std::string slug_of(const std::string& family) {
  std::string s;
  for (char c : family) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}
}  // namespace

std::string family_descriptor::name_pattern(const std::vector<shown_axis>& shown,
                                            const std::string& break_before) const {
  std::vector<std::pair<std::string, bool>> parts;  // "key:values", bracketed
  if (shown.empty()) {
    for (const axis& a : axes) parts.emplace_back(a.key + ":" + a.values, !a.always);
  } else {
    std::size_t next = 0;  // shown axes keep the declared order
    for (const shown_axis& s : shown) {
      std::size_t at = next;
      while (at < axes.size() && axes[at].key != s.key) ++at;
      if (at == axes.size())
        throw std::logic_error(name + "'s name pattern shows " + s.key +
                               ", not a declared axis after the ones before it");
      parts.emplace_back(s.key + ":" + (s.values.empty() ? axes[at].values : s.values), false);
      next = at + 1;
    }
  }
  // A second line starts under the first axis.
  const std::string indent(2 + name.size() + 1, ' ');
  std::string line = "  " + name;
  for (const auto& [part, bracketed] : parts) {
    const bool breaks = !break_before.empty() && part.rfind(break_before + ":", 0) == 0;
    if (breaks) line += "/\n" + indent;
    line += bracketed ? "[/" + part + "]" : (breaks ? "" : "/") + part;
  }
  return line + "\n";
}

std::vector<std::string> family_descriptor::axis_keys() const {
  std::vector<std::string> keys;
  for (const axis& a : axes) keys.push_back(a.key);
  return keys;
}

namespace {
bool declares_axis(const family_descriptor& d, const std::string& key) {
  for (const axis& a : d.axes)
    if (a.key == key) return true;
  return false;
}

}  // namespace

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find(sep, start)) != std::string::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

std::optional<std::uint64_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(text);
}

const family_descriptor* family_of_case(const std::string& name) {
  const std::string family = name.substr(0, name.find('/'));
  for (const family_descriptor& d : family_list())
    if (d.name == family) return &d;
  return nullptr;
}

std::string declaration_problem(const family_descriptor& d) {
  try {
    (void)case_name(d.name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const std::string of = "family " + d.name + ": ";
  std::set<std::string> seen;
  for (const axis& a : d.axes) {
    if (!is_name_token(a.key) || a.key.find_first_of("0123456789") == 0)
      return of + "axis key '" + a.key + "' is not a lower-case token";
    if (a.key == "device") return of + "axis device is the one --device=all appends";
    if (!seen.insert(a.key).second) return of + "axis " + a.key + " declared twice";
  }
  if (d.headline.empty() || d.unit.empty()) return of + "no headline or unit";
  if (!d.register_cases) return of + "no register_cases";
  if (d.buffers_of_size == 0) return of + "buffers_of_size is 0: a case holds at least one buffer of its size";
  // A rule's tokens joined by '|' must name declared axes: key:value, or key>=N with N a whole number.
  auto rule_problem = [&](const std::string& what, const std::string& rule) -> std::string {
    if (rule == "yes" || rule == "no") return {};
    for (const std::string& token : split(rule, '|')) {
      const std::size_t ge = token.find(">=");
      if (ge == std::string::npos) {
        if (!declares_axis(d, token.substr(0, token.find(':'))))
          return of + what + " names " + token + ", not a value of a declared axis";
        continue;
      }
      if (!declares_axis(d, token.substr(0, ge)) || !whole_number(token.substr(ge + 2)))
        return of + what + " names " + token + ", not a declared axis at a whole number or more";
    }
    return {};
  };
  for (const auto& [what, rule] : {std::pair<const char*, const std::string&>{"host_link", d.host_link},
                                   {"link_bound", d.link_bound},
                                   {"link_span", d.link_span},
                                   {"host_rounds", d.host_rounds},
                                   {"small_rounds", d.small_rounds},
                                   {"fast_cpu", d.fast_cpu},
                                   {"machine_variance", d.machine_variance}})
    if (std::string problem = rule_problem(what, rule); !problem.empty()) return problem;
  if (!d.revisions.empty())
    for (const std::string& entry : split(d.revisions, ';')) {  // N=RULE
      const std::size_t eq = entry.find('=');
      const std::optional<std::uint64_t> n = whole_number(entry.substr(0, eq));
      if (eq == std::string::npos || !n || *n < 2)
        return of + "revisions entry " + entry + " is not N=RULE with N from 2";
      if (std::string problem = rule_problem("revisions", entry.substr(eq + 1)); !problem.empty()) return problem;
    }
  if (d.machine_variance != "no" && d.machine_variance_cause.empty())
    return of + "machine_variance " + d.machine_variance + " names no machine_variance_cause";
  if (d.machine_variance == "no" && !d.machine_variance_cause.empty())
    return of + "a machine_variance_cause with machine_variance no";
  if (!d.plot.empty())
    for (const std::string& hint : split(d.plot, ';')) {  // x=key, series=key,key, panel=key, xlabel=text
      const std::string name = hint.substr(0, hint.find('='));
      if (name == "xlabel") continue;  // the x axis's words, not an axis
      if (name != "x" && name != "series" && name != "panel")
        return of + "plot hint " + hint + " is not x=, series=, panel= or xlabel=";
      for (const std::string& key : split(hint.substr(hint.find('=') + 1), ','))
        if (!declares_axis(d, key)) return of + "plot names " + key + ", not a declared axis";
    }
  return {};
}

std::string case_name_problem(const family_descriptor& d, const case_name& name) {
  if (name.family() != d.name) return "a case of " + name.family() + ", not of " + d.name;
  std::size_t next = 0;
  for (const auto& [key, value] : name.axes()) {
    std::size_t at = next;
    while (at < d.axes.size() && d.axes[at].key != key) ++at;
    if (at == d.axes.size())
      return "key " + key + " is not one of " + d.name + "'s axes (" + joined(d.axis_keys(), ", ") +
             ") after the keys before it";
    for (std::size_t skipped = next; skipped < at; ++skipped)
      if (d.axes[skipped].always) return "no key " + d.axes[skipped].key + ", which every case of " + d.name + " has";
    next = at + 1;
  }
  for (std::size_t rest = next; rest < d.axes.size(); ++rest)
    if (d.axes[rest].always) return "no key " + d.axes[rest].key + ", which every case of " + d.name + " has";
  return {};
}

family_registration::family_registration(const std::function<void(family_descriptor&)>& declare) {
  family_descriptor d;
  declare(d);
  if (const std::string problem = declaration_problem(d); !problem.empty()) throw std::logic_error(problem);
  family_list().push_back(std::move(d));
}

const std::vector<family_descriptor>& families() {
  return family_list();
}

context_list family_context() {
  context_list c;
  for (const auto& f : family_list()) {
    const std::string k = "family." + slug_of(f.name) + ".";
    c.emplace_back(k + "name", f.name);
    c.emplace_back(k + "summary", f.summary);
    c.emplace_back(k + "axes", fact_text(joined(f.axis_keys(), ",")));
    c.emplace_back(k + "headline", f.headline);
    c.emplace_back(k + "unit", f.unit);
    c.emplace_back(k + "better", std::string(to_name(f.better_is)));
    c.emplace_back(k + "headline_kind", std::string(to_name(f.kind)));
    c.emplace_back(k + "host_link", f.host_link);
    c.emplace_back(k + "plot", f.plot.empty() ? "bars" : f.plot);
    c.emplace_back(k + "scope", std::string(to_name(f.scope)));
    c.emplace_back(k + "host_side", f.host_side);
    c.emplace_back(k + "link_bound", f.link_bound);
    c.emplace_back(k + "link_span", f.link_span);
    c.emplace_back(k + "host_rounds", f.host_rounds);
    c.emplace_back(k + "small_rounds", f.small_rounds);
    if (f.small_rounds != "no") c.emplace_back(k + "small_rounds_below", std::to_string(f.small_rounds_below));
    c.emplace_back(k + "fast_cpu", f.fast_cpu);
    c.emplace_back(k + "machine_variance", f.machine_variance);
    if (f.machine_variance != "no") c.emplace_back(k + "machine_variance_cause", f.machine_variance_cause);
    if (!f.revisions.empty()) c.emplace_back(k + "revisions", f.revisions);
    c.emplace_back(k + "spread_axes", fact_text(joined(f.spread_axes, ",")));
  }
  return c;
}

std::string gate_filter() {
  std::string f;
  for (const auto& d : family_list())
    if (!d.gate.empty()) f += (f.empty() ? "" : "|") + d.gate;
  return f;
}

size_need memory_for_size(std::uint64_t largest, const std::string& filter, const std::vector<std::string>& names) {
  size_need need;
  for (const family_descriptor& f : family_list()) {
    if (f.buffers_of_size <= need.buffers) continue;
    std::vector<std::string> own;
    for (const std::string& n : names)
      if (n.rfind(f.name + "/", 0) == 0) own.push_back(n);
    if (count_filter_matches(filter, own) > 0) need.buffers = f.buffers_of_size;
  }
  need.bytes = need.buffers * largest;
  return need;
}

void register_family(const family_descriptor& f, int device, bool name_device) {
  g_registering = {&f, device, name_device};
  struct done {
    ~done() { g_registering = {}; }
  } reset;
  f.register_cases();
}

void register_all_families(const std::vector<int>& devices, bool name_devices) {
  std::vector<held_case> held;
  g_held = &held;
  struct done {
    ~done() { g_held = nullptr; }
  } reset;
  for (int d : devices)
    for (const auto& f : family_list())
      if (f.scope == family_scope::single_gpu) register_family(f, d, name_devices);
  for (const auto& f : family_list())
    if (f.scope == family_scope::multi_gpu) register_family(f, -1, false);
  std::vector<round_kind> kinds;
  for (const held_case& c : held) kinds.push_back(c.rounds);
  for (std::size_t i : round_order(kinds)) hand_over(std::move(held[i]));
}

int registering_device() {
  return g_registering.family == nullptr ? -1 : g_registering.device;
}

const std::vector<std::string>& registered_names() {
  return name_list();
}

std::vector<int> gpus_of_selected_cases(const std::string& filter) {
  const std::vector<std::string> selected = filter_matches(filter, name_list());
  std::set<std::string> chosen(selected.begin(), selected.end());
  std::set<int> gpus;
  for (std::size_t i = 0; i < name_list().size(); ++i)
    if (chosen.count(name_list()[i]) != 0) gpus.insert(gpu_list()[i].begin(), gpu_list()[i].end());
  return {gpus.begin(), gpus.end()};
}

std::vector<std::string> cases_on_one_gpu(const std::vector<std::string>& names) {
  std::set<std::string> one_gpu;
  for (std::size_t i = 0; i < name_list().size(); ++i)
    if (gpu_list()[i].size() <= 1) one_gpu.insert(name_list()[i]);
  std::vector<std::string> out;
  for (const std::string& n : names)
    if (one_gpu.count(n) != 0) out.push_back(n);
  return out;
}

std::vector<int> gpus_kept_for(const std::vector<int>& case_gpus, int home_gpu) {
  std::vector<int> kept = case_gpus;
  if (home_gpu >= 0 && std::find(kept.begin(), kept.end(), home_gpu) == kept.end()) kept.push_back(home_gpu);
  return kept;
}

const std::string& current_case_name() {
  return running_name();
}

void register_case(const case_name& name, std::function<void(benchmark::State&)> fn, std::vector<int> gpus,
                   std::function<void(benchmark::internal::Benchmark*)> configure) {
  if (g_registering.family == nullptr) throw std::logic_error("register_case outside a family's registration");
  if (const std::string problem = case_name_problem(*g_registering.family, name); !problem.empty())
    throw std::logic_error("family " + g_registering.family->name + " registered " + name.str() + ": " + problem);
  case_name full = name;
  const int device = g_registering.device;  // -1: a multi-GPU family, which makes its own devices current
  if (device >= 0) {
    if (std::find(gpus.begin(), gpus.end(), device) != gpus.end())
      throw std::logic_error("a single-GPU family's case names only the other GPUs it uses");
    gpus.insert(gpus.begin(), device);
    if (g_registering.name_device) full.add("device", device);
  }
  const std::string n = full.str();
  const bool host_link = crosses_host_link(*g_registering.family, n);
  const round_kind rounds = round_kind_of(*g_registering.family, n);
  const double span_s = spans_link_states(*g_registering.family, n) ? kLinkStateSpanS : 0.0;
  const int poll_ms = health_poll_ms_for(*g_registering.family, n, current_options().health_poll_ms);
  const bool fast_cpu = holds_fast_cpu(*g_registering.family, n);
  const std::string family = g_registering.family->name;
  auto run = [fn = std::move(fn), n, family, device, gpus, host_link, rounds, span_s, poll_ms,
              fast_cpu](benchmark::State& st) {
    running_name() = n;
    // Placed first: the sampler's polling thread starts on this thread's CPUs, and after a case that held the
    // fast state those are one CPU until this case lets the thread go.
    place_thread_for_case(fast_cpu);
    // The last round's process reports the case's counters, so it alone reads its GPUs' edges. Their NVLink
    // counters say something only of copies between GPUs that do not go through the host.
    const bool over_nvlink = gpus.size() > 1 && !host_link;
    health_sampler sampler(bus_ids(gpus), poll_ms, current_options().round == 0, over_nvlink);
    set_running_case(n, &sampler, rounds, span_s);
    // Any error a case throws (CUDA, allocation, gate timeout) fails that case with its sentence; the
    // run goes on with the next.
    try {
      if (device >= 0) CUDA_CHECK(cudaSetDevice(device));
      const options& o = current_options();
      // Every GPU's buffers are kept within a bound on host bytes, the running case's own never freed for
      // it (and under --device=N GPU N's, which most cases use): freeing the other GPUs' at each case
      // would make a shuffled round pin and fill them again at nearly every multi-GPU case.
      buffer_cache::instance().keep_within(default_host_cache_limit(),
                                           o.all_devices ? gpus : gpus_kept_for(gpus, o.device));
      fn(st);
    } catch (const std::exception& e) {
      fail_case(st, e.what());
    }
    const std::vector<health_summary> health = sampler.stop();
    report_edges(st, sampler.edges());
    report_health(st, n, host_link, gpus, health);
    set_running_case(n, nullptr);
    if (progress* p = run_progress()) p->finished(n, family);
  };
  held_case c{n, std::move(run), gpus, rounds, std::move(configure)};
  if (g_held != nullptr)
    g_held->push_back(std::move(c));
  else
    hand_over(std::move(c));
}

}  // namespace gpu_bench
