//! A virtual DGT e-board for tests and demos.
