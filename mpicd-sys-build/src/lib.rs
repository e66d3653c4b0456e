//! What the build scripts of `mpicd-ucx-sys` and `mpicd-pmix-sys` share: find a system C
//! library with pkg-config, stop with one line naming the Debian package when it (or libclang)
//! is missing, compile the crate's C shim, and generate bindings with bindgen.

pub use bindgen;
use std::{env, path::PathBuf, process};

/// A system library to bind.
pub struct SystemLibrary {
    /// Name shown in messages ("UCX").
    pub name: &'static str,
    /// pkg-config module ("ucx").
    pub pkg_config: &'static str,
    /// Oldest supported version ("1.12").
    pub min_version: &'static str,
    /// Debian package that provides it ("libucx-dev").
    pub debian_package: &'static str,
    /// Name of the compiled shim library ("mpicd_ucx_shim").
    pub shim: &'static str,
    /// Items bindgen keeps (a regex).
    pub allowlist: &'static str,
}

/// Stops the build with one line that says what to install.
pub fn fail(msg: &str) -> ! {
    // The warning shows above cargo's failure report, stderr as its last line.
    println!("cargo:warning={msg}");
    eprintln!("error: {msg}");
    process::exit(1);
}

impl SystemLibrary {
    /// Emits the link lines, compiles `src/shim.c` and writes `$OUT_DIR/bindings.rs` from
    /// `src/wrapper.h`; `customize` adds library-specific bindgen settings.
    pub fn build(&self, customize: impl FnOnce(bindgen::Builder) -> bindgen::Builder) {
        println!("cargo:rerun-if-changed=src/wrapper.h");
        println!("cargo:rerun-if-changed=src/shim.c");
        let lib = pkg_config::Config::new()
            .atleast_version(self.min_version)
            .probe(self.pkg_config)
            .unwrap_or_else(|_| {
                fail(&format!(
                    "{} >= {} not found: install it with 'apt-get install {}' (Debian) or set PKG_CONFIG_PATH",
                    self.name, self.min_version, self.debian_package
                ))
            });
        if clang_sys::load().is_err() {
            fail("libclang not found (bindgen needs it): install it with 'apt-get install libclang-dev' (Debian) or set LIBCLANG_PATH");
        }
        cc::Build::new()
            .file("src/shim.c")
            .includes(&lib.include_paths)
            .warnings(true)
            .compile(self.shim);
        let rust_target = bindgen::RustTarget::stable(75, 0)
            .unwrap_or_else(|_| fail("bindgen does not know Rust 1.75"));
        let builder = bindgen::Builder::default()
            .header("src/wrapper.h")
            .clang_args(
                lib.include_paths
                    .iter()
                    .map(|p| format!("-I{}", p.display())),
            )
            .rust_target(rust_target)
            .allowlist_item(self.allowlist)
            // Enums become integer constants named as in C (UCP_OP_ATTR_FIELD_REQUEST: u32, ...).
            .default_enum_style(bindgen::EnumVariation::Consts)
            .prepend_enum_name(false)
            .derive_default(true)
            .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
        let bindings = customize(builder)
            .generate()
            .unwrap_or_else(|e| fail(&format!("bindgen failed on the {} headers: {e}", self.name)));
        let out = PathBuf::from(
            env::var("OUT_DIR").unwrap_or_else(|_| fail("cargo did not set OUT_DIR")),
        );
        bindings
            .write_to_file(out.join("bindings.rs"))
            .unwrap_or_else(|e| fail(&format!("cannot write the {} bindings: {e}", self.name)));
    }
}
