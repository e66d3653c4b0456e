//! Remote memory access (UCP RMA and AMO): registering memory ([`MemRegion`]), packing its
//! remote key for the peers and unpacking theirs ([`RemoteKey`]), puts, gets, 32/64-bit atomics
//! and flushes. Bytes and addresses only: what a window is, what an epoch is and how an MPI
//! accumulate maps onto these calls is [`crate::window`]'s business.
//!
//! Every posting call returns `Ok(None)` when UCX completed it at once, else a [`UcxRequest`]
//! that the caller polls with [`Worker::poll_send`]. A put or get is complete remotely only
//! after a flush of its endpoint (or of the worker) completes.

use super::endpoint::Endpoint;
use super::request::UcxRequest;
use super::worker::{check, Worker};
use crate::error::{Error, Result};
use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::ptr;

/// Memory registered with the UCP context, so that peers may read and write it.
///
/// Released with [`Worker::mem_unmap`] (it needs the context, so it is not a `Drop`); a region
/// whose owner never released it (a window forgotten with `mem::forget`) is unmapped when the
/// worker is destroyed, before the context, which UCX requires.
#[derive(Debug)]
pub(crate) struct MemRegion {
    memh: ucx::ucp_mem_h,
}

// SAFETY: a memory handle is only used under the engine's mutex.
unsafe impl Send for MemRegion {}
// SAFETY: as above; shared references only read the handle value.
unsafe impl Sync for MemRegion {}

/// A peer's remote key, unpacked for one endpoint. Destroyed when dropped, which must happen
/// while the engine (and the endpoint) live; a window whose engine is gone forgets its keys.
#[derive(Debug)]
pub(crate) struct RemoteKey(ucx::ucp_rkey_h);

// SAFETY: used only under the engine's mutex.
unsafe impl Send for RemoteKey {}
// SAFETY: as above.
unsafe impl Sync for RemoteKey {}

impl RemoteKey {
    /// Where the peer's address `remote` (in the region this key names) is mapped in this
    /// process, when a shared-memory transport can map it (memory UCX allocated on this node);
    /// `None` otherwise. The mapping lives as long as the key.
    pub(crate) fn local_address(&self, remote: u64) -> Option<*mut u8> {
        let mut at: *mut c_void = ptr::null_mut();
        // SAFETY: the key is live; `at` is an out pointer. UCX only looks the address up.
        let status = unsafe { ucx::ucp_rkey_ptr(self.0, remote, &mut at) };
        (status == ucx::UCS_OK && !at.is_null()).then_some(at as *mut u8)
    }
}

impl Drop for RemoteKey {
    fn drop(&mut self) {
        // SAFETY: the key came from ucp_ep_rkey_unpack and is destroyed once.
        unsafe { ucx::ucp_rkey_destroy(self.0) }
    }
}

/// The atomic operations UCX offers on 32- and 64-bit words. Windows use `Add` and
/// `CompareSwap` on their control words; the others are there for a fast path of integer
/// accumulates (not taken yet: it must stay atomic with the locked path).
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    Add,
    Swap,
    /// Compare and swap: the operand is the value to compare with; the reply buffer holds the
    /// new value on entry and the old one on completion.
    CompareSwap,
    And,
    Or,
    Xor,
}

impl AtomicOp {
    fn code(self) -> ucx::ucp_atomic_op_t {
        match self {
            AtomicOp::Add => ucx::UCP_ATOMIC_OP_ADD,
            AtomicOp::Swap => ucx::UCP_ATOMIC_OP_SWAP,
            AtomicOp::CompareSwap => ucx::UCP_ATOMIC_OP_CSWAP,
            AtomicOp::And => ucx::UCP_ATOMIC_OP_AND,
            AtomicOp::Or => ucx::UCP_ATOMIC_OP_OR,
            AtomicOp::Xor => ucx::UCP_ATOMIC_OP_XOR,
        }
    }
}

impl Worker {
    /// Registers `len` bytes at `addr` for remote access.
    ///
    /// # Safety
    /// The memory must stay allocated until the region is unmapped.
    pub(crate) unsafe fn mem_map(&self, addr: *mut u8, len: usize) -> Result<MemRegion> {
        if len == 0 {
            return Err(Error::InvalidArgument(
                "zero bytes cannot be registered".into(),
            ));
        }
        // SAFETY: all-zero is a valid ucp_mem_map_params_t with no fields selected.
        let mut params: ucx::ucp_mem_map_params_t = unsafe { std::mem::zeroed() };
        params.field_mask =
            (ucx::UCP_MEM_MAP_PARAM_FIELD_ADDRESS | ucx::UCP_MEM_MAP_PARAM_FIELD_LENGTH) as u64;
        params.address = addr as *mut c_void;
        params.length = len;
        let mut memh: ucx::ucp_mem_h = ptr::null_mut();
        // SAFETY: the context is live; the caller keeps the memory allocated; memh is an out
        // pointer.
        check(
            unsafe { ucx::ucp_mem_map(self.context, &params, &mut memh) },
            "ucp_mem_map",
        )?;
        self.mapped.borrow_mut().push(memh);
        Ok(MemRegion { memh })
    }

    /// Allocates `len` bytes registered for remote access (in memory UCX chooses, which
    /// processes of the node can map: their atomics and copies then need no help from this
    /// process); freed by [`Worker::mem_unmap`]. Returns the region and the address.
    pub(crate) fn mem_allocate(&self, len: usize) -> Result<(MemRegion, *mut u8)> {
        if len == 0 {
            return Err(Error::InvalidArgument(
                "zero bytes cannot be allocated".into(),
            ));
        }
        // SAFETY: all-zero is a valid ucp_mem_map_params_t with no fields selected.
        let mut params: ucx::ucp_mem_map_params_t = unsafe { std::mem::zeroed() };
        params.field_mask = (ucx::UCP_MEM_MAP_PARAM_FIELD_ADDRESS
            | ucx::UCP_MEM_MAP_PARAM_FIELD_LENGTH
            | ucx::UCP_MEM_MAP_PARAM_FIELD_FLAGS) as u64;
        params.address = ptr::null_mut();
        params.length = len;
        params.flags = ucx::UCP_MEM_MAP_ALLOCATE;
        let mut memh: ucx::ucp_mem_h = ptr::null_mut();
        // SAFETY: the context is live; memh is an out pointer.
        check(
            unsafe { ucx::ucp_mem_map(self.context, &params, &mut memh) },
            "ucp_mem_map",
        )?;
        self.mapped.borrow_mut().push(memh);
        let region = MemRegion { memh };
        // SAFETY: all-zero is a valid attribute query with no fields selected.
        let mut attr: ucx::ucp_mem_attr_t = unsafe { std::mem::zeroed() };
        attr.field_mask = (ucx::UCP_MEM_ATTR_FIELD_ADDRESS | ucx::UCP_MEM_ATTR_FIELD_LENGTH) as u64;
        // SAFETY: memh is the live handle just made; attr is an out structure.
        let queried = check(
            unsafe { ucx::ucp_mem_query(region.memh, &mut attr) },
            "ucp_mem_query",
        );
        if queried.is_err() || attr.address.is_null() || attr.length < len {
            self.mem_unmap(region);
            return Err(queried.err().unwrap_or(Error::NoMemory));
        }
        Ok((region, attr.address as *mut u8))
    }

    /// Releases a registration (peers' keys to it become invalid), and the memory of one made
    /// by [`Worker::mem_allocate`].
    pub(crate) fn mem_unmap(&self, region: MemRegion) {
        let mut mapped = self.mapped.borrow_mut();
        if let Some(i) = mapped.iter().position(|&m| m == region.memh) {
            mapped.swap_remove(i);
            // SAFETY: the handle came from ucp_mem_map on this context and is still mapped
            // (it was on the list), so it is unmapped once.
            let _ = unsafe { ucx::ucp_mem_unmap(self.context, region.memh) };
        }
    }

    /// The packed remote key of a region, for the peers to unpack.
    pub(crate) fn rkey_pack(&self, region: &MemRegion) -> Result<Vec<u8>> {
        let mut buf: *mut c_void = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: the context and handle are live; buf and len are out pointers.
        check(
            unsafe { ucx::ucp_rkey_pack(self.context, region.memh, &mut buf, &mut len) },
            "ucp_rkey_pack",
        )?;
        // SAFETY: UCX gave `len` readable bytes at `buf`, copied before they are released.
        let bytes = unsafe { std::slice::from_raw_parts(buf as *const u8, len) }.to_vec();
        // SAFETY: buf came from ucp_rkey_pack and is released once.
        unsafe { ucx::ucp_rkey_buffer_release(buf) };
        Ok(bytes)
    }

    /// A peer's packed key, unpacked for the endpoint to that peer.
    pub(crate) fn rkey_unpack(&self, ep: &Endpoint, packed: &[u8]) -> Result<RemoteKey> {
        if packed.is_empty() {
            return Err(Error::InvalidArgument("an empty remote key".into()));
        }
        let mut rkey: ucx::ucp_rkey_h = ptr::null_mut();
        // SAFETY: ep is live; packed holds a key made by ucp_rkey_pack (UCX reads it during
        // the call only); rkey is an out pointer.
        check(
            unsafe { ucx::ucp_ep_rkey_unpack(ep.ep, packed.as_ptr() as *const c_void, &mut rkey) },
            "ucp_ep_rkey_unpack",
        )?;
        Ok(RemoteKey(rkey))
    }

    /// Writes `len` bytes at `local` to `remote` on the peer of `ep`.
    ///
    /// # Safety
    /// `local..local+len` must stay readable and unchanged until the request completes (or,
    /// when `Ok(None)`, is free at once); `remote` must lie in the region `rkey` names.
    pub(crate) unsafe fn put(
        &self,
        ep: &Endpoint,
        local: *const u8,
        len: usize,
        remote: u64,
        rkey: &RemoteKey,
    ) -> Result<Option<UcxRequest>> {
        let params = Self::request_params(0);
        // SAFETY: forwarded from the caller; ep and rkey are live.
        let ptr = unsafe {
            ucx::ucp_put_nbx(ep.ep, local as *const c_void, len, remote, rkey.0, &params)
        };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Reads `len` bytes at `remote` on the peer of `ep` into `local`.
    ///
    /// # Safety
    /// `local..local+len` must stay writable and otherwise untouched until the request (or a
    /// later flush) completes; `remote` must lie in the region `rkey` names.
    pub(crate) unsafe fn get(
        &self,
        ep: &Endpoint,
        local: *mut u8,
        len: usize,
        remote: u64,
        rkey: &RemoteKey,
    ) -> Result<Option<UcxRequest>> {
        let params = Self::request_params(0);
        // SAFETY: forwarded from the caller; ep and rkey are live.
        let ptr =
            unsafe { ucx::ucp_get_nbx(ep.ep, local as *mut c_void, len, remote, rkey.0, &params) };
        UcxRequest::from_status_ptr(ptr)
    }

    /// An atomic `op` on the `width`-byte word (4 or 8) at `remote`, with the operand at
    /// `value`; with `reply`, the word's old value lands there (for `CompareSwap`, `reply`
    /// holds the new value on entry and is required).
    ///
    /// # Safety
    /// `value` and `reply` must hold `width` bytes and stay valid until the request completes;
    /// `remote` must be a `width`-aligned word in the region `rkey` names.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn atomic(
        &self,
        ep: &Endpoint,
        op: AtomicOp,
        width: usize,
        value: *const u8,
        reply: Option<*mut u8>,
        remote: u64,
        rkey: &RemoteKey,
    ) -> Result<Option<UcxRequest>> {
        if width != 4 && width != 8 {
            return Err(Error::InvalidArgument(format!(
                "a {width}-byte atomic (4 or 8 bytes only)"
            )));
        }
        if op == AtomicOp::CompareSwap && reply.is_none() {
            return Err(Error::InvalidArgument(
                "compare-and-swap needs a reply buffer".into(),
            ));
        }
        let mut params = Self::request_params(ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        // SAFETY: a pure computation of the contiguous datatype of `width`-byte elements.
        params.datatype = unsafe { ucx::mpicd_ucp_dt_make_contig(width) };
        if let Some(r) = reply {
            params.op_attr_mask |= ucx::UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            params.reply_buffer = r as *mut c_void;
        }
        // SAFETY: forwarded from the caller; ep and rkey are live; count 1 element.
        let ptr = unsafe {
            ucx::ucp_atomic_op_nbx(
                ep.ep,
                op.code(),
                value as *const c_void,
                1,
                remote,
                rkey.0,
                &params,
            )
        };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Completes every RMA operation posted on `ep` at its target.
    pub(crate) fn flush_endpoint(&self, ep: &Endpoint) -> Result<Option<UcxRequest>> {
        let params = Self::request_params(0);
        // SAFETY: ep is a live endpoint of this worker.
        let ptr = unsafe { ucx::ucp_ep_flush_nbx(ep.ep, &params) };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Completes every RMA operation posted on this worker at its target.
    pub(crate) fn flush_worker(&self) -> Result<Option<UcxRequest>> {
        let params = Self::request_params(0);
        // SAFETY: the worker is live.
        let ptr = unsafe { ucx::ucp_worker_flush_nbx(self.worker, &params) };
        UcxRequest::from_status_ptr(ptr)
    }
}
