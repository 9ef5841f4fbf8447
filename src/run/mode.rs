//! Which of the three modes `tj run` runs in (DESIGN.md "Modes"). A pure function of the
//! flags, the environment snapshot and the identity of stdout, so every case is a table row.

use crate::env::Env;

/// How `tj run` treats the command's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// stdout is a person's terminal: live passthrough, byte-exact; the rendition goes to the
    /// side channel if one is configured, and to the store either way.
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
    /// The shell hook recorded the agent's stdout, and ours is something else.
    Redirected,
    /// `--agent`.
    AgentFlag,
    /// `--live`.
    LiveFlag,
    /// An agent harness's variable is set.
    Harness,
    /// stdout is not a terminal.
    NotATerminal,
    /// stdout is a terminal and nothing says an agent is reading.
    Terminal,
}

/// What the decision looks at.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts {
    /// `--agent`.
    pub agent_flag: bool,
    /// `--live`.
    pub live_flag: bool,
    /// stdout is a terminal.
    pub stdout_is_tty: bool,
    /// stdout's (device, inode), if it could be read.
    pub stdout_id: Option<(u64, u64)>,
}

/// Decides the mode.
pub fn decide(facts: &Facts, env: &Env) -> (Mode, Reason) {
    if env.disable {
        return (Mode::Transparent, Reason::Disabled);
    }
    if env.inner {
        return (Mode::Transparent, Reason::Nested);
    }
    // The hook recorded where the agent reads. Output going anywhere else (`| grep`,
    // `> file`) must behave exactly as without tj.
    if let Some(recorded) = env.agent_stdout
        && facts.stdout_id != Some(recorded)
    {
        return (Mode::Transparent, Reason::Redirected);
    }
    if facts.agent_flag {
        return (Mode::Agent, Reason::AgentFlag);
    }
    if facts.live_flag {
        return (Mode::Terminal, Reason::LiveFlag);
    }
    if env.harness.is_some() {
        return (Mode::Agent, Reason::Harness);
    }
    if !facts.stdout_is_tty {
        return (Mode::Agent, Reason::NotATerminal);
    }
    (Mode::Terminal, Reason::Terminal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(f: impl FnOnce(&mut Env)) -> Env {
        let mut e = Env::default();
        f(&mut e);
        e
    }

    const TTY: Facts =
        Facts { agent_flag: false, live_flag: false, stdout_is_tty: true, stdout_id: Some((1, 2)) };
    const PIPE: Facts = Facts {
        agent_flag: false,
        live_flag: false,
        stdout_is_tty: false,
        stdout_id: Some((9, 9)),
    };

    #[test]
    fn mode_table() {
        let rows: Vec<(&str, Facts, Env, Mode, Reason)> = vec![
            ("terminal", TTY, Env::default(), Mode::Terminal, Reason::Terminal),
            ("pipe, no hook", PIPE, Env::default(), Mode::Agent, Reason::NotATerminal),
            (
                "harness on a tty",
                TTY,
                env(|e| e.harness = Some("CLAUDECODE")),
                Mode::Agent,
                Reason::Harness,
            ),
            (
                "--agent on a tty",
                Facts { agent_flag: true, ..TTY },
                Env::default(),
                Mode::Agent,
                Reason::AgentFlag,
            ),
            (
                "--live in a harness",
                Facts { live_flag: true, ..TTY },
                env(|e| e.harness = Some("TJ_AGENT")),
                Mode::Terminal,
                Reason::LiveFlag,
            ),
            ("disabled", TTY, env(|e| e.disable = true), Mode::Transparent, Reason::Disabled),
            (
                "disabled beats --agent",
                Facts { agent_flag: true, ..TTY },
                env(|e| e.disable = true),
                Mode::Transparent,
                Reason::Disabled,
            ),
            ("nested", PIPE, env(|e| e.inner = true), Mode::Transparent, Reason::Nested),
            (
                "hook: stdout is the agent's",
                PIPE,
                env(|e| e.agent_stdout = Some((9, 9))),
                Mode::Agent,
                Reason::NotATerminal,
            ),
            (
                "hook: piped elsewhere",
                PIPE,
                env(|e| e.agent_stdout = Some((7, 7))),
                Mode::Transparent,
                Reason::Redirected,
            ),
            (
                "hook: stdout unreadable",
                Facts { stdout_id: None, ..PIPE },
                env(|e| e.agent_stdout = Some((7, 7))),
                Mode::Transparent,
                Reason::Redirected,
            ),
            (
                "hook + harness, same stdout",
                PIPE,
                env(|e| {
                    e.agent_stdout = Some((9, 9));
                    e.harness = Some("CODEX_THREAD_ID");
                }),
                Mode::Agent,
                Reason::Harness,
            ),
        ];
        for (name, facts, env, mode, reason) in rows {
            assert_eq!(decide(&facts, &env), (mode, reason), "{name}");
        }
    }
}
