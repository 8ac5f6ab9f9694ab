//! End-to-end tests (see tests/).
