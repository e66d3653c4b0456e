//! Compile-fail tests of the request scope (see `mpicd::scope`): while a non-blocking operation
//! may still use a buffer, safe code can neither drop, move nor touch that buffer, and a scoped
//! request or the scope itself cannot leave the scope's closure. Each file under `tests/scope/`
//! must fail to compile with the error recorded beside it.

#[test]
fn scope_misuse_does_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/scope/*.rs");
}
