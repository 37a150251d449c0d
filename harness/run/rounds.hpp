#pragma once
// Rounds: a case's figure rests on several independent runs of it, each in its own process, because the
// variance that separates one run from the next enters per process (where its buffers land, its CUDA
// context, its calibrations: docs/methodology.md). The process a user starts runs rounds 1 to R-1 as child
// processes of itself, each over every selected case in the last round's order, then the last round itself; each
// case then reports the center of its rounds' medians and an interval that the next run's figure falls in.
// Link-bound cases (registry.hpp) take --link_rounds rounds: the extra ones hold only those cases, each run
// between two of the others so that the case's rounds meet the link at moments far apart. The cheap cases a
// family's small_rounds rule names (small copies, host-timed calls) ride in those rounds too. The cases a
// family's host_rounds rule names take --host_rounds rounds the same way, in processes of their own.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/measure/stats.hpp"
#include "harness/run/host_load.hpp"

namespace gpu_bench {

// The rounds a case takes beside every case's, and the processes that run them: `full`, a round of every
// selected case; `link`, of the link-bound cases alone; `host`, of the cases a family's host_rounds rule
// names alone.
enum class round_kind { full, link, host };

// The order a round runs cases of these kinds in, as indices into `kinds`: the link rounds' cases, then the
// host rounds', then the rest, each group in its given order. A case follows the cases its process ran before it
// (the buffers they left, the allocators' state); this way it meets the same ones in every round it takes.
std::vector<std::size_t> round_order(const std::vector<round_kind>& kinds);

// How many rounds a case of `kind` takes: --rounds, or --link_rounds (link) or --host_rounds (host) where
// that is more (and --rounds is at least 2: one round is one process, whatever the case).
int rounds_of_case(round_kind kind);

// The arguments (without the program's name) a child round runs with: the user's own, less those only the
// last round honours (the output file and its format, --timeline, --samples, --rounds, --benchmark_format),
// plus the round's number and its own JSON output. A round of the link-bound cases
// alone gets `link_filter` (link_round_filter) in place of the user's filter or preset, and no progress lines.
std::vector<std::string> round_arguments(const std::vector<std::string>& user_args, int round, int rounds,
                                         const std::string& out_path, const std::string& link_filter = "");

// The cases the link rounds run among `names` (registered names) that `user_filter` selects: the link-bound
// ones and those that take the small rounds (registry.hpp)...
std::vector<std::string> link_round_cases(const std::string& user_filter, const std::vector<std::string>& names);
// ... and those that take --host_rounds.
std::vector<std::string> host_round_cases(const std::string& user_filter, const std::vector<std::string>& names);
// A --benchmark_filter that selects exactly `names`; "" for none.
std::string exact_names_filter(const std::vector<std::string>& names);
// exact_names_filter(link_round_cases(user_filter, names)).
std::string link_round_filter(const std::string& user_filter, const std::vector<std::string>& names);

// The further rounds of the link-bound cases (registered names) whose rounds so far disagree: each case
// takes as many more as rounds_needed says its detectable change needs to come to --target_detectable,
// up to --link_max_rounds in all; entry k holds the cases of extra round k + 1 (a case that needs j more is
// in the first j). Read from the earlier rounds' medians (add_prior_round); `tick_s` as case_spread_prior's.
// Only the link-bound cases take them: their rounds cost about a second all together, and it is on the
// link that others' traffic spreads a case's rounds most; run_earlier_rounds passes those of one GPU alone.
std::vector<std::vector<std::string>> extra_link_rounds(const std::vector<std::string>& link_cases, double tick_s);

// The extra rounds may cost at most this share of the time the rounds before them took: a round is a process
// whose start alone costs a second and more on a node of four GPUs, so a short run (the gate preset) takes
// few or none, and the default at most a tenth more.
inline constexpr double kExtraRoundsShare = 0.1;
// The first rounds of `plan` (extra_link_rounds) whose cost all together fits `budget_s`: each round a
// process's start (`start_s`) and its cases' wall time in one round (`case_wall_s`, by registered name; a case
// not there costs as much as the costliest one that is).
std::vector<std::vector<std::string>> extra_rounds_within(std::vector<std::vector<std::string>> plan,
                                                          const std::map<std::string, double>& case_wall_s,
                                                          double start_s, double budget_s);

// What one extra round of `cases` is foreseen to cost, as extra_rounds_within counts it.
double extra_round_cost_s(const std::vector<std::string>& cases, const std::map<std::string, double>& case_wall_s,
                          double start_s);
// Whether the next extra round, foreseen at `next_foreseen_s`, still fits `budget_s` after rounds that took
// `spent_s` against `foreseen_s` foreseen. The rounds can cost more than their cases' walls in the link rounds
// foresaw (a case alone may pin and fill buffers it shared there with other cases): the next is scaled by
// that overrun, never by less than 1, so the run stays within kExtraRoundsShare.
bool next_extra_round_fits(double spent_s, double foreseen_s, double next_foreseen_s, double budget_s);

// Runs this program again with `args`, its stdout discarded and stderr shared; returns its exit status, 128
// plus the signal that ended it, or -1 (with `why` set) when it could not be started. `usage`, where given, gets
// the process's resource usage: its CPU time and preemptions.
int run_round_process(const std::vector<std::string>& args, std::string& why, rusage* usage = nullptr);

class progress;

// The order of the child rounds: rounds 1 to rounds-1 of every case (full), with `link_extra` rounds of the
// link-bound cases alone (link) and then `host_extra` of the host_rounds cases alone (host) spread evenly after
// them, so that each meets the machine a round's length away from those cases' other rounds.
std::vector<round_kind> child_round_order(int rounds, int link_extra, int host_extra = 0);

// Runs rounds 1 to rounds-1 of `user_args`, one process after the other, and `link_extra` rounds of
// `link_cases` (link_round_cases) and `host_extra` of `host_cases` (host_round_cases) spread between them, then the
// extra rounds extra_link_rounds asks for that fit kExtraRoundsShare of the time those took (extra_rounds_within), and
// keeps each round's medians for the last round (add_prior_round). A round that fails or writes nothing is said so in
// one line and the figures rest on the others. Returns 0, or 130 when a round was interrupted; `timed_s` is the rounds'
// timed sample time.
int run_earlier_rounds(const std::vector<std::string>& user_args, int rounds,
                       const std::vector<std::string>& link_cases, int link_extra,
                       const std::vector<std::string>& host_cases, int host_extra, double tick_s, progress* shown,
                       double& timed_s);

// One earlier round's process: `label` round_K (every selected case), link_K (the link-bound cases alone),
// host_K (the host_rounds cases alone) or extra_K (link-bound cases whose rounds disagree); its wall time from spawn to
// exit, its cases' wall time and their timed samples, in seconds (0 where the round left no results).
struct round_process {
  std::string label;
  double wall_s = 0, cases_wall_s = 0, timed_s = 0;
  host_load host{};  // what else the host did meanwhile
};
// The processes run_earlier_rounds ran, in order.
const std::vector<round_process>& earlier_round_processes();
// Each case's wall in the latest of those that ran every selected case, by run name: what the last round's
// progress lines foresee by.
const std::map<std::string, double>& earlier_full_round_walls();
// "label=wall/cases/timed ..." (seconds, two decimals), the run's gpu_bench.round_processes.
std::string round_processes_text(const std::vector<round_process>& processes);

// Each case run's median sample time, in seconds, by (case name without /manual_time, repetition index).
using round_medians = std::map<std::pair<std::string, int>, double>;

// Each case run's timed samples, in seconds, keyed as round_medians.
using round_samples = std::map<std::pair<std::string, int>, std::vector<double>>;

// The medians the earlier rounds measured, and their samples, read from their output files; main sets them
// before the last round runs. A case that failed in a round has no entry for it.
void add_prior_round(const round_medians& medians, round_samples samples = {});
std::vector<double> prior_round_times(const std::string& name, int repetition);
// The samples of each earlier round the case ran in, in the order the rounds ran: with the last round's they
// make the case's sample percentiles (sample_p50_us, ...).
std::vector<std::vector<double>> prior_round_samples(const std::string& name, int repetition);
int prior_round_count();

// The prior for a case's spread between rounds (combine_rounds): fitted (fit_spread_priors) on the earlier
// rounds of every case of its family that ran in two or more of them, each case's variance in the group of
// cases expected to share it (spread_group), where `tick_s` bounds how small a spread the rounds can show;
// none (dof 0) where its group holds too few cases.
spread_prior case_spread_prior(const std::string& name, double tick_s);

}  // namespace gpu_bench
