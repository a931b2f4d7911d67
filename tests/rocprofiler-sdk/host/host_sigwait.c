/* MIT License - see LICENSE.
 * A program that manages its own signals: it blocks SIGTERM in main, sends SIGTERM to the
 * process, then takes it with sigwait(). Every thread the SDK started before main must have
 * it blocked too, or the kernel delivers it there and the default action kills the process.
 * The signal is sent while no thread of the program is in sigwait, so the only threads that
 * could take it are the SDK's. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int
main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    if(pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return 2;
    kill(getpid(), SIGTERM);
    kill(getpid(), SIGUSR1);
    int got = 0, count = 0;
    while(count < 2 && sigwait(&set, &got) == 0)
    {
        printf("host-sigwait: got %s\n", got == SIGTERM ? "SIGTERM" : "SIGUSR1");
        ++count;
    }
    fflush(stdout);
    return 0;
}
