//! Which of the three modes `tj run` runs in (DESIGN.md "Modes"). A pure function of the
//! flags, the environment snapshot and the identity of stdout, so every case is a table row.
//!
//! # The rule
//!
//! The first of these that holds decides:
//!
//! 1. `TJ_DISABLE` is set: **transparent** (tj is switched off).
//! 2. `TJ_INNER` is set: **transparent** (a `tj run` inside a `tj run`).
//! 3. stdin, stdout or stderr was closed when tj started (`cmd >&-`): **transparent**. The
//!    command must get it closed and the others as they are, which only a run in tj's
//!    place gives it; and with stdout closed, no rendition has a reader.
//! 4. `--agent`: **agent**. `--live`: **terminal**. Whoever wrote the flag knows who reads
//!    the output (the harness adapters write `--agent`), so nothing below overrides it.
//! 5. `--agent-stdout DEV:INO` names the agent's stdout and ours is something else (`| grep`,
//!    `> file`, `$(…)`): **transparent**, so the output reaches its reader exactly as
//!    without tj.
//! 6. An agent harness's variable is set ([`crate::env::AGENT_VARS`]): **agent**.
//! 7. stdout is not a terminal: **agent**.
//! 8. Otherwise: **terminal**.
//!
//! The agent's stdout arrives as a flag, never from the environment: an exported record is
//! inherited by every process below the shell that made it (a nested harness, a terminal
//! opened from an agent's shell), where it names somebody else's stdout and would make every
//! run transparent. The shell hook writes the flag on each call (`shell/tj.bash`): the
//! stdout its shell had when it sourced the hook. A caller that cannot tell (a harness that
//! copied the hook's functions into its own shells, on a system without `/proc`) passes no
//! flag, and a pipe is then taken to be the agent's.

use crate::env::Env;

/// How `tj run` treats the command's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// stdout is a person's terminal: live passthrough, byte-exact; the original goes to the
    /// store, and the rendition to the side channel if one is configured (without one, no
    /// rendition is made: nobody would read it).
    Terminal,
    /// An agent reads stdout: nothing live; the rendition is printed when the child ends
    /// (or goes to the side channel, and stdout carries a clean live text stream).
    Agent,
    /// The output is going somewhere else (a pipe, a file), tj is disabled, or tj is already
    /// running this command: exec it directly, no PTY, no capture.
    Transparent,
}

/// Why the mode was chosen, for `tj doctor` and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// `TJ_DISABLE` is set.
    Disabled,
    /// `TJ_INNER` is set: this is a `tj run` inside a `tj run`.
    Nested,
    /// `--agent`.
    AgentFlag,
    /// `--live`.
    LiveFlag,
    /// `--agent-stdout` names the agent's stdout, and ours is something else.
    Redirected,
    /// stdin, stdout or stderr was closed when tj started (`cmd >&-`): the command gets it
    /// closed, and the others as they are, only when it runs in tj's place.
    StdioClosed,
    /// An agent harness's variable is set.
    Harness,
    /// stdout is not a terminal.
    NotATerminal,
    /// stdout is a terminal and nothing says an agent is reading.
    Terminal,
}

impl Reason {
    /// Why, in a few words: `tj doctor`'s, and a transparent run's note on the side channel.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::Disabled => "TJ_DISABLE is set",
            Reason::Nested => "TJ_INNER is set",
            Reason::Redirected => "stdout is not the agent's (--agent-stdout)",
            Reason::StdioClosed => "stdin, stdout or stderr was closed",
            Reason::AgentFlag => "--agent",
            Reason::LiveFlag => "--live",
            Reason::Harness => "an agent variable is set",
            Reason::NotATerminal => "stdout is not a terminal",
            Reason::Terminal => "stdout is a terminal and no agent variable is set",
        }
    }
}

/// What the decision looks at besides the environment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// `--agent`.
    pub agent_flag: bool,
    /// `--live`.
    pub live_flag: bool,
    /// `--agent-stdout`: the (device, inode) of the stdout the agent reads, as the shell
    /// hook saw it.
    pub agent_stdout: Option<(u64, u64)>,
    /// stdout is a terminal.
    pub stdout_is_tty: bool,
    /// stdout's (device, inode), if it could be read.
    pub stdout_id: Option<(u64, u64)>,
    /// stdin, stdout or stderr was closed when tj started ([`crate::stdio`]). tj cannot
    /// then run the command as it would run without tj, with that descriptor closed and the
    /// others as they are, through a PTY or pipe of its own: it runs it in its place
    /// ([`super::exec_in_place`], which closes it again).
    pub stdio_closed: bool,
}

/// Decides the mode by the rule in the [module docs](self).
pub fn decide(facts: &Facts, env: &Env) -> (Mode, Reason) {
    if env.disable {
        return (Mode::Transparent, Reason::Disabled);
    }
    if env.inner {
        return (Mode::Transparent, Reason::Nested);
    }
    if facts.stdio_closed {
        return (Mode::Transparent, Reason::StdioClosed);
    }
    if facts.agent_flag {
        return (Mode::Agent, Reason::AgentFlag);
    }
    if facts.live_flag {
        return (Mode::Terminal, Reason::LiveFlag);
    }
    // An unreadable stdout counts as elsewhere: stepping aside is never worse.
    if let Some(agents) = facts.agent_stdout
        && facts.stdout_id != Some(agents)
    {
        return (Mode::Transparent, Reason::Redirected);
    }
    if env.harness.is_some() {
        return (Mode::Agent, Reason::Harness);
    }
    if !facts.stdout_is_tty {
        return (Mode::Agent, Reason::NotATerminal);
    }
    (Mode::Terminal, Reason::Terminal)
}

/// Parses the value of `--agent-stdout`: `DEV:INO`, both decimal, as `stat -c %d:%i` prints
/// them and as Rust's `MetadataExt::{dev, ino}` return them.
pub fn parse_dev_ino(text: &str) -> Option<(u64, u64)> {
    let (dev, ino) = text.trim().split_once(':')?;
    Some((dev.parse().ok()?, ino.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_vars(pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))), None)
    }

    const TTY: Facts = Facts {
        agent_flag: false,
        live_flag: false,
        agent_stdout: None,
        stdout_is_tty: true,
        stdout_id: Some((1, 2)),
        stdio_closed: false,
    };
    const PIPE: Facts = Facts {
        agent_flag: false,
        live_flag: false,
        agent_stdout: None,
        stdout_is_tty: false,
        stdout_id: Some((9, 9)),
        stdio_closed: false,
    };
    /// The hook's record of the agent's stdout: the pipe above.
    const AGENTS: Option<(u64, u64)> = Some((9, 9));
    /// Somebody else's stdout.
    const OTHER: Option<(u64, u64)> = Some((7, 7));

    #[test]
    fn mode_table() {
        use Mode::{Agent, Terminal, Transparent};
        let rows: Vec<(&str, Facts, Env, Mode, Reason)> = vec![
            ("terminal", TTY, env(&[]), Terminal, Reason::Terminal),
            ("pipe, no hook", PIPE, env(&[]), Agent, Reason::NotATerminal),
            ("harness on a tty", TTY, env(&[("CLAUDECODE", "1")]), Agent, Reason::Harness),
            ("TJ_AGENT=0 is no agent", TTY, env(&[("TJ_AGENT", "0")]), Terminal, Reason::Terminal),
            (
                "--agent on a tty",
                Facts { agent_flag: true, ..TTY },
                env(&[]),
                Agent,
                Reason::AgentFlag,
            ),
            (
                "--live in a harness",
                Facts { live_flag: true, ..TTY },
                env(&[("TJ_AGENT", "1")]),
                Terminal,
                Reason::LiveFlag,
            ),
            ("disabled", TTY, env(&[("TJ_DISABLE", "1")]), Transparent, Reason::Disabled),
            (
                "TJ_DISABLE=0 is not disabled",
                PIPE,
                env(&[("TJ_DISABLE", "0")]),
                Agent,
                Reason::NotATerminal,
            ),
            (
                "disabled beats --agent",
                Facts { agent_flag: true, ..TTY },
                env(&[("TJ_DISABLE", "1")]),
                Transparent,
                Reason::Disabled,
            ),
            ("nested", PIPE, env(&[("TJ_INNER", "1")]), Transparent, Reason::Nested),
            (
                "nested beats --agent",
                Facts { agent_flag: true, ..PIPE },
                env(&[("TJ_INNER", "1")]),
                Transparent,
                Reason::Nested,
            ),
            (
                "a closed stdin, stdout or stderr beats --agent",
                Facts { agent_flag: true, stdio_closed: true, ..PIPE },
                env(&[("CLAUDECODE", "1")]),
                Transparent,
                Reason::StdioClosed,
            ),
            (
                "a closed stdin, stdout or stderr beats --live",
                Facts { live_flag: true, stdio_closed: true, ..TTY },
                env(&[]),
                Transparent,
                Reason::StdioClosed,
            ),
            // The hook's record, passed as --agent-stdout.
            (
                "hook: stdout is the agent's",
                Facts { agent_stdout: AGENTS, ..PIPE },
                env(&[]),
                Agent,
                Reason::NotATerminal,
            ),
            (
                "hook: piped elsewhere",
                Facts { agent_stdout: OTHER, ..PIPE },
                env(&[]),
                Transparent,
                Reason::Redirected,
            ),
            (
                "hook: piped elsewhere in a harness",
                Facts { agent_stdout: OTHER, ..PIPE },
                env(&[("CLAUDECODE", "1")]),
                Transparent,
                Reason::Redirected,
            ),
            (
                "hook: stdout unreadable",
                Facts { agent_stdout: OTHER, stdout_id: None, ..PIPE },
                env(&[]),
                Transparent,
                Reason::Redirected,
            ),
            (
                "hook + harness, same stdout",
                Facts { agent_stdout: AGENTS, ..PIPE },
                env(&[("CODEX_THREAD_ID", "x")]),
                Agent,
                Reason::Harness,
            ),
            (
                "hook in a person's shell (shellHook always), on the tty",
                Facts { agent_stdout: Some((1, 2)), ..TTY },
                env(&[]),
                Terminal,
                Reason::Terminal,
            ),
            // An explicit flag wins over the record (issue 10, item 8).
            (
                "--agent beats a redirect",
                Facts { agent_flag: true, agent_stdout: OTHER, ..PIPE },
                env(&[]),
                Agent,
                Reason::AgentFlag,
            ),
            (
                "--live beats a redirect",
                Facts { live_flag: true, agent_stdout: OTHER, ..PIPE },
                env(&[]),
                Terminal,
                Reason::LiveFlag,
            ),
            // The environment carries no record: one inherited from a parent shell (older
            // hooks exported TJ_AGENT_STDOUT) changes nothing.
            (
                "stale TJ_AGENT_STDOUT, pipe",
                PIPE,
                env(&[("TJ_AGENT_STDOUT", "7:7")]),
                Agent,
                Reason::NotATerminal,
            ),
            (
                "stale TJ_AGENT_STDOUT, harness",
                TTY,
                env(&[("TJ_AGENT_STDOUT", "7:7"), ("CLAUDECODE", "1")]),
                Agent,
                Reason::Harness,
            ),
            (
                "stale TJ_AGENT_STDOUT, --agent",
                Facts { agent_flag: true, ..PIPE },
                env(&[("TJ_AGENT_STDOUT", "7:7")]),
                Agent,
                Reason::AgentFlag,
            ),
        ];
        for (name, facts, env, mode, reason) in rows {
            assert_eq!(decide(&facts, &env), (mode, reason), "{name}");
        }
    }

    #[test]
    fn agent_stdout_parses_dev_and_inode() {
        assert_eq!(parse_dev_ino("64769:1234"), Some((64769, 1234)));
        assert_eq!(parse_dev_ino(" 0:5\n"), Some((0, 5)));
        for bad in ["", "nonsense", "1:", ":1", "1:2:3", "-1:2", "1:x"] {
            assert_eq!(parse_dev_ino(bad), None, "{bad:?}");
        }
    }
}
