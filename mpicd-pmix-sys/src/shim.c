/* Real functions for the PMIx macros that bindgen cannot bind. */
#include "wrapper.h"

pmix_status_t mpicd_pmix_put_bytes(pmix_scope_t scope, const char *key, const void *data,
                                   size_t len)
{
    pmix_value_t value;
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)data; /* only read: PMIx_Put copies the value */
    value.data.bo.size = len;
    return PMIx_Put(scope, key, &value);
}

void mpicd_pmix_info_load_bool(pmix_info_t *info, const char *key, bool value)
{
    PMIX_INFO_CONSTRUCT(info);
    PMIX_INFO_LOAD(info, key, &value, PMIX_BOOL);
}

int mpicd_pmix_value_get_u32(const pmix_value_t *value, uint32_t *out)
{
    if (value->type != PMIX_UINT32)
        return -1;
    *out = value->data.uint32;
    return 0;
}

int mpicd_pmix_value_get_bytes(const pmix_value_t *value, const void **data, size_t *len)
{
    if (value->type != PMIX_BYTE_OBJECT)
        return -1;
    *data = value->data.bo.bytes;
    *len = value->data.bo.size;
    return 0;
}

void mpicd_pmix_value_release(pmix_value_t *value)
{
    PMIX_VALUE_RELEASE(value);
}

static size_t add_rank(const pmix_proc_t *proc, const char *nspace, uint32_t *ranks, size_t max,
                       size_t found)
{
    if (proc != NULL && PMIX_CHECK_NSPACE(proc->nspace, nspace)) {
        if (found < max)
            ranks[found] = proc->rank;
        found++;
    }
    return found;
}

size_t mpicd_pmix_event_affected_ranks(const pmix_info_t *info, size_t ninfo,
                                       const char *nspace, uint32_t *ranks, size_t max)
{
    size_t found = 0;
    for (size_t i = 0; info != NULL && i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && v->type == PMIX_PROC) {
            found = add_rank(v->data.proc, nspace, ranks, max, found);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                   v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
                   v->data.darray->type == PMIX_PROC) {
            const pmix_proc_t *procs = (const pmix_proc_t *)v->data.darray->array;
            for (size_t k = 0; procs != NULL && k < v->data.darray->size; k++)
                found = add_rank(&procs[k], nspace, ranks, max, found);
        }
    }
    return found;
}
