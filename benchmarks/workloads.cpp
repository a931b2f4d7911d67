// MIT License - see LICENSE.
#include "workloads.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#ifndef ROCPROF_KFD_GEN_PATH
#    define ROCPROF_KFD_GEN_PATH "rocprof-kfd-gen"
#endif

namespace bench_workloads
{
namespace
{
const std::vector<std::string> scenario_names = {"streaming", "thrashing", "prefetch",
                                                 "eviction",  "unmap",     "mixed"};
// The mix covers every format variant: each scenario is generated in another era.
const char* const mix_eras[] = {"6.0", "6.12", "6.13", "2026", "6.12", "6.0"};

std::string
generator()
{
    const char* path = std::getenv("ROCPROF_KFD_GEN");
    return path != nullptr && *path != '\0' ? path : ROCPROF_KFD_GEN_PATH;
}

std::string
generate(const std::string& scenario, const std::string& era, uint64_t events, unsigned seed)
{
    std::string command = generator() + " --raw --gpus 2 --other-pids 1 --pid " +
                          std::to_string(traced_pid) + " --scenario " + scenario + " --era " + era +
                          " --events " + std::to_string(events) + " --seed " + std::to_string(seed);
    std::unique_ptr<FILE, int (*)(FILE*)> pipe{popen(command.c_str(), "r"), pclose};
    if(!pipe) throw std::runtime_error("cannot run " + command);
    std::string text;
    char        buffer[1 << 16];
    size_t      n = 0;
    while((n = fread(buffer, 1, sizeof(buffer), pipe.get())) > 0)
        text.append(buffer, n);
    if(text.empty()) throw std::runtime_error("no output from " + command);
    return text;
}

std::vector<std::string_view>
split_lines(std::string_view text)
{
    std::vector<std::string_view> lines;
    size_t                        start = 0;
    while(start < text.size())
    {
        size_t nl = text.find('\n', start);
        if(nl == std::string_view::npos) nl = text.size() - 1;
        lines.push_back(text.substr(start, nl + 1 - start));
        start = nl + 1;
    }
    return lines;
}

// Interleaves the scenarios' logs at random (each keeps its own order, so pairs still pair).
std::string
make_mix(uint64_t events)
{
    std::vector<std::string>                   texts;
    std::vector<std::vector<std::string_view>> lines;
    const uint64_t                             per = events / scenario_names.size() + 1;
    for(size_t i = 0; i < scenario_names.size(); ++i)
        texts.push_back(generate(scenario_names[i], mix_eras[i], per, 100 + i));
    for(auto& t : texts)
        lines.push_back(split_lines(t));
    std::vector<size_t> next(lines.size(), 0);
    std::mt19937_64     rng{20261201};
    std::string         mix;
    mix.reserve(events * 48);
    for(uint64_t n = 0; n < events; ++n)
    {
        size_t pick = rng() % lines.size();
        while(next[pick] >= lines[pick].size())
            pick = (pick + 1) % lines.size();
        mix.append(lines[pick][next[pick]++]);
    }
    return mix;
}
} // namespace

const std::vector<std::string>&
names()
{
    static const std::vector<std::string> all = []
    {
        auto v = scenario_names;
        v.push_back("mix");
        return v;
    }();
    return all;
}

std::vector<std::string_view>
cut_into_reads(std::string_view text, size_t limit)
{
    std::vector<std::string_view> chunks;
    size_t                        start = 0;
    while(start < text.size())
    {
        size_t end = start + limit < text.size() ? start + limit : text.size();
        if(end < text.size())
        {
            size_t nl = text.rfind('\n', end - 1);
            end       = nl != std::string_view::npos && nl >= start ? nl + 1 : end;
        }
        chunks.push_back(text.substr(start, end - start));
        start = end;
    }
    return chunks;
}

const workload&
get(const std::string& name, uint64_t events)
{
    static std::map<std::string, std::unique_ptr<workload>> cache;
    auto& slot = cache[name + "/" + std::to_string(events)];
    if(slot) return *slot;
    // Keep one workload in memory at a time: 1M lines are about 50 MB.
    cache.clear();
    auto& fresh   = cache[name + "/" + std::to_string(events)];
    fresh         = std::make_unique<workload>();
    fresh->name   = name;
    fresh->text   = name == "mix" ? make_mix(events) : generate(name, "6.13", events, 7);
    fresh->chunks = cut_into_reads(fresh->text, chunk_bytes);
    for(char c : fresh->text)
        fresh->lines += c == '\n';
    return *fresh;
}
} // namespace bench_workloads
