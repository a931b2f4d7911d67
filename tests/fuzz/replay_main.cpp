// MIT License - see LICENSE.
//
// Runs the fuzz target over files, for builds without libFuzzer (gcc) and for the regression
// tests: each argument is a file or a folder of files. Exits 0 when every input held every
// invariant; a violation aborts (the target prints which one).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace
{
void
collect(const std::string& path, std::vector<std::string>& files)
{
    struct stat st
    {
    };
    if(stat(path.c_str(), &st) != 0) return;
    if(!S_ISDIR(st.st_mode))
    {
        files.push_back(path);
        return;
    }
    DIR* dir = opendir(path.c_str());
    if(dir == nullptr) return;
    while(dirent* entry = readdir(dir))
    {
        std::string name = entry->d_name;
        if(name != "." && name != "..") collect(path + "/" + name, files);
    }
    closedir(dir);
}
} // namespace

int
main(int argc, char** argv)
{
    std::vector<std::string> files;
    for(int i = 1; i < argc; ++i)
        collect(argv[i], files);
    std::sort(files.begin(), files.end());
    if(files.empty())
    {
        std::fprintf(stderr, "kfd-stream-replay: no input files\n");
        return 2;
    }
    for(const auto& file : files)
    {
        std::ifstream     in(file, std::ios::binary);
        std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
        std::fprintf(stderr, "kfd-stream-replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("kfd-stream-replay: %zu inputs, every invariant held\n", files.size());
    return 0;
}
