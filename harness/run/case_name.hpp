#pragma once
// Case names are data: `Family/key:value/key:value`, keys in a fixed order per family, keys lower-case,
// values lower-case tokens or plain integers. This is the one place that builds them.
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/run/enum_names.hpp"

namespace gpu_bench {

class case_name {
 public:
  explicit case_name(std::string family);
  case_name& add(std::string_view key, std::string_view value);
  case_name& add(std::string_view key, std::uint64_t value);
  case_name& add(std::string_view key, int value);
  // An enum value by its name table.
  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  case_name& add(std::string_view key, E value) {
    return add(key, to_name(value));
  }

  const std::string& family() const { return family_; }
  const std::vector<std::pair<std::string, std::string>>& axes() const { return axes_; }
  std::string str() const;

 private:
  std::string family_;
  std::vector<std::pair<std::string, std::string>> axes_;
};

// True for a lower-case token ([a-z0-9_]+, not starting with '_').
bool is_name_token(std::string_view s);

// A Google Benchmark run name without the "/manual_time" every case's registered name ends in: the case's name
// as the rounds and the samples key it.
std::string without_manual_time(std::string run_name);

}  // namespace gpu_bench
