// MIT License - see LICENSE.
#include "writer.hpp"

#include "csv_writer.hpp"
#include "output_file.hpp"

namespace rocprof_kfd
{
std::string
output_path(const std::string& dir, const std::string& stem, const std::string& name)
{
    std::string file = stem.empty() ? name : stem + "_" + name;
    if(dir.empty()) return file;
    return dir.back() == '/' ? dir + file : dir + "/" + file;
}

std::unique_ptr<record_writer>
make_writer(const std::string& format)
{
    if(format == "csv") return make_csv_writer();
    if(format == "json") return make_json_writer();
    if(format == "perfetto") return make_perfetto_writer();
    if(format == "chrome-trace") return make_chrome_writer();
    if(format == "sqlite") return make_sqlite_writer();
    return nullptr;
}

bool
write_whole_file(const std::string& path, const std::string& text)
{
    output_file f;
    if(!f.open(path)) return false;
    f.append(text);
    return f.close();
}

std::vector<std::string>
write_summary_files(const std::string& dir, const std::string& stem, const run_info& run,
                    const summary_builder& s, bool complete, bool with_text)
{
    std::vector<std::string> written;
    std::string              json = output_path(dir, stem, "summary.json");
    if(write_whole_file(json, summary_json(run, s, complete))) written.push_back(json);
    if(with_text)
    {
        std::string txt = output_path(dir, stem, "summary.txt");
        if(write_whole_file(txt, summary_text(run, s))) written.push_back(txt);
    }
    return written;
}
} // namespace rocprof_kfd
