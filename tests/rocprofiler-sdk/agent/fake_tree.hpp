// MIT License - see LICENSE.
//
// A throw-away topology tree in a temporary directory, written by the test itself.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace rocprofiler::test
{
class fake_tree
{
public:
    fake_tree()
    {
        auto base = std::filesystem::temp_directory_path() / "rocp-agent-XXXXXX";
        auto path = base.string();
        if(::mkdtemp(path.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << path;
        m_root = path;
    }
    ~fake_tree()
    {
        auto ec = std::error_code{};
        std::filesystem::remove_all(m_root, ec);
    }
    fake_tree(const fake_tree&)            = delete;
    fake_tree& operator=(const fake_tree&) = delete;

    const std::string& root() const { return m_root; }
    std::string        path(std::string_view relative) const
    {
        return m_root + "/" + std::string{relative};
    }

    // Writes `content` to root/relative, creating the folders on the way.
    void write(std::string_view relative, std::string_view content) const
    {
        auto full = std::filesystem::path{path(relative)};
        std::filesystem::create_directories(full.parent_path());
        auto out = std::ofstream{full, std::ios::binary | std::ios::trunc};
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        ASSERT_TRUE(out.good()) << "cannot write " << full;
    }

    void make_dir(std::string_view relative) const
    {
        std::filesystem::create_directories(path(relative));
    }

private:
    std::string m_root;
};

// "key value\n" lines.
inline std::string
properties(std::initializer_list<std::pair<std::string_view, std::string_view>> lines)
{
    auto text = std::string{};
    for(const auto& [key, value] : lines)
    {
        text += key;
        text += ' ';
        text += value;
        text += '\n';
    }
    return text;
}

inline std::string
cpu_properties(std::string_view cores = "8")
{
    return properties({{"cpu_cores_count", cores}, {"simd_count", "0"}});
}

inline std::string
gpu_properties(std::string_view simd_count = "416", std::string_view gfx_target_version = "90010")
{
    return properties({{"cpu_cores_count", "0"},
                       {"simd_count", simd_count},
                       {"simd_per_cu", "4"},
                       {"gfx_target_version", gfx_target_version}});
}
} // namespace rocprofiler::test
