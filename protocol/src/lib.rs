//! Sans-IO codec for the DGT e-board serial protocol.
