// MIT License - see LICENSE.
//
// topology::read() on committed fixtures and on trees the tests write themselves.
#include "rocprofiler-sdk/topology.hpp"

#include "fake_tree.hpp"
#include "fixture_expectations.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace
{
namespace topology = rocprofiler::topology;
using rocprofiler::test::cpu_properties;
using rocprofiler::test::fake_tree;
using rocprofiler::test::gpu_properties;
using rocprofiler::test::properties;

const std::string fixtures_dir = ROCP_AGENT_FIXTURES_DIR;

std::string
repeat_line(std::string_view line, size_t times)
{
    auto text = std::string{};
    text.reserve(line.size() * times);
    for(size_t i = 0; i < times; ++i)
        text += line;
    return text;
}

// ---- whole trees ----

TEST(Topology, OneCpuTwoGpusFixture)
{
    auto topo = topology::read(fixtures_dir + "/one_cpu_two_gpus");
    rocprofiler::test::expect_one_cpu_two_gpus(topo.agent_pointers());
}

TEST(Topology, CpuOnlyFixture)
{
    auto topo = topology::read(fixtures_dir + "/cpu_only");
    rocprofiler::test::expect_cpu_only(topo.agent_pointers());
}

TEST(Topology, MissingRootIsEmpty)
{
    auto topo = topology::read(fixtures_dir + "/this-folder-does-not-exist");
    EXPECT_TRUE(topo.agents.empty());
    EXPECT_TRUE(topo.agent_pointers().empty());
}

TEST(Topology, EmptyRootIsEmpty)
{
    auto tree = fake_tree{};
    EXPECT_TRUE(topology::read(tree.root()).agents.empty());
    tree.make_dir("nodes"); // a nodes folder without any node
    EXPECT_TRUE(topology::read(tree.root()).agents.empty());
    tree.make_dir("nodes/0"); // a node folder without properties ends the list
    tree.write("nodes/1/properties", cpu_properties());
    EXPECT_TRUE(topology::read(tree.root()).agents.empty());
}

TEST(Topology, GapInNodeNumberingEndsTheList)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", cpu_properties());
    tree.write("nodes/1/properties", gpu_properties());
    tree.write("nodes/3/properties", gpu_properties()); // after the gap: not read
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 2u);
    EXPECT_EQ(topo.agents[1]->agent.node_id, 1u);
}

TEST(Topology, NodeThatIsNeitherCpuNorGpuKeepsNumbering)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", cpu_properties());
    tree.write("nodes/1/properties", properties({{"cpu_cores_count", "0"}, {"simd_count", "0"}}));
    tree.write("nodes/2/properties", ""); // empty: not an agent either, but the list goes on
    tree.write("nodes/3/properties", gpu_properties());
    tree.write("nodes/3/gpu_id", "777\n");
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 2u);
    const auto& gpu = topo.agents[1]->agent;
    EXPECT_EQ(gpu.type, ROCPROFILER_AGENT_TYPE_GPU);
    EXPECT_EQ(gpu.node_id, 3u);
    EXPECT_EQ(gpu.id.handle, 4u);
    EXPECT_EQ(gpu.logical_node_id, 1);
    EXPECT_EQ(gpu.logical_node_type_id, 0);
    EXPECT_EQ(gpu.gpu_id, 777u);
}

TEST(Topology, LogicalIdsCountPerType)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", cpu_properties());
    tree.write("nodes/1/properties", gpu_properties());
    tree.write("nodes/2/properties", cpu_properties());
    tree.write("nodes/3/properties", gpu_properties());
    tree.write("nodes/4/properties", gpu_properties());
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 5u);
    const int32_t expected_type_ids[] = {0, 0, 1, 1, 2};
    for(size_t i = 0; i < topo.agents.size(); ++i)
    {
        const auto& agent = topo.agents[i]->agent;
        EXPECT_EQ(agent.logical_node_id, static_cast<int32_t>(i));
        EXPECT_EQ(agent.logical_node_type_id, expected_type_ids[i]) << "agent " << i;
        EXPECT_EQ(agent.node_id, i);
        EXPECT_EQ(agent.id.handle, i + 1);
    }
}

TEST(Topology, CpuWinsWhenANodeHasCoresAndSimds)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", properties({{"cpu_cores_count", "4"}, {"simd_count", "8"}}));
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    EXPECT_EQ(topo.agents[0]->agent.type, ROCPROFILER_AGENT_TYPE_CPU);
}

TEST(Topology, MovingTheTopologyKeepsPointersValid)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", gpu_properties());
    tree.write("nodes/0/name", "gfx90a\n");
    tree.write("nodes/0/mem_banks/0/properties", properties({{"width", "4096"}}));
    auto        first    = topology::read(tree.root());
    auto        pointers = first.agent_pointers();
    auto        moved    = std::move(first);
    const auto* agent    = moved.agent_pointers().at(0);
    EXPECT_EQ(agent, pointers.at(0));
    EXPECT_STREQ(agent->name, "gfx90a");
    ASSERT_EQ(agent->mem_banks_count, 1u);
    EXPECT_EQ(agent->mem_banks[0].width, 4096u);
}

// ---- properties lines ----

TEST(Topology, MalformedLinesAreSkipped)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties",
               "cpu_cores_count 0\n"
               "simd_count 64\n"
               "wave_front_size\n"       // missing value
               "lds_size_in_kb abc\n"    // not a number
               "gds_size_in_kb 12 34\n"  // extra token
               "num_gws -1\n"            // sign
               "max_waves_per_simd +8\n" // sign
               "array_count 0x10\n"      // hex
               "simd_per_cu 4x\n"        // trailing junk
               "\n"                      // blank lines are fine
               "   \t  \n"
               "sibling_map 1,0,1,0\n" // unknown key with a non-number: ignored, no error
               "some_future_key\n"     // unknown key without value: ignored
               "  cu_per_simd_array\t 13  \r\n"); // extra blanks and CRLF are fine
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    const auto& gpu = topo.agents[0]->agent;
    EXPECT_EQ(gpu.simd_count, 64u);
    EXPECT_EQ(gpu.wave_front_size, 0u);
    EXPECT_EQ(gpu.lds_size_in_kb, 0u);
    EXPECT_EQ(gpu.gds_size_in_kb, 0u);
    EXPECT_EQ(gpu.num_gws, 0u);
    EXPECT_EQ(gpu.max_waves_per_simd, 0u);
    EXPECT_EQ(gpu.array_count, 0u);
    EXPECT_EQ(gpu.simd_per_cu, 0u);
    EXPECT_EQ(gpu.cu_count, 0u); // no division by a zero simd_per_cu
    EXPECT_EQ(gpu.cu_per_simd_array, 13u);
}

TEST(Topology, ParsePropertiesCountsBadLines)
{
    struct two_fields
    {
        uint32_t first;
        uint64_t second;
    };
    constexpr topology::property_field fields[] = {
        {"first", offsetof(two_fields, first), topology::field_width::u32},
        {"second", offsetof(two_fields, second), topology::field_width::u64},
    };
    auto object = two_fields{7, 9};
    auto result = topology::parse_properties(
        "unknown x\nfirst 1\nsecond\nfirst 2 3\nsecond 44\nfirst\n", fields, 2, &object);
    EXPECT_EQ(result.good_lines, 2u);
    EXPECT_EQ(result.bad_lines, 3u);
    EXPECT_EQ(result.first_bad_line, 3u);
    EXPECT_EQ(object.first, 1u);
    EXPECT_EQ(object.second, 44u);

    // No newline at the end of the text: the last line still counts.
    result = topology::parse_properties("second 5", fields, 2, &object);
    EXPECT_EQ(result.good_lines, 1u);
    EXPECT_EQ(result.bad_lines, 0u);
    EXPECT_EQ(result.first_bad_line, 0u);
    EXPECT_EQ(object.second, 5u);

    // A NUL inside a value makes it bad; the text is not read past its size.
    auto with_nul = std::string{"first 1\0 2\nsecond 6", 19};
    result        = topology::parse_properties(with_nul, fields, 2, &object);
    EXPECT_EQ(result.bad_lines, 1u);
    EXPECT_EQ(object.second, 6u);
}

TEST(Topology, DuplicateKeysLastGoodLineWins)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties",
               "cpu_cores_count 4\n"
               "simd_count 100\n"
               "cpu_cores_count 0\n" // the node is a GPU after all
               "simd_count 200\n"
               "wave_front_size 32\n"
               "wave_front_size 64\n"
               "lds_size_in_kb 64\n"
               "lds_size_in_kb bogus\n" // bad duplicate: the earlier good value stays
               "mem_banks_count 5\n"    // counts come from what is read, not from here
               "caches_count 9\n"
               "io_links_count 7\n"
               "mem_banks_count 6\n");
    tree.write("nodes/0/mem_banks/0/properties", "width 1\nwidth 2\n");
    tree.write("nodes/0/mem_banks/1/properties", "width 3\n");
    tree.write("nodes/0/gpu_id", "5\n");
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    const auto& gpu = topo.agents[0]->agent;
    EXPECT_EQ(gpu.type, ROCPROFILER_AGENT_TYPE_GPU);
    EXPECT_EQ(gpu.cpu_cores_count, 0u);
    EXPECT_EQ(gpu.simd_count, 200u);
    EXPECT_EQ(gpu.wave_front_size, 64u);
    EXPECT_EQ(gpu.lds_size_in_kb, 64u);
    EXPECT_EQ(gpu.logical_node_type_id, 0);
    ASSERT_EQ(gpu.mem_banks_count, 2u);
    EXPECT_EQ(gpu.mem_banks[0].width, 2u);
    EXPECT_EQ(gpu.mem_banks[1].width, 3u);
    EXPECT_EQ(gpu.caches_count, 0u);
    EXPECT_EQ(gpu.caches, nullptr);
    EXPECT_EQ(gpu.io_links_count, 0u);
    EXPECT_EQ(gpu.io_links, nullptr);
}

TEST(Topology, OverflowingNumbersAreSkipped)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties",
               "cpu_cores_count 0\n"
               "simd_count 4294967295\n"               // UINT32_MAX: fits
               "wave_front_size 4294967296\n"          // UINT32_MAX + 1: skipped
               "vendor_id 65535\n"                     // UINT16_MAX: fits the 16-bit field
               "device_id 65536\n"                     // does not
               "local_mem_size 18446744073709551615\n" // UINT64_MAX: fits
               "hive_id 18446744073709551616\n"        // UINT64_MAX + 1: skipped
               "num_xcc 99999999999999999999999999999999999999\n"
               "domain 000000000000000000000000000000000000000042\n"); // leading zeros: fine
    tree.write("nodes/0/gpu_id", "18446744073709551616\n");
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    const auto& gpu = topo.agents[0]->agent;
    EXPECT_EQ(gpu.simd_count, std::numeric_limits<uint32_t>::max());
    EXPECT_EQ(gpu.wave_front_size, 0u);
    EXPECT_EQ(gpu.vendor_id, 65535u);
    EXPECT_EQ(gpu.device_id, 0u);
    EXPECT_EQ(gpu.local_mem_size, std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(gpu.hive_id, 0u);
    EXPECT_EQ(gpu.num_xcc, 1u); // the bad line is skipped: the default stays
    EXPECT_EQ(gpu.domain, 42u);
    EXPECT_EQ(gpu.gpu_id, 0u); // bad gpu_id file: 0
}

TEST(Topology, ParseDecimal)
{
    constexpr auto u64_max = std::numeric_limits<uint64_t>::max();
    EXPECT_EQ(topology::parse_decimal("0", u64_max), 0u);
    EXPECT_EQ(topology::parse_decimal("18446744073709551615", u64_max), u64_max);
    EXPECT_FALSE(topology::parse_decimal("18446744073709551616", u64_max));
    EXPECT_FALSE(topology::parse_decimal("184467440737095516150", u64_max));
    EXPECT_EQ(topology::parse_decimal("255", 255), 255u);
    EXPECT_FALSE(topology::parse_decimal("256", 255));
    EXPECT_FALSE(topology::parse_decimal("", u64_max));
    EXPECT_FALSE(topology::parse_decimal(" 1", u64_max));
    EXPECT_FALSE(topology::parse_decimal("1 ", u64_max));
    EXPECT_FALSE(topology::parse_decimal("-1", u64_max));
    EXPECT_FALSE(topology::parse_decimal("+1", u64_max));
    EXPECT_FALSE(topology::parse_decimal("1e3", u64_max));
    EXPECT_FALSE(topology::parse_decimal("0x1", u64_max));
}

// ---- bounds ----

TEST(Topology, VeryLongPropertiesFileIsCutAtALineBoundary)
{
    auto tree = fake_tree{};
    // Good lines first, then filler past the size cap, then lines that must not be read.
    auto filler = repeat_line("unknown_filler_key 1234567890\n", 4000); // ~120 KiB
    ASSERT_GT(filler.size(), topology::max_file_bytes);
    tree.write("nodes/0/properties",
               "cpu_cores_count 0\nsimd_count 64\n" + filler + "wave_front_size 32\n");
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    EXPECT_EQ(topo.agents[0]->agent.simd_count, 64u);
    EXPECT_EQ(topo.agents[0]->agent.wave_front_size, 0u);
}

TEST(Topology, ReadFileNeverReturnsMoreThanTheCapOrAPartialLine)
{
    auto tree = fake_tree{};
    // "simd_count 12345\n" straddles the 64-byte cap: it must be dropped, not read as "12".
    auto text = std::string(50, 'x') + "\nsimd_count 12345\n";
    tree.write("file", text);
    auto read = topology::read_file(tree.path("file"), 64);
    ASSERT_TRUE(read);
    EXPECT_EQ(*read, std::string(50, 'x') + "\n");

    // One huge line without a newline: nothing usable, and nothing unbounded.
    tree.write("huge", std::string(1 << 20, 'a'));
    read = topology::read_file(tree.path("huge"));
    ASSERT_TRUE(read);
    EXPECT_TRUE(read->empty());

    // Exactly at the cap: kept whole.
    tree.write("exact", std::string(63, 'y') + "\n");
    read = topology::read_file(tree.path("exact"), 64);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->size(), 64u);

    EXPECT_FALSE(topology::read_file(tree.path("missing")));
    tree.make_dir("a-folder");
    EXPECT_FALSE(topology::read_file(tree.path("a-folder"))); // EISDIR: not a file
}

TEST(Topology, HugeNameAndGpuIdFilesAreBounded)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", gpu_properties("64", "0"));
    tree.write("nodes/0/name", std::string(1 << 20, 'n'));
    tree.write("nodes/0/gpu_id", std::string(1 << 20, '7'));
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    EXPECT_EQ(topo.agents[0]->agent.gpu_id, 0u);
    EXPECT_LE(std::string{topo.agents[0]->agent.name}.size(), 4096u);
}

TEST(Topology, SubEntriesAreCappedAndStopAtTheFirstGap)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", cpu_properties());
    for(uint32_t i = 0; i < topology::max_sub_entries + 10; ++i)
        tree.write("nodes/0/mem_banks/" + std::to_string(i) + "/properties",
                   "width " + std::to_string(i) + "\n");
    tree.write("nodes/0/caches/0/properties", "level 1\n");
    tree.write("nodes/0/caches/2/properties", "level 3\n"); // after a gap: not read
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    const auto& cpu = topo.agents[0]->agent;
    ASSERT_EQ(cpu.mem_banks_count, topology::max_sub_entries);
    EXPECT_EQ(cpu.mem_banks[topology::max_sub_entries - 1].width, topology::max_sub_entries - 1);
    ASSERT_EQ(cpu.caches_count, 1u);
    EXPECT_EQ(cpu.caches[0].level, 1u);
}

TEST(Topology, NodeCountIsCapped)
{
    auto tree = fake_tree{};
    for(uint32_t i = 0; i < topology::max_nodes + 3; ++i)
        tree.write("nodes/" + std::to_string(i) + "/properties", cpu_properties("1"));
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), topology::max_nodes);
    EXPECT_EQ(topo.agents.back()->agent.node_id, topology::max_nodes - 1);
    EXPECT_EQ(topo.agents.back()->agent.logical_node_type_id,
              static_cast<int32_t>(topology::max_nodes - 1));
}

TEST(Topology, FifoInTheTreeDoesNotBlock)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", gpu_properties());
    tree.make_dir("nodes/0");
    ASSERT_EQ(::mkfifo(tree.path("nodes/0/name").c_str(), 0600), 0);
    tree.make_dir("nodes/1");
    ASSERT_EQ(::mkfifo(tree.path("nodes/1/properties").c_str(), 0600), 0);
    tree.write("nodes/2/properties", cpu_properties());
    // A FIFO reads as empty: node 1 is then neither CPU nor GPU, node 2 is still read.
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 2u);
    EXPECT_STREQ(topo.agents[0]->agent.name, "gfx90a");
    EXPECT_EQ(topo.agents[1]->agent.node_id, 2u);
}

TEST(Topology, PropertiesThatIsAFolderEndsTheList)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", cpu_properties());
    tree.make_dir("nodes/1/properties");
    tree.write("nodes/2/properties", cpu_properties());
    EXPECT_EQ(topology::read(tree.root()).agents.size(), 1u);
}

// ---- derived values and names ----

TEST(Topology, DerivedComputeFields)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties",
               properties({{"simd_count", "240"},
                           {"simd_per_cu", "4"},
                           {"max_waves_per_simd", "10"},
                           {"array_count", "12"},
                           {"simd_arrays_per_engine", "2"},
                           {"gfx_target_version", "110000"},
                           {"fw_version", "1102"},       // 0x44e: ucode is the low 10 bits
                           {"sdma_fw_version", "66560"}, // 0x10400: low 10 bits are 0
                           {"num_xcc", "2"}}));
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    const auto& gpu = topo.agents[0]->agent;
    EXPECT_EQ(gpu.cu_count, 60u);
    EXPECT_EQ(gpu.max_waves_per_cu, 40u);
    EXPECT_EQ(gpu.num_shader_banks, 6u);
    EXPECT_EQ(gpu.cu_per_engine, 10u);
    EXPECT_EQ(gpu.family_id, 145u); // AMDGPU_FAMILY_GC_11_0_0
    EXPECT_EQ(gpu.fw_version.Value, 0x4eu);
    EXPECT_EQ(gpu.fw_version.ui32.uCode, 0x4eu);
    EXPECT_EQ(gpu.sdma_fw_version.Value, 0u);
    EXPECT_EQ(gpu.num_xcc, 2u);
    EXPECT_STREQ(gpu.name, "gfx1100");
}

TEST(Topology, ZeroDivisorsGiveZero)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", properties({{"simd_count", "8"}, {"array_count", "4"}}));
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 1u);
    const auto& gpu = topo.agents[0]->agent;
    EXPECT_EQ(gpu.cu_count, 0u);
    EXPECT_EQ(gpu.num_shader_banks, 0u);
    EXPECT_EQ(gpu.cu_per_engine, 0u);
    EXPECT_EQ(gpu.max_waves_per_cu, 0u);
}

TEST(Topology, Names)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties", cpu_properties());
    tree.write("nodes/0/name", "  AMD EPYC 9654 \n"); // a CPU name, when a tree has one
    tree.write("nodes/1/properties", gpu_properties("64", "90402"));
    tree.write("nodes/1/name", "\n"); // empty: from gfx_target_version
    tree.write("nodes/2/properties", gpu_properties("64", "0"));
    tree.write("nodes/2/name", "gfx1030"); // no newline; kept as the kernel wrote it
    tree.write("nodes/3/properties", gpu_properties("64", "0")); // no name, no version
    tree.write("nodes/4/properties", cpu_properties());          // no name file at all
    auto topo = topology::read(tree.root());
    ASSERT_EQ(topo.agents.size(), 5u);
    auto expect_names = [&](size_t index, const char* name, const char* vendor, const char* product)
    {
        const auto& agent = topo.agents.at(index)->agent;
        ASSERT_NE(agent.name, nullptr);
        ASSERT_NE(agent.vendor_name, nullptr);
        ASSERT_NE(agent.product_name, nullptr);
        ASSERT_NE(agent.model_name, nullptr);
        EXPECT_STREQ(agent.name, name) << "agent " << index;
        EXPECT_STREQ(agent.vendor_name, vendor) << "agent " << index;
        EXPECT_STREQ(agent.product_name, product) << "agent " << index;
        EXPECT_STREQ(agent.model_name, product) << "agent " << index;
    };
    expect_names(0, "AMD EPYC 9654", "CPU", "AMD EPYC 9654");
    expect_names(1, "gfx942", "AMD", "gfx942");
    expect_names(2, "gfx1030", "AMD", "gfx1030");
    expect_names(3, "GPU", "AMD", "GPU");
    expect_names(4, "CPU", "CPU", "CPU");
}

TEST(Topology, GfxNameFromTargetVersion)
{
    EXPECT_EQ(topology::gfx_name_from_target_version(0), "");
    EXPECT_EQ(topology::gfx_name_from_target_version(90010), "gfx90a");
    EXPECT_EQ(topology::gfx_name_from_target_version(90402), "gfx942");
    EXPECT_EQ(topology::gfx_name_from_target_version(90012), "gfx90c");
    EXPECT_EQ(topology::gfx_name_from_target_version(80003), "gfx803");
    EXPECT_EQ(topology::gfx_name_from_target_version(100300), "gfx1030");
    EXPECT_EQ(topology::gfx_name_from_target_version(110000), "gfx1100");
    EXPECT_EQ(topology::gfx_name_from_target_version(120001), "gfx1201");
}

TEST(Topology, FamilyIdFromTargetVersion)
{
    EXPECT_EQ(topology::family_id_from_target_version(0), 0u);
    EXPECT_EQ(topology::family_id_from_target_version(70000), 125u); // KV
    EXPECT_EQ(topology::family_id_from_target_version(70001), 120u); // CI
    EXPECT_EQ(topology::family_id_from_target_version(80003), 130u); // VI
    EXPECT_EQ(topology::family_id_from_target_version(80001), 135u); // CZ
    EXPECT_EQ(topology::family_id_from_target_version(90000), 141u); // AI
    EXPECT_EQ(topology::family_id_from_target_version(90010), 141u);
    EXPECT_EQ(topology::family_id_from_target_version(90402), 141u);
    EXPECT_EQ(topology::family_id_from_target_version(90012), 142u);  // RV (Renoir)
    EXPECT_EQ(topology::family_id_from_target_version(100300), 143u); // NV
    EXPECT_EQ(topology::family_id_from_target_version(100303), 144u); // VGH
    EXPECT_EQ(topology::family_id_from_target_version(100305), 146u); // YC
    EXPECT_EQ(topology::family_id_from_target_version(110000), 145u);
    EXPECT_EQ(topology::family_id_from_target_version(110003), 148u);
    EXPECT_EQ(topology::family_id_from_target_version(110501), 150u);
    EXPECT_EQ(topology::family_id_from_target_version(120001), 152u);
    EXPECT_EQ(topology::family_id_from_target_version(130000), 0u);
}

TEST(Topology, BadPropertiesFileLogsOneWarning)
{
    auto tree = fake_tree{};
    tree.write("nodes/0/properties",
               "cpu_cores_count x\ncpu_cores_count 2\nsimd_count y\nsimd_count z\n");
    testing::internal::CaptureStderr();
    auto topo = topology::read(tree.root());
    auto log  = testing::internal::GetCapturedStderr();
    ASSERT_EQ(topo.agents.size(), 1u);
    EXPECT_EQ(topo.agents[0]->agent.cpu_cores_count, 2u);
    auto   marker   = std::string{"line(s) with a bad value"};
    size_t warnings = 0;
    for(auto at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1))
        ++warnings;
    EXPECT_EQ(warnings, 1u) << log;
    EXPECT_NE(log.find("skipped 3 line(s)"), std::string::npos) << log;
    EXPECT_NE(log.find("first at line 1"), std::string::npos) << log;
}
} // namespace
