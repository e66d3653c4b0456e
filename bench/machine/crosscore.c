/* crosscore.c: how long one cache line takes to go from one core to the other, the cost every
 * lock-step exchange between two processes pays (a shared-memory FIFO, a flag, a ping-pong).
 *
 * Two processes, pinned to cores 0 and 1, hand a counter back and forth through one shared
 * cache line; the one-way time, in nanoseconds, is printed (the best of 5 batches of 20 000
 * round trips). On this 2-vCPU VM it reads about 45 ns when the host runs the two vCPUs on
 * neighbouring cores and 170-180 ns in the periods when it places them apart; every two-rank
 * latency, window and stream-copy figure of a run follows it (2-4x slower), mpicd's and Open
 * MPI's alike, so bench/run-all.sh records it around each step (bench/results/machine.csv).
 * With fewer than 2 cores it prints nothing and exits 0. Usage: crosscore */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 20000
#define BATCHES 5

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int pin(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

int main(void) {
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return 0;
    volatile uint64_t *line =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED) { perror("crosscore: mmap"); return 1; }
    const uint64_t total = (uint64_t)BATCH * BATCHES;
    pid_t child = fork();
    if (child < 0) { perror("crosscore: fork"); return 1; }
    if (child == 0) {
        pin(1);
        for (uint64_t i = 0; i < total; i++) {
            while (line[0] != 2 * i + 1) {}
            line[0] = 2 * i + 2;
        }
        _exit(0);
    }
    pin(0);
    double best = 1e9;
    for (uint64_t b = 0; b < BATCHES; b++) {
        double t0 = now();
        for (uint64_t i = b * BATCH; i < (b + 1) * BATCH; i++) {
            line[0] = 2 * i + 1;
            while (line[0] != 2 * i + 2) {}
        }
        double one_way = (now() - t0) / BATCH / 2 * 1e9;
        if (one_way < best) best = one_way;
    }
    waitpid(child, NULL, 0);
    printf("%.0f\n", best);
    return 0;
}
