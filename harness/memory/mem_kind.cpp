#include "harness/memory/mem_kind.hpp"

namespace gpu_bench {

bool is_host_kind(mem_kind k) {
  return k != mem_kind::device;
}
bool is_managed(mem_kind k) {
  return k == mem_kind::managed_prefetch || k == mem_kind::managed_fault;
}
bool enqueue_may_block(mem_kind k) {
  return k == mem_kind::pageable;
}

}  // namespace gpu_bench
