// The scope itself cannot leave its closure (to start operations after it has finished them).
fn main() {
    let mut kept = None;
    mpicd::scope(|s| kept = Some(s));
    drop(kept);
}
