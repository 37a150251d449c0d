#pragma once
// gpu_bench's flags, each declared once: how it is parsed, what --help says of it, and its row of the
// README's flag table (scripts/flags_md.py writes that table from gpu_bench --flags_markdown).
#include <string>
#include <vector>

#include "harness/run/options.hpp"

namespace gpu_bench {

// The two lists of flags in --help.
enum class flag_section { own, google_benchmark };

struct flag {
  std::string name;  // what argv holds before any '=': "--rounds"
  bool takes_value;  // --name=VALUE; else the bare --name
  // The value taken into the options, throwing usage_error for a bad one; nullptr where another entry of
  // the same name parses it (--device=all) or Google Benchmark does.
  void (*take)(options& o, const std::string& value);
  // The refusal of a value flag given without one; empty: the bare name is left for Google Benchmark.
  std::string without_value;
  flag_section section;
  std::string spelling;  // --help's first column: "--rounds=N"; empty for a flag gpu_bench runs itself with
  std::string help;      // the lines --help prints beside it, without their indentation
  std::string summary;   // the README's one line (Markdown); empty: no row
};

// Every flag, in --help's order.
const std::vector<flag>& flags();

// Takes `arg` into `o` where a flag's entry parses it (--name, or --name=VALUE for a value flag) and says
// so; false leaves it for Google Benchmark. Throws usage_error for a bad or missing value.
bool take_flag(options& o, const std::string& arg);

// One section of --help's flag lists: each spelling, then its help in a column.
std::string flags_help(flag_section section);

// The README's flag table: a heading row, then one row for each flag with a summary.
std::string flags_markdown();

}  // namespace gpu_bench
