// MIT License - see LICENSE.
//
// The emulated KFD topology: a private copy of /sys/class/kfd/kfd/topology written into a
// temporary folder (one CPU node, then the emulated GPUs in order), to which the emulator
// redirects every open() under the real topology path.
#pragma once

#include "config.hpp"

#include <string>
#include <vector>

namespace kfd_emu
{
struct topology_tree
{
    std::string              root;  // the temporary folder
    std::vector<std::string> files; // every file and folder created, in creation order
};

// Writes the tree into a new mkdtemp() folder. Returns false (and error) on failure.
bool write_topology(const config& cfg, topology_tree& tree, std::string& error);

// Removes what write_topology created.
void remove_topology(const topology_tree& tree);

// When path names something under the real topology root, sets redirected to the same path
// under root and returns true.
bool redirect_topology_path(const char* path, const std::string& root, std::string& redirected);

// gfx_target_version of a gfx name: "gfx90a" -> 90010, "gfx942" -> 90402, "gfx1100" -> 110000.
unsigned gfx_target_version(const std::string& name);
} // namespace kfd_emu
