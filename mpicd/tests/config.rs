//! The README's configuration tables are `mpicd::config`'s tables (names, defaults, layers and
//! meanings, in order), and `mpicd-info` prints the table with the environment's values.

use mpicd::config::{KNOBS, UCX_SETTINGS};
use std::process::Command;

/// The README's row of each `MPICD_*` variable.
fn knob_rows() -> Vec<String> {
    KNOBS
        .iter()
        .map(|k| {
            let default = if k.default.is_empty() { "-" } else { k.default };
            format!(
                "| `{}` | {default} | {} | {} |",
                k.name,
                k.layer.name(),
                k.doc
            )
        })
        .collect()
}

/// The README's row of each UCX setting.
fn ucx_rows() -> Vec<String> {
    UCX_SETTINGS
        .iter()
        .map(|s| format!("| `{}` | {} | {} |", s.name, s.value, s.reason))
        .collect()
}

/// The README's table whose rows start with `start`: its consecutive rows from the first.
fn readme_table(start: &str) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let first = lines.iter().position(|l| l.starts_with(start));
    let rows = first.map_or(&[][..], |i| &lines[i..]);
    let table: Vec<String> = rows
        .iter()
        .take_while(|l| l.starts_with(start))
        .map(|l| l.to_string())
        .collect();
    let elsewhere = lines.iter().filter(|l| l.starts_with(start)).count();
    assert_eq!(
        elsewhere,
        table.len(),
        "README.md has {start} rows outside its table"
    );
    table
}

#[test]
fn readme_lists_every_mpicd_variable() {
    let expected = knob_rows();
    assert!(
        readme_table("| `MPICD_") == expected,
        "README.md's table of MPICD_* variables differs from mpicd/src/config/table.rs; \
         its rows should be:\n{}",
        expected.join("\n")
    );
}

#[test]
fn readme_lists_every_ucx_setting() {
    let expected = ucx_rows();
    assert!(
        readme_table("| `UCX_") == expected,
        "README.md's table of UCX settings differs from mpicd/src/config/table.rs; \
         its rows should be:\n{}",
        expected.join("\n")
    );
}

#[test]
fn mpicd_info_prints_values_docs_and_typos() {
    let out = Command::new(env!("CARGO_BIN_EXE_mpicd-info"))
        .arg("--doc")
        .env("MPICD_ZCOPY_DEPTH", "5")
        .env("MPICD_ZCOPY_DEPHT", "5")
        .output()
        .expect("run mpicd-info");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("# MPICD_ZCOPY_DEPTH [ops] default 16; count, at least 1\n#   "));
    assert!(text.contains("\nMPICD_ZCOPY_DEPTH=5\n"));
    assert!(text.contains("\nUCX_KEEPALIVE_INTERVAL="));
    assert!(text.ends_with(
        "# MPICD_ZCOPY_DEPHT is not an mpicd variable (did you mean MPICD_ZCOPY_DEPTH?)\n"
    ));

    let plain = Command::new(env!("CARGO_BIN_EXE_mpicd-info"))
        .env("MPICD_INLINE_SPLIT", "9000")
        .output()
        .unwrap();
    assert!(plain.status.success());
    let text = String::from_utf8(plain.stdout).unwrap();
    assert!(text.starts_with("MPICD_INLINE_BYTES="));
    assert!(!text.contains("\n#   "));
    assert!(text.contains(
        "\nMPICD_INLINE_SPLIT=9000  # invalid: MPICD_INLINE_SPLIT=9000 is above the maximum 8128\n"
    ));

    let bad = Command::new(env!("CARGO_BIN_EXE_mpicd-info"))
        .arg("--frobnicate")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).starts_with("usage: mpicd-info"));
}
