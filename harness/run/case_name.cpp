#include "harness/run/case_name.hpp"

#include <stdexcept>

namespace gpu_bench {

bool is_name_token(std::string_view s) {
  if (s.empty() || s.front() == '_') return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

case_name::case_name(std::string family) : family_(std::move(family)) {
  const bool ok = !family_.empty() && family_.front() >= 'A' && family_.front() <= 'Z' &&
                  family_.find_first_of("/:") == std::string::npos;
  if (!ok)
    throw std::invalid_argument("family name must start with a capital letter and hold no '/' or ':': " + family_);
}

case_name& case_name::add(std::string_view key, std::string_view value) {
  if (!is_name_token(key) || (key.find_first_of("0123456789") == 0))
    throw std::invalid_argument("case key must be a lower-case token: " + std::string(key));
  if (!is_name_token(value))
    throw std::invalid_argument("case value must be a lower-case token: " + std::string(value));
  for (const auto& axis : axes_)
    if (axis.first == key) throw std::invalid_argument("case key repeated: " + std::string(key));
  axes_.emplace_back(std::string(key), std::string(value));
  return *this;
}

case_name& case_name::add(std::string_view key, std::uint64_t value) {
  return add(key, std::to_string(value));
}

case_name& case_name::add(std::string_view key, int value) {
  if (value < 0) throw std::invalid_argument("case value must not be negative: " + std::string(key));
  return add(key, static_cast<std::uint64_t>(value));
}

std::string case_name::str() const {
  std::string s = family_;
  for (const auto& [k, v] : axes_) s += "/" + k + ":" + v;
  return s;
}

std::string without_manual_time(std::string run_name) {
  constexpr std::string_view suffix = "/manual_time";
  if (run_name.size() > suffix.size() && run_name.compare(run_name.size() - suffix.size(), suffix.size(), suffix) == 0)
    run_name.resize(run_name.size() - suffix.size());
  return run_name;
}

}  // namespace gpu_bench
