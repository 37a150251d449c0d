#include "harness/run/rounds.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "harness/measure/stats.hpp"
#include "harness/run/case_name.hpp"
#include "harness/run/options.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/progress.hpp"
#include "harness/run/registry.hpp"

extern char** environ;

namespace gpu_bench {
namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::vector<round_medians> g_prior;
std::vector<round_samples> g_prior_samples;  // the same rounds' samples
// case_spread_prior's fits, per family, of the rounds in g_prior.
std::map<std::string, std::map<std::string, spread_prior>> g_spread_priors;
// What each earlier round's process cost, in the order they ran.
std::vector<round_process> g_processes;
// Each case's wall in the latest earlier full round, by run name.
std::map<std::string, double> g_full_walls;

// `text` as a POSIX extended regular expression that matches it literally.
std::string literal_pattern(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c != '\0' && std::strchr(".[]{}()\\*+?^$|", c)) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

int rounds_of_case(round_kind kind) {
  const options& o = current_options();
  if (o.rounds < 2 || kind == round_kind::full) return o.rounds;
  return std::max(o.rounds, kind == round_kind::link ? o.link_rounds : o.host_rounds);
}

std::vector<std::string> round_arguments(const std::vector<std::string>& user_args, int round, int rounds,
                                         const std::string& out_path, const std::string& link_filter) {
  static const char* const kLastRoundOnly[] = {
      "--benchmark_out=", "--benchmark_out_format=", "--timeline=",   "--samples=", "--rounds=",
      "--round=",         "--benchmark_format=",     "--round_walls="};
  // A round of the link-bound cases alone selects them by name, and is too short for progress lines.
  static const char* const kNotInLinkRound[] = {"--benchmark_filter=", "--preset=", "--progress="};
  std::vector<std::string> out;
  for (const auto& a : user_args) {
    bool drop = false;
    for (const char* p : kLastRoundOnly) drop = drop || starts_with(a, p);
    if (!link_filter.empty())
      for (const char* p : kNotInLinkRound) drop = drop || starts_with(a, p);
    if (!drop) out.push_back(a);
  }
  if (!link_filter.empty()) {
    out.push_back("--benchmark_filter=" + link_filter);
    out.push_back("--progress=off");
  }
  out.push_back("--round=" + std::to_string(round) + "/" + std::to_string(rounds));
  out.push_back("--benchmark_out=" + out_path);
  out.push_back("--benchmark_out_format=json");
  // Every round runs its cases in the order the last round does (the user's own, shuffled only where the
  // user asks for it): a case then meets the state the same cases before it left (the driver's pinned and
  // device allocators, its queues) in every round and every run (docs/methodology.md, "The order of a
  // round's cases").
  return out;
}

std::vector<std::size_t> round_order(const std::vector<round_kind>& kinds) {
  std::vector<std::size_t> order;
  for (round_kind group : {round_kind::link, round_kind::host, round_kind::full})
    for (std::size_t i = 0; i < kinds.size(); ++i)
      if (kinds[i] == group) order.push_back(i);
  return order;
}

std::vector<std::string> link_round_cases(const std::string& user_filter, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : filter_matches(user_filter, names))
    if (is_link_bound(name) || takes_small_rounds(name)) out.push_back(name);
  return out;
}

std::vector<std::string> host_round_cases(const std::string& user_filter, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : filter_matches(user_filter, names))
    if (round_kind_of(name) == round_kind::host) out.push_back(name);
  return out;
}

std::string exact_names_filter(const std::vector<std::string>& names) {
  std::string alternatives;
  for (const std::string& name : names) alternatives += (alternatives.empty() ? "" : "|") + literal_pattern(name);
  return alternatives.empty() ? "" : "^(" + alternatives + ")$";
}

std::string link_round_filter(const std::string& user_filter, const std::vector<std::string>& names) {
  return exact_names_filter(link_round_cases(user_filter, names));
}

std::vector<std::vector<std::string>> extra_link_rounds(const std::vector<std::string>& link_cases, double tick_s) {
  const options& o = current_options();
  const int most = std::max(o.link_max_rounds, rounds_of_case(round_kind::link));
  std::vector<std::pair<std::string, int>> wanted;
  int rounds = 0;
  for (const std::string& name : link_cases) {
    const std::string base = without_manual_time(name);
    const std::vector<double> times = prior_round_times(base, 0);
    if (times.size() < 2) continue;
    // The rounds it will have: those run so far and the last.
    const int planned = static_cast<int>(times.size()) + 1;
    const int need =
        rounds_needed(times, case_spread_prior(base, tick_s), planned, most, o.target_detectable_pct / 100.0);
    if (need > planned) {
      wanted.emplace_back(name, need - planned);
      rounds = std::max(rounds, need - planned);
    }
  }
  std::vector<std::vector<std::string>> out(static_cast<std::size_t>(rounds));
  for (int k = 0; k < rounds; ++k)
    for (const auto& [name, extra] : wanted)
      if (extra > k) out[static_cast<std::size_t>(k)].push_back(name);
  return out;
}

double extra_round_cost_s(const std::vector<std::string>& cases, const std::map<std::string, double>& case_wall_s,
                          double start_s) {
  double costliest = 0;
  for (const auto& [name, wall] : case_wall_s) costliest = std::max(costliest, wall);
  double cost = start_s;
  for (const std::string& name : cases) {
    const auto it = case_wall_s.find(name);
    cost += it == case_wall_s.end() ? costliest : it->second;
  }
  return cost;
}

std::vector<std::vector<std::string>> extra_rounds_within(std::vector<std::vector<std::string>> plan,
                                                          const std::map<std::string, double>& case_wall_s,
                                                          double start_s, double budget_s) {
  double spent = 0;
  std::size_t kept = 0;
  for (; kept < plan.size(); ++kept) {
    const double cost = extra_round_cost_s(plan[kept], case_wall_s, start_s);
    if (spent + cost > budget_s) break;
    spent += cost;
  }
  plan.resize(kept);
  return plan;
}

bool next_extra_round_fits(double spent_s, double foreseen_s, double next_foreseen_s, double budget_s) {
  const double overrun = foreseen_s > 0 ? std::max(1.0, spent_s / foreseen_s) : 1.0;
  return spent_s + next_foreseen_s * overrun <= budget_s;
}

int run_round_process(const std::vector<std::string>& args, std::string& why, rusage* usage) {
  std::vector<std::string> argv_text{"/proc/self/exe"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    why = std::string("cannot start a round's process: ") + std::strerror(rc);
    return -1;
  }
  forward_interrupts_to(pid);
  int status = 0;
  while (wait4(pid, &status, 0, usage) < 0) {
    if (errno != EINTR) {
      forward_interrupts_to(0);
      why = std::string("cannot wait for a round's process: ") + std::strerror(errno);
      return -1;
    }
  }
  forward_interrupts_to(0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::vector<round_kind> child_round_order(int rounds, int link_extra, int host_extra) {
  std::vector<round_kind> order;
  const int full = std::max(0, rounds - 1);
  if (full == 0) return order;
  int links = 0, hosts = 0;
  for (int k = 1; k <= full; ++k) {
    order.push_back(round_kind::full);
    for (; links < std::max(0, link_extra) * k / full; ++links) order.push_back(round_kind::link);
    for (; hosts < std::max(0, host_extra) * k / full; ++hosts) order.push_back(round_kind::host);
  }
  return order;
}

int run_earlier_rounds(const std::vector<std::string>& user_args, int rounds,
                       const std::vector<std::string>& link_cases, int link_extra,
                       const std::vector<std::string>& host_cases, int host_extra, double tick_s, progress* shown,
                       double& timed_s) {
  timed_s = 0;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpu_bench_rounds.XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::fprintf(stderr,
                 "gpu_bench: warning: cannot make a folder for the rounds' results (%s); every figure "
                 "rests on one round\n",
                 std::strerror(errno));
    return 0;
  }
  const std::string link_filter = exact_names_filter(link_cases);
  if (link_filter.empty()) link_extra = 0;  // no link-bound case selected
  const std::string host_filter = exact_names_filter(host_cases);
  if (host_filter.empty()) host_extra = 0;
  int status = 0;
  // What the rounds cost: all of them, and in the rounds of the link-bound cases alone each case's wall time
  // and what the process cost beyond its cases (its start and end), the largest seen.
  double rounds_s = 0, start_s = 0;
  std::map<std::string, double> case_wall_s;
  // For the progress lines: the latest full round's cases' walls and what its process cost beyond them, and
  // each kind's latest process wall.
  std::map<std::string, double>& full_walls = g_full_walls;
  double full_start_s = 0;
  const std::string walls_path = dir + "/walls.tsv";  // full_walls, for the next full round's progress lines
  std::map<round_kind, double> kind_wall_s;
  // One round's process, its medians kept; false when it was interrupted. `filter`: "" for every case the
  // user selected, else a round of the cases it names alone (link-bound, host_rounds or extra). `label`
  // names it in gpu_bench.round_processes and its file in `dir`. Only the link-bound cases' processes say
  // what a case and a process's start cost the extra rounds.
  const auto run_one = [&](int k, const std::string& filter, const std::string& label) {
    const std::string path = dir + "/" + label + ".json";
    round_process record{label};
    std::string why;
    std::vector<std::string> args = round_arguments(user_args, k, rounds, path, filter);
    if (filter.empty() && !full_walls.empty()) args.push_back("--round_walls=" + walls_path);
    const cpu_times host_before = read_cpu_times();
    const auto started = std::chrono::steady_clock::now();
    rusage usage{};
    const int rc = run_round_process(args, why, &usage);
    record.host = host_load_of(host_before, read_cpu_times(), usage);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    rounds_s += took;
    record.wall_s = took;
    if (rc == 130 || rc == 128 + SIGINT || rc == 128 + SIGTERM) {
      std::remove(path.c_str());
      return false;
    }
    const std::string which = filter.empty()          ? "round " + std::to_string(k) + " of " + std::to_string(rounds)
                              : filter == host_filter ? "a round of the host-driven cases"
                                                      : "a round of the link-bound cases";
    round_medians medians;
    round_samples samples;
    double round_timed = 0;
    std::map<std::string, double> walls;
    if (rc < 0) {
      std::fprintf(stderr, "gpu_bench: warning: %s; the figures rest on the other rounds\n", why.c_str());
    } else if (const std::string bad = read_round_results(path, medians, round_timed, &walls, &samples); !bad.empty()) {
      std::fprintf(stderr,
                   "gpu_bench: warning: %s ended with exit status %d and left no results (%s); the figures "
                   "rest on the other rounds\n",
                   which.c_str(), rc, bad.c_str());
    } else {
      add_prior_round(medians, std::move(samples));
      timed_s += round_timed;
      record.timed_s = round_timed;
      for (const auto& [name, wall] : walls) record.cases_wall_s += wall;
      if (filter.empty()) {
        full_walls = walls;
        full_start_s = took - record.cases_wall_s;
        std::ofstream(walls_path) << walls_text(full_walls);
      }
      if (!filter.empty() && filter != host_filter) {
        for (const auto& [name, wall] : walls) case_wall_s[name] = wall;
        start_s = std::max(start_s, took - record.cases_wall_s);
      }
    }
    g_processes.push_back(record);
    std::remove(path.c_str());
    return true;
  };
  // A kind's process as long as its latest, or as its cases took in the latest full round where none ran yet.
  const auto foreseen_wall_s = [&](round_kind kind) {
    if (const auto it = kind_wall_s.find(kind); it != kind_wall_s.end()) return it->second;
    double s = full_start_s;
    for (const std::string& name : kind == round_kind::link ? link_cases : host_cases)
      if (const auto it = full_walls.find(name); it != full_walls.end()) s += it->second;
    return s;
  };
  const std::vector<round_kind> order = child_round_order(rounds, link_extra, host_extra);
  int k = 0, links = 0, hosts = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const round_kind kind = order[i];
    const std::string label = kind == round_kind::link   ? "link_" + std::to_string(++links)
                              : kind == round_kind::host ? "host_" + std::to_string(++hosts)
                                                         : "round_" + std::to_string(++k);
    const std::string filter = kind == round_kind::link ? link_filter : kind == round_kind::host ? host_filter : "";
    if (!run_one(std::max(k, 1), filter, label)) {
      status = 130;
      break;
    }
    kind_wall_s[kind] = g_processes.back().wall_s;
    if (kind == round_kind::full && shown) {
      std::vector<double> left;
      for (std::size_t j = i + 1; j < order.size(); ++j) left.push_back(foreseen_wall_s(order[j]));
      const double extra_share = link_filter.empty() ? 0.0 : kExtraRoundsShare;
      shown->say(
          round_done_line(k, rounds, kind_wall_s[kind], time_left_s(left, rounds_s, extra_share, kind_wall_s[kind])));
    }
  }
  // Then the link-bound cases whose rounds disagree, each in as many more rounds as its detectable change
  // needs to come to --target_detectable (up to --link_max_rounds in all).
  // They hold the cases of one GPU alone: a case of several makes a round's process open each of their
  // contexts and pin and fill each one's buffers (AllHost on four H200s: about 2 s for 0.4 s of samples), so
  // on a node it would spend the extra rounds' time where it sharpens least.
  if (status == 0 && !link_filter.empty()) {
    std::vector<std::string> bound;  // the link-bound cases alone: the small_rounds ones take no extra rounds
    for (const std::string& name : cases_on_one_gpu(link_cases))
      if (is_link_bound(name)) bound.push_back(name);
    const auto wanted = extra_link_rounds(bound, tick_s);
    const double budget_s = kExtraRoundsShare * rounds_s;
    const auto extra = extra_rounds_within(wanted, case_wall_s, start_s, budget_s);
    if (!wanted.empty() && shown)
      shown->say("gpu_bench: " + std::to_string(wanted.front().size()) +
                 " link-bound cases whose rounds disagree want up to " + std::to_string(wanted.size()) +
                 " more rounds to bring what they can detect towards --target_detectable; " +
                 std::to_string(extra.size()) + " fit the " +
                 std::to_string(static_cast<int>(100 * kExtraRoundsShare)) +
                 "% of the earlier rounds' time they may take");
    int extras = 0;
    double spent_s = 0, foreseen_s = 0;
    for (const auto& cases : extra) {
      const double next_s = extra_round_cost_s(cases, case_wall_s, start_s);
      if (!next_extra_round_fits(spent_s, foreseen_s, next_s, budget_s)) {
        if (shown)
          shown->say("gpu_bench: the extra rounds cost more than their cases' walls foresaw; " +
                     std::to_string(extras) + " of " + std::to_string(extra.size()) + " ran within that share");
        break;
      }
      const double before_s = rounds_s;
      if (!run_one(std::max(k, 1), exact_names_filter(cases), "extra_" + std::to_string(++extras))) {
        status = 130;
        break;
      }
      spent_s += rounds_s - before_s;
      foreseen_s += next_s;
    }
  }
  std::remove(walls_path.c_str());
  rmdir(dir.c_str());
  if (shown && status == 0) shown->start_round(rounds);
  return status;
}

const std::vector<round_process>& earlier_round_processes() {
  return g_processes;
}

const std::map<std::string, double>& earlier_full_round_walls() {
  return g_full_walls;
}

std::string round_processes_text(const std::vector<round_process>& processes) {
  std::string out;
  char part[160];
  for (const round_process& p : processes) {
    std::snprintf(part, sizeof part, "%s%s=%.2f/%.2f/%.2f", out.empty() ? "" : " ", p.label.c_str(), p.wall_s,
                  p.cases_wall_s, p.timed_s);
    out += part;
  }
  return out;
}

void add_prior_round(const round_medians& medians, round_samples samples) {
  g_prior.push_back(medians);
  g_prior_samples.push_back(std::move(samples));
  g_spread_priors.clear();
}

std::vector<double> prior_round_times(const std::string& name, int repetition) {
  std::vector<double> out;
  for (const auto& round : g_prior)
    if (const auto it = round.find({name, repetition}); it != round.end()) out.push_back(it->second);
  return out;
}

std::vector<std::vector<double>> prior_round_samples(const std::string& name, int repetition) {
  std::vector<std::vector<double>> out;
  for (const auto& round : g_prior_samples)
    if (const auto it = round.find({name, repetition}); it != round.end() && !it->second.empty())
      out.push_back(it->second);
  return out;
}

int prior_round_count() {
  return static_cast<int>(g_prior.size());
}

spread_prior case_spread_prior(const std::string& name, double tick_s) {
  const std::string family = name.substr(0, name.find('/'));
  auto fitted = g_spread_priors.find(family);
  if (fitted == g_spread_priors.end()) {
    const std::string prefix = family + "/";
    std::set<std::pair<std::string, int>> keys;  // every case of the family that any earlier round ran
    for (const auto& round : g_prior)
      for (auto it = round.lower_bound({prefix, 0}); it != round.end() && it->first.first.rfind(prefix, 0) == 0; ++it)
        keys.insert(it->first);
    std::vector<case_spread> cases;
    for (const auto& [case_name, repetition] : keys) {
      std::vector<double> times = prior_round_times(case_name, repetition);
      if (times.size() < 2) continue;
      std::vector<double> sorted = times;
      std::sort(sorted.begin(), sorted.end());
      // Rounds that agree to the timer's tick say only that their spread is below it.
      const double median = median_of_sorted(sorted);
      cases.push_back(spread_of(spread_group(case_name), times, median > 0 ? tick_s / median / 2 : 0.0));
    }
    fitted = g_spread_priors.emplace(family, fit_spread_priors(cases)).first;
  }
  const auto it = fitted->second.find(spread_group(name));
  return it == fitted->second.end() ? spread_prior{} : it->second;
}

}  // namespace gpu_bench
