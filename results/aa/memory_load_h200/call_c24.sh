#!/usr/bin/env bash
# Owed GPU tests at this tree, then: does other work on the host's memory move the host-driven, managed and
# pinned cases as a whole run? Filtered runs at --rounds=5, quiet and beside MEMHOG threads that copy 256 MiB
# buffers without end, alternating; each CPU's clock read and memcpy rate (cpu_state_probe) before each run.
set -u
start=$(date +%s)
mkdir -p $OUT/r/l
./scripts/setup.sh > $OUT/r/l/setup.log 2>&1; echo "setup rc=$? at $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=index,uuid,driver_version --format=csv > $OUT/r/gpus.txt 2>&1; cat $OUT/r/gpus.txt; cat .git_revision
nproc >> $OUT/r/gpus.txt; uptime >> $OUT/r/gpus.txt
(cd build && timeout ${TESTS_S:-200} ctest -V -R "${TESTS:-^gpu_(round_order|interleave|fast_cpu)$}" > $OUT/r/l/ctest.log 2>&1); echo "tests rc=$? at $(( $(date +%s) - start )) s"
grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|tests failed" $OUT/r/l/ctest.log | cut -c1-200 | tail -12
g++ -O2 -std=c++17 -o /tmp/csp tests/gpu/cpu_state_probe.cpp
cat > /tmp/memhog.cpp <<'CPP'
// N threads, each copying one 256 MiB buffer into another without end: load on the host's memory.
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4;
  std::vector<std::thread> t;
  for (int i = 0; i < n; ++i)
    t.emplace_back([] {
      std::vector<char> a(256u << 20, 1), b(256u << 20, 2);
      for (;;) { std::memcpy(b.data(), a.data(), a.size()); std::memcpy(a.data(), b.data(), a.size()); }
    });
  for (auto& x : t) x.join();
}
CPP
g++ -O2 -std=c++17 -pthread -o /tmp/memhog /tmp/memhog.cpp
F='^(Transfer/.*mem:(pageable|managed_prefetch)/bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|Transfer/dir:(h2d|d2h)/mem:pinned/bytes:(1048576|16777216|67108864)/|Events/|HostBlocking/.*bytes:([0-9]{1,7}|[1-5][0-9]{7}|6[0-7][0-9]{6})/|SyncPlacement/|Launch/)'
for p in 1 2 3; do
  for hog in 0 ${MEMHOG:-4}; do
    [ $(( $(date +%s) - start )) -gt ${BUDGET:-500} ] && { echo "budget reached before run $p with $hog"; break 2; }
    pid=""
    [ $hog -gt 0 ] && { /tmp/memhog $hog & pid=$!; sleep 1; }
    /tmp/csp 0.1 1 > $OUT/r/probe_mem${hog}_$p.jsonl
    s=$(date +%s)
    timeout ${RUN_S:-90} build/gpu_bench --rounds=5 --benchmark_filter="$F" --progress=off \
      --benchmark_out=$OUT/r/mem${hog}_$p.json --benchmark_out_format=json > $OUT/r/l/mem${hog}_$p.log 2>&1
    echo "memhog $hog run $p rc=$? in $(( $(date +%s) - s )) s at $(( $(date +%s) - start )) s"
    [ -n "$pid" ] && { kill $pid; wait $pid 2>/dev/null; }
    python3 -c "import json,statistics as s;r=[json.loads(l) for l in open('$OUT/r/probe_mem${hog}_$p.jsonl')];print('probe memcpy GB/s median',round(s.median(x['memcpy_gbps'] for x in r),2),'clock ns',round(s.median(x['clock_read_ns'] for x in r),1))"
    tar czf $OUT/c24.tgz -C $OUT r
  done
done
tar czf $OUT/c24.tgz -C $OUT r && rm -rf $OUT/r
