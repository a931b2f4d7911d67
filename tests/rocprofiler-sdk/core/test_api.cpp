// MIT License - see LICENSE.
//
// The C API in one process (linked to the SDK's core, initialized with
// rocprofiler_force_configure): misc functions, names and iteration, configuration rules,
// bad input of every kind, and calls after finalization. gtest_discover_tests runs each
// TEST in its own process, so each one initializes the SDK itself.
#include "rocprofiler-sdk/logging.hpp"
#include "rocprofiler-sdk/registration.hpp"

#include <rocprofiler-sdk/ext/kfd.h>
#include <rocprofiler-sdk/rocprofiler.h>

#include "thread_end.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{
// Runs `during_init` inside a tool's initialize (the only time configuration is open).
std::function<void()> during_init;

int
test_initialize(rocprofiler_client_finalize_t, void*)
{
    if(during_init) during_init();
    return 0;
}

rocprofiler_tool_configure_result_t*
test_configure(uint32_t, const char*, uint32_t, rocprofiler_client_id_t*)
{
    static rocprofiler_tool_configure_result_t result = {
        sizeof(rocprofiler_tool_configure_result_t), test_initialize, nullptr, nullptr};
    return &result;
}

void
initialize_with(std::function<void()> body)
{
    during_init = std::move(body);
    ASSERT_EQ(rocprofiler_force_configure(test_configure), ROCPROFILER_STATUS_SUCCESS);
}

void
noop_callback(rocprofiler_context_id_t, rocprofiler_buffer_id_t, rocprofiler_record_header_t**,
              size_t, void*, uint64_t)
{
}
} // namespace

TEST(api, version_and_clock_and_thread)
{
    uint32_t major = 99, minor = 99, patch = 99;
    EXPECT_EQ(rocprofiler_get_version(&major, &minor, &patch), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(major, ROCPROFILER_VERSION_MAJOR);
    EXPECT_EQ(minor, ROCPROFILER_VERSION_MINOR);
    EXPECT_EQ(patch, ROCPROFILER_VERSION_PATCH);
    EXPECT_EQ(rocprofiler_get_version(nullptr, nullptr, nullptr), ROCPROFILER_STATUS_SUCCESS);

    timespec before{}, after{};
    clock_gettime(CLOCK_BOOTTIME, &before);
    rocprofiler_timestamp_t ts = 0;
    EXPECT_EQ(rocprofiler_get_timestamp(&ts), ROCPROFILER_STATUS_SUCCESS);
    clock_gettime(CLOCK_BOOTTIME, &after);
    auto ns = [](const timespec& t) { return uint64_t(t.tv_sec) * 1000000000ull + t.tv_nsec; };
    EXPECT_GE(ts, ns(before));
    EXPECT_LE(ts, ns(after));
    EXPECT_EQ(rocprofiler_get_timestamp(nullptr), ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);

    rocprofiler_thread_id_t tid = 0;
    EXPECT_EQ(rocprofiler_get_thread_id(&tid), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(tid, static_cast<uint64_t>(syscall(SYS_gettid)));
    EXPECT_EQ(rocprofiler_get_thread_id(nullptr), ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
}

TEST(api, status_names_and_strings_for_every_status)
{
    EXPECT_STREQ(rocprofiler_get_status_name(ROCPROFILER_STATUS_SUCCESS),
                 "ROCPROFILER_STATUS_SUCCESS");
    EXPECT_STREQ(rocprofiler_get_status_string(ROCPROFILER_STATUS_SUCCESS), "Success");
    EXPECT_STREQ(rocprofiler_get_status_name(ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE),
                 "ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE");
    EXPECT_STREQ(rocprofiler_get_status_name(ROCPROFILER_STATUS_INTERNAL_NO_AGENT_CONTEXT),
                 "ROCPROFILER_STATUS_INTERNAL_NO_AGENT_CONTEXT");
    EXPECT_STREQ(rocprofiler_get_status_name(ROCPROFILER_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED),
                 "ROCPROFILER_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED");
    std::vector<std::string> seen;
    for(int s = 0; s < ROCPROFILER_STATUS_LAST; ++s)
    {
        auto        status = static_cast<rocprofiler_status_t>(s);
        const char* name   = rocprofiler_get_status_name(status);
        const char* text   = rocprofiler_get_status_string(status);
        ASSERT_NE(name, nullptr) << s;
        ASSERT_NE(text, nullptr) << s;
        EXPECT_EQ(std::string(name).rfind("ROCPROFILER_STATUS_", 0), 0u) << name;
        EXPECT_GT(std::strlen(text), 3u);
        for(const auto& other : seen)
            EXPECT_NE(other, name);
        seen.emplace_back(name);
    }
    EXPECT_EQ(rocprofiler_get_status_name(ROCPROFILER_STATUS_LAST), nullptr);
    EXPECT_EQ(rocprofiler_get_status_string(static_cast<rocprofiler_status_t>(-1)), nullptr);
    EXPECT_EQ(rocprofiler_get_status_name(static_cast<rocprofiler_status_t>(1000)), nullptr);
}

TEST(api, kind_and_operation_names)
{
    const char* name = nullptr;
    uint64_t    len  = 0;
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_name(ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                                                         &name, &len),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_STREQ(name, "PAGE_MIGRATION");
    EXPECT_EQ(len, 14u);
    const char* expected[] = {"PAGE_MIGRATION_NONE", "PAGE_MIGRATION_PAGE_MIGRATE",
                              "PAGE_MIGRATION_PAGE_FAULT", "PAGE_MIGRATION_QUEUE_SUSPEND",
                              "PAGE_MIGRATION_UNMAP_FROM_GPU"};
    for(int op = 0; op < ROCPROFILER_PAGE_MIGRATION_LAST; ++op)
    {
        ASSERT_EQ(rocprofiler_query_buffer_tracing_kind_operation_name(
                      ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, op, &name, &len),
                  ROCPROFILER_STATUS_SUCCESS);
        EXPECT_STREQ(name, expected[op]);
        EXPECT_EQ(len, std::strlen(expected[op]));
    }
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_operation_name(
                  ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, ROCPROFILER_PAGE_MIGRATION_LAST, &name,
                  &len),
              ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND);
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_operation_name(
                  ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, -1, &name, &len),
              ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND);
    EXPECT_EQ(
        rocprofiler_query_buffer_tracing_kind_name(ROCPROFILER_BUFFER_TRACING_LAST, &name, &len),
        ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
    EXPECT_EQ(
        rocprofiler_query_buffer_tracing_kind_name(ROCPROFILER_BUFFER_TRACING_NONE, &name, &len),
        ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_name(ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION,
                                                         nullptr, &len),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_name(ROCPROFILER_BUFFER_TRACING_HIP_RUNTIME_API,
                                                         &name, nullptr),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_STREQ(name, "HIP_RUNTIME_API");
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_name(ROCPROFILER_BUFFER_TRACING_KFD_EVENT,
                                                         &name, nullptr),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_STREQ(name, "KFD_EVENT");
    EXPECT_EQ(rocprofiler_query_buffer_tracing_kind_operation_name(
                  ROCPROFILER_BUFFER_TRACING_KFD_EVENT, ROCPROFILER_KFD_EVENT_QUEUE_RESTORE, &name,
                  nullptr),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_STREQ(name, "KFD_EVENT_QUEUE_RESTORE");
}

TEST(api, iteration_of_kinds_and_operations)
{
    std::vector<int> kinds;
    auto             collect_kind = [](rocprofiler_buffer_tracing_kind_t k, void* data)
    {
        static_cast<std::vector<int>*>(data)->push_back(k);
        return 0;
    };
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kinds(collect_kind, &kinds),
              ROCPROFILER_STATUS_SUCCESS);
    ASSERT_EQ(kinds.size(), static_cast<size_t>(ROCPROFILER_BUFFER_TRACING_LAST - 1));
    EXPECT_EQ(kinds.front(), ROCPROFILER_BUFFER_TRACING_HSA_CORE_API);
    EXPECT_EQ(kinds.back(), ROCPROFILER_BUFFER_TRACING_RCCL_API);

    std::vector<int> ops;
    auto             collect_op =
        [](rocprofiler_buffer_tracing_kind_t k, rocprofiler_tracing_operation_t op, void* data)
    {
        EXPECT_EQ(k, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION);
        static_cast<std::vector<int>*>(data)->push_back(op);
        return 0;
    };
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kind_operations(
                  ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, collect_op, &ops),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(ops, (std::vector<int>{0, 1, 2, 3, 4}));

    // A non-zero return stops the iteration.
    int  calls     = 0;
    auto stop_at_2 = [](rocprofiler_buffer_tracing_kind_t, rocprofiler_tracing_operation_t,
                        void* data) { return ++*static_cast<int*>(data) == 2 ? 1 : 0; };
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kind_operations(
                  ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, stop_at_2, &calls),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(calls, 2);
    int  kind_calls = 0;
    auto stop_kinds = [](rocprofiler_buffer_tracing_kind_t, void* data)
    { return ++*static_cast<int*>(data) == 3 ? 1 : 0; };
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kinds(stop_kinds, &kind_calls),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(kind_calls, 3);
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kinds(nullptr, nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kind_operations(
                  ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, nullptr, nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rocprofiler_iterate_buffer_tracing_kind_operations(
                  static_cast<rocprofiler_buffer_tracing_kind_t>(77), collect_op, &ops),
              ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
}

// A C++ tool's callback that throws: the exception does not unwind through the C API (the
// caller may be C, or built without exceptions); the iteration stops with an error.
TEST(api, iteration_callbacks_that_throw)
{
    auto throw_on_kind = [](rocprofiler_buffer_tracing_kind_t, void*) -> int
    { throw std::runtime_error{"tool"}; };
    auto throw_on_op = [](rocprofiler_buffer_tracing_kind_t, rocprofiler_tracing_operation_t,
                          void*) -> int { throw std::runtime_error{"tool"}; };
    rocprofiler_status_t status = ROCPROFILER_STATUS_SUCCESS;
    EXPECT_NO_THROW(status = rocprofiler_iterate_buffer_tracing_kinds(throw_on_kind, nullptr));
    EXPECT_EQ(status, ROCPROFILER_STATUS_ERROR);
    EXPECT_NO_THROW(status = rocprofiler_iterate_buffer_tracing_kind_operations(
                        ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, throw_on_op, nullptr));
    EXPECT_EQ(status, ROCPROFILER_STATUS_ERROR);
}

// A thread that ends in the callback (pthread_exit, or a cancellation at a cancellation
// point) unwinds through the iteration: swallowing that unwind would make glibc abort.
TEST(api, iteration_callback_that_ends_its_thread)
{
    auto exit_in_callback = [](void*) -> void*
    {
        auto end_thread = [](rocprofiler_buffer_tracing_kind_t, void*) -> int
        {
            pthread_exit(nullptr);
            return 0;
        };
        rocprofiler_iterate_buffer_tracing_kinds(end_thread, nullptr);
        return reinterpret_cast<void*>(1); // not reached
    };
    // nullptr: the value pthread_exit gave
    EXPECT_EQ(rocprofiler::test::value_the_thread_ended_with(exit_in_callback), nullptr);
}

// 1024 contexts and 1024 buffers per process; one more is OUT_OF_RESOURCES, not a crash and
// not a silent success.
TEST(api, limits_of_contexts_and_buffers)
{
    initialize_with(
        [&]
        {
            rocprofiler_context_id_t first{};
            ASSERT_EQ(rocprofiler_create_context(&first), ROCPROFILER_STATUS_SUCCESS);
            size_t contexts = 1;
            for(rocprofiler_context_id_t ctx{};
                rocprofiler_create_context(&ctx) == ROCPROFILER_STATUS_SUCCESS && contexts < 5000;)
                ++contexts;
            EXPECT_EQ(contexts, 1024u);
            rocprofiler_context_id_t extra{};
            EXPECT_EQ(rocprofiler_create_context(&extra),
                      ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES);
            size_t buffers = 0;
            for(rocprofiler_buffer_id_t buf{};
                rocprofiler_create_buffer(first, 64, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                          noop_callback, nullptr,
                                          &buf) == ROCPROFILER_STATUS_SUCCESS &&
                buffers < 5000;)
                ++buffers;
            EXPECT_EQ(buffers, 1024u);
            rocprofiler_buffer_id_t buf{};
            EXPECT_EQ(rocprofiler_create_buffer(first, 64, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                                noop_callback, nullptr, &buf),
                      ROCPROFILER_STATUS_ERROR_OUT_OF_RESOURCES);
        });
}

TEST(api, configuration_is_open_only_while_initializing)
{
    rocprofiler_context_id_t ctx{};
    EXPECT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    rocprofiler_context_id_t made{};
    rocprofiler_buffer_id_t  buf{};
    initialize_with(
        [&]
        {
            int status = 0;
            EXPECT_EQ(rocprofiler_is_initialized(&status), ROCPROFILER_STATUS_SUCCESS);
            EXPECT_EQ(status, -1);
            EXPECT_EQ(rocprofiler_create_context(&made), ROCPROFILER_STATUS_SUCCESS);
            EXPECT_EQ(rocprofiler_create_buffer(made, 4096, 2048, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                                noop_callback, nullptr, &buf),
                      ROCPROFILER_STATUS_SUCCESS);
        });
    int status = 0;
    EXPECT_EQ(rocprofiler_is_initialized(&status), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(status, 1);
    EXPECT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    EXPECT_EQ(rocprofiler_create_buffer(made, 4096, 2048, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                        noop_callback, nullptr, &buf),
              ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    EXPECT_EQ(rocprofiler_configure_buffer_tracing_service(
                  made, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, nullptr, 0, buf),
              ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    rocprofiler_callback_thread_t thr{};
    EXPECT_EQ(rocprofiler_create_callback_thread(&thr),
              ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    EXPECT_EQ(rocprofiler_force_configure(test_configure),
              ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    // Starting and stopping stay allowed from any thread after initialization.
    EXPECT_EQ(rocprofiler_start_context(made), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(rocprofiler_context_is_active(made, &status), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(status, 1);
    EXPECT_EQ(rocprofiler_stop_context(made), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(rocprofiler_context_is_active(made, &status), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(rocprofiler_flush_buffer(buf), ROCPROFILER_STATUS_SUCCESS);
}

TEST(api, service_configuration_errors)
{
    initialize_with(
        []
        {
            rocprofiler_context_id_t ctx{};
            rocprofiler_buffer_id_t  buf{};
            ASSERT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_SUCCESS);
            ASSERT_EQ(rocprofiler_create_buffer(ctx, 4096, 2048, ROCPROFILER_BUFFER_POLICY_LOSSLESS,
                                                noop_callback, nullptr, &buf),
                      ROCPROFILER_STATUS_SUCCESS);
            auto configure = [&](rocprofiler_context_id_t c, int kind, std::vector<int> ops,
                                 rocprofiler_buffer_id_t b)
            {
                return rocprofiler_configure_buffer_tracing_service(
                    c, static_cast<rocprofiler_buffer_tracing_kind_t>(kind), ops.data(), ops.size(),
                    b);
            };
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_HSA_CORE_API, {}, buf),
                      ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED);
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH, {}, buf),
                      ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED);
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_NONE, {}, buf),
                      ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_LAST, {}, buf),
                      ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
            EXPECT_EQ(configure(ctx, -3, {}, buf), ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND);
            EXPECT_EQ(configure(rocprofiler_context_id_t{12345},
                                ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, {}, buf),
                      ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, {},
                                rocprofiler_buffer_id_t{777}),
                      ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, {1, 5}, buf),
                      ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND);
            EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, {-1}, buf),
                      ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND);
            EXPECT_EQ(rocprofiler_configure_buffer_tracing_service(
                          ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, nullptr, 3, buf),
                      ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
            // No /dev/kfd on the machines that run these tests (without the emulator): the
            // service is not available, and says so instead of failing later.
            if(access("/dev/kfd", F_OK) != 0)
            {
                EXPECT_EQ(configure(ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, {}, buf),
                          ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE);
            }
        });
}

TEST(api, null_pointers_and_unknown_ids)
{
    EXPECT_EQ(rocprofiler_is_initialized(nullptr), ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rocprofiler_is_finalized(nullptr), ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rocprofiler_force_configure(nullptr), ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    initialize_with(
        []
        {
            EXPECT_EQ(rocprofiler_create_context(nullptr),
                      ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
            rocprofiler_context_id_t ctx{};
            ASSERT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_SUCCESS);
            EXPECT_EQ(rocprofiler_create_buffer(ctx, 4096, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                                noop_callback, nullptr, nullptr),
                      ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
            rocprofiler_buffer_id_t buf{};
            EXPECT_EQ(rocprofiler_create_buffer(ROCPROFILER_CONTEXT_NONE, 4096, 0,
                                                ROCPROFILER_BUFFER_POLICY_DISCARD, noop_callback,
                                                nullptr, &buf),
                      ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
            EXPECT_EQ(rocprofiler_create_callback_thread(nullptr),
                      ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
            rocprofiler_callback_thread_t thr{};
            EXPECT_EQ(rocprofiler_create_callback_thread(&thr), ROCPROFILER_STATUS_SUCCESS);
            EXPECT_EQ(rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t{9999}, thr),
                      ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
            EXPECT_EQ(rocprofiler_at_internal_thread_create(nullptr, nullptr, ROCPROFILER_LIBRARY,
                                                            nullptr),
                      ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
        });
    int status = 7;
    EXPECT_EQ(rocprofiler_context_is_active(rocprofiler_context_id_t{4242}, &status),
              ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
    EXPECT_EQ(rocprofiler_context_is_active(rocprofiler_context_id_t{1}, nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(rocprofiler_context_is_valid(ROCPROFILER_CONTEXT_NONE, &status),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(rocprofiler_context_is_valid(rocprofiler_context_id_t{1}, &status),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(status, 1);
    EXPECT_EQ(rocprofiler_start_context(ROCPROFILER_CONTEXT_NONE),
              ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
    EXPECT_EQ(rocprofiler_stop_context(rocprofiler_context_id_t{0}),
              ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND);
    EXPECT_EQ(rocprofiler_flush_buffer(rocprofiler_buffer_id_t{0}),
              ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    EXPECT_EQ(rocprofiler_destroy_buffer(ROCPROFILER_BUFFER_ID_NONE),
              ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
}

TEST(api, destroying_a_buffer_twice)
{
    rocprofiler_buffer_id_t buf{};
    initialize_with(
        [&]
        {
            rocprofiler_context_id_t ctx{};
            ASSERT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_SUCCESS);
            ASSERT_EQ(rocprofiler_create_buffer(ctx, 4096, 0, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                                noop_callback, nullptr, &buf),
                      ROCPROFILER_STATUS_SUCCESS);
        });
    EXPECT_EQ(rocprofiler_destroy_buffer(buf), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(rocprofiler_destroy_buffer(buf), ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
    EXPECT_EQ(rocprofiler_flush_buffer(buf), ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND);
}

TEST(api, calls_after_finalization)
{
    rocprofiler_context_id_t ctx{};
    initialize_with([&]
                    { ASSERT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_SUCCESS); });
    rocprofiler::registration::finalize();
    int status = 0;
    EXPECT_EQ(rocprofiler_is_finalized(&status), ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(status, 1);
    EXPECT_EQ(rocprofiler_start_context(ctx), ROCPROFILER_STATUS_ERROR_FINALIZED);
    rocprofiler_context_id_t other{};
    EXPECT_EQ(rocprofiler_create_context(&other), ROCPROFILER_STATUS_ERROR_FINALIZED);
    EXPECT_EQ(rocprofiler_force_configure(test_configure),
              ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED);
    rocprofiler_callback_thread_t thr{};
    EXPECT_EQ(rocprofiler_create_callback_thread(&thr), ROCPROFILER_STATUS_ERROR_FINALIZED);
    rocprofiler::registration::finalize(); // idempotent
}

TEST(api, loss_stats_arguments)
{
    rocprofiler_kfd_loss_stats_t stats{};
    stats.size = sizeof(stats);
    EXPECT_EQ(rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, nullptr),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    stats.size = 4;
    EXPECT_EQ(rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats),
              ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT);
    stats.size = sizeof(stats);
    // Nothing traced (no device here): totals are zero, a GPU id is unknown.
    EXPECT_EQ(rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats),
              ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(stats.events_received, 0u);
    EXPECT_EQ(stats.size, sizeof(stats));
    EXPECT_EQ(rocprofiler_kfd_get_loss_stats(0x1ea0, &stats),
              ROCPROFILER_STATUS_ERROR_AGENT_NOT_FOUND);
    // An older, smaller struct gets the prefix it has room for.
    struct
    {
        uint64_t size, gpu_id, events_received;
    } prefix{sizeof(prefix), 99, 99};
    EXPECT_EQ(
        rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS,
                                       reinterpret_cast<rocprofiler_kfd_loss_stats_t*>(&prefix)),
        ROCPROFILER_STATUS_SUCCESS);
    EXPECT_EQ(prefix.size, sizeof(prefix));
    EXPECT_EQ(prefix.gpu_id, 0u);
    EXPECT_EQ(prefix.events_received, 0u);
}

namespace
{
// Runs `calls` on a new thread whose cancellation is already pending when it starts them
// (the gate has no cancellation point); then the thread reaches pthread_testcancel.
struct cancel_gate
{
    std::function<void()> calls;
    std::atomic<bool>     open{false};
    std::atomic<bool>     returned{false};
};

void*
call_with_a_cancellation_pending(void* arg)
{
    auto* gate = static_cast<cancel_gate*>(arg);
    while(!gate->open.load())
    {
    }
    gate->calls();
    gate->returned.store(true);
    pthread_testcancel();
    return nullptr;
}

// How a thread running `calls` with a cancellation pending ended.
struct cancelled_run
{
    void* result   = nullptr; // PTHREAD_CANCELED when cancelled
    bool  returned = false;   // `calls` returned (not cancelled inside them)
};

cancelled_run
run_with_a_cancellation_pending(std::function<void()> calls)
{
    cancel_gate gate;
    gate.calls = std::move(calls);
    pthread_t     thread;
    cancelled_run run;
    EXPECT_EQ(pthread_create(&thread, nullptr, call_with_a_cancellation_pending, &gate), 0);
    EXPECT_EQ(pthread_cancel(thread), 0);
    gate.open.store(true);
    EXPECT_EQ(pthread_join(thread, &run.result), 0);
    run.returned = gate.returned.load();
    return run;
}

// `calls` returned and the thread was then cancelled at its own cancellation point.
void
expect_calls_return_then_cancelled(std::function<void()> calls)
{
    auto run = run_with_a_cancellation_pending(std::move(calls));
    EXPECT_TRUE(run.returned) << "cancelled inside the SDK";
    EXPECT_EQ(run.result, PTHREAD_CANCELED);
}

rocprofiler_status_t
count_agents(rocprofiler_agent_version_t, const void**, size_t, void*)
{
    return ROCPROFILER_STATUS_SUCCESS;
}

rocprofiler_status_t
agents_then_cancellation_point(rocprofiler_agent_version_t, const void**, size_t, void*)
{
    pthread_testcancel();
    return ROCPROFILER_STATUS_SUCCESS;
}
} // namespace

// A program's thread with a cancellation pending may call into the SDK, which may log: the
// log line's write is no cancellation point (the unwind would leave a noexcept destructor:
// std::terminate). The thread is cancelled at its own next cancellation point.
TEST(api, a_log_line_is_no_cancellation_point)
{
    ASSERT_TRUE(rocprofiler::logging::enabled(rocprofiler::logging::warning))
        << "the test needs warnings logged (ROCPROFILER_LOG_LEVEL)";
    expect_calls_return_then_cancelled(
        [] { ROCP_WARNING << "a line on a thread with a cancellation pending"; });
}

namespace
{
// In a forked child whose stderr is `fd`: logs a line, then exits with 7 when errno and the
// thread's SIGPIPE mask are as before and no SIGPIPE is left pending, else with 1.
[[noreturn]] void
log_a_line_to(int fd)
{
    signal(SIGPIPE, SIG_DFL); // as in a program that never touched it: SIGPIPE kills
    dup2(fd, STDERR_FILENO);
    sigset_t before;
    pthread_sigmask(SIG_SETMASK, nullptr, &before);
    errno = EDOM;
    ROCP_ERROR << "a line nobody reads";
    const bool errno_kept = errno == EDOM;
    sigset_t   after, pending;
    pthread_sigmask(SIG_SETMASK, nullptr, &after);
    sigpending(&pending);
    const bool mask_kept = sigismember(&before, SIGPIPE) == sigismember(&after, SIGPIPE);
    _exit(errno_kept && mask_kept && !sigismember(&pending, SIGPIPE) ? 7 : 1);
}
} // namespace

// stderr is a pipe whose reader has gone (`app 2>&1 | head`): the SDK's log lines (it logs
// at exit) failed with EPIPE and raised SIGPIPE, which killed the program (signal 13) instead
// of letting it exit with its own status. The write raises nothing now.
TEST(api, a_log_line_to_a_pipe_whose_reader_has_gone_does_not_kill_the_program)
{
    ASSERT_TRUE(rocprofiler::logging::enabled(rocprofiler::logging::error))
        << "the test needs errors logged (ROCPROFILER_LOG_LEVEL)";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    close(fds[0]); // the reader has gone
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if(child == 0) log_a_line_to(fds[1]);
    close(fds[1]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 7) << "errno, the signal mask or a pending SIGPIPE changed";
}

// The same for the API: what a call does inside (open /dev/kfd and the topology, start
// threads, take locks) is no cancellation point of the program's thread; the unwind would
// cross the SDK's noexcept code and end the process. Only a flush's wait is one (next test).
TEST(api, calls_on_a_thread_with_a_cancellation_pending_return_first)
{
    rocprofiler_context_id_t ctx{};
    rocprofiler_buffer_id_t  buf{};
    initialize_with(
        [&]
        {
            EXPECT_EQ(rocprofiler_create_context(&ctx), ROCPROFILER_STATUS_SUCCESS);
            EXPECT_EQ(rocprofiler_create_buffer(ctx, 4096, 2048, ROCPROFILER_BUFFER_POLICY_DISCARD,
                                                noop_callback, nullptr, &buf),
                      ROCPROFILER_STATUS_SUCCESS);
            // No /dev/kfd here: the service may be unavailable; trying is what matters.
            (void)rocprofiler_configure_buffer_tracing_service(
                ctx, ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION, nullptr, 0, buf);
        });
    expect_calls_return_then_cancelled(
        [&]
        {
            (void)rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, count_agents,
                                                     sizeof(rocprofiler_agent_v0_t), nullptr);
            (void)rocprofiler_start_context(ctx);
            (void)rocprofiler_stop_context(ctx);
            rocprofiler_kfd_loss_stats_t stats{};
            stats.size = sizeof(stats);
            (void)rocprofiler_kfd_get_loss_stats(ROCPROFILER_KFD_ALL_GPUS, &stats);
        });
}

// The agents query's callback is the tool's code, as cancellable as the thread that called
// the query: cancelled there, the thread ends (the SDK lets that unwind pass).
TEST(api, the_agents_query_callback_is_as_cancellable_as_its_caller)
{
    auto run = run_with_a_cancellation_pending(
        []
        {
            (void)rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0,
                                                     agents_then_cancellation_point,
                                                     sizeof(rocprofiler_agent_v0_t), nullptr);
        });
    EXPECT_EQ(run.result, PTHREAD_CANCELED);
    EXPECT_FALSE(run.returned) << "the callback ran with cancellation disabled";
}
