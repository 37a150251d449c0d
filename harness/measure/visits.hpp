#pragma once
// A case's visits (registry.hpp's visits rule). The registry registers a case that takes visits once per
// visit, spread through the round's order (rounds.hpp's visit_order), and sets which visit runs around each
// run. Every visit samples for its share of the round's budget. The last reports the round's figure from all
// of their samples, each visit counted as a placement of its own (median_over_placements), and their cost as
// one run's. The others report no figure: their runs carry the counter kVisitCounter (output_file.hpp), which
// the output and the display leave out.
#include <string>
#include <vector>

#include "harness/measure/loop.hpp"

namespace gpu_bench {

// Which visit of its round a case's run is: `index` of `count`, from 1.
struct case_visit {
  int index = 1;
  int count = 1;
  bool reports() const { return index >= count; }
};
void set_case_visit(case_visit visit);
case_visit current_case_visit();

// What a case's earlier visits left for its last, by case name.
struct visits_so_far {
  std::vector<sample> samples;  // each placement renumbered by its visit
  double wall_s = 0, sampling_wall_s = 0, calibration_wall_s = 0;
  int visits = 0;
  std::string failure;  // the first an earlier visit met: its last visit fails the case with it
};
// The case `name`'s record, made empty where it has none yet.
visits_so_far& earlier_visits(const std::string& name);
// The record, taken away once the last visit has used it; empty where there was none.
visits_so_far take_earlier_visits(const std::string& name);
// An earlier visit of the case `name` failed with `why`: its last visit fails the case with it.
void fail_visit(const std::string& name, const std::string& why);

// The running visit's samples, each placement (of `placements` a visit) renumbered by the visit.
std::vector<sample> as_this_visits(std::vector<sample> samples, int placements);

}  // namespace gpu_bench
