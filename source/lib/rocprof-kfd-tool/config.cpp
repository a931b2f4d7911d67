// MIT License - see LICENSE.
#include "config.hpp"

#include <rocprof-kfd-output/names.hpp>

#include <cstdlib>

namespace rocprof_kfd
{
namespace
{
std::vector<std::string>
split_list(const std::string& text)
{
    std::vector<std::string> out;
    std::string              word;
    for(char c : text + ",")
    {
        if(c == ',' || c == ' ' || c == '\t')
        {
            if(!word.empty()) out.push_back(word);
            word.clear();
        }
        else
            word += c;
    }
    return out;
}

bool
known_format(const std::string& f)
{
    for(const char* k : {"summary", "csv", "json", "perfetto", "chrome-trace", "sqlite"})
        if(f == k) return true;
    return false;
}

std::string
sanitized_value(std::string value)
{
    for(char& c : value)
        if(c == '/') c = '_';
    return value;
}

// Expands one path component (no '/').
std::string
expand_component(const std::string& text, const placeholder_values& v, const env_lookup& lookup)
{
    std::string out;
    size_t      i = 0;
    while(i < text.size())
    {
        if(text[i] != '%')
        {
            out += text[i++];
            continue;
        }
        auto starts = [&](const char* word)
        { return text.compare(i, std::string(word).size(), word) == 0; };
        if(starts("%pid%"))
            out += std::to_string(v.pid), i += 5;
        else if(starts("%ppid%"))
            out += std::to_string(v.ppid), i += 6;
        else if(starts("%hostname%"))
            out += sanitized_value(v.hostname), i += 10;
        else if(starts("%rank%"))
            out += sanitized_value(v.rank), i += 6;
        else if(starts("%env{"))
        {
            size_t close = text.find("}%", i + 5);
            if(close == std::string::npos)
            {
                out += text[i++];
                continue;
            }
            std::string name  = text.substr(i + 5, close - (i + 5));
            const char* value = name.empty() ? nullptr : lookup(name.c_str());
            out += sanitized_value(value ? value : "");
            i = close + 2;
        }
        else
            out += text[i++];
    }
    return out;
}
} // namespace

std::string
rank_from(const env_lookup& lookup)
{
    for(const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK"})
    {
        const char* value = lookup(name);
        if(value && *value) return value;
    }
    return "";
}

std::string
expand_placeholders(const std::string& text, const placeholder_values& values,
                    const env_lookup& lookup)
{
    std::string out;
    size_t      start = 0;
    for(;;)
    {
        size_t      slash = text.find('/', start);
        std::string component =
            text.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        std::string expanded = expand_component(component, values, lookup);
        if(expanded != component && (expanded.empty() || expanded == "." || expanded == ".."))
            expanded = "_";
        out += expanded;
        if(slash == std::string::npos) break;
        out += '/';
        start = slash + 1;
    }
    return out;
}

tool_config
read_config(const env_lookup& lookup)
{
    tool_config c;
    auto        get = [&](const char* name) -> std::string
    {
        const char* v = lookup(name);
        return v ? v : "";
    };
    if(const char* v = lookup("ROCPROF_KFD_OUTPUT_DIRECTORY"); v && *v) c.directory = v;
    c.stem = get("ROCPROF_KFD_OUTPUT_FILE");
    if(const char* v = lookup("ROCPROF_KFD_OUTPUT_FORMAT"); v && *v)
    {
        c.formats.clear();
        for(const auto& f : split_list(v))
        {
            if(known_format(f))
                c.formats.push_back(f);
            else
                c.warnings.push_back("ROCPROF_KFD_OUTPUT_FORMAT: unknown format '" + f +
                                     "' ignored");
        }
    }
    if(const char* v = lookup("ROCPROF_KFD_EVENTS"); v && *v)
    {
        for(const auto& e : split_list(v))
        {
            if(int op = operation_from_event_name(e))
                c.operations.push_back(op);
            else
                c.warnings.push_back("ROCPROF_KFD_EVENTS: unknown event '" + e + "' ignored");
        }
        if(c.operations.empty())
            c.warnings.push_back("ROCPROF_KFD_EVENTS: no known event; tracing all of them");
    }
    if(c.operations.empty()) c.operations = {1, 2, 3, 4};
    c.raw_file = get("ROCPROF_KFD_RAW_FILE");
    if(const char* v = lookup("ROCPROF_KFD_THRASHING_THRESHOLD"); v && *v)
    {
        char*              end = nullptr;
        unsigned long long n   = std::strtoull(v, &end, 10);
        if(*end == '\0' && n >= 1 && n <= 1000000 && v[0] != '-')
            c.thrashing_threshold = n;
        else
            c.warnings.push_back(std::string("ROCPROF_KFD_THRASHING_THRESHOLD: '") + v +
                                 "' is not a number from 1 to 1000000; using 4");
    }
    c.summary_stderr = get("ROCPROF_KFD_SUMMARY_STDERR") != "0";
    c.command_line   = get("ROCPROF_KFD_COMMAND_LINE");
    return c;
}
} // namespace rocprof_kfd
