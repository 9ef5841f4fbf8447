#
# tj shell integration for zsh (DESIGN.md "Shell integration"). `tj init zsh` prints a
# `name=value` prelude and then this file:
#
#   __tj_status      the status `$?` had before the hook (restored at the end)
#   __tj_bin         the absolute path of the tj that printed the prelude ('' if unknown)
#   __tj_commands    the commands to wrap, separated by spaces
#   __tj_agent_vars  the variables that mark an agent's shell (crate::env::AGENT_VARS)
#   __tj_when        `shellHook` from tj's configuration: auto, always or never
#
# Whether to wrap anything is decided once, when the hook is sourced. With `auto` (the
# default) it wraps only in an agent's shell: TJ_AGENT set to anything but 0, or a harness
# variable such as CLAUDECODE. Harnesses that snapshot the functions of a shell they started
# (with their variables set) and copy them into the shells they run commands in carry the
# wrappers along. A person's shell gets nothing: `type cargo` and `command -v cargo` say
# what they said before. `always` wraps in every shell, `never` in none.
#
# Each wrapper is a function (works in `zsh -c` too, unlike an alias) that runs
# `tj run --agent-stdout DEV:INO -- NAME ARGS…`, or `command NAME ARGS…` when one of
# TJ_DISABLE, TJ_RAW, TJ_INNER is set, tj cannot be found, or the helper __tj_run is gone
# (a harness copied the wrapper alone). DEV:INO names the stdout the agent reads, and
# `tj run` steps aside when its own is anything else (`| grep`, `> file`, `$(…)`; see
# crate::run::mode):
#   - in the shell that sourced the hook, and its subshells: the stdout it had then;
#   - in a shell the wrappers were copied into: the wrapper compares its stdout with the
#     shell's through /proc, and runs the command directly when they differ (a pipe, a
#     command substitution, a redirected subshell). A redirect of the wrapped command
#     itself (`cargo test > log`) is applied in the shell's own process and cannot be seen
#     this way; without /proc nothing is compared and a pipe is taken for the agent's.
# The record is a shell variable, never exported, tagged with the shell's PID: a child
# process does not inherit it, and a copy carried into another shell does not apply there.
#
# When it wraps, it also exports TJ_SESSION, an id for this shell grouping its artifacts,
# unless a parent shell already did. In every shell it exports TJ_HOOK (`zsh:PID`) and
# TJ_HOOK_COMMANDS (what it wrapped here, maybe nothing) for `tj doctor shell`.
#
# Nothing runs at the prompt (no precmd or preexec hook), nothing is printed, and sourcing
# the hook again replaces the wrappers it defined before.
#
# Limits: a function only sees the command's name. `python -m pytest`, `./gradlew`,
# `/usr/bin/make` or `env cargo` do not call one; write `tj run -- python -m pytest` for
# those. An alias of the same name wins over the function. `command cargo …` bypasses the
# hook for one call, `TJ_DISABLE=1` for the whole shell.

# Runs `$2 $3…` through `tj run` (the binary `$1`, else tj on PATH), or exactly as
# `command $2 $3…` would when tj is off here or the output is not going to the agent.
# Either way the status is the command's.
function __tj_run {
    # Predictable options, restored on return. Locals are `__tj_` names only: one named like
    # an exported variable would hide it from the command's environment.
    \builtin emulate -L zsh
    \builtin local __tj_tj=$1 __tj_id='' __tj_on=1
    \builtin shift
    case ${TJ_DISABLE-} in '' | 0) ;; *) __tj_on='' ;; esac
    case ${TJ_RAW-} in '' | 0) ;; *) __tj_on='' ;; esac
    [[ -z ${TJ_INNER-} ]] || __tj_on=''
    if [[ -z $__tj_on ]]; then
        :
    elif [[ ${__tj_stdout-} == "$$:"* ]]; then
        __tj_id=${__tj_stdout#*:}
    elif [[ -e /proc/$$/fd/1 && ! /proc/$$/fd/1 -ef /dev/stdout ]]; then
        __tj_on=''
    fi
    if [[ -n $__tj_on ]] && ! [[ -n $__tj_tj && -f $__tj_tj && -x $__tj_tj ]]; then
        if \builtin whence -p tj >/dev/null 2>&1; then __tj_tj=tj; else __tj_on=''; fi
    fi
    if [[ -z $__tj_on ]]; then
        \command "$@"
    elif [[ -n $__tj_id ]]; then
        \command "$__tj_tj" run --agent-stdout "$__tj_id" -- "$@"
    else
        \command "$__tj_tj" run -- "$@"
    fi
    # Explicitly: under `emulate -L`, a status that comes out of an `if` body does not
    # trigger the caller's ERR_EXIT, and `set -e` must stop at a failing command.
    \builtin return
}

function __tj_setup {
    \builtin emulate -L zsh
    \builtin local IFS=$' \t\n' __tj_name __tj_q __tj_id __tj_list='' __tj_wrap=''

    case ${__tj_when-} in
    always) __tj_wrap=1 ;;
    never) ;;
    *)
        # TJ_AGENT=0 does not count, as in crate::env::Env; an empty variable never does.
        for __tj_name in ${=__tj_agent_vars-}; do
            case $__tj_name in
            '' | [!A-Za-z_]* | *[!A-Za-z0-9_]*) ;;
            TJ_AGENT) case ${TJ_AGENT-} in '' | 0) ;; *) __tj_wrap=1 ;; esac ;;
            *) [[ -z ${(P)__tj_name-} ]] || __tj_wrap=1 ;;
            esac
        done
        ;;
    esac

    # Sourcing twice: the wrappers this same shell defined before make way for the new list.
    if [[ ${TJ_HOOK-} == "zsh:$$" ]]; then
        for __tj_name in ${=TJ_HOOK_COMMANDS-}; do
            \builtin unset -f -- "$__tj_name" 2>/dev/null || :
        done
    fi
    \builtin unset -v __tj_stdout

    if [[ -n $__tj_wrap ]]; then
        __tj_q=${(qq)${__tj_bin-}}
        for __tj_name in ${=__tj_commands-}; do
            case $__tj_name in
            '' | [!A-Za-z0-9_]* | *[!A-Za-z0-9_.-]*) continue ;;
            esac
            # A harness that copies functions but not their helpers (some Claude Code
            # versions dropped `_`-prefixed ones) must still get the command run.
            \builtin eval "function $__tj_name {
                if (( \${+functions[__tj_run]} )); then __tj_run $__tj_q $__tj_name \"\$@\"; else \\command $__tj_name \"\$@\"; fi
            }"
            __tj_list+=" $__tj_name"
        done

        # stat runs in a command substitution, whose stdout is a pipe: it stats fd 9, a copy
        # of the shell's stdout. GNU stat, else BSD stat; `%d` is st_dev in decimal, as
        # Rust's MetadataExt::dev() returns it. A closed stdout records nothing (the outer
        # group silences zsh's complaint about the failed `9>&1`).
        __tj_id=''
        {
            {
                __tj_id=$(\command stat -L -c '%d:%i' /dev/fd/9 ||
                    \command stat -L -f '%d:%i' /dev/fd/9) || __tj_id=''
            } 9>&1
        } 2>/dev/null || :
        if [[ $__tj_id == <->:<-> ]]; then
            typeset -g __tj_stdout="$$:$__tj_id"
        fi
        if [[ -z ${TJ_SESSION-} ]]; then
            \builtin export TJ_SESSION="$$-${EPOCHSECONDS:-$RANDOM}"
        fi
    else
        \builtin unset -f __tj_run 2>/dev/null || :
    fi
    \builtin export TJ_HOOK="zsh:$$" TJ_HOOK_COMMANDS="${__tj_list# }"
}

# Leaves `$?` as it was before the hook (starship, direnv), except under `set -e`, where a
# non-zero status here would end the shell that sourced us.
function __tj_finish {
    \builtin local s=${__tj_status:-0}
    \builtin unset -v __tj_status __tj_bin __tj_commands __tj_agent_vars __tj_when
    \builtin unset -f __tj_setup __tj_finish
    [[ ! -o errexit ]] || s=0
    \builtin return $s
}

__tj_setup
__tj_finish && :

# To run an agent's build and test commands through tj, add this line to ~/.zshrc, or to
# ~/.zshenv to reach non-interactive `zsh -c` shells as well:
#
# eval "$(tj init zsh)"
