// MIT License - see LICENSE.
//
// The program the CLI tests run under rocprof-kfd. Modes:
//   exit N            exits with status N
//   raise N           kills itself with signal N
//   args FILE ARGS... writes each argument on a line of FILE, exits 0
//   env FILE          writes its environment (one NAME=VALUE a line) to FILE, exits 0
//   child FILE        runs itself as "env FILE" in a child process (fork + exec), exits
//                     with the child's status
//   wait FD           writes "ready\n" to fd FD, then waits; on SIGUSR1/SIGUSR2/SIGHUP it
//                     writes "got N\n" to FD and exits 0; SIGTERM/SIGINT keep their default
//                     action (the program dies)
//   reopen-stderr FILE  closes fd 2, opens FILE (it gets fd 2), writes "data\n" to it, exits 0
//   count FD          as wait, but SIGINT is reported ("got 2") and the program waits on;
//                     SIGUSR1 reports and exits 0
//   barrier DIR N     creates DIR/<pid>, waits until DIR holds N entries, exits 0 (9 after
//                     60 s without them): N runs started apart are all running at once
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace
{
int report_fd = -1;

void
report(int sig)
{
    char text[32];
    int  n       = snprintf(text, sizeof(text), "got %d\n", sig);
    auto ignored = write(report_fd, text, static_cast<size_t>(n));
    (void)ignored;
}

void
on_signal(int sig)
{
    report(sig);
    _exit(0);
}

void
on_counted_signal(int sig)
{
    report(sig);
    if(sig == SIGUSR1) _exit(0);
}

int
wait_for_signal(int fd, bool counting)
{
    report_fd = fd;
    for(int s : {SIGUSR1, SIGUSR2, SIGHUP, SIGINT})
    {
        if(s == SIGINT && !counting) continue; // SIGINT keeps its default: the program dies
        struct sigaction sa = {};
        sa.sa_handler       = counting ? on_counted_signal : on_signal;
        sigaction(s, &sa, nullptr);
    }
    if(write(fd, "ready\n", 6) != 6) return 3;
    for(;;)
        pause();
}

int
write_lines(const char* path, char** lines)
{
    FILE* f = fopen(path, "w");
    if(f == nullptr) return 4;
    for(char** l = lines; l && *l; ++l)
        fprintf(f, "%s\n", *l);
    fclose(f);
    return 0;
}
int
run_child(const char* self, const char* file)
{
    pid_t child = fork();
    if(child == 0)
    {
        execl(self, self, "env", file, static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    if(child < 0 || waitpid(child, &status, 0) != child) return 6;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 7;
}
size_t
entries_in(const char* dir)
{
    DIR* d = opendir(dir);
    if(d == nullptr) return 0;
    size_t n = 0;
    while(const dirent* e = readdir(d))
        if(e->d_name[0] != '.') ++n;
    closedir(d);
    return n;
}

int
barrier(const char* dir, size_t n)
{
    const std::string mine = std::string(dir) + "/" + std::to_string(getpid());
    int               fd   = open(mine.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if(fd < 0) return 8;
    close(fd);
    // A gate with a deadline: a run that never started fails the test, it does not hang it.
    for(int waited_ms = 0; entries_in(dir) < n; ++waited_ms)
    {
        if(waited_ms >= 60000) return 9;
        usleep(1000);
    }
    return 0;
}
} // namespace

int
main(int argc, char** argv)
{
    std::string mode = argc > 1 ? argv[1] : "";
    if(mode == "exit" && argc > 2) return atoi(argv[2]);
    if(mode == "_exit" && argc > 2) _exit(atoi(argv[2])); // no exit handlers, as a shell's exit
    if(mode == "quick_exit" && argc > 2) std::quick_exit(atoi(argv[2])); // at_quick_exit only
    if(mode == "raise" && argc > 2)
    {
        signal(atoi(argv[2]), SIG_DFL);
        raise(atoi(argv[2]));
        return 5;
    }
    if(mode == "args" && argc > 2) return write_lines(argv[2], argv + 3);
    if(mode == "env" && argc > 2) return write_lines(argv[2], environ);
    if(mode == "reopen-stderr" && argc > 2)
    {
        // Closes stderr; its data file then takes fd 2, as the lowest free number.
        close(2);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
        if(fd != 2) return 5;
        return write(fd, "data\n", 5) == 5 ? 0 : 6;
    }
    if(mode == "child" && argc > 2) return run_child("/proc/self/exe", argv[2]);
    if(mode == "barrier" && argc > 3)
        return barrier(argv[2], static_cast<size_t>(strtoul(argv[3], nullptr, 10)));
    if(mode == "wait" && argc > 2) return wait_for_signal(atoi(argv[2]), false);
    if(mode == "count" && argc > 2) return wait_for_signal(atoi(argv[2]), true);
    fprintf(stderr, "test-program: unknown mode\n");
    return 99;
}
