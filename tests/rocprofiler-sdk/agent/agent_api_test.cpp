// MIT License - see LICENSE.
//
// The process-wide agent list and rocprofiler_query_available_agents. The list is read once
// per process from $ROCPROFILER_KFD_TOPOLOGY_ROOT, so each test suite here is one scenario
// that CMakeLists.txt runs with its own environment (and every test in its own process):
//   OneCpuTwoGpus, Arguments  ROOT = fixtures/one_cpu_two_gpus
//   CpuOnly                   ROOT = fixtures/cpu_only
//   NoTopology                ROOT = a folder that does not exist
//   DefaultRoot               ROOT = "" (empty: the sysfs default)
#include "rocprofiler-sdk/agent.hpp"

#include "fixture_expectations.hpp"

#include <rocprofiler-sdk/agent.h>

#include "thread_end.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace
{
namespace agent = rocprofiler::agent;
using rocprofiler::test::agent_list;

// What one callback invocation saw.
struct query_result
{
    int                         calls      = 0;
    rocprofiler_agent_version_t version    = ROCPROFILER_AGENT_INFO_VERSION_NONE;
    const void**                array      = nullptr;
    size_t                      num_agents = 0;
    agent_list                  agents;
    rocprofiler_status_t        reply = ROCPROFILER_STATUS_SUCCESS;
};

rocprofiler_status_t
record_agents(rocprofiler_agent_version_t version, const void** agents, size_t num_agents,
              void* user_data)
{
    auto* result = static_cast<query_result*>(user_data);
    result->calls += 1;
    result->version    = version;
    result->array      = agents;
    result->num_agents = num_agents;
    result->agents.clear();
    for(size_t i = 0; i < num_agents; ++i)
        result->agents.push_back(static_cast<const rocprofiler_agent_v0_t*>(agents[i]));
    return result->reply;
}

query_result
query(size_t               agent_size      = sizeof(rocprofiler_agent_v0_t),
      rocprofiler_status_t reply           = ROCPROFILER_STATUS_SUCCESS,
      rocprofiler_status_t expected_status = ROCPROFILER_STATUS_SUCCESS)
{
    auto result  = query_result{};
    result.reply = reply;
    EXPECT_EQ(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, record_agents,
                                                 agent_size, &result),
              expected_status);
    return result;
}

// ---- ROOT = fixtures/one_cpu_two_gpus ----

TEST(OneCpuTwoGpus, QueryReturnsEveryAgent)
{
    auto result = query();
    EXPECT_EQ(result.calls, 1);
    EXPECT_EQ(result.version, ROCPROFILER_AGENT_INFO_VERSION_0);
    EXPECT_EQ(result.num_agents, 3u);
    rocprofiler::test::expect_one_cpu_two_gpus(result.agents);
    ASSERT_NE(result.array, nullptr);
    EXPECT_EQ(result.array[3], nullptr); // the array ends with a NULL entry
}

TEST(OneCpuTwoGpus, InternalListMatchesTheCApi)
{
    rocprofiler::test::expect_one_cpu_two_gpus(agent::get_agents());
    EXPECT_EQ(query().agents, agent::get_agents());
}

TEST(OneCpuTwoGpus, GpuIdsAndLookup)
{
    EXPECT_EQ(agent::get_gpu_ids(), (std::vector<uint64_t>{rocprofiler::test::fixture_gpu1_id,
                                                           rocprofiler::test::fixture_gpu2_id}));
    const auto* gpu2 = agent::find_gpu(rocprofiler::test::fixture_gpu2_id);
    ASSERT_NE(gpu2, nullptr);
    EXPECT_EQ(gpu2->node_id, 2u);
    EXPECT_EQ(gpu2, agent::get_agents().at(2));
    EXPECT_EQ(agent::find_gpu(rocprofiler::test::fixture_gpu1_id), agent::get_agents().at(1));
    EXPECT_EQ(agent::find_gpu(0), nullptr); // the CPU's gpu_id is 0 but it is not a GPU
    EXPECT_EQ(agent::find_gpu(12345), nullptr);
}

TEST(OneCpuTwoGpus, ArrayAndAgentsStayTheSameAcrossCalls)
{
    auto first  = query();
    auto second = query();
    EXPECT_EQ(first.array, second.array);
    EXPECT_EQ(first.agents, second.agents);
    EXPECT_EQ(&agent::get_agents(), &agent::get_agents());
    // Still intact after the callbacks returned.
    rocprofiler::test::expect_one_cpu_two_gpus(first.agents);
}

TEST(OneCpuTwoGpus, ConcurrentFirstCallsSeeOneList)
{
    // This test runs in its own process, so these are the first calls: the lazy read must
    // happen once and every thread must see the same complete list.
    constexpr int thread_count = 8;
    auto          results      = std::vector<query_result>(thread_count);
    auto          statuses     = std::vector<rocprofiler_status_t>(thread_count);
    auto          start        = std::atomic<bool>{false};
    auto          threads      = std::vector<std::thread>{};
    for(int i = 0; i < thread_count; ++i)
        threads.emplace_back(
            [&, i]
            {
                while(!start.load())
                    std::this_thread::yield();
                statuses[i] = rocprofiler_query_available_agents(
                    ROCPROFILER_AGENT_INFO_VERSION_0, record_agents, sizeof(rocprofiler_agent_v0_t),
                    &results[i]);
            });
    start = true;
    for(auto& thread : threads)
        thread.join();
    for(int i = 0; i < thread_count; ++i)
    {
        EXPECT_EQ(statuses[i], ROCPROFILER_STATUS_SUCCESS);
        EXPECT_EQ(results[i].agents, results[0].agents);
        EXPECT_EQ(results[i].array, results[0].array);
    }
    rocprofiler::test::expect_one_cpu_two_gpus(results[0].agents);
}

// ---- ROOT = fixtures/one_cpu_two_gpus: argument checks ----

TEST(Arguments, NullCallback)
{
    EXPECT_EQ(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, nullptr,
                                                 sizeof(rocprofiler_agent_v0_t), nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
}

TEST(Arguments, VersionsOtherThanZeroAreInvalid)
{
    // Out-of-range values such as 99 are checked by agent_layout_c99.c: in C they are
    // ordinary values, in C++ they are outside the enum's range.
    for(auto version : {ROCPROFILER_AGENT_INFO_VERSION_NONE, ROCPROFILER_AGENT_INFO_VERSION_LAST})
    {
        auto result = query_result{};
        EXPECT_EQ(rocprofiler_query_available_agents(version, record_agents,
                                                     sizeof(rocprofiler_agent_v0_t), &result),
                  ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT)
            << "version " << static_cast<int>(version);
        EXPECT_EQ(result.calls, 0);
    }
}

TEST(Arguments, LargerAgentSizeIsIncompatible)
{
    for(size_t size : {sizeof(rocprofiler_agent_v0_t) + 1, sizeof(rocprofiler_agent_v0_t) + 8,
                       size_t{4096}, SIZE_MAX})
    {
        auto result = query_result{};
        EXPECT_EQ(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0,
                                                     record_agents, size, &result),
                  ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI)
            << "agent_size " << size;
        EXPECT_EQ(result.calls, 0);
    }
}

TEST(Arguments, SmallerAgentSizeIsFine)
{
    // An older caller reads a prefix of our struct.
    for(size_t size : {offsetof(rocprofiler_agent_v0_t, node_id), size_t{8}, size_t{0}})
    {
        auto result = query(size);
        EXPECT_EQ(result.calls, 1) << "agent_size " << size;
        EXPECT_EQ(result.num_agents, 3u);
    }
}

TEST(Arguments, CallbackStatusIsReturned)
{
    for(auto reply :
        {ROCPROFILER_STATUS_ERROR, ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND,
         ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE, ROCPROFILER_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED})
    {
        auto result = query(sizeof(rocprofiler_agent_v0_t), reply, reply);
        EXPECT_EQ(result.calls, 1);
    }
}

TEST(Arguments, UserDataIsPassedThrough)
{
    auto result = query_result{};
    ASSERT_EQ(rocprofiler_query_available_agents(
                  ROCPROFILER_AGENT_INFO_VERSION_0,
                  [](rocprofiler_agent_version_t, const void**, size_t, void* data)
                  {
                      static_cast<query_result*>(data)->calls = 42;
                      return ROCPROFILER_STATUS_SUCCESS;
                  },
                  sizeof(rocprofiler_agent_v0_t), &result),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(result.calls, 42);
}

TEST(Arguments, ThrowingCallbackDoesNotEscape)
{
    auto status = rocprofiler_query_available_agents(
        ROCPROFILER_AGENT_INFO_VERSION_0,
        [](rocprofiler_agent_version_t, const void**, size_t, void*) -> rocprofiler_status_t
        { throw std::runtime_error{"tool bug"}; },
        sizeof(rocprofiler_agent_v0_t), nullptr);
    EXPECT_EQ(status, ROCPROFILER_STATUS_ERROR);
    EXPECT_EQ(query().num_agents, 3u); // still usable afterwards
}

// A thread that ends in the callback (pthread_exit, or a cancellation at a cancellation
// point) unwinds through the query: swallowing that unwind would make glibc abort the
// process ("exception not rethrown").
TEST(Arguments, CallbackThatEndsItsThread)
{
    auto exit_in_callback = [](void*) -> void*
    {
        rocprofiler_query_available_agents(
            ROCPROFILER_AGENT_INFO_VERSION_0,
            [](rocprofiler_agent_version_t, const void**, size_t, void*) -> rocprofiler_status_t
            {
                pthread_exit(nullptr);
                return ROCPROFILER_STATUS_SUCCESS;
            },
            sizeof(rocprofiler_agent_v0_t), nullptr);
        return reinterpret_cast<void*>(1); // not reached
    };
    // nullptr: the value pthread_exit gave
    EXPECT_EQ(rocprofiler::test::value_the_thread_ended_with(exit_in_callback), nullptr);
    EXPECT_EQ(query().num_agents, 3u); // still usable afterwards
}

// ---- ROOT = fixtures/cpu_only ----

TEST(CpuOnly, OneCpuNoGpus)
{
    auto result = query();
    rocprofiler::test::expect_cpu_only(result.agents);
    EXPECT_TRUE(agent::get_gpu_ids().empty());
    EXPECT_EQ(agent::find_gpu(0), nullptr);
}

// ---- ROOT = a folder that does not exist ----

TEST(NoTopology, ZeroAgentsIsSuccess)
{
    auto result = query();
    EXPECT_EQ(result.calls, 1);
    EXPECT_EQ(result.num_agents, 0u);
    ASSERT_NE(result.array, nullptr); // documented: never NULL, a single NULL entry
    EXPECT_EQ(result.array[0], nullptr);
    EXPECT_TRUE(agent::get_agents().empty());
    EXPECT_TRUE(agent::get_gpu_ids().empty());
    EXPECT_EQ(agent::find_gpu(1), nullptr);
}

TEST(NoTopology, ArgumentChecksStillApply)
{
    EXPECT_EQ(rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, nullptr,
                                                 sizeof(rocprofiler_agent_v0_t), nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    query(sizeof(rocprofiler_agent_v0_t) + 1, ROCPROFILER_STATUS_SUCCESS,
          ROCPROFILER_STATUS_ERROR_INCOMPATIBLE_ABI);
    query(sizeof(rocprofiler_agent_v0_t), ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND,
          ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND);
}

// ---- ROOT = "" ----

TEST(DefaultRoot, EmptyVariableMeansSysfs)
{
    const char* value = std::getenv(agent::topology_root_env);
    ASSERT_NE(value, nullptr) << "run through ctest: the variable is set, but empty";
    EXPECT_STREQ(value, "");
    EXPECT_EQ(agent::topology_root(), "/sys/class/kfd/kfd/topology");
    // Whatever this machine has (often nothing), the query works.
    auto result = query();
    EXPECT_EQ(result.calls, 1);
    EXPECT_EQ(result.num_agents, agent::get_agents().size());
}
} // namespace
