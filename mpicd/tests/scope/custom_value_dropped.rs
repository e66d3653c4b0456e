// A custom-typed value being sent cannot be dropped while the scope lives.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let rows: Vec<Vec<i32>> = vec![vec![1; 100_000]];
    mpicd::scope(|s| {
        let request = world.isend_custom(s, &rows, 0, 0).unwrap();
        drop(rows);
        request.wait().unwrap();
    });
}
