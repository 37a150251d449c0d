#pragma once
// Families describe and register themselves from their own folder (a static `family_registration`), so
// adding a family touches nothing outside it: main asks the registry to register every family's cases
// after the flags are parsed, and writes every family's descriptor into the JSON context for the tools.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/context/context_format.hpp"
#include "harness/run/case_name.hpp"
#include "harness/run/enum_names.hpp"
#include "harness/run/rounds.hpp"

namespace gpu_bench {

// Where a family's cases run: on one GPU (the one --device selects, or under --device=all each visible
// GPU in turn), or across several GPUs that the cases name themselves.
enum class family_scope { single_gpu, multi_gpu };
// Which way the headline figure improves.
enum class better { higher, lower };
// How the headline follows one sample's time: a rate (bytes or work over time) or a time.
enum class headline_kind { rate, time, other };

template <>
inline constexpr enum_entries<family_scope, 2> enum_names<family_scope> = {
    {{family_scope::single_gpu, "single_gpu"}, {family_scope::multi_gpu, "multi_gpu"}}};
template <>
inline constexpr enum_entries<better, 2> enum_names<better> = {{{better::higher, "higher"}, {better::lower, "lower"}}};
template <>
inline constexpr enum_entries<headline_kind, 3> enum_names<headline_kind> = {
    {{headline_kind::rate, "rate"}, {headline_kind::time, "time"}, {headline_kind::other, "other"}}};

// One key of a family's case names, and how the help's name pattern writes its values.
struct axis {
  std::string key;     // a lower-case token, as in the names
  std::string values;  // after key: in the pattern: "{h2d,d2h}", "{N}", "remote"
  bool always = true;  // whether every case's name carries it; the pattern brackets the others: [/key:values]
};
// An axis only some of a family's cases carry.
inline axis optional_axis(std::string key, std::string values) {
  return axis{std::move(key), std::move(values), false};
}

// An axis as one line of the help's name patterns shows it: its declared values, or those given here.
struct shown_axis {
  shown_axis(const char* k) : key(k) {}  // NOLINT(google-explicit-constructor): {"op", "bytes"} reads best
  shown_axis(std::string k, std::string v) : key(std::move(k)), values(std::move(v)) {}
  std::string key;
  std::string values;  // empty: the axis's declared values
};

// Everything the harness and the tools know of a family (docs/json.md spells its context keys), declared by
// named fields in the lambda a family_registration runs.
// From this size a copy's time is the link's throughput more than its fixed costs: the smallest link-bound case,
// and the size from which a small_rounds case keeps --rounds unless its family says otherwise.
inline constexpr std::uint64_t kLinkBoundFromBytes = 1ull << 20;

struct family_descriptor {
  std::string name;        // starts every case name: a capitalised word
  std::string summary;     // one line for --help and the context
  std::vector<axis> axes;  // the name's keys in order: the names, the help's patterns and the context follow
  std::string help;        // name patterns (name_pattern), axes, counters and how bytes are counted
  std::string headline;    // the counter that is a case's figure, or "real_time"
  std::string unit;        // the headline's unit: "GB/s", "us"
  better better_is = better::higher;
  headline_kind kind = headline_kind::rate;
  // Whether a case crosses the host link: "yes", "no", or tokens joined by '|', any of which holding means
  // yes. A key:value token holds where the case's name has it; key>=N where the name's value of key is a whole
  // number, N or more. A low-power link state during a case that does not cross it says nothing.
  std::string host_link = "no";
  std::string plot;  // generic-plot hints: "x=bytes;series=mem;panel=dir", each a declared axis
  family_scope scope = family_scope::single_gpu;
  // A --benchmark_filter that selects a few small cases covering every code path of the family (run with
  // --sizes=64K by scripts/sanitize.sh); empty selects all.
  std::string smoke;
  // A --benchmark_filter that selects the family's cases in --preset=gate (the short check a fleet runs on
  // every node); empty: none.
  std::string gate;
  std::function<void()> register_cases;
  // Whether a case's figures are the host's rather than the GPU's (host-clock times of API calls, time the
  // CPU is held), so that the tools compare them only between hosts of one CPU model and count: "yes",
  // "no", or key:value tokens joined by '|', as host_link.
  std::string host_side = "no";
  // Whether a case's figure is the host link's own throughput (a copy straight from or to page-locked host
  // memory), which traffic of others on a shared link moves over seconds: "yes", "no", or key:value tokens
  // joined by '|', as host_link; only cases of 1 MiB and more by their bytes axis count. Such a case is
  // measured in --link_rounds rounds, the extra ones between the others, so that its figure averages
  // over more moments of the link's load (docs/methodology.md).
  std::string link_bound = "no";
  // Which link-bound cases' figure follows how the link shares itself between two directions at once: "no",
  // or key:value tokens joined by '|', as host_link. That sharing changes over tenths of a second while the
  // samples of one moment agree with each other, so such a case samples each round for at least
  // kLinkStateSpanS of wall time: a round's median then spans several of the link's states, not one.
  std::string link_span = "no";
  // Which cases are timed by the host's own work and take --host_rounds rounds, in processes of their own: "yes",
  // "no", or key:value tokens joined by '|', as host_link. The CPU's state on a virtual machine moves them over
  // seconds, and in most default runs their rounds differ within a run as much as between runs; so more rounds,
  // run between the others, narrow their interval (docs/methodology.md, "More rounds for the host-driven
  // cases"). The cheapest such cases ride the link rounds instead (small_rounds).
  std::string host_rounds = "no";
  // Which cheap cases take --link_rounds rounds, run with the link-bound cases in their rounds' processes (but
  // never in the extra rounds those take where their rounds disagree): "yes", "no", or key:value tokens joined
  // by '|', as host_link; of a case with a bytes axis, only one under small_rounds_below. A small copy's fixed
  // cost follows where its buffers and streams landed, a draw of each process that rotating its placements
  // narrows but does not remove. A host-timed call (an event record, a launch) or a pageable copy follows the
  // host's state, a draw of each process. Each costs milliseconds a round, so five rounds cost the run seconds
  // (docs/methodology.md). Every round runs these cases first (round_order), so each meets the same cases before
  // it in every round.
  std::string small_rounds = "no";
  // The size from which a case of the small_rounds rule no longer rides the link rounds (of a case with a bytes
  // axis): 1 MiB, where a pinned copy runs at the link's rate; larger where a family's costlier cases stay cheap.
  std::uint64_t small_rounds_below = kLinkBoundFromBytes;
  // Which cases sample on a CPU in its fast state under --cpu=fast (thread_cpu.hpp): "yes", "no", or key:value
  // tokens joined by '|', as host_link. Those the host's own work times or paces, and the pageable copies the
  // CPU stages. Their buffers' fills and checks run on every CPU the process started with (parallel_slices,
  // pattern.hpp): held on one, a managed copy's took up to three times the wall time.
  std::string fast_cpu = "no";
  // Which cases vary between processes with the machine's own state, which gpu_bench cannot remove (a virtual
  // machine's CPU speed, say): "yes", "no", or key:value tokens joined by '|', as host_link. The tools then show
  // machine_variance_cause in words in place of a wide interval (docs/methodology.md).
  std::string machine_variance = "no";
  // What such a case varies with, as words that follow "varies with": required where machine_variance is not
  // "no", empty where it is.
  std::string machine_variance_cause;
  // Which cases gpu_bench measures in a way its earlier versions did not: "N=RULE" entries joined by ';', N
  // the way's number (2 and up) and RULE tokens joined by '|', as host_link. A case takes the
  // highest N whose rule holds, and way 1 where none does. The tools compare a case's figures only between
  // files that measured it the same way (docs/json.md); CHANGELOG.md says what each way changed.
  std::string revisions;
  // The axes whose values set how far a case varies between processes (docs/methodology.md): those of these
  // the family declares, with the case's size band (spread_group), make the group of cases a case's spread
  // between rounds is judged beside.
  std::vector<std::string> spread_axes = {"mem", "dir"};
  // The smallest size a case of the family can take (0: any that --sizes accepts): a --sizes list with a
  // smaller size is refused before any case runs where the filter selects a case of the family.
  std::uint64_t min_bytes = 0;
  // How many buffers of its size one case holds at once, in GPU or in host memory: 2 for a copy (d2d and
  // bidir hold two on the GPU, bidir two of pinned host memory), 1 for a case of one buffer (Latency's
  // footprint). A --sizes list is refused before any case runs where this many of its largest size do not
  // fit in the GPU's free memory or the host's available memory, for the most any selected family holds.
  unsigned buffers_of_size = 2;

  // One line of the help's name patterns, "  Name/key:values/...\n": every axis, those not always carried
  // in brackets; or only the axes `shown` (declared ones, in their declared order), as some of the
  // family's cases carry them. With `break_before`, the pattern goes on in a second line from that axis.
  // Throws std::logic_error for an axis not declared or out of order.
  std::string name_pattern(const std::vector<shown_axis>& shown = {}, const std::string& break_before = "") const;
  std::vector<std::string> axis_keys() const;
};

// The machine_variance_cause of the families whose cases are timed by host work or take the driver's host path:
// on a virtual machine a process draws a fast or a slow CPU, and the driver's host work follows it.
inline constexpr const char* kHostCpuStateCause =
    "the host CPU's state, which a virtual machine changes between processes (host.clock_read_ns)";
// The machine_variance_cause of copies from or to pageable or managed memory. The CPU stages a pageable copy at
// the speed of its state at the moment, not by which CPU it is; what is left follows the host's memory. A small
// faulted managed copy's time holds within a process and differs between processes by steps of a few
// microseconds, whichever CPU state or cases before it the process had (docs/methodology.md, "What the interval
// does not yet hold"). A managed prefetch, timed by the host clock, follows the CPU's state and the host's memory.
inline constexpr const char* kPageableCopyCause =
    "the host CPU's state and the host's memory, which a virtual machine changes between processes, and for "
    "managed memory the latency the driver's page migration settles on in each process";

// Declares a family from its own file, before main runs:
//   const family_registration registration{[](family_descriptor& f) { f.name = "Transfer"; ... }};
// Throws std::logic_error (ending the program before main) where the declaration is malformed.
struct family_registration {
  explicit family_registration(const std::function<void(family_descriptor&)>& declare);
};

// "" when `d` is a well-formed declaration, else what is wrong: a name that cannot start a case name, an
// axis key that is not a token or is repeated (or is "device", which --device=all appends), no headline,
// unit or cases, a host_link or plot hint naming a key that is not a declared axis, no buffers_of_size, and a
// machine_variance rule without a cause (or a cause without a rule).
std::string declaration_problem(const family_descriptor& d);

// "" when a case of `d` may be named `name`: the family's own name, and keys that are its declared axes in
// their order, every axis it always carries among them. Else the reason.
std::string case_name_problem(const family_descriptor& d, const case_name& name);

const std::vector<family_descriptor>& families();

// The context keys family.<slug>.* of every family (docs/json.md).
context_list family_context();

// --preset=gate's --benchmark_filter: every family's gate filter, joined.
std::string gate_filter();

// What the largest size of a --sizes list, `largest`, needs of the GPU's or the host's memory: `buffers`, the
// most buffers_of_size of the families with a case among `names` that `filter` selects (0: none selected),
// and `bytes`, that many buffers of `largest`.
struct size_need {
  unsigned buffers = 0;
  std::uint64_t bytes = 0;
};
size_need memory_for_size(std::uint64_t largest, const std::string& filter, const std::vector<std::string>& names);

// The group of cases that a case named `name` is expected to share its spread between processes with: its
// family, the values of the family's spread_axes it carries, and the band of its bytes axis (size:small
// under 64 KiB, where a copy's time is mostly fixed costs; size:medium under 1 MiB; size:large from 1 MiB,
// where a copy runs at its link's throughput), e.g. "Transfer/dir:d2h/mem:pinned/size:large". A family not
// registered (a unit test's made-up names) is grouped by mem and dir.
std::string spread_group(const std::string& name);

// The registered family a case named `name` belongs to (its name's first part); null for none.
const family_descriptor* family_of_case(const std::string& name);
// `text` cut at every `sep`: n separators give n + 1 parts, empty ones included.
std::vector<std::string> split(const std::string& text, char sep);
// `text` as a whole number: decimal digits alone, at most 19 of them (so it fits); nothing otherwise.
std::optional<std::uint64_t> whole_number(const std::string& text);

// Whether a case of `d` named `name` crosses the host link, by the descriptor's host_link rule.
bool crosses_host_link(const family_descriptor& d, const std::string& name);

// Whether a case of `d` named `name` is link-bound, by the descriptor's link_bound rule and its size.
bool is_link_bound(const family_descriptor& d, const std::string& name);
// Whether it is link-bound and its link_span rule holds: each of its rounds samples for kLinkStateSpanS.
bool spans_link_states(const family_descriptor& d, const std::string& name);
// The least wall time a round of such a case samples for (docs/methodology.md, "A bidirectional copy samples
// each round for at least 0.3 s").
inline constexpr double kLinkStateSpanS = 0.3;
// The same for a registered case, by its name alone (its family found from the name); false for a name of
// no family.
bool is_link_bound(const std::string& name);

// Whether a case of `d` named `name` takes --host_rounds rounds, by the descriptor's host_rounds rule; the same
// for a registered case by its name alone (false for a name of no family).
bool takes_host_rounds(const family_descriptor& d, const std::string& name);
bool takes_host_rounds(const std::string& name);
// Whether a case of `d` named `name` takes --link_rounds rounds beside the link-bound cases, by the descriptor's
// small_rounds rule and its size (under the family's small_rounds_below, where it has one); the same for a registered
// case by its name alone.
bool takes_small_rounds(const family_descriptor& d, const std::string& name);
bool takes_small_rounds(const std::string& name);

// Which rounds a case of `d` named `name` takes: link where it is link-bound or takes the small rounds, else
// host where it takes
// --host_rounds, else full; the same for a registered case by its name alone (full for a name of no family).
round_kind round_kind_of(const family_descriptor& d, const std::string& name);
round_kind round_kind_of(const std::string& name);

// Whether a case of `d` named `name` varies with the machine's own state, by the descriptor's machine_variance rule.
bool varies_with_machine(const family_descriptor& d, const std::string& name);
// Whether a case of `d` named `name` samples on a CPU in its fast state under --cpu=fast, by its fast_cpu rule.
bool holds_fast_cpu(const family_descriptor& d, const std::string& name);

// How often, milliseconds, NVML reads the GPUs of a case of `d` named `name` while it runs: `poll_ms`
// (--health_poll), or 0 (only at its start and end) for a case that varies with the machine's state. Such a
// case's figure is the host's work, and a reading's driver calls beside it widen its spread between
// rounds (docs/methodology.md, "NVML's readings during a case").
int health_poll_ms_for(const family_descriptor& d, const std::string& name, int poll_ms);

// Registers every family's cases: the single-GPU families once for each of `devices` in turn (every case
// of the first device, then every case of the next), their names ending in /device:N when `name_devices`;
// then the multi-GPU families, once. Google Benchmark gets them in round_order: the cases of the link rounds
// first, so each meets the same cases before it in a full round as in a link round.
void register_all_families(const std::vector<int>& devices, bool name_devices);

// Registers the cases of one family, on `device` (-1 for a multi-GPU family), as register_all_families does.
void register_family(const family_descriptor& f, int device, bool name_device);

// Registers one case of the family being registered: manual time, microseconds. An exception out of `fn`
// fails the case with its message. A single-GPU family's case runs on the device being registered, made
// current before `fn` starts, and names in `gpus` only the other GPUs it also uses (another GPU's memory it
// reads); a multi-GPU family's case names in `gpus` every GPU it uses and makes current whichever it
// needs. Every GPU a case uses is sampled for health and keeps its cached buffers. Throws std::logic_error
// for a name case_name_problem refuses. No per-case MinTime: Google Benchmark would write it into the
// case's name. `configure`, where given, sets more of the case in Google Benchmark (its statistics). Outside
// register_all_families the case reaches Google Benchmark at once.
void register_case(const case_name& name, std::function<void(benchmark::State&)> fn, std::vector<int> gpus = {},
                   std::function<void(benchmark::internal::Benchmark*)> configure = {});

// The device whose cases a single-GPU family's register_cases is registering; -1 for a multi-GPU family's,
// or outside any registration.
int registering_device();

// Every name registered so far, as Google Benchmark will report it (with /manual_time).
const std::vector<std::string>& registered_names();

// The GPUs the registered cases that `filter` selects run on, in order: a process touches no other GPU.
std::vector<int> gpus_of_selected_cases(const std::string& filter);

// Those of `names` (registered names) whose case runs on one GPU.
std::vector<std::string> cases_on_one_gpu(const std::vector<std::string>& names);

// The GPUs whose cached host buffers are never freed for the cache's bound on host bytes
// (buffer_cache::keep_within) while a case of `case_gpus` runs where a run measures one GPU (--device=N,
// `home_gpu` N; -1 for none): the case's own, and N's, which most of the run's cases use (a case between
// two other GPUs would otherwise free them, and the next case pin and fill them all again).
std::vector<int> gpus_kept_for(const std::vector<int>& case_gpus, int home_gpu);

// The running case's name as registered (without /manual_time), e.g. for its timeline entry.
const std::string& current_case_name();

}  // namespace gpu_bench
