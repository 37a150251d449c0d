#include "harness/measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace gpu_bench {

namespace {

double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  if (p < 0 || p > 1) throw std::invalid_argument("a percentile's p lies in [0, 1]");
  if (sorted.empty()) return 0;
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return percentile_of_sorted(v, p);
}

std::vector<double> percentiles(std::vector<double> v, const std::vector<double>& ps) {
  std::sort(v.begin(), v.end());
  std::vector<double> out;
  out.reserve(ps.size());
  for (const double p : ps) out.push_back(percentile_of_sorted(v, p));
  return out;
}

namespace {

// P(B <= k) for B ~ Binomial(n, 1/2), summed in log space so large n neither overflows nor underflows.
double binomial_half_cdf(std::size_t n, std::size_t k) {
  const double ln_half_n = static_cast<double>(n) * std::log(0.5);
  const double ln_n_fact = std::lgamma(static_cast<double>(n) + 1);
  double sum = 0;
  for (std::size_t i = 0; i <= k; ++i)
    sum += std::exp(ln_n_fact - std::lgamma(static_cast<double>(i) + 1) - std::lgamma(static_cast<double>(n - i) + 1) +
                    ln_half_n);
  return sum;
}

}  // namespace

std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n) {
  if (n == 0) return {0, 0};
  constexpr double kTail = 0.025;
  // The largest k with P(B <= k - 1) <= 2.5%: x_(k) and x_(n-k+1) (1-based) bound the interval.
  std::size_t k = 0;
  if (n > 2000) {
    // Walking the CDF term by term would cost O(n) per check; the binomial is normal to within a rank here.
    constexpr double kZ = 1.959963984540054;
    const double root_n = std::sqrt(static_cast<double>(n));
    k = static_cast<std::size_t>(std::floor((static_cast<double>(n) - kZ * root_n) / 2.0));
  } else {
    while (k + 1 <= n / 2 && binomial_half_cdf(n, k) <= kTail) ++k;
  }
  if (k == 0) return {0, n - 1};
  return {k - 1, n - k};
}

double median_of_sorted(const std::vector<double>& sorted) {
  if (sorted.empty()) return 0;
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

double median_noise_pct(const std::vector<double>& sorted) {
  if (sorted.size() < 2) return 0.0;
  const auto [lo, hi] = median_ci_ranks(sorted.size());
  const double median = median_of_sorted(sorted);
  if (!(median > 0)) return 0.0;
  return 100.0 * (sorted[hi] - sorted[lo]) / 2.0 / median;
}

placed_median median_over_placements(const std::vector<double>& seconds, const std::vector<int>& placement) {
  if (seconds.size() != placement.size()) throw std::invalid_argument("one placement per sample");
  std::map<int, std::vector<double>> by_place;
  for (std::size_t i = 0; i < seconds.size(); ++i) by_place[placement[i]].push_back(seconds[i]);
  if (by_place.size() <= 1) {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    return {median_of_sorted(sorted), median_noise_pct(sorted)};
  }
  std::map<int, double> median_of;
  double log_sum = 0;
  for (auto& [p, v] : by_place) {
    std::sort(v.begin(), v.end());
    median_of[p] = median_of_sorted(v);
    log_sum += std::log(median_of[p]);
  }
  const double center = std::exp(log_sum / static_cast<double>(by_place.size()));
  std::vector<double> scaled;
  scaled.reserve(seconds.size());
  for (std::size_t i = 0; i < seconds.size(); ++i) scaled.push_back(seconds[i] * center / median_of[placement[i]]);
  std::sort(scaled.begin(), scaled.end());
  return {center, median_noise_pct(scaled)};
}

double student_t_975(double df) {
  if (!(df >= 1)) throw std::invalid_argument("Student's t needs at least one degree of freedom");
  // Hill's algorithm 396 (Comm. ACM 13, 1970) for the two-sided 5% point, fractional df included (a
  // moderated variance's); within 2e-4 of the quantile from two degrees of freedom on, 1.1% between one and two.
  constexpr double kPi = 3.14159265358979323846;
  constexpr double p = 0.05;
  const double n = df;
  if (n == 1) return 1 / std::tan(p * kPi / 2);
  if (n == 2) return std::sqrt(2 / (p * (2 - p)) - 2);
  const double a = 1 / (n - 0.5);
  const double b = 48 / (a * a);
  double c = ((20700 * a / b - 98) * a - 16) * a + 96.36;
  const double d = ((94.5 / (b + c) - 3) / b + 1) * std::sqrt(a * kPi / 2) * n;
  double x = d * p;
  double y = std::pow(x, 2 / n);
  if (y > 0.05 + a) {
    x = 1.959963984540054;  // the normal deviate of the same tail
    y = x * x;
    if (n < 5) c += 0.3 * (n - 4.5) * (x + 0.6);
    c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c;
    y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x;
    y = a * y * y;
    y = y > 0.002 ? std::exp(y) - 1 : 0.5 * y * y + y;
  } else {
    y = ((1 / (((n + 6) / (n * y) - 0.089 * d - 0.822) * (n + 2) * 3) + 0.5 / (n + 4)) * y - 1) * (n + 1) / (n + 2) +
        1 / y;
  }
  return std::sqrt(n * y);
}

double center_variance_factor(int n) {
  // Exact to four rounds (where the center is the median), then from 4e6 draws each (within 3e-4): the mean
  // of the fastest ceil(n / 2) of n standard normal values.
  static constexpr double kTable[] = {1.0,    0.5,    0.448671, 0.298200, 0.2453, 0.2242, 0.1797,
                                      0.1683, 0.1418, 0.1347,   0.1173,   0.1126, 0.1001, 0.0966,
                                      0.0872, 0.0845, 0.0773,   0.0753,   0.0694, 0.0677};
  if (n < 1) throw std::invalid_argument("a center needs at least one value");
  if (n <= 20) return kTable[n - 1];
  return 1.36 / n;  // the fastest half of normal values: 1.36 / n from 20 on
}

int rounds_kept(int n) {
  return n < 5 ? 0 : (n + 1) / 2;
}

double center_of_rounds(std::vector<double> times) {
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  const auto kept = static_cast<std::size_t>(rounds_kept(static_cast<int>(times.size())));
  if (kept == 0) return median_of_sorted(times);
  double sum = 0;
  for (std::size_t i = 0; i < kept; ++i) sum += times[i];
  return sum / static_cast<double>(kept);
}

double winsorized_dof(int n) {
  // 2 m^2 / v of the estimate below over 4e6 draws of n standard normal values each (m its mean, v its
  // variance): the chi-square it resembles. Yuen's h - 1 overstates it (1.68 against 2 at five rounds).
  static constexpr double kTable[] = {1.68, 1.61, 2.48, 2.41, 3.28, 3.21, 4.09, 4.01,
                                      4.89, 4.81, 5.70, 5.62, 6.48, 6.40, 7.28, 7.21};
  if (n < 5) throw std::invalid_argument("rounds are winsorized from five on");
  if (n <= 20) return kTable[n - 5];
  return 0.81 * rounds_kept(n) - 0.8;
}

own_spread rounds_own_spread(const std::vector<double>& medians) {
  own_spread out;
  const std::size_t n = medians.size();
  if (n < 2) return out;
  std::vector<double> logs;
  for (double m : medians) logs.push_back(std::log(m));
  std::sort(logs.begin(), logs.end());
  const auto h = static_cast<std::size_t>(rounds_kept(static_cast<int>(n)));
  for (std::size_t i = h; h > 0 && i < n; ++i) logs[i] = logs[h - 1];  // the slower half to the slowest kept
  double mean = 0;
  for (double l : logs) mean += l;
  mean /= static_cast<double>(n);
  double ss = 0;
  for (double l : logs) ss += (l - mean) * (l - mean);
  const double variance = ss / static_cast<double>(n - 1);
  if (h == 0) return {variance, static_cast<double>(n - 1)};
  const double kept = static_cast<double>(h);
  const double of_center = static_cast<double>(n - 1) * variance / (kept * (kept - 1));
  return {of_center / center_variance_factor(static_cast<int>(n)), winsorized_dof(static_cast<int>(n))};
}

namespace {

// The moderated variance of one round's logarithm and its degrees of freedom, from a case's own spread and
// its group's prior.
own_spread moderate(const own_spread& own, const spread_prior& prior) {
  if (!(prior.dof > 0 && prior.rel_sd > 0)) return own;
  return {(prior.dof * prior.rel_sd * prior.rel_sd + own.dof * own.variance) / (prior.dof + own.dof),
          prior.dof + own.dof};
}

// What combine_rounds' detectable_half_width would be for `n` rounds of this moderated variance.
double detectable_for(double variance, double dof, int n, double floor) {
  const double spread = std::sqrt(2 * center_variance_factor(n) * variance);
  return std::max({floor, std::expm1(student_t_975(2 * dof) * spread), kMinEffectPct / 100.0});
}

}  // namespace

int rounds_needed(const std::vector<double>& medians, const spread_prior& prior, int planned, int most, double target) {
  most = std::max(most, planned);
  if (medians.size() < 2 || !(*std::min_element(medians.begin(), medians.end()) > 0)) return planned;
  const own_spread now = moderate(rounds_own_spread(medians), prior);
  for (int n = planned; n < most; ++n) {
    // At n rounds the case's own degrees of freedom are those rounds_own_spread gives n rounds.
    const double own_dof = n >= 5 ? winsorized_dof(n) : n - 1;
    const double dof = (prior.dof > 0 && prior.rel_sd > 0 ? prior.dof : 0.0) + own_dof;
    if (detectable_for(now.variance, dof, n, 0.0) <= target) return n;
  }
  return most;
}

double digamma(double x) {
  if (!(x > 0)) throw std::invalid_argument("digamma is taken of positive numbers only");
  double shift = 0;
  for (; x < 6; x += 1) shift -= 1 / x;
  const double r = 1 / (x * x);
  return shift + std::log(x) - 0.5 / x -
         r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))));
}

double trigamma(double x) {
  if (!(x > 0)) throw std::invalid_argument("trigamma is taken of positive numbers only");
  double shift = 0;
  for (; x < 6; x += 1) shift += 1 / (x * x);
  const double r = 1 / (x * x);
  return shift + 1 / x + r / 2 + r / x * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30))));
}

namespace {

double tetragamma(double x) {
  double shift = 0;
  for (; x < 6; x += 1) shift -= 2 / (x * x * x);
  const double r = 1 / (x * x);
  return shift - r * (1 + 1 / x + r * (0.5 - r * (1.0 / 6 - r * (1.0 / 6 - r * (3.0 / 10)))));
}

}  // namespace

double trigamma_inverse(double y) {
  if (!(y > 0)) throw std::invalid_argument("the trigamma function takes only positive values");
  // Newton's method from above, as limma's trigammaInverse: convergent for every y > 0.
  if (y > 1e7) return 1 / std::sqrt(y);
  if (y < 1e-6) return 1 / y;
  double x = 0.5 + 1 / y;
  for (int i = 0; i < 100; ++i) {
    const double tri = trigamma(x);
    const double step = tri * (1 - tri / y) / tetragamma(x);
    x += step;
    if (-step / x < 1e-8) break;
  }
  return x;
}

round_figure combine_rounds(const std::vector<double>& medians, double floor, const spread_prior& prior) {
  round_figure out;
  if (medians.empty()) return out;
  out.center = center_of_rounds(medians);
  floor = std::max(0.0, floor);
  out.half_width = floor;
  out.detectable_half_width = std::max(floor, kMinEffectPct / 100.0);
  const std::size_t n = medians.size();
  if (n < 2 || !(*std::min_element(medians.begin(), medians.end()) > 0)) return out;
  const own_spread s = moderate(rounds_own_spread(medians), prior);
  out.rel_sd = std::sqrt(s.variance);
  out.dof = s.dof;
  const double spread = std::sqrt(2 * center_variance_factor(static_cast<int>(n)) * s.variance);
  out.half_width = std::max(floor, std::expm1(student_t_975(s.dof) * spread));
  out.detectable_half_width = detectable_for(s.variance, s.dof, static_cast<int>(n), floor);
  return out;
}

case_spread spread_of(std::string group, const std::vector<double>& times, double floor_rel) {
  case_spread out{std::move(group), 0.0, 0.0};
  if (times.size() < 2) return out;
  const own_spread own = rounds_own_spread(times);
  const double least = std::max(floor_rel, kMinRelSd);
  out.variance = std::max(own.variance, least * least);
  out.dof = own.dof;
  return out;
}

std::map<std::string, spread_prior> fit_spread_priors(const std::vector<case_spread>& cases) {
  // Each case's log variance, corrected for its expectation under its degrees of freedom: e = ln s^2 -
  // digamma(d/2) + ln(d/2) has mean ln s0^2 - digamma(d0/2) + ln(d0/2) and variance trigamma(d/2) +
  // trigamma(d0/2) where sigma^2 follows the prior.
  struct group_cases {
    std::vector<double> e;
    double dof_sum = 0;
  };
  std::map<std::string, group_cases> groups;
  for (const auto& c : cases) {
    if (c.dof < 1 || !(c.variance > 0)) continue;
    const double half = c.dof / 2.0;
    auto& g = groups[c.group];
    g.e.push_back(std::log(c.variance) - digamma(half) + std::log(half));
    g.dof_sum += c.dof;
  }
  double residual_sum = 0, trigamma_sum = 0;
  std::size_t residuals = 0;
  std::map<std::string, double> group_mean;
  for (const auto& [name, g] : groups) {
    double mean = 0;
    for (double e : g.e) mean += e;
    mean /= static_cast<double>(g.e.size());
    group_mean[name] = mean;
    if (g.e.size() < 2) continue;
    const double scale = static_cast<double>(g.e.size()) / static_cast<double>(g.e.size() - 1);
    for (double e : g.e) residual_sum += (e - mean) * (e - mean) * scale;
    residuals += g.e.size();
  }
  // The trigamma term of each case that entered a residual.
  for (const auto& c : cases)
    if (c.dof >= 1 && c.variance > 0 && groups[c.group].e.size() >= 2) trigamma_sum += trigamma(c.dof / 2.0);
  std::map<std::string, spread_prior> out;
  if (residuals < kMinPriorResiduals) return out;
  const double excess = (residual_sum - trigamma_sum) / static_cast<double>(residuals);
  constexpr double kUnbounded = 1e6;
  const double d0 = excess > 0 ? std::min(kUnbounded, 2 * trigamma_inverse(excess)) : kUnbounded;
  for (const auto& [name, g] : groups) {
    if (g.e.size() < kMinPriorCases) continue;
    const double log_s0sq = group_mean[name] + digamma(d0 / 2) - std::log(d0 / 2);
    out[name] = spread_prior{std::exp(log_s0sq / 2), std::min(d0, g.dof_sum)};
  }
  return out;
}

}  // namespace gpu_bench
