// MIT License - see LICENSE.
//
// Bad environment values: the one strict parser every numeric variable goes through, and
// the user-namespace test behind the pid filter.
#include "rocprofiler-sdk/env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

using rocprofiler::env::is_initial_uid_map;
using rocprofiler::env::number;
using rocprofiler::env::parse_u64;

TEST(bad_environment_values, only_plain_decimal_numbers_in_range_are_accepted)
{
    EXPECT_EQ(parse_u64("0", 0, 10), 0u);
    EXPECT_EQ(parse_u64("10", 0, 10), 10u);
    EXPECT_EQ(parse_u64("18446744073709551615", 0, UINT64_MAX), UINT64_MAX);
    for(const char* bad : {"", "-1", "+1", " 1", "1 ", "256abc", "0x10", "1e3", "1.5",
                           "18446744073709551616", "99999999999999999999999"})
        EXPECT_FALSE(parse_u64(bad, 0, UINT64_MAX).has_value()) << "'" << bad << "'";
    EXPECT_FALSE(parse_u64("11", 0, 10).has_value());
    EXPECT_FALSE(parse_u64("4", 5, 10).has_value());
}

TEST(bad_environment_values, a_rejected_value_keeps_the_default)
{
    setenv("ROCP_TEST_NUMBER", "-1", 1);
    EXPECT_EQ(number("ROCP_TEST_NUMBER", 0, 100, 42), 42u);
    setenv("ROCP_TEST_NUMBER", "256abc", 1);
    EXPECT_EQ(number("ROCP_TEST_NUMBER", 0, 1000, 42), 42u);
    setenv("ROCP_TEST_NUMBER", "77", 1);
    EXPECT_EQ(number("ROCP_TEST_NUMBER", 0, 100, 42), 77u);
    setenv("ROCP_TEST_NUMBER", "", 1);
    EXPECT_EQ(number("ROCP_TEST_NUMBER", 0, 100, 42), 42u);
    unsetenv("ROCP_TEST_NUMBER");
    EXPECT_EQ(number("ROCP_TEST_NUMBER", 0, 100, 42), 42u);
}

// /proc/self/uid_map of the initial user namespace maps all 2^32-1 ids onto themselves; in
// any other namespace CAP_SYS_ADMIN is not what the kernel's capable() checks.
TEST(user_namespaces, only_the_identity_map_of_every_id_is_the_initial_namespace)
{
    EXPECT_TRUE(is_initial_uid_map("         0          0 4294967295\n"));
    EXPECT_FALSE(is_initial_uid_map("         0       1000          1\n"));
    EXPECT_FALSE(is_initial_uid_map("         0     100000      65536\n"));
    EXPECT_FALSE(is_initial_uid_map("0 0 4294967295\n1 2 3\n"));
    EXPECT_FALSE(is_initial_uid_map(""));
}

// Out-of-range enum arguments from C callers are checked as integers (never loaded as the
// C++ enum type: an UBSan build reports such loads) and rejected with a status.
#include <rocprofiler-sdk/rocprofiler.h>

#include "rocprofiler-sdk/buffer.hpp"
#include "rocprofiler-sdk/context.hpp"

namespace
{
template <typename E>
E
out_of_range(int value)
{
    E e;
    static_assert(sizeof(e) == sizeof(value), "C enums are int-sized here");
    std::memcpy(&e, &value, sizeof(e)); // what a C caller passing 614 hands over
    return e;
}

void
no_op(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**, size_t,
      void*, uint64_t)
{
}
} // namespace

TEST(bad_api_enum_values, are_rejected_as_integers)
{
    const char* name = nullptr;
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_name(
                  out_of_range<rocprofiler_buffer_tracing_kind_t>(614), &name, nullptr),
              ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
    EXPECT_EQ(
        rocprofiler_query_buffer_tracing_kind_operation_name(
            out_of_range<rocprofiler_buffer_tracing_kind_t>(-2147483647 - 1), 1, &name, nullptr),
        ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
    EXPECT_EQ(rocprofiler_get_status_name(out_of_range<rocprofiler_status_t>(1000)), nullptr);
    EXPECT_EQ(rocprofiler_get_status_string(out_of_range<rocprofiler_status_t>(-5)), nullptr);
    uint64_t ctx = 0;
    ASSERT_EQ(rocprofiler::context::create(1, &ctx), ROCPROFILER_STATUS_SUCCESS);
    uint64_t id = 0;
    EXPECT_EQ(rocprofiler::buffer::create(ctx, 4096, 0, 77, no_op, nullptr, &id),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
}
