//! Black-box test crate: everything lives under tests/.
