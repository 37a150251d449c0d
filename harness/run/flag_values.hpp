#pragma once
// How gpu_bench's own flags read their values (flags.cpp): numbers within bounds, words, and the options some
// values set. Each refusal is a usage_error whose sentence names the flag and what it takes.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "harness/run/flags.hpp"

namespace gpu_bench::flag_values {

std::string format_number(double v);
// Whether `arg` is `flag=VALUE`; VALUE into `value`.
bool take_value(std::string_view arg, std::string_view flag, std::string& value);
// Whether `arg` is `flag` alone, or `flag=` true, 1 or yes.
bool flag_is_true(std::string_view arg, std::string_view flag);
// A number from `lo` to `hi`, a trailing 's' allowed.
double parse_seconds(const std::string& text, const char* flag, double lo, double hi);
// A whole number from `lo` to `hi`.
long parse_int(const std::string& text, const char* flag, long lo, long hi);
// The refusal of most value flags given bare.
std::string needs_value(const std::string& name);
// `value` as a whole number from `lo` to `hi`, or as one of `words`; else a usage error that says what `flag`
// takes (`takes`).
int number_or_word(const std::string& value, const char* flag, long lo, long hi,
                   std::initializer_list<std::pair<const char*, int>> words, const char* takes);
void take_device(options& o, const std::string& value);
void take_sizes(options& o, const std::string& value);
void take_cpu(options& o, const std::string& value);
void take_health_poll(options& o, const std::string& value);
void take_round(options& o, const std::string& value);
void take_min_time(options& o, const std::string& value);
// A value flag's refusal for a word outside `words` ("on or off").
void check_word(const std::string& value, const char* flag, std::initializer_list<const char*> words,
                const char* listed);

}  // namespace gpu_bench::flag_values
