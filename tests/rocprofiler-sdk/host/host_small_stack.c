/* MIT License - see LICENSE.
 * A program that starts threads with small stacks (16 KiB = PTHREAD_STACK_MIN, and 64 KiB),
 * as fiber-heavy and MPI runtimes do. glibc carves the static TLS of every loaded library out
 * of each new thread's stack, so a preloaded library with a large thread_local makes these
 * pthread_create calls fail with EINVAL. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void*
body(void* arg)
{
    return arg;
}

static int
start_with_stack(size_t bytes)
{
    pthread_attr_t attr;
    pthread_t      thread;
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, bytes);
    if(rc == 0) rc = pthread_create(&thread, &attr, body, NULL);
    if(rc == 0) pthread_join(thread, NULL);
    pthread_attr_destroy(&attr);
    printf("host-small-stack: stack=%zu pthread_create=%s\n", bytes, rc == 0 ? "ok" : strerror(rc));
    return rc;
}

int
main(void)
{
    int failures = 0;
    failures += start_with_stack(16384) != 0;
    failures += start_with_stack(65536) != 0;
    return failures;
}
