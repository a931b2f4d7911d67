// MIT License - see LICENSE.
//
// Creation of the SDK's own threads: runs the tools' pre/post-create notifications
// (rocprofiler_at_internal_thread_create) around every std::thread the SDK starts, names
// the thread, blocks the program's signals in it, and reports failure as a status instead
// of an exception.
#pragma once

#include <rocprofiler-sdk/fwd.h>

#include <functional>
#include <memory>
#include <thread>

namespace rocprofiler::internal_threading
{
// Starts `body` on a new thread named `name` (at most 15 characters), with every
// asynchronous signal blocked from its first instruction. nullptr on failure.
// Runs the tools' notifications: the caller must hold no SDK lock (a tool may call any
// API from them).
std::unique_ptr<std::thread> start_thread(const char* name, std::function<void()> body) noexcept;
} // namespace rocprofiler::internal_threading
