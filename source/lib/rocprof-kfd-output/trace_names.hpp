// MIT License - see LICENSE.
//
// Names shared by the Perfetto and Chrome traces: slice names, track names, and which GPU
// track a record belongs to.
#pragma once

#include "model.hpp"

#include <string>

namespace rocprof_kfd
{
// "read fault (migrated)", "migrate (pagefault_gpu)", "queue suspend (svm)", "unmap (...)".
std::string slice_name(const record& r);
// The GPU a record is drawn on: the faulting/suspended/unmapped GPU; for a migration the
// destination GPU, or the source when the destination is system memory.
uint32_t record_gpu(const record& r);
// "GPU gfx90a (1234) page faults", lane > 0 appends " #<lane+1>".
std::string lane_track_name(const std::vector<agent_info>& agents, uint32_t gpu, int operation,
                            size_t lane);
// "rank 0 @ host: ./app (pid 123)" or "host: ./app (pid 123)".
std::string process_label(const run_info& run);
} // namespace rocprof_kfd
