//! `tj rewrite` through the binary: the rewrite table and shell equivalence (issue 11).
