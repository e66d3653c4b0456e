/* Input of bindgen: the PMIx client API and the prototypes of the C shim (src/shim.c). */
#ifndef MPICD_PMIX_WRAPPER_H
#define MPICD_PMIX_WRAPPER_H

#include <stdbool.h>
#include <stdint.h>
#include <pmix.h>

/* PMIx_Put of a byte object (PMIX_BYTE_OBJECT) under `key`; PMIx copies the bytes. */
pmix_status_t mpicd_pmix_put_bytes(pmix_scope_t scope, const char *key, const void *data,
                                   size_t len);
/* PMIX_INFO_LOAD(info, key, &value, PMIX_BOOL), e.g. PMIX_COLLECT_DATA = true for a fence.
 * A boolean allocates nothing, so the info needs no PMIX_INFO_DESTRUCT. */
void mpicd_pmix_info_load_bool(pmix_info_t *info, const char *key, bool value);
/* Reads a PMIX_UINT32 value: returns 0 and sets *out, or -1 if the value has another type. */
int mpicd_pmix_value_get_u32(const pmix_value_t *value, uint32_t *out);
/* Borrows a PMIX_BYTE_OBJECT value: returns 0 and sets *data and *len (valid until the value
 * is released), or -1 if the value has another type. */
int mpicd_pmix_value_get_bytes(const pmix_value_t *value, const void **data, size_t *len);
/* PMIX_VALUE_RELEASE: frees a value returned by PMIx_Get. */
void mpicd_pmix_value_release(pmix_value_t *value);

/* The ranks of namespace `nspace` an event names as affected (PMIX_EVENT_AFFECTED_PROC, or the
 * array PMIX_EVENT_AFFECTED_PROCS) in its `ninfo` infos: writes at most `max` of them to `ranks`
 * and returns how many it found. */
size_t mpicd_pmix_event_affected_ranks(const pmix_info_t *info, size_t ninfo,
                                       const char *nspace, uint32_t *ranks, size_t max);

/* One application of a spawn: its command, NULL-terminated argv and env (extra variables,
 * NAME=value), working directory (NULL: the launcher's), process count, and the hosts it may
 * run on (NULL: anywhere; PMIX_HOST). */
typedef struct {
    const char *cmd;
    char *const *argv;
    char *const *env;
    const char *cwd;
    int maxprocs;
    const char *host;
} mpicd_pmix_app;

/* PMIx_Spawn of `napps` applications as one new job; its namespace is copied to `nspace`
 * (PMIX_MAX_NSLEN + 1 bytes). */
pmix_status_t mpicd_pmix_spawn(const mpicd_pmix_app *apps, size_t napps, char *nspace);
/* PMIx_Publish of the string `value` under `key`. */
pmix_status_t mpicd_pmix_publish_string(const char *key, const char *value);
/* PMIx_Lookup of the string published under `key` (not waiting for it): on success `*value`
 * is a malloc-ed copy the caller frees with free(). */
pmix_status_t mpicd_pmix_lookup_string(const char *key, char **value);
/* PMIx_Unpublish of `key`. */
pmix_status_t mpicd_pmix_unpublish(const char *key);
/* The namespace of `proc`, as a NUL-terminated string. */
const char *mpicd_pmix_proc_nspace(const pmix_proc_t *proc);

#endif
