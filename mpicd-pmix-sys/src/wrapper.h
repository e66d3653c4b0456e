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

#endif
