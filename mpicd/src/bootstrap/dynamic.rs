//! The launcher calls of MPI's dynamic processes: this process's namespace (the name of its
//! job), starting a new job ([`Bootstrap::spawn`], PMIx_Spawn), and the name service
//! ([`Bootstrap::publish`], [`Bootstrap::lookup`], [`Bootstrap::unpublish`]: PMIx_Publish,
//! PMIx_Lookup, PMIx_Unpublish). A singleton has no launcher: it cannot spawn, and its names
//! live in a map of its own. Part of the bootstrap module, whose file owns every PMIx `unsafe`.

use super::{check, Bootstrap, Kind};
use crate::error::{DynamicError, Error, Result};
use mpicd_pmix_sys as sys;
use std::collections::HashMap;
use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::Mutex;

/// One application of a spawn (see [`Bootstrap::spawn`]).
#[derive(Debug, Clone)]
pub(crate) struct LaunchApp {
    pub command: String,
    /// The arguments after the command.
    pub args: Vec<String>,
    /// `NAME=value` variables added to the launcher's environment.
    pub env: Vec<String>,
    pub wdir: Option<String>,
    pub host: Option<String>,
    pub procs: u32,
}

/// The names a singleton published (no launcher to keep them).
static LOCAL_NAMES: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

fn cstring(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::InvalidArgument(format!("{what} {s:?} contains a NUL")))
}

impl Bootstrap {
    /// The name of this process's job: its PMIx namespace, or for a singleton one made of its
    /// node and pid (unique while it runs).
    pub(crate) fn namespace(&self) -> String {
        match &self.kind {
            Kind::Pmix { me, .. } => {
                // SAFETY: `me` is a live pmix_proc_t whose nspace PMIx NUL-terminated.
                unsafe { CStr::from_ptr(sys::mpicd_pmix_proc_nspace(me)) }
                    .to_string_lossy()
                    .into_owned()
            }
            Kind::Singleton(_) => {
                let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
                format!("singleton.{}.{}", host.trim(), std::process::id())
            }
        }
    }

    /// Starts `apps` as one new job through the launcher; the new job's namespace.
    pub(crate) fn spawn(&self, apps: &[LaunchApp]) -> Result<String> {
        let Kind::Pmix { .. } = self.kind else {
            return Err(Error::Dynamic(
                DynamicError::Spawn,
                "this process was started without a launcher (a singleton cannot spawn)".into(),
            ));
        };
        // Every string the C structs point to, kept alive across the call.
        struct Owned {
            cmd: CString,
            argv: Vec<CString>,
            env: Vec<CString>,
            cwd: Option<CString>,
            host: Option<CString>,
        }
        let owned = apps
            .iter()
            .map(|a| {
                let mut argv = vec![cstring("command", &a.command)?];
                for s in &a.args {
                    argv.push(cstring("argument", s)?);
                }
                Ok(Owned {
                    cmd: cstring("command", &a.command)?,
                    argv,
                    env: a
                        .env
                        .iter()
                        .map(|s| cstring("variable", s))
                        .collect::<Result<_>>()?,
                    cwd: a.wdir.as_deref().map(|s| cstring("wdir", s)).transpose()?,
                    host: a.host.as_deref().map(|s| cstring("host", s)).transpose()?,
                })
            })
            .collect::<Result<Vec<Owned>>>()?;
        let ptrs = |v: &[CString]| -> Vec<*mut c_char> {
            v.iter()
                .map(|s| s.as_ptr() as *mut c_char)
                .chain([ptr::null_mut()])
                .collect()
        };
        let argvs: Vec<_> = owned.iter().map(|o| ptrs(&o.argv)).collect();
        let envs: Vec<_> = owned.iter().map(|o| ptrs(&o.env)).collect();
        let c_apps = owned
            .iter()
            .zip(apps)
            .enumerate()
            .map(|(i, (o, a))| {
                Ok(sys::mpicd_pmix_app {
                    cmd: o.cmd.as_ptr(),
                    argv: argvs[i].as_ptr(),
                    env: envs[i].as_ptr(),
                    cwd: o.cwd.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
                    maxprocs: i32::try_from(a.procs).map_err(|_| Error::InvalidCount(-1))?,
                    host: o.host.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut nspace = [0 as c_char; sys::PMIX_MAX_NSLEN as usize + 1];
        // SAFETY: every pointer in `c_apps` points into `owned`, `argvs` or `envs`, alive for
        // the call (PMIx copies them); `nspace` has the PMIX_MAX_NSLEN + 1 bytes it may write.
        let rc =
            unsafe { sys::mpicd_pmix_spawn(c_apps.as_ptr(), c_apps.len(), nspace.as_mut_ptr()) };
        check(rc, "PMIx_Spawn").map_err(|e| Error::Dynamic(DynamicError::Spawn, e.to_string()))?;
        // SAFETY: the shim copied a NUL-terminated namespace into `nspace`.
        Ok(unsafe { CStr::from_ptr(nspace.as_ptr()) }
            .to_string_lossy()
            .into_owned())
    }

    /// Publishes `port` under `service` (the launcher's name service; a singleton's own map).
    pub(crate) fn publish(&self, service: &str, port: &str) -> Result<()> {
        let key = service_key(service)?;
        if let Kind::Singleton(_) = self.kind {
            let mut names = LOCAL_NAMES.lock().unwrap_or_else(|p| p.into_inner());
            names
                .get_or_insert_with(HashMap::new)
                .insert(service.to_owned(), port.to_owned());
            return Ok(());
        }
        let value = cstring("port name", port)?;
        // SAFETY: both strings are NUL-terminated and alive for the call, which copies them.
        let rc = unsafe { sys::mpicd_pmix_publish_string(key.as_ptr(), value.as_ptr()) };
        check(rc, "PMIx_Publish").map_err(|e| Error::Dynamic(DynamicError::Service, e.to_string()))
    }

    /// The port published under `service`; [`DynamicError::Name`] when there is none.
    pub(crate) fn lookup(&self, service: &str) -> Result<String> {
        let key = service_key(service)?;
        let missing = || {
            Error::Dynamic(
                DynamicError::Name,
                format!("no port is published under the service name {service:?}"),
            )
        };
        if let Kind::Singleton(_) = self.kind {
            let names = LOCAL_NAMES.lock().unwrap_or_else(|p| p.into_inner());
            return names
                .as_ref()
                .and_then(|m| m.get(service).cloned())
                .ok_or_else(missing);
        }
        let mut value: *mut c_char = ptr::null_mut();
        // SAFETY: `key` is NUL-terminated; `value` is a writable out-pointer.
        let rc = unsafe { sys::mpicd_pmix_lookup_string(key.as_ptr(), &mut value) };
        if rc != sys::PMIX_SUCCESS || value.is_null() {
            return Err(missing());
        }
        // SAFETY: on success the shim set `value` to a malloc-ed NUL-terminated copy, freed
        // here once read.
        let port = unsafe { CStr::from_ptr(value) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: `value` came from strdup (malloc) and is freed once.
        unsafe { libc::free(value.cast()) };
        Ok(port)
    }

    /// Withdraws `service` from the name service.
    pub(crate) fn unpublish(&self, service: &str) -> Result<()> {
        let key = service_key(service)?;
        if let Kind::Singleton(_) = self.kind {
            let mut names = LOCAL_NAMES.lock().unwrap_or_else(|p| p.into_inner());
            return match names.as_mut().and_then(|m| m.remove(service)) {
                Some(_) => Ok(()),
                None => Err(not_published(service)),
            };
        }
        // PMIx_Unpublish succeeds for a name nobody published: look first.
        self.lookup(service).map_err(|_| not_published(service))?;
        // SAFETY: `key` is NUL-terminated and alive for the call.
        let rc = unsafe { sys::mpicd_pmix_unpublish(key.as_ptr()) };
        check(rc, "PMIx_Unpublish").map_err(|_| not_published(service))
    }
}

/// The error of unpublishing a name that is not published.
pub(crate) fn not_published(service: &str) -> Error {
    Error::Dynamic(
        DynamicError::Service,
        format!("the service name {service:?} is not published"),
    )
}

/// A service name as a PMIx key: 1 to PMIX_MAX_KEYLEN bytes, no NUL.
fn service_key(service: &str) -> Result<CString> {
    if service.is_empty() || service.len() > sys::PMIX_MAX_KEYLEN as usize {
        return Err(Error::Dynamic(
            DynamicError::Service,
            format!(
                "a service name has 1 to {} bytes, not {}",
                sys::PMIX_MAX_KEYLEN,
                service.len()
            ),
        ));
    }
    cstring("service name", service)
}
