/* probe.h: what the placement probes (c2c.c, ring.c) share: a monotonic clock and pinning the
 * calling process to one cpu (the including file defines _GNU_SOURCE before any include). */
#ifndef PLACEMENT_PROBE_H
#define PLACEMENT_PROBE_H
#include <sched.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}
#endif
