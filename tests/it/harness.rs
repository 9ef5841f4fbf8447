//! End to end with the real harness CLIs from npm, driven by a fake model server on
//! 127.0.0.1 (issue 11).
