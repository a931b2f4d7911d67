// MIT License - see LICENSE.
//
// What the command does around the tool's output folders: create and check the fixed part
// before launching, and afterwards find the folders this run wrote (to repair them when
// the program died of a signal, and to run the HTML report).
#pragma once

#include "environment.hpp"

#include <ctime>
#include <string>
#include <vector>

namespace rocprof_kfd
{
// Creates (with parents) and checks the fixed prefix of the directory template; "" when it
// can be written, else a one-line message naming the folder.
std::string prepare_output_directory(const std::string& directory_template);

// Folders matching the template (see output_glob) modified at or after `since`.
std::vector<std::string> written_output_directories(const std::string& directory_template,
                                                    const env_list& env, std::time_t since);

// After a death by signal: rocprof-kfd-merge --repair DIR for each folder, when it exists.
void repair_outputs(const std::vector<std::string>& directories);

// Of `directories`, those whose summary (summary.json or STEM_summary.json) process `pid`
// left unfinished: the placeholder its tool writes first, replaced only at finalization. A
// program that ended with _exit (as a shell's `exit` does) never finalized.
std::vector<std::string> unfinished_by(const std::vector<std::string>& directories, int pid);

// rocprof-kfd-report -o DIR/report.html DIR for each folder holding a summary.json.
// Returns false (after one line on stderr) if the report program is missing or failed.
bool write_html_reports(const std::vector<std::string>& directories);

std::string this_hostname();
} // namespace rocprof_kfd
