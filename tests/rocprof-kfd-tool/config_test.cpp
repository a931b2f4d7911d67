// MIT License - see LICENSE.
//
// The tool's configuration: environment parsing and placeholder expansion.
#include "config.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace rocprof_kfd;

namespace
{
env_lookup
env_of(std::map<std::string, std::string> vars)
{
    auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
    return [shared](const char* name) -> const char*
    {
        auto it = shared->find(name);
        return it == shared->end() ? nullptr : it->second.c_str();
    };
}
} // namespace

TEST(placeholders, every_placeholder_expands)
{
    placeholder_values v{123, 45, "node7", "3"};
    auto               env = env_of({{"JOB", "j42"}});
    EXPECT_EQ(expand_placeholders("out/%hostname%/%rank%-%pid%-%ppid%/%env{JOB}%", v, env),
              "out/node7/3-123-45/j42");
    EXPECT_EQ(expand_placeholders("%pid%%pid%", v, env), "123123");
    EXPECT_EQ(expand_placeholders("a/%unknown%/b%", v, env), "a/%unknown%/b%");
    EXPECT_EQ(expand_placeholders("/abs/%env{NOPE}%x", v, env), "/abs/x");
}

TEST(placeholders, expansions_never_escape_or_empty_a_component)
{
    placeholder_values v{1, 2, "../evil/host", ""};
    auto               env = env_of({{"DOTS", ".."}, {"DOT", "."}, {"SLASH", "a/b"}});
    EXPECT_EQ(expand_placeholders("out/%hostname%", v, env), "out/.._evil_host");
    EXPECT_EQ(expand_placeholders("out/%rank%/x", v, env), "out/_/x");
    EXPECT_EQ(expand_placeholders("out/%env{DOTS}%/x", v, env), "out/_/x");
    EXPECT_EQ(expand_placeholders("out/%env{DOT}%/x", v, env), "out/_/x");
    EXPECT_EQ(expand_placeholders("out/%env{SLASH}%", v, env), "out/a_b");
    EXPECT_EQ(expand_placeholders("out/r%rank%", v, env), "out/r");
    // Literal components stay as the user wrote them.
    EXPECT_EQ(expand_placeholders("../out//x", v, env), "../out//x");
}

TEST(placeholders, rank_from_the_first_set_variable)
{
    EXPECT_EQ(rank_from(env_of({})), "");
    EXPECT_EQ(rank_from(env_of({{"SLURM_PROCID", "5"}, {"PMIX_RANK", "9"}})), "5");
    EXPECT_EQ(rank_from(env_of({{"OMPI_COMM_WORLD_RANK", ""}, {"PMI_RANK", "2"}})), "2");
    EXPECT_EQ(rank_from(env_of({{"PMIX_RANK", "9"}})), "9");
}

TEST(config, defaults_and_values)
{
    tool_config d = read_config(env_of({}));
    EXPECT_EQ(d.directory, "rocprof-kfd/%hostname%/%pid%");
    EXPECT_EQ(d.stem, "");
    EXPECT_EQ(d.formats, (std::vector<std::string>{"summary", "csv", "perfetto"}));
    EXPECT_EQ(d.operations, (std::vector<int>{1, 2, 3, 4}));
    EXPECT_EQ(d.thrashing_threshold, 4u);
    EXPECT_TRUE(d.summary_stderr);

    tool_config c = read_config(env_of({{"ROCPROF_KFD_OUTPUT_FORMAT", "json, sqlite bogus"},
                                        {"ROCPROF_KFD_EVENTS", "page-fault,unmap-from-gpu"},
                                        {"ROCPROF_KFD_THRASHING_THRESHOLD", "9"},
                                        {"ROCPROF_KFD_SUMMARY_STDERR", "0"}}));
    EXPECT_EQ(c.formats, (std::vector<std::string>{"json", "sqlite"}));
    EXPECT_EQ(c.operations, (std::vector<int>{2, 4}));
    EXPECT_EQ(c.thrashing_threshold, 9u);
    EXPECT_FALSE(c.summary_stderr);
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_NE(c.warnings[0].find("bogus"), std::string::npos);

    tool_config bad = read_config(env_of({{"ROCPROF_KFD_THRASHING_THRESHOLD", "-3"}}));
    EXPECT_EQ(bad.thrashing_threshold, 4u);
    EXPECT_EQ(bad.warnings.size(), 1u);
}
