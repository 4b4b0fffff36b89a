//! The boardcast daemon binary.
fn main() {}
