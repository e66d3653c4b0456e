//! A lead message from a peer: decoded, walked and re-encoded (`mpicd::fuzzing::wire_lead`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mpicd::fuzzing::wire_lead(data);
});
