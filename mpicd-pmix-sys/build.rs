//! Finds PMIx with pkg-config, generates the bindings with bindgen and compiles the C shim.

use bindgen::callbacks::{IntKind, ParseCallbacks};
use std::{env, path::PathBuf, process};

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

/// Stops the build with one line that says what to install.
fn fail(msg: &str) -> ! {
    // The warning shows above cargo's failure report, stderr as its last line.
    println!("cargo:warning={msg}");
    eprintln!("error: {msg}");
    process::exit(1);
}

fn main() {
    println!("cargo:rerun-if-changed=src/wrapper.h");
    println!("cargo:rerun-if-changed=src/shim.c");

    // Emits the link line for libpmix.
    let pmix = pkg_config::Config::new()
        .atleast_version("4.0")
        .probe("pmix")
        .unwrap_or_else(|_| {
            fail(
                "PMIx >= 4.0 not found: install it with 'apt-get install libpmix-dev' (Debian) \
                 or set PKG_CONFIG_PATH",
            )
        });
    if clang_sys::load().is_err() {
        fail(
            "libclang not found (bindgen needs it): install it with 'apt-get install \
             libclang-dev' (Debian) or set LIBCLANG_PATH",
        );
    }

    cc::Build::new()
        .file("src/shim.c")
        .includes(&pmix.include_paths)
        .warnings(true)
        .compile("mpicd_pmix_shim");

    let bindings = bindgen::Builder::default()
        .header("src/wrapper.h")
        .clang_args(
            pmix.include_paths
                .iter()
                .map(|p| format!("-I{}", p.display())),
        )
        .rust_target(bindgen::RustTarget::stable(75, 0).expect("a bindgen-known Rust version"))
        .allowlist_item("PMIx_.*|pmix_.*|PMIX_.*|mpicd_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .parse_callbacks(Box::new(StatusMacros))
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .unwrap_or_else(|e| fail(&format!("bindgen failed on the PMIx headers: {e}")));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("bindings.rs"))
        .unwrap_or_else(|e| fail(&format!("cannot write the PMIx bindings: {e}")));
}
