//! Finds PMIx with pkg-config, generates the bindings with bindgen and compiles the C shim.

use mpicd_sys_build::bindgen::callbacks::{IntKind, ParseCallbacks};
use mpicd_sys_build::SystemLibrary;

/// Types the status macros (`PMIX_SUCCESS`, `PMIX_ERROR`, `PMIX_ERR_*`) as `pmix_status_t` (i32)
/// so they compare with what the functions return; other integer macros keep bindgen's types.
#[derive(Debug)]
struct StatusMacros;

impl ParseCallbacks for StatusMacros {
    fn int_macro(&self, name: &str, _value: i64) -> Option<IntKind> {
        let status =
            name == "PMIX_SUCCESS" || name == "PMIX_ERROR" || name.starts_with("PMIX_ERR_");
        status.then_some(IntKind::Int)
    }
}

fn main() {
    SystemLibrary {
        name: "PMIx",
        pkg_config: "pmix",
        min_version: "4.0",
        debian_package: "libpmix-dev",
        shim: "mpicd_pmix_shim",
        allowlist: "PMIx_.*|pmix_.*|PMIX_.*|mpicd_.*",
    }
    .build(|b| b.parse_callbacks(Box::new(StatusMacros)));
}
