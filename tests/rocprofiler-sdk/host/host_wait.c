/* MIT License - see LICENSE.
 * A program whose main thread waits (pause) while a tool ends the process from inside a
 * buffer callback with exit(42): the status must be 42 and the tool's finalize must run. */
#include <unistd.h>

int
main(void)
{
    for(;;)
        pause();
}
