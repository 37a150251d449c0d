#pragma once
// Order statistics of a case's samples: percentiles, and the confidence interval of the median that says
// how sure a figure is (docs/methodology.md). Pure, tested without a GPU.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpu_bench {

// The p-quantile (0 <= p <= 1) of `v`, interpolated linearly between the two nearest ranks; 0 if empty.
// Rank p (n - 1) of the sorted values, as numpy.percentile's default ("linear", Hyndman and Fan's type 7).
double percentile(std::vector<double> v, double p);
// The same for each of `ps`, sorting `v` once: what a case's sample_p50_us, _p90_us and _p99_us come from.
std::vector<double> percentiles(std::vector<double> v, const std::vector<double>& ps);
inline double p50(const std::vector<double>& v) {
  return percentile(v, 0.50);
}
inline double p99(const std::vector<double>& v) {
  return percentile(v, 0.99);
}

// The median of `sorted` (ascending): the middle value, or the mean of the two middle ones; 0 if empty.
double median_of_sorted(const std::vector<double>& sorted);

// The 0-based ranks (lo, hi) of the order statistics that bound a distribution-free 95% confidence interval
// of the median of `n` samples: the narrowest symmetric pair whose coverage is still at least 95%, i.e.
// P(B <= lo) <= 2.5% with B ~ Binomial(n, 1/2). Exact for n <= 2000, the normal approximation above. Where
// n is too small for any such pair (n < 6), the extremes (0, n - 1).
std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n);

// The relative half-width of that interval, in percent of the median: 100 * (x[hi] - x[lo]) / 2 / median.
// `sorted` must be sorted ascending and hold positive values; 0 for fewer than 2 samples.
double median_noise_pct(const std::vector<double>& sorted);

// A round's figure from samples taken in turn from several placements (a copy's buffers and streams), each
// sample's placement in `placement`: the geometric mean of each placement's median, so every placement
// weighs alike however many samples it took. `noise_pct` is median_noise_pct of the samples, each scaled by
// the center over its placement's median: the spread within placements, not between them (the rounds give
// that). With one placement, the median and median_noise_pct. `seconds` positive, both of one length.
struct placed_median {
  double center = 0;
  double noise_pct = 0;
};
placed_median median_over_placements(const std::vector<double>& seconds, const std::vector<int>& placement);

// A case measured in several independent rounds (harness/run/rounds.hpp), on the logarithm of each round's
// median (times vary by ratios, and a rate is a time's reciprocal):
// - `center`: from five rounds the mean of the fastest half (center_of_rounds), which rounds slowed by a
//   millisecond-slow process or bursts of another tenant's traffic on the link cannot move, however many;
// - its spread: the rounds' own variance (rounds_own_spread) moderated by `prior`, the variance typical of the
//   cases that share the case's spread (fit_spread_priors): (d0 s0^2 + d s^2) / (d0 + d), on d0 + d degrees
//   of freedom (Smyth's moderated variance), so that rounds that agree by chance borrow the freedom of cases
//   shown to vary alike, and only of those;
// - `half_width`: that of a 95% prediction interval for the center of as many rounds of the next independent
//   run, t(0.975, df) * s * sqrt(2 c_R), with c_R the variance of that center of R normal values over one
//   value's (center_variance_factor); never below `floor` (what one round's own samples and the timer's
//   tick can resolve), which is also the half-width of a single round;
// - `detectable_half_width`: the smallest change gpu-bench-compare calls between this run and another like
//   it: the test's critical difference, t(0.975, 2 df) * s * sqrt(2 c_R) (Welch's degrees of freedom for two
//   like sides), and never less than `floor` or compare's default minimum effect (kMinEffectPct).
// Half-widths are relative to the center, as exp(.) - 1 of the logarithm's.
struct spread_prior {
  double rel_sd = 0;  // s0: the standard deviation of the logarithm of one round's median between processes
  double dof = 0;     // d0: the degrees of freedom it carries beside the case's own; 0: no prior
};
struct round_figure {
  double center = 0;                 // seconds
  double half_width = 0;             // relative: 0.01 is 1%
  double detectable_half_width = 0;  // relative
  double rel_sd = 0;                 // the moderated standard deviation of one round's logarithm
  double dof = 0;                    // its degrees of freedom; 0 for a single round
};
// gpu-bench-compare's default --min-effect, percent: no smaller change is called faster or slower.
inline constexpr double kMinEffectPct = 1.0;
round_figure combine_rounds(const std::vector<double>& medians, double floor, const spread_prior& prior = {});

// How many of the fastest rounds the center keeps: ceil(n / 2) from five rounds on (three of five, four of
// eight, eight of fifteen), 0 below five, where it is their median. Other traffic on the host link only ever
// slows a copy: in the A/A pairs bursts spoiled three and more of a link-bound case's eight rounds, and the
// rounds they spared agreed between runs better than any center of all of them (docs/methodology.md,
// "Models tried").
int rounds_kept(int n);
// A case's figure from its rounds' medians: the mean of the rounds_kept(n) fastest (the smallest times), or
// under five rounds their median.
double center_of_rounds(std::vector<double> times);
// The variance of that center of `n` independent standard normal values (1 for n = 1, 0.5 for 2, 0.4487 for
// 3, 0.2453 for 5, 0.0872 for 15).
double center_variance_factor(int n);

// The spread of a case's own rounds, on the logarithm of their medians, as the variance of one round and its
// degrees of freedom. Under five rounds, their sample variance (R - 1). From five on, Yuen's estimate: the
// rounds winsorized (the slower R - h set to the slowest of the h = rounds_kept(R) fastest), whose variance
// gives the center's, (R - 1) s_w^2 / (h (h - 1)), here taken back to one round's scale over
// center_variance_factor(R), on winsorized_dof(R) degrees of freedom: slow rounds neither move the figure nor
// widen its interval. Zero variance and dof for fewer than two rounds.
struct own_spread {
  double variance = 0;
  double dof = 0;
};
own_spread rounds_own_spread(const std::vector<double>& medians);
// The degrees of freedom of that winsorized estimate for R >= 5 rounds of normal values: those of the
// chi-square with its first two moments (1.68 for five rounds, 5.70 for fifteen), fewer than Yuen's h - 1.
double winsorized_dof(int n);

// How many rounds in all a case needs for its detectable_half_width to come to `target` (relative), were its
// rounds to keep spreading as `medians` (those measured so far) and `prior` say: the fewest from `planned` to
// `most`, or `most` where none reaches it. A case whose rounds agree needs no more than `planned`.
int rounds_needed(const std::vector<double>& medians, const spread_prior& prior, int planned, int most, double target);

// One case's rounds as the prior's fit sees them: the group of cases it shares its spread with
// (spread_group), the logarithm's variance over its rounds and that variance's degrees of freedom.
struct case_spread {
  std::string group;
  double variance = 0;
  double dof = 0;
};
// The variance `times` (at least two) give their logarithm (rounds_own_spread), never below `floor_rel`
// squared (a spread the timer cannot resolve) nor below kMinRelSd squared; and its degrees of freedom.
case_spread spread_of(std::string group, const std::vector<double>& times, double floor_rel);
inline constexpr double kMinRelSd = 1e-5;

// Smyth's empirical Bayes prior (limma's fitFDist) for the cases of one family: each group's s0 from the
// mean of its cases' log variances, and one d0 for the family from how far its cases' log variances spread
// around their groups' means beyond what their own degrees of freedom explain. A family whose groups hold
// their cases' variances exactly gets d0 without bound, capped at the degrees of freedom a group's own
// cases hold (a prior is never surer than the rounds it came from). Groups of fewer than kMinPriorCases
// cases, and every group of a family with fewer than kMinPriorResiduals cases in groups of two or more, get
// none (dof 0).
std::map<std::string, spread_prior> fit_spread_priors(const std::vector<case_spread>& cases);
inline constexpr std::size_t kMinPriorCases = 3;
inline constexpr std::size_t kMinPriorResiduals = 6;

// Special functions the prior needs: the digamma and trigamma functions (x > 0), and the trigamma's inverse
// (y > 0).
double digamma(double x);
double trigamma(double x);
double trigamma_inverse(double y);

// The two-sided 95% quantile of Student's t with `df` degrees of freedom (df >= 1, fractional too: a
// moderated variance's).
double student_t_975(double df);

}  // namespace gpu_bench
