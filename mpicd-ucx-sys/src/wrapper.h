/* Input of bindgen: the UCP API and the prototypes of the C shim (src/shim.c). */
#ifndef MPICD_UCX_WRAPPER_H
#define MPICD_UCX_WRAPPER_H

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

/* UCS_PTR_IS_ERR(ptr): nonzero when a status pointer carries an error. */
int mpicd_ucs_ptr_is_err(void *ptr);
/* UCS_PTR_IS_PTR(ptr): nonzero when a status pointer is a real request. */
int mpicd_ucs_ptr_is_ptr(void *ptr);
/* UCS_PTR_STATUS(ptr): UCS_INPROGRESS for a request, else the status it carries. */
ucs_status_t mpicd_ucs_ptr_status(void *ptr);
/* ucp_dt_make_contig(elem): the contiguous datatype of elements of `elem` bytes. */
ucp_datatype_t mpicd_ucp_dt_make_contig(size_t elem);
/* ucp_dt_make_iov(): the scatter/gather (UCP_DATATYPE_IOV) datatype. */
ucp_datatype_t mpicd_ucp_dt_make_iov(void);
/* ucp_init(): a static inline function in ucp.h, so not exported by libucp. */
ucs_status_t mpicd_ucp_init(const ucp_params_t *params, const ucp_config_t *config,
                            ucp_context_h *context_p);

#endif
