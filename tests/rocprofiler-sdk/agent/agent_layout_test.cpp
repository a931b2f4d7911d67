// MIT License - see LICENSE.
//
// The same layout facts as agent_layout_c99.c, asserted by a C++17 compiler.
#include <rocprofiler-sdk/agent.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "agent_layout_pins.h"

#define PIN_SIZE(TYPE, BYTES) static_assert(sizeof(TYPE) == (BYTES), "sizeof " #TYPE);
#define PIN_OFFSET(TYPE, FIELD, BYTES)                                                             \
    static_assert(offsetof(TYPE, FIELD) == (BYTES), "offsetof " #TYPE "." #FIELD);
ROCP_AGENT_LAYOUT_PINS(PIN_SIZE, PIN_OFFSET)

static_assert(std::is_same_v<rocprofiler_agent_t, rocprofiler_agent_v0_t>);
static_assert(std::is_standard_layout_v<rocprofiler_agent_v0_t>);
static_assert(std::is_trivially_copyable_v<rocprofiler_agent_v0_t>);

TEST(AgentLayout, PinnedSizesHoldAtRunTime)
{
    // The static_asserts above already decide this; the test makes the check visible in ctest.
    EXPECT_EQ(sizeof(rocprofiler_agent_v0_t), 296u);
    EXPECT_EQ(offsetof(rocprofiler_agent_v0_t, gpu_id), 192u);
    EXPECT_EQ(offsetof(rocprofiler_agent_v0_t, name), 248u);
    EXPECT_EQ(offsetof(rocprofiler_agent_v0_t, node_id), 280u);
    EXPECT_EQ(static_cast<int>(ROCPROFILER_AGENT_INFO_VERSION_0), 1);
}
