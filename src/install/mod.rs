//! `tj install <host>`, `tj uninstall <host>` and the hosts part of `tj doctor`: finding a
//! harness's settings file and adding or removing tj's entry in it (issue 11).
//!
//! SKELETON: filled in by the install work.
