/* abi_dlopen.c: what a tool that targets the MPI-5 standard ABI does: load libmpi_abi.so.1 by
 * name and call into it. Prints "abi_dlopen: ok" and the library's version string. */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
    void *lib = dlopen("libmpi_abi.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "abi_dlopen: %s\n", dlerror());
        return 1;
    }
    int (*version)(char *, int *) = (int (*)(char *, int *))dlsym(lib, "MPI_Get_library_version");
    int (*custom)(void) = (int (*)(void))dlsym(lib, "MPI_Type_create_custom");
    if (!version || !custom) {
        fprintf(stderr, "abi_dlopen: symbols missing\n");
        return 1;
    }
    char text[8192];
    int len = 0;
    if (version(text, &len) != 0 || len <= 0) return 1;
    printf("abi_dlopen: ok, %s\n", text);
    return 0;
}
