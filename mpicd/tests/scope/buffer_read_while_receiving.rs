// A buffer being received into cannot be read, even after its request was forgotten: the
// borrow lasts as long as the scope.
fn main() {
    let mpi = mpicd::init().unwrap();
    let world = mpi.world();
    let mut buf = [0u8; 4];
    mpicd::scope(|s| {
        let request = world.irecv(s, &mut buf, 0, 0).unwrap();
        let _forgotten = std::mem::ManuallyDrop::new(request);
        println!("{}", buf[0]);
    });
}
