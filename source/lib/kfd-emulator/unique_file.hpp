// MIT License - see LICENSE.
//
// A new file next to a target path, for writing it completely before rename() puts it in
// place: <target>.tmp.<16 random hex digits>, created with O_CREAT|O_EXCL|O_NOFOLLOW, so that a
// name guessed in advance, a file planted there or a symlink there is never opened.
#pragma once

#include <string>

namespace kfd_emu
{
// Returns the fd (and the name in `path`), or -1 with errno set.
int create_unique_file(const std::string& target, std::string& path);
} // namespace kfd_emu
