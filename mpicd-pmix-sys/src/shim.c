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
