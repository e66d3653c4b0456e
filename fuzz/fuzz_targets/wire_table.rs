//! A lead header and a region table sent apart (`mpicd::fuzzing::wire_table`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mpicd::fuzzing::wire_table(data);
});
