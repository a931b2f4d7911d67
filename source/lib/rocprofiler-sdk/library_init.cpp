// MIT License - see LICENSE.
//
// The shared library's load-time hook: the SDK initializes itself when loaded (no HSA or
// HIP needed). Kept out of rocprofiler-sdk-core so that unit tests linking the core do not
// initialize anything behind the test's back.
#include "rocprofiler-sdk/registration.hpp"

namespace
{
__attribute__((constructor)) void
rocprofiler_sdk_on_load()
{
    rocprofiler::registration::on_library_load();
}
} // namespace
