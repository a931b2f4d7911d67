// MIT License - see LICENSE.
//
// The CSV and Perfetto writers against expectations written by hand, one record of every
// kind (and a trigger outside the enum, an agent name CSV must quote, an unknown GPU, an end
// before the start). CSV: the exact lines. Perfetto: the file decoded by a protobuf reader
// written here (field numbers from Perfetto's trace_packet.proto, track_event.proto,
// track_descriptor.proto, debug_annotation.proto, interned_data.proto), each packet rendered
// as "field:value" in wire order and compared with the text below, so a change of any byte
// (order, varint, length) shows.
#include "oracle.hpp"

#include <rocprof-kfd-output/csv_writer.hpp>
#include <rocprof-kfd-output/perfetto_writer.hpp>
#include <rocprof-kfd-output/summary.hpp>

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace rocprof_kfd;
using kfd_out_test::scratch;
using kfd_out_test::slurp;

namespace
{
run_info
golden_run()
{
    run_info run;
    run.pid      = 7;
    run.hostname = "h";
    run.command  = {"./app"};
    run.agents   = {{0, 0, "CPU", false}, {0x1234, 1, "gfx90a", true}, {99, 2, "gfx\"9,0", true}};
    return run;
}

record
base(int operation, uint64_t start, uint64_t end)
{
    record r          = {};
    r.size            = sizeof(r);
    r.operation       = operation;
    r.pid             = 7;
    r.start_timestamp = start;
    r.end_timestamp   = end;
    return r;
}

std::vector<record>
golden_records()
{
    std::vector<record> v;
    record              f = base(ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, 1000, 1500);
    f.page_fault          = {1, 0, 0x1234, 0x7f0000001000};
    v.push_back(f);
    record m       = base(ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, 2000, 2600);
    m.page_migrate = {0x7f0000200000,
                      0x7f00003fffff,
                      0,
                      0x1234,
                      0xffffffff,
                      0,
                      ROCPROFILER_PAGE_MIGRATION_TRIGGER_PAGEFAULT_GPU};
    v.push_back(m);
    record q        = base(ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, 3000, 3100);
    q.queue_suspend = {1, 99, ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND_TRIGGER_CRIU_CHECKPOINT};
    v.push_back(q);
    record u         = base(ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU, 4000, 4000);
    u.unmap_from_gpu = {0x1234, 0x7f0000400000, 0x7f0000401000,
                        ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU_TRIGGER_MMU_NOTIFY};
    v.push_back(u);
    // Outside every table: trigger 7, gpu 555 without an agent, end before start, end_addr
    // before start_addr. (7 is past the names but inside the enum's range, -8..7: a C++
    // value outside it, such as 9, cannot be stored in the field without undefined behaviour,
    // which UBSan reports; the SDK clamps what the kernel sends and counts it in
    // fields_out_of_range, so records never carry one.)
    record odd       = base(ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, 5000, 4900);
    odd.page_migrate = {
        0x1000, 0xfff, 555, 0, 1, 2, static_cast<rocprofiler_page_migration_trigger_t>(7)};
    v.push_back(odd);
    return v;
}

// ---- a protobuf reader of its own (wire format: protobuf.dev/programming-guides/encoding)
enum class kind
{
    trace,
    packet,
    event,
    annotation,
    track,
    process,
    interned,
    entry,
    other
};

// Length-delimited fields that are messages, by the message holding them; the rest are strings.
kind
child_kind(kind parent, uint64_t field)
{
    switch(parent)
    {
    case kind::trace:
        return field == 1 ? kind::packet : kind::other;
    case kind::packet:
        return field == 11   ? kind::event
               : field == 12 ? kind::interned
               : field == 60 ? kind::track
                             : kind::other;
    case kind::event:
        return field == 4 ? kind::annotation : kind::other;
    case kind::track:
        return field == 3 ? kind::process : field == 8 ? kind::entry : kind::other;
    case kind::interned:
        return kind::entry;
    default:
        return kind::other;
    }
}

struct reader
{
    const std::string& bytes;
    size_t             pos;
    size_t             end;

    uint64_t varint()
    {
        uint64_t v = 0;
        for(int shift = 0; shift < 64; shift += 7)
        {
            if(pos >= end) throw std::runtime_error("varint past the end");
            auto b = static_cast<unsigned char>(bytes[pos++]);
            v |= uint64_t{b & 0x7fu} << shift;
            if(b < 0x80) return v;
        }
        throw std::runtime_error("varint too long");
    }
};

// "field:value ..." of bytes[pos, end) read as a message of kind k.
std::string
render(const std::string& bytes, size_t pos, size_t end, kind k)
{
    reader      in{bytes, pos, end};
    std::string out;
    while(in.pos < in.end)
    {
        uint64_t key   = in.varint();
        uint64_t field = key >> 3;
        if(!out.empty()) out += ' ';
        out += std::to_string(field) + ":";
        switch(key & 7)
        {
        case 0:
            out += std::to_string(in.varint());
            break;
        case 2:
        {
            uint64_t size = in.varint();
            if(size > in.end - in.pos) throw std::runtime_error("length past the end");
            kind c = child_kind(k, field);
            if(c == kind::other)
                out += "\"" + bytes.substr(in.pos, size) + "\"";
            else
                out += "{" + render(bytes, in.pos, in.pos + size, c) + "}";
            in.pos += size;
            break;
        }
        default:
            throw std::runtime_error("unexpected wire type " + std::to_string(key & 7));
        }
    }
    return out;
}

// Each Trace.packet of the file, rendered.
std::vector<std::string>
packets(const std::string& file)
{
    std::vector<std::string> out;
    reader                   in{file, 0, file.size()};
    while(in.pos < in.end)
    {
        if(in.varint() != ((1u << 3) | 2)) throw std::runtime_error("not a Trace.packet field");
        uint64_t size = in.varint();
        if(size > in.end - in.pos) throw std::runtime_error("packet past the end");
        out.push_back(render(file, in.pos, in.pos + size, kind::packet));
        in.pos += size;
    }
    return out;
}

std::string
sliced(const std::string& begin_fields, const std::string& event, const std::string& end_fields,
       const std::string& end_event)
{
    return begin_fields + " 11:{" + event + "}\n" + end_fields + " 11:{" + end_event + "}";
}
} // namespace

TEST(writers_golden, csv_rows_of_every_kind)
{
    const auto                     run  = golden_run();
    const auto                     rs   = golden_records();
    const std::vector<std::string> want = {
        "7,1000,1500,500,4660,gfx90a,0x7f0000001000,1,0\n",
        "7,2000,2600,600,0x7f0000200000,0x7f00003fffff,2097152,0,CPU,4660,gfx90a,4294967295,0,"
        "pagefault_gpu\n",
        "7,3000,3100,100,99,\"gfx\"\"9,0\",criu_checkpoint,1\n",
        "7,4000,4000,4660,gfx90a,0x7f0000400000,0x7f0000401000,mmu_notify\n",
        "7,5000,4900,0,0x1000,0xfff,0,555,gpu_id 555,0,CPU,1,2,unknown_7\n"};
    for(size_t i = 0; i < rs.size(); ++i)
        EXPECT_EQ(csv_row(rs[i], run.agents), want[i]) << i;
}

TEST(writers_golden, csv_files_hold_the_header_and_the_rows)
{
    scratch dir;
    auto    run = golden_run();
    auto    w   = make_csv_writer();
    ASSERT_TRUE(w->open(dir.path, "", run));
    for(const auto& r : golden_records())
        w->write(r);
    w->end_batch();
    summary_builder s(4);
    w->finish(run, s);
    EXPECT_EQ(slurp(dir.file("page_fault.csv")),
              "pid,start_timestamp,end_timestamp,duration_ns,node_id,node_name,address,read_fault,"
              "migrated\n7,1000,1500,500,4660,gfx90a,0x7f0000001000,1,0\n");
    EXPECT_EQ(slurp(dir.file("page_migrate.csv")),
              "pid,start_timestamp,end_timestamp,duration_ns,start_addr,end_addr,bytes,from_node,"
              "from_name,to_node,to_name,prefetch_node,preferred_node,trigger\n"
              "7,2000,2600,600,0x7f0000200000,0x7f00003fffff,2097152,0,CPU,4660,gfx90a,"
              "4294967295,0,pagefault_gpu\n"
              "7,5000,4900,0,0x1000,0xfff,0,555,gpu_id 555,0,CPU,1,2,unknown_7\n");
    EXPECT_EQ(slurp(dir.file("queue_suspend.csv")),
              "pid,start_timestamp,end_timestamp,duration_ns,node_id,node_name,trigger,"
              "rescheduled\n7,3000,3100,100,99,\"gfx\"\"9,0\",criu_checkpoint,1\n");
    EXPECT_EQ(slurp(dir.file("unmap_from_gpu.csv")),
              "pid,start_timestamp,end_timestamp,node_id,node_name,start_addr,end_addr,trigger\n"
              "7,4000,4000,4660,gfx90a,0x7f0000400000,0x7f0000401000,mmu_notify\n");
}

TEST(writers_golden, perfetto_packets_of_every_kind)
{
    scratch        dir;
    perfetto_trace trace;
    ASSERT_TRUE(trace.open(dir.file("t.pftrace")));
    trace.begin_process(golden_run(), 7);
    for(const auto& r : golden_records())
        trace.write(r);
    ASSERT_TRUE(trace.close());
    std::vector<std::string> got;
    ASSERT_NO_THROW(got = packets(slurp(dir.file("t.pftrace"))));
    ASSERT_EQ(got.size(), 16u);

    // The first packet clears the incremental state and interns names: iid -> name.
    const std::string interned_prefix = "10:1 13:1 12:{1:{1:1 2:\"kfd\"} ";
    EXPECT_EQ(got[0].substr(0, interned_prefix.size()), interned_prefix);
    const std::map<int, std::string> event_names = {{1, "write fault (updated)"},
                                                    {3, "read fault (updated)"},
                                                    {7, "migrate (pagefault_gpu)"},
                                                    {15, "queue suspend (criu_checkpoint)"},
                                                    {18, "unmap (mmu_notify)"}};
    for(const auto& [iid, name] : event_names)
        EXPECT_NE(got[0].find("2:{1:" + std::to_string(iid) + " 2:\"" + name + "\"}"),
                  std::string::npos)
            << iid << " " << name;
    const char* annotations[] = {"pid",       "address",    "read_fault",    "migrated",
                                 "node_id",   "start_addr", "end_addr",      "bytes",
                                 "from_node", "to_node",    "prefetch_node", "preferred_node",
                                 "trigger",   "rescheduled"};
    for(int i = 0; i < 14; ++i)
        EXPECT_NE(got[0].find("3:{1:" + std::to_string(i + 1) + " 2:\"" + annotations[i] + "\"}"),
                  std::string::npos)
            << annotations[i];

    EXPECT_EQ(got[1], "10:1 60:{1:1 3:{1:7 6:\"h: ./app (pid 7)\"}}");
    // Timed packets: timestamp, clock BOOTTIME (6), sequence 1, SEQ_NEEDS_INCREMENTAL_STATE.
    auto timed = [](int ts) { return "8:" + std::to_string(ts) + " 58:6 10:1 13:2"; };
    auto pair  = [&](size_t i) { return got[i] + "\n" + got[i + 1]; };

    EXPECT_EQ(got[2], "10:1 60:{1:2 5:1 2:\"GPU gfx90a (4660) page faults\"}");
    EXPECT_EQ(pair(3), sliced(timed(1000),
                              "9:1 11:2 3:1 10:3 4:{1:1 3:7} 4:{1:2 7:139637976731648} "
                              "4:{1:3 2:1} 4:{1:4 2:0} 4:{1:5 3:4660}",
                              timed(1500), "9:2 11:2"));

    EXPECT_EQ(got[5], "10:1 60:{1:3 5:1 2:\"GPU gfx90a (4660) migrations\"}");
    EXPECT_EQ(pair(6), sliced(timed(2000),
                              "9:1 11:3 3:1 10:7 4:{1:1 3:7} 4:{1:6 7:139637978824704} "
                              "4:{1:7 7:139637980921855} 4:{1:8 3:2097152} 4:{1:9 3:0} "
                              "4:{1:10 3:4660} 4:{1:11 3:4294967295} 4:{1:12 3:0} "
                              "4:{1:13 6:\"pagefault_gpu\"}",
                              timed(2600), "9:2 11:3"));

    EXPECT_EQ(got[8], "10:1 60:{1:4 5:1 2:\"GPU gfx\"9,0 (99) queue suspensions\"}");
    EXPECT_EQ(pair(9), sliced(timed(3000),
                              "9:1 11:4 3:1 10:15 4:{1:1 3:7} 4:{1:5 3:99} "
                              "4:{1:13 6:\"criu_checkpoint\"} 4:{1:14 2:1}",
                              timed(3100), "9:2 11:4"));

    EXPECT_EQ(got[11], "10:1 60:{1:5 5:1 2:\"GPU gfx90a (4660) unmaps\"}");
    EXPECT_EQ(got[12], timed(4000) + " 11:{9:3 11:5 3:1 10:18 4:{1:1 3:7} 4:{1:5 3:4660} "
                                     "4:{1:6 7:139637980921856} 4:{1:7 7:139637980925952} "
                                     "4:{1:13 6:\"mmu_notify\"}}");

    // Not interned: the name in full; the end clamped to the start.
    EXPECT_EQ(got[13], "10:1 60:{1:6 5:1 2:\"GPU gpu_id 555 (555) migrations\"}");
    EXPECT_EQ(pair(14), sliced(timed(5000),
                               "9:1 11:6 3:1 23:\"migrate (unknown_7)\" 4:{1:1 3:7} "
                               "4:{1:6 7:4096} 4:{1:7 7:4095} 4:{1:8 3:0} 4:{1:9 3:555} "
                               "4:{1:10 3:0} 4:{1:11 3:1} 4:{1:12 3:2} 4:{1:13 6:\"unknown_7\"}",
                               timed(5000), "9:2 11:6"));
}

// Every slice name the writer interns: each record's name_iid names, in the first packet,
// the name written here by hand.
TEST(writers_golden, perfetto_interned_slice_name_of_every_trigger)
{
    struct named
    {
        record      r;
        const char* name;
    };
    std::vector<named> cases;
    const char*        faults[] = {"write fault (updated)", "write fault (migrated)",
                                   "read fault (updated)", "read fault (migrated)"};
    for(int i = 0; i < 4; ++i)
    {
        record f     = base(ROCPROFILER_PAGE_MIGRATION_PAGE_FAULT, 10, 20);
        f.page_fault = {static_cast<uint8_t>(i / 2), static_cast<uint8_t>(i % 2), 0x1234, 0};
        cases.push_back({f, faults[i]});
    }
    const char* migrate[] = {"migrate (none)", "migrate (prefetch)", "migrate (pagefault_gpu)",
                             "migrate (pagefault_cpu)", "migrate (ttm_eviction)"};
    for(int t = -1; t <= 3; ++t)
    {
        record m               = base(ROCPROFILER_PAGE_MIGRATION_PAGE_MIGRATE, 10, 20);
        m.page_migrate.to_node = 0x1234;
        m.page_migrate.trigger = static_cast<rocprofiler_page_migration_trigger_t>(t);
        cases.push_back({m, migrate[t + 1]});
    }
    const char* suspend[] = {"queue suspend (none)",        "queue suspend (svm)",
                             "queue suspend (userptr)",     "queue suspend (ttm)",
                             "queue suspend (suspend)",     "queue suspend (criu_checkpoint)",
                             "queue suspend (criu_restore)"};
    for(int t = -1; t <= 5; ++t)
    {
        record q        = base(ROCPROFILER_PAGE_MIGRATION_QUEUE_SUSPEND, 10, 20);
        q.queue_suspend = {0, 0x1234,
                           static_cast<rocprofiler_page_migration_queue_suspend_trigger_t>(t)};
        cases.push_back({q, suspend[t + 1]});
    }
    const char* unmap[] = {"unmap (none)", "unmap (mmu_notify)", "unmap (mmu_notify_migrate)",
                           "unmap (unmap_from_cpu)"};
    for(int t = -1; t <= 2; ++t)
    {
        record u         = base(ROCPROFILER_PAGE_MIGRATION_UNMAP_FROM_GPU, 10, 10);
        u.unmap_from_gpu = {0x1234, 0, 1,
                            static_cast<rocprofiler_page_migration_unmap_from_gpu_trigger_t>(t)};
        cases.push_back({u, unmap[t + 1]});
    }

    scratch        dir;
    perfetto_trace trace;
    ASSERT_TRUE(trace.open(dir.file("t.pftrace")));
    trace.begin_process(golden_run(), 7);
    for(const auto& c : cases)
        trace.write(c.r);
    ASSERT_TRUE(trace.close());
    std::vector<std::string> got;
    ASSERT_NO_THROW(got = packets(slurp(dir.file("t.pftrace"))));
    ASSERT_FALSE(got.empty());

    // iid -> name from the interned event names ("2:{1:<iid> 2:"<name>"}").
    std::map<std::string, std::string> interned;
    for(size_t at = got[0].find("2:{1:"); at != std::string::npos; at = got[0].find("2:{1:", at))
    {
        size_t space                                    = got[0].find(' ', at);
        size_t quote                                    = got[0].find('"', space);
        size_t end                                      = got[0].find('"', quote + 1);
        interned[got[0].substr(at + 5, space - at - 5)] = got[0].substr(quote + 1, end - quote - 1);
        at                                              = end;
    }
    // The name_iid (field 10) of each begin or instant event, in record order.
    std::vector<std::string> names;
    for(const auto& p : got)
    {
        if(p.find(" 11:{9:1 ") == std::string::npos && p.find(" 11:{9:3 ") == std::string::npos)
            continue;
        size_t at = p.find(" 3:1 10:");
        ASSERT_NE(at, std::string::npos) << p;
        size_t iid_end = p.find(' ', at + 8);
        names.push_back(interned[p.substr(at + 8, iid_end - at - 8)]);
    }
    ASSERT_EQ(names.size(), cases.size());
    for(size_t i = 0; i < cases.size(); ++i)
        EXPECT_EQ(names[i], cases[i].name) << i;
}
