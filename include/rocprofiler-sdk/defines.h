/* MIT License - see LICENSE. */
/**
 * @file defines.h
 * @brief Macros shared by every public header: export attributes, C linkage guards and
 *        small attribute helpers.
 */
#ifndef ROCPROFILER_SDK_DEFINES_H_
#define ROCPROFILER_SDK_DEFINES_H_

#if defined(__GNUC__) || defined(__clang__)
/** Marks a symbol as part of the library's exported interface. */
#    define ROCPROFILER_PUBLIC_API __attribute__((visibility("default")))
/** Marks a symbol as internal to the shared object that defines it. */
#    define ROCPROFILER_HIDDEN_API __attribute__((visibility("hidden")))
#    define ROCPROFILER_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#    define ROCPROFILER_PUBLIC_API
#    define ROCPROFILER_HIDDEN_API
#    define ROCPROFILER_NONNULL(...)
#endif

/** Attribute put on every function of the C API. */
#define ROCPROFILER_API ROCPROFILER_PUBLIC_API

#ifdef __cplusplus
#    define ROCPROFILER_EXTERN_C_INIT extern "C" {
#    define ROCPROFILER_EXTERN_C_FINI }
#    define ROCPROFILER_NOEXCEPT      noexcept
#else
#    define ROCPROFILER_EXTERN_C_INIT
#    define ROCPROFILER_EXTERN_C_FINI
#    define ROCPROFILER_NOEXCEPT
#endif

/** Literal for a handle struct, usable in C and C++ expressions. */
#ifdef __cplusplus
#    define ROCPROFILER_HANDLE_LITERAL(TYPE, VALUE) (TYPE{VALUE})
#else
#    define ROCPROFILER_HANDLE_LITERAL(TYPE, VALUE) ((TYPE){VALUE})
#endif

#endif /* ROCPROFILER_SDK_DEFINES_H_ */
