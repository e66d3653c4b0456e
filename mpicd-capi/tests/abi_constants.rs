//! Our `include/mpi.h` against the MPI-5 standard ABI: every integer constant, predefined
//! handle and pointer sentinel that the MPI Forum's `mpi-abi-stubs` define must be in our
//! header with the same C type and value. The stubs' constants are the checked-in table
//! `abi_stubs_constants.txt` (its first line names the stubs' commit), written once by
//! `scripts/abi-stubs-table.py` from the stubs' `mpi.h`.
//!
//! The test lists every difference, then every name we lack; it fails on a difference, and on
//! a missing name unless [`NOT_IMPLEMENTED`] covers it.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Name prefixes of the parts of the standard that mpicd does not implement (yet): their
/// constants are reported as missing but do not fail the test. Keep this list short.
const NOT_IMPLEMENTED: &[&str] = &[];

/// `name -> (kind, value)` of the table: `NAME KIND VALUE` lines after a `#` header.
fn stubs() -> (String, BTreeMap<String, (String, i64)>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/abi_stubs_constants.txt");
    let text = std::fs::read_to_string(&path).expect("abi_stubs_constants.txt");
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default().to_string();
    assert!(
        header.starts_with("# mpi-abi-stubs"),
        "table header: {header}"
    );
    let mut table = BTreeMap::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields.len(), 3, "table line: {line}");
        let value = fields[2]
            .parse()
            .unwrap_or_else(|_| panic!("table value: {line}"));
        table.insert(fields[0].to_string(), (fields[1].to_string(), value));
    }
    (header, table)
}

/// The value of one of our macros: `5`, `(-1)`, `((MPI_Comm)257)`, `((void*)0)`.
fn parse_value(value: &str) -> Option<(String, i64)> {
    let value = value.trim();
    if let Some(cast) = value.strip_prefix("((").and_then(|v| v.strip_suffix(')')) {
        let (kind, number) = cast.split_once(')')?;
        let number = number.trim().trim_start_matches('(').trim_end_matches(')');
        return Some((kind.replace(' ', ""), number.parse().ok()?));
    }
    let number = value.trim_start_matches('(').trim_end_matches(')');
    Some(("int".to_string(), number.parse().ok()?))
}

/// `name -> (kind, value)` of the object-like macros of our generated header.
fn ours() -> BTreeMap<String, (String, i64)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include/mpi.h");
    let text = std::fs::read_to_string(&path).expect("include/mpi.h");
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("#define ") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(' ') else {
            continue;
        };
        if let Some(parsed) = parse_value(value) {
            out.insert(name.to_string(), parsed);
        }
    }
    out
}

#[test]
fn constants_match_the_standard_abi() {
    let (header, stubs) = stubs();
    let ours = ours();
    let mut differ = Vec::new();
    let mut missing = Vec::new();
    let mut allowed = Vec::new();
    for (name, (kind, value)) in &stubs {
        match ours.get(name) {
            Some((our_kind, our_value)) if our_kind == kind && our_value == value => {}
            Some((our_kind, our_value)) => differ.push(format!(
                "  {name}: ours ({our_kind}){our_value}, standard ({kind}){value}"
            )),
            None if NOT_IMPLEMENTED.iter().any(|p| name.starts_with(p)) => {
                allowed.push(name.as_str())
            }
            None => missing.push(format!("  {name}: standard ({kind}){value}")),
        }
    }
    println!("checked against {header}");
    println!(
        "{} constants, {} in our header",
        stubs.len(),
        stubs.len() - missing.len() - allowed.len()
    );
    println!("not implemented (allowed): {}", allowed.join(" "));
    assert!(
        differ.is_empty() && missing.is_empty(),
        "differences from the standard ABI ({}):\n{}\nmissing from our mpi.h ({}):\n{}",
        differ.len(),
        differ.join("\n"),
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn parses_our_forms() {
    assert_eq!(parse_value("5"), Some(("int".into(), 5)));
    assert_eq!(parse_value("(-32766)"), Some(("int".into(), -32766)));
    assert_eq!(
        parse_value("((MPI_Comm)257)"),
        Some(("MPI_Comm".into(), 257))
    );
    assert_eq!(
        parse_value("((MPI_Copy_function *)1)"),
        Some(("MPI_Copy_function*".into(), 1))
    );
    assert_eq!(
        parse_value("((MPI_Offset)-1)"),
        Some(("MPI_Offset".into(), -1))
    );
    assert_eq!(parse_value("foo(x)"), None);
}
