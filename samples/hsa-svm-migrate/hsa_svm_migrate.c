/* MIT License - see LICENSE.
 *
 * Sample HSA program that makes an AMD GPU fault on and migrate SVM (shared virtual memory)
 * ranges, so that rocprof-kfd has something to show on real hardware:
 *
 *   rocprof-kfd -- ./hsa-svm-migrate [rounds] [MiB]
 *
 * Each round (default 8, over 64 MiB of malloc'd memory):
 *   1. hsa_amd_svm_prefetch_async to the GPU     -> migrations RAM -> VRAM (trigger prefetch)
 *   2. the CPU writes every page                 -> CPU page faults: VRAM -> RAM, unmaps
 *   3. the GPU copies into the range (blit)      -> GPU page faults, migrations to VRAM
 *      (needs XNACK on for faults, e.g. HSA_XNACK=1 on gfx90a/gfx942; else the range is
 *      migrated or mapped before the copy)
 * The range is first made accessible to the GPU with hsa_amd_svm_attributes_set (needed when
 * HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT is false).
 *
 * Exit status: 0 done; 77 no usable AMD GPU here (no driver, no GPU agent, or no SVM
 * support: one line says which); 1 an HSA call failed (one line names it); 2 bad arguments.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign, sysconf */

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_GPU_STATUS 77

static hsa_agent_t           gpu;
static int                   have_gpu;
static hsa_amd_memory_pool_t vram_pool;
static int                   have_vram_pool;

static const char*
status_text(hsa_status_t status)
{
    const char* text = NULL;
    if(hsa_status_string(status, &text) != HSA_STATUS_SUCCESS || text == NULL) return "unknown";
    return text;
}

static int
fail(const char* call, hsa_status_t status)
{
    fprintf(stderr, "hsa-svm-migrate: %s failed: %s\n", call, status_text(status));
    return 1;
}

static hsa_status_t
find_gpu(hsa_agent_t agent, void* data)
{
    hsa_device_type_t type;
    (void)data;
    if(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS &&
       type == HSA_DEVICE_TYPE_GPU && !have_gpu)
    {
        gpu      = agent;
        have_gpu = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t
find_vram_pool(hsa_amd_memory_pool_t pool, void* data)
{
    hsa_amd_segment_t segment;
    uint32_t          flags   = 0;
    int               allowed = 0;
    (void)data;
    if(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment) !=
           HSA_STATUS_SUCCESS ||
       segment != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
    hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed);
    if(allowed && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && !have_vram_pool)
    {
        vram_pool      = pool;
        have_vram_pool = 1;
    }
    return HSA_STATUS_SUCCESS;
}

/* Waits until the signal drops below 1; a negative value means the operation failed. */
static int
wait_done(hsa_signal_t signal)
{
    hsa_signal_value_t v = hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                                     HSA_WAIT_STATE_BLOCKED);
    return v < 0 ? -1 : 0;
}

static void
cpu_touch(unsigned char* p, size_t bytes, unsigned char value)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t i;
    for(i = 0; i < bytes; i += page)
        p[i] = value;
}

static int
run_rounds(unsigned char* range, size_t bytes, int rounds, void* vram)
{
    hsa_signal_t signal;
    hsa_status_t status = hsa_signal_create(1, 0, NULL, &signal);
    int          round;
    int          gpu_copies = vram != NULL;
    if(status != HSA_STATUS_SUCCESS) return fail("hsa_signal_create", status);
    for(round = 0; round < rounds; ++round)
    {
        hsa_signal_store_screlease(signal, 1);
        status = hsa_amd_svm_prefetch_async(range, bytes, gpu, 0, NULL, signal);
        if(status != HSA_STATUS_SUCCESS) return fail("hsa_amd_svm_prefetch_async", status);
        if(wait_done(signal) != 0) return fail("hsa_amd_svm_prefetch_async (completion)", status);

        cpu_touch(range, bytes, (unsigned char)round);

        if(gpu_copies)
        {
            hsa_signal_store_screlease(signal, 1);
            status = hsa_amd_memory_async_copy(range, gpu, vram, gpu, bytes, 0, NULL, signal);
            if(status != HSA_STATUS_SUCCESS || wait_done(signal) != 0)
            {
                fprintf(stderr,
                        "hsa-svm-migrate: GPU copy into SVM not possible here (%s); "
                        "continuing with prefetches and CPU touches\n",
                        status_text(status));
                gpu_copies = 0;
            }
        }
        printf("round %d: prefetched %zu MiB to the GPU, touched on the CPU%s\n", round + 1,
               bytes >> 20, gpu_copies ? ", written by the GPU" : "");
    }
    hsa_signal_destroy(signal);
    return 0;
}

int
main(int argc, char** argv)
{
    int                          rounds = argc > 1 ? atoi(argv[1]) : 8;
    size_t                       mib    = argc > 2 ? strtoull(argv[2], NULL, 10) : 64;
    size_t                       bytes  = mib << 20;
    hsa_status_t                 status = hsa_init();
    unsigned char*               range;
    void*                        vram = NULL;
    bool                         svm  = false;
    int                          rc;
    hsa_amd_svm_attribute_pair_t access;

    if(rounds <= 0 || mib == 0)
    {
        fprintf(stderr, "usage: hsa-svm-migrate [rounds > 0] [MiB > 0]\n");
        return 2;
    }
    if(status != HSA_STATUS_SUCCESS)
    {
        printf("hsa-svm-migrate: no AMD GPU here (hsa_init: %s)\n", status_text(status));
        return NO_GPU_STATUS;
    }
    hsa_iterate_agents(find_gpu, NULL);
    if(!have_gpu)
    {
        printf("hsa-svm-migrate: no AMD GPU here (no GPU agent)\n");
        hsa_shut_down();
        return NO_GPU_STATUS;
    }
    if(hsa_system_get_info(HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, &svm) != HSA_STATUS_SUCCESS || !svm)
    {
        printf("hsa-svm-migrate: no AMD GPU here with SVM support (needs Linux 5.14+ and a "
               "GPU with SVM)\n");
        hsa_shut_down();
        return NO_GPU_STATUS;
    }

    /* 2 MiB aligned, the SVM migration granularity; written once so it starts in RAM. */
    if(posix_memalign((void**)&range, 2u << 20, bytes) != 0)
    {
        fprintf(stderr, "hsa-svm-migrate: cannot allocate %zu MiB\n", mib);
        hsa_shut_down();
        return 1;
    }
    memset(range, 0, bytes);
    access.attribute = HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE;
    access.value     = gpu.handle;
    status           = hsa_amd_svm_attributes_set(range, bytes, &access, 1);
    if(status != HSA_STATUS_SUCCESS)
    {
        rc = fail("hsa_amd_svm_attributes_set", status);
        free(range);
        hsa_shut_down();
        return rc;
    }
    hsa_amd_agent_iterate_memory_pools(gpu, find_vram_pool, NULL);
    if(have_vram_pool &&
       hsa_amd_memory_pool_allocate(vram_pool, bytes, 0, &vram) != HSA_STATUS_SUCCESS)
        vram = NULL;

    rc = run_rounds(range, bytes, rounds, vram);
    if(vram) hsa_amd_memory_pool_free(vram);
    free(range);
    hsa_shut_down();
    if(rc == 0) printf("hsa-svm-migrate: done, %d rounds over %zu MiB\n", rounds, mib);
    return rc;
}
