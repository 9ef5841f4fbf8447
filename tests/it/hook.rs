//! `tj hook <host>` through the binary: payload in, exact JSON out (issue 11).
