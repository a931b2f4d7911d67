/* MIT License - see LICENSE. */
/*
 * Built with -std=c99 -Wall -Wextra -Werror: the public agent header is valid C99 and its
 * structs have the contract's layout. Then, as a C tool would, lists the agents of the fake
 * topology that $ROCPROFILER_KFD_TOPOLOGY_ROOT points at (one CPU and two GPUs).
 */
#include <rocprofiler-sdk/agent.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "agent_layout_pins.h"

#define PIN_SIZE(TYPE, BYTES) _Static_assert(sizeof(TYPE) == (BYTES), "sizeof " #TYPE);
#define PIN_OFFSET(TYPE, FIELD, BYTES)                                                             \
    _Static_assert(offsetof(TYPE, FIELD) == (BYTES), "offsetof " #TYPE "." #FIELD);
ROCP_AGENT_LAYOUT_PINS(PIN_SIZE, PIN_OFFSET)

/* Enumerator values pinned by the contract. */
_Static_assert(ROCPROFILER_AGENT_TYPE_NONE == 0 && ROCPROFILER_AGENT_TYPE_CPU == 1 &&
                   ROCPROFILER_AGENT_TYPE_GPU == 2 && ROCPROFILER_AGENT_TYPE_LAST == 3,
               "rocprofiler_agent_type_t values");
_Static_assert(ROCPROFILER_AGENT_INFO_VERSION_NONE == 0 && ROCPROFILER_AGENT_INFO_VERSION_0 == 1 &&
                   ROCPROFILER_AGENT_INFO_VERSION_LAST == 2,
               "rocprofiler_agent_version_t values");

struct seen_agents
{
    size_t   count;
    int      gpus;
    uint64_t gpu_ids[2];
};

static rocprofiler_status_t
collect(rocprofiler_agent_version_t version, const void** agents, size_t num_agents, void* data)
{
    struct seen_agents* seen = (struct seen_agents*)data;
    size_t              i;
    if(version != ROCPROFILER_AGENT_INFO_VERSION_0) return ROCPROFILER_STATUS_ERROR;
    seen->count = num_agents;
    for(i = 0; i < num_agents; ++i)
    {
        const rocprofiler_agent_v0_t* agent = (const rocprofiler_agent_v0_t*)agents[i];
        if(agent->type == ROCPROFILER_AGENT_TYPE_GPU && seen->gpus < 2)
            seen->gpu_ids[seen->gpus++] = agent->gpu_id;
    }
    return ROCPROFILER_STATUS_SUCCESS;
}

int
main(void)
{
    struct seen_agents   seen = {0, 0, {0, 0}};
    rocprofiler_status_t status;

    /* Versions a C caller can pass that are not VERSION_0. */
    status = rocprofiler_query_available_agents((rocprofiler_agent_version_t)99, collect,
                                                sizeof(rocprofiler_agent_v0_t), &seen);
    if(status != ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT || seen.count != 0)
    {
        fprintf(stderr, "version 99: status %d\n", (int)status);
        return 1;
    }

    status = rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0, collect,
                                                sizeof(rocprofiler_agent_v0_t), &seen);
    if(status != ROCPROFILER_STATUS_SUCCESS || seen.count != 3 || seen.gpus != 2 ||
       seen.gpu_ids[0] != 45382 || seen.gpu_ids[1] != 59054)
    {
        fprintf(stderr, "unexpected agents: status %d, %zu agents, %d GPUs\n", (int)status,
                seen.count, seen.gpus);
        return 1;
    }
    printf("3 agents, GPUs %llu and %llu\n", (unsigned long long)seen.gpu_ids[0],
           (unsigned long long)seen.gpu_ids[1]);
    return 0;
}
