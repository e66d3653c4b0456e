//! Gives the shared library its SONAME, `libmpi.so.<major>` (`libmpi.so.0`), so that a program
//! linked with `-lmpi` records a versioned dependency, as with any system library, and makes
//! the matching `libmpi.so.0 -> libmpi.so` link beside the build output (target/<profile>/),
//! where programs built against the build tree (bin/mpicc's default) look for it at run time.
//! `scripts/install.sh` installs the same names under PREFIX/lib. Also compiles
//! `src/long_double.c` (reductions on C's long double, which Rust cannot compute in), and
//! generates the profiling interface (`$OUT_DIR/pmpi.rs`, included by `src/pmpi.rs`): one
//! `PMPI_` entry point for every exported `MPI_`/`MPIX_` function found in `src/`.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/long_double.c");
    // A directory: cargo reruns the script when any file under it changes or is added.
    println!("cargo:rerun-if-changed=src");
    write_pmpi();
    cc::Build::new()
        .file("src/long_double.c")
        .flag_if_supported("-std=c11")
        .compile("mpicd_long_double");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    // PMPI_X jumps to MPI_X by its global name; bound inside the library, so that a tool
    // defining MPI_X (LD_PRELOAD, or linked before libmpi) and calling PMPI_X reaches mpicd's
    // MPI_X, not its own. Rust's calls between its own functions are bound locally already.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
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

/// An exported C function of the crate: its name and the `#[cfg]` attributes it carries.
struct Exported {
    name: String,
    cfgs: Vec<String>,
}

/// The `#[no_mangle] pub [unsafe] extern "C" fn MPI_*`/`MPIX_*` items of one source file.
fn exported_in(text: &str) -> Vec<Exported> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some(rest) = t
            .strip_prefix("pub unsafe extern \"C\" fn ")
            .or_else(|| t.strip_prefix("pub extern \"C\" fn "))
        else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !(name.starts_with("MPI_") || name.starts_with("MPIX_")) {
            continue;
        }
        // The attributes and doc comments just above the item.
        let mut no_mangle = false;
        let mut cfgs = Vec::new();
        for above in lines[..i].iter().rev() {
            let a = above.trim();
            if a.starts_with("///") || a.starts_with("//") {
                continue;
            }
            if !a.starts_with("#[") {
                break;
            }
            no_mangle |= a.contains("no_mangle");
            if a.starts_with("#[cfg(") {
                cfgs.push(a.to_string());
            }
        }
        if no_mangle {
            found.push(Exported { name, cfgs });
        }
    }
    found
}

/// Every `.rs` file under `dir`, sorted, so that the output does not depend on the directory
/// order.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
    into.sort();
}

/// Writes `$OUT_DIR/pmpi.rs`: for each exported `MPI_X` (`MPIX_X`), a naked `PMPI_X`
/// (`PMPIX_X`) that jumps to it (`pmpi_jump!` of `src/pmpi.rs`, one instruction per
/// architecture), so its arguments and result pass through untouched whatever the signature.
fn write_pmpi() {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let src = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut all: Vec<Exported> = Vec::new();
    for file in files {
        if let Ok(text) = std::fs::read_to_string(&file) {
            all.extend(exported_in(&text));
        }
    }
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all.dedup_by(|a, b| a.name == b.name);
    let mut code = String::from(
        "// Generated by mpicd-capi/build.rs: the PMPI_ names of the exported functions.\n",
    );
    for f in &all {
        code.push('\n');
        code.push_str(&format!(
            "/// Profiling entry point: the same function as `{}`.\n",
            f.name
        ));
        for cfg in &f.cfgs {
            code.push_str(cfg);
            code.push('\n');
        }
        code.push_str(&format!(
            "#[no_mangle]\n#[unsafe(naked)]\npub unsafe extern \"C\" fn P{0}() {{\n    core::arch::naked_asm!(pmpi_jump!(\"{0}\"))\n}}\n",
            f.name
        ));
    }
    let path = out_dir.join("pmpi.rs");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(code.as_str()) {
        if let Err(e) = std::fs::write(&path, code) {
            panic!("cannot write {}: {e}", path.display());
        }
    }
}
