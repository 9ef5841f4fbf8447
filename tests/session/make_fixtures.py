#!/usr/bin/env python3
"""Writes the session fixtures of tests/it/session.rs (run from this directory).

Each tool call's id says what `tj compact` must do with its result: `_drop_` dropped,
`_keep_` kept, `_stored_` dropped only when the store holds the original it names.
Keys are written in the harnesses' own order (not sorted), so that a compaction that
re-serialized a whole line would show.
"""
import json

CWD = "/w/proj"
SID = "5f0c6a51-1111-4222-8333-944455556666"


def big(tag, n=40):
    return "\n".join(f"{tag} line {i}: " + "lorem ipsum dolor sit amet " * 3 for i in range(n))


def dump(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Claude:
    def __init__(self):
        self.lines, self.n, self.parent = [], 0, None

    def entry(self, kind, message, extra=None):
        self.n += 1
        uid = f"00000000-0000-4000-8000-{self.n:012d}"
        e = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": CWD,
             "sessionId": SID, "version": "1.0.80", "gitBranch": "main", "type": kind,
             "message": message, "uuid": uid, "timestamp": f"2025-08-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z"}
        e.update(extra or {})
        self.parent = uid
        self.lines.append(dump(e))

    def prompt(self, text):
        self.entry("user", {"role": "user", "content": text})

    def say(self, text):
        self.entry("assistant", {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                                 "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                 "usage": {"input_tokens": 10, "output_tokens": 5}}, {"requestId": f"req_{self.n}"})

    def tool(self, tid, name, inp, out, is_error=False, blocks=False):
        self.entry("assistant", {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                                 "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
                                 "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}},
                   {"requestId": f"req_{self.n}"})
        content = [{"type": "text", "text": out}] if blocks else out
        block = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        self.entry("user", {"role": "user", "content": [block]},
                   {"toolUseResult": {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}})

    def parallel(self, calls):
        """One assistant message with several tool_use blocks, answered by one user entry that
        holds every result (and so no toolUseResult: it could not say whose copy it is)."""
        self.entry("assistant", {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                                 "content": [{"type": "tool_use", "id": t, "name": n, "input": i} for t, n, i, _ in calls],
                                 "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}},
                   {"requestId": f"req_{self.n}"})
        self.entry("user", {"role": "user", "content": [{"tool_use_id": t, "type": "tool_result", "content": o}
                                                        for t, _, _, o in calls]})

    def image(self, tid, path):
        """A Read of an image: its result is an image block, never text alone."""
        self.entry("assistant", {"id": f"msg_{self.n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                                 "content": [{"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": path}}],
                                 "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}},
                   {"requestId": f"req_{self.n}"})
        block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 200}}
        self.entry("user", {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": [block]}]},
                   {"toolUseResult": {"type": "image", "file": {"base64": "iVBORw0KGgo" * 200, "type": "image/png"}}})

    def raw(self, line):
        self.lines.append(line)

    def write(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")


def claude_basic():
    c = Claude()
    c.raw(dump({"type": "summary", "summary": "Fix the parser", "leafUuid": "00000000-0000-4000-8000-000000000099"}))
    c.prompt("Fix the failing parser test in src/parse.rs")
    c.tool("toolu_drop_read_old", "Read", {"file_path": f"{CWD}/src/parse.rs"}, big("parse.rs v1"))
    c.tool("toolu_drop_build_old", "Bash", {"command": "cargo build", "description": "Build"}, big("warning: unused"))
    c.tool("toolu_drop_grep", "Grep", {"pattern": "fn parse", "path": "src"},
           "\n".join(f"src/zzq_old_{i}.rs:{i}:fn parse_{i}() {{ lorem ipsum dolor sit amet }}" for i in range(60)))
    c.tool("toolu_keep_glob_ref", "Glob", {"pattern": "**/*.rs"},
           "\n".join([f"{CWD}/src/lexer_mod.rs"] + [f"{CWD}/src/gen/module_{i}.rs" for i in range(60)]))
    c.say("The lexer lives in lexer_mod.rs; the parser calls it.")
    c.tool("toolu_keep_edit", "Edit", {"file_path": f"{CWD}/src/parse.rs", "old_string": "a", "new_string": "b"},
           "The file /w/proj/src/parse.rs has been updated.")
    c.tool("toolu_keep_read_new", "Read", {"file_path": f"{CWD}/src/parse.rs"}, big("parse.rs v2"))
    c.tool("toolu_keep_build_new", "Bash", {"command": "cargo build", "description": "Build"}, big("warning: unused"))
    c.tool("toolu_keep_task", "Task", {"description": "Survey", "prompt": "Look around", "subagent_type": "general"},
           big("agent report"), blocks=True)
    c.tool("toolu_drop_cat_readme", "Bash", {"command": "cat README.md"}, big("readme"))
    c.tool("toolu_keep_read_readme", "Read", {"file_path": f"{CWD}/README.md"}, big("readme"))
    c.tool("toolu_stored_rendition", "Bash", {"command": "tj run ./scripts/e2e.sh"},
           big("e2e") + "\n[tj: 400 passing lines dropped; tj expand 0123456789ab]")
    c.tool("toolu_keep_failed_early", "Bash", {"command": "cargo build --release"}, big("error[E0308]"), is_error=True)
    c.prompt("Now run the tests")
    c.tool("toolu_keep_fail_late", "Bash", {"command": "cargo test"}, big("test result: FAILED"), is_error=True)
    c.say("One test fails; fixing it.")
    c.tool("toolu_keep_tail_read1", "Read", {"file_path": f"{CWD}/src/lib.rs"}, big("lib.rs"))
    c.tool("toolu_keep_tail_read2", "Read", {"file_path": f"{CWD}/src/lib.rs"}, big("lib.rs"))
    c.tool("toolu_keep_test_pass", "Bash", {"command": "cargo test"}, "test result: ok. 12 passed")
    c.say("All tests pass.")
    c.raw(dump({"type": "system", "subtype": "informational", "content": "hook ran", "uuid": "00000000-0000-4000-8000-000000000500",
                "sessionId": SID, "timestamp": "2025-08-01T11:00:00.000Z"}))
    c.prompt("Thanks")
    c.say("You're welcome.")
    c.write("claude-basic.jsonl")


def claude_errors():
    c = Claude()
    c.prompt("hi")
    c.tool("toolu_keep_a", "Read", {"file_path": "/x"}, "x")
    c.raw('{"type":"user", "message": {')
    c.write("claude-malformed.jsonl")
    c = Claude()
    c.prompt("hi")
    c.tool("toolu_dup", "Read", {"file_path": "/x"}, "x")
    c.tool("toolu_dup", "Read", {"file_path": "/y"}, "y")
    c.write("claude-duplicate-id.jsonl")


def claude_shapes():
    """Parallel calls answered in one entry, images, partial reads, a Write after a Read, a
    failed read, an MCP tool: each kept or dropped as its id says."""
    c = Claude()
    c.prompt("Tidy the lexer and its tests")
    c.parallel([("toolu_drop_par_read", "Read", {"file_path": f"{CWD}/src/lexer.rs"}, big("lexer.rs v1")),
                ("toolu_drop_par_test", "Bash", {"command": "cargo test lexer"}, big("test result: ok"))])
    c.image("toolu_keep_image_old", f"{CWD}/docs/diagram.png")
    c.tool("toolu_drop_part_old", "Read", {"file_path": f"{CWD}/src/big.rs", "offset": 1, "limit": 40}, big("big.rs 1-40"))
    c.tool("toolu_keep_part_other", "Read", {"file_path": f"{CWD}/src/big.rs", "offset": 41, "limit": 40},
           big("big.rs 41-80"))
    c.tool("toolu_keep_part_new", "Read", {"file_path": f"{CWD}/src/big.rs", "offset": 1, "limit": 40}, big("big.rs 1-40"))
    c.tool("toolu_drop_read_before_write", "Read", {"file_path": f"{CWD}/src/token.rs"}, big("token.rs v1"))
    c.tool("toolu_keep_write", "Write", {"file_path": f"{CWD}/src/token.rs", "content": "pub struct Token;"},
           "File created successfully at: /w/proj/src/token.rs")
    c.tool("toolu_keep_read_failed", "Read", {"file_path": f"{CWD}/src/gone.rs"},
           "<tool_use_error>File does not exist.</tool_use_error>", is_error=True)
    c.tool("toolu_keep_mcp", "mcp__tracker__get_issue", {"id": 42}, big("issue 42 body"))
    c.image("toolu_keep_image_new", f"{CWD}/docs/diagram.png")
    # Claude Code answers a Read of a file unchanged since an earlier Read with a stub that
    # points back at it: the earlier Read is then the only copy.
    c.tool("toolu_keep_read_before_stub", "Read", {"file_path": f"{CWD}/src/stable.rs"}, big("stable.rs"))
    c.tool("toolu_keep_read_stub", "Read", {"file_path": f"{CWD}/src/stable.rs"},
           "File unchanged since last read. The content from the earlier Read tool_result in this conversation is "
           "still current \u2014 refer to that instead of re-reading.")
    c.tool("toolu_keep_read_lexer", "Read", {"file_path": f"{CWD}/src/lexer.rs"}, big("lexer.rs v1"))
    c.tool("toolu_keep_test_lexer", "Bash", {"command": "cargo test lexer"}, big("test result: ok"))
    c.prompt("Good. Summarize.")
    for i in range(7):
        c.say(f"Point {i}.")
    c.write("claude-shapes.jsonl")


def claude_entries():
    """Entry types a session log holds beside messages (a compaction boundary, a summary, a
    queue operation, sidechain messages of a sub-agent): passed through untouched."""
    c = Claude()
    c.prompt("Find why the cache misses")
    c.tool("toolu_drop_cat_cache_old", "Bash", {"command": "cat src/cache.rs"}, big("cache.rs v1"))
    c.raw(dump({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                "uuid": "00000000-0000-4000-8000-000000000700", "sessionId": SID, "level": "info",
                "compactMetadata": {"trigger": "auto", "preTokens": 160000}}))
    c.raw(dump({"type": "queue-operation", "operation": "enqueue", "timestamp": "2025-08-01T10:30:00.000Z",
                "content": "also check the TTL", "sessionId": SID}))
    c.entry("user", {"role": "user", "content": "Survey the cache callers"}, {"isSidechain": True})
    c.tool("toolu_drop_side_test_old", "Bash", {"command": "cargo test cache"}, big("test result: ok"))
    c.tool("toolu_keep_side_test_new", "Bash", {"command": "cargo test cache"}, big("test result: ok"))
    c.tool("toolu_keep_cat_cache_new", "Bash", {"command": "cat src/cache.rs"}, big("cache.rs v2"))
    c.raw(dump({"type": "summary", "summary": "Cache investigation", "leafUuid": "00000000-0000-4000-8000-000000000005"}))
    c.prompt("Write it up")
    for i in range(11):
        c.say(f"Finding {i}.")
    c.write("claude-entries.jsonl")


class Codex:
    SID = "0199a0b1-2c3d-7e4f-8a5b-6c7d8e9f0a1b"

    def __init__(self):
        self.lines, self.t = [], 0
        self.line("session_meta", {"id": self.SID, "timestamp": "2025-10-01T09:00:00.000Z", "cwd": CWD,
                                   "originator": "codex_cli_rs", "cli_version": "0.46.0", "instructions": None,
                                   "source": "cli", "model_provider": "openai"})

    def line(self, kind, payload):
        self.t += 1
        self.lines.append(dump({"timestamp": f"2025-10-01T09:{self.t // 60:02d}:{self.t % 60:02d}.000Z", "type": kind,
                                "payload": payload}))

    def msg(self, role, text):
        kind = "input_text" if role == "user" else "output_text"
        self.line("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    def prompt(self, text):
        self.msg("user", text)
        self.line("event_msg", {"type": "user_message", "message": text, "kind": "plain"})

    def shell(self, cid, script, out, code=0, workdir=CWD):
        args = {"command": ["bash", "-lc", script], "workdir": workdir, "timeout_ms": 120000}
        self.line("response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps(args), "call_id": cid})
        # The user interface's copy of the output (rollouts keep it in extended persistence).
        self.line("event_msg", {"type": "exec_command_end", "call_id": cid, "stdout": out, "stderr": "",
                                "aggregated_output": out, "exit_code": code, "formatted_output": out})
        body = json.dumps({"output": out, "metadata": {"exit_code": code, "duration_seconds": 0.4}})
        self.line("response_item", {"type": "function_call_output", "call_id": cid, "output": body})

    def patch(self, cid, path):
        patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-old\n+new\n*** End Patch"
        self.line("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": cid, "name": "apply_patch",
                                    "input": patch})
        self.line("response_item", {"type": "custom_tool_call_output", "call_id": cid,
                                    "output": json.dumps({"output": f"Success. Updated the following files:\nM {path}\n",
                                                          "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})

    def write(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")


def codex_basic():
    c = Codex()
    c.msg("user", "<environment_context>\n  <cwd>/w/proj</cwd>\n</environment_context>")
    c.line("turn_context", {"cwd": CWD, "approval_policy": "on-request", "model": "gpt-5-codex", "summary": "auto"})
    c.prompt("Make the config loader accept YAML")
    c.line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Reading the loader"}],
                             "content": None, "encrypted_content": "gAAAA"})
    c.shell("call_drop_cat_old", "cat src/config.rs", big("config.rs v1"))
    c.shell("call_drop_sed_old", "sed -n '1,200p' src/loader.rs", big("loader.rs v1"))
    c.shell("call_keep_sed_other_part", "sed -n '200,400p' src/loader.rs", big("loader.rs v1 tail"))
    c.shell("call_drop_rg", "rg -n yaml", "\n".join(f"src/qq_unused_{i}.rs:{i}:// yaml todo lorem ipsum dolor" for i in range(60)))
    c.shell("call_drop_test_old", "cargo test -q", big("test result: ok"))
    c.patch("call_keep_patch", "src/config.rs")
    c.shell("call_keep_cat_new", "cat src/config.rs", big("config.rs v2"))
    c.shell("call_keep_fail", "cargo build", big("error[E0425]"), code=101)
    c.shell("call_keep_sed_new", "sed -n '1,200p' src/loader.rs", big("loader.rs v1"))
    c.shell("call_keep_test_new", "cargo test -q", big("test result: ok"))
    c.shell("call_keep_test_other_dir", "cargo test -q", big("test result: ok"), workdir=CWD + "/sub")
    c.prompt("Also update the docs")
    c.msg("assistant", "Updating the docs now.")
    c.shell("call_keep_tail_ls", "ls docs", "\n".join(f"page_{i}.md" for i in range(80)))
    c.shell("call_keep_tail_echo", "echo done", "done")
    c.msg("assistant", "Done.")
    c.line("event_msg", {"type": "token_count", "info": None})
    c.write("codex-basic.jsonl")
    c = Codex()
    c.prompt("hi")
    c.line("response_item", {"type": "function_call_output", "call_id": "call_nobody", "output": "x"})
    c.write("codex-orphan-result.jsonl")


def codex_tools():
    """The newer tools (`exec_command`, `shell_command`), `local_shell_call`, an old-style
    output with `success: false`, and a patch after a read."""
    c = Codex()
    c.prompt("Speed up the tokenizer")

    def call(cid, name, args, out):
        c.line("response_item", {"type": "function_call", "name": name, "arguments": json.dumps(args), "call_id": cid})
        c.line("response_item", {"type": "function_call_output", "call_id": cid, "output": out})

    def exec_out(code, text):
        return f"Chunk ID: 7\nWall time: 0.2 seconds\nProcess exited with code {code}\nOriginal token count: 900\nOutput:\n{text}"

    def shcmd_out(code, text):
        return f"Exit code: {code}\nWall time: 1 seconds\nOutput:\n{text}"

    call("call_drop_exec_cat_old", "exec_command", {"cmd": "cat src/tok.rs", "workdir": CWD}, exec_out(0, big("tok.rs v1")))
    call("call_keep_exec_fail", "exec_command", {"cmd": "cargo bench", "workdir": CWD}, exec_out(101, big("error: bench")))
    call("call_drop_shcmd_ls", "shell_command", {"command": "ls -la src", "workdir": CWD},
         shcmd_out(0, "\n".join(f"-rw-r--r-- 1 u u 100 Oct 1 09:00 qqx_old_{i}.rs" for i in range(60))))
    c.line("response_item", {"type": "local_shell_call", "call_id": "call_drop_local_clippy", "status": "completed",
                             "action": {"type": "exec", "command": ["bash", "-lc", "cargo clippy"], "working_directory": CWD}})
    c.line("response_item", {"type": "function_call_output", "call_id": "call_drop_local_clippy",
                             "output": json.dumps({"output": big("warning: clippy"), "metadata": {"exit_code": 0}})})
    c.line("response_item", {"type": "function_call", "name": "shell", "call_id": "call_keep_old_failed",
                             "arguments": json.dumps({"command": ["bash", "-lc", "cargo build"], "workdir": CWD})})
    c.line("response_item", {"type": "function_call_output", "call_id": "call_keep_old_failed",
                             "output": {"content": big("error[E0599]"), "success": False}})
    c.shell("call_drop_cat_lexer", "cat src/lexer.rs", big("lexer.rs v1"))
    c.patch("call_keep_patch_lexer", "src/lexer.rs")
    call("call_keep_exec_cat_new", "exec_command", {"cmd": "cat src/tok.rs", "workdir": CWD}, exec_out(0, big("tok.rs v2")))
    c.line("response_item", {"type": "local_shell_call", "call_id": "call_keep_local_clippy", "status": "completed",
                             "action": {"type": "exec", "command": ["bash", "-lc", "cargo clippy"], "working_directory": CWD}})
    c.line("response_item", {"type": "function_call_output", "call_id": "call_keep_local_clippy",
                             "output": json.dumps({"output": big("warning: clippy"), "metadata": {"exit_code": 0}})})
    c.prompt("Thanks, write it up")
    for i in range(11):
        c.msg("assistant", f"Step {i}.")
    c.write("codex-tools.jsonl")


def codex_dirs():
    """A turn_context that moves the working directory: the same command in two directories
    is two commands; a `compacted` line and item types tj does not know pass through."""
    c = Codex()
    c.line("turn_context", {"cwd": CWD, "approval_policy": "on-request", "model": "gpt-5-codex"})
    c.prompt("Run the tests in both crates")
    c.shell("call_drop_test_a_old", "cargo test", big("crate a ok"))
    c.line("turn_context", {"cwd": CWD + "/crates/b", "approval_policy": "on-request", "model": "gpt-5-codex"})
    c.shell("call_keep_test_b", "cargo test", big("crate b ok"), workdir=CWD + "/crates/b")
    c.line("response_item", {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "x"}})
    c.line("compacted", {"message": "summary of earlier turns", "replacement_history": None})
    c.line("turn_context", {"cwd": CWD, "approval_policy": "on-request", "model": "gpt-5-codex"})
    c.shell("call_keep_test_a_new", "cargo test", big("crate a ok"))
    c.prompt("Done?")
    for i in range(11):
        c.msg("assistant", f"Yes {i}.")
    c.write("codex-dirs.jsonl")


claude_basic()
claude_errors()
claude_shapes()
claude_entries()
codex_basic()
codex_tools()
codex_dirs()
