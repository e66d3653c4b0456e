//! Finds UCX with pkg-config, generates the bindings with bindgen and compiles the C shim.

use std::{env, path::PathBuf, process};

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

    // Emits the link lines for libucp, libuct, libucs and libucm.
    let ucx = pkg_config::Config::new()
        .atleast_version("1.12")
        .probe("ucx")
        .unwrap_or_else(|_| {
            fail(
                "UCX >= 1.12 not found: install it with 'apt-get install libucx-dev' (Debian) \
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
        .includes(&ucx.include_paths)
        .warnings(true)
        .compile("mpicd_ucx_shim");

    let bindings = bindgen::Builder::default()
        .header("src/wrapper.h")
        .clang_args(
            ucx.include_paths
                .iter()
                .map(|p| format!("-I{}", p.display())),
        )
        .rust_target(bindgen::RustTarget::stable(75, 0).expect("a bindgen-known Rust version"))
        .allowlist_item("ucp_.*|ucs_.*|UCP_.*|UCS_.*|mpicd_.*")
        // Enums become integer constants named as in C (UCP_OP_ATTR_FIELD_REQUEST: u32, ...).
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .unwrap_or_else(|e| fail(&format!("bindgen failed on the UCX headers: {e}")));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("bindings.rs"))
        .unwrap_or_else(|e| fail(&format!("cannot write the UCX bindings: {e}")));
}
