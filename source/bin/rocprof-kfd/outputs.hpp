// MIT License - see LICENSE.
//
// What the command does around the tool's output folders: create and check the fixed part
// before launching, and afterwards find the folders this run wrote (to repair them when
// the program died of a signal, and to run the HTML report).
#pragma once

#include "environment.hpp"

#include <string>
#include <vector>

namespace rocprof_kfd
{
// Creates (with parents) and checks the fixed prefix of the directory template; "" when it
// can be written, else a one-line message naming the folder.
std::string prepare_output_directory(const std::string& directory_template);

// The processes' outputs of this run, as each one's tool listed them (tool.cpp,
// note_in_run_list): whatever placeholders, environment or working folder made them, and
// only this run's (not an earlier run's files in a reused folder, nor another run's).
struct run_output
{
    int         pid = 0;
    std::string stem;      // "" for plain names, else the files' prefix before '_'
    std::string directory; // absolute
};

// A new, empty list in $TMPDIR (else /tmp), for ROCPROF_KFD_RUN_LIST; "" when it cannot be
// created (nothing is repaired or reported then).
std::string create_run_list();
// Its entries, once the program ended; removes the file.
std::vector<run_output> read_run_list(const std::string& path);

// After a death by signal: rocprof-kfd-merge --repair DIR for each folder, unless a process of
// this run still writes there (one line says so).
void repair_outputs(const std::vector<run_output>& outputs);

// Of `outputs`, those of process `pid` whose summary is still the placeholder its tool writes
// first, replaced only at finalization: a program that ended with _exit (as a shell's `exit`
// does) never finalized.
std::vector<run_output> unfinished_by(const std::vector<run_output>& outputs, int pid);

// rocprof-kfd-report -o DIR/[STEM_]report.html DIR/[STEM_]summary.json for each output.
// Returns false (after one line on stderr) if the report program is missing or failed.
bool write_html_reports(const std::vector<run_output>& outputs);

std::string this_hostname();
} // namespace rocprof_kfd
