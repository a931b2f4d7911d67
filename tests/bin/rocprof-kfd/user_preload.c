/* MIT License - see LICENSE. */
/* A user's own LD_PRELOAD library: its constructor appends "preload <pid>" to
 * $CLI_TEST_PRELOAD_OUT, so the CLI tests can see that it still loads under rocprof-kfd. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void
announce(void)
{
    const char* out = getenv("CLI_TEST_PRELOAD_OUT");
    FILE*       f   = out ? fopen(out, "a") : NULL;
    if(f == NULL) return;
    fprintf(f, "preload %d\n", (int)getpid());
    fclose(f);
}
