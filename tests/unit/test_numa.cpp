// NUMA placement: the node lists the kernel writes, which node a buffer goes to, Transfer's numa axis, and
// (where the host lets a thread bind at all) that a bound page lands where it was bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/transfer/model.hpp"
#include "harness/memory/numa.hpp"
#include "harness/run/sizes.hpp"

#if defined(GPU_BENCH_HAVE_LIBNUMA)
#include <numaif.h>
#endif

namespace gpu_bench {
namespace {

TEST(Numa, ParsesTheKernelsNodeLists) {
  EXPECT_EQ(parse_node_list("0\n"), (std::vector<int>{0}));
  EXPECT_EQ(parse_node_list("0-1,3"), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(parse_node_list("2,0-1"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_node_list("1,1"), (std::vector<int>{1}));
  for (const char* bad : {"", "\n", "a", "2-1", "0,", ",0", "0-", "-1", "0-1-2", "1 2"})
    EXPECT_FALSE(parse_node_list(bad).has_value()) << "'" << bad << "'";
}

TEST(Numa, PicksTheGpusNodeAsLocalAndAnotherAsRemote) {
  const std::vector<int> two = {0, 1}, one = {0}, gap = {0, 2, 3};
  EXPECT_EQ(numa_target(numa_place::local, 1, two), 1);
  EXPECT_EQ(numa_target(numa_place::remote, 1, two), 0);
  EXPECT_EQ(numa_target(numa_place::remote, 0, two), 1);
  EXPECT_EQ(numa_target(numa_place::remote, 0, gap), 2);
  EXPECT_EQ(numa_target(numa_place::local, 0, one), 0);
  EXPECT_FALSE(numa_target(numa_place::remote, 0, one).has_value());  // nowhere remote to go
  EXPECT_FALSE(numa_target(numa_place::local, -1, two).has_value());  // the GPU's node unknown
  EXPECT_FALSE(numa_target(numa_place::remote, -1, two).has_value());
  EXPECT_FALSE(numa_target(numa_place::local, 1, gap).has_value());  // a node without memory
  EXPECT_EQ(parse_numa_node("3"), 3);
  for (const char* unknown : {"none", "unavailable", "-1", "", "1x"}) EXPECT_EQ(parse_numa_node(unknown), -1);
  EXPECT_EQ(to_name(numa_place::local), "local");
  EXPECT_EQ(to_name(numa_place::remote), "remote");
}

TEST(Numa, TransferAxisCoversTheKindsGpuBenchPlaces) {
  const auto sizes = parse_size_spec("1M,16M");
  const auto plain = transfer_grid(sizes), axis = transfer_grid(sizes, true);
  std::size_t placed = 0;
  for (const auto& c : plain) placed += numa_kind(c.mem) ? 1 : 0;
  // h2d and d2h and bidir: pageable, pinned, write_combined, registered, mapped; each also remote.
  EXPECT_EQ(placed, 15u * sizes.size());
  EXPECT_EQ(axis.size(), plain.size() + placed);
  // Local cases keep the plain name, so names match between hosts with one node and with several.
  std::set<std::string> plain_names, remote_names;
  for (const auto& c : plain) {
    EXPECT_EQ(c.numa, numa_place::local);
    plain_names.insert(transfer_name(c).str());
  }
  const std::regex remote(R"(Transfer/dir:(h2d|d2h|bidir)/mem:[a-z_]+/numa:remote/bytes:[0-9]+)");
  for (const auto& c : axis) {
    const std::string n = transfer_name(c).str();
    if (c.numa == numa_place::local) {
      EXPECT_TRUE(plain_names.count(n)) << n;
      continue;
    }
    EXPECT_TRUE(numa_kind(c.mem)) << n;
    EXPECT_TRUE(std::regex_match(n, remote)) << n;
    EXPECT_TRUE(remote_names.insert(n).second) << "duplicate " << n;
  }
  EXPECT_EQ(remote_names.size(), placed);
  EXPECT_TRUE(remote_names.count("Transfer/dir:h2d/mem:pinned/numa:remote/bytes:1048576"));
}

TEST(Numa, ABoundPageLandsOnItsNodeAndThePolicyIsRestored) {
  if (!numa_binding_available()) GTEST_SKIP() << "no libnuma in this build, or no NUMA in this kernel";
  const auto nodes = host_memory_nodes();
  ASSERT_FALSE(nodes.empty());
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  for (int node : nodes) {
    void* p = nullptr;
    ASSERT_EQ(posix_memalign(&p, page, 4 * page), 0);
    {
      numa_bind_scope bound(node);
      std::memset(p, 1, 4 * page);  // the first touch places the pages
    }
    EXPECT_EQ(page_node(p), node);
    EXPECT_EQ(page_node(static_cast<char*>(p) + 3 * page), node);
    std::free(p);
#if defined(GPU_BENCH_HAVE_LIBNUMA)
    int mode = -1;
    ASSERT_EQ(get_mempolicy(&mode, nullptr, 0, nullptr, 0), 0);
    EXPECT_EQ(mode, MPOL_DEFAULT);
#endif
  }
  EXPECT_FALSE(page_node(nullptr).has_value());
  EXPECT_THROW(numa_bind_scope(1 << 20), std::runtime_error);  // a node past any mask: one sentence
  numa_bind_scope none(std::nullopt);                          // nothing to bind: does nothing
}

#if defined(GPU_BENCH_HAVE_LIBNUMA)
// A process started under a policy of its own (as numactl sets one) keeps it: no binding, no axis.
TEST(Numa, APolicyTheProcessStartedWithIsLeftAlone) {
  if (!numa_binding_available()) GTEST_SKIP() << "no NUMA in this kernel";
  // A fresh process that runs this test up to the death test: numa_user_policy() reads once, so nothing
  // before it may call it.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsigned long node0 = 1;
        if (set_mempolicy(MPOL_PREFERRED, &node0, 2) != 0) std::_Exit(3);
        std::_Exit(numa_user_policy() && !numa_axis_available() ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
  EXPECT_FALSE(numa_user_policy());  // ctest starts this one under the default policy
}
#endif

}  // namespace
}  // namespace gpu_bench
