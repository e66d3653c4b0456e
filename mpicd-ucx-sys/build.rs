//! Finds UCX with pkg-config, generates the bindings with bindgen and compiles the C shim.

use mpicd_sys_build::SystemLibrary;

fn main() {
    SystemLibrary {
        name: "UCX",
        pkg_config: "ucx",
        min_version: "1.12",
        debian_package: "libucx-dev",
        shim: "mpicd_ucx_shim",
        allowlist: "ucp_.*|ucs_.*|UCP_.*|UCS_.*|mpicd_.*",
    }
    .build(|b| b);
}
