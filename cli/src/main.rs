//! The `hipdnn` command.

fn main() {}
