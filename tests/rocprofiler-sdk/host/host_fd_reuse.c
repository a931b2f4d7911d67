/* MIT License - see LICENSE.
 * A daemon-style program: closes every fd above 2 at start (close_range(3, ~0U, 0), as
 * daemons and some MPI launchers do), then opens its own files and a pipe, which reuse the
 * numbers the SDK had. The SDK must not read the program's data, write into its files or
 * close them, and exit must not hang on a reader it can no longer wake.
 * argv[1]: a folder; files f0..f15 are created there with "file N\n". */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main(int argc, char** argv)
{
    if(argc < 2) return 2;
    if(syscall(SYS_close_range, 3u, ~0u, 0u) != 0) return 3;
    int pipe_fds[2];
    if(pipe(pipe_fds) != 0) return 4;
    for(int i = 0; i < 16; ++i)
    {
        char path[4096], text[32];
        snprintf(path, sizeof(path), "%s/f%d", argv[1], i);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if(fd < 0) return 5;
        int n = snprintf(text, sizeof(text), "file %d\n", i);
        if(write(fd, text, (size_t)n) != n) return 6;
        /* kept open: the SDK's old numbers now belong to these files until exit */
    }
    const char message[] = "pipe data of the program";
    if(write(pipe_fds[1], message, sizeof(message)) != (ssize_t)sizeof(message)) return 7;
    char    back[sizeof(message)] = {0};
    ssize_t got                   = read(pipe_fds[0], back, sizeof(back));
    printf("host-fd-reuse: pipe %s\n",
           got == (ssize_t)sizeof(message) && memcmp(back, message, sizeof(message)) == 0
               ? "intact"
               : "CORRUPTED");
    fflush(stdout);
    return 0;
}
