# shellcheck shell=bash
#
# tj shell integration for bash (DESIGN.md "Shell integration"). `tj init bash` prints a
# `name=value` prelude and then this file:
#
#   __tj_status      the status `$?` had before the hook (restored at the end)
#   __tj_bin         the absolute path of the tj that printed the prelude ('' if unknown)
#   __tj_commands    the commands to wrap, separated by spaces
#   __tj_agent_vars  the variables that mark an agent's shell (crate::env::AGENT_VARS)
#
# For each command it defines a function (aliases do not expand in non-interactive bash)
# that decides when it is called, not when it was defined: `tj run -- NAME ARGS…` when
# this shell belongs to an agent (TJ_AGENT set to anything but 0, or a harness variable
# such as CLAUDECODE) and none of TJ_DISABLE, TJ_RAW, TJ_INNER is set and tj exists;
# `command NAME ARGS…` otherwise. Harnesses snapshot functions, not variables, into the
# shells they run commands in, so everything a wrapper needs is baked into the function
# bodies and the prelude's variables are removed again.
#
# In an agent's shell it also exports, unless a parent shell already did:
#   TJ_AGENT_STDOUT  `DEV:INO` of this shell's stdout, the object `tj run` stats through
#                    /dev/stdout: output sent anywhere else (`| grep`, `> file`) makes
#                    `tj run` step aside. A parent's record wins, because a nested shell
#                    whose output is redirected is not writing to the agent.
#   TJ_SESSION       an id for this shell, grouping its artifacts.
# In every shell it exports TJ_HOOK (`bash:PID`) and TJ_HOOK_COMMANDS for `tj doctor shell`.
#
# Nothing runs at the prompt (no PROMPT_COMMAND, no DEBUG trap), nothing is printed, and
# sourcing the hook again replaces the wrappers it defined before.
#
# Limits: a function only sees the command's name. `python -m pytest`, `./gradlew`,
# `/usr/bin/make` or `env cargo` do not call one; write `tj run -- python -m pytest` for
# those. An alias of the same name wins over the function. `command cargo …` bypasses the
# hook for one call, `TJ_DISABLE=1` for the whole shell.

# Returns 0 if and only if this shell is an agent's and nothing turned tj off here.
__tj_is_active() {
    case ${TJ_DISABLE-} in '' | 0) ;; *) \builtin return 1 ;; esac
    case ${TJ_RAW-} in '' | 0) ;; *) \builtin return 1 ;; esac
    [[ -z ${TJ_INNER-} ]] && __tj_is_agent
}

# Runs `$2 $3…` through `tj run` (the binary `$1`, else tj on PATH) when this shell is an
# agent's, else exactly as `command $2 $3…` would. Either way the status is the command's.
__tj_run() {
    # No locals: one named like an exported variable would change it in the command's
    # environment.
    if __tj_is_active; then
        if [[ -n $1 && -f $1 && -x $1 ]]; then
            "$1" run -- "${@:2}"
            \builtin return
        elif \builtin type -P tj >/dev/null 2>&1; then
            \command tj run -- "${@:2}"
            \builtin return
        fi
    fi
    \builtin shift
    \command "$@"
}

__tj_setup() {
    \builtin local IFS=$' \t\n' __tj_name __tj_body='' __tj_q __tj_id __tj_list=''

    # The agent check, generated from the variable list tj printed. TJ_AGENT=0 does not
    # count, as in crate::env::Env; an empty variable never does.
    # shellcheck disable=SC2086 # names separated by spaces, checked below
    for __tj_name in ${__tj_agent_vars-}; do
        case $__tj_name in
        '' | [!A-Za-z_]* | *[!A-Za-z0-9_]*) continue ;;
        TJ_AGENT) __tj_body+=$'\n    case ${TJ_AGENT-} in "" | 0) ;; *) \\builtin return 0 ;; esac' ;;
        *) __tj_body+=$'\n    [[ -z ${'"$__tj_name"$'-} ]] || \\builtin return 0' ;;
        esac
    done
    \builtin eval "__tj_is_agent() {$__tj_body"$'\n    \\builtin return 1\n}'

    # Sourcing twice: the wrappers this same shell defined before make way for the new list.
    if [[ ${TJ_HOOK-} == "bash:$$" ]]; then
        # shellcheck disable=SC2086 # names separated by spaces
        for __tj_name in ${TJ_HOOK_COMMANDS-}; do
            \builtin unset -f -- "$__tj_name"
        done
    fi

    \builtin printf -v __tj_q '%q' "${__tj_bin-}"
    # shellcheck disable=SC2086 # names separated by spaces, checked below
    for __tj_name in ${__tj_commands-}; do
        case $__tj_name in
        '' | [!A-Za-z0-9_]* | *[!A-Za-z0-9_.-]*) continue ;;
        esac
        # POSIX mode accepts only identifiers as function names.
        if \builtin shopt -oq posix && [[ $__tj_name == *[.-]* || $__tj_name == [0-9]* ]]; then
            continue
        fi
        \builtin eval "function $__tj_name { __tj_run $__tj_q $__tj_name \"\$@\"; }"
        __tj_list+=" $__tj_name"
    done
    \builtin export TJ_HOOK="bash:$$" TJ_HOOK_COMMANDS="${__tj_list# }"

    if __tj_is_agent && [[ -z ${TJ_INNER-} ]]; then
        if [[ -z ${TJ_AGENT_STDOUT-} ]]; then
            # stat runs in a command substitution, whose stdout is a pipe: it stats fd 9, a
            # copy of the shell's stdout. GNU stat, else BSD stat; `%d` is st_dev in decimal,
            # as Rust's MetadataExt::dev() returns it. A closed stdout records nothing.
            __tj_id=''
            {
                {
                    __tj_id=$(\command stat -L -c '%d:%i' /dev/fd/9 ||
                        \command stat -L -f '%d:%i' /dev/fd/9) || __tj_id=''
                } 9>&1
            } 2>/dev/null || :
            if [[ $__tj_id =~ ^[0-9]+:[0-9]+$ ]]; then
                \builtin export TJ_AGENT_STDOUT="$__tj_id"
            fi
        fi
        if [[ -z ${TJ_SESSION-} ]]; then
            \builtin export TJ_SESSION="$$-${EPOCHSECONDS:-$RANDOM}"
        fi
    fi
}

# Leaves `$?` as it was before the hook (starship, direnv), except under `set -e`, where a
# non-zero status here would end the shell that sourced us.
__tj_finish() {
    \builtin local s=${__tj_status:-0}
    \builtin unset -v __tj_status __tj_bin __tj_commands __tj_agent_vars
    \builtin unset -f __tj_setup __tj_finish
    [[ $- != *e* ]] || s=0
    \builtin return "$s"
}

__tj_setup
__tj_finish && :

# To run an agent's build and test commands through tj, add this line to ~/.bashrc, and to
# the file named by BASH_ENV for non-interactive `bash -c` shells:
#
# eval "$(tj init bash)"
