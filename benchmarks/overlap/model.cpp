#include "benchmarks/overlap/model.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/measure/stats.hpp"

namespace gpu_bench {

std::vector<overlap_case> overlap_grid(bool full, const std::vector<std::uint64_t>& given_sizes) {
  constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
  const std::vector<int> stream_counts = {1, 2, 4, 8, 16, 32};
  const std::vector<mem_kind> mems = {mem_kind::pinned, mem_kind::pageable, mem_kind::write_combined,
                                      mem_kind::registered};
  const std::vector<sync_point> syncs = {sync_point::end, sync_point::per_stream, sync_point::per_chunk,
                                         sync_point::event_join};
  const std::vector<std::uint64_t> sizes =
      given_sizes.empty() ? std::vector<std::uint64_t>{16 * MiB, 64 * MiB, 512 * MiB, 1024 * MiB} : given_sizes;
  const std::vector<int> works = {1, 8, 64};
  std::vector<overlap_case> v;
  auto add = [&v](const overlap_case& c) {
    for (const auto& x : v)
      if (x.sched == c.sched && x.mem == c.mem && x.streams == c.streams && x.bytes == c.bytes && x.work == c.work &&
          x.sync == c.sync)
        return;
    v.push_back(c);
  };
  // Around one point: pinned, 512 MiB, work 1 (one sin/cos/sqrt term per element), one host wait.
  const overlap_case base{schedule::serial, mem_kind::pinned, 1, 512 * MiB, 1, sync_point::end};
  auto trio = [&](overlap_case c, int streams) {  // serial, and both pipelined schedules at `streams`
    c.sched = schedule::serial;
    c.streams = 1;
    c.sync = sync_point::end;
    add(c);
    for (schedule s : {schedule::depth_first, schedule::breadth_first}) {
      c.sched = s;
      c.streams = streams;
      add(c);
    }
  };
  if (full) {
    for (mem_kind m : mems)
      for (std::uint64_t n : sizes)
        for (int w : works) {
          overlap_case c = base;
          c.mem = m;
          c.bytes = n;
          c.work = w;
          add(c);  // serial
          for (schedule s : {schedule::depth_first, schedule::breadth_first})
            for (int st : stream_counts)
              for (sync_point sp : syncs) add({s, m, st, n, w, sp});
        }
    return v;
  }
  const std::vector<std::uint64_t> centres = given_sizes.empty() ? std::vector<std::uint64_t>{base.bytes} : given_sizes;
  for (std::uint64_t centre : centres) {
    overlap_case b = base;
    b.bytes = centre;
    add(b);
    for (schedule s : {schedule::depth_first, schedule::breadth_first})
      for (int st : stream_counts) add({s, b.mem, st, b.bytes, b.work, sync_point::end});
    for (sync_point sp : {sync_point::per_stream, sync_point::per_chunk, sync_point::event_join})
      for (schedule s : {schedule::depth_first, schedule::breadth_first}) add({s, b.mem, 8, b.bytes, b.work, sp});
    for (mem_kind m : {mem_kind::pageable, mem_kind::write_combined, mem_kind::registered}) {
      overlap_case c = b;
      c.mem = m;
      trio(c, 8);
    }
    for (int w : {8, 64}) {
      overlap_case c = b;
      c.work = w;
      trio(c, 8);
    }
  }
  if (given_sizes.empty()) {
    for (std::uint64_t n : {16 * MiB, 64 * MiB, 1024 * MiB}) {
      overlap_case c = base;
      c.bytes = n;
      trio(c, 8);
    }
  }
  return v;
}

case_name overlap_name(const overlap_case& c) {
  case_name n("Overlap");
  n.add("schedule", to_name(c.sched))
      .add("mem", to_name(c.mem))
      .add("streams", c.streams)
      .add("bytes", c.bytes)
      .add("work", c.work)
      .add("sync", to_name(c.sync));
  return n;
}

bool overlap_gated(const overlap_case& c) {
  return !enqueue_may_block(c.mem) && c.sync != sync_point::per_chunk;
}

std::vector<std::pair<std::size_t, std::size_t>> chunk_bounds(std::size_t elements, int chunks) {
  if (chunks < 1) throw std::invalid_argument("at least one chunk");
  constexpr std::size_t kAlign = 64;
  std::vector<std::pair<std::size_t, std::size_t>> b;
  std::size_t begin = 0;
  for (int i = 0; i < chunks; ++i) {
    std::size_t end = elements * static_cast<std::size_t>(i + 1) / static_cast<std::size_t>(chunks);
    if (i + 1 < chunks) end = std::min(elements, (end + kAlign - 1) / kAlign * kAlign);
    end = std::max(end, begin);
    b.emplace_back(begin, end);
    begin = end;
  }
  return b;
}

bound_lines overlap_bound_lines(const stage_times& t, int chunks) {
  const double s = static_cast<double>(chunks);
  const double ends = (t.in_s + t.out_s) / s;
  const double rest = 1.0 - 1.0 / s;
  double middle = rest * 2.0 * std::min(t.in_s, t.out_s);
  if (t.bidir_in_s > 0 && t.bidir_out_s > 0)
    middle = std::min(middle, rest * 2.0 / (1.0 / t.bidir_in_s + 1.0 / t.bidir_out_s));
  if (t.both_s > 0) middle = std::min(middle, std::max(0.0, t.both_s - ends));
  double link = ends + middle;
  if (chunks > 1 && t.in_s > 0 && t.out_s > 0 && t.kernel_s > 0) {
    // No copy out starts before one chunk's copy in and kernel (`first`), and no copy in runs after the
    // last chunk's copy in, whose kernel and copy out follow (`last`): one direction idles through each.
    // What the other direction can move meanwhile, at its rate alone, leaves `left` payloads for the rest,
    // at the fastest rate both ways (middle / (2 rest) a payload). Never above the chained stage, as above.
    const double first = (t.in_s + t.kernel_s) / s, last = (t.kernel_s + t.out_s) / s;
    const double left = std::max(0.0, (1.0 - first / t.in_s) + (1.0 - last / t.out_s));
    double idle_ends = first + last + left * middle / (2.0 * rest);
    if (t.both_s > 0) idle_ends = std::min(idle_ends, t.both_s);
    link = std::max(link, idle_ends);
  }
  return {link, t.in_s / s + t.kernel_s + t.out_s / s, t.in_s + (t.kernel_s + t.out_s) / s,
          (t.in_s + t.kernel_s) / s + t.out_s};
}

double overlap_ideal_s(const stage_times& t, int chunks) {
  const bound_lines l = overlap_bound_lines(t, chunks);
  return std::max({l.link, l.kernels, l.in, l.out});
}

double union_length(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0;
  bool open = false;
  double begin = 0, end = 0;  // the run of overlapping intervals being merged
  for (const auto& [b, e] : intervals) {
    if (!(e > b)) continue;
    if (open && b <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) total += end - begin;
    begin = b;
    end = e;
    open = true;
  }
  if (open) total += end - begin;
  return total;
}

stage_times own_ops_turn(const op_spans& spans, int chunks) {
  const double in = union_length(spans.in), kernel = union_length(spans.kernel), out = union_length(spans.out);
  return {in, out, chunks == 1 ? in + out : 0.0, kernel, 0, 0};
}

stage_times fastest_stages(const std::vector<stage_times>& turns) {
  stage_times best{0, 0, 0, 0, 0, 0};
  auto keep = [](double& into, double v) {
    if (v > 0 && (into == 0 || v < into)) into = v;
  };
  for (const stage_times& t : turns) {
    keep(best.in_s, t.in_s);
    keep(best.out_s, t.out_s);
    keep(best.both_s, t.both_s);
    keep(best.kernel_s, t.kernel_s);
    keep(best.bidir_in_s, t.bidir_in_s);
    keep(best.bidir_out_s, t.bidir_out_s);
  }
  return best;
}

paired_efficiency efficiency_over_turns(double bound_s, const std::vector<double>& pipeline_s) {
  std::vector<double> ratios;
  for (double p : pipeline_s)
    if (p > 0) ratios.push_back(bound_s / p);
  if (ratios.empty()) return {};
  std::sort(ratios.begin(), ratios.end());
  return {median_of_sorted(ratios), ratios.front(), ratios.back()};
}

}  // namespace gpu_bench
