// MIT License - see LICENSE.
//
// Every C API entry point that can reach C++ code that may throw runs its body through
// api_call(): no exception ever crosses into the tool or the application.
#pragma once

#include "rocprofiler-sdk/logging.hpp"

#include <rocprofiler-sdk/fwd.h>

#include <exception>
#include <new>

namespace rocprofiler
{
template <typename Fn>
rocprofiler_status_t
api_call(const char* name, Fn&& body) noexcept
{
    try
    {
        return body();
    }
    catch(const std::bad_alloc&)
    {
        ROCP_ERROR << name << ": out of memory";
        return ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    catch(const std::exception& e)
    {
        ROCP_ERROR << name << ": internal error: " << e.what();
        return ROCPROFILER_STATUS_ERROR;
    }
    catch(...)
    {
        ROCP_ERROR << name << ": unknown internal error";
        return ROCPROFILER_STATUS_ERROR;
    }
}
} // namespace rocprofiler
