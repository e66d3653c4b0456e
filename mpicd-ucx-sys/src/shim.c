/* Real functions for the UCX macros and inline functions that bindgen cannot bind. */
#include "wrapper.h"

int mpicd_ucs_ptr_is_err(void *ptr) { return UCS_PTR_IS_ERR(ptr); }

int mpicd_ucs_ptr_is_ptr(void *ptr) { return UCS_PTR_IS_PTR(ptr); }

ucs_status_t mpicd_ucs_ptr_status(void *ptr) { return UCS_PTR_STATUS(ptr); }

ucp_datatype_t mpicd_ucp_dt_make_contig(size_t elem) { return ucp_dt_make_contig(elem); }

ucp_datatype_t mpicd_ucp_dt_make_iov(void) { return ucp_dt_make_iov(); }

ucs_status_t mpicd_ucp_init(const ucp_params_t *params, const ucp_config_t *config,
                            ucp_context_h *context_p)
{
    return ucp_init(params, config, context_p);
}
