/* Real functions for the PMIx macros that bindgen cannot bind. */
#include "wrapper.h"
#include <stdlib.h>
#include <string.h>

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

pmix_status_t mpicd_pmix_spawn(const mpicd_pmix_app *apps, size_t napps, char *nspace)
{
    pmix_app_t *papps;
    PMIX_APP_CREATE(papps, napps);
    if (papps == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < napps; i++) {
        pmix_app_t *a = &papps[i];
        a->cmd = strdup(apps[i].cmd);
        for (size_t k = 0; apps[i].argv != NULL && apps[i].argv[k] != NULL; k++)
            { pmix_status_t r; PMIX_ARGV_APPEND(r, a->argv, apps[i].argv[k]); (void)r; }
        for (size_t k = 0; apps[i].env != NULL && apps[i].env[k] != NULL; k++)
            { pmix_status_t r; PMIX_ARGV_APPEND(r, a->env, apps[i].env[k]); (void)r; }
        if (apps[i].cwd != NULL)
            a->cwd = strdup(apps[i].cwd);
        a->maxprocs = apps[i].maxprocs;
        if (apps[i].host != NULL) {
            PMIX_INFO_CREATE(a->info, 1);
            a->ninfo = 1;
            PMIX_INFO_LOAD(&a->info[0], PMIX_HOST, apps[i].host, PMIX_STRING);
        }
    }
    pmix_nspace_t ns;
    memset(ns, 0, sizeof(ns));
    pmix_status_t rc = PMIx_Spawn(NULL, 0, papps, napps, ns);
    PMIX_APP_FREE(papps, napps);
    if (rc == PMIX_SUCCESS)
        memcpy(nspace, ns, PMIX_MAX_NSLEN + 1);
    return rc;
}

pmix_status_t mpicd_pmix_publish_string(const char *key, const char *value)
{
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, key, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Publish(&info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

pmix_status_t mpicd_pmix_lookup_string(const char *key, char **value)
{
    pmix_pdata_t pdata;
    PMIX_PDATA_CONSTRUCT(&pdata);
    PMIX_LOAD_KEY(pdata.key, key);
    pmix_status_t rc = PMIx_Lookup(&pdata, 1, NULL, 0);
    if (rc == PMIX_SUCCESS) {
        if (pdata.value.type == PMIX_STRING && pdata.value.data.string != NULL)
            *value = strdup(pdata.value.data.string);
        else
            rc = PMIX_ERR_NOT_FOUND;
    }
    PMIX_PDATA_DESTRUCT(&pdata);
    return rc;
}

pmix_status_t mpicd_pmix_unpublish(const char *key)
{
    char *keys[2] = {(char *)key, NULL};
    return PMIx_Unpublish(keys, NULL, 0);
}

const char *mpicd_pmix_proc_nspace(const pmix_proc_t *proc)
{
    return proc->nspace;
}
