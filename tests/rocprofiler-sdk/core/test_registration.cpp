// MIT License - see LICENSE.
//
// Tool registration in all four ways, several tools at once, priorities, deduplication,
// the configuration lock and the life-cycle order. Each scenario runs in its own process;
// the tools (test_tool.c) and apps (test_app.c) print each step, and the test asserts the
// exact lines.
#include "run_process.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using test_support::lines_of;
using test_support::run_process;

namespace
{
const std::string sdk        = ROCP_TEST_SDK_LIB;
const std::string tool_a     = ROCP_TEST_TOOL_A;
const std::string tool_b     = ROCP_TEST_TOOL_B;
const std::string tool_c     = ROCP_TEST_TOOL_C;
const std::string tool_d     = ROCP_TEST_TOOL_D;
const std::string app_plain  = ROCP_TEST_APP_PLAIN;
const std::string app_sdk    = ROCP_TEST_APP_SDK;
const std::string app_linked = ROCP_TEST_APP_WITH_TOOL;
const std::string app_force  = ROCP_TEST_APP_FORCE;

// 15 = CONFIGURATION_LOCKED, 20 = FINALIZED
std::vector<std::string>
one_tool_lines(const std::string& name, int priority, int client)
{
    return {
        name + ": configure priority=" + std::to_string(priority) + " version_ok=1",
        name + ": configure client=" + std::to_string(client) + " is_initialized=-1",
        name + ": initialize is_initialized=-1 is_finalized=0",
        name + ": create_context=0 data_ok=1",
    };
}

std::string
finalize_line(const std::string& name)
{
    return name + ": finalize is_finalized=-1 create_context=20";
}

size_t
count_of(const std::vector<std::string>& lines, const std::string& line)
{
    return static_cast<size_t>(std::count(lines.begin(), lines.end(), line));
}

std::vector<std::string>
run_lines(const std::string& app, const std::vector<std::pair<std::string, std::string>>& env)
{
    auto result = run_process({app}, env);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return lines_of(result.output);
}
} // namespace

TEST(registration, tool_linked_into_application)
{
    auto lines    = run_lines(app_linked, {});
    auto expected = one_tool_lines("a", 0, 1);
    expected.insert(expected.end(), {"app: main is_initialized=1", "app: main create_context=15",
                                     "app: main done=0", finalize_line("a")});
    EXPECT_EQ(lines, expected);
}

TEST(registration, tool_preloaded_with_sdk)
{
    auto lines    = run_lines(app_plain, {{"LD_PRELOAD", sdk + ":" + tool_a}});
    auto expected = one_tool_lines("a", 0, 1);
    expected.insert(expected.end(), {"app: main done=0", finalize_line("a")});
    EXPECT_EQ(lines, expected);
}

TEST(registration, tool_listed_in_rocp_tool_libraries)
{
    auto lines    = run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_a}});
    auto expected = one_tool_lines("a", 0, 1);
    expected.insert(expected.end(), {"app: main is_initialized=1", "app: main create_context=15",
                                     "app: main done=0", finalize_line("a")});
    EXPECT_EQ(lines, expected);
}

// The SDK loads a listed tool while it discovers tools; the tool's constructor calls
// rocprofiler_force_configure then. That call is taken (the discovery going on configures it),
// not refused and not lost.
TEST(registration, listed_tool_that_forces_its_configure_from_its_constructor)
{
    auto                     lines    = run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_d}});
    std::vector<std::string> expected = {"d: constructor force_configure=0"};
    auto                     tool     = one_tool_lines("d", 0, 1);
    expected.insert(expected.end(), tool.begin(), tool.end());
    expected.insert(expected.end(), {"app: main is_initialized=1", "app: main create_context=15",
                                     "app: main done=0", finalize_line("d")});
    EXPECT_EQ(lines, expected);
}

TEST(registration, force_configure_from_main)
{
    auto                     lines    = run_lines(app_force, {});
    std::vector<std::string> expected = {
        "app: forced configure priority=0",
        "app: forced initialize create_context=0",
        "app: force_configure=0",
        "app: force_configure again=15",
        "app: main done=0",
        "app: forced finalize=1",
    };
    EXPECT_EQ(lines, expected);
}

TEST(registration, force_configure_after_initialization_is_locked)
{
    auto lines = run_lines(app_force, {{"ROCP_TOOL_LIBRARIES", tool_a}});
    EXPECT_EQ(count_of(lines, "app: force_configure=15"), 1u);
    EXPECT_EQ(count_of(lines, "app: forced configure priority=0"), 0u);
    EXPECT_EQ(count_of(lines, finalize_line("a")), 1u);
}

TEST(registration, two_listed_tools_in_order_with_priorities)
{
    auto lines = run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_a + ":" + tool_b}});
    std::vector<std::string> expected = {
        "a: configure priority=0 version_ok=1",
        "a: configure client=1 is_initialized=-1",
        "b: configure priority=1 version_ok=1",
        "b: configure client=2 is_initialized=-1",
        "a: initialize is_initialized=-1 is_finalized=0",
        "a: create_context=0 data_ok=1",
        "b: initialize is_initialized=-1 is_finalized=0",
        "b: create_context=0 data_ok=1",
        "app: main is_initialized=1",
        "app: main create_context=15",
        "app: main done=0",
        finalize_line("a"),
        finalize_line("b"),
    };
    EXPECT_EQ(lines, expected);
}

TEST(registration, three_listed_tools_with_mixed_separators_keep_the_last)
{
    auto lines =
        run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_a + "," + tool_b + " " + tool_c}});
    EXPECT_EQ(count_of(lines, "a: configure priority=0 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, "b: configure priority=1 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, "c: configure priority=2 version_ok=1"), 1u);
    for(const char* name : {"a", "b", "c"})
        EXPECT_EQ(count_of(lines, finalize_line(name)), 1u) << name;
}

TEST(registration, listed_and_linked_tools_together)
{
    auto lines = run_lines(app_linked, {{"ROCP_TOOL_LIBRARIES", tool_b}});
    EXPECT_EQ(count_of(lines, "b: configure priority=0 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, "a: configure priority=1 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, finalize_line("a")), 1u);
    EXPECT_EQ(count_of(lines, finalize_line("b")), 1u);
}

TEST(registration, same_tool_found_twice_is_configured_once)
{
    auto lines = run_lines(app_plain, {{"LD_PRELOAD", sdk + ":" + tool_a},
                                       {"ROCP_TOOL_LIBRARIES", tool_a + ":" + tool_a}});
    EXPECT_EQ(count_of(lines, "a: configure priority=0 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, finalize_line("a")), 1u);
}

TEST(registration, missing_library_in_list_is_skipped)
{
    auto lines =
        run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", "/nonexistent/libnothing.so:" + tool_a}});
    EXPECT_EQ(count_of(lines, "a: configure priority=0 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, finalize_line("a")), 1u);
}

TEST(registration, declining_tool_is_never_initialized)
{
    auto lines = run_lines(
        app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_a + ":" + tool_b}, {"TEST_TOOL_DECLINE", "a"}});
    EXPECT_EQ(count_of(lines, "a: configure priority=0 version_ok=1"), 1u);
    EXPECT_EQ(count_of(lines, "a: initialize is_initialized=-1 is_finalized=0"), 0u);
    EXPECT_EQ(count_of(lines, finalize_line("a")), 0u);
    EXPECT_EQ(count_of(lines, finalize_line("b")), 1u);
}

TEST(registration, failed_initialize_withdraws_the_tool)
{
    auto lines =
        run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_a}, {"TEST_TOOL_FAIL_INIT", "a"}});
    EXPECT_EQ(count_of(lines, "a: initialize is_initialized=-1 is_finalized=0"), 1u);
    EXPECT_EQ(count_of(lines, finalize_line("a")), 0u);
}

TEST(registration, early_finalize_runs_once_before_exit)
{
    auto lines =
        run_lines(app_sdk, {{"ROCP_TOOL_LIBRARIES", tool_a}, {"TEST_TOOL_EARLY_FINALIZE", "a"}});
    // Called from the tool's own initialize: the SDK is still initializing (-1 is not
    // finalized: 0), and the tool, finalized now, can configure nothing more (20 = FINALIZED).
    auto early = std::find_if(lines.begin(), lines.end(),
                              [](const std::string& l) { return l.rfind("a: finalize", 0) == 0; });
    ASSERT_NE(early, lines.end());
    EXPECT_EQ(*early, "a: finalize is_finalized=0 create_context=20");
    auto done = std::find(lines.begin(), lines.end(), "app: main done=0");
    EXPECT_LT(early, done);
    size_t finals = 0;
    for(auto& l : lines)
        finals += l.rfind("a: finalize", 0) == 0 ? 1 : 0;
    EXPECT_EQ(finals, 1u);
}

TEST(registration, no_tool_means_not_initialized)
{
    auto                     lines    = run_lines(app_sdk, {});
    std::vector<std::string> expected = {"app: main is_initialized=0",
                                         "app: main create_context=15", "app: main done=0"};
    EXPECT_EQ(lines, expected);
}

namespace
{
size_t
lines_starting(const std::vector<std::string>& lines, const std::string& prefix)
{
    return static_cast<size_t>(std::count_if(
        lines.begin(), lines.end(), [&](const auto& l) { return l.rfind(prefix, 0) == 0; }));
}
} // namespace

// exit() from tool b's initialize (a bad configuration, say): a, initialized before it, is
// finalized; b, whose initialize is on the stack, and c, configured but never initialized,
// are not (their finalize ran on state they never set up), and the program's status is kept.
TEST(registration, exit_from_an_initialize_finalizes_only_the_initialized_tools)
{
    auto r = run_process({app_sdk}, {{"ROCP_TOOL_LIBRARIES", tool_a + ":" + tool_b + ":" + tool_c},
                                     {"TEST_TOOL_EXIT_IN_INIT", "b"}});
    auto lines = lines_of(r.output);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_EQ(count_of(lines, "b: initialize exit(3)"), 1u) << r.output;
    EXPECT_EQ(count_of(lines, "c: configure priority=2 version_ok=1"), 1u) << r.output;
    EXPECT_EQ(lines_starting(lines, "c: initialize"), 0u) << r.output;
    EXPECT_EQ(lines_starting(lines, "a: finalize"), 1u) << r.output;
    EXPECT_EQ(lines_starting(lines, "b: finalize"), 0u) << r.output;
    EXPECT_EQ(lines_starting(lines, "c: finalize"), 0u) << r.output;
}

// exit() on another thread while tool a's initialize still runs (it never returns here): exit
// waits for initialization until its deadline, then finalizes, but neither a (its initialize
// still running) nor b (configured, never initialized).
TEST(registration, exit_while_an_initialize_runs_on_another_thread_finalizes_neither)
{
    auto r     = run_process({app_sdk}, {{"ROCP_TOOL_LIBRARIES", tool_a + ":" + tool_b},
                                         {"TEST_TOOL_EXIT_ON_THREAD_IN_INIT", "a"},
                                         {"ROCPROFILER_FINALIZE_TIMEOUT_MS", "200"}});
    auto lines = lines_of(r.output);
    EXPECT_EQ(r.exit_code, 4) << r.output;
    EXPECT_EQ(count_of(lines, "a: thread exit(4)"), 1u) << r.output;
    EXPECT_EQ(count_of(lines, "b: configure priority=1 version_ok=1"), 1u) << r.output;
    EXPECT_EQ(lines_starting(lines, "b: initialize"), 0u) << r.output;
    EXPECT_EQ(lines_starting(lines, "a: finalize"), 0u) << r.output;
    EXPECT_EQ(lines_starting(lines, "b: finalize"), 0u) << r.output;
}

// exit() from a tool's notification before the SDK creates its callback thread (at the end of
// initialization): that thread never comes, and exit must not wait for it. It waited for its
// whole deadline (60 s here; the process is killed after 20 s). The tool, initialized, is
// finalized once and the program's status is kept.
TEST(registration, exit_from_a_thread_creation_notification_does_not_wait_for_that_thread)
{
    auto r     = run_process({app_sdk},
                             {{"ROCP_TOOL_LIBRARIES", tool_a},
                              {"TEST_TOOL_EXIT_IN_PRECREATE", "a"},
                              {"ROCPROFILER_FINALIZE_TIMEOUT_MS", "60000"}},
                             20);
    auto lines = lines_of(r.output);
    EXPECT_EQ(r.exit_code, 5) << r.output;
    EXPECT_EQ(count_of(lines, "a: precreate exit(5)"), 1u) << r.output;
    EXPECT_EQ(lines_starting(lines, "a: finalize"), 1u) << r.output;
}

// fork() on another thread while a tool's initialize runs (it waits for that thread): the
// child's initialization cannot end (its thread is not in the child), so it counts as ended,
// configuration closed (1 = initialized, 15 = CONFIGURATION_LOCKED). The child stayed
// "initializing" (-1) forever, and its create_context succeeded as if it were that tool.
TEST(registration, a_child_forked_while_tools_initialize_on_another_thread_is_not_initializing)
{
    auto r =
        run_process({app_sdk}, {{"ROCP_TOOL_LIBRARIES", tool_a}, {"TEST_TOOL_FORK_IN_INIT", "a"}});
    auto lines = lines_of(r.output);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(count_of(lines, "a: fork child is_initialized=1 create_context=15"), 1u) << r.output;
    EXPECT_EQ(lines_starting(lines, "a: finalize"), 1u) << r.output;
}
