/* MIT License - see LICENSE.
 * Test program: waits until the SQLite database named by DIE_WHEN_COMMITTED holds at least
 * one committed page_fault row (the tool has finished writing at least one delivered
 * buffer), then kills itself with SIGKILL, so the tool never finalizes. Gives up (exit 3)
 * after 120 s. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long
committed_faults(const char* path)
{
    sqlite3*      db = NULL;
    sqlite3_stmt* st = NULL;
    long long     n  = 0;
    if(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
       sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM page_fault", -1, &st, NULL) == SQLITE_OK &&
       sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

int
main(void)
{
    const char*     path  = getenv("DIE_WHEN_COMMITTED");
    struct timespec pause = {0, 1000000}, start, now;
    if(!path) return 2;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for(;;)
    {
        if(committed_faults(path) > 0) raise(SIGKILL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if(now.tv_sec - start.tv_sec > 120) return 3;
        nanosleep(&pause, NULL); /* polling the gate, not a timing assumption */
    }
}
