// MIT License - see LICENSE.
//
// Names of operations and triggers as they appear in every output (lower case, the
// contract's enum names without their prefix).
#pragma once

#include "byte_buffer.hpp"
#include "model.hpp"

#include <string>

namespace rocprof_kfd
{
inline constexpr int operation_count = 4; // PAGE_MIGRATE .. UNMAP_FROM_GPU (1..4)

// "page_migrate", "page_fault", "queue_suspend", "unmap_from_gpu"; "none" otherwise.
const char* operation_name(int operation);
// Inverse of operation_name (0 when unknown).
int operation_from_name(const std::string& name);

// The trigger of a record as a number (page faults have none: -1).
int record_trigger(const record& r);
// Trigger name of an operation's trigger value ("pagefault_gpu", "svm", "mmu_notify", ...;
// "none" for -1, "unknown_<n>" outside the enum).
std::string trigger_name(int operation, int trigger);
// trigger_name appended to out (no allocation once out has grown).
void append_trigger_name(byte_buffer& out, int operation, int trigger);
// Inverse of trigger_name (-1 when unknown).
int trigger_from_name(int operation, const std::string& name);

// Events of ROCPROF_KFD_EVENTS: "page-migrate" -> PAGE_MIGRATE, ... (0 when unknown).
int operation_from_event_name(const std::string& name);
} // namespace rocprof_kfd
