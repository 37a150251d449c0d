#include "harness/run/sizes.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace gpu_bench {
namespace {
[[noreturn]] void bad_size(std::string_view text, const char* why) {
  throw std::invalid_argument("bad size '" + std::string(text) + "': " + why);
}
}  // namespace

std::uint64_t parse_size(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) bad_size(text, "empty");
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0) bad_size(text, "expected a positive whole number of bytes, optionally with K, M, G or T");
  if (digits > 15) bad_size(text, "too large");
  std::uint64_t value = std::stoull(std::string(s.substr(0, digits)));
  std::string suffix(s.substr(digits));
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() >= 2 && suffix.substr(suffix.size() - 2) == "IB")
    suffix.resize(suffix.size() - 2);
  else if (!suffix.empty() && suffix.back() == 'B' && suffix != "B")
    suffix.pop_back();
  else if (suffix == "B")
    suffix.clear();
  unsigned shift = 0;
  if (suffix == "K")
    shift = 10;
  else if (suffix == "M")
    shift = 20;
  else if (suffix == "G")
    shift = 30;
  else if (suffix == "T")
    shift = 40;
  else if (!suffix.empty())
    bad_size(text, "unknown suffix (use K, M, G or T)");
  if (shift && value > (kMaxTransferBytes >> shift)) bad_size(text, "larger than 1 TiB");
  value <<= shift;
  if (value < kMinTransferBytes) bad_size(text, "smaller than 4 bytes");
  if (value > kMaxTransferBytes) bad_size(text, "larger than 1 TiB");
  if (value % 4 != 0) bad_size(text, "not a multiple of 4 bytes");
  return value;
}

std::vector<std::uint64_t> power_sweep(std::uint64_t lo, std::uint64_t hi, unsigned base) {
  if (base < 2) throw std::invalid_argument("power sweep base must be at least 2");
  std::vector<std::uint64_t> v;
  for (std::uint64_t x = lo; x <= hi && x != 0; x *= base) {
    v.push_back(x);
    if (x > hi / base) break;
  }
  return v;
}

std::vector<std::uint64_t> parse_size_spec(std::string_view spec) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  if (spec == "pow4") return power_sweep(4, kGiB, 4);
  if (spec == "pow2") return power_sweep(4, kGiB, 2);
  std::vector<std::uint64_t> sizes;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = spec.find(',', start);
    const std::string_view item = spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start);
    sizes.push_back(parse_size(item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace gpu_bench
