// MIT License - see LICENSE.
//
// Bad environment values: the one strict parser every numeric variable goes through, and
// the user-namespace test behind the pid filter.
#include "rocprofiler-sdk/env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

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
