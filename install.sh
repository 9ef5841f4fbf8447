#!/bin/sh
# shellcheck shell=sh
#
# Builds tj from this checkout, installs it, and hooks it into bash and zsh.
#
#   sh install.sh [--prefix DIR] [--write-rc] [--shell bash|zsh] [--no-build]
#   sh install.sh --uninstall [--prefix DIR] [--shell bash|zsh]
#
# POSIX sh (dash, busybox ash, bash, ksh), after zoxide's installer: `main` plus small
# helpers, and the whole script in braces at the end so that nothing runs before it is read
# completely. POSIX has no `local`, so each function's variables carry its own prefix.
#
# The rc block. `--write-rc` appends "\n" + BLOCK (just BLOCK to an empty or new file), where
# BLOCK runs from the line `# >>> tj >>>` to the line `# <<< tj <<<` and ends with a newline.
# The leading "\n" either ends an unterminated last line or adds a blank line, and
# `--uninstall` removes exactly that "\n" and the block, so an rc comes back byte for byte,
# with or without a trailing newline; a file that --write-rc created is removed again. An rc that is a symlink (stow, chezmoi, home-manager) is written through: the
# link stays and its final target changes.

set -eu

MARK_BEGIN='# >>> tj >>>'
MARK_END='# <<< tj <<<'

usage() {
    cat <<'EOF'
Usage: sh install.sh [OPTIONS]

Build tj from this repository (cargo build --release --locked; on Linux, statically
linked with musl, which starts tj in a fraction of the time), install it into a directory,
check that it runs, and print the lines that load its hook in bash and zsh.

Options:
  --prefix DIR    Install into DIR (default: ~/.local/bin)
  --write-rc      Also add those lines to ~/.bashrc and ~/.zshrc, for the shells found on
                  PATH, in a block marked "# >>> tj >>>"; each file is first copied to
                  <file>.tj-backup (once). Running it again changes nothing
  --shell SHELL   bash or zsh (repeatable): the rc files to write or clean up instead of
                  those of the shells found on PATH
  --no-build      Install the existing target/release/tj instead of building it
  --uninstall     Remove DIR/tj and the marked block from the rc files, restoring each to
                  what it was before --write-rc
  -h, --help      Print this help
EOF
}

main() {
    opt_prefix=
    opt_write_rc=0
    opt_uninstall=0
    opt_build=1
    opt_shells=
    while [ $# -gt 0 ]; do
        case $1 in
        --prefix)
            [ $# -ge 2 ] || usage_error "--prefix needs a directory"
            opt_prefix=$2
            shift
            ;;
        --prefix=*) opt_prefix=${1#--prefix=} ;;
        --shell)
            [ $# -ge 2 ] || usage_error "--shell needs bash or zsh"
            add_shell "$2"
            shift
            ;;
        --shell=*) add_shell "${1#--shell=}" ;;
        --write-rc) opt_write_rc=1 ;;
        --no-build) opt_build=0 ;;
        --uninstall) opt_uninstall=1 ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) usage_error "unknown option: $1" ;;
        esac
        shift
    done
    if [ "$opt_uninstall" = 1 ]; then
        [ "$opt_write_rc" = 0 ] || usage_error "--uninstall and --write-rc do not go together"
        [ "$opt_build" = 1 ] || usage_error "--uninstall and --no-build do not go together"
    fi

    [ -n "${HOME:-}" ] || die "HOME is not set"
    prefix=${opt_prefix:-$HOME/.local/bin}
    [ -n "$prefix" ] || usage_error "--prefix needs a directory"
    case $prefix in
    /*) ;;
    *) prefix=$(pwd)/$prefix ;;
    esac
    while :; do
        case $prefix in
        ?*/) prefix=${prefix%/} ;;
        *) break ;;
        esac
    done
    dest=$prefix/tj

    if [ "$opt_uninstall" = 1 ]; then
        uninstall
    else
        install
    fi
}

install() {
    # CDPATH would make cd print the directory into $repo.
    repo=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P)
    if ! grep -Eq '^name *= *"tj"' "$repo/Cargo.toml" 2>/dev/null; then
        die "install.sh builds tj from its own checkout, and $repo is not one; clone the repository and run sh install.sh there"
    fi
    case ${CARGO_TARGET_DIR:-} in
    '') target=$repo/target ;;
    /*) target=$CARGO_TARGET_DIR ;;
    *) target=$repo/$CARGO_TARGET_DIR ;;
    esac
    src=$target/release/tj

    if [ "$opt_build" = 1 ]; then
        build
    elif [ ! -f "$src" ]; then
        die "--no-build: there is no $src; build it with cargo build --release --locked, or drop --no-build"
    fi
    [ -x "$src" ] || die "$src is not executable"

    install_binary
    version=$("$dest" --version 2>&1) || die "the installed $dest does not run: $version"
    say "$version"
    check_path

    if [ "$opt_write_rc" = 1 ]; then
        shells=$(chosen_shells)
        [ -n "$shells" ] ||
            die "--write-rc: found neither bash nor zsh on PATH; choose one with --shell bash or --shell zsh"
        for install_shell in $shells; do
            write_rc "$install_shell" "$(rc_file "$install_shell")"
        done
        for install_shell in $shells; do
            [ "$install_shell" != bash ] || bash_env_note
        done
        say "Open a new shell to load the hook."
    else
        shells=$(chosen_shells)
        [ -n "$shells" ] || shells='bash zsh'
        for install_shell in $shells; do
            print_rc_lines "$install_shell"
        done
        install_again="sh $0"
        [ -z "$opt_prefix" ] || install_again="$install_again --prefix $prefix"
        [ "$opt_build" = 1 ] || install_again="$install_again --no-build"
        say ""
        say "Or let the installer add them: $install_again --write-rc"
    fi
}

build() {
    if ! check_cmd cargo; then
        die "cargo is not on PATH: install Rust with rustup (https://rustup.rs), open a new shell and run this again; or build tj yourself and pass --no-build"
    fi
    if build_static; then
        return
    fi
    say "Building tj in $repo (cargo build --release --locked)"
    if (cd -- "$repo" && cargo build --release --locked); then
        :
    else
        die "the build failed: cargo build --release --locked exited with $?; its errors are above"
    fi
    [ -f "$src" ] || die "the build succeeded but left no $src"
}

# On Linux, builds tj statically linked and at a fixed address: no dynamic loader and no
# shared library to map at each start, which is most of what a short `tj run` costs beyond
# the command. With musl rather than glibc: glibc probes the processor's caches at every
# start, with dozens of CPUID instructions, and on a virtual machine each one traps to the
# hypervisor (about 0.8 ms of each start on the 2-core reference VM; musl probes nothing).
# musl's standard library for Rust is added with rustup when it is missing; where it cannot
# be had, or the musl build fails, glibc is linked statically instead (TJ_GLIBC=1 asks for
# that). The target is named explicitly so that the flags reach tj alone, not the build
# scripts and derive macros (which cannot be static). Sets $src and succeeds if it built; a
# failure is reported and the caller builds the usual dynamic binary instead. TJ_DYNAMIC=1
# skips it.
build_static() {
    [ -z "${TJ_DYNAMIC:-}" ] || return 1
    host=$(cd -- "$repo" && rustc -vV 2>/dev/null | sed -n 's/^host: //p')
    case $host in
    *-linux-gnu) ;;
    *) return 1 ;;
    esac
    musl=${host%-gnu}-musl
    if [ -z "${TJ_GLIBC:-}" ] && has_target "$musl"; then
        build_static_for "$musl" && return 0
        say "The musl build failed or does not run (its errors are above); linking glibc statically instead"
    fi
    build_static_for "$host" && return 0
    say "The static build failed or does not run (its errors are above); building the usual dynamic binary instead"
    return 1
}

# Succeeds if Rust's standard library for target $1 is installed, after adding it with rustup
# (once, about 40 MB) when it is not.
has_target() {
    has_target_dir=$(cd -- "$repo" && rustc --print target-libdir --target "$1" 2>/dev/null) || return 1
    ls -- "$has_target_dir"/libstd-* >/dev/null 2>&1 && return 0
    check_cmd rustup || return 1
    say "Adding Rust's standard library for $1 (rustup target add $1): tj starts faster linked with musl"
    if (cd -- "$repo" && rustup target add "$1"); then
        return 0
    fi
    say "rustup could not add $1 (offline?); linking glibc statically instead"
    return 1
}

# Builds tj for target $1 statically linked; sets $src and succeeds if the binary runs.
build_static_for() {
    say "Building tj in $repo, statically linked (cargo build --release --locked --target $1)"
    flags="-C target-feature=+crt-static -C relocation-model=static"
    if (cd -- "$repo" && RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags" cargo build --release --locked --target "$1") &&
        [ -f "$target/$1/release/tj" ] && "$target/$1/release/tj" --version >/dev/null 2>&1; then
        src=$target/$1/release/tj
        return 0
    fi
    return 1
}

# Copies file $1 to $2 in writes of 8 MiB (dd) rather than as cp copies: where the filesystem
# caches files in large folios (ext4 since Linux 6.16, XFS), the copy's page cache is then
# made of 2 MiB folios, which the kernel maps into each run of tj with one page-table entry
# per 2 MiB of code (its segments are aligned for that, see build.rs); a copy cached in small
# pieces costs a page fault per 64 KiB of code that a run touches. cp where dd fails (the
# copy is compared with the original before it replaces anything).
copy_binary() {
    dd if="$1" of="$2" bs=8388608 2>/dev/null || cp -- "$1" "$2"
}

# Copies the binary in atomically: a temporary file in the prefix, then a rename, so that a
# running tj (or a shell about to start one) never sees half a file.
install_binary() {
    if ! install_err=$(mkdir -p -- "$prefix" 2>&1); then
        die "cannot create the prefix directory $prefix: $install_err"
    fi
    [ -d "$prefix" ] || die "the prefix $prefix is not a directory"
    [ -w "$prefix" ] || die "the prefix $prefix is not writable; choose another with --prefix DIR"
    [ ! -d "$dest" ] || die "$dest is a directory"

    if [ -f "$dest" ] && cmp -s -- "$src" "$dest"; then
        chmod 755 -- "$dest" || die "cannot make $dest executable"
        say "tj is up to date in $prefix"
        return
    fi
    tmp=$(mktemp "$prefix/.tj.XXXXXX" 2>/dev/null) ||
        die "the prefix $prefix is not writable; choose another with --prefix DIR"
    copy_binary "$src" "$tmp" || die "cannot copy $src to $prefix"
    cmp -s -- "$src" "$tmp" || die "the copy of $src in $prefix differs from it (a full disk?)"
    chmod 755 -- "$tmp" || die "cannot make $tmp executable"
    mv -f -- "$tmp" "$dest" || die "cannot move the new binary into place at $dest"
    tmp=
    say "Installed tj to $dest"
}

check_path() {
    if on_path "$prefix"; then
        path_found=$(command -v tj 2>/dev/null || true)
        if [ -n "$path_found" ] && [ "$path_found" != "$dest" ]; then
            warn "$path_found comes before $dest on PATH, so \`tj\` runs that one"
        fi
    else
        warn "$prefix is not on your PATH, so shells will not find tj; add it, e.g. in ~/.profile:"
        warn "  export PATH=\"$prefix:\$PATH\""
    fi
}

uninstall() {
    if [ -e "$dest" ] || [ -L "$dest" ]; then
        [ ! -d "$dest" ] || die "$dest is a directory, not tj"
        rm -f -- "$dest" || die "cannot remove $dest"
        say "Removed $dest"
    else
        say "There is no tj in $prefix (pass --prefix DIR if you installed it elsewhere)"
    fi
    # What gets cleaned: the files --write-rc writes, and ~/.zshenv, which the printed
    # instructions offer.
    for uninstall_shell in ${opt_shells:-bash zsh}; do
        case $uninstall_shell in
        bash) unwrite_rc "$HOME/.bashrc" ;;
        zsh)
            unwrite_rc "${ZDOTDIR:-$HOME}/.zshrc"
            unwrite_rc "${ZDOTDIR:-$HOME}/.zshenv"
            ;;
        esac
    done
}

# The block for shell $1, without its final newline. `command -v` keeps a shell quiet and
# working when tj is gone (removed by hand, or not on this shell's PATH).
block() {
    printf '%s\n' "$MARK_BEGIN"
    printf '%s\n' "# tj: route AI agents' build and test commands through \`tj run\`."
    printf '%s\n' "# Added by tj's install.sh --write-rc; install.sh --uninstall removes it."
    printf '%s\n' "if command -v tj >/dev/null 2>&1; then eval \"\$(tj init $1)\"; fi"
    printf '%s' "$MARK_END"
}

print_rc_lines() {
    say ""
    case $1 in
    bash)
        say "To load tj's hook in bash, add these lines to ~/.bashrc:"
        say ""
        block bash
        say ""
        bash_env_note
        ;;
    zsh)
        say "To load tj's hook in zsh, add these lines to ~/.zshrc, or to ~/.zshenv to reach"
        say "non-interactive zsh too:"
        say ""
        block zsh
        say ""
        ;;
    esac
}

bash_env_note() {
    say ""
    say "Non-interactive bash (bash -c ..., as many agents run commands) reads no rc file,"
    say "only the file named by \$BASH_ENV: if you set BASH_ENV, put the same lines there too."
    say "(Many ~/.bashrc files return early when not interactive, before lines at their end.)"
}

# Appends the block to rc file $2 for shell $1, or replaces an outdated block in place.
write_rc() {
    write_shell=$1
    write_rc=$2
    write_real=$(resolve "$write_rc")
    write_block=$(block "$write_shell")
    write_backup=$write_rc.tj-backup

    if [ -e "$write_real" ] && [ ! -f "$write_real" ]; then
        die "$write_rc is not a regular file; add the lines above to it by hand"
    fi
    if [ -f "$write_real" ] && grep -qxF -- "$MARK_BEGIN" "$write_real"; then
        write_old=$(LC_ALL=C awk -v b="$MARK_BEGIN" -v e="$MARK_END" '
            $0 == b { on = 1 }
            on { print }
            on && $0 == e { exit }' "$write_real")
        if [ "$write_old" = "$write_block" ]; then
            say "$write_rc already loads tj"
            return
        fi
        rewrite_rc "$write_rc" "$write_real" "$write_block"
        say "Updated the tj block in $write_rc"
        return
    fi

    if [ -f "$write_real" ] && [ ! -e "$write_backup" ]; then
        cp -p -- "$write_real" "$write_backup" || die "cannot back up $write_rc to $write_backup"
        write_saved=" (backup: $write_backup)"
    else
        write_saved=
    fi
    # The newline before the block ends an unterminated last line or leaves a blank line;
    # an empty or new file gets none. rewrite_rc undoes exactly this.
    write_sep=0
    [ ! -s "$write_real" ] || write_sep=1
    if ! {
        [ "$write_sep" = 0 ] || printf '\n'
        printf '%s\n' "$write_block"
    } >>"$write_real"; then
        die "cannot write $write_rc; add the lines to it by hand"
    fi
    say "Added the tj block to $write_rc$write_saved"
}

# Removes the block from rc file $1, if it has one.
unwrite_rc() {
    unwrite_rc=$1
    unwrite_real=$(resolve "$unwrite_rc")
    unwrite_backup=$unwrite_rc.tj-backup
    [ -f "$unwrite_real" ] || return 0
    grep -qxF -- "$MARK_BEGIN" "$unwrite_real" || return 0

    # A block pasted twice by hand goes too; the bound only guards against a loop.
    unwrite_n=0
    while grep -qxF -- "$MARK_BEGIN" "$unwrite_real" && [ "$unwrite_n" -lt 16 ]; do
        rewrite_rc "$unwrite_rc" "$unwrite_real" ''
        unwrite_n=$((unwrite_n + 1))
    done

    if [ ! -s "$unwrite_real" ] && [ ! -e "$unwrite_backup" ]; then
        # --write-rc created this file: with the block gone, so is the file.
        rm -f -- "$unwrite_real" || die "cannot remove $unwrite_rc"
        say "Removed $unwrite_rc (--write-rc had created it)"
    elif [ -f "$unwrite_backup" ] && cmp -s -- "$unwrite_backup" "$unwrite_real"; then
        rm -f -- "$unwrite_backup"
        say "Removed the tj block from $unwrite_rc (it matches its backup again; backup removed)"
    elif [ -e "$unwrite_backup" ]; then
        say "Removed the tj block from $unwrite_rc; kept $unwrite_backup, which differs (the file changed since --write-rc)"
    else
        say "Removed the tj block from $unwrite_rc"
    fi
}

# Rewrites $2 (the resolved rc $1) with its first block replaced by $3, or removed with the
# newline before it when $3 is empty. The temporary file is a copy of the rc first, so the
# rename keeps its mode.
rewrite_rc() {
    rewrite_name=$1
    rewrite_real=$2
    rewrite_dir=$(dirname -- "$rewrite_real")
    # wc -l counts newlines: 1 if and only if the last byte is one.
    rewrite_endnl=$(($(tail -c 1 -- "$rewrite_real" | wc -l)))

    tmp=$(mktemp "$rewrite_dir/.tj-rc.XXXXXX" 2>/dev/null) ||
        die "cannot write in $rewrite_dir to update $rewrite_name; edit it by hand"
    cp -p -- "$rewrite_real" "$tmp" || die "cannot copy $rewrite_name"
    if TJ_BLOCK=$3 LC_ALL=C awk -v b="$MARK_BEGIN" -v e="$MARK_END" -v endnl="$rewrite_endnl" '
        { line[NR] = $0 }
        END {
            s = 0; t = 0
            for (i = 1; i <= NR; i++) if (line[i] == b) { s = i; break }
            for (i = s + 1; i <= NR; i++) if (line[i] == e) { t = i; break }
            if (!s || !t) exit 3
            repl = ENVIRON["TJ_BLOCK"]
            # Lines before the block. Removing the block at the very end also removes the
            # newline before it, which --write-rc added.
            for (i = 1; i < s; i++) {
                printf "%s", line[i]
                if (i < s - 1 || repl != "" || t < NR) printf "\n"
            }
            if (repl != "") printf "%s\n", repl
            for (i = t + 1; i <= NR; i++) {
                printf "%s", line[i]
                if (i < NR || endnl) printf "\n"
            }
        }' "$rewrite_real" >"$tmp"; then
        :
    elif [ $? = 3 ]; then
        die "$rewrite_name has a \"$MARK_BEGIN\" line and no \"$MARK_END\" line after it; fix it by hand"
    else
        die "cannot rewrite $rewrite_name"
    fi
    mv -f -- "$tmp" "$rewrite_real" || die "cannot replace $rewrite_name"
    tmp=
}

# The final target of symlink $1 (or $1 itself), so that rc files managed as links into a
# dotfiles directory are edited there and stay links.
resolve() {
    resolve_path=$1
    resolve_n=0
    while [ -L "$resolve_path" ]; do
        resolve_n=$((resolve_n + 1))
        [ "$resolve_n" -le 40 ] || die "too many levels of symbolic links at $1"
        resolve_link=$(readlink -- "$resolve_path") || die "cannot read the symbolic link $resolve_path"
        case $resolve_link in
        /*) resolve_path=$resolve_link ;;
        *) resolve_path=$(dirname -- "$resolve_path")/$resolve_link ;;
        esac
    done
    printf '%s\n' "$resolve_path"
}

rc_file() {
    case $1 in
    bash) printf '%s\n' "$HOME/.bashrc" ;;
    zsh) printf '%s\n' "${ZDOTDIR:-$HOME}/.zshrc" ;;
    esac
}

add_shell() {
    case $1 in
    bash | zsh) ;;
    *) usage_error "--shell takes bash or zsh, not '$1'" ;;
    esac
    case " $opt_shells " in
    *" $1 "*) ;;
    *) opt_shells="${opt_shells:+$opt_shells }$1" ;;
    esac
}

# The shells named with --shell, or else those on PATH.
chosen_shells() {
    if [ -n "$opt_shells" ]; then
        printf '%s\n' "$opt_shells"
        return
    fi
    chosen=
    for chosen_shell in bash zsh; do
        if check_cmd "$chosen_shell"; then
            chosen="${chosen:+$chosen }$chosen_shell"
        fi
    done
    printf '%s\n' "$chosen"
}

on_path() {
    case ":$PATH:" in
    *":$1:"* | *":$1/:"*) return 0 ;;
    esac
    return 1
}

check_cmd() {
    command -v "$1" >/dev/null 2>&1
}

say() {
    printf '%s\n' "$*"
}

warn() {
    printf 'install.sh: warning: %s\n' "$*" >&2
}

die() {
    printf 'install.sh: error: %s\n' "$*" >&2
    exit 1
}

usage_error() {
    printf 'install.sh: error: %s\n\n' "$*" >&2
    usage >&2
    exit 2
}

# The temporary file being written, if any, goes on every exit. A shell runs the exit trap
# only when it exits, not when a signal kills it: each signal that would is turned into an
# exit with the status it would have given.
tmp=
trap 'if [ -n "$tmp" ]; then rm -f -- "$tmp"; fi' 0
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 131' QUIT
trap 'exit 141' PIPE
trap 'exit 143' TERM

{
    main "$@"
    exit 0
}
