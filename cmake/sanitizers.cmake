# Sanitizer builds. Two ways, with the same result:
#   cmake -DROCPROFILER_SANITIZE=address,undefined ...      (or thread)
#   cmake -DCMAKE_C_FLAGS=-fsanitize=address,undefined -DCMAKE_CXX_FLAGS=... (and the linker
#         flags): the flags as a user would give them.
# A UBSan report must fail its test instead of printing a line nobody reads: the option adds
# -fno-sanitize-recover=undefined; with flags of your own add it too, or run the tests with
# UBSAN_OPTIONS=halt_on_error=1 (.ci/run does). Tests find out at run time whether they run
# under a sanitizer (tests/.../sanitizer.hpp), never from this file.
set(ROCPROFILER_SANITIZE
    ""
    CACHE STRING "Sanitizers for every target: address,undefined or thread (empty: none)")

if(ROCPROFILER_SANITIZE)
    if(ROCPROFILER_SANITIZE MATCHES "thread" AND ROCPROFILER_SANITIZE MATCHES "address")
        message(FATAL_ERROR "ROCPROFILER_SANITIZE: thread and address cannot be combined")
    endif()
    add_compile_options(-fsanitize=${ROCPROFILER_SANITIZE} -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${ROCPROFILER_SANITIZE})
endif()

if(ROCPROFILER_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
endif()
