/* MIT License - see LICENSE.
 * A program that does not link the SDK and loads a tool with dlopen, as Python (ctypes) and
 * plugin hosts do: the tool brings the SDK, whose initialization then runs inside that
 * dlopen, with the loader's lock held. argv[1]: the tool library. */
#include <dlfcn.h>
#include <stdio.h>

int
main(int argc, char** argv)
{
    if(argc < 2) return 2;
    void* tool = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    printf("host-dlopen: %s\n", tool != NULL ? "loaded" : dlerror());
    fflush(stdout);
    return tool != NULL ? 0 : 3;
}
