/* c2c.c: how far apart the host has put this machine's two cores: the one-way time (ns) of a
 * cache line passed back and forth between a process on cpu 0 and one on cpu 1 (200000 round
 * trips). On the project's VMs it is ~40 ns when the cores are close and ~170 ns when they are
 * far apart, which changes every few seconds to a minute (see bench/placement.sh). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

int main(void)
{
    const uint64_t trips = 200000;
    volatile uint64_t *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        pin(1);
        for (uint64_t i = 0; i < trips; i++) {
            while (*line != 2 * i + 1)
                ;
            *line = 2 * i + 2;
        }
        _exit(0);
    }
    pin(0);
    double t0 = now();
    for (uint64_t i = 0; i < trips; i++) {
        *line = 2 * i + 1;
        while (*line != 2 * i + 2)
            ;
    }
    double dt = now() - t0;
    waitpid(child, NULL, 0);
    printf("%.0f\n", dt / trips / 2 * 1e9);
    return 0;
}
