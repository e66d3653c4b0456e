//! Gives the shared library its SONAME, `libmpi.so.<major>` (`libmpi.so.0`), so that a program
//! linked with `-lmpi` records a versioned dependency, as with any system library, and makes
//! the matching `libmpi.so.0 -> libmpi.so` link beside the build output (target/<profile>/),
//! where programs built against the build tree (bin/mpicc's default) look for it at run time.
//! `scripts/install.sh` installs the same names under PREFIX/lib. Also compiles
//! `src/long_double.c` (reductions on C's long double, which Rust cannot compute in).

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/long_double.c");
    cc::Build::new()
        .file("src/long_double.c")
        .flag_if_supported("-std=c11")
        .compile("mpicd_long_double");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let soname = format!("libmpi.so.{major}");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");

    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out; the cdylib lands in
    // <target>/<profile>. The link dangles until the library is linked, which is harmless.
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let Some(profile_dir) = out_dir.ancestors().nth(3) else {
        return;
    };
    let link = profile_dir.join(&soname);
    if std::fs::read_link(&link).ok().as_deref() != Some(Path::new("libmpi.so")) {
        let _ = std::fs::remove_file(&link);
        if let Err(e) = std::os::unix::fs::symlink("libmpi.so", &link) {
            println!(
                "cargo:warning=could not link {} to libmpi.so: {e}",
                link.display()
            );
        }
    }
}
