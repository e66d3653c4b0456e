//! Unit tests of the configuration table: its rows, the parsers and their bounds, the typed
//! [`Config`], unknown-variable detection and the dump.

use super::*;
use std::collections::HashMap;

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn config(pairs: &[(&str, &str)]) -> Result<Config> {
    Config::from_lookup(lookup(pairs))
}

fn message(r: Result<Config>) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn defaults() {
    let c = Config::default();
    assert_eq!(
        c,
        Config {
            inline_bytes: 4000,
            inline_split: 0,
            zcopy_threshold: 256 << 10,
            zcopy_depth: 16,
            node_local: true,
            local_stream: 2 << 20,
            coll_node: 131072,
            peer_errors: true,
            wait: Wait::Auto,
        }
    );
    assert_eq!(config(&[]).unwrap(), c);
}

#[test]
fn rows_are_well_formed() {
    let mut names: Vec<&str> = KNOBS.iter().map(|k| k.name).collect();
    names.extend(UCX_SETTINGS.iter().map(|s| s.name));
    for k in KNOBS {
        assert!(
            k.name.starts_with(PREFIX) && k.name.len() > PREFIX.len(),
            "{}",
            k.name
        );
        if k.kind != Kind::Text || !k.default.is_empty() {
            k.check(k.default)
                .unwrap_or_else(|e| panic!("{}: default: {e}", k.name));
        }
    }
    for s in UCX_SETTINGS {
        assert!(
            s.name.starts_with("UCX_") && !s.value.is_empty(),
            "{}",
            s.name
        );
    }
    let docs = KNOBS.iter().map(|k| (k.name, k.doc));
    for (name, doc) in docs.chain(UCX_SETTINGS.iter().map(|s| (s.name, s.reason))) {
        // A doc is one README table cell and one wrapped comment in the dump.
        assert!(
            doc.is_ascii() && !doc.contains(['|', '\n', '`']),
            "{name}: {doc}"
        );
        assert!(doc.ends_with('.') && doc.len() > 20, "{name}: {doc}");
    }
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a name is declared twice");
}

#[test]
fn config_reads_exactly_the_runtime_rows() {
    // A value no parser accepts fails Config for a row it reads, and only for those.
    for k in KNOBS {
        let read = matches!(
            k.layer,
            Layer::Transport | Layer::Plan | Layer::Ops | Layer::Engine
        );
        match config(&[(k.name, "x")]) {
            Err(Error::InvalidArgument(m)) => assert!(read && m.starts_with(k.name), "{m}"),
            other => assert!(!read, "{}: {other:?}", k.name),
        }
    }
}

#[test]
fn overrides_and_bounds() {
    let c = config(&[
        ("MPICD_INLINE_BYTES", " 8128 "),
        ("MPICD_INLINE_SPLIT", "777"),
        ("MPICD_ZCOPY_THRESHOLD", "1"),
        ("MPICD_ZCOPY_DEPTH", "3"),
        ("MPICD_LOCAL_STREAM", "1"),
        ("MPICD_NODE_LOCAL", "0"),
        ("MPICD_PEER_ERRORS", "0"),
        ("MPICD_WAIT", " yield"),
    ])
    .unwrap();
    assert_eq!(
        c,
        Config {
            inline_bytes: MAX_INLINE_BYTES,
            inline_split: 777,
            zcopy_threshold: 1,
            zcopy_depth: 3,
            node_local: false,
            local_stream: 1,
            coll_node: 131072,
            peer_errors: false,
            wait: Wait::Yield,
        }
    );
    let rejected = [
        ("MPICD_INLINE_BYTES", "8129", "is above the maximum 8128"),
        ("MPICD_INLINE_SPLIT", "9000", "is above the maximum 8128"),
        ("MPICD_ZCOPY_THRESHOLD", "0", "is below the minimum 1"),
        ("MPICD_ZCOPY_DEPTH", "0", "is below the minimum 1"),
        ("MPICD_INLINE_BYTES", "4K", "is not a number of bytes"),
        ("MPICD_ZCOPY_DEPTH", "-1", "is not a count"),
        ("MPICD_ZCOPY_THRESHOLD", "", "is not a number of bytes"),
        ("MPICD_NODE_LOCAL", "yes", "is neither 0 nor 1"),
        ("MPICD_PEER_ERRORS", "2", "is neither 0 nor 1"),
    ];
    for (name, value, why) in rejected {
        assert_eq!(
            message(config(&[(name, value)])),
            format!("{name}={value} {why}")
        );
    }
}

#[test]
fn a_parser_of_the_wrong_kind_fails_without_panic() {
    assert!(NODE_LOCAL.number(None).is_err());
    assert!(ZCOPY_DEPTH.switch(None).is_err());
}

#[test]
fn kinds_in_words() {
    assert_eq!(INLINE_BYTES.kind.describe(), "bytes, 0 to 8128");
    assert_eq!(ZCOPY_THRESHOLD.kind.describe(), "bytes, at least 1");
    assert_eq!(ZCOPY_DEPTH.kind.describe(), "count, at least 1");
    assert_eq!(NODE_LOCAL.kind.describe(), "0 or 1");
    assert_eq!(
        Kind::Bytes {
            min: 0,
            max: usize::MAX
        }
        .describe(),
        "bytes"
    );
}

#[test]
fn unknown_names_and_typos() {
    let env = [
        "MPICD_INLINE_BYTES",
        "MPICD_ZCOPY_TRESHOLD",
        "MPICD_NODELOCAL",
        "MPICD_inline_split",
        "MPICD_PEER_ERORRS",
        "MPICD_FROBNICATE",
        "MPICD_",
        "PATH",
        "UCX_TLS",
        "MPICD_C_TESTS_VALGRIND",
    ];
    let found = unknown(env);
    let pairs: Vec<(&str, Option<&str>)> = found.iter().map(|u| (u.name, u.closest)).collect();
    assert_eq!(
        pairs,
        [
            ("MPICD_ZCOPY_TRESHOLD", Some("MPICD_ZCOPY_THRESHOLD")),
            ("MPICD_NODELOCAL", Some("MPICD_NODE_LOCAL")),
            ("MPICD_inline_split", Some("MPICD_INLINE_SPLIT")),
            ("MPICD_PEER_ERORRS", Some("MPICD_PEER_ERRORS")),
            ("MPICD_FROBNICATE", None),
            ("MPICD_", None),
        ]
    );
    assert_eq!(
        found[0].to_string(),
        "MPICD_ZCOPY_TRESHOLD is not an mpicd variable (did you mean MPICD_ZCOPY_THRESHOLD?)"
    );
    assert_eq!(
        found[4].to_string(),
        "MPICD_FROBNICATE is not an mpicd variable"
    );
    assert!(unknown(KNOBS.iter().map(|k| k.name)).is_empty());
}

#[test]
fn edit_distance() {
    assert_eq!(edits(b"", b"ABC"), 3);
    assert_eq!(edits(b"ABC", b""), 3);
    assert_eq!(edits(b"ABC", b"ABC"), 0);
    assert_eq!(edits(b"ABC", b"ACB"), 1);
    assert_eq!(edits(b"KITTEN", b"SITTING"), 3);
}

#[test]
fn dump_shows_values_defaults_and_problems() {
    let entries = dump_from(lookup(&[
        ("MPICD_ZCOPY_DEPTH", "4"),
        ("MPICD_INLINE_BYTES", "9000"),
        ("UCX_RNDV_THRESH", "8192"),
    ]));
    assert_eq!(entries.len(), KNOBS.len() + UCX_SETTINGS.len());
    let by_name = |name: &str| entries.iter().find(|e| e.name == name).unwrap();
    let depth = by_name("MPICD_ZCOPY_DEPTH");
    assert_eq!(
        (depth.current(), depth.default, depth.problem.as_deref()),
        ("4", "16", None)
    );
    let inline = by_name("MPICD_INLINE_BYTES");
    assert!(inline
        .problem
        .as_deref()
        .unwrap()
        .contains("above the maximum 8128"));
    let split = by_name("MPICD_INLINE_SPLIT");
    assert_eq!((split.value.as_deref(), split.current()), (None, "0"));
    let rndv = by_name("UCX_RNDV_THRESH");
    assert_eq!(
        (rndv.current(), rndv.default, rndv.layer),
        ("8192", "65536", Layer::Transport)
    );

    let unknown = unknown(["MPICD_ZCOPY_DEPHT"]);
    let text = render_entries(&entries, &unknown, false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), entries.len() + 1);
    assert!(lines.contains(&"MPICD_ZCOPY_DEPTH=4"));
    assert!(lines.contains(&"MPICD_LIBMPI="));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("MPICD_INLINE_BYTES=9000  # invalid: ")));
    assert_eq!(
        lines.last().copied(),
        Some("# MPICD_ZCOPY_DEPHT is not an mpicd variable (did you mean MPICD_ZCOPY_DEPTH?)")
    );

    let doc = render_entries(&entries, &[], true);
    assert!(doc.contains("# MPICD_ZCOPY_DEPTH [ops] default 16; count, at least 1\n#   "));
    assert!(doc.contains("# MPICD_LIBMPI [python] default -; text\n"));
    assert!(doc
        .lines()
        .all(|l| l.len() <= DOC_WIDTH || !l.starts_with("#   ")));
}

#[test]
fn wrapping() {
    assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
    assert_eq!(wrap("averylongword x", 4), ["averylongword", "x"]);
    assert!(wrap("", 10).is_empty());
}

#[test]
fn ucx_context_names() {
    let keepalive = UCX_SETTINGS
        .iter()
        .find(|s| s.apply == Apply::ContextWithPeerErrors)
        .unwrap();
    assert_eq!(keepalive.context_name(), "KEEPALIVE_INTERVAL");
}
