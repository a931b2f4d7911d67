/* MIT License - see LICENSE. The contract's layout pins, compiled as C99. */
#include "layout_pins.h"

#include <stdio.h>
#include <string.h>

int
main(void)
{
    /* Bit-field positions cannot be checked at compile time: check the bytes. */
    rocprofiler_buffer_tracing_page_migration_record_t rec;
    unsigned char*                                     bytes = (unsigned char*) &rec;
    memset(&rec, 0, sizeof(rec));
    rec.page_fault.read_fault = 1;
    if(bytes[40] != 0x1) return 1;
    rec.page_fault.migrated = 1;
    if(bytes[40] != 0x3) return 2;
    memset(&rec, 0, sizeof(rec));
    rec.queue_suspend.rescheduled = 1;
    if(bytes[40] != 0x1) return 3;
    if(rocprofiler_record_header_compute_hash(ROCPROFILER_BUFFER_CATEGORY_TRACING,
                                              ROCPROFILER_BUFFER_TRACING_PAGE_MIGRATION) !=
       0xC00000001ull)
        return 4;
    {
        rocprofiler_context_id_t none = ROCPROFILER_CONTEXT_NONE;
        if(none.handle != UINT64_MAX) return 5;
    }
    puts("layout pins hold in C99");
    return 0;
}
