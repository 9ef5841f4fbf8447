//! `tj hook <host>`: one harness's pre-tool-use payload in, that harness's JSON answer (or
//! nothing) out. Never fails: a payload tj cannot judge gets no answer (issue 11).
//!
//! SKELETON: filled in by the hook work.
