// A family's rules (registry.hpp's family_descriptor) applied to a case's name: which rounds it takes,
// whether it crosses the host link, varies with the machine, samples on a fast CPU, and its spread group.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/registry.hpp"

namespace gpu_bench {

namespace {

// Whether one token of a rule holds for a case named `name`. key:value: the name holds that whole key:value,
// after a '/' and before the next '/' or the end. key>=N: the name's value of key is a whole number, N or more.
bool token_holds(const std::string& token, const std::string& name) {
  if (const std::size_t ge = token.find(">="); ge != std::string::npos) {
    const std::string framed = "/" + token.substr(0, ge) + ":";
    const std::size_t at = name.find(framed);
    if (at == std::string::npos) return false;
    const std::size_t from = at + framed.size();
    const std::optional<std::uint64_t> value = whole_number(name.substr(from, name.find('/', from) - from));
    const std::optional<std::uint64_t> least = whole_number(token.substr(ge + 2));
    return value && least && *value >= *least;
  }
  const std::string framed = "/" + token;
  for (std::size_t at = name.find(framed); at != std::string::npos; at = name.find(framed, at + 1)) {
    const std::size_t after = at + framed.size();
    if (after == name.size() || name[after] == '/') return true;
  }
  return false;
}

// Whether `rule` ("yes", "no", or tokens joined by '|': key:value or key>=N) holds for a case named `name`:
// whether one of its tokens does.
bool rule_holds(const std::string& rule, const std::string& name) {
  if (rule == "yes") return true;
  if (rule == "no") return false;
  const std::vector<std::string> tokens = split(rule, '|');
  return std::any_of(tokens.begin(), tokens.end(), [&](const std::string& t) { return token_holds(t, name); });
}

}  // namespace

bool crosses_host_link(const family_descriptor& d, const std::string& name) {
  return rule_holds(d.host_link, name);
}

namespace {

// The case's bytes axis, where it has one.
std::optional<unsigned long long> bytes_of(const std::string& name) {
  const std::size_t at = name.find("/bytes:");
  if (at == std::string::npos) return std::nullopt;
  return std::strtoull(name.c_str() + at + 7, nullptr, 10);
}
}  // namespace

bool is_link_bound(const family_descriptor& d, const std::string& name) {
  const auto bytes = bytes_of(name);
  return rule_holds(d.link_bound, name) && bytes && *bytes >= kLinkBoundFromBytes;
}

bool takes_small_rounds(const family_descriptor& d, const std::string& name) {
  const auto bytes = bytes_of(name);
  return rule_holds(d.small_rounds, name) && (!bytes || *bytes < d.small_rounds_below);
}

bool takes_small_rounds(const std::string& name) {
  const family_descriptor* d = family_of_case(name);
  return d != nullptr && takes_small_rounds(*d, name);
}

bool varies_with_machine(const family_descriptor& d, const std::string& name) {
  return rule_holds(d.machine_variance, name);
}

bool holds_fast_cpu(const family_descriptor& d, const std::string& name) {
  return rule_holds(d.fast_cpu, name);
}

bool takes_host_rounds(const family_descriptor& d, const std::string& name) {
  return rule_holds(d.host_rounds, name);
}

bool takes_host_rounds(const std::string& name) {
  const family_descriptor* d = family_of_case(name);
  return d != nullptr && takes_host_rounds(*d, name);
}

round_kind round_kind_of(const family_descriptor& d, const std::string& name) {
  if (is_link_bound(d, name) || takes_small_rounds(d, name)) return round_kind::link;
  return takes_host_rounds(d, name) ? round_kind::host : round_kind::full;
}

round_kind round_kind_of(const std::string& name) {
  const family_descriptor* d = family_of_case(name);
  return d != nullptr ? round_kind_of(*d, name) : round_kind::full;
}

int health_poll_ms_for(const family_descriptor& d, const std::string& name, int poll_ms) {
  return varies_with_machine(d, name) ? 0 : poll_ms;
}

bool spans_link_states(const family_descriptor& d, const std::string& name) {
  return is_link_bound(d, name) && rule_holds(d.link_span, name);
}

std::string spread_group(const std::string& name) {
  const std::vector<std::string> parts = split(name, '/');
  static const std::vector<std::string> kUnregistered = {"mem", "dir"};
  const family_descriptor* d = family_of_case(name);
  const std::vector<std::string>* axes = d != nullptr ? &d->spread_axes : &kUnregistered;
  std::string group = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t colon = parts[i].find(':');
    if (colon == std::string::npos) continue;
    const std::string key = parts[i].substr(0, colon);
    if (key == "bytes") {
      const unsigned long long bytes = std::strtoull(parts[i].c_str() + colon + 1, nullptr, 10);
      group += bytes < (64ull << 10) ? "/size:small" : bytes < (1ull << 20) ? "/size:medium" : "/size:large";
    } else if (std::find(axes->begin(), axes->end(), key) != axes->end()) {
      group += "/" + parts[i];
    }
  }
  return group;
}

bool is_link_bound(const std::string& name) {
  const family_descriptor* d = family_of_case(name);
  return d != nullptr && is_link_bound(*d, name);
}

}  // namespace gpu_bench
